// The op spec's text form, its validity rules and the specs of the table's ops
// (op_spec.h). docs/ops.md states the same rules for users.
#include "normcheck/op_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "normcheck/excerpt.h"

namespace normcheck {
namespace {

constexpr std::size_t index(TensorName t) { return static_cast<std::size_t>(t); }
constexpr std::size_t index(RoundingPoint p) { return static_cast<std::size_t>(p); }

// The tensors in the order the text form names them.
constexpr TensorName kTensors[] = {
    TensorName::x,    TensorName::residual, TensorName::gamma,  TensorName::beta, TensorName::dy,
    TensorName::y,    TensorName::residual_out, TensorName::mean, TensorName::stat, TensorName::dx,
    TensorName::dgamma, TensorName::dbeta,  TensorName::w,      TensorName::b,    TensorName::z};
static_assert(std::size(kTensors) == kTensorNameCount);

constexpr RoundingPoint kPoints[] = {RoundingPoint::sum,    RoundingPoint::r,   RoundingPoint::xhat,
                                     RoundingPoint::weight, RoundingPoint::scaled, RoundingPoint::dyw,
                                     RoundingPoint::dw_row};

// The rounding points of each direction (op_spec.h, RoundingPoint).
constexpr bool point_of(RoundingPoint p, Direction d) {
  if (p == RoundingPoint::xhat) return true;
  const bool backward_point = p == RoundingPoint::dyw || p == RoundingPoint::dw_row;
  return backward_point == (d == Direction::bwd);
}
static_assert(std::size(kPoints) == kRoundingPointCount);

// The tensors `dtype=D` sets: the activations, stored in the model's format.
// The parameters, the statistics and the Linear's tensors default to float32
// (the plugin ABI's convention: plugin.h).
constexpr bool is_activation(TensorName t) {
  return t == TensorName::x || t == TensorName::residual || t == TensorName::y ||
         t == TensorName::residual_out || t == TensorName::dy || t == TensorName::dx;
}

constexpr DType kDTypes[] = {DType::f32, DType::bf16, DType::f16};

std::optional<DType> parse_dtype(std::string_view word) {
  for (DType t : kDTypes)
    if (word == to_string(t)) return t;
  return std::nullopt;
}

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

std::string quoted(std::string_view w) { return "'" + excerpt(w) + "'"; }

// A float of the text form: a decimal number that is a float, printed back
// as the shortest text that reads as the same float.
std::optional<float> parse_float(std::string_view v) {
  float f = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), f);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(f)) return std::nullopt;
  return f;
}
std::string float_text(float f) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, ec == std::errc() ? end : buf);
}

// One word of a quantized y (`quant=` or a word that shapes it) into `q`;
// the error names the word, or is empty.
std::string parse_quant_word(std::string_view key, std::string_view value, std::string_view word, Quantization& q) {
  if (key == "quant") {
    if (value == "e4m3") q.cast.format = QuantFormat::e4m3;
    else if (value == "e5m2") q.cast.format = QuantFormat::e5m2;
    else if (value == "int8") q.cast.format = QuantFormat::int8;
    else return quoted(word) + ": a quantized y is e4m3, e5m2 or int8";
  } else if (key == "scale") {
    if (value == "static") q.scale = ScaleKind::given;
    else if (value == "token") q.scale = ScaleKind::per_token;
    else if (value.substr(0, 6) == "block:") {
      q.scale = ScaleKind::per_block;
      const std::string_view g = value.substr(6);
      const auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), q.group);
      if (ec != std::errc() || end != g.data() + g.size() || q.group < 1)
        return quoted(word) + ": a block's columns are a positive integer (scale=block:128)";
    } else return quoted(word) + ": the scale is static, token or block:G";
  } else if (key == "scale_apply") {
    if (value == "inverse") q.apply = ScaleApply::inverse;
    else if (value == "divide") q.apply = ScaleApply::divide;
    else if (value == "multiply") q.apply = ScaleApply::multiply;
    else
      return quoted(word) + ": the scale is applied as 'inverse' (y * (1 / s)), 'divide' (y / s) or 'multiply' (y * s)";
  } else if (key == "nan") {
    if (value != "clamp") return quoted(word) + ": a NaN y gets the format's NaN code (left out) or 'nan=clamp'";
    q.nan_clamp = true;
  } else if (key == "ties") {
    if (value == "even") q.cast.ties_away = false;
    else if (value == "away") q.cast.ties_away = true;
    else return quoted(word) + ": int8 ties go to 'even' or 'away' (from zero)";
  } else if (key == "qmin") {
    if (value == "-128") q.cast.symmetric = false;
    else if (value == "-127") q.cast.symmetric = true;
    else return quoted(word) + ": int8 clamps below at -128 or -127";
  } else if (key == "saturate") {
    if (value != "none") return quoted(word) + ": fp8 saturates (left out) or 'saturate=none'";
    q.cast.saturate = false;
  } else {  // scale_ub, scale_min
    const std::optional<float> v = parse_float(value);
    if (!v || *v < 0 || (key == "scale_ub" && *v == 0))
      return quoted(word) + ": " + std::string(key) + " is a finite float" + (key == "scale_ub" ? " > 0" : " >= 0");
    (key == "scale_ub" ? q.scale_ub : q.scale_min) = *v;
  }
  return "";
}

