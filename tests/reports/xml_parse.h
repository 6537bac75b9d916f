// A strict parser for the XML junit.xml is made of: a prolog, elements with
// attributes, text, the five predefined entities and numeric references.
// No DTD, CDATA or namespaces. Throws std::runtime_error on anything malformed
// (a mismatched tag, an unknown entity, text after the root).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace normcheck::test_support {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlElement> children;
  std::string text;  // the element's own text, entities decoded
  std::vector<const XmlElement*> all(const std::string& child_name) const;
};

XmlElement parse_xml(const std::string& text);

}  // namespace normcheck::test_support
