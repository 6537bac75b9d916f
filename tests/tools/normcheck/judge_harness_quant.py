#!/usr/bin/python3
"""A harness for `normcheck judge` of a quantized RMSNorm, numpy alone (docs/judge.md).

    judge_harness_quant.py DIR [--ties-away | --clamp-127 | --amax-nanmax | --y-dtype DTYPE | --y-cols N]

For each case-NNN.inputs.safetensors of DIR, written by `normcheck gen` for
an RMSNorm spec with `quant=e4m3` or `quant=int8` and `scale=static` or
`scale=token` (vLLM's rms_norm_static_fp8_quant and
rms_norm_dynamic_per_token_quant), f32 or bf16 activations and gamma, it
computes in float32 r = 1 / sqrt(mean(x^2) + eps) and y = (x r) gamma, rounds
y to bf16 (to nearest even) where y's dtype is bf16, takes the scale s
(static: the inputs' `scale`; per token: fl32(max |y| / qmax), qmax 448 or
127), t = fl32(y fl32(1 / s)), and the code of t: e4m3fn rounded to nearest
even after a clamp to [-448, 448], or int8 rounded to nearest even and
clamped to [-128, 127]. A NaN t is e4m3's NaN code, and int8's 0 (nan_to_num, as
cvt.rni.sat does): an int8 spec declares it, `nan=clamp`, and the harness refuses one
that does not. Under `scale_apply=multiply` (TransformerEngine's fp8
convention, static scale) t = fl32(y s) and scale_inv = fl32(1 / s) is
written; with the word `amax`, amax = max |y| over the tensor (np.max: NaN
when a y is NaN). It writes y as the codes (U8 for fp8, I8 for int8),
rrms (F32), a per-token scale (F32, rows x 1), scale_inv and amax (F32 [1])
to case-NNN.outputs.safetensors.

The fp8 encoding here is this file's own (from the OCP definition: 4 exponent
bits of bias 7, 3 mantissa bits, subnormals below 2^-6, 0x7f NaN), not
normcheck's.

Broken twins, each a defect the judge must catch as `quantization`:
  --ties-away    int8 ties rounded away from zero (the spec declares even)
  --clamp-127    int8 clamped to [-127, 127] (the spec declares qmin=-128)
and one the judge must catch as `nan`:
  --amax-nanmax  the amax taken with np.nanmax, which passes over a NaN y
Bad files, which the judge must refuse (exit 2):
  --y-dtype D    y's codes written with the safetensors dtype D (e.g. F32)
  --y-cols N     y written with N columns of codes per row (a truncated y)
"""
import os
import sys

import numpy as np

# the safetensors files and the bf16 rounding of the judge's other numpy harness (this folder)
from judge_harness import read_safetensors, to_bf16_bits, write_safetensors


def e4m3_codes(t, saturate=True):
    """float32 t -> e4m3fn codes (uint8), to nearest even; past 448 clamped
    (saturate) or NaN (0x7f with t's sign bit)."""
    t = t.astype(np.float64)
    sign = np.signbit(t).astype(np.uint8) << 7
    a = np.abs(t)
    nan = np.isnan(a)
    a = np.where(nan, 0.0, a)
    if saturate:
        a = np.minimum(a, 448.0)
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    e = np.maximum(e, -6.0)                 # subnormals share 2^-6's spacing
    step = np.exp2(e - 3)                   # 3 mantissa bits
    v = np.rint(a / step) * step            # to nearest, ties to even (exact in double)
    overflow = v > 448.0
    normal = v >= 2.0 ** -6
    with np.errstate(divide="ignore"):
        ev = np.floor(np.log2(np.where(normal, v, 1.0)))
    normal_code = (ev + 7) * 8 + (v / np.exp2(ev) - 1) * 8
    code = np.where(normal, normal_code, v / 2.0 ** -9)
    code = np.where(nan | overflow, 0x7F, code)
    return code.astype(np.uint8) | sign


def int8_codes(t, ties_away=False, qmin=-128):
    with np.errstate(invalid="ignore"):
        q = np.trunc(t + np.copysign(np.float32(0.5), t)) if ties_away else np.rint(t)
        return np.clip(np.nan_to_num(q), qmin, 127).astype(np.int8)


