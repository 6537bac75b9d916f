"""Hugging Face transformers' RMSNorm modules, re-implemented in torch as
transformers writes them (models/llama/modeling_llama.py LlamaRMSNorm,
models/gemma/modeling_gemma.py GemmaRMSNorm), and broken twins of them and of
a LayerNorm, each with one defect. Each is wrapped as a normcheck function
(x, gamma, eps) -> y."""

import torch
from torch import nn


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        # Llama does x.to(float16) * w whilst Gemma is (x * w).to(float16)
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


# ---- broken twins: one defect each ----

class LlamaRoundsOnce(LlamaRMSNorm):
    """No cast of x r to the input dtype before the weight: bf16(w (x r)), one rounding."""

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return (self.weight * hidden_states).to(input_dtype)


class LlamaEpsOutsideSqrt(LlamaRMSNorm):
    """eps added to the root: x / (sqrt(mean(x^2)) + eps)."""

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states / (torch.sqrt(variance) + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class GemmaWeightNotOnePlus(GemmaRMSNorm):
    """weight instead of 1 + weight."""

    def forward(self, x):
        output = self._norm(x.float())
        output = output * self.weight.float()
        return output.type_as(x)


def layernorm_unbiased(x, gamma, beta, eps):
    """A LayerNorm whose variance divides by d - 1 (torch.var's default)."""
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True)  # unbiased: over d - 1
    return (x - mean) / torch.sqrt(var + eps) * gamma + beta


def as_fn(module_class):
    """The module as a normcheck function: its weight is gamma, its eps eps."""
    def fn(x, gamma, eps):
        m = module_class(x.shape[-1], eps=eps)
        with torch.no_grad():
            m.weight = nn.Parameter(gamma.clone(), requires_grad=False)
            return m(x)
    fn.__name__ = fn.__qualname__ = module_class.__name__
    return fn
