// The bindings of the Python module `normcheck` (normcheck/__init__.py is its
// API; docs/python.md). Thin: a Python function becomes the computation of a
// kernel row, the row of a harness of the spec (tools/normcheck/recorded_kernel.h:
// plugin_bound(op, dtype), the declared domain), whose SpecKernelFn calls the
// function with the GIL held; evaluate() judges it as it judges every kernel.
// The problems are fuzz's (fuzz/case_gen.h), shrinking is shrink_finding(),
// the policy is fuzz::identify(), the files are problem files (row_file.h).
// Every kernel call runs in this process (IsolationOptions::in_process): a
// forked child of the interpreter cannot run Python code safely.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "accuracy_baseline.h"
#include "campaign.h"
#include "case_files.h"
#include "case_gen.h"
#include "harness_draw.h"
#include "identify.h"
#include "input_class.h"
#include "isolation.h"
#include "kernel_host.h"
#include "normcheck/call_buffers.h"
#include "normcheck/io.h"
#include "normcheck/row_file.h"
#include "normcheck/seed.h"
#include "normcheck/spec_policy.h"
#include "judged_report.h"
#include "recorded_kernel.h"
#include "verdict.h"
#include "writers.h"

namespace py = pybind11;

namespace normcheck::python {
namespace {

// The seed of a random run: an int, a seed's text (normcheck/seed.h), or
// None: NORMCHECK_SEED when set, else kDefaultCaseSeed. ValueError otherwise.
uint64_t seed_of(const py::object& seed) {
  if (seed.is_none()) return seed_from_env().value_or(cli::kDefaultCaseSeed);
  if (py::isinstance<py::bool_>(seed)) throw py::type_error("seed: a bool is not a seed");
  if (py::isinstance<py::int_>(seed)) return parse_seed(py::str(seed).cast<std::string>());
  if (py::isinstance<py::str>(seed)) return parse_seed(seed.cast<std::string>());
  throw py::type_error("seed: an int, a str (decimal or 0x hex) or None");
}

OpSpec harness_spec(const std::string& text) {
  const SpecParse parsed = parse_spec(text);
  if (!parsed.spec) throw py::value_error("spec '" + text + "': " + parsed.error);
  const OpSpec& spec = *parsed.spec;
  if (spec.linear)
    throw py::value_error("spec '" + text + "': the Python module judges norms (a Linear after the norm, its W and b, "
                          "are not in its calls)");
  return spec;
}

// The domain a harness of the spec is held to: a version-2 plugin's default
// (layernorm_fwd.twopass's range, as `normcheck gen`) with `text`'s terms.
InputRange domain_of(const std::string& text) {
  const Kernel* twopass = find_kernel("layernorm_fwd.twopass");
  if (!twopass) throw std::logic_error("the table has no layernorm_fwd.twopass, whose range harnesses get");
  return parse_domain(text, twopass->range);
}

// float32 4, bf16 / f16 2, a quantized y's codes (NC_E4M3, NC_E5M2, NC_I8) 1

// The name of a quantized spec's scale among the function's inputs (static)
// or outputs (dynamic), as in the files (case_files.h).
constexpr const char* kScale = cli::kScaleTensor;

// A tensor of the call as a new contiguous array: float32 values, or the bit
// patterns of bf16 / f16 as uint16 (the Python side views them in its type).
// gamma and beta (`vector`: and a static scale) are 1-D [cols], a
// backward's saved statistics 1-D [rows], the others rows x cols; None when
// the call has none.
py::object input_array(const nc_tensor& t, TensorName name, bool vector = false) {
  if (!t.data) return py::none();
  const std::size_t bytes = nc_dtype_bytes(t.dtype);
  std::vector<py::ssize_t> shape = {t.rows, t.cols};
  if (vector || name == TensorName::gamma || name == TensorName::beta) shape = {t.cols};
  if (name == TensorName::mean || name == TensorName::stat) shape = {t.rows};
  py::array out = t.dtype == NC_F32 ? py::array(py::dtype::of<float>(), shape) : py::array(py::dtype::of<uint16_t>(), shape);
  auto* dst = static_cast<unsigned char*>(out.mutable_data());
  const auto* src = static_cast<const unsigned char*>(t.data);
  const std::size_t row_bytes = static_cast<std::size_t>(t.cols) * bytes;
  for (int64_t r = 0; r < t.rows; ++r)
    std::memcpy(dst + static_cast<std::size_t>(r) * row_bytes, src + static_cast<std::size_t>(r * t.row_stride) * bytes,
                row_bytes);
  return out;
}

// An output the Python side returned (contiguous, the call's element type:
// a quantized y's one-byte codes too) into the call's tensor, row by row at
// its stride.
void copy_output(const nc_tensor& t, const py::handle& value, const std::string& name) {
  if (!t.data) return;
  const py::array a = py::array::ensure(value, py::array::c_style);
  const std::size_t bytes = nc_dtype_bytes(t.dtype);
  const std::size_t row_bytes = static_cast<std::size_t>(t.cols) * bytes;
  if (!a || static_cast<std::size_t>(a.itemsize()) != bytes ||
      static_cast<std::size_t>(a.nbytes()) != row_bytes * static_cast<std::size_t>(t.rows))
    throw py::value_error("output '" + name + "': not " + std::to_string(t.rows * t.cols) + " elements of " +
                          std::to_string(bytes) + " bytes");
  const auto* src = static_cast<const unsigned char*>(a.data());
  auto* dst = static_cast<unsigned char*>(t.data);
  for (int64_t r = 0; r < t.rows; ++r)
    std::memcpy(dst + static_cast<std::size_t>(r * t.row_stride) * bytes, src + static_cast<std::size_t>(r) * row_bytes,
                row_bytes);
}

// The outcome of one problem: run_case's result and the input class it falls in.
struct Outcome {
  fuzz::CaseResult result;
  std::string input_class;
};

std::string hex(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

class Harness;
// The harness whose function the row's calls on this thread go to: per thread,
// since a function that releases the GIL (torch does) lets another thread run
// a harness of its own meanwhile; evaluate() calls the kernel on its caller's thread.
thread_local Harness* g_current = nullptr;

// A Python function as a kernel of a spec. `adapter(inputs, eps)` is the
// Python side (normcheck/__init__.py): it calls the user's function and
// returns a dict of output arrays, or a str (the exception the function
// raised: a KernelCallFault labelled `exception`). Anything it raises
// (OutputError: a wrong shape or dtype) propagates out of evaluate() to the
// caller.
class Harness {
 public:
  Harness(const std::string& spec_text, py::object adapter, const std::string& domain)
      : spec_(harness_spec(spec_text)), adapter_(std::move(adapter)), domain_(domain_of(domain)) {
    row_ = cli::harness_row(spec_, domain_);
    row_.name = "python";
    row_.algorithm = "a Python function (normcheck Python module)";
    row_.fn = SpecKernelFn(&Harness::call);
    isolation_.in_process = true;
    isolation_.run_twice = false;  // the row is never forked; a second run would be the same process's
  }

  Harness(const Harness&) = delete;  // row_ points at spec_
  Harness& operator=(const Harness&) = delete;

  std::string spec_text() const { return to_text(spec_); }
  bool backward() const { return spec_.direction == Direction::bwd; }
  std::string domain_text() const { return normcheck::domain_text(domain_); }
  // Why the harness's domain declines `p` (declines(), kernel.h), or ''.
  std::string declines_problem(const Problem& p) const { return declines(row_, request_for(row_, p)); }
  std::vector<std::pair<std::string, std::string>> tensors(bool outputs) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (TensorName t : outputs ? cli::output_tensors(spec_) : cli::input_tensors(spec_))
      out.emplace_back(cli::tensor_file_name(spec_, t),
                       t == TensorName::y && spec_.quant ? std::string(to_string(spec_.quant->cast.format))  // its codes
                                                         : std::string(to_string(spec_.dtype_of(t))));
    // a quantized spec's scale, float32: the static one an input, a dynamic one an output
    if (outputs ? cli::scale_is_output(spec_) : cli::scale_is_input(spec_)) out.emplace_back(kScale, "f32");
    // scale_apply=multiply's scale_inv and the word amax's amax: outputs of one float32
    if (outputs && cli::has_scale_inv(spec_)) out.emplace_back(cli::kScaleInvTensor, "f32");
    if (outputs && cli::has_amax(spec_)) out.emplace_back(cli::kAmaxTensor, "f32");
    return out;
  }

  // Case c of the seed as gen draws it (harness_draw.h: fuzz's generator on
  // this row, at the shapes given if any, the inputs rounded to their formats
  // and inside the domain once rounded).
  Problem draw(uint64_t seed, int64_t c) {
    if (!gen_) gen_.emplace(props::gen_problem(cli::harness_options(row_, shapes_)));
    if (std::optional<Problem> p = cli::harness_case(*gen_, row_, seed, c)) return std::move(*p);
    throw py::value_error("case " + std::to_string(c) + ": " + std::to_string(cli::kHarnessDrawTries) +
                          " draws in a row fall outside the domain '" + domain_text() + "' once rounded to " +
                          std::string(to_string(spec_.dtype_of(TensorName::x))) + "; widen domain=");
  }

  // The shapes (rows, cols) draw() draws at (each problem one of them);
  // empty: the generator's sizes. ValueError for a shape outside the domain's d range.
  void set_shapes(std::vector<std::pair<int64_t, int64_t>> shapes) {
    cli::harness_options(row_, shapes);  // throws std::invalid_argument (ValueError) for a bad one
    shapes_ = std::move(shapes);
    gen_.reset();
  }

  Outcome run(const Problem& p) {
    const Scope scope(this);
    Outcome o{fuzz::run_case(row_, p, isolation_), {}};
    if (!o.result.label.empty()) o.input_class = std::string(fuzz::class_of(row_, p, o.result).id);
    return o;
  }

  std::pair<Problem, Outcome> shrink(const Problem& p, const Outcome& o, double seconds) {
    const Scope scope(this);
    fuzz::Shrunk s = fuzz::shrink_finding(row_, p, o.result, o.input_class, isolation_, seconds);
    return {std::move(s.problem), Outcome{std::move(s.result), o.input_class}};
  }

  fuzz::Identification identify(int64_t cases, uint64_t seed, int64_t max_d) {
    const Scope scope(this);
    return fuzz::identify(row_, cases, seed, max_d);
  }

  // The function's figures on every input class's realistic rows
  // (fuzz/accuracy_baseline.h) as the kernel `name`, and with a baseline file:
  // held to it (worse by more than `worse_by` fails) or, with `update`,
  // written to it when something was judged and nothing failed, as `normcheck
  // accuracy` does. The seed: the baseline's when checking, else `seed`.
  py::dict accuracy(const std::string& name, const std::string& baseline, bool update, double worse_by,
                    uint64_t seed) {
    std::optional<fuzz::AccuracyRun> before;
    if (!baseline.empty() && !update) {
      before = fuzz::read_accuracy_baseline(baseline);  // std::invalid_argument: ValueError naming file and line
      seed = before->seed;
    }
    if (!(worse_by >= 1)) throw py::value_error("worse_by must be at least 1 (1: any growth is worse)");
    const Scope scope(this);
    Kernel row = row_;
    row.name = name;
    // A function of fixed widths (set_shapes: a module's normalized_shape)
    // declines the realistic rows outside them instead of failing on them.
    if (!shapes_.empty()) {
      const auto [lo, hi] = std::minmax_element(shapes_.begin(), shapes_.end(),
                                                [](const auto& a, const auto& b) { return a.second < b.second; });
      row.range.min_d = std::max(row.range.min_d, lo->second);
      row.range.max_d = std::min(row.range.max_d, hi->second);
    }
    fuzz::AccuracyRun run{seed, {}};
    const JudgedTally tally = fuzz::measure_accuracy(row, seed, isolation_, run.figures);
    const std::vector<const fuzz::AccuracyFigure*> failed = fuzz::failed_classes(run.figures);
    std::string text = "seed " + std::to_string(seed) + ": each class's realistic rows\n" + fuzz::format_figures(run.figures);
    if (!failed.empty()) text += "failed (a finding whatever the baseline):\n" + fuzz::format_failed(failed);
    py::list worse, notes;
    if (before) {
      const fuzz::AccuracyComparison c = fuzz::compare_accuracy(*before, run, worse_by);
      for (const auto& r : c.worse)
        worse.append(py::dict(py::arg("input_class") = r.input_class, py::arg("output") = r.output,
                              py::arg("metric") = r.metric, py::arg("before") = r.before, py::arg("after") = r.after));
      for (const auto& n : c.notes) notes.append(n);
      text += fuzz::format_comparison(c, baseline, worse_by);
    }
    const bool written = update && !baseline.empty() && !tally.nothing_judged() && failed.empty();
    if (written) {
      write_file_atomically(baseline, fuzz::format_accuracy_baseline(run));
      text += "baseline written to " + baseline + "\n";
    } else if (update && !baseline.empty()) {
      text += std::string("baseline not written: ") + (tally.nothing_judged() ? "nothing judged" : "a problem failed") + "\n";
    }
    py::list figures, failed_list;
    for (const auto& f : run.figures)
      figures.append(py::dict(py::arg("input_class") = f.input_class, py::arg("output") = f.output,
                              py::arg("problems") = f.problems, py::arg("declined") = f.declined,
                              py::arg("error_over_bound") = f.error_over_bound,
                              py::arg("error_over_tight") = f.error_over_tight, py::arg("max_ulp") = f.ulp,
                              py::arg("max_ulp_elementwise") = f.ulp_elementwise, py::arg("label") = f.label));
    for (const auto* f : failed) failed_list.append(f->input_class);
    return py::dict(py::arg("seed") = seed, py::arg("figures") = figures, py::arg("failed") = failed_list,
                    py::arg("worse") = worse, py::arg("notes") = notes, py::arg("written") = written,
                    py::arg("judged") = tally.judged, py::arg("declined") = tally.declined,
                    py::arg("first_decline") = tally.first_decline, py::arg("text") = text);
  }

  std::string problem_file(const Problem& p, const std::vector<std::string>& notes) const {
    return problem_file_text(op_of(spec_), spec_.dtype_of(TensorName::x), p, notes, row_.name, &spec_);
  }

  // A given problem as the files hold it; a static scale's spec needs the problem's scale.
  Problem stored(const Problem& p) const {
    if (spec_.direction == Direction::bwd && p.dy.size() != p.x.size())
      throw py::value_error("spec '" + to_text(spec_) + "' is a backward: the problem needs dy, the gradient arriving "
                            "at y, rows x cols like x (problem(..., dy=DY))");
    if (cli::scale_is_input(spec_) && !(p.scale > 0 && std::isfinite(p.scale)))
      throw py::value_error("spec '" + to_text(spec_) +
                            "' quantizes y by a static scale: the problem needs one (problem(..., scale=S), S > 0)");
    return cli::stored_problem(spec_, p);
  }

  // The report of judged cases (reports/judged_report.h), written to `out`
  // as `normcheck report` writes one: the function a kernel row named
  // `name`, each case a problem of it, each finding's problem file in the
  // report's findings/. A case whose call failed (an exception) has no
  // outputs to judge: it is a failing row with its label. Returns
  // report.html's path.
  std::string report(const std::string& out, const std::string& name, const std::vector<Problem>& problems,
                     const std::vector<Outcome>& outcomes, uint64_t seed, const std::string& source) const {
    if (problems.size() != outcomes.size()) throw py::value_error("report: one outcome per problem");
    namespace fs = std::filesystem;
    const fs::path findings = report::prepare_report_folder(out);
    Kernel row = row_;
    const std::string row_name = name;
    row.name = row_name;
    report::JudgedKernel kernel{&row, {}};
    for (std::size_t i = 0; i < problems.size(); ++i) {
      report::JudgedProblem p;
      p.name = "case-" + std::to_string(i);
      p.problem = problems[i];
      p.evaluation = outcomes[i].result.evaluation;
      if (!outcomes[i].result.label.empty()) {
        p.evaluation.pass = false;
        p.label = outcomes[i].result.label;
        const std::string file = p.name + ".finding.txt";
        fs::create_directories(findings);
        write_file_atomically(findings / file,
                              problem_file(p.problem, {"normcheck (Python) finding: " + p.label + " on " + name,
                                                        outcomes[i].result.detail}));
        p.problem_file = "findings/" + file;
        p.replay = "normcheck.replay(fn, '" + (fs::absolute(fs::path(out)) / p.problem_file).lexically_normal().string() + "')";
      }
      kernel.problems.push_back(std::move(p));
    }
    report::ReportData data = report::judged_report_data({std::move(kernel)}, seed, source);
    report::write_report(out, data, report::verdicts(data), std::nullopt, findings);
    return fs::absolute(fs::path(out) / "report.html").lexically_normal().string();
  }

 private:
  // The row's calls go to this harness while a Scope lives (nested: a
  // function that calls normcheck itself restores the outer one after).
  struct Scope {
    explicit Scope(Harness* h) : saved(g_current) { g_current = h; }
    ~Scope() { g_current = saved; }
    Harness* saved;
  };

  static void call(const nc_call* call) {
    Harness& h = *g_current;
    py::dict inputs;
    for (TensorName t : cli::input_tensors(h.spec_))
      inputs[py::str(cli::tensor_file_name(h.spec_, t))] = input_array(cli::call_tensor(*call, t), t);
    if (cli::scale_is_input(h.spec_)) inputs[py::str(kScale)] = input_array(call->scale, TensorName::x, true);
    const py::object out = h.adapter_(inputs, static_cast<double>(call->eps));
    if (py::isinstance<py::str>(out)) throw fuzz::KernelCallFault("exception", out.cast<std::string>());
    const py::dict outputs = out.cast<py::dict>();
    for (TensorName t : cli::output_tensors(h.spec_)) {
      const std::string name = cli::tensor_file_name(h.spec_, t);
      if (!outputs.contains(name)) throw py::value_error("no output '" + name + "'");
      copy_output(cli::call_tensor(*call, t), outputs[py::str(name)], name);
    }
    if (cli::scale_is_output(h.spec_)) {
      if (!outputs.contains(kScale)) throw py::value_error(std::string("no output '") + kScale + "'");
      copy_output(call->scale, outputs[py::str(kScale)], kScale);
    }
    for (const auto& [wanted, name, tensor] : {std::tuple{cli::has_scale_inv(h.spec_), cli::kScaleInvTensor, &call->scale_inv},
                                               std::tuple{cli::has_amax(h.spec_), cli::kAmaxTensor, &call->amax}}) {
      if (!wanted) continue;
      if (!outputs.contains(name)) throw py::value_error(std::string("no output '") + name + "'");
      copy_output(*tensor, outputs[py::str(name)], name);
    }
  }

  OpSpec spec_;
  py::object adapter_;
  InputRange domain_;
  Kernel row_{};
  fuzz::IsolationOptions isolation_;
  std::vector<std::pair<int64_t, int64_t>> shapes_;
  std::optional<rc::Gen<Problem>> gen_;
};

py::array_t<float> floats(const std::vector<float>& v, int64_t rows, int64_t cols) {
  if (v.empty()) return py::array_t<float>(std::vector<py::ssize_t>{0});
  std::vector<py::ssize_t> shape = {cols};
  if (rows > 0) shape = {rows, cols};
  py::array_t<float> out(shape);
  std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(float));
  return out;
}

std::vector<float> to_floats(const py::object& a, std::size_t size, const char* name) {
  if (a.is_none()) return {};
  const auto arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!arr) throw py::type_error(std::string(name) + ": not an array of numbers");
  if (static_cast<std::size_t>(arr.size()) != size)
    throw py::value_error(std::string(name) + ": " + std::to_string(arr.size()) + " values, expected " +
                          std::to_string(size));
  return std::vector<float>(arr.data(), arr.data() + arr.size());
}

}  // namespace
}  // namespace normcheck::python

