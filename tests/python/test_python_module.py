"""The Python module normcheck end to end (docs/python.md): torch's LayerNorm,
Hugging Face's RMSNorm modules as transformers writes them (hf_norms.py), and
broken twins of each, judged, identified, fuzzed and replayed.

Every verdict is evaluate()'s, against the admissible range of the spec's
rounding policy under the plugins' default bound: no tolerance is set here.
Random cases come from SEED: NORMCHECK_SEED when set, else normcheck's default
(20261127), printed by every test that draws (pytest shows it on a failure).
"""

import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hf_norms as hf
import normcheck

SEED = normcheck._normcheck.seed(None)

LAYERNORM = "layernorm fwd stats=none"  # F.layer_norm returns y alone
LAYERNORM_BF16 = "layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 stats=none"
LLAMA = "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none"
GEMMA = "rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma stats=none"

# Cases per run: case c is drawn at the generator's size c mod 101, so 64
# cases reach d in the hundreds (d <= 2^(size/6)) in well under a second here.
CASES = 64


def layer_norm(x, gamma, beta, eps):
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


def layer_norm_float_inside(x, gamma, beta, eps):
    """LayerNorm of bf16 tensors computed in float32, rounded once at y."""
    return layer_norm(x.float(), gamma.float(), beta.float(), eps).to(x.dtype)


def judged(fn, spec, **kwargs):
    print(f"seed {SEED}: {getattr(fn, '__name__', fn)} as {spec}")
    return normcheck.check(fn, spec, cases=CASES, seed=SEED, **kwargs)


def labels(result):
    return sorted({c.label for c in result.findings})


# ---- correct functions pass, broken twins are caught ----

def realistic_rows():
    """Rows as a transformer's activations have them: d = 768 and 4096, 4 rows
    of c + N(0, 1) with c in [-10, 10], gamma 1 + 0.1 N(0, 1), beta 0.1 N(0, 1),
    eps 1e-5 (nn.LayerNorm's), drawn from SEED."""
    rng = np.random.default_rng(SEED)
    out = []
    for d in (768, 4096):
        x = rng.uniform(-10, 10, (4, 1)) + rng.standard_normal((4, d))
        out.append({"x": x, "gamma": 1 + 0.1 * rng.standard_normal(d), "beta": 0.1 * rng.standard_normal(d),
                    "eps": 1e-5})
    return out


@pytest.mark.parametrize("tensors", ["torch", "numpy"])
def test_layer_norm_float32_passes_on_realistic_rows(tensors):
    fn = layer_norm
    if tensors == "numpy":
        def fn(x, gamma, beta, eps):  # numpy arrays in, numpy out
            return layer_norm(torch.from_numpy(x), torch.from_numpy(gamma), torch.from_numpy(beta), eps).numpy()
    result = normcheck.check(fn, LAYERNORM, tensors=tensors, problems=realistic_rows())
    assert result.passed, [(c.index, c.label, c.worst_text()) for c in result.findings]
    assert [c.problem.cols for c in result.cases] == [768, 4096]


def test_layer_norm_float32_findings_are_where_its_algorithm_loses():
    """torch's float32 layer_norm (1.13, CPU) is within the bound of a two-pass
    float32 LayerNorm on the drawn cases except in two input classes (seeds 1
    to 8, 101 cases each, eps > 0): rows whose |mean|/sigma is 1e5 or more,
    where it cancels (2e16 times the bound on the row below), and rows whose
    squares are subnormal (up to 1.9 times the bound)."""
    result = judged(layer_norm, LAYERNORM, tensors="torch", domain="eps>=1e-12")
    assert {c.input_class for c in result.findings} <= {"mean_sigma_ge_1e5", "subnormal"}

    x = np.array([[float.fromhex(h) for h in ("0x1.279a72p+61", "0x1.279a74p+61", "0x1.279a74p+61")]])
    shifted = normcheck.check(layer_norm, LAYERNORM, tensors="torch", problems=[{"x": x, "eps": 1e-12}])
    assert labels(shifted) == ["accuracy"] and shifted.findings[0].max_error_over_bound > 1e6
    assert shifted.findings[0].input_class == "mean_sigma_ge_1e5"


def test_layer_norm_float32_at_eps_0_when_the_variance_underflows():
    """At eps = 0 on a row whose variance is below float's normal range (here
    about 2^-132), torch's float32 layer_norm (1.13, CPU) returns NaN where the
    exact y is finite (sqrt(2), -1/sqrt(2), -1/sqrt(2)): a `nan` finding, which
    normcheck's two-pass float32 LayerNorm does not have on this row."""
    x = np.array([[float.fromhex(h) for h in ("0x1.000002p-42", "0x1p-42", "0x1p-42")]], dtype=np.float32)
    result = normcheck.check(layer_norm, LAYERNORM, tensors="torch", problems=[{"x": x, "eps": 0.0}])
    assert labels(result) == ["nan"]
    # worst["exact"] is the middle of y's admissible range: within a float32 ulp of sqrt(2)
    assert result.findings[0].worst["exact"] == pytest.approx(2 ** 0.5, rel=2 ** -23)


