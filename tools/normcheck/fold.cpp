// `normcheck fold`: folds the norms of a safetensors file into their consumer
// Linears (and centres residual writers) as a spec says, verifies every fold
// in float32 against its derived bound on random and adversarial normalized
// rows, and writes the folded file atomically.
//
// Exit codes: 0 folded, verified and written; 1 a fold broke its bound or
// overflowed its storage format (nothing written); 2 bad usage, a bad file or
// a spec the file does not fit, a Post-LN fold (nothing written).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "command.h"
#include "fold/fold_file.h"
#include "json_number.h"
#include "normcheck/input_file.h"
#include "seed.h"

namespace normcheck::cli {
namespace {

struct FoldArgs {
  std::string weights, spec, out, seed, activations = "float32";
  bool json = false, wrong_side = false;
  long rows = 16;
};

int run_fold(const FoldArgs& args) {
  const uint64_t seed = seed_from(args.seed, 20261121);
  if (args.rows < 1) throw UsageError("--rows must be at least 1");
  if (args.activations != "float32" && args.activations != "storage")
    throw UsageError("--activations must be float32 or storage, not '" + args.activations + "'");
  fold::TensorFile file;
  fold::FoldSpec spec;
  fold::FoldReport report;
  try {
    spec = fold::parse_fold_spec(read_input_file(args.spec, kMaxSmallInput), path_text(args.spec));
    file = fold::read_safetensors(args.weights);
    report = fold::fold_file(file, spec, {seed, args.rows, args.wrong_side, args.activations == "storage"});
  } catch (const fold::SafetensorsError& e) {
    throw UsageError(e.what());
  } catch (const fold::FoldError& e) {
    throw UsageError(e.what());
  } catch (const InputFileError& e) {
    throw UsageError(e.what());
  }
  const bool ok = report.ok();
  if (ok) fold::write_safetensors(args.out, file);

  if (args.json) {
    nlohmann::json consumers = nlohmann::json::array(), writers = nlohmann::json::array();
    for (const auto& c : report.consumers)
      consumers.push_back({{"norm", c.norm}, {"weight", c.weight}, {"dtype", c.dtype}, {"in_features", c.d},
                           {"out_features", c.e}, {"outputs_checked", c.check.elements},
                           {"within_bound", c.check.within_bound()},
                           {"diff_over_bound", json_number(c.check.diff_over_bound)},
                           {"folded_over_bound", json_number(c.check.folded_over_bound)},
                           {"unfolded_over_bound", json_number(c.check.unfolded_over_bound)},
                           {"folded_error", json_number(c.check.folded_error)},
                           {"unfolded_error", json_number(c.check.unfolded_error)},
                           {"folded_rms_error", json_number(c.check.folded_rms_error)},
                           {"unfolded_rms_error", json_number(c.check.unfolded_rms_error)},
                           {"overflowed_weights", c.check.overflowed_weights},
                           {"unfolded_nonfinite_outputs", c.check.unfolded_nonfinite_outputs},
                           {"worst", c.check.worst}});
    for (const auto& w : report.writers)
      writers.push_back({{"weight", w.weight}, {"dtype", w.dtype}, {"sum_over_bound", json_number(w.sum_over_bound)},
                         {"entry_over_bound", json_number(w.entry_over_bound)}, {"overflowed", w.overflowed}});
    const nlohmann::json doc = {{"seed", seed}, {"ok", ok}, {"written", ok}, {"out", args.out},
                                {"wrong_side_control", args.wrong_side}, {"activations", args.activations},
                                {"consumers", consumers},
                                {"writers", writers}};
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << "fold: seed " << seed << " (--seed or NORMCHECK_SEED), " << args.rows
              << " normalized rows per consumer, " << args.activations << " activations\n";
    for (const auto& c : report.consumers) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "%-4s %s <- %s (%s, %ld x %ld): |folded - unfolded| / bound %.3g; error vs exact: folded %.2e, "
                    "unfolded %.2e (of sum |terms|)%s\n",
                    c.check.within_bound() ? "ok" : "FAIL", c.weight.c_str(), c.norm.c_str(), c.dtype.c_str(), c.e,
                    c.d, c.check.diff_over_bound, c.check.folded_error, c.check.unfolded_error,
                    c.check.overflowed_weights
                        ? (", " + std::to_string(c.check.overflowed_weights) + " folded weights overflow " + c.dtype).c_str()
                        : "");
      std::cout << line;
      if (c.check.unfolded_nonfinite_outputs)
        std::cout << "     the unfolded model overflowed " << c.dtype << " on " << c.check.unfolded_nonfinite_outputs
                  << " outputs (gamma xhat + beta past the range); the folded ones were checked against the exact result\n";
      if (!c.check.within_bound()) std::cout << "     worst: " << c.check.worst << "\n";
    }
    for (const auto& w : report.writers) {
      char line[256];
      std::snprintf(line, sizeof line, "%-4s %s centred (%s): |column sum| / bound %.3g, entries / bound %.3g\n",
                    w.sum_over_bound <= 1 && w.entry_over_bound <= 1 && !w.overflowed ? "ok" : "FAIL",
                    w.weight.c_str(), w.dtype.c_str(), w.sum_over_bound, w.entry_over_bound);
      std::cout << line;
    }
    std::cout << (ok ? "wrote " + args.out : "nothing written: a fold broke its bound") << "\n";
  }
  return ok ? kExitOk : kExitFinding;
}

}  // namespace

void add_fold_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<FoldArgs>();
  CLI::App* sub = app.add_subcommand(
      "fold",
      "Fold LayerNorm/RMSNorm gamma (and beta) into the Linears that read the norm, and centre the writers of "
      "a Pre-LN residual stream, in a safetensors file as a spec says (docs/folding.md); verify each fold in "
      "float32 against its derived bound on random and adversarial rows, then write the folded file.\n"
      "Exit 0 folded, verified and written; 1 a fold broke its bound or overflowed its dtype (nothing "
      "written); 2 bad usage, a malformed file, a spec the file does not fit or a Post-LN fold (nothing written).");
  sub->add_option("--weights", args->weights, "Input safetensors file (F32, BF16, F16 tensors are folded)")->required();
  sub->add_option("--spec", args->spec, "JSON spec: which norm feeds which Linears (docs/folding.md)")->required();
  sub->add_option("--out", args->out, "Output safetensors file, written atomically")->required();
  sub->add_option("--seed", args->seed, "Seed of the random rows (default: NORMCHECK_SEED, else 20261121)");
  sub->add_option("--rows", args->rows, "Normalized rows per consumer (Gaussian, spike, sign-aligned, cancelling; default 16)");
  sub->add_option("--activations", args->activations,
                  "The norm's output as the Linear reads it: float32 (default) or storage (rounded to each "
                  "consumer's dtype, as a bf16/f16 model stores it)");
  sub->add_flag("--json", args->json,
                "Print one JSON document: {seed, ok, written, out, wrong_side_control, activations, consumers: [...], "
                "writers: [...]}");
  sub->add_flag("--wrong-side", args->wrong_side,
                "Negative control: fold diag(gamma) W instead of W diag(gamma); the verification must fail (exit 1)");
  sub->callback([&action, args] { action = [args] { return run_fold(*args); }; });
}

}  // namespace normcheck::cli
