"""Backward specs from Python (docs/python.md, "Backward"): a function
fn(dy, x, gamma, mean, rstd) -> (dx, dgamma, dbeta) judged as a version-2
backward kernel of the spec, and torch modules' autograd backward through
normcheck.torch.check_module_backward. Each check has its negative control:
a correct backward passes, its broken twin is caught; a finding replays from
Python and with `normcheck check`. The seeded problems are torch.Generator(0)'s
(printed by pytest on a failure as the test's source) or the default seed's."""
import os
import subprocess

import numpy as np
import pytest
import torch

import normcheck
import normcheck.torch

from hf_norms import LlamaRMSNorm

LAYERNORM_BWD = "layernorm bwd"
LLAMA_FWD = "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none"
# torch's autograd through LlamaRMSNorm: dy times the bf16 weight rounded to
# bf16 (dyw), x r rounded to bf16 (xhat), each row's dgamma term dy * xhat a
# bf16 product (dw_row), dgamma a bf16 tensor
LLAMA_BWD = "rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16,dyw:bf16,dw_row:bf16 stats=none"


def layernorm_bwd(dy, x, weight, mean, rstd, forget_mean_g=False):
    """LayerNorm's backward in float32 from the saved statistics."""
    with np.errstate(all="ignore"):
        xhat = (x - mean[:, None]) * rstd[:, None]
        g = dy * weight
        inner = g - xhat * (g * xhat).mean(1, keepdims=True, dtype=np.float32)
        if not forget_mean_g:
            inner = inner - g.mean(1, keepdims=True, dtype=np.float32)
        return (rstd[:, None] * inner).astype(np.float32), (dy * xhat).sum(0, dtype=np.float32), \
            dy.sum(0, dtype=np.float32)


def layernorm_bwd_without_mean_g(dy, x, weight, mean, rstd):
    return layernorm_bwd(dy, x, weight, mean, rstd, forget_mean_g=True)


def realistic(rows, d, dy_mean=0.0, seed=0, residual=False):
    """Rows as a model has them: x ~ N(1, 1), dy ~ N(dy_mean, 1), gamma ~ 1 + N(0, 0.01)."""
    g = torch.Generator().manual_seed(seed)
    p = dict(x=torch.randn(rows, d, generator=g) + 1, dy=torch.randn(rows, d, generator=g) + dy_mean,
             gamma=1 + 0.1 * torch.randn(d, generator=g), eps=1e-5)
    if residual:
        p["residual"] = torch.randn(rows, d, generator=g)
    return p


def cli(*args):
    return subprocess.run([os.environ["NORMCHECK_CLI"], *args], capture_output=True, text=True, timeout=300)


def test_a_backward_function_passes_and_its_twin_is_caught():
    result = normcheck.check(layernorm_bwd, LAYERNORM_BWD)
    assert result.passed, result.summary()
    assert len(result.cases) == 101 and not result.declined
    broken = normcheck.check(layernorm_bwd_without_mean_g, LAYERNORM_BWD)
    assert not broken.passed
    assert {c.worst["output"] for c in broken.findings} == {"dx"}


def test_the_inputs_are_those_a_kernel_of_the_spec_is_given():
    seen = {}

    def record(dy, x, gamma, rrms, eps):
        seen.update(dy=dy, x=x, gamma=gamma, rrms=rrms, eps=eps)
        return {"dx": dy, "dgamma": gamma}

    spec = "rmsnorm bwd dtype=bf16 gamma=bf16 rrms=bf16 dgamma=bf16"
    p = realistic(3, 16)
    normcheck.check(record, spec, problems=[p])
    assert seen["dy"].dtype == seen["x"].dtype == seen["rrms"].dtype == torch.bfloat16
    assert tuple(seen["rrms"].shape) == (3,)
    # rrms: the forward's exact statistic correctly rounded, then to bf16
    x = p["x"].to(torch.bfloat16).double()
    exact = 1 / torch.sqrt((x * x).mean(1) + np.float32(1e-5))
    assert torch.equal(seen["rrms"], exact.float().to(torch.bfloat16))


def test_a_backward_problem_needs_dy():
    with pytest.raises(ValueError, match="needs dy"):
        normcheck.check(layernorm_bwd, LAYERNORM_BWD, problems=[{"x": np.ones((2, 4), np.float32)}])


