"""normcheck for torch modules (docs/python.md, "Modules"): an nn.Module whose
parameters are the norm's weight (and bias), judged as the function

    fn(x, gamma[, beta], eps) -> module(x)

with gamma (and beta) copied into the module's weight (and bias) and eps set
on its eps attribute for the call, both restored after it. The module's own
d (its weight's length) is every problem's d: the shapes are (rows, d).

    import normcheck.torch, torch
    ln = torch.nn.LayerNorm(4096)
    assert normcheck.torch.check_module(ln, "layernorm fwd stats=none", shapes=[(8, 4096)])

A module with a fused residual add (forward(x, residual) -> (y, residual_out))
is called so under a spec with `add`. check_module_backward also runs the
module's autograd backward (docs/python.md, "Backward"): the function

    fn(dy, x, gamma, [dresidual,] eps) -> (dx, dgamma[, dbeta][, dresidual])

runs the forward on x (with `add`: on x and a zero residual, whose sum is x
exactly) and backpropagates dy (and dresidual into residual_out), giving the
gradients of x, the weight, the bias (and the residual).
"""

import torch

import normcheck

__all__ = ["check_module", "check_module_backward", "fuzz_module", "module_fn", "module_backward_fn", "module_function",
           "module_shapes",
           "ModuleResult"]

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


def _set_parameters(module, gamma, eps_name, eps):
    """Copies gamma into the module's weight and sets its eps; returns what
    _restore puts back. gamma must be the weight's d and dtype."""
    weight = module.weight
    if gamma.shape != weight.shape:  # a problem of another d (a shrinker's candidate): not this module's
        raise ValueError(f"d = {gamma.shape[0]}: {type(module).__name__} is of d = {weight.shape[0]}")
    if weight.dtype != gamma.dtype:  # a TypeError: a usage error (normcheck's probe), not a finding per case
        raise TypeError(f"{type(module).__name__}'s weight is {weight.dtype}, the spec's gamma {gamma.dtype}: "
                        "give the spec the module's dtypes, or module.to() the spec's")
    bias = _parameter(module, "bias")
    saved = (weight.detach().clone(), bias.detach().clone() if bias is not None else None, getattr(module, eps_name))
    with torch.no_grad():
        weight.copy_(gamma.to(weight.device))
    setattr(module, eps_name, eps)
    return saved


def _restore(module, eps_name, saved):
    bias = _parameter(module, "bias")
    with torch.no_grad():
        module.weight.copy_(saved[0])
        if bias is not None:
            bias.copy_(saved[1])
    setattr(module, eps_name, saved[2])


def module_fn(module, add=False):
    """The module as a normcheck function of x, gamma (its weight), beta (its
    bias, when it has one) and eps (its eps attribute), and with `add` the
    residual (module(x, residual) -> (y, residual_out)): the parameters and eps
    are set for each call and restored after it; it runs without autograd."""
    module_d(module)
    eps_name = _eps_attribute(module)
    has_bias = _parameter(module, "bias") is not None

    def call(x, residual, gamma, beta, eps):
        saved = _set_parameters(module, gamma, eps_name, eps)
        try:
            with torch.no_grad():
                if has_bias:
                    module.bias.copy_(beta.to(module.bias.device))
                device = module.weight.device
                return module(x.to(device)) if residual is None else module(x.to(device), residual.to(device))
        finally:
            _restore(module, eps_name, saved)

    if add and has_bias:
        def fn(x, residual, gamma, beta, eps):
            return call(x, residual, gamma, beta, eps)
    elif add:
        def fn(x, residual, gamma, eps):
            return call(x, residual, gamma, None, eps)
    elif has_bias:
        def fn(x, gamma, beta, eps):
            return call(x, None, gamma, beta, eps)
    else:
        def fn(x, gamma, eps):
            return call(x, None, gamma, None, eps)
    fn.__name__ = fn.__qualname__ = type(module).__name__
    return fn