constexpr std::string_view kQuantWords[] = {"quant", "scale", "scale_apply", "ties",    "qmin",
                                            "saturate", "scale_ub", "scale_min", "nan"};

// The word's tensor, by the name the spec's norm gives it (rstd or rrms for stat).
std::optional<TensorName> tensor_named(std::string_view name, NormKind norm) {
  for (TensorName t : kTensors)
    if (name == to_string(t, norm)) return t;
  return std::nullopt;
}

std::optional<RoundingPoint> point_named(std::string_view name) {
  for (RoundingPoint p : kPoints)
    if (name == to_string(p)) return p;
  return std::nullopt;
}

}  // namespace

bool OpSpec::has(TensorName t) const {
  const bool fwd = direction == Direction::fwd;
  const bool from_y = !fwd && this->from_y;
  switch (t) {
    case TensorName::x: return !from_y;
    case TensorName::residual:
    case TensorName::residual_out: return add;
    case TensorName::gamma: return weight != Weight::none;
    // the backward gives dbeta without reading beta, unless it recovers xhat from y
    case TensorName::beta: return (fwd || from_y) && bias;
    case TensorName::dy:
    case TensorName::dx: return !fwd;
    case TensorName::y: return (fwd && !linear) || from_y;
    // The forward writes the statistics and the backward reads them: mean
    // (LayerNorm) and rstd / rrms. A norm followed by a Linear writes none;
    // a backward from y reads rstd alone.
    case TensorName::mean: return norm == NormKind::layernorm && !linear && stats && !from_y;
    case TensorName::stat: return !linear && stats;
    case TensorName::dgamma: return !fwd && weight != Weight::none;
    case TensorName::dbeta: return !fwd && bias;
    case TensorName::w:
    case TensorName::b:
    case TensorName::z: return linear;
  }
  return false;
}

OpSpec default_spec(NormKind norm, Direction direction) {
  OpSpec s;
  s.norm = norm;
  s.direction = direction;
  s.bias = norm == NormKind::layernorm;
  s.dtype.fill(DType::f32);
  return s;
}

