#include "json_schema_subset.h"

#include <set>

namespace normcheck::test_support {
namespace {

bool has_type(const nlohmann::json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  throw std::invalid_argument("unknown JSON Schema type '" + type + "'");
}

}  // namespace

std::vector<std::string> validate(const nlohmann::json& doc, const nlohmann::json& schema, const std::string& path) {
  static const std::set<std::string> known = {"$schema", "$id",      "title",      "description", "type",
                                              "enum",    "const",    "required",   "properties",  "items"};
  std::vector<std::string> errors;
  const std::string where = path.empty() ? "/" : path;
  for (const auto& [key, value] : schema.items())
    if (!known.count(key)) throw std::invalid_argument(where + ": schema keyword '" + key + "' is not supported");
  if (schema.contains("type")) {
    const auto& t = schema["type"];
    bool ok = false;
    if (t.is_string()) ok = has_type(doc, t.get<std::string>());
    else
      for (const auto& one : t) ok = ok || has_type(doc, one.get<std::string>());
    if (!ok) {
      errors.push_back(where + ": expected type " + t.dump() + ", got " + doc.type_name());
      return errors;  // the keywords below assume the type
    }
  }
  if (schema.contains("const") && doc != schema["const"])
    errors.push_back(where + ": expected " + schema["const"].dump() + ", got " + doc.dump());
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& option : schema["enum"]) found = found || doc == option;
    if (!found) errors.push_back(where + ": " + doc.dump() + " is not one of " + schema["enum"].dump());
  }
  if (doc.is_object()) {
    if (schema.contains("required"))
      for (const auto& name : schema["required"])
        if (!doc.contains(name.get<std::string>()))
          errors.push_back(where + ": missing required field '" + name.get<std::string>() + "'");
    if (schema.contains("properties"))
      for (const auto& [name, sub] : schema["properties"].items())
        if (doc.contains(name))
          for (auto& e : validate(doc[name], sub, path + "/" + name)) errors.push_back(std::move(e));
  }
  if (doc.is_array() && schema.contains("items"))
    for (std::size_t i = 0; i < doc.size(); ++i)
      for (auto& e : validate(doc[i], schema["items"], path + "/" + std::to_string(i))) errors.push_back(std::move(e));
  return errors;
}

}  // namespace normcheck::test_support
