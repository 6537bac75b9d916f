// `normcheck gen --spec S --out DIR [--cases N] [--seed S] [--domain TEXT] [--shape RxC]...`:
// the problems of an op spec as files (case_files.h, docs/judge.md)
// for a harness in any language or on any device to run; `normcheck judge
// DIR` then gives the verdicts on the outputs it writes beside them.
//
// The problems are those fuzz and identify draw for a version-2 kernel of
// the spec (fuzz/case_gen.h, case c of the seed) inside the declared domain
// (default: a plugin's, docs/plugins.md), on contiguous rows, at the
// --shape's given (GenOptions::shapes) or else at the generator's sizes.
// A quantized spec's files hold y as codes and its scale (case_files.h).
// A backward spec's files hold dy and the inputs evaluate() gives a kernel
// of it (recorded_kernel.h, backward_call_inputs: the saved statistics, y for
// from=y), and x for the judge's reference.
// Exit 0: written; 2: bad usage (a spec that is not one, a norm followed by a
// Linear, a directory that already holds cases).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include "accuracy_baseline.h"
#include "case_files.h"
#include "case_gen.h"
#include "command.h"
#include "harness_draw.h"
#include "normcheck/op_spec.h"
#include "recorded_kernel.h"
#include "seed.h"

namespace normcheck::cli {
namespace {

namespace fs = std::filesystem;

struct GenArgs {
  std::string spec, out, seed, domain;
  // One problem of each of the generator's sizes 0..100 (case c is drawn at
  // size c mod 101, fuzz/case_gen.h), so d reaches the thousands: 16 cases
  // would stop at d <= 5 (d is capped at 2^(size/6), properties/problem_gen.cpp).
  int64_t cases = 101;
  std::vector<std::string> shapes;  // --shape RxC: each problem one of them (GenOptions::shapes)
  // --accuracy-rows: the realistic rows of every input class that applies to
  // the spec (fuzz/accuracy_baseline.h), each case's class in its metadata,
  // for `judge --check-baseline` / `--update-baseline`.
  bool accuracy_rows = false;
  bool cases_given = false;
};

// --shape's text RxC (e.g. 8192x4096) as (rows, cols).
std::pair<int64_t, int64_t> parse_shape(const std::string& text) {
  const std::size_t x = text.find('x');
  const auto count = [&](const std::string& part) {
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("--shape " + text + ": expected ROWSxCOLS, e.g. 8192x4096");
    return static_cast<int64_t>(std::stoll(part));
  };
  if (x == std::string::npos) throw UsageError("--shape " + text + ": expected ROWSxCOLS, e.g. 8192x4096");
  return {count(text.substr(0, x)), count(text.substr(x + 1))};
}

// The domain a harness of the spec is held to: a version-2 plugin's
// (layernorm_fwd.twopass's range) with the terms of `text` replacing its own.
InputRange domain_of(const std::string& text) {
  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  if (!twopass) throw std::logic_error("the table has no layernorm_fwd.twopass, whose range harnesses get");
  try {
    return parse_domain(text, twopass->range);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--domain: " + std::string(e.what()));
  }
}

// A directory with no case files in it (made if need be): outputs left from
// other problems must never be judged against new inputs.
void prepare_out_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw UsageError("--out " + dir.string() + " is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw UsageError("--out " + dir.string() + ": " + ec.message());
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("case-", 0) == 0)
      throw UsageError("--out " + dir.string() + " already holds case files (" + e.path().filename().string() +
                       "): use an empty directory");
  if (ec) throw UsageError("--out " + dir.string() + ": " + ec.message());
}

// Case c of the seed as the file holds it (harness_draw.h).
Problem draw(const rc::Gen<Problem>& problems, const Kernel& row, uint64_t seed, int64_t c) {
  if (std::optional<Problem> p = harness_case(problems, row, seed, c)) return *p;
  throw UsageError("case " + std::to_string(c) + ": " + std::to_string(kHarnessDrawTries) +
                   " draws in a row fall outside the domain once rounded to " +
                   std::string(to_string(row.spec->dtype_of(TensorName::x))) + "; widen --domain");
}

// The output tensors a harness writes, as gen's last lines list them.
void print_outputs_wanted(const OpSpec& spec) {
  std::printf("each case-NNN.inputs.safetensors wants a case-NNN.outputs.safetensors beside it with:");
  for (TensorName t : output_tensors(spec))
    std::printf(" %s (%s)", tensor_file_name(spec, t).c_str(),
                t == TensorName::y && spec.quant ? file_dtypes(spec, t).front().c_str()  // the codes
                                                 : std::string(to_string(spec.dtype_of(t))).c_str());
  if (scale_is_output(spec)) {
    const std::string per_row =
        spec.quant->scale == ScaleKind::per_token ? "1" : "ceil(cols / " + std::to_string(spec.quant->group) + ")";
    std::printf(" %s (f32, rows x %s)", kScaleTensor, per_row.c_str());
  }
  if (has_scale_inv(spec)) std::printf(" %s (f32, 1)", kScaleInvTensor);
  if (has_amax(spec)) std::printf(" %s (f32, 1)", kAmaxTensor);
  if (scale_is_input(spec))
    std::printf("\n(each inputs file holds the static scale: %s, F32 [1]; y is %s by it)", kScaleTensor,
                has_scale_inv(spec) ? "multiplied" : "divided");
}

// --accuracy-rows: every applicable class's realistic problems the harness's
// row meets inside the domain (the rest it would decline: not written).
int write_accuracy_rows(const OpSpec& spec, const Kernel& row, const InputRange& domain, uint64_t seed,
                        const fs::path& dir) {
  int64_t c = 0, outside = 0;
  std::set<std::string> classes;
  for (const fuzz::AccuracyProblem& p : fuzz::accuracy_problems(row, seed)) {
    if (!declines(row, request_for(row, stored_problem(spec, p.problem))).empty()) {
      ++outside;
      continue;
    }
    CaseInputs in{spec, p.problem, seed, c, domain_text(domain), p.input_class};
    try {
      fold::write_safetensors(dir / inputs_file_name(c), inputs_file(in));
    } catch (const std::invalid_argument& e) {
      throw UsageError("case " + std::to_string(c) + " (" + p.input_class + "): " + e.what());
    }
    classes.insert(p.input_class);
    ++c;
  }
  if (c == 0)
    throw UsageError("no input class's realistic rows lie inside the domain '" + domain_text(domain) + "'");
  std::printf("seed %llu: %lld realistic problems of %s in %zu input classes in %s (domain: %s; %lld outside it "
              "not written)\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(c), to_text(spec).c_str(),
              classes.size(), dir.string().c_str(), domain_text(domain).empty() ? "any" : domain_text(domain).c_str(),
              static_cast<long long>(outside));
  print_outputs_wanted(spec);
  std::printf("\nthen: normcheck judge %s --update-baseline FILE (once), --check-baseline FILE (each run)\n",
              dir.string().c_str());
  return kExitOk;
}

int run_gen(const GenArgs& args) {
  const SpecParse parsed = parse_spec(args.spec);
  if (!parsed.spec) throw UsageError("--spec: " + parsed.error);
  const OpSpec spec = *parsed.spec;
  if (spec.linear) throw UsageError("--spec " + to_text(spec) + ": a norm followed by a Linear is not in the file protocol");
  if (args.cases < 1) throw UsageError("--cases must be at least 1");
  if (args.accuracy_rows && (args.cases_given || !args.shapes.empty()))
    throw UsageError("--accuracy-rows writes each input class's realistic rows: no --cases or --shape with it");
  // The accuracy rows are fixed by their seed alone: NORMCHECK_SEED, which
  // varies the random runs of a test suite, is not read for them.
  const uint64_t seed = args.accuracy_rows ? (args.seed.empty() ? fuzz::kAccuracySeed : parse_seed(args.seed))
                                           : seed_from(args.seed, kDefaultCaseSeed);
  const InputRange domain = domain_of(args.domain);
  const fs::path dir = args.out;
  prepare_out_dir(dir);

  const Kernel row = harness_row(spec, domain);
  if (args.accuracy_rows) return write_accuracy_rows(spec, row, domain, seed, dir);
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (const std::string& s : args.shapes) shapes.push_back(parse_shape(s));
  props::GenOptions options;
  try {
    options = harness_options(row, shapes);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--shape " + std::string(e.what()));
  }
  const rc::Gen<Problem> problems = props::gen_problem(options);
  for (int64_t c = 0; c < args.cases; ++c) {
    const CaseInputs in{spec, draw(problems, row, seed, c), seed, c, domain_text(domain), {}};
    try {
      fold::write_safetensors(dir / inputs_file_name(c), inputs_file(in));
    } catch (const std::invalid_argument& e) {  // a backward problem evaluate() declines
      throw UsageError("case " + std::to_string(c) + ": " + e.what());
    }
  }
  std::printf("seed %llu: %lld problems of %s in %s (domain: %s)\n", static_cast<unsigned long long>(seed),
              static_cast<long long>(args.cases), to_text(spec).c_str(), dir.string().c_str(),
              domain_text(domain).empty() ? "any" : domain_text(domain).c_str());
  print_outputs_wanted(spec);
  // f16's largest finite value is 65504: under a domain whose |x| reaches
  // past it (the default's 2^62/sqrt(d) does), a drawn x past it is stored as
  // inf, and most cases judge the kernel's handling of an inf row rather than
  // its arithmetic.
  if (spec.dtype_of(TensorName::x) == DType::f16 && domain.limit(1) > 65504)
    std::printf("\nnote: f16 holds |x| <= 65504; an x drawn past it is stored as inf: "
                "--domain \"|x|<=65504\" draws finite f16 values");
  std::printf("\nthen: normcheck judge %s\n", dir.string().c_str());
  return kExitOk;
}

}  // namespace