def module_backward_fn(module, spec):
    """The module's autograd backward as a normcheck function of a backward
    spec's inputs (dy, x, gamma, eps; dresidual with `add`): the forward runs
    on x with gamma as the weight and eps set (with `add`: module(x, zeros),
    whose sum is x itself), dy (and dresidual, at residual_out) is
    backpropagated, and the gradients of x, the weight, the bias and the
    residual are the spec's dx, dgamma, dbeta and dresidual. The saved
    statistics a spec with them gives are not used: autograd keeps its own."""
    module_d(module)
    eps_name = _eps_attribute(module)
    outputs = [n for n, _ in normcheck._normcheck.Harness(spec, lambda inputs, eps: None, "").outputs]
    add = "dresidual" in outputs

    def fn(dy, x, gamma, eps, **others):  # others: dresidual, and the saved statistics (unused)
        saved = _set_parameters(module, gamma, eps_name, eps)
        params = [module.weight] + ([module.bias] if _parameter(module, "bias") is not None else [])
        try:
            device = module.weight.device
            for p in params:
                p.grad = None
            xin = x.to(device).detach().requires_grad_(True)
            dy = dy.to(device)
            with torch.enable_grad():
                if add:
                    residual = torch.zeros_like(xin, requires_grad=True)
                    y, residual_out = module(xin, residual)
                    # an output outside the graph (a residual_out the module detached) gets no gradient
                    pairs = [(o, g) for o, g in ((y, dy), (residual_out, others["dresidual"].to(device)))
                             if o.requires_grad]
                    torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
                else:
                    module(xin).backward(dy)
            grads = {"dx": xin.grad, "dgamma": module.weight.grad,
                     "dbeta": module.bias.grad if len(params) > 1 else None,
                     "dresidual": residual.grad if add else None}
            return {n: grads[n].detach().clone() for n in outputs}
        finally:
            for p in params:
                p.grad = None
            _restore(module, eps_name, saved)

    fn.__name__ = fn.__qualname__ = type(module).__name__ + ".backward"
    return fn


class ModuleResult:
    """check_module_backward's verdicts: forward and backward (each
    normcheck.check()'s result); passed (and true) when both passed."""

    def __init__(self, forward, backward):
        self.forward, self.backward = forward, backward

    @property
    def passed(self):
        return self.forward.passed and self.backward.passed

    def __bool__(self):
        return self.passed

    @property
    def findings(self):
        return self.forward.findings + self.backward.findings

    def summary(self):
        return self.forward.summary() + "\n" + self.backward.summary()

    def __repr__(self):
        return f"<normcheck.torch.ModuleResult {self.summary()!r}>"


def module_function(module, spec):
    """The function normcheck calls for a module under `spec`: its autograd
    backward (module_backward_fn) for a backward spec, else its forward
    (module_fn, with the residual under `add`)."""
    words = str(spec).split()
    return module_backward_fn(module, spec) if words[1:2] == ["bwd"] else module_fn(module, "add" in words)


def check_module(module, spec, shapes=None, **kwargs):
    """normcheck.check() of the module (module_fn): problems at `shapes`
    (each (rows, d) with the module's d; default rows 1, 4, 7). device= moves
    the inputs there (the module must be on it) and the outputs come back.
    Under a spec with `add` the module is called as module(x, residual); a
    backward spec judges its autograd backward (module_backward_fn)."""
    return normcheck.check(module, spec, shapes=module_shapes(module, shapes), **kwargs)  # module_function()


def check_module_backward(module, forward_spec, backward_spec, shapes=None, problems=None, **kwargs):
    """The module's forward held to forward_spec (check_module) and its
    autograd backward to backward_spec (module_backward_fn), each on the
    problems check() draws at `shapes` (default rows 1, 4, 7 of the module's
    d), or on `problems` (dicts of problem()'s arguments: dy for the
    backward). Returns a ModuleResult, true when both pass. kwargs are
    check()'s (cases, seed, domain, device)."""
    shapes = module_shapes(module, shapes)
    forward = check_module(module, forward_spec, shapes=shapes, problems=problems, **kwargs)
    backward = check_module(module, backward_spec, shapes=shapes, problems=problems, tensors="torch", **kwargs)
    return ModuleResult(forward, backward)


def fuzz_module(module, spec, shapes=None, **kwargs):
    """normcheck.fuzz() of the module, as check_module."""
    return normcheck.fuzz(module, spec, shapes=module_shapes(module, shapes), **kwargs)
