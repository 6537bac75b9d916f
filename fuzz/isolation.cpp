#include "isolation.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "call_batch.h"
#include "host/fault_signals.h"
#include "kernel_host.h"
#include "normcheck/guard_pages.h"
#include "normcheck/op_spec.h"

namespace normcheck::fuzz {
namespace {

constexpr int kBatch = 64;           // cases per child
constexpr int kFaultExit = 86;       // the child's exit status after a caught fault
// A case whose evaluation (reference included) makes no progress for this long
// plus 30 kernel timeouts is given up as a hang. The slowest cases the
// generators make (4 rows of 65536; 2 rows of up to 2^18, fuzz/case_gen.h)
// take about a second to verify.
constexpr int64_t kStallNs = int64_t{60} * 1000000000;

// An Evaluation's Worst as plain data.
struct SlotWorst {
  char output[16];
  int64_t row, col;
  float computed;
  double exact, allowed;
};

// A finished case as plain data (it crosses the process boundary).
struct Slot {
  double max_ulp, max_ulp_elementwise, max_error_over_bound, normwise, max_error_over_tight;
  int64_t tight_rows;
  bool nonfinite_mismatch, out_of_bounds_write, unwritten_output, wrote_input, pass;
  bool nondeterministic;
  char batch_variance[200];  // why a row depends on its batch, or ""
  NonFiniteConvention nonfinite_convention;
  uint64_t output_digest;
  char declined[240];
  SlotWorst worst, tight_worst;
};

struct Shared {
  std::atomic<int> current;         // case of the batch in progress
  std::atomic<int> done;            // cases finished
  std::atomic<int> in_call;         // 1 while the kernel's function runs
  std::atomic<int64_t> call_start_ns;
  std::atomic<int> fault_signal;    // the signal the child caught (0: none)
  std::atomic<int> fault_in_guard;  // the fault address lay in a guard page
  std::atomic<int> fault_in_call;   // the fault happened inside the kernel's call
  Slot slots[kBatch];
};
static_assert(std::atomic<int64_t>::is_always_lock_free);

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

Shared* g_shared = nullptr;  // the child's view, for the signal handler and the call hook

void on_fault(int sig, siginfo_t* info, void*) {
  g_shared->fault_signal.store(sig);
  g_shared->fault_in_call.store(g_shared->in_call.load());
  if ((sig == SIGSEGV || sig == SIGBUS) && info && address_in_guard_page(info->si_addr))
    g_shared->fault_in_guard.store(1);
  _exit(kFaultExit);
}

void around_call(bool entering, void*) {
  if (entering) g_shared->call_start_ns.store(now_ns());
  g_shared->in_call.store(entering ? 1 : 0);
}

void copy_string(char* to, std::size_t size, const std::string& from) {
  const std::size_t n = std::min(size - 1, from.size());
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

SlotWorst slot_worst(const Worst& w) {
  SlotWorst s{};
  copy_string(s.output, sizeof s.output, w.output);
  s.row = w.row;
  s.col = w.col;
  s.computed = w.computed;
  s.exact = w.exact;
  s.allowed = w.allowed;
  return s;
}

Worst worst_of(const SlotWorst& s) { return {s.output, s.row, s.col, s.computed, s.exact, s.allowed}; }

[[noreturn]] void child_main(const Kernel& kernel, std::span<const Problem> batch, const IsolationOptions& options) {
  // Whatever the kernel prints goes to stderr: stdout carries normcheck's
  // report (one JSON document with --json).
  dup2(STDERR_FILENO, STDOUT_FILENO);
  host::catch_fault_signals(on_fault);

  EvaluateOptions eo;
  eo.bound_override = options.bound_override;
  eo.guard_pages = true;
  eo.around_call = around_call;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    g_shared->current.store(static_cast<int>(i));
    Slot& s = g_shared->slots[i];
    const Evaluation ev = evaluate(kernel, batch[i], eo);
    bool nondeterministic = false;
    std::string depends_on_batch;
    if (options.run_twice && ev.declined.empty()) {
      EvaluateOptions again_options = eo;
      again_options.outputs_only = true;
      const Evaluation again = evaluate(kernel, batch[i], again_options);
      nondeterministic = again.output_digest != ev.output_digest;
      if (!nondeterministic && ev.pass) depends_on_batch = batch_variance(kernel, batch[i], ev, eo);
    }
    s.max_ulp = ev.max_ulp;
    s.max_ulp_elementwise = ev.max_ulp_elementwise;
    s.max_error_over_bound = ev.max_error_over_bound;
    s.normwise = ev.normwise;
    s.nonfinite_mismatch = ev.nonfinite_mismatch;
    s.out_of_bounds_write = ev.out_of_bounds_write;
    s.unwritten_output = ev.unwritten_output;
    s.wrote_input = ev.wrote_input;
    s.pass = ev.pass;
    s.nondeterministic = nondeterministic;
    copy_string(s.batch_variance, sizeof s.batch_variance, depends_on_batch);
    s.nonfinite_convention = ev.nonfinite_convention;
    s.output_digest = ev.output_digest;
    copy_string(s.declined, sizeof s.declined, ev.declined);
    s.worst = slot_worst(ev.worst);
    s.tight_rows = ev.tight_rows;
    s.max_error_over_tight = ev.max_error_over_tight;
    s.tight_worst = slot_worst(ev.tight_worst);
    g_shared->done.store(static_cast<int>(i + 1));
  }
  _exit(0);
}

Evaluation evaluation_of(const Kernel& kernel, const Slot& s) {
  Evaluation ev;
  ev.kernel = std::string(kernel.name);
  ev.op = kernel.op;
  ev.declined = s.declined;
  ev.max_ulp = s.max_ulp;
  ev.max_ulp_elementwise = s.max_ulp_elementwise;
  ev.max_error_over_bound = s.max_error_over_bound;
  ev.normwise = s.normwise;
  ev.nonfinite_mismatch = s.nonfinite_mismatch;
  ev.out_of_bounds_write = s.out_of_bounds_write;
  ev.unwritten_output = s.unwritten_output;
  ev.wrote_input = s.wrote_input;
  ev.pass = s.pass;
  ev.output_digest = s.output_digest;
  ev.nonfinite_convention = s.nonfinite_convention;
  ev.worst = worst_of(s.worst);
  ev.tight_rows = s.tight_rows;
  ev.max_error_over_tight = s.max_error_over_tight;
  ev.tight_worst = worst_of(s.tight_worst);
  return ev;
}

std::string detail_of(const Evaluation& ev) {
  if (ev.worst.output.empty()) return {};
  char text[200];
  std::snprintf(text, sizeof text, "%s[row %lld, col %lld] = %a, exact %a, allowed error %.3g",
                ev.worst.output.c_str(), static_cast<long long>(ev.worst.row),
                static_cast<long long>(ev.worst.col), static_cast<double>(ev.worst.computed),
                ev.worst.exact, ev.worst.allowed);
  return text;
}

// A code outside what the declared cast admits: the code, the exact value
// it stands for (y over the scale, or y times it under scale_apply=multiply),
// and the rounding boundary nearest that
// value (the midpoint between the two codes around it, or the clamp's edge
// past the last code), where a cast of a value off by a little lands on
// either side; and the cast the outputs follow, when another way of casting
// admits them (Evaluation::consistent_casts).
std::string quantization_detail(const Evaluation& ev) {
  const QuantCast cast = *ev.quantized;
  const QuantFormat f = cast.format;
  const double t = ev.worst.exact, top = quant_max(f), bottom = cast.symmetric || f != QuantFormat::int8 ? -top : -128;
  const double step = quant_spacing(f, t), nearest = quant_cast({f, true, false, false}, t);
  const double below = nearest <= t ? nearest : nearest - step;
  char boundary[120];
  if (std::isnan(t)) std::snprintf(boundary, sizeof boundary, "no exact value");
  else if (t > top) std::snprintf(boundary, sizeof boundary, "past the largest code %.9g: the clamp's edge", top);
  else if (t < bottom) std::snprintf(boundary, sizeof boundary, "past the lowest code %.9g: the clamp's edge", bottom);
  else
    std::snprintf(boundary, sizeof boundary, "nearest rounding boundary %.9g (between %.9g and %.9g)", below + step / 2,
                  below, below + step);
  const SpecParse spec = parse_spec(ev.spec);
  const bool multiply = spec.spec && spec.spec->quant && spec.spec->quant->apply == ScaleApply::multiply;
  char text[400];
  std::snprintf(text, sizeof text, "y[row %lld, col %lld] = code 0x%02x (%s %.9g), exact y %s scale = %.17g, %s; %.3g codes past the admitted ones",
                static_cast<long long>(ev.worst.row), static_cast<long long>(ev.worst.col),
                static_cast<unsigned>(quant_code(f, ev.worst.computed)), std::string(to_string(f)).c_str(),
                static_cast<double>(ev.worst.computed), multiply ? "*" : "/", t, boundary,
                // the figure is |c - m| / (reach + 1/2) (Tally::code_element): past the reach by this many codes
                std::max(0.0, ev.max_error_over_bound * ev.worst.allowed - ev.worst.allowed + 0.5));
  std::string out = text;
  for (std::size_t i = 0; i < ev.consistent_casts.size(); ++i)
    out += (i == 0 ? "; its codes follow '" : "', or '") + ev.consistent_casts[i] + (i + 1 == ev.consistent_casts.size() ? "'" : "");
  return out;
}

// Within the bound, beyond the tight standard on a realistic row: the
// element, its exact value and the tight range's reach, with both figures.
std::string tight_detail(const Evaluation& ev) {
  const Worst& w = ev.tight_worst;
  char text[320];
  std::snprintf(text, sizeof text,
                "%s[row %lld, col %lld] = %a, exact %a, allowed error %.3g under the tight standard on a realistic "
                "row: %.3gx the tight standard (within the worst-case bound: %.3gx)",
                w.output.c_str(), static_cast<long long>(w.row), static_cast<long long>(w.col),
                static_cast<double>(w.computed), w.exact, w.allowed, ev.max_error_over_tight, ev.max_error_over_bound);
  return text;
}

// One line on what the label means for this case.
std::string detail_for(const std::string& label, const Evaluation& ev) {
  if (label == "nondeterministic") return "two runs of the same case gave outputs that differ in their bits";
  if (label == "out_of_bounds") return "a canary byte just before or after an array changed";
  if (label == "writes_input") return "an input array (x, dy, gamma, beta or a saved statistic) changed in the call";
  if (label == "unwritten_output")
    return "an output element still holds the signalling-NaN pattern it was filled with before the call";
  if (label == "policy_mismatch") {
    std::string other;
    for (const std::string& spec : ev.consistent_policies) other += (other.empty() ? "'" : ", '") + spec + "'";
    return "outside the range its declared policy '" + ev.spec + "' admits (" + detail_of(ev) +
           ", allowed: how far its range reaches on that side); its outputs are consistent with " + other;
  }
  if (label == "quantization" && ev.worst.output == "y") return quantization_detail(ev);
  if (label == "quantization" && !ev.consistent_casts.empty())
    return detail_of(ev) + "; its outputs follow '" + ev.consistent_casts.front() + "'";
  if (label.empty()) return {};
  if (label == "accuracy" && beyond_tight_only(ev)) return tight_detail(ev);
  const std::string hint = spec_hint(ev, label);
  return hint.empty() ? detail_of(ev) : detail_of(ev) + "; " + hint;
}

// A plugin's kernel: evaluate() runs here (the reference, the verdict) and
// each call of the kernel runs in a kernel host (kernel_host.h), which
// reports a call that did not complete as a KernelCallFault. The cases run
// together (call_batch.h), so that their calls cross to the host in batches.
std::vector<CaseResult> run_hosted(const Kernel& kernel, std::span<const Problem> problems,
                                   const IsolationOptions& options) {
  std::vector<CaseResult> results(problems.size());
  EvaluateOptions eo;
  eo.bound_override = options.bound_override;
  const auto run_one = [&](std::size_t i) {
    CaseResult& r = results[i];
    // Run twice: the host runs each call twice on copies of the same arrays
    // and compares the outputs.
    CallScope scope(options.timeout_ms, options.run_twice ? 2 : 1);
    try {
      r.evaluation = evaluate(kernel, problems[i], eo);
      std::string batch;
      if (options.run_twice && !scope.runs_differ && r.evaluation.pass) {
        CallScope once(options.timeout_ms, 1);  // the batch's reruns: one run each
        batch = batch_variance(kernel, problems[i], r.evaluation, eo);
      }
      r.finished = true;
      r.label = label_of(r.evaluation, scope.runs_differ, batch);
      r.detail = r.label == "batch_variant" ? batch : detail_for(r.label, r.evaluation);
      // A call that changed the floating-point control state explains any
      // NaN or error it gave, so it comes before them.
      if (!scope.fp_change.empty() && (r.label.empty() || r.label == "nan" || r.label == "accuracy")) {
        r.label = "fp_environment";
        r.detail = "the kernel call left the floating-point control state changed (" + scope.fp_change +
                   "); the kernel host restored it before the next call";
      }
    } catch (const KernelCallFault& fault) {
      r.label = fault.label;
      r.detail = fault.what();
    }
    return options.stop_at_first_label && !r.label.empty();
  };
  // At most a request's worth of cases at a time: each has one call in flight.
  for (std::size_t start = 0; start < problems.size(); start += kGatheredCases) {
    const std::size_t n = std::min<std::size_t>(kGatheredCases, problems.size() - start);
    gather_calls(n, [&](std::size_t i) { return run_one(start + i); });
    if (options.stop_at_first_label) {
      // The cases after the first label are left unfinished, as one by one.
      const auto first = std::find_if(results.begin() + static_cast<std::ptrdiff_t>(start),
                                      results.begin() + static_cast<std::ptrdiff_t>(start + n),
                                      [](const CaseResult& r) { return !r.label.empty(); });
      if (first != results.begin() + static_cast<std::ptrdiff_t>(start + n)) {
        std::fill(first + 1, results.end(), CaseResult{});
        break;
      }
    }
  }
  return results;
}

}  // namespace

std::string spec_hint(const Evaluation& ev, const std::string& label) {
  if (label != "nan" && label != "accuracy") return {};
  const SpecParse parsed = parse_spec(ev.spec);
  if (!parsed.spec) return {};
  const OpSpec& spec = *parsed.spec;
  if (!spec.add || spec.direction != Direction::fwd || spec.dtype_of(TensorName::x) != DType::f32 ||
      spec.rounding_at(RoundingPoint::sum))
    return {};
  return "the spec holds the kernel to the exact sum x + residual: declare round=sum:f32 if the kernel "
         "normalizes its float32 sum";
}

std::string label_of(const Evaluation& ev, bool nondeterministic, const std::string& batch_variance) {
  if (!ev.declined.empty()) return {};
  if (ev.out_of_bounds_write) return "out_of_bounds";
  if (ev.wrote_input) return "writes_input";
  if (ev.unwritten_output) return "unwritten_output";
  if (nondeterministic) return "nondeterministic";
  if (ev.nonfinite_mismatch) return "nan";
  // a spec's kernel whose outputs another rounding policy admits (Evaluation::consistent_policies)
  if (!ev.pass && !ev.consistent_policies.empty()) return "policy_mismatch";
  // a quantized y's code, a dynamic scale, scale_inv or the amax outside what the declared cast admits
  if (!ev.pass && ev.quantized &&
      (ev.worst.output == "y" || ev.worst.output == "scale" || ev.worst.output == "scale_inv" || ev.worst.output == "amax"))
    return "quantization";
  if (!ev.pass) return "accuracy";
  // outputs within their bounds that depend on the rows around them
  if (!batch_variance.empty()) return "batch_variant";
  return {};
}

std::string batch_variance(const Kernel& kernel, const Problem& p, const Evaluation& ev,
                           const EvaluateOptions& options) {
  if (p.rows < 2 || !ev.declined.empty() || ev.row_digests.size() != static_cast<std::size_t>(p.rows)) return {};
  EvaluateOptions outputs_only = options;
  outputs_only.outputs_only = true;
  const int64_t last = p.rows - 1;
  const int64_t alone_order[] = {last};
  const Evaluation alone = evaluate(kernel, with_rows(p, alone_order), outputs_only);
  if (alone.declined.empty() && alone.row_digests.size() == 1 && alone.row_digests[0] != ev.row_digests.back())
    return "row " + std::to_string(last) + " of " + std::to_string(p.rows) +
           " gives other output bits when it is run alone (1 x " + std::to_string(p.cols) + ")";
  std::vector<int64_t> reversed;
  for (int64_t r = last; r >= 0; --r) reversed.push_back(r);
  const Evaluation flipped = evaluate(kernel, with_rows(p, reversed), outputs_only);
  if (!flipped.declined.empty() || flipped.row_digests.size() != reversed.size()) return {};
  for (std::size_t i = 0; i < reversed.size(); ++i)
    if (flipped.row_digests[i] != ev.row_digests[static_cast<std::size_t>(reversed[i])])
      return "row " + std::to_string(reversed[i]) + " of " + std::to_string(p.rows) +
             " gives other output bits at row " + std::to_string(i) + " (the batch's rows in reverse order)";
  return {};
}

std::vector<CaseResult> run_isolated(const Kernel& kernel, std::span<const Problem> problems,
                                     const IsolationOptions& options) {
  if (options.in_process) {
    std::vector<CaseResult> results(problems.size());
    for (std::size_t i = 0; i < problems.size(); ++i) {
      results[i] = run_case(kernel, problems[i], options);
      if (options.stop_at_first_label && !results[i].label.empty()) break;
    }
    return results;
  }
  if (hosted_plugin_of(kernel)) return run_hosted(kernel, problems, options);
  std::vector<CaseResult> results(problems.size());
  void* m = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::runtime_error("run_isolated: mmap of the shared results failed");
  Shared* shared = static_cast<Shared*>(m);
  const int64_t timeout_ns = int64_t{std::max(1, options.timeout_ms)} * 1000000;

  std::size_t next = 0;
  while (next < problems.size()) {
    const std::size_t count = std::min<std::size_t>(kBatch, problems.size() - next);
    const std::span<const Problem> batch = problems.subspan(next, count);
    new (shared) Shared();
    std::fflush(nullptr);  // the child must not flush the parent's buffered output again
    const pid_t pid = fork();
    if (pid < 0) {
      munmap(m, sizeof(Shared));
      throw std::runtime_error("run_isolated: fork failed");
    }
    if (pid == 0) {
      g_shared = shared;
      child_main(kernel, batch, options);
    }
    int status = 0;
    bool hung = false, stalled = false;
    int last_done = 0;
    int64_t last_progress = now_ns();
    for (;;) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      const int64_t now = now_ns();
      if (shared->in_call.load() && now - shared->call_start_ns.load() > timeout_ns) {
        hung = true;
      } else if (const int d = shared->done.load(); d != last_done) {
        last_done = d;
        last_progress = now;
      } else if (now - last_progress > kStallNs + 30 * timeout_ns) {
        stalled = true;  // no case finished for that long, outside the kernel's calls
      }
      if (hung || stalled) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      usleep(500);
    }
    const int done = shared->done.load();
    for (int i = 0; i < done; ++i) {
      CaseResult& r = results[next + static_cast<std::size_t>(i)];
      r.finished = true;
      r.evaluation = evaluation_of(kernel, shared->slots[i]);
      r.label = label_of(r.evaluation, shared->slots[i].nondeterministic, shared->slots[i].batch_variance);
      r.detail = r.label == "batch_variant" ? shared->slots[i].batch_variance : detail_for(r.label, r.evaluation);
    }
    if (options.stop_at_first_label) {
      const auto first = std::find_if(results.begin() + static_cast<std::ptrdiff_t>(next),
                                      results.begin() + static_cast<std::ptrdiff_t>(next) + done,
                                      [](const CaseResult& r) { return !r.label.empty(); });
      if (first != results.begin() + static_cast<std::ptrdiff_t>(next) + done) break;
    }
    if (static_cast<std::size_t>(done) == count) {
      next += count;
      continue;
    }
    // The case in progress ended the child.
    CaseResult& r = results[next + static_cast<std::size_t>(done)];
    const bool in_call = shared->in_call.load() != 0;
    if (hung) {
      r.label = "hang";
      r.detail = "the kernel call ran longer than " + std::to_string(options.timeout_ms) + " ms";
    } else if (stalled) {
      r.label = "hang";
      r.detail = "no result for this case for over a minute, outside the kernel's calls (normcheck's own "
                 "evaluation, or the kernel's effects on it)";
    } else if (shared->fault_signal.load() != 0) {
      const int sig = shared->fault_signal.load();
      const bool guard = shared->fault_in_guard.load() != 0;
      r.label = guard ? "out_of_bounds" : "crash";
      r.detail = std::string(guard ? "access to a guard page past an array: " : "") + "signal " +
                 std::to_string(sig) + " (" + strsignal(sig) + ")" +
                 (shared->fault_in_call.load() ? " in the kernel call" : " outside the kernel call (in normcheck)");
    } else if (WIFSIGNALED(status)) {
      r.label = "crash";
      r.detail = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    } else {
      r.label = "crash";
      r.detail = "the process exited with status " + std::to_string(WEXITSTATUS(status)) +
                 (in_call ? " during the kernel call" : " outside the kernel call");
    }
    next += static_cast<std::size_t>(done) + 1;
    if (options.stop_at_first_label) break;
  }
  munmap(m, sizeof(Shared));
  return results;
}

CaseResult run_case(const Kernel& kernel, const Problem& problem, const IsolationOptions& options) {
  if (!options.in_process && (kernel.origin == Origin::plugin || hosted_plugin_of(kernel)))
    return run_isolated(kernel, std::span<const Problem>(&problem, 1), options)[0];
  CaseResult r;
  try {
    r.evaluation = evaluate(kernel, problem, options.bound_override);
  } catch (const KernelCallFault& fault) {  // the call did not complete: no evaluation
    r.label = fault.label;
    r.detail = fault.what();
    return r;
  }
  r.finished = true;
  r.label = label_of(r.evaluation, false);
  r.detail = detail_for(r.label, r.evaluation);
  return r;
}

}  // namespace normcheck::fuzz
