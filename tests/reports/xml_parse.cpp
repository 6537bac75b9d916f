#include "xml_parse.h"

#include <cctype>
#include <stdexcept>

namespace normcheck::test_support {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  XmlElement document() {
    skip_space();
    if (s_.compare(i_, 5, "<?xml") == 0) {
      const auto end = s_.find("?>", i_);
      if (end == std::string::npos) fail("unterminated prolog");
      i_ = end + 2;
    }
    skip_space();
    XmlElement root = element();
    skip_space();
    if (i_ != s_.size()) fail("text after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("XML: " + what + " at offset " + std::to_string(i_));
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    if (i_ >= s_.size() || s_[i_] != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string name() {
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '-' ||
                              s_[i_] == '.' || s_[i_] == ':'))
      ++i_;
    if (i_ == start) fail("expected a name");
    return s_.substr(start, i_ - start);
  }
  std::string decode(const std::string& raw) {
    std::string out;
    for (std::size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '<') fail("'<' in text or attribute");
      if (raw[k] != '&') {
        out += raw[k];
        continue;
      }
      const auto semi = raw.find(';', k);
      if (semi == std::string::npos) fail("unterminated entity");
      const std::string entity = raw.substr(k + 1, semi - k - 1);
      if (entity == "amp") out += '&';
      else if (entity == "lt") out += '<';
      else if (entity == "gt") out += '>';
      else if (entity == "quot") out += '"';
      else if (entity == "apos") out += '\'';
      else if (!entity.empty() && entity[0] == '#') out += static_cast<char>(std::stoi(entity.substr(1)));
      else fail("unknown entity &" + entity + ";");
      k = semi;
    }
    return out;
  }
  XmlElement element() {
    expect('<');
    XmlElement e;
    e.name = name();
    for (;;) {
      skip_space();
      if (i_ >= s_.size()) fail("unterminated tag");
      if (s_[i_] == '/') {
        ++i_;
        expect('>');
        return e;
      }
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      const std::string key = name();
      skip_space();
      expect('=');
      skip_space();
      const char quote = s_[i_];
      if (quote != '"' && quote != '\'') fail("expected a quoted attribute value");
      ++i_;
      const auto end = s_.find(quote, i_);
      if (end == std::string::npos) fail("unterminated attribute value");
      if (e.attributes.count(key)) fail("duplicate attribute " + key);
      e.attributes[key] = decode(s_.substr(i_, end - i_));
      i_ = end + 1;
    }
    for (;;) {
      const auto lt = s_.find('<', i_);
      if (lt == std::string::npos) fail("unterminated element " + e.name);
      e.text += decode(s_.substr(i_, lt - i_));
      i_ = lt;
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        if (name() != e.name) fail("mismatched closing tag for " + e.name);
        skip_space();
        expect('>');
        return e;
      }
      e.children.push_back(element());
    }
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

std::vector<const XmlElement*> XmlElement::all(const std::string& child_name) const {
  std::vector<const XmlElement*> out;
  for (const XmlElement& c : children)
    if (c.name == child_name) out.push_back(&c);
  return out;
}

XmlElement parse_xml(const std::string& text) { return Parser(text).document(); }

}  // namespace normcheck::test_support
