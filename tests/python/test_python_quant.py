"""Quantized specs in the Python module (docs/python.md, "Quantized outputs"):
vLLM-style RMSNorms that write int8 or fp8 codes, in numpy on float32
activations, and broken twins of them.

The correct functions compute what the spec declares (docs/ops.md, "Quantized
outputs"): y = (x r) gamma in float32, a per-token scale
s = fl32(max |y| / 127) (vLLM's rms_norm_dynamic_per_token_quant) or the
given static one, t = fl32(y fl32(1 / s)), and the code of t rounded to
nearest even and clamped. Every verdict is evaluate()'s; no tolerance is set
here. Random cases come from SEED (NORMCHECK_SEED, else normcheck's default).
"""

import warnings

import numpy as np
import pytest

import normcheck

SEED = normcheck._normcheck.seed(None)

# int8 has no NaN: the functions write 0 for a NaN t (nan_to_num, as cvt.rni.sat does) and say so
PER_TOKEN_INT8 = "rmsnorm fwd stats=none quant=int8 scale=token nan=clamp"  # returns y and the scale
STATIC_INT8 = "rmsnorm fwd stats=none quant=int8 scale=static nan=clamp"
STATIC_FP8 = "rmsnorm fwd y=f32 stats=none quant=e4m3 scale=static"
CASES = 101  # one of each generator size: d into the thousands, and each quantization edge family


def rms_norm(x, gamma, eps):
    with np.errstate(all="ignore"):
        r = np.float32(1) / np.sqrt(np.mean(x * x, axis=1, keepdims=True, dtype=np.float32) + np.float32(eps))
        return (x * r) * gamma


def int8_codes(t, round_=np.rint, qmin=-128):
    with np.errstate(invalid="ignore"):
        return np.clip(np.nan_to_num(round_(t)), qmin, 127).astype(np.int8)


def per_token_int8(x, gamma, eps, absmax_of=None, round_=np.rint):
    """vLLM's dynamic per-token int8 RMSNorm: returns the codes and the per-row scales."""
    y = rms_norm(x, gamma, eps)
    a = np.max(np.abs(y if absmax_of is None else absmax_of), axis=1, keepdims=True)
    s = (a / np.float32(127)).astype(np.float32)
    with np.errstate(all="ignore"):
        t = y * (np.float32(1) / s)
    return {"y": int8_codes(t, round_), "scale": s}


def vllm_per_token_int8(x, gamma, eps):
    return per_token_int8(x, gamma, eps)


def absmax_before_the_weight(x, gamma, eps):
    """Broken: the row's absolute maximum taken of x r, before gamma."""
    with np.errstate(all="ignore"):
        r = np.float32(1) / np.sqrt(np.mean(x * x, axis=1, keepdims=True, dtype=np.float32) + np.float32(eps))
        xr = x * r
    return per_token_int8(x, gamma, eps, absmax_of=xr)


def truncating_cast(x, gamma, eps):
    """Broken: t cast to int8 toward zero (a C cast) instead of to nearest."""
    return per_token_int8(x, gamma, eps, round_=np.trunc)


def static_int8(x, gamma, scale, eps, qmin=-128):
    with np.errstate(all="ignore"):
        return int8_codes(rms_norm(x, gamma, eps) * (np.float32(1) / scale[0]), qmin=qmin)


def static_int8_clamped_at_127(x, gamma, scale, eps):
    """Broken: clamped to [-127, 127] where the spec declares qmin=-128."""
    return static_int8(x, gamma, scale, eps, qmin=-127)


def judged(fn, spec, **kwargs):
    print(f"seed {SEED}: {fn.__name__} as {spec}")
    return normcheck.check(fn, spec, cases=CASES, seed=SEED, **kwargs)


def test_vllm_per_token_int8_passes():
    result = judged(vllm_per_token_int8, PER_TOKEN_INT8)
    assert result.passed, [c.worst_text() for c in result.findings][:3]
    judged_cases = [c for c in result.cases if not c.declined]
    assert len(judged_cases) == CASES


def test_a_scale_from_the_absmax_before_the_weight_is_a_quantization_finding():
    result = judged(absmax_before_the_weight, PER_TOKEN_INT8)
    assert result.findings, result.summary()  # 41 of the 101 cases of the default seed
    assert {c.label for c in result.findings} == {"quantization"}
    assert {c.worst["output"] for c in result.findings} == {"scale"}  # the scale the codes were cast by
    # the cases it passes are those whose weights leave the maximum where it was
    assert all(c.passed for c in result.cases if c.problem.gamma.size and np.all(c.problem.gamma == 1))


def test_a_truncating_int8_cast_is_a_quantization_finding():
    result = judged(truncating_cast, PER_TOKEN_INT8)
    assert result.findings, result.summary()  # 62 of the 101 cases of the default seed
    assert {c.label for c in result.findings} == {"quantization"}
    for c in result.findings:
        w = c.worst
        assert w["output"] == "y"
        assert abs(w["computed"]) < abs(w["exact"])  # toward zero: a code short of exact math's value


