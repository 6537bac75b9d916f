// A kernel's grade: trusted, less accurate, wrong or unsafe (a control's:
// caught or not; nothing ran: declined), decided by one rule from what was
// seen of it. The report's verdicts (verdict.h) and `normcheck check` grade
// with it; docs/report.md, "Grades", states the rule.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace normcheck::report {

// The first four grade a kernel that is not a control, worst last.
enum class Grade {
  trusted,        // within its bound on every row run and every fuzz case
  less_accurate,  // breaks its bound, by at most kWrongFactor on realistic rows, never with NaN/inf
  wrong,          // NaN/inf where the exact result is finite, outputs that differ run to run
                  // or with the batch around a row,
                  // or beyond kWrongFactor x its bound on realistic rows
  unsafe,         // wrote outside its outputs or into an input, left an output unwritten,
                  // changed the caller's floating-point state, crashed or hung
  caught,         // a known-bad control that broke its bound somewhere, as it must
  not_caught,     // a known-bad control within its bound everywhere: the checks missed it
  declined,       // nothing ran: every row was declined
};

// "trusted", "less accurate", "wrong", "unsafe", "caught", "not caught",
// "declined": the words every writer prints, results.json's and check's "grade".
std::string_view to_string(Grade grade);

// The factor beyond which an error on realistic rows makes a kernel wrong
// rather than less accurate: 2^16 = 2^-8 / 2^-24, bfloat16's unit roundoff
// over float32's. A bound is first order in float32's unit roundoff, so an
// error this many times it is what the same bound with bfloat16's unit
// roundoff would allow: 16 bits lost beyond what a careful float32 kernel
// loses on that row.
inline constexpr double kWrongFactor = 0x1p16;

// The labels of fuzz/isolation.h (and fuzz findings) that grade a kernel
// unsafe: what the call did to memory, to the caller's floating-point state
// or to its liveness (every call label of fuzz::call_label() but the wrong
// ones below). "" is no label.
bool unsafe_label(const std::string& label);
// Those that grade it wrong whatever their figure: nan (NaN/inf where the
// exact result is finite, or the reverse), nondeterministic (outputs that are
// not a function of the inputs), batch_variant (a row's outputs that depend on
// the rows around it).
bool wrong_label(const std::string& label);

// What a grade is decided from.
struct GradeFacts {
  bool control = false;  // the kernel is a known-bad control (Origin::control)
  bool ran = false;      // a row ran or a fuzz case found something
  bool broke = false;    // a row or a case broke the bound (any label)
  bool unsafe = false, wrong = false;
  // The worst error/bound on realistic rows (fuzz severities), when measured.
  std::optional<double> realistic_worst;

  // A row's or a finding's label (fuzz's labels; "" passed): broke, and
  // unsafe or wrong as the label says.
  void add_label(const std::string& label);
};

// Worst first: unsafe, then wrong (a wrong label, or realistic_worst beyond
// kWrongFactor), then less accurate when it broke the bound, else trusted;
// a control is caught when it broke its bound and not caught when it did
// not; nothing ran: declined.
Grade grade(const GradeFacts& facts);

}  // namespace normcheck::report