using normcheck::Problem;
using namespace normcheck::python;

PYBIND11_MODULE(_normcheck, m) {
  m.doc() = "normcheck's C++ side: the harness row, generators, evaluate(), identify, problem files";
  m.attr("ACCURACY_SEED") = normcheck::fuzz::kAccuracySeed;  // accuracy()'s rows without a baseline or seed

  // A rounding policy (spec text) by name and the projects that ship it
  // ("x r rounded before the weight (Hugging Face LlamaRMSNorm, ...)"), or "".
  m.def(
      "policy_name",
      [](const std::string& policy) {
        const normcheck::SpecParse parsed = normcheck::parse_spec(policy);
        if (!parsed.spec) throw py::value_error("policy '" + policy + "': " + parsed.error);
        return std::string(normcheck::known_policy_name(*parsed.spec));
      },
      py::arg("policy"));

  m.def("seed", &seed_of, py::arg("seed"),
        "The seed of a random run: int, seed text, or None (NORMCHECK_SEED, else 20261127)");

  py::class_<Problem>(m, "Problem", "One problem: rows x cols inputs and eps, as evaluate() takes them")
      .def_readonly("rows", &Problem::rows)
      .def_readonly("cols", &Problem::cols)
      .def_readonly("eps", &Problem::eps)
      .def_readonly("scale", &Problem::scale)  // a static scale (quant=... scale=static); 0 for the others
      .def_property_readonly("x", [](const Problem& p) { return floats(p.x, p.rows, p.cols); })
      .def_property_readonly("residual", [](const Problem& p) { return floats(p.residual, p.rows, p.cols); })
      .def_property_readonly("gamma", [](const Problem& p) { return floats(p.gamma, 0, p.cols); })
      .def_property_readonly("beta", [](const Problem& p) { return floats(p.beta, 0, p.cols); })
      .def_property_readonly("dy", [](const Problem& p) { return floats(p.dy, p.rows, p.cols); })
      .def("__repr__", [](const Problem& p) {
        return "<normcheck.Problem " + std::to_string(p.rows) + "x" + std::to_string(p.cols) + " eps=" + hex(p.eps) + ">";
      });

  m.def(
      "make_problem",
      [](const py::object& x, const py::object& residual, const py::object& gamma, const py::object& beta, float eps,
         float scale, const py::object& dy) {
        const auto arr = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(x);
        if (!arr || arr.ndim() != 2 || arr.shape(0) < 1 || arr.shape(1) < 1)
          throw py::value_error("x: a 2-D array of rows x cols, both at least 1");
        Problem p;
        p.rows = arr.shape(0), p.cols = arr.shape(1), p.eps = eps;
        const auto n = static_cast<std::size_t>(p.rows * p.cols), d = static_cast<std::size_t>(p.cols);
        p.x = to_floats(x, n, "x");
        p.residual = to_floats(residual, n, "residual");
        p.gamma = to_floats(gamma, d, "gamma");
        p.beta = to_floats(beta, d, "beta");
        p.dy = to_floats(dy, n, "dy");  // a backward's upstream gradient, like x
        if (!(scale >= 0) || std::isinf(scale)) throw py::value_error("scale: a finite value > 0 (0: none)");
        p.scale = scale;
        return p;
      },
      py::arg("x"), py::arg("residual"), py::arg("gamma"), py::arg("beta"), py::arg("eps"), py::arg("scale") = 0.0f,
      py::arg("dy") = py::none());

  // A problem file (row_file.h): its spec (nc.spec, else its op and dtype's),
  // or None for a plain row file, and its problems.
  m.def("read_problem_file", [](const std::string& path) {
    normcheck::ProblemFile f;
    try {
      f = normcheck::read_problem_file(path);
    } catch (const normcheck::RowFileError& e) {
      throw py::value_error(e.what());
    }
    py::object spec = py::none();
    if (f.spec) spec = py::str(normcheck::to_text(*f.spec));
    else if (f.whole && f.op) spec = py::str(normcheck::to_text(normcheck::spec_of(*f.op, f.dtype)));
    return py::make_tuple(spec, f.problems);
  });

  py::class_<Outcome>(m, "Outcome", "One problem's verdict (run_case)")
      .def_property_readonly("label", [](const Outcome& o) { return o.result.label; })
      .def_property_readonly("detail", [](const Outcome& o) { return o.result.detail; })
      .def_property_readonly("input_class", [](const Outcome& o) { return o.input_class; })
      .def_property_readonly("declined", [](const Outcome& o) { return o.result.evaluation.declined; })
      .def_property_readonly("max_error_over_bound", [](const Outcome& o) { return o.result.evaluation.max_error_over_bound; })
      // the two ULP figures (normcheck/evaluate.h): of the row's scale and elementwise; NaN beside a NaN/inf
      .def_property_readonly("exact_math_ulp", [](const Outcome& o) {
        return normcheck::ulp_figure(o.result.evaluation, o.result.evaluation.exact_math_ulp);
      })
      .def_property_readonly("max_ulp", [](const Outcome& o) {
        return normcheck::ulp_figure(o.result.evaluation, o.result.evaluation.max_ulp);
      })
      .def_property_readonly("max_ulp_elementwise", [](const Outcome& o) {
        return normcheck::ulp_figure(o.result.evaluation, o.result.evaluation.max_ulp_elementwise);
      })
      .def_property_readonly("policy_exact_math_ulp",
                             [](const Outcome& o) { return o.result.evaluation.policy_exact_math_ulp; })
      .def_property_readonly("consistent_policies", [](const Outcome& o) { return o.result.evaluation.consistent_policies; })
      .def_property_readonly("consistent_casts", [](const Outcome& o) { return o.result.evaluation.consistent_casts; })
      .def_property_readonly("tight_rows", [](const Outcome& o) { return o.result.evaluation.tight_rows; })
      .def_property_readonly("max_error_over_tight", [](const Outcome& o) { return o.result.evaluation.max_error_over_tight; })
      // the element the finding is about: beyond the tight standard only, its worst there
      .def_property_readonly("worst", [](const Outcome& o) {
        const normcheck::Evaluation& ev = o.result.evaluation;
        const normcheck::Worst& w = normcheck::beyond_tight_only(ev) ? ev.tight_worst : ev.worst;
        py::dict d;
        d["output"] = w.output, d["row"] = w.row, d["col"] = w.col;
        d["computed"] = static_cast<double>(w.computed), d["exact"] = w.exact, d["allowed"] = w.allowed;
        d["computed_hex"] = hex(w.computed), d["exact_hex"] = hex(w.exact);
        return d;
      });

  py::class_<Harness>(m, "Harness", "A Python function as a kernel row of a norm's spec, forward or backward")
      .def(py::init<const std::string&, py::object, const std::string&>(), py::arg("spec"), py::arg("adapter"),
           py::arg("domain"))
      .def_property_readonly("spec", &Harness::spec_text)
      .def_property_readonly("domain", &Harness::domain_text)
      .def("declines", &Harness::declines_problem, py::arg("problem"))
      .def_property_readonly("backward", &Harness::backward)
      .def_property_readonly("inputs", [](const Harness& h) { return h.tensors(false); })
      .def_property_readonly("outputs", [](const Harness& h) { return h.tensors(true); })
      .def("draw", &Harness::draw, py::arg("seed"), py::arg("case"))
      .def("set_shapes", &Harness::set_shapes, py::arg("shapes"))
      .def("run", &Harness::run, py::arg("problem"))
      .def("shrink", &Harness::shrink, py::arg("problem"), py::arg("outcome"), py::arg("seconds"))
      .def("stored", &Harness::stored, py::arg("problem"))
      .def("problem_file", &Harness::problem_file, py::arg("problem"), py::arg("notes"))
      .def("accuracy", &Harness::accuracy, py::arg("name"), py::arg("baseline"), py::arg("update"),
           py::arg("worse_by"), py::arg("seed"),
           "The figures on every input class's realistic rows, held to or written to a baseline file")
      .def("report", &Harness::report, py::arg("out"), py::arg("name"), py::arg("problems"), py::arg("outcomes"),
           py::arg("seed"), py::arg("source"))
      .def(
          "identify",
          [](Harness& h, int64_t cases, uint64_t seed, int64_t max_d) {
            const normcheck::fuzz::Identification id = h.identify(cases, seed, max_d);
            py::list policies;
            for (const normcheck::fuzz::PolicyVerdict& v : id.policies) {
              py::dict p;
              p["policy"] = normcheck::to_text(v.policy), p["name"] = v.name, p["outside"] = v.outside;
              p["exact_math_ulp"] = v.exact_math_ulp, p["consistent"] = v.consistent();
              p["declared"] = v.policy == id.declared;
              policies.append(p);
            }
            py::dict d;
            d["problems"] = id.problems.judged, d["declined"] = id.problems.declined;
            d["declined_reason"] = id.problems.first_decline, d["exact_math_ulp"] = id.exact_math_ulp;
            d["fault"] = id.fault, d["policies"] = policies;
            py::list casts, splits;
            for (const normcheck::fuzz::CastVerdict& c : id.casts)
              casts.append(py::dict(py::arg("cast") = normcheck::to_text(c.cast), py::arg("consistent") = c.consistent()));
            for (const normcheck::fuzz::Split& split : id.splits)
              splits.append(py::dict(py::arg("other") = split.other, py::arg("tries") = split.tries,
                                     py::arg("found") = split.found, py::arg("problem") = split.problem));
            d["casts"] = casts, d["splits"] = splits;
            return d;
          },
          py::arg("cases"), py::arg("seed"), py::arg("max_d"));
}
