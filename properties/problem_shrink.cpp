// Shrinking a problem toward the smallest one that still fails: fewer rows, few
// columns, no misalignment, no affine, simple floats.
#include <algorithm>
#include <utility>

#include "generators.h"

namespace normcheck::props {
namespace {

constexpr int64_t kMaxElementShrink = 256;

// The problem with only the rows for which keep(r) is true.
template <typename Keep>
Problem select_rows(const Problem& p, Keep keep) {
  std::vector<int64_t> order;
  for (int64_t r = 0; r < p.rows; ++r)
    if (keep(r)) order.push_back(r);
  return with_rows(p, order);
}

Problem select_columns(const Problem& p, const std::vector<int64_t>& kept) {
  Problem q = p;
  q.cols = static_cast<int64_t>(kept.size());
  const auto per_row = [&](const std::vector<float>& v) {
    std::vector<float> out;
    if (v.empty()) return out;
    out.reserve(static_cast<size_t>(p.rows * q.cols));
    for (int64_t r = 0; r < p.rows; ++r)
      for (int64_t c : kept) out.push_back(v[static_cast<size_t>(r * p.cols + c)]);
    return out;
  };
  const auto per_column = [&](const std::vector<float>& v) {
    std::vector<float> out;
    if (v.empty()) return out;
    for (int64_t c : kept) out.push_back(v[static_cast<size_t>(c)]);
    return out;
  };
  q.x = per_row(p.x);
  q.dy = per_row(p.dy);
  q.residual = per_row(p.residual);
  q.gamma = per_column(p.gamma);
  q.beta = per_column(p.beta);
  if (!p.weight.empty()) {  // W is out_features x cols: keep the same columns of every output
    q.weight.clear();
    for (int64_t i = 0; i < p.out_features; ++i)
      for (int64_t c : kept) q.weight.push_back(p.weight[static_cast<size_t>(i * p.cols + c)]);
  }
  return q;
}

// Shrinks of one array of the problem, element by element.
rc::Seq<Problem> shrink_elements(const Problem& p, std::vector<float> Problem::*array) {
  return rc::seq::map(rc::shrink::eachElement(p.*array, &shrink_float),
                      [p, array](std::vector<float> shrunk) {
                        Problem q = p;
                        q.*array = std::move(shrunk);
                        return q;
                      });
}

}  // namespace

rc::Seq<Problem> shrink_problem(const Problem& p) {
  // Lazy: each candidate is built only when RapidCheck asks for it, so a
  // 65536-column problem does not materialize its ~10^5 element shrinks.
  // Rows: each row alone, then (3 rows or more) all but one, so a finding
  // that needs two rows of four still loses the other two.
  rc::Seq<Problem> rows;
  if (p.rows > 1)
    rows = rc::seq::map(rc::seq::range<int64_t>(0, p.rows),
                        [p](int64_t r) { return select_rows(p, [r](int64_t i) { return i == r; }); });
  if (p.rows > 2)
    rows = rc::seq::concat(std::move(rows), rc::seq::map(rc::seq::range<int64_t>(0, p.rows), [p](int64_t r) {
                             return select_rows(p, [r](int64_t i) { return i != r; });
                           }));

  // Columns: remove one of k equal chunks, k = 2, 4, 8, ... up to 64 (or d):
  // at most 126 candidates per step, each halving or better, so a 65536-column
  // failure shrinks in a few dozen accepted steps rather than O(d^2) tries.
  std::vector<std::pair<int64_t, int64_t>> chunks;  // [begin, end) to remove
  for (int64_t k = 2; k <= std::min<int64_t>(p.cols, 64); k *= 2) {
    const int64_t size = (p.cols + k - 1) / k;
    for (int64_t begin = 0; begin < p.cols; begin += size)
      if (std::min(begin + size, p.cols) - begin < p.cols) chunks.emplace_back(begin, std::min(begin + size, p.cols));
  }
  auto columns = rc::seq::map(rc::seq::fromContainer(std::move(chunks)), [p](std::pair<int64_t, int64_t> chunk) {
    std::vector<int64_t> kept;
    for (int64_t c = 0; c < p.cols; ++c)
      if (c < chunk.first || c >= chunk.second) kept.push_back(c);
    return select_columns(p, kept);
  });

  std::vector<Problem> simpler;
  if (p.row_stride != 0) {
    simpler.push_back(p);
    simpler.back().row_stride = 0;
  }
  if (p.misalign_floats != 0) {
    simpler.push_back(p);
    simpler.back().misalign_floats = 0;
  }
  if (!p.beta.empty()) {
    simpler.push_back(p);
    simpler.back().beta.clear();
  }
  if (!p.gamma.empty()) {
    simpler.push_back(p);
    simpler.back().gamma.clear();
  }
  if (p.out_features > 1) {  // a norm followed by a Linear: its first output alone
    simpler.push_back(p);
    Problem& q = simpler.back();
    q.out_features = 1;
    q.weight.resize(static_cast<size_t>(p.cols));
    if (!q.bias.empty()) q.bias.resize(1);
  }
  if (!p.bias.empty()) {
    simpler.push_back(p);
    simpler.back().bias.clear();
  }

  // Element shrinks only once the problem is small: ~10 candidates per float,
  // each needing an exact reference, is too many for thousands of floats.
  if (p.rows * p.cols > kMaxElementShrink)
    return rc::seq::concat(std::move(rows), std::move(columns), rc::seq::fromContainer(std::move(simpler)));
  return rc::seq::concat(std::move(rows), std::move(columns),
                         rc::seq::fromContainer(std::move(simpler)),
                         shrink_elements(p, &Problem::x), shrink_elements(p, &Problem::dy),
                         shrink_elements(p, &Problem::residual),
                         shrink_elements(p, &Problem::gamma), shrink_elements(p, &Problem::beta),
                         shrink_elements(p, &Problem::weight), shrink_elements(p, &Problem::bias));
}

}  // namespace normcheck::props