void add_gen_command(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("gen", "Write an op spec's problems as safetensors files for a harness to run");
  auto args = std::make_shared<GenArgs>();
  sub->add_option("--spec", args->spec, "The op spec, e.g. \"rmsnorm fwd dtype=bf16 gamma=bf16\" (docs/ops.md)")
      ->required();
  sub->add_option("--out", args->out, "Directory for the case files (made if need be; must hold no case files)")
      ->required();
  sub->add_option("--cases", args->cases, "Problems to write (default 101: one of each generator size, d up to the thousands)")
      ->each([args](const std::string&) { args->cases_given = true; });
  sub->add_flag("--accuracy-rows", args->accuracy_rows,
                "Write every input class's realistic rows instead (for judge --check-baseline / --update-baseline; "
                "seed default " + std::to_string(fuzz::kAccuracySeed) + ")");
  sub->add_option("--seed", args->seed, "Seed (default: NORMCHECK_SEED, else 20261127)");
  sub->add_option("--shape", args->shapes,
                  "A shape ROWSxCOLS to draw problems at, e.g. 8192x4096 (repeatable: each problem one of them; "
                  "default: 1 to 4 rows, d growing with the case number)");
  sub->add_option("--domain", args->domain,
                  "The inputs the harness supports, e.g. \"finite eps>=1e-06\" (docs/plugins.md; default: a plugin's)");
  sub->callback([&action, args] { action = [args] { return run_gen(*args); }; });
}

}  // namespace normcheck::cli