def test_layer_norm_unbiased_variance_is_caught():
    result = judged(hf.layernorm_unbiased, LAYERNORM, tensors="torch")
    assert "accuracy" in labels(result) or "nan" in labels(result)


def test_layer_norm_bf16_float_inside_passes_with_one_rounding():
    result = judged(layer_norm_float_inside, LAYERNORM_BF16)
    assert result.passed, [(c.index, c.label, c.worst_text()) for c in result.findings]
    ident = normcheck.identify(layer_norm_float_inside, LAYERNORM_BF16, cases=24, seed=SEED)
    declared = [p for p in ident.policies if p.declared]
    assert declared and declared[0].consistent and "one rounding" in declared[0].name


def test_torch_bf16_layer_norm_on_cpu_is_flagged():
    """torch's CPU F.layer_norm on bf16 tensors (1.13) is off by about one bf16
    ulp beyond a LayerNorm rounded once at y (the float-inside one above
    passes on the same cases): it keeps intermediate values in bf16. No
    candidate rounding policy of the spec explains its outputs."""
    result = judged(layer_norm, LAYERNORM_BF16)
    assert "accuracy" in labels(result)
    ident = normcheck.identify(layer_norm, LAYERNORM_BF16, cases=24, seed=SEED)
    assert ident.consistent == []


def test_llama_passes_and_is_identified():
    fn = hf.as_fn(hf.LlamaRMSNorm)
    result = judged(fn, LLAMA)
    assert result.passed, [(c.index, c.label, c.worst_text()) for c in result.findings]
    ident = normcheck.identify(fn, LLAMA, cases=24, seed=SEED)
    assert [p.policy for p in ident.consistent] == [LLAMA]
    assert "LlamaRMSNorm" in ident.names[0]


def test_gemma_passes_and_is_identified():
    fn = hf.as_fn(hf.GemmaRMSNorm)
    result = judged(fn, GEMMA)
    assert result.passed, [(c.index, c.label, c.worst_text()) for c in result.findings]
    ident = normcheck.identify(fn, GEMMA, cases=24, seed=SEED)
    declared = [p for p in ident.consistent if p.declared]  # weight = 1 + gamma, one rounding at y
    assert declared and "Gemma" in declared[0].name


def test_the_format_of_one_plus_gamma_is_identified():
    """1 + gamma in float32 (Hugging Face's Gemma) and in bf16 (1 + weight on
    the bf16 tensor, then widened) are told apart: each is consistent with its
    own policy alone, none left that identify could not split."""

    def gemma_bf16_weight(x, weight, eps):
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + weight).float()).to(x.dtype)

    f32 = normcheck.identify(hf.as_fn(hf.GemmaRMSNorm), GEMMA, cases=24, seed=SEED)
    bf16 = normcheck.identify(gemma_bf16_weight, GEMMA, cases=24, seed=SEED)
    assert [p.policy for p in f32.consistent] == [GEMMA]
    assert [p.policy for p in bf16.consistent] == [GEMMA.replace("weight=1+gamma", "weight=1+gamma round=weight:bf16")]
    assert f32.cannot_tell_apart == [] and bf16.cannot_tell_apart == []


def test_llama_rounding_once_is_caught_and_named():
    fn = hf.as_fn(hf.LlamaRoundsOnce)
    result = judged(fn, LLAMA)
    assert "policy_mismatch" in labels(result)
    mismatch = next(c for c in result.findings if c.label == "policy_mismatch")
    assert "rmsnorm fwd dtype=bf16 gamma=bf16 stats=none" in mismatch.consistent_policies
    ident = normcheck.identify(fn, LLAMA, cases=24, seed=SEED)
    assert "rmsnorm fwd dtype=bf16 gamma=bf16 stats=none" in [p.policy for p in ident.consistent]
    assert LLAMA not in [p.policy for p in ident.consistent]


def test_llama_eps_outside_the_root_is_caught():
    result = judged(hf.as_fn(hf.LlamaEpsOutsideSqrt), LLAMA)
    assert "accuracy" in labels(result)


def test_gemma_weight_not_one_plus_is_caught():
    result = judged(hf.as_fn(hf.GemmaWeightNotOnePlus), GEMMA)
    assert "accuracy" in labels(result)


# ---- findings: shrunk, saved, replayed ----