std::string spec_error(const OpSpec& s) {
  const bool fwd = s.direction == Direction::fwd;
  if (s.linear && !fwd) return "'linear': a norm followed by a Linear is a forward op";
  if (s.linear && !s.stats) return "'stats=none' with 'linear': a norm followed by a Linear has no statistics";
  if (s.linear && s.add) return "'linear' with 'add': a norm followed by a Linear reads x alone";
  if (s.from_y && fwd) return "'from=y': a backward's word (the forward computes y from x)";
  if (s.from_y && !s.stats) return "'from=y' with 'stats=none': xhat = (y - beta) / w needs the saved rstd / rrms";
  if (s.quant) {
    const Quantization& q = *s.quant;
    if (!fwd || s.linear) return "'quant=': a quantized y is the output of a forward norm";
    const bool int8 = q.cast.format == QuantFormat::int8;
    if (!int8 && (q.cast.ties_away || q.cast.symmetric))
      return "'ties=' and 'qmin=' are int8's: an fp8 cast rounds to nearest even, its range is symmetric";
    if (int8 && !q.cast.saturate) return "'saturate=none' is fp8's: int8 always clamps";
    if (!q.dynamic() && (q.scale_min != 0 || std::isfinite(q.scale_ub)))
      return "'scale_ub=' and 'scale_min=' shape a dynamic scale (scale=token or scale=block:G)";
    if (q.scale_min > q.scale_ub) return "'scale_min=' above 'scale_ub=': no scale satisfies both";
    if ((q.scale == ScaleKind::per_block) != (q.group > 0)) return "a block scale has its group size: scale=block:G";
    if (q.apply == ScaleApply::multiply && q.dynamic())
      return "'scale_apply=multiply' with a dynamic scale: the factor y is multiplied by is a given input (scale=static)";
    if (q.nan_clamp && !q.cast.saturate)
      return "'nan=clamp' with 'saturate=none': the convention is the saturating clamp's (fminf(NaN, max) = max)";
  }
  if (s.reduce) {
    if (fwd) return "'reduce=': how a backward sums dgamma and dbeta over the rows";
    if (!s.has(TensorName::dgamma) && !s.has(TensorName::dbeta)) return "'reduce=': there is no dgamma or dbeta to sum";
    if (s.reduce->rows < 1) return "'reduce=block:R:P': R is a positive number of rows";
  }
  for (RoundingPoint p : kPoints) {
    if (!s.rounding_at(p)) continue;
    const std::string what = "round=" + std::string(to_string(p));
    if (!point_of(p, s.direction))
      return quoted(what) + (fwd ? ": a rounding point of the backward (dyw, dw_row)"
                                 : ": a stage of the forward; the backward's points are xhat, dyw and dw_row");
    if (!fwd && p != RoundingPoint::xhat && s.weight == Weight::none)
      return quoted(what) + ": there is no weight (weight=none), so no dy w and no dgamma";
    if (p == RoundingPoint::sum && !s.add) return quoted(what) + ": there is no sum without 'add'";
    if ((p == RoundingPoint::weight || p == RoundingPoint::scaled) && s.weight == Weight::none)
      return quoted(what) + ": there is no weight (weight=none)";
  }
  return "";
}

