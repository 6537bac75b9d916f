#!/usr/bin/python3
"""A harness of backward specs for `normcheck judge`, in Python with numpy alone
(docs/judge.md, "Backward specs").

    judge_harness_bwd.py DIR [--broken forgot_one_plus_gamma | --broken dgamma_bf16_sum]

For each case-NNN.inputs.safetensors of DIR, written by `normcheck gen` for a
LayerNorm or RMSNorm backward (weight gamma or 1+gamma, `add`, statistics and
dgamma/dbeta in f32 or bf16), it computes in float32 from the saved statistics

    xhat = (x - mean) rstd            RMSNorm: x rrms; from=y: (y - beta) / w
    g    = w dy,  w = gamma or 1 + gamma
    dx   = rstd (g - mean(g) - xhat mean(g xhat)) (+ dresidual)      RMSNorm: no mean(g)
    dgamma = sum over rows of dy xhat,  dbeta = sum over rows of dy

and writes dx (and dresidual, the same gradient) in dy's format, dgamma and
dbeta in theirs (the spec's words dgamma=, dbeta=, residual_out=), rounded to
nearest even. Its broken twins: forgot_one_plus_gamma multiplies dy by gamma
where the spec says 1 + gamma; dgamma_bf16_sum keeps the running sums of
dgamma and dbeta in bf16 over the rows (torch 1.13's CPU bf16 LayerNorm
backward does), which stagnate once their spacing exceeds the terms.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from judge_harness import read_safetensors, to_bf16_bits, write_safetensors  # noqa: E402

BROKEN = ("forgot_one_plus_gamma", "dgamma_bf16_sum")


def bf16(v):
    """float32 values rounded to bf16 (to nearest even), as float32."""
    return (to_bf16_bits(np.asarray(v, np.float32), False).astype(np.uint32) << 16).view(np.float32)


def format_of(words, tensor, default):
    """The format the spec gives `tensor` (its own word, else `default`)."""
    for w in words:
        if w.startswith(tensor + "="):
            return w.split("=", 1)[1]
    return default


def encoded(v, fmt):
    """(safetensors dtype, bytes) of float32 values in format fmt."""
    if fmt == "bf16":
        return "BF16", to_bf16_bits(v, False).astype("<u2").tobytes()
    if fmt == "f32":
        return "F32", np.asarray(v, np.float32).astype("<f4").tobytes()
    raise ValueError(f"format {fmt} is not handled here")


def run_case(path, broken):
    t, meta = read_safetensors(path)
    words = meta["normcheck.spec"].split()
    layer = words[0] == "layernorm"
    dtype = format_of(words, "dtype", "f32")
    dy = t["dy"]
    rows, cols = dy.shape
    gamma = t.get("gamma", np.ones(cols, np.float32))
    one_plus = "weight=1+gamma" in words
    w = (np.float32(1) + gamma) if one_plus and broken != "forgot_one_plus_gamma" else gamma
    stat = t["rstd" if layer else "rrms"][:, None]  # a from=y LayerNorm reads rstd alone
    with np.errstate(all="ignore"):  # rows with NaN, inf or overflow give what IEEE float32 gives
        if "y" in t:  # from=y: the forward's output and beta in place of x and the mean
            xhat = (t["y"] - t.get("beta", np.zeros(cols, np.float32))[None, :]) / w[None, :]
        else:
            xhat = ((t["x"] - t["mean"][:, None]) if layer else t["x"]) * stat
        g = dy * w[None, :]
        proj = np.mean(g * xhat, axis=1, dtype=np.float32, keepdims=True)
        inner = g - xhat * proj
        if layer:
            inner = inner - np.mean(g, axis=1, dtype=np.float32, keepdims=True)
        dx = stat * inner
        if "dresidual" in t:
            dx = dx + t["dresidual"]
        terms, dterms = dy * xhat, dy
        if broken == "dgamma_bf16_sum":
            dgamma, dbeta = np.zeros(cols, np.float32), np.zeros(cols, np.float32)
            for r in range(rows):
                dgamma, dbeta = bf16(dgamma + terms[r]), bf16(dbeta + dterms[r])
        else:
            dgamma, dbeta = np.sum(terms, axis=0, dtype=np.float32), np.sum(dterms, axis=0, dtype=np.float32)
    out = [("dx",) + encoded(dx, dtype) + ((rows, cols),)]
    if "gamma" in t:
        out.append(("dgamma",) + encoded(dgamma, format_of(words, "dgamma", "f32")) + ((cols,),))
    if layer and "bias=none" not in words:
        out.append(("dbeta",) + encoded(dbeta, format_of(words, "dbeta", "f32")) + ((cols,),))
    if "dresidual" in t:
        out.append(("dresidual",) + encoded(dx, format_of(words, "residual_out", dtype)) + ((rows, cols),))
    write_safetensors(path.replace(".inputs.", ".outputs."),
                      [(name, kind, shape, raw) for name, kind, raw, shape in out])


def main():
    args = sys.argv[1:]
    broken = None
    if len(args) == 3 and args[1] == "--broken" and args[2] in BROKEN:
        broken = args[2]
    elif len(args) != 1:
        sys.exit("usage: judge_harness_bwd.py DIR [--broken " + " | --broken ".join(BROKEN) + "]")
    d = args[0]
    for name in sorted(os.listdir(d)):
        if name.endswith(".inputs.safetensors"):
            run_case(os.path.join(d, name), broken)


if __name__ == "__main__":
    main()
