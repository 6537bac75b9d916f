// One parser for seeds (contract in normcheck/seed.h).
#include "normcheck/seed.h"

#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace normcheck {
namespace {

constexpr char kExpected[] = "expected a non-negative integer (decimal or 0x hex) below 2^64";

// The digit's value in `base`, or -1.
int digit(char c, unsigned base) {
  int v = -1;
  if (c >= '0' && c <= '9') v = c - '0';
  else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
  else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
  return v >= 0 && static_cast<unsigned>(v) < base ? v : -1;
}

std::optional<uint64_t> parse(std::string_view text) {
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t value = 0;
  for (char c : text) {
    const int d = digit(c, base);
    if (d < 0) return std::nullopt;
    if (value > (kMax - static_cast<uint64_t>(d)) / base) return std::nullopt;  // value * base + d > 2^64 - 1
    value = value * base + static_cast<uint64_t>(d);
  }
  return value;
}

}  // namespace

uint64_t parse_seed(std::string_view text) {
  if (const auto value = parse(text)) return *value;
  throw std::invalid_argument("bad seed '" + std::string(text) + "': " + kExpected);
}

std::optional<uint64_t> seed_from_env() {
  const char* env = std::getenv("NORMCHECK_SEED");
  if (!env || !*env) return std::nullopt;
  if (const auto value = parse(env)) return value;
  throw std::invalid_argument("bad NORMCHECK_SEED '" + std::string(env) + "': " + kExpected);
}

}  // namespace normcheck
