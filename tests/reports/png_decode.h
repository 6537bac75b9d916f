// Decodes the PNGs headless Chromium writes (8-bit RGB or RGBA, not
// interlaced) into RGB pixels, with zlib. Throws std::runtime_error on any
// other kind of PNG or a corrupt file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace normcheck::test_support {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // row-major, 3 bytes per pixel
  const uint8_t* at(int x, int y) const { return &rgb[(static_cast<std::size_t>(y) * width + x) * 3]; }
};

Image decode_png(const std::string& bytes);

}  // namespace normcheck::test_support
