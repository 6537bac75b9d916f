#!/usr/bin/python3
"""A harness for `normcheck judge` in Python with numpy alone (docs/judge.md).

    judge_harness.py DIR [--truncate]

For each case-NNN.inputs.safetensors of DIR (written by `normcheck gen --spec
"rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma"`, Gemma's RMSNorm) it
computes, in float32, r = 1 / sqrt(mean(x^2) + eps) and y = x r (1 + gamma)
rounded once to bf16 (to nearest even), and writes y (BF16) and rrms (F32)
to case-NNN.outputs.safetensors. --truncate rounds y toward zero instead: a
defect the judge must catch.
"""
import json
import os
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        raw = body[begin:end]
        if t["dtype"] == "F32":
            v = np.frombuffer(raw, dtype="<f4")
        elif t["dtype"] == "BF16":  # the high half of a float32
            v = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: tensor {name}: dtype {t['dtype']} is not handled here")
        tensors[name] = v.reshape(t["shape"])
    return tensors, meta


def to_bf16_bits(v, truncate):
    """float32 -> bf16 bits: to nearest even (NaN kept quiet), or toward zero."""
    u = v.astype(np.float32).view(np.uint32)
    if truncate:
        return (u >> 16).astype(np.uint16)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(v)
    rounded[nan] = (u[nan] >> 16) | 0x40
    return rounded.astype(np.uint16)


def write_safetensors(path, tensors):
    """tensors: (name, dtype, shape, bytes) in data order; written whole, then renamed."""
    header, at = {}, 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(raw)]}
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors))
    os.replace(tmp, path)


def run_case(path, truncate):
    t, meta = read_safetensors(path)
    x, gamma = t["x"], t["gamma"]
    eps = np.float32(float.fromhex(meta["normcheck.eps"]))  # C99 hex float, exact
    with np.errstate(all="ignore"):  # rows with NaN, inf or overflow give what IEEE float32 gives
        r = np.float32(1) / np.sqrt(np.mean(x * x, axis=1, dtype=np.float32) + eps)
        y = (x * r[:, None]) * (np.float32(1) + gamma)[None, :]
    out = path.replace(".inputs.", ".outputs.")
    write_safetensors(out, [("y", "BF16", x.shape, to_bf16_bits(y, truncate).astype("<u2").tobytes()),
                            ("rrms", "F32", r.shape, r.astype("<f4").tobytes())])


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--truncate"):
        sys.exit("usage: judge_harness.py DIR [--truncate]")
    d = sys.argv[1]
    for name in sorted(os.listdir(d)):
        if name.endswith(".inputs.safetensors"):
            run_case(os.path.join(d, name), len(sys.argv) == 3)


if __name__ == "__main__":
    main()
