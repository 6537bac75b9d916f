// `normcheck list`: the kernel table, with each kernel's op, its spec
// (op_spec.h), origin, algorithm,
// supported input range, whether it declines a typical shape, and its bound
// evaluated on two representative rows (a centred one and a shifted one, so the
// reader sees how the bound grows with |mean|/sigma).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.h"
#include "json_number.h"
#include "json_text.h"
#include "normcheck/float_format.h"
#include "normcheck/kernel.h"
#include "normcheck/evaluate.h"
#include "normcheck/op_spec.h"
#include "plugin_option.h"

namespace normcheck::cli {
namespace {

// Two rows of d = 768: kappa = mean|x|/sigma ~ 0.8 for a centred Gaussian row,
// ~1e4 for the same row shifted by 1e4 sigma.
struct ExampleCondition {
  const char* label;
  RowCondition condition;
};
const ExampleCondition kExamples[] = {
    {"centred", {.d = 768, .rows = 64, .kappa = 0.8, .max_kappa = 4.0, .eps_share = 1e-5}},
    {"shifted_1e4", {.d = 768, .rows = 64, .kappa = 1e4, .max_kappa = 1e4 + 4, .eps_share = 1e-5}},
};

const Shape kTypicalShape{.rows = 64, .cols = 768, .has_gamma = true, .has_beta = true};

// The coefficients that matter for the op, as (name, value) pairs.
nlohmann::json bound_json(Op op, const Bound& b) {
  switch (op) {
    case Op::layernorm_fwd:
    case Op::rmsnorm_fwd:
      return {{"xhat_abs", json_number(b.xhat_abs)}, {"xhat_rel", json_number(b.xhat_rel)},
              {"affine_rel", json_number(b.affine_rel)}, {"mean_rel", json_number(b.mean_rel)},
              {"stat_rel", json_number(b.stat_rel)}};
    case Op::layernorm_bwd:
    case Op::rmsnorm_bwd:
      return {{"dx_g", json_number(b.dx_g)}, {"dx_mean_g", json_number(b.dx_mean_g)},
              {"dx_proj_abs", json_number(b.dx_proj_abs)}, {"dx_proj_rel", json_number(b.dx_proj_rel)},
              {"dgamma_rel", json_number(b.dgamma_rel)}, {"dbeta_rel", json_number(b.dbeta_rel)}};
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd:
      return {{"xhat_abs", json_number(b.xhat_abs)}, {"xhat_rel", json_number(b.xhat_rel)},
              {"affine_rel", json_number(b.affine_rel)}, {"linear_rel", json_number(b.linear_rel)},
              {"fold_weight_rel", json_number(b.fold_weight_rel)},
              {"fold_bias_rel", json_number(b.fold_bias_rel)}, {"linear_abs", json_number(b.linear_abs)}};
  }
  return {};
}

// One number a reader can compare across kernels: the allowance for an element
// with |xhat| = 1 (forward) or the dx coefficient sum (backward), in units of u.
double headline_in_u(Op op, const Bound& b) {
  constexpr double u = kFloat32Format.unit_roundoff();
  switch (op) {
    case Op::layernorm_fwd:
    case Op::rmsnorm_fwd: return (b.xhat_abs + b.xhat_rel + b.affine_rel) / u;
    case Op::layernorm_bwd:
    case Op::rmsnorm_bwd: return (b.dx_g + b.dx_mean_g + b.dx_proj_abs + b.dx_proj_rel) / u;
    // z's allowance over T_i for one output with |W_ij|, |gamma_j|, |xhat_j| = 1,
    // beta = b = 0 (so T_i = S_i = d, c_i = 0), per unit of d and of u.
    case Op::layernorm_linear_fwd:
    case Op::rmsnorm_linear_fwd:
      return (b.xhat_abs + b.xhat_rel + b.affine_rel + b.linear_rel + b.fold_weight_rel) / u;
  }
  return NAN;
}

int run_list(bool json) {
  const auto table = kernel_table();
  if (json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const Kernel& k : table) {
      nlohmann::json bounds = nlohmann::json::array();
      for (const auto& example : kExamples) {
        const Bound b = k.bound(example.condition);
        bounds.push_back({{"row", example.label},
                          {"d", example.condition.d},
                          {"kappa", example.condition.kappa},
                          {"coefficients", bound_json(k.op, b)}});
      }
      kernels.push_back({{"name", k.name},
                         {"op", to_string(k.op)},
                         {"origin", to_string(k.origin)},
                         {"dtype", to_string(k.dtype)},
                         {"family", to_string(k.family)},
                         {"spec", to_text(spec_of(k))},
                         {"algorithm", k.algorithm},
                         {"range", {{"max_abs_x", k.range.max_abs_x},
                                    {"sqrt_d_scaled", k.range.sqrt_d_scaled},
                                    {"handles_nonfinite", k.range.handles_nonfinite},
                                    {"min_eps", k.range.min_eps},
                                    {"min_d", k.range.min_d},
                                    {"max_d", k.range.max_d},
                                    {"min_abs_x", k.range.min_abs_x},
                                    {"max_mean_over_sigma", json_number(k.range.max_mean_over_sigma)},
                                    {"min_sigma", k.range.min_sigma},
                                    {"text", domain_text(k.range)}}},
                         {"declines_64x768", declines(k, {kTypicalShape})},
                         {"not_judged", spec_not_judged(spec_of(k))},
                         {"ulp_promise", k.ulp_promise},
                         {"bound", bounds}});
    }
    // A plugin's row names its library's file, whose bytes may not be UTF-8.
    std::cout << json_safe(nlohmann::json{{"kernels", kernels}}).dump(2) << "\n";
    return kExitOk;
  }

