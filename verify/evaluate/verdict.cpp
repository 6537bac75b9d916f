// The end of every op's evaluation: the normwise error of the main output and pass.
#include <algorithm>
#include <limits>

#include "normcheck/metrics.h"
#include "op.h"

namespace normcheck::evaluation {

void finish(Evaluation& ev, Op op, const std::vector<float>& main_computed,
            const std::vector<double>& main_exact, const std::vector<RowStats>& stats, int64_t cols) {
  const bool all_checked = std::all_of(stats.begin(), stats.end(),
                                       [op](const RowStats& s) { return row_checked(op, s); });
  if (all_checked && main_computed.size() == stats.size() * static_cast<std::size_t>(cols)) {
    ev.normwise = normwise_error(main_computed, main_exact);  // every row: no copy
  } else {
    std::vector<float> c;
    std::vector<double> e;
    for (std::size_t row = 0; row < stats.size(); ++row) {
      if (!row_checked(op, stats[row])) continue;
      const auto begin = static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(cols));
      c.insert(c.end(), main_computed.begin() + begin, main_computed.begin() + begin + cols);
      e.insert(e.end(), main_exact.begin() + begin, main_exact.begin() + begin + cols);
    }
    ev.normwise = normwise_error(c, e);
  }
  ev.pass = ev.max_error_over_bound <= 1 && !ev.nonfinite_mismatch && !ev.out_of_bounds_write &&
            !ev.unwritten_output && !ev.wrote_input;
}

MainElement* keep_main_elements(const OpRun& run, Evaluation& ev, const std::vector<float>& computed,
                                const ExactReference& ref) {
  if (!run.options.keep_main_elements) return nullptr;
  const std::vector<double>& exact = ref.main_exact();
  const std::vector<double>& xhat = ref.xhat();
  ev.main_elements.resize(computed.size());
  for (std::size_t i = 0; i < computed.size(); ++i)
    ev.main_elements[i] = {computed[i], exact[i], xhat[i], std::numeric_limits<double>::infinity()};
  return ev.main_elements.data();
}

}  // namespace normcheck::evaluation
