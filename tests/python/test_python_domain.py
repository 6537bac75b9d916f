"""The realistic domain in Python (docs/plugins.md, "The realistic preset";
docs/python.md): domain="realistic" declines a problem with a row outside it,
naming the row and the term; drawn cases stay inside it (none declined);
torch's float32 LayerNorm and Hugging Face's RMSNorm pass inside it, torch
1.13's CPU bf16 LayerNorm does not (pinned, not hidden), and a broken
function is still caught inside it.

Every verdict is evaluate()'s (no tolerance here). Random cases come from
SEED: NORMCHECK_SEED when set, else normcheck's default.
"""

import json
import os
import re
import struct
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hf_norms as hf
import normcheck
import normcheck.torch
from door_specs import LAYERNORM, LAYERNORM_BF16, LLAMA, SEED

# the preset's terms, with the |x| limit of a plugin's default domain it leaves as it is
PRESET = "eps>=1e-12 |x|<=2^62/sqrt(d) finite |x|>=2^-126 |mean|/sigma<=10000 sigma>=2^-63"


def labels(result):
    return sorted({c.label for c in result.findings})


def rows(d, offset, sigma, n=2, seed=0):
    """n rows of offset + sigma N(0, 1), eps 1e-5."""
    rng = np.random.default_rng(seed)
    return {"x": (offset + sigma * rng.standard_normal((n, d))).astype(np.float32), "eps": 1e-5}


def float_inside_bf16(x, weight, bias, eps):
    """A LayerNorm of bf16 tensors computed in float32, rounded once at y."""
    return F.layer_norm(x.float(), (x.shape[-1],), weight.float(), bias.float(), eps).to(x.dtype)


def test_the_preset_is_its_terms():
    result = normcheck.check(F.layer_norm, LAYERNORM, problems=[rows(64, 0.0, 1.0)], domain="realistic")
    assert result.domain == PRESET
    assert normcheck.check(F.layer_norm, LAYERNORM, problems=[rows(64, 0.0, 1.0)],
                           domain="realistic |mean|/sigma<=100").domain == PRESET.replace("10000", "100")
    with pytest.raises(ValueError, match="'realist'"):
        normcheck.check(F.layer_norm, LAYERNORM, cases=1, domain="realist")


def test_a_row_outside_is_declined_with_the_row_and_the_term():
    """torch's float32 layer_norm's limits (its findings in the default
    domain, test_python_module.py) lie outside the preset: such a problem is
    declined there, not judged, and the reason names the row and the term."""
    good, ill = rows(64, 0.0, 1.0), rows(64, 1e5, 1.0)
    tiny = rows(64, 0.0, 2.0**-70)   # sigma^2 below FLT_MIN: the `subnormal` class
    ill["x"] = np.concatenate([good["x"], ill["x"]])  # rows 0, 1 inside, rows 2, 3 not
    result = normcheck.check(F.layer_norm, LAYERNORM, problems=[good, ill, tiny], domain="realistic")
    assert [c.declined == "" for c in result.cases] == [True, False, False], result.summary()
    assert re.fullmatch(r"row 2: \|mean\|/sigma = 1\.\de\+05 is outside the kernel's declared domain "
                        r"\|mean\|/sigma<=10000", result.cases[1].declined), result.cases[1].declined
    assert result.cases[2].declined.startswith("row 0: sigma = ") and "sigma>=2^-63" in result.cases[2].declined
    assert "|mean|/sigma<=10000 (1)" in result.summary() and "sigma>=2^-63 (1)" in result.summary()
    # an RMSNorm row subtracts no mean: |mean|/sigma does not bind it, its rms does
    rms = normcheck.check(hf.as_fn(hf.LlamaRMSNorm), LLAMA, problems=[rows(64, 1e5, 1.0)], domain="realistic")
    assert rms.judged == 1 and rms.passed, rms.summary()
    # a subnormal x is outside |x|>=2^-126; a zero is inside
    x = rows(64, 0.0, 1.0)
    x["x"][0, 0], x["x"][1, 0] = 0.0, 2.0**-130
    sub = normcheck.check(F.layer_norm, LAYERNORM, problems=[x], domain="realistic")
    assert "|x|>=2^-126 (a nonzero x)" in sub.cases[0].declined


def test_drawn_cases_stay_inside_and_torch_float32_layer_norm_passes():
    """The generator constructs rows inside the preset, so no drawn case is
    declined; torch's float32 F.layer_norm passes every one. (Its findings in
    the default domain are in the classes mean_sigma_ge_1e5 and subnormal:
    test_python_module.py and test_python_door.py.)"""
    result = normcheck.check(F.layer_norm, LAYERNORM, cases=48, seed=SEED, domain="realistic")
    assert result.declined_count == 0 and result.passed, result.summary()
    at_shapes = normcheck.check(F.layer_norm, LAYERNORM, shapes=[(8, 768), (3, 768)], cases=24, seed=SEED,
                                domain="realistic")
    assert at_shapes.declined_count == 0 and at_shapes.passed, at_shapes.summary()


def test_torch_float32_layer_norm_outside_the_preset_is_limits():
    """wide_range=True: drawn in the default domain, torch's float32
    F.layer_norm has no finding; what it does outside the preset are its
    limits, each with the term it lies beyond. They are exactly its findings
    on the same cases in the default domain (so it is trusted inside the
    preset). Seed 20261127: its 101 cases have such rows (docs/python.md)."""
    wide = normcheck.check(F.layer_norm, LAYERNORM, cases=101, seed=20261127, domain="realistic", wide_range=True)
    assert wide.passed and not wide.findings and wide.limits, wide.summary()
    assert wide.domain == PRESET
    assert all("outside the kernel's declared domain" in c.outside for c in wide.limits)
    assert "a limit, not a finding: " in wide.limits[0].message()
    default = normcheck.check(F.layer_norm, LAYERNORM, cases=101, seed=20261127)
    assert [c.index for c in default.findings] == [c.index for c in wide.limits], default.summary()
    # negative control: a broken function's findings inside the preset stay findings
    broken = normcheck.check(hf.layernorm_unbiased, LAYERNORM, cases=24, seed=SEED, domain="realistic",
                             wide_range=True)
    assert not broken.passed and any(not c.outside for c in broken.findings), broken.summary()