  std::printf("%-34s %-20s %-11s %-5s %14s %14s  %s\n", "kernel", "op", "origin", "dtype",
              "bound@centred", "bound@shift1e4", "domain");
  for (const Kernel& k : table) {
    std::printf("%-34.*s %-20.*s %-11.*s %-5.*s %12.3gu %12.3gu  %s\n",
                static_cast<int>(k.name.size()), k.name.data(),
                static_cast<int>(to_string(k.op).size()), to_string(k.op).data(),
                static_cast<int>(to_string(k.origin).size()), to_string(k.origin).data(),
                static_cast<int>(to_string(k.dtype).size()), to_string(k.dtype).data(),
                headline_in_u(k.op, k.bound(kExamples[0].condition)),
                headline_in_u(k.op, k.bound(kExamples[1].condition)), domain_text(k.range).c_str());
    std::printf("    %.*s: %.*s\n", static_cast<int>(to_string(k.family).size()),
                to_string(k.family).data(), static_cast<int>(k.algorithm.size()),
                k.algorithm.data());
    std::printf("    spec: %s\n", to_text(spec_of(k)).c_str());
    if (const std::string why = spec_not_judged(spec_of(k)); !why.empty())
      std::printf("    not judged: %s; every case of it is declined\n", why.c_str());
    if (k.ulp_promise > 0)
      std::printf("    promises y within %g ULP of the exact result (gamma = 1, beta = 0)\n",
                  k.ulp_promise);
    if (const std::string reason = declines(k, {kTypicalShape}); !reason.empty())
      std::printf("    declines 64x768: %s\n", reason.c_str());
  }
  std::printf(
      "\nbound@...: the allowance for an element with |xhat| = 1, in units of u = 2^-24, on a\n"
      "d = 768 row with |mean|/sigma ~ 0 (centred) and 1e4 (shifted); see docs/accuracy.md.\n"
      "Rows of a norm followed by a Linear (z): the allowance over T_i = sum_j |W_ij| |gamma_j xhat_j|\n"
      "with |W_ij| = |gamma_j| = |xhat_j| = 1, beta = b = 0; see docs/folding.md.\n"
      "domain: the problems the kernel declares it supports (any: every one); it declines the rest,\n"
      "which are its limits, not findings; see docs/contributing.md.\n");
  return kExitOk;
}

}  // namespace

void add_list_command(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("list", "List the kernels in the table with their ops and bounds");
  auto json = std::make_shared<bool>(false);
  auto plugins = std::make_shared<PluginOptions>();
  sub->add_flag("--json", *json, "Print one JSON document");
  add_plugin_options(sub, *plugins, false);
  sub->callback([&action, json, plugins] {
    action = [json, plugins] {
      resolve_plugin_paths(*plugins);  // before any plugin's constructor can chdir()
      load_plugins(*plugins);
      return run_list(*json);
    };
  });
}

}  // namespace normcheck::cli
