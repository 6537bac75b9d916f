#include "cache_size.h"

#include <fstream>
#include <string>

namespace normcheck::bench {
namespace {

std::string first_word(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  in >> word;
  return word;
}

// "32768K", "1M", "512": bytes, 0 when not a size.
std::size_t parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return 0;
  std::size_t bytes = std::stoull(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  if (unit == "K") bytes <<= 10;
  else if (unit == "M") bytes <<= 20;
  else if (unit == "G") bytes <<= 30;
  else if (!unit.empty()) return 0;
  return bytes;
}

}  // namespace

std::size_t last_level_cache_bytes(const std::filesystem::path& cache_dir) {
  std::size_t best = 0;
  int best_level = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, ec)) {
    const std::string type = first_word(entry.path() / "type");
    if (type != "Unified" && type != "Data") continue;
    const std::string level_text = first_word(entry.path() / "level");
    if (level_text.empty() || level_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const int level = std::stoi(level_text);
    const std::size_t bytes = parse_size(first_word(entry.path() / "size"));
    if (bytes > 0 && level > best_level) {
      best_level = level;
      best = bytes;
    }
  }
  return best;
}

bool out_of_cache(const Kernel& kernel, BenchShape shape, std::size_t cache_bytes) {
  return cache_bytes > 0 && bytes_moved(kernel, shape) >= kOutOfCacheFactor * static_cast<double>(cache_bytes);
}

}  // namespace normcheck::bench