def test_modules_inside_the_preset_at_user_shapes():
    ln = torch.nn.LayerNorm(768)
    result = normcheck.torch.check_module(ln, LAYERNORM, shapes=[(8, 768), (3, 768)], cases=24, seed=SEED,
                                          domain="realistic")
    assert result.declined_count == 0 and result.passed, result.summary()
    llama = hf.LlamaRMSNorm(4096).to(torch.bfloat16)
    result = normcheck.torch.check_module(llama, LLAMA, shapes=[(8, 4096), (3, 4096)], cases=12, seed=SEED,
                                          domain="realistic")
    assert result.declined_count == 0 and result.passed, result.summary()


def test_torch_bf16_layer_norm_is_flagged_inside_the_preset():
    """torch 1.13's CPU LayerNorm on bf16 tensors keeps intermediate values in
    bf16 (test_python_module.py): inside the preset too it is outside the
    bound of a LayerNorm rounded once at y, so it is flagged there, with
    accuracy findings on well-conditioned rows. The same LayerNorm computed
    in float32 and rounded once passes the same cases."""
    ln = torch.nn.LayerNorm(768).to(torch.bfloat16)
    result = normcheck.torch.check_module(ln, LAYERNORM_BF16, shapes=[(8, 768)], cases=12, seed=SEED,
                                          domain="realistic")
    assert result.declined_count == 0 and labels(result) == ["accuracy"], result.summary()

    same = normcheck.check(float_inside_bf16, LAYERNORM_BF16, shapes=[(8, 768)], cases=12, seed=SEED, domain="realistic")
    assert same.passed, same.summary()


def test_torch_bf16_layer_norm_errs_with_the_rows_conditioning():
    """docs/python.md's rows: 4 rows of c + N(0, 1) at d = 768, eps 1e-5, unit
    gamma. Each c (|mean|/sigma of a model's activations) is inside the
    preset and torch 1.13's CPU bf16 LayerNorm is flagged on each, while the
    float-inside LayerNorm passes them; its error grows with c (the float64
    LayerNorm of the same bf16 inputs is the yardstick; the docs' figures)."""
    torch.manual_seed(0)
    ln = torch.nn.LayerNorm(768).to(torch.bfloat16)
    errors = []
    for c in (0, 10, 100, 300):
        x = (c + torch.randn(4, 768)).to(torch.bfloat16)
        flagged = normcheck.torch.check_module(ln, LAYERNORM_BF16, problems=[{"x": x, "eps": 1e-5}],
                                               domain="realistic")
        assert flagged.judged == 1 and labels(flagged) == ["accuracy"], flagged.summary()
        one_rounding = normcheck.check(float_inside_bf16, LAYERNORM_BF16, problems=[{"x": x, "eps": 1e-5}],
                                       domain="realistic")
        assert one_rounding.passed, one_rounding.summary()
        xd = x.double()
        exact = (xd - xd.mean(-1, keepdim=True)) / torch.sqrt(xd.var(-1, unbiased=False, keepdim=True) + 1e-5)
        with torch.no_grad():
            errors.append((ln(x).double() - exact).abs().max().item())
    assert [round(e, 2) for e in errors] == [0.02, 0.12, 0.44, 1.0], errors


def test_a_broken_function_is_still_caught_inside_the_preset():
    broken = normcheck.check(hf.as_fn(hf.LlamaRoundsOnce), LLAMA, cases=24, seed=SEED, domain="realistic")
    assert "policy_mismatch" in labels(broken), broken.summary()
    unbiased = normcheck.check(hf.layernorm_unbiased, LAYERNORM, cases=24, seed=SEED, domain="realistic")
    assert "accuracy" in labels(unbiased), unbiased.summary()


def read_f32(path, name):
    """Tensor `name` (float32) of a safetensors file, as a numpy array."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        begin, end = header[name]["data_offsets"]
        assert header[name]["dtype"] == "F32"
        f.seek(8 + n + begin)
        return np.frombuffer(f.read(end - begin), dtype=np.float32).reshape(header[name]["shape"])


def test_gen_draws_inside_the_preset(tmp_path):
    """`normcheck gen --domain realistic`: every row of every case inside the
    preset (checked here in float64 from the files, which is well within the
    terms' margins for these draws); a term it cannot read exits 2 quoting it."""
    out = subprocess.run([os.environ["NORMCHECK_CLI"], "gen", "--spec", LAYERNORM, "--out", str(tmp_path / "cases"),
                          "--cases", "40", "--seed", str(SEED), "--domain", "realistic"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "cases").glob("case-*.inputs.safetensors"))
    assert len(files) == 40
    for path in files:
        x = read_f32(path, "x").astype(np.float64)
        sigma = x.std(axis=-1)
        assert (sigma >= 2.0**-63).all() and (np.abs(x.mean(axis=-1)) <= 1e4 * sigma).all(), path
        assert not ((x != 0) & (np.abs(x) < 2.0**-126)).any() and np.isfinite(x).all(), path
    bad = subprocess.run([os.environ["NORMCHECK_CLI"], "gen", "--spec", LAYERNORM, "--out", str(tmp_path / "bad"),
                          "--domain", "realistic sigma>=0"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "'sigma>=0'" in bad.stderr, bad.stderr
