#include "json_input.h"

#include <unordered_set>
#include <vector>

#include "normcheck/excerpt.h"

namespace normcheck::fold {
namespace {

using Json = nlohmann::json;

// The checking pass: depth, count, and each open object's keys so far.
class Checker : public nlohmann::json_sax<Json> {
 public:
  std::string error;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (!keys_.back().insert(k).second) return stop("the key \"" + excerpt(k) + "\" is given twice in one object");
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    return stop(std::string("not valid JSON: ") + excerpt(e.what(), 4 * kExcerptBytes));
  }

 private:
  bool stop(std::string why) {
    error = std::move(why);
    return false;
  }
  bool value() {
    if (++values_ > kMaxJsonValues)
      return stop("more than " + std::to_string(kMaxJsonValues) + " values, the limit of a JSON input");
    return true;
  }
  bool open() {
    if (!value()) return false;
    if (keys_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
      return stop("nested more than " + std::to_string(kMaxJsonDepth) + " levels deep, the limit of a JSON input");
    keys_.emplace_back();
    return true;
  }
  bool close() {
    keys_.pop_back();
    return true;
  }
  std::size_t values_ = 0;
  std::vector<std::unordered_set<std::string>> keys_;
};

std::string count(std::size_t n, const char* one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); }

}  // namespace

Json parse_json_input(std::string_view text) {
  Checker checker;
  if (!Json::sax_parse(text, &checker)) throw JsonInputError(checker.error.empty() ? "not valid JSON" : checker.error);
  return Json::parse(text);
}

std::string describe_json(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: return "an object of " + count(value.size(), "key");
    case Json::value_t::array: return "an array of " + count(value.size(), "element");
    case Json::value_t::string: return "the string \"" + excerpt(value.get_ref<const std::string&>()) + "\"";
    case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case Json::value_t::null: return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "the number " + value.dump();
    default: break;
  }
  return "a value of another kind";
}

}  // namespace normcheck::fold
