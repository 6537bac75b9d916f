#include "progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <utility>

namespace normcheck::report {

Progress::Progress(std::vector<double> weights)
    : tty_(::isatty(2) != 0),
      weights_(std::move(weights)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

double Progress::overall(double fraction) const {
  double total = 0, before = 0;
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    total += weights_[i];
    if (static_cast<int>(i) < phase_) before += weights_[i];
  }
  return total > 0 ? (before + weights_[static_cast<std::size_t>(phase_)] * fraction) / total : 0;
}

void Progress::phase(int index, const std::string& name) {
  phase_ = index;
  name_ = name;
  last_decile_ = -1;
  if (!tty_) std::fprintf(stderr, "report: %s\n", name.c_str());
  update(0, 1);
}

void Progress::update(double done, double total, const std::string& detail) {
  const double fraction = total > 0 ? std::min(1.0, done / total) : 1.0;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double all = overall(fraction);
  if (!tty_) {
    const int decile = static_cast<int>(std::floor(fraction * 10));
    if (decile > last_decile_ && fraction > 0) {
      std::fprintf(stderr, "report: %s %3.0f%% (%s), %.0f s elapsed\n", name_.c_str(), 100 * fraction,
                   detail.c_str(), elapsed);
      last_decile_ = decile;
    }
    return;
  }
  if (std::chrono::duration<double>(now - last_draw_).count() < 0.1 && fraction < 1) return;
  last_draw_ = now;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(all * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  char eta[32] = "ETA --";
  if (all > 0.02) std::snprintf(eta, sizeof eta, "ETA %.0f s", elapsed * (1 - all) / all);
  std::fprintf(stderr, "\r\033[K[%s] %3.0f%% %s  %s %s", bar.c_str(), 100 * all, eta, name_.c_str(), detail.c_str());
  std::fflush(stderr);
}

void Progress::finish(const std::string& line) {
  if (tty_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "report: %s\n", line.c_str());
}

}  // namespace normcheck::report
