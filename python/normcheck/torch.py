"""normcheck for torch modules (docs/python.md, "Modules"): an nn.Module whose
parameters are the norm's weight (and bias), judged as the function

    fn(x, gamma[, beta], eps) -> module(x)

with gamma (and beta) copied into the module's weight (and bias) and eps set
on its eps attribute for the call, both restored after it. The module's own
d (its weight's length) is every problem's d: the shapes are (rows, d).

    import normcheck.torch, torch
    ln = torch.nn.LayerNorm(4096)
    assert normcheck.torch.check_module(ln, "layernorm fwd stats=none", shapes=[(8, 4096)])
"""

import torch

import normcheck

__all__ = ["check_module", "fuzz_module", "module_fn", "module_shapes"]

# The attributes a module keeps its eps in: torch's nn.LayerNorm (eps),
# Hugging Face's LlamaRMSNorm (variance_epsilon), others (epsilon).
_EPS_ATTRIBUTES = ("eps", "variance_epsilon", "epsilon")
# The rows of the default shapes: one row, a few, and a count that is no
# multiple of a vector width or a block of rows.
_DEFAULT_ROWS = (1, 4, 7)


def _eps_attribute(module):
    for name in _EPS_ATTRIBUTES:
        if isinstance(getattr(module, name, None), (int, float)):
            return name
    raise normcheck.UsageError(
        f"{type(module).__name__} has no float attribute {', '.join(_EPS_ATTRIBUTES)} for normcheck to set eps "
        "on: wrap it in a function fn(x, weight, eps) that passes eps itself")


def _parameter(module, name):
    p = getattr(module, name, None)
    return p if isinstance(p, torch.Tensor) else None


def module_d(module):
    """The d of a module's problems: its weight's length."""
    weight = _parameter(module, "weight")
    if weight is None or weight.dim() != 1:
        raise normcheck.UsageError(f"{type(module).__name__} has no 1-D parameter 'weight' (the norm's gamma): "
                                   "wrap it in a function of x, gamma and eps")
    return weight.shape[0]


def module_shapes(module, shapes=None):
    """The shapes a module's problems are drawn at: those given, each of the
    module's d, or (rows, d) for rows 1, 4 and 7."""
    d = module_d(module)
    if shapes is None:
        return [(rows, d) for rows in _DEFAULT_ROWS]
    for s in shapes:
        if normcheck._shape(s)[1] != d:
            raise normcheck.UsageError(f"shape {tuple(s)}: {type(module).__name__}'s weight has {d} elements, so "
                                       f"every shape is (rows, {d})")
    return shapes


def module_fn(module):
    """The module as a normcheck function of x, gamma (its weight), beta (its
    bias, when it has one) and eps (its eps attribute): the parameters and eps
    are set for each call and restored after it; it runs without autograd."""
    module_d(module)
    eps_name = _eps_attribute(module)
    has_bias = _parameter(module, "bias") is not None

    def call(x, gamma, beta, eps):
        weight, bias = module.weight, module.bias if has_bias else None
        if gamma.shape != weight.shape:  # a problem of another d (a shrinker's candidate): not this module's
            raise ValueError(f"d = {gamma.shape[0]}: {type(module).__name__} is of d = {weight.shape[0]}")
        if weight.dtype != gamma.dtype:  # a TypeError: a usage error (normcheck's probe), not a finding per case
            raise TypeError(f"{type(module).__name__}'s weight is {weight.dtype}, the spec's gamma {gamma.dtype}: "
                            "give the spec the module's dtypes, or module.to() the spec's")
        saved = (weight.detach().clone(), bias.detach().clone() if has_bias else None, getattr(module, eps_name))
        try:
            with torch.no_grad():
                weight.copy_(gamma.to(weight.device))
                if has_bias:
                    bias.copy_(beta.to(bias.device))
                setattr(module, eps_name, eps)
                return module(x.to(weight.device))
        finally:
            with torch.no_grad():
                weight.copy_(saved[0])
                if has_bias:
                    bias.copy_(saved[1])
            setattr(module, eps_name, saved[2])

    if has_bias:
        def fn(x, gamma, beta, eps):
            return call(x, gamma, beta, eps)
    else:
        def fn(x, gamma, eps):
            return call(x, gamma, None, eps)
    fn.__name__ = fn.__qualname__ = type(module).__name__
    return fn


def check_module(module, spec, shapes=None, **kwargs):
    """normcheck.check() of the module (module_fn): problems at `shapes`
    (each (rows, d) with the module's d; default rows 1, 4, 7). device= moves
    the inputs there (the module must be on it) and the outputs come back."""
    return normcheck.check(module_fn(module), spec, shapes=module_shapes(module, shapes), **kwargs)


def fuzz_module(module, spec, shapes=None, **kwargs):
    """normcheck.fuzz() of the module, as check_module."""
    return normcheck.fuzz(module_fn(module), spec, shapes=module_shapes(module, shapes), **kwargs)
