#include "corpus.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "normcheck/io.h"
#include "normcheck/row_file.h"

namespace normcheck::props {
namespace {

void write_values(std::ostream& os, const float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) os << (i ? " " : "") << format_float_exact(v[i]);
}

std::string check_op_name(Op op) {
  return op == Op::rmsnorm_fwd || op == Op::rmsnorm_bwd ? "rmsnorm" : "layernorm";
}

std::optional<Op> op_from_name(std::string_view name) {
  for (Op op : {Op::layernorm_fwd, Op::layernorm_bwd, Op::rmsnorm_fwd, Op::rmsnorm_bwd})
    if (to_string(op) == name) return op;
  return std::nullopt;
}

std::vector<float> parse_values(std::istringstream& tokens, const std::string& where) {
  std::vector<float> out;
  std::string token;
  while (tokens >> token) {
    try {
      out.push_back(parse_float_token(token));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
  }
  return out;
}

}  // namespace

std::string corpus_text(Op op, const Problem& p, const std::vector<std::string>& notes) {
  std::ostringstream os;
  for (const auto& note : notes) os << "# " << note << '\n';
  os << "# replay: normcheck check --input <this file> --op " << check_op_name(op)
     << " --eps " << format_float_exact(p.eps) << '\n';
  os << "# nc.op " << to_string(op) << '\n';
  os << "# nc.eps " << format_float_exact(p.eps) << '\n';
  os << "# nc.misalign " << p.misalign_floats << '\n';
  if (!p.gamma.empty()) {
    os << "# nc.gamma ";
    write_values(os, p.gamma.data(), p.cols);
    os << '\n';
  }
  if (!p.beta.empty()) {
    os << "# nc.beta ";
    write_values(os, p.beta.data(), p.cols);
    os << '\n';
  }
  for (int64_t r = 0; r < p.rows && !p.dy.empty(); ++r) {
    os << "# nc.dy ";
    write_values(os, p.dy.data() + r * p.cols, p.cols);
    os << '\n';
  }
  for (int64_t r = 0; r < p.rows; ++r) {
    write_values(os, p.x.data() + r * p.cols, p.cols);
    os << '\n';
  }
  return os.str();
}

std::filesystem::path save_counterexample(const std::filesystem::path& dir, std::string_view kernel,
                                          std::string_view property, Op op, const Problem& problem,
                                          const std::vector<std::string>& notes) {
  const std::string text = corpus_text(op, problem, notes);
  // The hash covers the problem only, so the same counterexample found again
  // overwrites its file instead of adding a copy.
  const std::string body = corpus_text(op, problem, {});
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(body));
  std::filesystem::create_directories(dir);
  const auto path = dir / (std::string(kernel) + "." + std::string(property) + "." + hash + ".txt");
  write_file_atomically(path, text);
  return path;
}

CorpusEntry read_corpus_file(const std::filesystem::path& path) {
  CorpusEntry entry;
  entry.path = path;
  std::ifstream in(path);
  if (!in) throw RowFileError(path.string() + ": cannot read", 0, 0);
  std::stringstream whole;
  whole << in.rdbuf();
  const std::string text = whole.str();

  Problem header;
  header.eps = 1e-5f;
  std::vector<std::vector<float>> dy_rows;
  std::istringstream lines(text);
  std::string line;
  for (int64_t number = 1; std::getline(lines, line); ++number) {
    if (line.rfind("# nc.", 0) != 0) continue;
    std::istringstream tokens(line.substr(5));
    std::string key;
    tokens >> key;
    const std::string where = path.string() + ":" + std::to_string(number);
    if (key == "op") {
      std::string name;
      tokens >> name;
      entry.op = op_from_name(name);
      if (!entry.op) throw std::invalid_argument(where + ": unknown op '" + name + "'");
    } else if (key == "eps") {
      const auto v = parse_values(tokens, where);
      if (v.size() != 1) throw std::invalid_argument(where + ": nc.eps takes one value");
      header.eps = v[0];
    } else if (key == "misalign") {
      tokens >> header.misalign_floats;
    } else if (key == "gamma") {
      header.gamma = parse_values(tokens, where);
    } else if (key == "beta") {
      header.beta = parse_values(tokens, where);
    } else if (key == "dy") {
      dy_rows.push_back(parse_values(tokens, where));
    } else {
      throw std::invalid_argument(where + ": unknown key nc." + key);
    }
  }

  const auto rows = parse_rows(text, path.string());
  if (rows.empty()) throw RowFileError(path.string() + ": no rows", 0, 0);
  const size_t d = rows.front().values.size();
  const bool one_problem = std::all_of(rows.begin(), rows.end(),
                                       [&](const ParsedRow& r) { return r.values.size() == d; });
  const auto check_width = [&](const std::vector<float>& v, const char* name) {
    if (!v.empty() && v.size() != d)
      throw std::invalid_argument(path.string() + ": nc." + name + " has " + std::to_string(v.size()) +
                                  " values, the rows have " + std::to_string(d));
  };
  if (one_problem) {
    Problem p = header;
    p.rows = static_cast<int64_t>(rows.size());
    p.cols = static_cast<int64_t>(d);
    for (const auto& r : rows) p.x.insert(p.x.end(), r.values.begin(), r.values.end());
    check_width(p.gamma, "gamma");
    check_width(p.beta, "beta");
    if (!dy_rows.empty() && dy_rows.size() != rows.size())
      throw std::invalid_argument(path.string() + ": " + std::to_string(dy_rows.size()) +
                                  " nc.dy lines for " + std::to_string(rows.size()) + " rows");
    for (const auto& dy : dy_rows) {
      check_width(dy, "dy");
      p.dy.insert(p.dy.end(), dy.begin(), dy.end());
    }
    entry.problems.push_back(std::move(p));
  } else {
    if (!header.gamma.empty() || !header.beta.empty() || !dy_rows.empty())
      throw std::invalid_argument(path.string() + ": rows differ in length, so nc.gamma/beta/dy cannot apply");
    for (const auto& r : rows) {
      Problem p = header;
      p.rows = 1;
      p.cols = static_cast<int64_t>(r.values.size());
      p.x = r.values;
      entry.problems.push_back(std::move(p));
    }
  }
  return entry;
}

std::vector<std::filesystem::path> corpus_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace normcheck::props
