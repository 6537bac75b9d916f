#include "judged_report.h"

#include <algorithm>

#include "collect.h"
#include "target_info.h"

namespace normcheck::report {

ReportData judged_report_data(std::vector<JudgedKernel> kernels, uint64_t seed, std::string source) {
  ReportData data;
  data.seed = seed;
  data.judged = std::move(source);
  data.started_utc = utc_now();
  data.simd_target = simd::dispatched_target_name();
  data.accuracy_options.seed = seed;
  for (JudgedKernel& k : kernels) {
    KernelAccuracy ka{k.kernel, {}};
    const bool rms = k.kernel->op == Op::rmsnorm_fwd || k.kernel->op == Op::rmsnorm_bwd;
    for (JudgedProblem& p : k.problems) {
      RowResult r;
      r.family = p.name;
      r.d = p.problem.cols;
      const int64_t worst_row = std::clamp<int64_t>(p.evaluation.worst.row, 0, std::max<int64_t>(p.problem.rows - 1, 0));
      r.index = static_cast<int>(worst_row);
      r.eps = p.problem.eps;
      r.affine = !p.problem.gamma.empty();
      const RowFacts facts = row_facts(p.problem, worst_row, rms);
      r.mean_over_sigma = facts.mean_over_sigma;
      r.max_abs_x = facts.max_abs_x;
      r.rstd = facts.r;
      r.evaluation = std::move(p.evaluation);
      r.finding_label = std::move(p.label);
      r.problem_file = std::move(p.problem_file);
      r.replay = std::move(p.replay);
      ka.rows.push_back(std::move(r));
      auto& lengths = data.accuracy_options.lengths;
      if (std::find(lengths.begin(), lengths.end(), p.problem.cols) == lengths.end()) lengths.push_back(p.problem.cols);
    }
    data.accuracy.push_back(std::move(ka));
  }
  std::sort(data.accuracy_options.lengths.begin(), data.accuracy_options.lengths.end());
  return data;
}

}  // namespace normcheck::report
