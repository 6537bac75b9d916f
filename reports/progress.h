// Progress of a report run on stderr: on a terminal one bar redrawn in place
// with the phase and an ETA; otherwise (CI logs, pipes) a plain line per phase
// and about every 10 % of it.
#pragma once

#include <chrono>
#include <string>

namespace normcheck::report {

class Progress {
 public:
  // `weights`: the share of the run's time each phase is expected to take,
  // used to turn per-phase fractions into one overall fraction for the ETA.
  Progress(double accuracy_weight, double claims_weight, double bench_weight);
  // Starts phase `index` (0 accuracy, 1 claims, 2 bench) named `name`.
  void phase(int index, const std::string& name);
  // `done` of `total` units of the current phase.
  void update(double done, double total, const std::string& detail = "");
  // Ends the bar's line.
  void finish(const std::string& line);

 private:
  double overall(double fraction) const;
  bool tty_;
  double weights_[3];
  int phase_ = 0;
  std::string name_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace normcheck::report
