#include "grade.h"

#include "input_class.h"  // fuzz::call_label

namespace normcheck::report {

std::string_view to_string(Grade grade) {
  switch (grade) {
    case Grade::trusted: return "trusted";
    case Grade::less_accurate: return "less accurate";
    case Grade::wrong: return "wrong";
    case Grade::unsafe: return "unsafe";
    case Grade::caught: return "caught";
    case Grade::not_caught: return "not caught";
    case Grade::declined: return "declined";
  }
  return "declined";
}

bool wrong_label(const std::string& label) {
  return label == "nan" || label == "nondeterministic" || label == "batch_variant";
}

bool unsafe_label(const std::string& label) {
  return !label.empty() && fuzz::call_label(label) && !wrong_label(label);
}

void GradeFacts::add_label(const std::string& label) {
  if (label.empty()) return;
  broke = true;
  unsafe = unsafe || unsafe_label(label);
  wrong = wrong || wrong_label(label);
}

Grade grade(const GradeFacts& f) {
  if (!f.ran) return Grade::declined;
  if (f.control) return f.broke ? Grade::caught : Grade::not_caught;
  if (f.unsafe) return Grade::unsafe;
  if (f.wrong || (f.realistic_worst && *f.realistic_worst > kWrongFactor)) return Grade::wrong;
  return f.broke ? Grade::less_accurate : Grade::trusted;
}

}  // namespace normcheck::report
