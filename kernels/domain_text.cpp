// The text form of a kernel's declared domain (kernel.h): domain_text() and
// parse_domain(), the one place that reads or writes it, and expands the
// `realistic` preset (kRealisticDomain). Built-in rows print
// it (`normcheck list`), plugins (normcheck_plugin_domain) and the test-suite
// CMake function (DOMAIN) declare it.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "normcheck/excerpt.h"
#include "normcheck/kernel.h"

namespace normcheck {
namespace {

constexpr InputRange kDefault{};

// Shortest text that reads back to the same double; an exact power of two
// 2^k with |k| >= 10 as "2^k" (0x1p62 reads better as 2^62 than as
// 4.611686018427388e+18).
std::string number_text(double v) {
  int exponent = 0;
  if (v > 0 && std::frexp(v, &exponent) == 0.5 && std::abs(exponent - 1) >= 10)
    return "2^" + std::to_string(exponent - 1);
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}
std::string number_text(float v) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return std::string(buffer, end);
}

[[noreturn]] void fail(std::string_view term, const std::string& why) {
  throw std::invalid_argument("domain term '" + excerpt(term) + "': " + why);
}

// A finite number >= 0 (a decimal, or 2^k), the whole of `s`.
double parse_number(std::string_view s, std::string_view term) {
  double v = 0;
  if (s.size() > 2 && s.substr(0, 2) == "2^") {
    int k = 0;
    const auto r = std::from_chars(s.data() + 2, s.data() + s.size(), k);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || k < -1074 || k > 1023)
      fail(term, "'" + excerpt(s) + "' is not a power of two 2^k with an integer k in [-1074, 1023]");
    return std::ldexp(1.0, k);
  }
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v))
    fail(term, "'" + excerpt(s) + "' is not a finite number");
  if (v < 0) fail(term, "'" + excerpt(s) + "' is negative");
  return v;
}

int64_t parse_count(std::string_view s, std::string_view term) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 1)
    fail(term, "'" + excerpt(s) + "' is not an integer >= 1");
  return v;
}

