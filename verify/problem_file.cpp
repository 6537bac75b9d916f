// Problem files: a whole problem in a row file (row_file.h states the format).
#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstring>
#include <new>
#include <fstream>
#include <sstream>

#include "normcheck/excerpt.h"
#include "normcheck/input_file.h"
#include "normcheck/op_spec.h"
#include "normcheck/reference.h"
#include "normcheck/row_file.h"

namespace normcheck {
namespace {

void write_values(std::ostream& os, const float* v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) os << (i ? " " : "") << format_float_exact(v[i]);
}

void write_line(std::ostream& os, const char* key, const std::vector<float>& v) {
  os << "# nc." << key << ' ';
  write_values(os, v.data(), v.size());
  os << '\n';
}

std::vector<float> parse_values(std::istringstream& tokens, const std::string& source, int64_t line) {
  std::vector<float> out;
  std::string token;
  while (tokens >> token) {
    try {
      out.push_back(parse_float_token(token));
    } catch (const std::invalid_argument& e) {
      throw RowFileError(source + ":" + std::to_string(line) + ": " + e.what(), line, 0);
    }
  }
  return out;
}

// The same floats bit for bit, but for NaNs: a file writes every NaN as
// "nan", so its sign and payload do not survive, and any NaN stands for any.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::isnan(a[i]) && std::isnan(b[i])) && std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
  return true;
}

}  // namespace

std::optional<Op> op_from_string(std::string_view name) {
  for (Op op : {Op::layernorm_fwd, Op::layernorm_bwd, Op::rmsnorm_fwd, Op::rmsnorm_bwd,
                Op::layernorm_linear_fwd, Op::rmsnorm_linear_fwd})
    if (to_string(op) == name) return op;
  return std::nullopt;
}

std::optional<DType> dtype_from_string(std::string_view name) {
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    if (to_string(t) == name) return t;
  return std::nullopt;
}

std::string problem_file_text(Op op, DType dtype, const Problem& p, const std::vector<std::string>& notes,
                              std::string_view kernel, const OpSpec* spec) {
  std::ostringstream os;
  for (const auto& note : notes) os << "# " << note << '\n';
  os << "# nc.op " << to_string(op) << '\n';
  os << "# nc.dtype " << to_string(dtype) << '\n';
  if (spec) os << "# nc.spec " << to_text(*spec) << '\n';
  if (!kernel.empty()) os << "# nc.kernel " << kernel << '\n';
  os << "# nc.eps " << format_float_exact(p.eps) << '\n';
  os << "# nc.misalign " << p.misalign_floats << '\n';
  if (p.row_stride != 0) os << "# nc.row_stride " << p.row_stride << '\n';
  if (p.scale != 0) os << "# nc.scale " << format_float_exact(p.scale) << '\n';
  for (int64_t r = 0; r < p.rows && !p.residual.empty(); ++r) {
    os << "# nc.residual ";
    write_values(os, p.residual.data() + r * p.cols, static_cast<std::size_t>(p.cols));
    os << '\n';
  }
  if (!p.gamma.empty()) write_line(os, "gamma", p.gamma);
  if (!p.beta.empty()) write_line(os, "beta", p.beta);
  const auto cols = static_cast<std::size_t>(p.cols);
  for (int64_t r = 0; r < p.rows && !p.dy.empty(); ++r) {
    os << "# nc.dy ";
    write_values(os, p.dy.data() + r * p.cols, cols);
    os << '\n';
  }
  for (int64_t i = 0; i < p.out_features && !p.weight.empty(); ++i) {
    os << "# nc.weight ";
    write_values(os, p.weight.data() + i * p.cols, cols);
    os << '\n';
  }
  if (!p.bias.empty()) write_line(os, "bias", p.bias);
  // The saved statistics a backward kernel is given (f32 storage: x as written).
  if (dtype == DType::f32 && op == Op::layernorm_bwd) {
    const auto saved = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
    write_line(os, "mean", saved.mean.rounded);
    write_line(os, "rstd", saved.rstd.rounded);
  } else if (dtype == DType::f32 && op == Op::rmsnorm_bwd) {
    write_line(os, "rrms", reference_rmsnorm_fwd(p.x, {}, p.rows, p.cols, p.eps).rrms.rounded);
  }
  for (int64_t r = 0; r < p.rows; ++r) {
    write_values(os, p.x.data() + r * p.cols, cols);
    os << '\n';
  }
  return os.str();
}

