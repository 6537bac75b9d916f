// Progress of a report run on stderr: on a terminal one bar redrawn in place
// with the phase and an ETA; otherwise (CI logs, pipes) a plain line per phase
// and about every 10 % of it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace normcheck::report {

class Progress {
 public:
  // `weights`: the share of the run's time each phase is expected to take,
  // in the order the phases run, used to turn per-phase fractions into one
  // overall fraction for the ETA.
  explicit Progress(std::vector<double> weights);
  // Starts phase `index` (an index into the weights) named `name`.
  void phase(int index, const std::string& name);
  // `done` of `total` units of the current phase.
  void update(double done, double total, const std::string& detail = "");
  // Ends the bar's line.
  void finish(const std::string& line);

 private:
  double overall(double fraction) const;
  bool tty_;
  std::vector<double> weights_;
  int phase_ = 0;
  std::string name_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace normcheck::report