bool starts(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::string domain_text(const InputRange& d) {
  std::vector<std::string> terms;
  if (d.min_eps != kDefault.min_eps) terms.push_back("eps>=" + number_text(d.min_eps));
  if (d.min_d != kDefault.min_d && d.max_d != kDefault.max_d)
    terms.push_back("d=" + std::to_string(d.min_d) + ".." + std::to_string(d.max_d));
  else if (d.min_d != kDefault.min_d) terms.push_back("d>=" + std::to_string(d.min_d));
  else if (d.max_d != kDefault.max_d) terms.push_back("d<=" + std::to_string(d.max_d));
  if (d.max_abs_x != kDefault.max_abs_x || d.sqrt_d_scaled)
    terms.push_back("|x|<=" + number_text(d.max_abs_x) + (d.sqrt_d_scaled ? "/sqrt(d)" : ""));
  if (!d.handles_nonfinite) terms.push_back("finite");
  if (d.min_abs_x != kDefault.min_abs_x) terms.push_back("|x|>=" + number_text(d.min_abs_x));
  if (d.max_mean_over_sigma != kDefault.max_mean_over_sigma)
    terms.push_back("|mean|/sigma<=" + number_text(d.max_mean_over_sigma));
  if (d.min_sigma != kDefault.min_sigma) terms.push_back("sigma>=" + number_text(d.min_sigma));
  if (terms.empty()) return "any";
  std::string text;
  for (const std::string& t : terms) text += (text.empty() ? "" : " ") + t;
  return text;
}

namespace {

// A term's positive limit (|x|>=M, |mean|/sigma<=K, sigma>=S).
double parse_positive(std::string_view s, std::string_view term, const char* what) {
  const double v = parse_number(s, term);
  if (!(v > 0)) fail(term, std::string("the ") + what + " limit must be > 0");
  return v;
}

// Whether `text` names the realistic preset as one of its terms.
bool names_preset(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \t", at), text.size());
    if (text.substr(at, end - at) == "realistic") return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

InputRange parse_domain(std::string_view text, const InputRange& base) {
  // The preset's terms first: a term stated beside it replaces its value.
  InputRange d = names_preset(text) ? parse_domain(kRealisticDomain, base) : base;
  bool seen_eps = false, seen_min_d = false, seen_max_d = false, seen_x = false, seen_finite = false;
  bool seen_min_x = false, seen_ratio = false, seen_sigma = false, seen_preset = false;
  bool any = false, other = false;
  const auto once = [](bool& seen, std::string_view term, const char* what) {
    if (seen) fail(term, std::string("states ") + what + " a second time");
    seen = true;
  };
  std::size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == '\t') {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t') ++end;
    const std::string_view term = text.substr(at, end - at);
    at = end;
    if (term == "any") {
      any = true;
      continue;
    }
    other = true;
    if (starts(term, "eps>=")) {
      once(seen_eps, term, "eps");
      const double e = parse_number(term.substr(5), term);
      if (e > std::numeric_limits<float>::max()) fail(term, "eps must be a float");
      d.min_eps = static_cast<float>(e);
    } else if (starts(term, "d=")) {
      once(seen_min_d, term, "the d range");
      once(seen_max_d, term, "the d range");
      const std::string_view range = term.substr(2);
      const std::size_t dots = range.find("..");
      if (dots == std::string_view::npos) fail(term, "expected d=A..B");
      d.min_d = parse_count(range.substr(0, dots), term);
      d.max_d = parse_count(range.substr(dots + 2), term);
    } else if (starts(term, "d>=")) {
      once(seen_min_d, term, "the smallest d");
      d.min_d = parse_count(term.substr(3), term);
    } else if (starts(term, "d<=")) {
      once(seen_max_d, term, "the largest d");
      d.max_d = parse_count(term.substr(3), term);
    } else if (starts(term, "|x|<=")) {
      once(seen_x, term, "|x|");
      std::string_view value = term.substr(5);
      constexpr std::string_view kScaled = "/sqrt(d)";
      d.sqrt_d_scaled = value.size() > kScaled.size() && value.substr(value.size() - kScaled.size()) == kScaled;
      if (d.sqrt_d_scaled) value.remove_suffix(kScaled.size());
      d.max_abs_x = parse_number(value, term);
      if (!(d.max_abs_x > 0)) fail(term, "the |x| limit must be > 0");
    } else if (term == "finite") {
      once(seen_finite, term, "finite");
      d.handles_nonfinite = false;
    } else if (starts(term, "|x|>=")) {
      once(seen_min_x, term, "the smallest nonzero |x|");
      d.min_abs_x = parse_positive(term.substr(5), term, "|x|");
    } else if (starts(term, "|mean|/sigma<=")) {
      once(seen_ratio, term, "|mean|/sigma");
      d.max_mean_over_sigma = parse_positive(term.substr(14), term, "|mean|/sigma");
    } else if (starts(term, "sigma>=")) {
      once(seen_sigma, term, "sigma");
      d.min_sigma = parse_positive(term.substr(7), term, "sigma");
    } else if (term == "realistic") {
      once(seen_preset, term, "realistic");  // applied above, before the other terms
    } else {
      fail(term, "unknown term (expected eps>=E, d=A..B, d>=A, d<=B, |x|<=M, |x|<=M/sqrt(d), finite, |x|>=M, "
                 "|mean|/sigma<=K, sigma>=S, realistic or any)");
    }
  }
  if (any && other) fail("any", "'any' states no limit: it cannot come with other terms");
  if (!d.sqrt_d_scaled && d.min_abs_x > d.max_abs_x)
    throw std::invalid_argument("domain '" + excerpt(text) + "': no nonzero x has " + number_text(d.min_abs_x) +
                                " <= |x| <= " + number_text(d.max_abs_x));
  if (d.min_d > d.max_d)
    throw std::invalid_argument("domain '" + excerpt(text) + "': the d range " + std::to_string(d.min_d) +
                                ".." + std::to_string(d.max_d) + " is empty");
  return d;
}

}  // namespace normcheck