SpecParse parse_spec(std::string_view text) {
  const std::vector<std::string_view> words = words_of(text);
  if (words.size() < 2)
    return {std::nullopt, "a spec starts with the norm and the direction, e.g. 'rmsnorm fwd'; got " + quoted(text)};
  NormKind norm;
  if (words[0] == "layernorm") norm = NormKind::layernorm;
  else if (words[0] == "rmsnorm") norm = NormKind::rmsnorm;
  else return {std::nullopt, quoted(words[0]) + " is not a norm (layernorm or rmsnorm)"};
  Direction direction;
  if (words[1] == "fwd") direction = Direction::fwd;
  else if (words[1] == "bwd") direction = Direction::bwd;
  else return {std::nullopt, quoted(words[1]) + " is not a direction (fwd or bwd)"};

  OpSpec s = default_spec(norm, direction);
  // dtype= sets the activations' default; a tensor's own word overrides it in
  // whichever order the two come.
  std::optional<DType> activations;
  std::array<std::optional<DType>, kTensorNameCount> own{};
  std::vector<std::string_view> keys_seen;
  std::optional<Quantization> quant;
  bool quant_named = false;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::string_view word = words[i];
    const std::size_t eq = word.find('=');
    const std::string_view key = word.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : word.substr(eq + 1);
    const bool has_value = eq != std::string_view::npos;
    if (std::find(keys_seen.begin(), keys_seen.end(), key) != keys_seen.end())
      return {std::nullopt, quoted(key) + " is given twice"};
    keys_seen.push_back(key);
    auto needs_value = [&]() { return quoted(word) + ": '" + excerpt(key) + "' takes a value"; };
    if (std::find(std::begin(kQuantWords), std::end(kQuantWords), key) != std::end(kQuantWords)) {
      if (!has_value) return {std::nullopt, needs_value()};
      if (!quant) quant.emplace();
      if (std::string e = parse_quant_word(key, value, word, *quant); !e.empty()) return {std::nullopt, std::move(e)};
      if (key == "quant") quant_named = true;
    } else if (key == "amax") {
      if (has_value) return {std::nullopt, quoted(word) + ": 'amax' takes no value"};
      if (!quant) quant.emplace();
      quant->amax = true;
    } else if (key == "add" || key == "linear") {
      if (has_value) return {std::nullopt, quoted(word) + ": '" + excerpt(key) + "' takes no value"};
      (key == "add" ? s.add : s.linear) = true;
    } else if (key == "stats") {
      if (value != "none" || !has_value) return {std::nullopt, quoted(word) + ": the statistics are 'stats=none' or left out"};
      s.stats = false;
    } else if (key == "from") {
      if (value != "y" || !has_value) return {std::nullopt, quoted(word) + ": a backward reads x (left out) or 'from=y'"};
      s.from_y = true;
    } else if (key == "bias") {
      if (!has_value) s.bias = true;
      else if (value == "none") s.bias = false;
      else return {std::nullopt, quoted(word) + ": bias is 'bias' or 'bias=none'"};
    } else if (key == "weight") {
      if (!has_value) return {std::nullopt, needs_value()};
      if (value == "none") s.weight = Weight::none;
      else if (value == "gamma") s.weight = Weight::gamma;
      else if (value == "1+gamma") s.weight = Weight::one_plus_gamma;
      else return {std::nullopt, quoted(word) + ": the weight is none, gamma or 1+gamma"};
    } else if (key == "dtype") {
      if (!has_value) return {std::nullopt, needs_value()};
      activations = parse_dtype(value);
      if (!activations) return {std::nullopt, quoted(word) + ": " + quoted(value) + " is not a dtype (f32, bf16, f16)"};
    } else if (key == "round") {
      if (!has_value || value.empty()) return {std::nullopt, needs_value()};
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        const std::string_view item = value.substr(start, comma - start);
        const std::size_t colon = item.find(':');
        const std::optional<RoundingPoint> p = point_named(item.substr(0, colon));
        if (!p)
          return {std::nullopt, quoted(item) + " in " + quoted(word) +
                                    ": a rounding point is sum, r, xhat, weight or scaled (forward), xhat, dyw or "
                                    "dw_row (backward), then ':' and a dtype"};
        const std::optional<DType> t =
            colon == std::string_view::npos ? std::nullopt : parse_dtype(item.substr(colon + 1));
        if (!t) return {std::nullopt, quoted(item) + " in " + quoted(word) + ": the dtype after ':' is f32, bf16 or f16"};
        if (s.round[index(*p)]) return {std::nullopt, quoted(word) + ": " + quoted(to_string(*p)) + " is given twice"};
        s.round[index(*p)] = *t;
        start = comma + 1;
      }
    } else if (key == "acc") {
      if (!has_value) return {std::nullopt, needs_value()};
      s.acc = parse_dtype(value);
      if (!s.acc) return {std::nullopt, quoted(word) + ": " + quoted(value) + " is not a dtype (f32, bf16, f16)"};
      if (*s.acc == DType::f32) s.acc.reset();  // float32 sums: the default
    } else if (key == "reduce") {
      // block:R:P
      constexpr std::string_view kBlock = "block:";
      const bool block = value.substr(0, kBlock.size()) == kBlock;
      const std::string_view rest = block ? value.substr(kBlock.size()) : std::string_view();
      const std::size_t colon = rest.find(':');
      const std::string_view rows = rest.substr(0, colon);
      Reduction r;
      const auto [end, ec] = std::from_chars(rows.data(), rows.data() + rows.size(), r.rows);
      const std::optional<DType> partial =
          colon == std::string_view::npos ? std::nullopt : parse_dtype(rest.substr(colon + 1));
      if (!has_value || !block || ec != std::errc() || end != rows.data() + rows.size() || r.rows < 1 || !partial)
        return {std::nullopt, quoted(word) + ": a reduction is 'reduce=block:R:P', R rows a partial, P its format "
                                             "(reduce=block:256:f32)"};
      r.partial = *partial;
      s.reduce = r;
    } else if (const std::optional<TensorName> t = tensor_named(key, norm)) {
      if (!has_value) return {std::nullopt, needs_value()};
      own[index(*t)] = parse_dtype(value);
      if (!own[index(*t)])
        return {std::nullopt, quoted(word) + ": " + quoted(value) + " is not a dtype (f32, bf16, f16)"};
    } else {
      return {std::nullopt, quoted(word) + " is not a word of a spec (docs/ops.md)"};
    }
  }
  if (quant && !quant_named)
    return {std::nullopt, "the words of a quantized y ('scale=', 'ties=', ...) come with 'quant=e4m3|e5m2|int8'"};
  if (quant_named && !std::count(keys_seen.begin(), keys_seen.end(), std::string_view("scale")))
    return {std::nullopt, "a quantized y names its scale: scale=static, scale=token or scale=block:G"};
  s.quant = quant;
  for (TensorName t : kTensors) {
    DType& d = s.dtype[index(t)];
    if (own[index(t)]) d = *own[index(t)];
    else if (activations && is_activation(t)) d = *activations;
  }
  for (TensorName t : kTensors)
    if (own[index(t)] && !s.has(t))
      return {std::nullopt, quoted(std::string(to_string(t, norm)) + "=" + std::string(to_string(s.dtype_of(t)))) +
                                ": this op has no " + std::string(to_string(t, norm))};
  if (std::string e = spec_error(s); !e.empty()) return {std::nullopt, std::move(e)};
  return {s, ""};
}