def run_cli(*args):
    return subprocess.run([os.environ["NORMCHECK_CLI"], *args], capture_output=True, text=True, timeout=300)


def test_fuzz_finding_replays_in_python_and_with_normcheck_check(tmp_path):
    broken, good = hf.as_fn(hf.LlamaRoundsOnce), hf.as_fn(hf.LlamaRMSNorm)
    result = normcheck.fuzz(broken, LLAMA, cases=CASES, seed=SEED, out_dir=tmp_path, shrink_seconds=10)
    assert result.seed == SEED and result.cases == CASES
    finding = next(f for f in result.findings if f.label == "policy_mismatch")
    assert os.path.dirname(finding.file) == str(tmp_path)
    text = open(finding.file).read()
    assert "# nc.spec " + LLAMA in text and f"seed {SEED}" in text

    again = normcheck.replay(broken, finding.file)
    assert labels(again) == ["policy_mismatch"]
    assert again.cases[0].worst == finding.case.worst  # the same output, element and values
    assert normcheck.replay(good, finding.file).passed

    # The C twins of the two modules (examples/plugin), declared with
    # LlamaRMSNorm's spec (which has rrms): the problem file names them.
    on_broken = run_cli("check", "--input", finding.file, "--plugin", os.environ["NORMCHECK_PLUGIN_BROKEN"],
                        "--kernel", "broken.llama_rounds_once")
    assert on_broken.returncode == 1, on_broken.stdout + on_broken.stderr
    on_good = run_cli("check", "--input", finding.file, "--plugin", os.environ["NORMCHECK_PLUGIN_GOOD"],
                      "--kernel", "rmsnorm.llama")
    assert on_good.returncode == 0, on_good.stdout + on_good.stderr


def test_fuzz_without_a_finding_saves_nothing(tmp_path):
    result = normcheck.fuzz(hf.as_fn(hf.GemmaRMSNorm), GEMMA, cases=32, seed=SEED, out_dir=tmp_path / "f",
                            quiet=True)
    assert result.passed and result.cases == 32 and not (tmp_path / "f").exists()


def test_fuzz_stops_at_its_time_budget(tmp_path):
    result = normcheck.fuzz(hf.as_fn(hf.GemmaRMSNorm), GEMMA, seconds=1, seed=SEED, out_dir=tmp_path, quiet=True)
    assert result.cases >= 1 and result.seconds < 30


# ---- the pytest helper ----

def test_assert_within_bound_message_names_the_element_and_the_replay(tmp_path):
    with pytest.raises(AssertionError) as raised:
        normcheck.assert_within_bound(hf.as_fn(hf.GemmaWeightNotOnePlus), GEMMA, cases=CASES, seed=SEED,
                                      out_dir=tmp_path)
    message = str(raised.value)
    assert "GemmaWeightNotOnePlus breaks " + GEMMA in message
    assert "accuracy in input class " in message and "worst: y[row " in message and ", col " in message
    assert "exact " in message and "(0x" in message
    assert "allowed error" in message
    assert f"seed={SEED}" in message
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and f"normcheck.replay(fn, '{files[0]}')" in message
    assert f"normcheck check --input {files[0]}" in message


def test_assert_within_bound_passes_a_correct_function():
    result = normcheck.assert_within_bound(hf.as_fn(hf.LlamaRMSNorm), LLAMA, cases=CASES, seed=SEED)
    assert result.passed


def test_the_fixture(normcheck_check):
    normcheck_check(hf.as_fn(hf.GemmaRMSNorm), GEMMA, cases=16, seed=SEED)


# ---- a function that raises, returns garbage, bad arguments ----

def test_fn_that_raises_is_an_exception_finding(tmp_path):
    def raises_on_wide_rows(x, gamma, eps):
        if x.shape[-1] > 8:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return hf.as_fn(hf.LlamaRMSNorm)(x, gamma, eps)

    result = judged(raises_on_wide_rows, LLAMA)
    assert labels(result) == ["exception"]
    assert "RuntimeError: CUDA error" in result.findings[0].detail
    fuzzed = normcheck.fuzz(raises_on_wide_rows, LLAMA, cases=CASES, seed=SEED, out_dir=tmp_path, quiet=True,
                            shrink_seconds=10)
    finding = next(f for f in fuzzed.findings if f.label == "exception")
    assert finding.case.problem.cols == 9  # shrunk to the narrowest row that still raises
    assert labels(normcheck.replay(raises_on_wide_rows, finding.file)) == ["exception"]


# ---- reports: a Python function as a kernel row ----