def test_a_static_scale_is_an_input_and_fp8_codes_are_bytes():
    seen = []

    def static_fp8(x, gamma, scale, eps):
        assert scale.dtype == np.float32 and scale.shape == (1,)
        seen.append(float(scale[0]))
        y = rms_norm(x, gamma, eps)
        with np.errstate(all="ignore"):
            t = np.clip(y * (np.float32(1) / scale[0]), -448, 448).astype(np.float64)
        return e4m3_bytes(t)

    result = judged(static_fp8, STATIC_FP8)
    assert result.passed, [c.worst_text() for c in result.findings][:3]
    # seen[0]: normcheck's first call, on its small problem (scale 1/16), before the cases
    assert seen[1:] == [c.problem.scale for c in result.cases] and all(s > 0 for s in seen)


def e4m3_bytes(t):
    """float64 t within [-448, 448] or NaN -> e4m3fn codes, to nearest even (the OCP layout: bias 7, 3
    mantissa bits; NaN S.1111.111)."""
    sign = np.signbit(t).astype(np.uint8) << 7
    a = np.nan_to_num(np.abs(t))
    e = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), -6.0)
    v = np.rint(a / np.exp2(e - 3)) * np.exp2(e - 3)
    normal = v >= 2.0 ** -6
    ev = np.floor(np.log2(np.where(normal, v, 1.0)))
    code = np.where(normal, (ev + 7) * 8 + (v / np.exp2(ev) - 1) * 8, v / 2.0 ** -9)
    return np.where(np.isnan(t), np.uint8(0x7F), code.astype(np.uint8)) | sign


# TransformerEngine's convention: the float32 y times the scale, scale_inv = fl32(1 / scale) and
# the tensor's amax written (docs/ops.md, "Quantized outputs")
TE_FP8 = "rmsnorm fwd y=f32 stats=none quant=e4m3 scale=static scale_apply=multiply amax"


def te_fp8(x, gamma, scale, eps, amax_of=np.max):
    y = rms_norm(x, gamma, eps)
    with np.errstate(all="ignore"):
        t = np.clip(y * scale[0], -448, 448).astype(np.float64)  # np.clip keeps a NaN
        amax = amax_of(np.abs(y))
    return {"y": e4m3_bytes(t), "scale_inv": np.array([np.float32(1) / scale[0]], np.float32),
            "amax": np.array([amax], np.float32)}


def test_transformer_engines_convention_passes():
    result = judged(te_fp8, TE_FP8)
    assert result.passed, [c.worst_text() for c in result.findings][:3]