ProblemFile parse_problem_file(std::string_view text, std::string_view source_view) {
  const std::string source = excerpt(source_view, 4 * kExcerptBytes);
  ProblemFile file;
  Problem header;
  std::vector<std::vector<float>> dy_rows, weight_rows, residual_rows;
  std::optional<std::vector<float>> mean, rstd, rrms;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int64_t number = 1; std::getline(lines, line); ++number) {
    if (line.rfind("# nc.", 0) != 0) continue;
    file.whole = true;
    std::istringstream tokens(line.substr(5));
    std::string key;
    tokens >> key;
    const std::string where = source + ":" + std::to_string(number) + ": ";
    const auto fail = [&](const std::string& why) { throw RowFileError(where + why, number, 0); };
    // Each key takes exactly what it says: one word, one integer, nothing after.
    const auto one_word = [&](const char* what) {
      std::string word, extra;
      if (!(tokens >> word) || (tokens >> extra)) fail("nc." + key + " takes one " + what);
      return word;
    };
    const auto integer = [&](const char* what) {
      const std::string word = one_word(what);
      int64_t value = 0;
      const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
      if (error != std::errc() || end != word.data() + word.size())
        fail("nc." + key + " takes one " + what + ", not '" + excerpt(word) + "'");
      return value;
    };
    if (key == "op") {
      const std::string name = one_word("op name");
      file.op = op_from_string(name);
      if (!file.op) fail("unknown op '" + excerpt(name) + "'");
    } else if (key == "dtype") {
      const std::string name = one_word("dtype name");
      const auto t = dtype_from_string(name);
      if (!t) fail("unknown dtype '" + excerpt(name) + "'");
      file.dtype = *t;
    } else if (key == "kernel") {
      file.kernel = one_word("kernel name");
    } else if (key == "spec") {
      std::string text;
      std::getline(tokens, text);
      const SpecParse parsed = parse_spec(text);
      if (!parsed.spec) fail("nc.spec: " + excerpt(parsed.error, 4 * kExcerptBytes));
      file.spec = *parsed.spec;
    } else if (key == "row_stride") {
      header.row_stride = integer("integer >= 0");
      if (header.row_stride < 0) fail("nc.row_stride takes one integer >= 0");
    } else if (key == "scale") {
      const auto v = parse_values(tokens, source, number);
      if (v.size() != 1 || !(v[0] > 0) || std::isinf(v[0])) fail("nc.scale takes one finite value > 0");
      header.scale = v[0];
    } else if (key == "residual") {
      residual_rows.push_back(parse_values(tokens, source, number));
    } else if (key == "eps") {
      const auto v = parse_values(tokens, source, number);
      if (v.size() != 1 || !(v[0] >= 0) || std::isinf(v[0])) fail("nc.eps takes one finite value >= 0");
      header.eps = v[0];
    } else if (key == "misalign") {
      const int64_t floats = integer("integer in [0, 16)");
      if (floats < 0 || floats >= 16) fail("nc.misalign takes one integer in [0, 16)");
      header.misalign_floats = static_cast<int>(floats);
    } else if (key == "gamma") {
      header.gamma = parse_values(tokens, source, number);
    } else if (key == "beta") {
      header.beta = parse_values(tokens, source, number);
    } else if (key == "dy") {
      dy_rows.push_back(parse_values(tokens, source, number));
    } else if (key == "weight") {
      weight_rows.push_back(parse_values(tokens, source, number));
    } else if (key == "bias") {
      header.bias = parse_values(tokens, source, number);
    } else if (key == "mean") {
      mean = parse_values(tokens, source, number);
    } else if (key == "rstd") {
      rstd = parse_values(tokens, source, number);
    } else if (key == "rrms") {
      rrms = parse_values(tokens, source, number);
    } else {
      fail("unknown key nc." + excerpt(key));
    }
  }
  // The nc. lines describe one problem of one op: without nc.op they would
  // have no meaning, and are not silently dropped.
  if (file.whole && !file.op) throw RowFileError(source + ": nc. lines without an nc.op line (nc.op names the problem's op)", 0, 0);

  const auto rows = parse_rows(text, source);
  if (rows.empty()) throw RowFileError(source + ": no rows (the file is empty or all comments)", 0, 0);
  const std::size_t d = rows.front().values.size();
  const bool one_width = std::all_of(rows.begin(), rows.end(), [&](const ParsedRow& r) { return r.values.size() == d; });
  const auto whole_error = [&](const std::string& why) { throw RowFileError(source + ": " + why, 0, 0); };
  if (!one_width) {
    if (!header.gamma.empty() || !header.beta.empty() || !dy_rows.empty() || !weight_rows.empty() ||
        !header.bias.empty() || mean || rstd || rrms || !residual_rows.empty() || header.row_stride != 0)
      whole_error("rows differ in length, so nc.gamma/beta/dy/weight/bias/residual/row_stride and the statistics "
                  "cannot apply");
    for (const auto& r : rows) {
      Problem p = header;
      p.rows = 1;
      p.cols = static_cast<int64_t>(r.values.size());
      p.x = r.values;
      file.problems.push_back(std::move(p));
    }
    return file;
  }
  Problem p = header;
  p.rows = static_cast<int64_t>(rows.size());
  p.cols = static_cast<int64_t>(d);
  for (const auto& r : rows) p.x.insert(p.x.end(), r.values.begin(), r.values.end());
  const auto check_width = [&](const std::vector<float>& v, const char* name, std::size_t want) {
    if (!v.empty() && v.size() != want)
      whole_error(std::string("nc.") + name + " has " + std::to_string(v.size()) + " values, expected " +
                  std::to_string(want));
  };
  check_width(p.gamma, "gamma", d);
  check_width(p.beta, "beta", d);
  if (!dy_rows.empty() && dy_rows.size() != rows.size())
    whole_error(std::to_string(dy_rows.size()) + " nc.dy lines for " + std::to_string(rows.size()) + " rows");
  for (const auto& dy : dy_rows) {
    check_width(dy, "dy", d);
    p.dy.insert(p.dy.end(), dy.begin(), dy.end());
  }
  if (!residual_rows.empty() && residual_rows.size() != rows.size())
    whole_error(std::to_string(residual_rows.size()) + " nc.residual lines for " + std::to_string(rows.size()) +
                " rows");
  for (const auto& r : residual_rows) {
    check_width(r, "residual", d);
    p.residual.insert(p.residual.end(), r.begin(), r.end());
  }
  if (p.row_stride != 0 && p.row_stride < static_cast<int64_t>(d))
    whole_error("nc.row_stride " + std::to_string(p.row_stride) + " is below the row length " + std::to_string(d));
  if (file.spec && file.op && *file.op != op_of(*file.spec))
    whole_error("nc.op " + std::string(to_string(*file.op)) + " is not the op of nc.spec " + to_text(*file.spec));
  if (file.spec && file.spec->add && residual_rows.empty()) whole_error("nc.spec adds a residual: nc.residual lines are needed");
  if (!residual_rows.empty() && !(file.spec && file.spec->add))
    whole_error("nc.residual goes with an nc.spec that has 'add'");
  const bool given_scale = file.spec && file.spec->quant && !file.spec->quant->dynamic();
  if (given_scale && header.scale == 0) whole_error("nc.spec quantizes y by a static scale: nc.scale is needed");
  if (!given_scale && header.scale != 0) whole_error("nc.scale goes with an nc.spec that has 'quant=' and 'scale=static'");
  // A norm followed by a Linear: one nc.weight line per output (W is
  // out_features x d), nc.bias with out_features values or none; f32 only.
  const bool linear = file.op && is_norm_linear(*file.op);
  if (linear && weight_rows.empty()) whole_error("a norm followed by a Linear needs nc.weight lines (one per output)");
  if (!linear && (!weight_rows.empty() || !header.bias.empty()))
    whole_error("nc.weight and nc.bias go with nc.op layernorm_linear_fwd or rmsnorm_linear_fwd");
  if (linear && file.dtype != DType::f32) whole_error("a norm followed by a Linear is float32 only (nc.dtype f32)");
  for (const auto& w : weight_rows) {
    check_width(w, "weight", d);
    p.weight.insert(p.weight.end(), w.begin(), w.end());
  }
  p.out_features = static_cast<int64_t>(weight_rows.size());
  check_width(p.bias, "bias", weight_rows.size());
  const bool backward = file.op == Op::layernorm_bwd || file.op == Op::rmsnorm_bwd;
  if (backward && p.dy.empty()) whole_error("a backward problem needs nc.dy lines");
  // The saved statistics: those evaluate() supplies, or the file is refused.
  if (mean || rstd) {
    if (file.op != Op::layernorm_bwd || file.dtype != DType::f32 || !mean || !rstd)
      whole_error("nc.mean and nc.rstd go together, with nc.op layernorm_bwd and dtype f32");
    const auto saved = reference_layernorm_fwd(p.x, {}, {}, p.rows, p.cols, p.eps);
    if (!same_bits(*mean, saved.mean.rounded) || !same_bits(*rstd, saved.rstd.rounded))
      whole_error("nc.mean/nc.rstd are not the forward's statistics of x correctly rounded, which is what "
                  "normcheck gives a backward kernel");
  }
  if (rrms) {
    if (file.op != Op::rmsnorm_bwd || file.dtype != DType::f32)
      whole_error("nc.rrms goes with nc.op rmsnorm_bwd and dtype f32");
    if (!same_bits(*rrms, reference_rmsnorm_fwd(p.x, {}, p.rows, p.cols, p.eps).rrms.rounded))
      whole_error("nc.rrms is not the forward's rrms of x correctly rounded, which is what normcheck gives "
                  "a backward kernel");
  }
  file.problems.push_back(std::move(p));
  return file;
}

ProblemFile read_problem_file(const std::filesystem::path& path) {
  try {
    return parse_problem_file(read_row_file_text(path), path.string());
  } catch (const std::bad_alloc&) {
    throw out_of_memory(path);
  }
}

}  // namespace normcheck
