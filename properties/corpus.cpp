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

std::string check_op_name(Op op) {
  return op == Op::rmsnorm_fwd || op == Op::rmsnorm_bwd ? "rmsnorm" : "layernorm";
}

}  // namespace

std::string corpus_text(Op op, const Problem& p, const std::vector<std::string>& notes) {
  std::vector<std::string> lines = notes;
  lines.push_back("replay: normcheck check --input <this file> --op " + check_op_name(op) + " --eps " +
                  format_float_exact(p.eps));
  return problem_file_text(op, DType::f32, p, lines);
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
  ProblemFile file = read_problem_file(path);
  CorpusEntry entry;
  entry.path = path;
  entry.op = file.op;
  entry.problems = std::move(file.problems);
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