def bf16_round(v):
    """float32 -> the nearest bf16 value (ties to even), as float32."""
    return (to_bf16_bits(v, False).astype(np.uint32) << 16).view(np.float32)


def run_case(path, mode, arg):
    t, meta = read_safetensors(path)
    spec = meta["normcheck.spec"].split()
    x, gamma = t["x"], t["gamma"]
    eps = np.float32(float.fromhex(meta["normcheck.eps"]))  # C99 hex float, exact
    rows, cols = x.shape
    words = dict(w.split("=", 1) for w in spec if "=" in w)
    bare = set(w for w in spec[2:] if "=" not in w)
    fp8 = words.get("quant") == "e4m3"
    multiply = words.get("scale_apply") == "multiply"
    if spec[:2] != ["rmsnorm", "fwd"] or words.get("quant") not in ("e4m3", "int8") or \
            words.get("scale") not in ("static", "token") or bare - {"amax"} or \
            set(words) - {"dtype", "gamma", "y", "quant", "scale", "nan", "scale_apply"} or \
            words.get("nan", "clamp") != "clamp" or (not fp8 and "nan" not in words) or \
            words.get("scale_apply", "multiply") != "multiply":
        raise ValueError(f"{path}: spec {' '.join(spec)} is not one this harness runs")
    y_bf16 = words.get("y", words.get("dtype", "f32")) == "bf16"
    qmax = np.float32(448 if fp8 else 127)
    with np.errstate(all="ignore"):  # rows with NaN, inf or overflow give what IEEE float32 gives
        r = np.float32(1) / np.sqrt(np.mean(x * x, axis=1, dtype=np.float32) + eps)
        y = (x * r[:, None]) * gamma[None, :]
        if y_bf16:
            y = bf16_round(y)
        outputs = []
        if words["scale"] == "static":
            s = t["scale"].astype(np.float32).reshape(1, 1)
        else:
            s = (np.max(np.abs(y), axis=1, keepdims=True) / qmax).astype(np.float32)
            outputs.append(("scale", "F32", s.shape, s.astype("<f4").tobytes()))
        q = y * s if multiply else y * (np.float32(1) / s)
        if multiply:
            outputs.append(("scale_inv", "F32", (1,), (np.float32(1) / s).astype("<f4").tobytes()))
        if "amax" in bare:
            amax = (np.nanmax if mode == "--amax-nanmax" else np.max)(np.abs(y))
            outputs.append(("amax", "F32", (1,), np.array([amax], "<f4").tobytes()))
    if fp8:
        y_out = ("y", "U8", e4m3_codes(q))
    else:
        y_out = ("y", "I8", int8_codes(q, ties_away=mode == "--ties-away", qmin=-127 if mode == "--clamp-127" else -128))
    name, dtype, codes = y_out
    if mode == "--y-dtype":
        dtype = arg  # the codes' values as F32, or their bytes as another 1-byte dtype
        codes = codes.astype(np.float32) if arg == "F32" else codes.view(np.int8 if arg == "I8" else np.uint8)
    if mode == "--y-cols":
        codes = np.ascontiguousarray(codes[:, :int(arg)])
    raw = codes.astype("<f4").tobytes() if dtype == "F32" else codes.tobytes()
    outputs = [(name, dtype, codes.shape, raw), ("rrms", "F32", r.shape, r.astype("<f4").tobytes())] + outputs
    write_safetensors(path.replace(".inputs.", ".outputs."), outputs)


def main():
    args = sys.argv[1:]
    modes = {"--ties-away": 0, "--clamp-127": 0, "--amax-nanmax": 0, "--y-dtype": 1, "--y-cols": 1}
    if not args or (len(args) > 1 and (args[1] not in modes or len(args) != 2 + modes[args[1]])):
        sys.exit(__doc__.split("\n\n")[1])
    mode = args[1] if len(args) > 1 else None
    arg = args[2] if len(args) > 2 else None
    for name in sorted(os.listdir(args[0])):
        if name.endswith(".inputs.safetensors"):
            run_case(os.path.join(args[0], name), mode, arg)


if __name__ == "__main__":
    main()
