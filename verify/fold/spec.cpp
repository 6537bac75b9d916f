#include "spec.h"

#include <set>

#include <nlohmann/json.hpp>

#include "json_input.h"
#include "normcheck/excerpt.h"

namespace normcheck::fold {
namespace {

using Json = nlohmann::json;

struct Reader {
  std::string what;
  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw FoldError(what + ": " + where + ": " + why);
  }
  void only_keys(const Json& j, const std::string& where, std::initializer_list<std::string_view> allowed) const {
    if (!j.is_object()) fail(where, "expected an object, got " + describe_json(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool ok = false;
      for (auto a : allowed) ok = ok || it.key() == a;
      if (!ok) fail(where, "unknown key '" + excerpt(it.key()) + "'");
    }
  }
  std::string text(const Json& j, const std::string& where, const char* key, bool required) const {
    if (!j.contains(key)) {
      if (required) fail(where, std::string("missing \"") + key + "\"");
      return {};
    }
    if (!j[key].is_string() || j[key].get<std::string>().empty())
      fail(where, std::string("\"") + key + "\" must be a non-empty string");
    return j[key].get<std::string>();
  }
};

}  // namespace

FoldSpec parse_fold_spec(std::string_view json_text, const std::string& what) {
  const Reader r{what};
  Json doc;
  try {
    doc = parse_json_input(json_text);
  } catch (const JsonInputError& e) {
    throw FoldError(what + ": " + e.what());
  }
  r.only_keys(doc, "the spec", {"norms", "centre_writers"});
  FoldSpec spec;
  if (doc.contains("norms")) {
    if (!doc["norms"].is_array()) r.fail("\"norms\"", "must be an array");
    for (std::size_t i = 0; i < doc["norms"].size(); ++i) {
      const Json& n = doc["norms"][i];
      const std::string where = "norms[" + std::to_string(i) + "]";
      r.only_keys(n, where, {"name", "kind", "placement", "weight", "bias", "consumers"});
      NormSpec ns;
      ns.weight = r.text(n, where, "weight", true);
      ns.name = n.contains("name") ? r.text(n, where, "name", true) : ns.weight;
      const std::string kind = r.text(n, where, "kind", true);
      if (kind == "layernorm") ns.kind = NormKind::layer;
      else if (kind == "rmsnorm") ns.kind = NormKind::rms;
      else r.fail(where, "kind '" + excerpt(kind) + "' is not layernorm or rmsnorm");
      const std::string placement = r.text(n, where, "placement", true);
      if (placement == "pre_ln") ns.placement = Placement::pre_ln;
      else if (placement == "post_ln") ns.placement = Placement::post_ln;
      else if (placement == "none") ns.placement = Placement::none;
      else r.fail(where, "placement '" + excerpt(placement) + "' is not pre_ln, post_ln or none");
      ns.bias = r.text(n, where, "bias", false);
      if (!ns.bias.empty() && ns.kind == NormKind::rms) r.fail(where, "an rmsnorm has no bias");
      if (!n.contains("consumers") || !n["consumers"].is_array() || n["consumers"].empty())
        r.fail(where, "\"consumers\" must be a non-empty array");
      for (std::size_t c = 0; c < n["consumers"].size(); ++c) {
        const Json& cj = n["consumers"][c];
        const std::string cw = where + ".consumers[" + std::to_string(c) + "]";
        r.only_keys(cj, cw, {"weight", "bias", "new_bias", "layout"});
        ConsumerSpec cs{r.text(cj, cw, "weight", true), r.text(cj, cw, "bias", false), r.text(cj, cw, "new_bias", false)};
        const std::string layout = cj.contains("layout") ? r.text(cj, cw, "layout", true) : "out_in";
        if (layout == "in_out") cs.in_out = true;
        else if (layout != "out_in") r.fail(cw, "layout '" + excerpt(layout) + "' is not out_in (nn.Linear) or in_out (Conv1D)");
        if (!cs.bias.empty() && !cs.new_bias.empty()) r.fail(cw, "give \"bias\" or \"new_bias\", not both");
        ns.consumers.push_back(cs);
      }
      spec.norms.push_back(ns);
    }
  }
  if (doc.contains("centre_writers")) {
    if (!doc["centre_writers"].is_array()) r.fail("\"centre_writers\"", "must be an array");
    for (std::size_t i = 0; i < doc["centre_writers"].size(); ++i) {
      const Json& w = doc["centre_writers"][i];
      const std::string where = "centre_writers[" + std::to_string(i) + "]";
      r.only_keys(w, where, {"weight", "bias", "axis"});
      WriterSpec ws{r.text(w, where, "weight", true), r.text(w, where, "bias", false), Axis::rows};
      const std::string axis = r.text(w, where, "axis", true);
      if (axis == "rows") ws.axis = Axis::rows;
      else if (axis == "columns") ws.axis = Axis::columns;
      else r.fail(where, "axis '" + excerpt(axis) + "' is not rows (a Linear writing the stream, stored [d, k]) or columns "
                                           "(an embedding or a Conv1D writer, stored [n, d])");
      spec.writers.push_back(ws);
    }
  }
  if (spec.norms.empty() && spec.writers.empty()) r.fail("the spec", "names no norm and no writer: nothing to fold");
  // A tensor rewritten twice would be folded twice.
  std::set<std::string> rewritten;
  auto claim = [&](const std::string& name, const std::string& role) {
    if (name.empty()) return;
    if (!rewritten.insert(name).second) r.fail(role, "tensor '" + excerpt(name) + "' appears twice among the tensors the spec rewrites");
  };
  for (const auto& n : spec.norms) {
    claim(n.weight, n.name);
    claim(n.bias, n.name);
    for (const auto& c : n.consumers) {
      claim(c.weight, n.name);
      claim(c.bias, n.name);
      claim(c.new_bias, n.name);
    }
  }
  for (const auto& w : spec.writers) {
    claim(w.weight, "centre_writers");
    claim(w.bias, "centre_writers");
  }
  return spec;
}

}  // namespace normcheck::fold