def test_a_report_has_the_function_as_a_kernel_row(tmp_path):
    import json
    broken = judged(hf.as_fn(hf.LlamaRoundsOnce), LLAMA)
    html = broken.report(tmp_path / "broken", name="python.llama_rounds_once")
    assert html == str(tmp_path / "broken" / "report.html")
    for f in ("report.html", "report.md", "results.json", "junit.xml"):
        assert (tmp_path / "broken" / f).is_file(), f
    results = json.loads((tmp_path / "broken" / "results.json").read_text())
    row = next(k for k in results["kernels"] if k["name"] == "python.llama_rounds_once")
    assert row["grade"] != "trusted"
    # each finding's problem file is in findings/ and replays on the C twin
    # of the module (examples/plugin), as fuzz's files do
    files = sorted((tmp_path / "broken" / "findings").iterdir())
    assert len(files) == len(broken.findings) > 0
    replay = run_cli("check", "--input", str(files[0]), "--plugin", os.environ["NORMCHECK_PLUGIN_BROKEN"],
                     "--kernel", "broken.llama_rounds_once")
    assert replay.returncode == 1, replay.stdout + replay.stderr

    good = judged(hf.as_fn(hf.LlamaRMSNorm), LLAMA)
    good.report(tmp_path / "good")
    results = json.loads((tmp_path / "good" / "results.json").read_text())
    row = next(k for k in results["kernels"] if k["name"].startswith("python."))
    assert row["grade"] == "trusted"
    assert not (tmp_path / "good" / "findings").exists() or not any((tmp_path / "good" / "findings").iterdir())
    with pytest.raises(ValueError, match="a kernel's name"):
        good.report(tmp_path / "bad", name="Not A Name")


def test_wrong_outputs_are_a_clear_error():
    def f32_out(x, gamma, eps):
        return hf.as_fn(hf.LlamaRMSNorm)(x, gamma, eps).float()
    with pytest.raises(normcheck.OutputError, match="output 'y' is torch.float32, the spec says bf16"):
        normcheck.check(f32_out, LLAMA, cases=2, seed=SEED)

    def transposed(x, gamma, beta, eps):
        return layer_norm(x, gamma, beta, eps).T.contiguous()
    with pytest.raises(normcheck.OutputError, match="shape"):
        normcheck.check(transposed, LAYERNORM, tensors="torch", problems=[{"x": np.ones((2, 3))}])

    with pytest.raises(normcheck.OutputError, match="the spec has"):
        normcheck.check(lambda x, gamma, beta, eps: (x, x), LAYERNORM, cases=1, seed=SEED)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="rstd"):
        normcheck.check(layer_norm, "rmsnorm fwd rstd=bf16", cases=1)
    with pytest.raises(ValueError, match="Linear"):
        normcheck.check(layer_norm, "layernorm fwd linear", cases=1)
    # a forward function under a backward spec: its signature lacks the backward's inputs
    with pytest.raises(normcheck.UsageError, match=r"no parameter for dy \(dy or grad_output\)"):
        normcheck.check(layer_norm, "layernorm bwd", cases=1)
    with pytest.raises(ValueError, match="bad seed"):
        normcheck.check(layer_norm, LAYERNORM, cases=1, seed=-1)
    with pytest.raises(ValueError, match="numpy has no type"):
        normcheck.check(layer_norm, LLAMA, cases=1, tensors="numpy")
    with pytest.raises(TypeError):
        normcheck.check("not a function", LAYERNORM, cases=1)


def test_given_problems_and_their_statistics():
    """A spec with statistics: fn returns (y, mean, rstd), rstd as [rows, 1]."""
    def with_stats(x, gamma, beta, eps):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        return {"y": (x - mean) * rstd * gamma + beta, "mean": mean[:, 0], "rstd": rstd}

    x = np.array([[1.0, 2.0, 4.0], [1e4, 1e4 + 1, 1e4 + 3]], dtype=np.float32)
    result = normcheck.check(with_stats, "layernorm fwd", tensors="torch",
                             problems=[{"x": x, "gamma": np.ones(3), "beta": np.zeros(3), "eps": 1e-5}])
    assert result.passed and result.seed is None and result.cases[0].problem.rows == 2


def test_outputs_as_a_device_kernel_returns_them():
    """What a GPU function returns: a tensor on its device that needs grad and
    is not contiguous; normcheck detaches it and copies it to the CPU. (The
    tests have no GPU: the device is the CPU.)"""
    device = "cpu"

    def on_device(x, gamma, eps):
        m = hf.LlamaRMSNorm(x.shape[-1], eps=eps).to(device)
        m.weight = torch.nn.Parameter(gamma.to(device))
        y = m(x.to(device))
        assert y.requires_grad
        return y.t().contiguous().t()  # a transposed view: not contiguous

    result = judged(on_device, LLAMA)
    assert result.passed, [(c.index, c.label, c.worst_text()) for c in result.findings]