def test_an_amax_that_skips_a_nan_is_a_nan_finding():
    """np.nanmax passes over the NaN y of a row with a non-finite x, as fmaxf does."""
    def nanmax_amax(x, gamma, scale, eps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # nanmax of a tensor of NaN alone
            return te_fp8(x, gamma, scale, eps, amax_of=np.nanmax)
    result = judged(nanmax_amax, TE_FP8)
    assert result.findings, result.summary()
    assert {c.label for c in result.findings} == {"nan"}
    assert {c.worst["output"] for c in result.findings} == {"amax"}


def test_a_static_int8_clamp_finding_saves_its_scale_and_replays(tmp_path):
    result = normcheck.fuzz(static_int8_clamped_at_127, STATIC_INT8, cases=CASES, seed=SEED, out_dir=tmp_path,
                            shrink_seconds=5, quiet=True)
    assert [f.label for f in result.findings] and {f.label for f in result.findings} == {"quantization"}
    finding = result.findings[0]
    assert finding.case.worst["computed"] == -127 and finding.case.worst["exact"] < -127.5
    text = open(finding.file).read()
    assert "# nc.spec " + STATIC_INT8 in text
    scale_lines = [line.split()[2] for line in text.splitlines() if line.startswith("# nc.scale ")]
    assert [float.fromhex(v) for v in scale_lines] == [finding.case.problem.scale]
    again = normcheck.replay(static_int8_clamped_at_127, finding.file)
    assert [c.label for c in again.cases] == ["quantization"]
    assert again.cases[0].problem.scale == finding.case.problem.scale
    assert normcheck.replay(static_int8, finding.file).passed


def test_given_problems_of_a_static_spec_need_their_scale():
    x = np.array([[1.0, -2.0, 4.0], [0.5, 3.0, -1.0]], dtype=np.float32)
    gamma = np.ones(3, dtype=np.float32)
    with pytest.raises(ValueError, match="static scale"):
        normcheck.check(static_int8, STATIC_INT8, problems=[{"x": x, "gamma": gamma}])
    # scale 2^-6: t = 64 y, within (-127, 127) here (96.8 and 103.8 the largest)
    given = [{"x": x, "gamma": gamma, "scale": 2.0 ** -6}]
    result = normcheck.check(static_int8, STATIC_INT8, problems=given)
    assert result.passed and result.cases[0].problem.scale == 2.0 ** -6 and not result.cases[0].declined
    # the same codes clamped to [-64, 64]: 97 and 104 are due, 64 is written
    result = normcheck.check(lambda x, gamma, scale, eps: np.clip(static_int8(x, gamma, scale, eps), -64, 64),
                             STATIC_INT8, problems=given)
    assert [c.label for c in result.cases] == ["quantization"] and result.cases[0].worst["computed"] == 64


def test_wrong_codes_or_scales_are_a_clear_error():
    def as_float(x, gamma, eps):
        out = vllm_per_token_int8(x, gamma, eps)
        return {"y": out["y"].astype(np.float32), "scale": out["scale"]}
    with pytest.raises(normcheck.OutputError, match="output 'y' is float32, the spec's int8 codes are int8"):
        normcheck.check(as_float, PER_TOKEN_INT8, cases=2, seed=SEED)

    def as_bytes(x, gamma, eps):
        out = vllm_per_token_int8(x, gamma, eps)
        return {"y": out["y"].view(np.uint8), "scale": out["scale"]}
    with pytest.raises(normcheck.OutputError, match="output 'y' is uint8"):
        normcheck.check(as_bytes, PER_TOKEN_INT8, cases=2, seed=SEED)

    with pytest.raises(normcheck.OutputError, match="the spec has"):
        normcheck.check(lambda x, gamma, eps: {"y": vllm_per_token_int8(x, gamma, eps)["y"]}, PER_TOKEN_INT8,
                        cases=2, seed=SEED)

    def flat_scale_of_two(x, gamma, eps):
        out = vllm_per_token_int8(x, gamma, eps)
        return {"y": out["y"], "scale": np.repeat(out["scale"], 2, axis=1)}
    with pytest.raises(normcheck.OutputError, match="output 'scale' has shape"):
        normcheck.check(flat_scale_of_two, PER_TOKEN_INT8, cases=2, seed=SEED)

    def signed_fp8(x, gamma, scale, eps):
        return np.zeros(x.shape, np.int8)
    with pytest.raises(normcheck.OutputError, match="e4m3 codes are uint8"):
        normcheck.check(signed_fp8, STATIC_FP8, cases=2, seed=SEED)


def test_bf16_activations_in_torch_per_token_int8_passes():
    """vLLM's configuration: bf16 x and gamma (torch tensors), y rounded to bf16
    and quantized per token, the codes a torch int8 tensor."""
    torch = pytest.importorskip("torch")

    def per_token(x, gamma, eps):
        h = x.float()
        y = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * gamma.float()).to(torch.bfloat16).float()
        s = y.abs().amax(-1, keepdim=True) / 127
        return {"y": torch.clamp(torch.round(y * (1 / s)), -128, 127).nan_to_num().to(torch.int8), "scale": s}

    result = judged(per_token, "rmsnorm fwd dtype=bf16 gamma=bf16 stats=none quant=int8 scale=token nan=clamp")
    assert result.passed, [c.worst_text() for c in result.findings][:3]



def test_identify_tells_the_ways_of_applying_a_scale_apart():
    """identify draws a problem on which y / s and y fl32(1 / s) give different
    codes (a row built so that y / s lands within a float ulp of a half
    integer), runs it, and keeps the one the codes follow: vLLM's bf16 per-token
    int8 RMSNorm (y fl32(1 / s)) and a twin that divides. A lowest code of -127
    or -128 never shows under a dynamic scale (|y / s| <= 127): identify says
    it cannot tell those apart. (With a float32 y the two ways are within the
    bound's allowance of each other: no problem splits them.)"""
    torch = pytest.importorskip("torch")
    spec = "rmsnorm fwd dtype=bf16 gamma=bf16 stats=none quant=int8 scale=token"

    def per_token(x, gamma, eps, divide=False):
        h = x.float()
        y = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * gamma.float()).to(torch.bfloat16).float()
        s = y.abs().amax(-1, keepdim=True) / 127
        t = y / s if divide else y * (1 / s)
        return {"y": torch.clamp(torch.round(t), -128, 127).nan_to_num().to(torch.int8), "scale": s}

    def dividing(x, gamma, eps):
        return per_token(x, gamma, eps, divide=True)

    correct = normcheck.identify(per_token, spec, cases=24, seed=SEED)
    assert [p.policy for p in correct.consistent if p.declared] == [spec]
    assert any("scale_apply=divide" in o for o in correct.told_apart), correct.splits
    assert any("qmin=-127" in o for o in correct.cannot_tell_apart), correct.splits
    broken = normcheck.identify(dividing, spec, cases=24, seed=SEED)
    assert not [p for p in broken.consistent if p.declared], broken.splits
    assert [c["cast"] for c in broken.casts if c["consistent"]] == [spec + " scale_apply=divide"], broken.casts
