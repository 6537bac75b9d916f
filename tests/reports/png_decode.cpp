#include "png_decode.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace normcheck::test_support {
namespace {

uint32_t be32(const std::string& s, std::size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) | static_cast<uint8_t>(s[at + 3]);
}

uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

Image decode_png(const std::string& bytes) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) throw std::runtime_error("not a PNG");
  Image img;
  int channels = 0;
  std::string idat;
  for (std::size_t at = 8; at + 8 <= bytes.size();) {
    const uint32_t length = be32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) throw std::runtime_error("PNG chunk past the end");
    const std::size_t data = at + 8;
    if (type == "IHDR") {
      img.width = static_cast<int>(be32(bytes, data));
      img.height = static_cast<int>(be32(bytes, data + 4));
      const int depth = static_cast<uint8_t>(bytes[data + 8]), color = static_cast<uint8_t>(bytes[data + 9]);
      const int interlace = static_cast<uint8_t>(bytes[data + 12]);
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0)
        throw std::runtime_error("unsupported PNG: depth " + std::to_string(depth) + ", colour type " +
                                 std::to_string(color) + ", interlace " + std::to_string(interlace));
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(bytes, data, length);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0 || img.width <= 0 || img.height <= 0) throw std::runtime_error("PNG without IHDR");
  const std::size_t stride = static_cast<std::size_t>(img.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size())
    throw std::runtime_error("PNG image data does not inflate to width x height");
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  img.rgb.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t* line = &raw[y * (stride + 1)];
    const int filter = line[0];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? cur[i - channels] : 0, b = prev[i],
                c = i >= static_cast<std::size_t>(channels) ? prev[i - channels] : 0;
      int v = line[1 + i];
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += paeth(a, b, c); break;
        default: throw std::runtime_error("bad PNG filter " + std::to_string(filter));
      }
      cur[i] = static_cast<uint8_t>(v);
    }
    for (int x = 0; x < img.width; ++x)
      std::memcpy(&img.rgb[(static_cast<std::size_t>(y) * img.width + x) * 3], &cur[x * channels], 3);
    std::swap(prev, cur);
  }
  return img;
}

}  // namespace normcheck::test_support
