#!/usr/bin/python3
"""A harness for `normcheck judge` in PyTorch (docs/judge.md): reads the case
files with judge_harness.py's safetensors reader (torch 1.13 has none), runs a
torch module or function on them, writes the outputs.

    judge_harness_torch.py DIR KERNEL

KERNEL, each with the spec `normcheck gen --spec` draws its cases from:

  layernorm_f32     torch.nn.functional.layer_norm in float32
                    "layernorm fwd stats=none"
  layernorm_bf16    bf16 x, weight and bias, torch.nn.functional.layer_norm in
                    float32 as torch.autocast runs it, y cast to bf16
                    "layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 stats=none"
  layernorm_bf16_native
                    torch.nn.functional.layer_norm called on the bf16 tensors,
                    the same spec (torch 1.13's CPU kernel rounds its
                    intermediates to bf16: the judge finds it, docs/judge.md)
  llama             Hugging Face's LlamaRMSNorm as transformers writes it, in bf16
                    (tests/python/hf_norms.py)
                    "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none"

and their broken twins, which the judge must catch:

  layernorm_f32_no_eps  layer_norm with eps left out (eps = 0)
  llama_rounds_once     LlamaRMSNorm without its cast of x r to bf16 before the
                        weight: y rounded once (another policy)
"""
import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
# the Hugging Face modules as transformers writes them, and their broken twins:
# the ones the Python module's suite judges
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
import hf_norms  # noqa: E402
from judge_harness import read_safetensors, write_safetensors  # noqa: E402


def tensor(v, dtype):
    """A numpy float32 array (judge_harness.py's reader widens bf16 exactly) as a torch tensor of dtype."""
    return torch.from_numpy(np.array(v, dtype=np.float32)).to(dtype)


def raw(t, name):
    """(name, safetensors dtype, shape, bytes) of a torch tensor: bf16 as its bit pattern."""
    if t.dtype == torch.bfloat16:
        return (name, "BF16", tuple(t.shape), t.view(torch.int16).numpy().astype("<i2").tobytes())
    return (name, "F32", tuple(t.shape), t.to(torch.float32).numpy().astype("<f4").tobytes())


def run_case(path, kernel):
    t, meta = read_safetensors(path)
    eps = float.fromhex(meta["normcheck.eps"])  # a float32, as a C99 hex float: exact
    cols = t["x"].shape[1]
    with torch.no_grad():
        if kernel.startswith("layernorm"):
            dtype = torch.float32 if kernel.startswith("layernorm_f32") else torch.bfloat16
            x, gamma, beta = (tensor(t[n], dtype) for n in ("x", "gamma", "beta"))
            if kernel == "layernorm_bf16":  # autocast's float32 layer_norm on the bf16 tensors
                x, gamma, beta = x.float(), gamma.float(), beta.float()
            y = torch.nn.functional.layer_norm(x, (cols,), gamma, beta, 0.0 if kernel.endswith("no_eps") else eps)
            y = y.to(dtype)
        else:
            module = hf_norms.LlamaRoundsOnce if kernel == "llama_rounds_once" else hf_norms.LlamaRMSNorm
            y = hf_norms.as_fn(module)(tensor(t["x"], torch.bfloat16), tensor(t["gamma"], torch.bfloat16), eps)
    write_safetensors(path.replace(".inputs.", ".outputs."), [raw(y.contiguous(), "y")])


KERNELS = ("layernorm_f32", "layernorm_bf16", "layernorm_bf16_native", "llama", "layernorm_f32_no_eps",
           "llama_rounds_once")


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in KERNELS:
        sys.exit("usage: judge_harness_torch.py DIR " + "|".join(KERNELS))
    d = sys.argv[1]
    for name in sorted(os.listdir(d)):
        if name.endswith(".inputs.safetensors"):
            run_case(os.path.join(d, name), sys.argv[2])


if __name__ == "__main__":
    main()