std::string to_text(const OpSpec& s) {
  std::string text = std::string(to_string(s.norm)) + " " + std::string(to_string(s.direction));
  const DType activations = s.dtype_of(TensorName::x);
  if (activations != DType::f32) text += " dtype=" + std::string(to_string(activations));
  for (TensorName t : kTensors) {
    const DType default_dtype = is_activation(t) ? activations : DType::f32;
    if (s.has(t) && s.dtype_of(t) != default_dtype)
      text += " " + std::string(to_string(t, s.norm)) + "=" + std::string(to_string(s.dtype_of(t)));
  }
  if (s.add) text += " add";
  if (s.weight == Weight::none) text += " weight=none";
  if (s.weight == Weight::one_plus_gamma) text += " weight=1+gamma";
  const bool default_bias = s.norm == NormKind::layernorm;
  if (s.bias != default_bias) text += s.bias ? " bias" : " bias=none";
  std::string points;
  for (RoundingPoint p : kPoints)
    if (const auto t = s.rounding_at(p))
      points += (points.empty() ? "" : ",") + std::string(to_string(p)) + ":" + std::string(to_string(*t));
  if (!points.empty()) text += " round=" + points;
  if (s.acc) text += " acc=" + std::string(to_string(*s.acc));
  if (s.reduce)
    text += " reduce=block:" + std::to_string(s.reduce->rows) + ":" + std::string(to_string(s.reduce->partial));
  if (!s.stats && !s.linear) text += " stats=none";
  if (s.from_y) text += " from=y";
  if (s.linear) text += " linear";
  if (const auto& q = s.quant) {
    text += " quant=" + std::string(to_string(q->cast.format));
    text += q->scale == ScaleKind::given ? " scale=static"
            : q->scale == ScaleKind::per_token ? " scale=token" : " scale=block:" + std::to_string(q->group);
    if (q->apply == ScaleApply::divide) text += " scale_apply=divide";
    if (q->apply == ScaleApply::multiply) text += " scale_apply=multiply";
    if (q->cast.ties_away) text += " ties=away";
    if (q->cast.symmetric) text += " qmin=-127";
    if (!q->cast.saturate) text += " saturate=none";
    if (std::isfinite(q->scale_ub)) text += " scale_ub=" + float_text(q->scale_ub);
    if (q->scale_min != 0) text += " scale_min=" + float_text(q->scale_min);
    if (q->nan_clamp) text += " nan=clamp";
    if (q->amax) text += " amax";
  }
  return text;
}