def test_a_finding_replays_from_python_and_with_the_command_line(tmp_path):
    fuzzed = normcheck.fuzz(layernorm_bwd_without_mean_g, LAYERNORM_BWD, cases=24, out_dir=tmp_path, quiet=True,
                            shrink_seconds=5)
    assert fuzzed.findings
    finding = fuzzed.findings[0]
    replayed = normcheck.replay(layernorm_bwd_without_mean_g, finding.file)
    assert [c.label for c in replayed.cases] == [finding.label]
    assert replayed.cases[0].worst == finding.case.worst
    assert normcheck.replay(layernorm_bwd, finding.file).passed  # the correct backward passes it
    # a correct table kernel of the spec passes the problem file: exit 0
    run = cli("check", "--input", finding.file, "--kernel", "layernorm_bwd.onednn")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "layernorm_bwd.onednn" in run.stdout


def test_torch_modules_forward_and_autograd_backward_pass_on_a_models_rows():
    ln = normcheck.torch.check_module_backward(torch.nn.LayerNorm(768), "layernorm fwd stats=none",
                                               "layernorm bwd stats=none", problems=[realistic(8, 768)])
    assert ln.passed, ln.summary()
    llama = normcheck.torch.check_module_backward(LlamaRMSNorm(4096).to(torch.bfloat16), LLAMA_FWD, LLAMA_BWD,
                                                  problems=[realistic(8, 4096, seed=s) for s in range(3)])
    assert llama.passed, llama.summary()
    # the same backward declared without torch's bf16 roundings is caught
    plain = normcheck.torch.check_module_backward(
        LlamaRMSNorm(4096).to(torch.bfloat16), LLAMA_FWD,
        "rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16 stats=none",
        problems=[realistic(8, 4096, seed=s) for s in range(3)])
    assert plain.forward.passed and not plain.backward.passed


class AddRMSNorm(torch.nn.Module):
    """A fused add + RMSNorm as flash-attention's and Liger-Kernel's modules
    are called: forward(x, residual) -> (y, residual_out)."""

    def __init__(self, d, eps=1e-6, forget_residual_gradient=False):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps
        self.forget = forget_residual_gradient

    def forward(self, x, residual):
        s = x + residual
        h = s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h, (s.detach() if self.forget else s)


def test_a_fused_add_module_passes_and_forgetting_dresidual_is_caught():
    problems = [realistic(8, 512, seed=s, residual=True) for s in range(3)]
    good = normcheck.torch.check_module_backward(AddRMSNorm(512), "rmsnorm fwd add stats=none",
                                                 "rmsnorm bwd add stats=none", problems=problems)
    assert good.passed, good.summary()
    bad = normcheck.torch.check_module_backward(AddRMSNorm(512, forget_residual_gradient=True),
                                                "rmsnorm fwd add stats=none", "rmsnorm bwd add stats=none",
                                                problems=problems)
    assert bad.forward.passed and not bad.backward.passed
    assert {c.worst["output"] for c in bad.backward.findings} <= {"dx", "dresidual"}


def test_torch_bf16_layernorm_backward_sums_dbeta_in_bf16_and_is_caught():
    # 4096 rows of dy ~ N(0.5, 1): the exact dbeta is about 2048; torch 1.13's
    # CPU kernel keeps the running sum in bf16, which stagnates near 1024
    module = torch.nn.LayerNorm(64).to(torch.bfloat16)
    result = normcheck.torch.check_module_backward(
        module, "layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 stats=none",
        "layernorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 dbeta=bf16 stats=none",
        problems=[realistic(4096, 64, dy_mean=0.5)])
    assert not result.backward.passed
    worst = result.backward.findings[0].worst
    assert worst["output"] in ("dbeta", "dgamma")
    assert abs(worst["computed"] - worst["exact"]) > 0.25 * abs(worst["exact"])
    # the float32 module over the same rows passes
    f32 = normcheck.torch.check_module_backward(torch.nn.LayerNorm(64), "layernorm fwd stats=none",
                                                "layernorm bwd stats=none",
                                                problems=[realistic(4096, 64, dy_mean=0.5)])
    assert f32.passed, f32.summary()


def test_a_modules_backward_finding_replays_on_the_module(tmp_path):
    module = AddRMSNorm(64, forget_residual_gradient=True)
    fuzzed = normcheck.torch.fuzz_module(module, "rmsnorm bwd add stats=none", shapes=[(4, 64)], cases=8,
                                         domain="finite", out_dir=tmp_path, quiet=True, shrink_seconds=5)
    assert fuzzed.findings
    finding = fuzzed.findings[0]
    replayed = normcheck.replay(module, finding.file)  # a module and a backward file: its autograd backward
    assert [c.label for c in replayed.cases] == [finding.label]
    assert replayed.cases[0].worst == finding.case.worst
    assert normcheck.replay(AddRMSNorm(64), finding.file).passed  # the module that keeps dresidual passes it