OpSpec spec_of(Op op, DType t) {
  const bool layer = op == Op::layernorm_fwd || op == Op::layernorm_bwd || op == Op::layernorm_linear_fwd;
  const bool bwd = op == Op::layernorm_bwd || op == Op::rmsnorm_bwd;
  OpSpec s = default_spec(layer ? NormKind::layernorm : NormKind::rmsnorm, bwd ? Direction::bwd : Direction::fwd);
  s.linear = is_norm_linear(op);
  for (TensorName n : kTensors)
    if (is_activation(n)) s.dtype[index(n)] = t;
  return s;
}

float norm_input(const OpSpec& spec, float x, float residual) {
  if (!spec.add) return x;
  // two floats' sum in double: exact unless their exponents are more than 29
  // apart, and then within 2^-53 relative (round_to_format rounds it once more)
  const double sum = static_cast<double>(x) + residual;
  const std::optional<DType> at_sum = spec.rounding_at(RoundingPoint::sum);
  return static_cast<float>(round_to_format(at_sum ? *at_sum : DType::f32, sum));
}

Op op_of(const OpSpec& s) {
  const bool layer = s.norm == NormKind::layernorm, fwd = s.direction == Direction::fwd;
  if (s.linear) return layer ? Op::layernorm_linear_fwd : Op::rmsnorm_linear_fwd;
  if (layer) return fwd ? Op::layernorm_fwd : Op::layernorm_bwd;
  return fwd ? Op::rmsnorm_fwd : Op::rmsnorm_bwd;
}

std::optional<std::pair<Op, DType>> table_op(const OpSpec& s) {
  constexpr Op kOps[] = {Op::layernorm_fwd, Op::layernorm_bwd,        Op::rmsnorm_fwd,
                         Op::rmsnorm_bwd,   Op::layernorm_linear_fwd, Op::rmsnorm_linear_fwd};
  for (Op op : kOps)
    for (DType t : kDTypes)
      if (spec_of(op, t) == s && (t == DType::f32 || !is_norm_linear(op))) return std::pair{op, t};
  return std::nullopt;
}

std::string_view to_string(TensorName t, NormKind norm) {
  switch (t) {
    case TensorName::x: return "x";
    case TensorName::residual: return "residual";
    case TensorName::gamma: return "gamma";
    case TensorName::beta: return "beta";
    case TensorName::dy: return "dy";
    case TensorName::y: return "y";
    case TensorName::residual_out: return "residual_out";
    case TensorName::mean: return "mean";
    case TensorName::stat: return norm == NormKind::layernorm ? "rstd" : "rrms";
    case TensorName::dx: return "dx";
    case TensorName::dgamma: return "dgamma";
    case TensorName::dbeta: return "dbeta";
    case TensorName::w: return "w";
    case TensorName::b: return "b";
    case TensorName::z: return "z";
  }
  return "?";
}

std::string_view to_string(RoundingPoint p) {
  switch (p) {
    case RoundingPoint::sum: return "sum";
    case RoundingPoint::r: return "r";
    case RoundingPoint::xhat: return "xhat";
    case RoundingPoint::weight: return "weight";
    case RoundingPoint::scaled: return "scaled";
    case RoundingPoint::dyw: return "dyw";
    case RoundingPoint::dw_row: return "dw_row";
  }
  return "?";
}

std::string_view to_string(QuantFormat f) {
  switch (f) {
    case QuantFormat::e4m3: return "e4m3";
    case QuantFormat::e5m2: return "e5m2";
    case QuantFormat::int8: return "int8";
  }
  return "?";
}

int64_t scales_per_row(const Quantization& q, int64_t cols) {
  return q.scale == ScaleKind::per_block ? (cols + q.group - 1) / q.group : 1;
}

std::string_view to_string(NormKind n) { return n == NormKind::layernorm ? "layernorm" : "rmsnorm"; }
std::string_view to_string(Direction d) { return d == Direction::fwd ? "fwd" : "bwd"; }

}  // namespace normcheck
