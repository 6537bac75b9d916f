"""normcheck from Python: hold a LayerNorm/RMSNorm function to the exact answer
and the a-priori bound of its op spec (docs/python.md).

    import normcheck, torch
    def llama(x, gamma, eps): ...                # any function of the spec's tensors
    normcheck.check(llama, "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16")

The judging is normcheck's C++ (the extension _normcheck): the function is the
computation of a kernel row held to the spec's rounding policy by evaluate(),
as a version-2 plugin or a `normcheck judge` harness of the spec is. This file
only moves arrays between that row's calls and the function.
"""

import hashlib
import inspect
import os
import re
import sys
import tempfile
import time

import numpy as np

from . import _normcheck

__all__ = [
    "UsageError", "OutputError", "Case", "CheckResult", "Finding", "FuzzResult", "Policy", "Identification",
    "AccuracyResult", "check", "fuzz", "replay", "identify", "accuracy", "assert_within_bound", "assert_accuracy",
    "problems", "problem",
]


class UsageError(ValueError):
    """normcheck cannot call fn as the spec needs: its signature has no
    parameter for one of the spec's inputs, or one normcheck does not pass, or
    fn raised a TypeError or AttributeError on a small well-formed problem
    (numpy arrays given to a torch function, say). Raised once, before any
    case, as `normcheck judge` exits 2 on a malformed harness; not a finding."""


class OutputError(UsageError):
    """fn's return value is not the spec's outputs: a missing or unknown tensor,
    a wrong shape or dtype. A usage error (raised), not a finding."""


# ---- arrays between the C++ row and fn ----

_TORCH_DTYPE_NAMES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
_NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16}
# A quantized y's codes (docs/ops.md, "Quantized outputs"): fp8 as their raw
# bytes (uint8; a torch float8 tensor of the format too, where torch has it),
# int8 as int8.
_CODE_DTYPES = {"e4m3": np.uint8, "e5m2": np.uint8, "int8": np.int8}
_TORCH_FP8_NAMES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
# The bit patterns of 1 in each format: an absent gamma is weight 1 (0 under
# weight=1+gamma), an absent beta 0, as in the problem files.
_ONE_BITS = {"bf16": 0x3F80, "f16": 0x3C00}


# The parameter names fn may give each argument normcheck passes: the
# module's own (first), torch's (F.layer_norm's input, weight, bias; an
# nn.Module's weight and bias) and Hugging Face's (hidden_states,
# variance_epsilon). A parameter `normalized_shape` gets (cols,).
_PARAMETER_NAMES = {
    "x": ("x", "input", "hidden_states"),
    "residual": ("residual",),
    "gamma": ("gamma", "weight"),
    "beta": ("beta", "bias"),
    "scale": ("scale",),
    "eps": ("eps", "epsilon", "variance_epsilon"),
    # a backward's: the gradient arriving at y (torch's grad_output), the
    # forward's y (from=y), the saved statistics (an RMSNorm's rrms is often
    # called rstd: Liger-Kernel, flash-attention), and with `add` the residual
    # stream's gradient
    "dy": ("dy", "grad_output"),
    "y": ("y",),
    "mean": ("mean",),
    "rstd": ("rstd",),
    "rrms": ("rrms", "rstd"),
    "dresidual": ("dresidual",),
}
_SHAPE_PARAMETER = "normalized_shape"
# What fn raises when it gets tensors of the other library (x.float() on a
# numpy array, torch.rsqrt of one), or arguments it does not take.
_USAGE_FAULTS = (TypeError, AttributeError)


class _Binding:
    """How fn's parameters receive normcheck's arguments (the spec's inputs
    and eps), by fn's signature: each by one of its _PARAMETER_NAMES,
    positionally when the parameter is positional-only. A function without a
    signature (a builtin) gets the module's names as keywords."""

    def __init__(self, fn, names, expected, optional=()):
        self.positional, self.keywords, self.shape_keyword = [], {}, False
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            self.keywords = {n: n for n in names}
            return
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        owner, missing = {}, []
        for n in names:
            hits = [a for a in _PARAMETER_NAMES[n] if a in params and params[a].kind not in variadic]
            if len(hits) > 1:
                raise UsageError(f"fn {_fn_name(fn)} takes both '{hits[0]}' and '{hits[1]}', the same argument "
                                 f"({n}) by two names; expected {expected}")
            if hits:
                owner[hits[0]] = n
            elif takes_any:
                owner[n] = n
            elif n not in optional:
                missing.append(n)
        unknown = [p.name for p in params.values() if p.name not in owner and p.name != _SHAPE_PARAMETER
                   and p.kind not in variadic and p.default is inspect.Parameter.empty]
        if missing or unknown:
            what = []
            if missing:
                what.append("no parameter for " + ", ".join(
                    f"{n} ({' or '.join(_PARAMETER_NAMES[n])})" for n in missing))
            if unknown:
                what.append("the parameter(s) " + ", ".join(f"'{u}'" for u in unknown) +
                            " without a default, which the spec does not give")
            raise UsageError(f"fn {_fn_name(fn)}{_signature_of(fn)} has " + " and ".join(what) +
                             f"; expected {expected}")
        for p in params.values():
            ours = _SHAPE_PARAMETER if p.name == _SHAPE_PARAMETER else owner.get(p.name)
            if ours is None:
                continue
            if p.kind is inspect.Parameter.POSITIONAL_ONLY:
                self.positional.append(ours)
            elif ours == _SHAPE_PARAMETER:
                self.shape_keyword = True
            else:
                self.keywords[ours] = p.name
        for n, name in owner.items():  # those **kwargs takes
            if name == n and n not in self.keywords and n not in self.positional:
                self.keywords[n] = n

    def call(self, fn, values, cols):
        args = [(cols,) if n == _SHAPE_PARAMETER else values[n] for n in self.positional]
        kwargs = {param: values[n] for n, param in self.keywords.items()}
        if self.shape_keyword:
            kwargs[_SHAPE_PARAMETER] = (cols,)
        return fn(*args, **kwargs)


def _signature_of(fn):
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("normcheck: tensors='torch' (and every bf16 spec) needs PyTorch: " + str(e)) from e
    return torch


class _Adapter:
    """Called by the row with the call's inputs (float32 arrays, 16-bit formats
    as uint16 bit patterns; None for an absent gamma or beta; a static scale
    as float32 of shape (1,)) and eps; returns the outputs the same way (a
    quantized y as its uint8 or int8 codes, a dynamic scale as float32), or a
    str: the exception fn raised."""

    def __init__(self, fn, tensors, device=None):
        if tensors not in (None, "numpy", "torch"):
            raise ValueError(f"tensors={tensors!r}: 'numpy', 'torch' or None")
        if device is not None and tensors == "numpy":
            raise ValueError(f"device={device!r} moves torch tensors: not with tensors='numpy'")
        self.fn = fn
        self.tensors = "torch" if device is not None and tensors is None else tensors
        self.device = device
        self.detected = tensors is None  # numpy or torch: told by the probe (_probe)
        self.fault = None  # the exception fn raised on the last call

    def bind(self, harness):
        """The tensors of the harness's spec: (name, format) of its inputs and outputs."""
        self.inputs, self.outputs = harness.inputs, harness.outputs
        words = harness.spec.split()
        self.one_plus_gamma = "weight=1+gamma" in words
        # a dynamic scale's columns: one per row, or one per block of G columns
        self.scale_block = next((int(w[len("scale=block:"):]) for w in words if w.startswith("scale=block:")), None)
        has_bf16 = any(d == "bf16" for _, d in self.inputs + self.outputs)
        if self.tensors is None:
            self.tensors = "torch" if has_bf16 else "numpy"
            self.detected = not has_bf16
        if self.tensors == "numpy" and has_bf16:
            raise ValueError(f"spec '{harness.spec}' has bf16 tensors, which numpy has no type for: use tensors='torch'")
        self.torch = _torch() if self.tensors == "torch" else None
        self.expected = _expected_signature(self.inputs, self.outputs, self.tensors)
        # a backward's eps: only one that recomputes the statistics (stats=none) needs it
        self.backward = harness.backward
        self.binding = _Binding(self.fn, [n for n, _ in self.inputs] + ["eps"], self.expected,
                                optional=("eps",) if self.backward else ())

    def use(self, tensors):
        """Calls fn with numpy arrays or torch tensors from now on."""
        self.tensors = tensors
        self.torch = _torch() if tensors == "torch" else None
        self.expected = _expected_signature(self.inputs, self.outputs, tensors)

    def _absent(self, name, dtype, cols):
        one = name == "gamma" and not self.one_plus_gamma
        if dtype == "f32":
            return np.full(cols, 1.0 if one else 0.0, np.float32)
        return np.full(cols, _ONE_BITS[dtype] if one else 0, np.uint16)

    def _wrap(self, raw, dtype):
        if self.torch is None:
            return raw if dtype == "f32" else raw.view(np.float16)
        torch = self.torch
        if dtype == "bf16":
            t = torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(raw if dtype == "f32" else raw.view(np.float16))
        return t if self.device is None else t.to(self.device)

    def _unwrap_codes(self, value, name, dtype, shape):
        """A quantized y: uint8 (fp8's bytes) or int8 codes, numpy or torch."""
        want = _CODE_DTYPES[dtype]
        torch = self.torch or sys.modules.get("torch")
        if torch is not None and isinstance(value, torch.Tensor):
            fp8 = getattr(torch, _TORCH_FP8_NAMES.get(dtype, ""), None)
            value = value.detach().to("cpu").contiguous()
            if fp8 is not None and value.dtype == fp8:
                value = value.view(torch.uint8)
            value = value.numpy()
        if not isinstance(value, np.ndarray):
            raise OutputError(f"output '{name}' is a {type(value).__name__}, not an array of {dtype} codes")
        if value.dtype != want:
            raise OutputError(f"output '{name}' is {value.dtype}, the spec's {dtype} codes are "
                              f"{np.dtype(want).name}" + (" (fp8: the codes' bytes)" if want is np.uint8 else ""))
        if tuple(value.shape) != shape:
            raise OutputError(f"output '{name}' has shape {tuple(value.shape)}, expected {shape}")
        return np.ascontiguousarray(value)

    def _unwrap(self, value, name, dtype, shapes):
        if dtype in _CODE_DTYPES:
            return self._unwrap_codes(value, name, dtype, shapes[0])
        torch = self.torch or sys.modules.get("torch")  # a numpy function may return a tensor
        if torch is not None and isinstance(value, torch.Tensor):
            want = getattr(torch, _TORCH_DTYPE_NAMES[dtype])
            if value.dtype != want:
                raise OutputError(f"output '{name}' is {value.dtype}, the spec says {dtype} ({want})")
            value = value.detach().to("cpu").contiguous()
            arr = value.view(torch.int16).numpy().view(np.uint16) if dtype == "bf16" else value.numpy()
        else:
            if not isinstance(value, np.ndarray):
                raise OutputError(f"output '{name}' is a {type(value).__name__}, not an array"
                                  + (" (tensors='numpy')" if torch is None else " or a torch.Tensor"))
            if dtype == "bf16" or value.dtype != _NUMPY_DTYPES[dtype]:
                raise OutputError(f"output '{name}' is numpy {value.dtype}, the spec says {dtype}"
                                  + (" (bf16: return a torch.Tensor)" if dtype == "bf16" else ""))
            arr = value
        if tuple(arr.shape) not in shapes:
            raise OutputError(f"output '{name}' has shape {tuple(arr.shape)}, expected "
                              + " or ".join(str(s) for s in shapes))
        arr = np.ascontiguousarray(arr)
        return arr.view(np.uint16) if dtype == "f16" else arr

    def __call__(self, inputs, eps):
        rows, cols = inputs["dy" if self.backward else "x"].shape
        kwargs = {}
        for name, dtype in self.inputs:
            raw = inputs[name]
            kwargs[name] = self._wrap(self._absent(name, dtype, cols) if raw is None else raw, dtype)  # scale: (1,)
        kwargs["eps"] = eps
        self.fault = None
        try:
            # numpy warns on the NaN, inf and overflowing inputs normcheck draws on purpose
            with np.errstate(all="ignore"):
                out = self.binding.call(self.fn, kwargs, cols)
        except Exception as e:  # a finding (`exception`); KeyboardInterrupt and the like go through
            self.fault = e
            return f"{type(e).__name__}: {e}"
        names = [n for n, _ in self.outputs]
        if isinstance(out, dict):
            missing = [n for n in names if n not in out]
            extra = [k for k in out if k not in names]
            if missing or extra:
                raise OutputError(f"fn returned the outputs {sorted(out)}, the spec has {names}")
            values = [out[n] for n in names]
        elif isinstance(out, (tuple, list)):
            if len(out) != len(names):
                raise OutputError(f"fn returned {len(out)} outputs, the spec has {len(names)}: {names}")
            values = list(out)
        elif len(names) == 1:
            values = [out]
        else:
            raise OutputError(f"fn returned one value, the spec has the outputs {names}: a tuple or a dict of them")
        result = {}
        for (name, dtype), value in zip(self.outputs, values):
            stat = name in ("mean", "rstd", "rrms")
            shapes = [(rows,), (rows, 1)] if stat else [(cols,)] if name in ("dgamma", "dbeta") else [(rows, cols)]
            if name in ("scale_inv", "amax"):  # one float32 for the tensor
                shapes = [(1,), ()]
            if name == "scale":  # a dynamic scale: rows x its scales per row ((rows,) for one)
                per_row = 1 if self.scale_block is None else -(-cols // self.scale_block)
                shapes = [(rows, per_row)] + ([(rows,)] if per_row == 1 else [])
            result[name] = self._unwrap(value, name, dtype, shapes)
        return result


def _expected_signature(inputs, outputs, tensors):
    """'fn(x, gamma, beta, eps) -> y (torch.Tensor, bf16 [rows, cols])' for the spec's tensors."""
    names = [n for n, _ in inputs]
    torch_names = [_PARAMETER_NAMES[n][1] if n in ("gamma", "beta") else n for n in names]
    kind = "torch.Tensor" if tensors == "torch" else "numpy.ndarray"
    outs = [n for n, _ in outputs]
    ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ") or a dict of them"
    text = f"fn({', '.join(names)}, eps) -> {ret}"
    if torch_names != names:
        text += f", or with torch's names fn({', '.join(torch_names)}, eps)"
    return text + f"; tensors are {kind}s in the spec's formats, x [rows, cols] (docs/python.md)"


def _probe_problem(h, adapter):
    """A small well-formed problem of the harness's spec: 2 rows of 8 (or
    the narrowest shape given) finite values, gamma near 1, beta near 0,
    eps = 1e-5, a static scale where the spec takes one."""
    names = [n for n, _ in h.inputs]
    cols = adapter.probe_cols
    x = np.resize(np.array([0.5, -1.25, 2.0, 0.75, -0.5, 1.5, -2.0, 0.25], np.float32), (2, cols))
    x[1] *= 3
    ramp = np.resize(np.array([1.0, 0.875, 1.125, 0.75], np.float32), cols)
    return problem(x, gamma=ramp if "gamma" in names else None, beta=(ramp - 1) if "beta" in names else None,
                   residual=x[::-1].copy() if "residual" in names or "dresidual" in names else None, eps=1e-5,
                   scale=0.0625 if "scale" in names else None, dy=(x[:, ::-1] * 0.5).copy() if h.backward else None)


def _probe(h, adapter):
    """fn called once on a small well-formed problem before any case: a
    TypeError or AttributeError there, or outputs that are not the spec's
    (OutputError), is a usage error raised once, not a finding per case.
    With tensors not given (and no bf16 in the spec) fn gets numpy arrays,
    and torch tensors when it raises such an error on numpy arrays."""
    p = h.stored(_probe_problem(h, adapter))

    def attempt():
        try:
            h.run(p)
        except OutputError as e:
            return e
        return adapter.fault if isinstance(adapter.fault, _USAGE_FAULTS) else None

    fault = attempt()
    if fault is not None and adapter.detected and adapter.tensors == "numpy" and _torch_available():
        numpy_fault = fault
        adapter.use("torch")
        fault = attempt()
        if fault is not None:
            adapter.use("numpy")
            fault = numpy_fault
    if fault is None:
        return
    what = "returned outputs that are not the spec's" if isinstance(fault, OutputError) else "raised"
    raise (OutputError if isinstance(fault, OutputError) else UsageError)(f"fn {_fn_name(adapter.fn)} {what} on a small well-formed problem (2 x {adapter.probe_cols}, "
                     f"{adapter.tensors} tensors): {type(fault).__name__}: {fault}\nexpected {adapter.expected}") from None


def _torch_available():
    try:
        _torch()
        return True
    except ImportError:
        return False


def _harness(fn, spec, tensors, domain, shapes=None, device=None):
    if _is_module(fn):
        from . import torch as _nc_torch
        fn, shapes = _nc_torch.module_function(fn, spec), _nc_torch.module_shapes(fn, shapes)
    if not callable(fn):
        raise TypeError(f"fn: {fn!r} is not callable")
    if not isinstance(spec, str):
        raise TypeError("spec: the op spec's text, e.g. 'rmsnorm fwd dtype=bf16 gamma=bf16' (docs/ops.md)")
    adapter = _Adapter(fn, tensors, device)
    h = _normcheck.Harness(spec, adapter, domain)
    adapter.bind(h)
    shapes = [] if shapes is None else [_shape(s) for s in shapes]
    h.set_shapes(shapes)
    adapter.probe_cols = min((c for _, c in shapes), default=8)
    _probe(h, adapter)
    return h, fn


def _shape(s):
    try:
        rows, cols = s
        return int(rows), int(cols)
    except (TypeError, ValueError):
        raise ValueError(f"shapes: {s!r} is not a (rows, cols) pair") from None


def _is_module(fn):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(fn, torch.nn.Module)


def _fn_name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


# ---- problems ----

def problem(x, gamma=None, beta=None, residual=None, eps=1e-5, scale=None, dy=None):
    """A problem from arrays (x rows x cols; gamma, beta of cols; residual like x),
    for a spec with quant= and scale=static its scale (a float > 0: y is divided
    by it, or multiplied under scale_apply=multiply), and for a backward spec
    dy, the gradient arriving at y (like x; with `add`, residual is the
    residual stream's gradient, dresidual). Its
    values are rounded to the spec's formats when it is run; a backward's
    saved statistics (and y, from=y) are normcheck's, from x."""
    def host(a):
        if a is None:
            return None
        if hasattr(a, "detach"):  # a torch tensor, on any device
            a = a.detach().to("cpu").float().numpy()
        return np.asarray(a, dtype=np.float32)
    return _normcheck.make_problem(host(x), host(residual), host(gamma), host(beta), float(eps),
                                   0.0 if scale is None else float(scale), host(dy))


def problems(spec, cases=101, seed=None, domain="", shapes=None):
    """The problems `normcheck gen --spec SPEC --cases N --seed S [--shape RxC]...`
    draws (cases 0..N-1 of the seed), as Problem objects. Returns (seed, [Problem])."""
    h = _normcheck.Harness(spec, lambda inputs, eps: None, domain)
    h.set_shapes([_shape(s) for s in shapes or []])
    seed = _normcheck.seed(seed)
    return seed, [h.draw(seed, c) for c in range(cases)]


def _given(h, given):
    """The problems given to check(): Problem objects, dicts of arrays, or
    problem-file paths (their problems), each with its number."""
    if isinstance(given, (str, os.PathLike, _normcheck.Problem, dict)):
        given = [given]
    out = []
    for g in given:
        if isinstance(g, _normcheck.Problem):
            out.append(h.stored(g))
        elif isinstance(g, dict):
            out.append(h.stored(problem(**g)))
        elif isinstance(g, (str, os.PathLike)):
            _, ps = _normcheck.read_problem_file(os.fspath(g))
            out.extend(h.stored(p) for p in ps)
        else:
            raise TypeError(f"problems: {type(g).__name__} is not a Problem, a dict of arrays or a problem file")
    return out


# ---- verdicts ----

def _dec(v):
    """A value in decimal: the shortest text that reads back as the same float32 or double."""
    v = float(v)
    return str(np.float32(v)) if float(np.float32(v)) == v or not np.isfinite(v) else repr(v)


def _hex(v):
    """'0x1.0c6f7ap-20': the value's hex float without the mantissa's trailing zeros (as C's %a)."""
    if not np.isfinite(v):
        return str(float(v))
    mantissa, exponent = float(v).hex().split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + exponent


# A problem's tensors are printed value by value up to this many per row (and
# rows): a shrunk finding is usually a row or two of a few values.
_PRINTED_COLS, _PRINTED_ROWS = 16, 4


def _policy_text(policy):
    """'x r rounded before the weight (Hugging Face LlamaRMSNorm, ...) (rmsnorm fwd ... round=xhat:bf16)', or the spec alone."""
    try:
        name = _normcheck.policy_name(policy)
    except ValueError:  # not a spec's text: said as it is
        name = ""
    return f"{name} ({policy})" if name else policy


class Case:
    """One problem's verdict. label: '' (within the bound, or declined), or a
    finding: policy_mismatch, accuracy, nan, exception (fn raised).
    declined: why the problem was not judged (outside the domain), or ''.
    outside: under check(wide_range=True), why the problem lies outside the
    domain asked for (its label is then a limit, not a finding), or ''."""

    def __init__(self, index, problem, outcome, spec=None, outside=""):
        self.index = index
        self.outside = outside
        self.problem = problem
        self.spec = spec
        self.label = outcome.label
        self.detail = outcome.detail
        self.input_class = outcome.input_class
        self.declined = outcome.declined
        self.max_error_over_bound = outcome.max_error_over_bound
        # the tight standard on realistic rows (docs/accuracy.md): rows held to it, the worst ratio there
        self.tight_rows = outcome.tight_rows
        self.max_error_over_tight = outcome.max_error_over_tight
        # the two ULP figures: of the row's scale (what the arithmetic answers for) and
        # elementwise in the output's format (what a float comparison sees); NaN beside a NaN/inf
        self.exact_math_ulp = outcome.exact_math_ulp
        self.max_ulp = outcome.max_ulp
        self.max_ulp_elementwise = outcome.max_ulp_elementwise
        self.policy_exact_math_ulp = outcome.policy_exact_math_ulp
        self.consistent_policies = list(outcome.consistent_policies)
        self.consistent_casts = list(outcome.consistent_casts)
        self.worst = outcome.worst
        self._outcome = outcome

    @property
    def passed(self):
        return not self.label

    def worst_text(self):
        """'y[row 0, col 1] = -4.0e-05 (-0x1.4ep-15), exact -3.99e-05 (-0x1.4eca267116703p-15),
        allowed error 1.19e-07': the worst element, its value and the exact one in decimal and hex."""
        if self.label == "exception":
            return self.detail
        w = self.worst
        return (f"{w['output']}[row {w['row']}, col {w['col']}] = {_dec(w['computed'])} ({w['computed_hex']}), "
                f"exact {_dec(w['exact'])} ({w['exact_hex']}), allowed error {w['allowed']:.3g}")

    def problem_lines(self):
        """The problem in words: its shape and eps, and each input tensor's
        values in decimal and hex when it is small (the problem file has them all)."""
        p = self.problem
        lines = [f"problem: {p.rows} x {p.cols} (d = {p.cols}), eps = {_dec(p.eps)} ({_hex(p.eps)})"
                 + (f", static scale {_dec(p.scale)}" if p.scale else "")]
        words = (self.spec or "").split()
        backward = words[1:2] == ["bwd"]
        # a backward's inputs: dy, x, dresidual (the problem's residual), gamma; beta only from=y
        tensors = ([("dy", p.dy), ("x", p.x), ("dresidual", p.residual), ("gamma", p.gamma), ("beta", p.beta)]
                   if backward else [("x", p.x), ("residual", p.residual), ("gamma", p.gamma), ("beta", p.beta)])
        has_beta = ((words[:1] == ["layernorm"] and "bias=none" not in words) or "bias" in words) and \
            (not backward or "from=y" in words)
        absent = {"gamma": None if "weight=none" in words else "0" if "weight=1+gamma" in words else "1",
                  "beta": "0" if has_beta else None}
        for name, values in tensors:
            if values.size == 0:
                if absent.get(name):  # the spec has it; the problem leaves it at its default
                    lines.append(f"{name} = {absent[name]} (every element: none given)")
                continue
            rows = values.reshape(-1, p.cols)
            if p.cols > _PRINTED_COLS or rows.shape[0] > _PRINTED_ROWS:
                lines.append(f"{name}: {' x '.join(str(n) for n in values.shape)} values (in the problem file)")
                continue
            for r, row in enumerate(rows):
                label = f"{name}[{r}]" if values.ndim == 2 else name
                lines.append(f"{label} = [{', '.join(_dec(v) for v in row)}]"
                             f"  hex [{', '.join(_hex(v) for v in row)}]")
        return lines

    def message(self):
        """The finding as a reader acts on it: its label and input class, the
        problem (shape, eps, small inputs' values), the worst element, and the
        rounding policies by name and spec: the spec's, and on a
        policy_mismatch those the outputs do follow."""
        if not self.label:
            return f"case {self.index}: " + (f"declined: {self.declined}" if self.declined else "passed")
        lines = [f"{self.label} in input class {self.input_class or '(none)'}"]
        if self.outside:
            lines.append(f"a limit, not a finding: {self.outside}")
        lines += self.problem_lines()
        if self.label == "accuracy" and self.max_error_over_bound <= 1 < self.max_error_over_tight:
            lines.append(f"beyond the tight standard on a realistic row: {self.max_error_over_tight:.3g}x it "
                         f"(within the worst-case bound: {self.max_error_over_bound:.3g}x)")
        lines.append(("raised: " if self.label == "exception" else "worst: ") + self.worst_text())
        if self.label != "exception":
            lines.append(f"ULP error: {self.max_ulp:.3g} in ULPs of the row's scale, {self.max_ulp_elementwise:.3g} "
                         "elementwise in the output's format (nan beside a NaN or inf)")
        if self.spec and self.label != "exception":
            lines.append(f"the spec's rounding policy: {_policy_text(self.spec)}")
        lines += [f"its outputs follow: {_policy_text(p)}" for p in self.consistent_policies]
        lines += [f"its codes follow the cast of: {p}" for p in self.consistent_casts]
        return "\n".join(lines)

    def __repr__(self):
        return f"<normcheck.Case {self.index} {self.label or ('declined' if self.declined else 'pass')}>"


class _Verdicts:
    """A run's verdict: it passed when some case was judged and none has a
    finding (and is then true). Nothing judged (every case declined) is never
    a pass: nothing_judged() says why."""

    @property
    def passed(self):
        return not self.findings and self.judged > 0

    def nothing_judged(self):
        """'' when some case was judged, else 'nothing judged: declined N of N cases: REASON'."""
        if self.judged > 0:
            return ""
        if not self.declined_count:
            return "nothing judged: no case ran"
        return (f"nothing judged: declined {self.declined_count} of {self.declined_count} cases: "
                f"{self.first_decline}")

    def __bool__(self):
        return self.passed


def _declined_text(cases):
    """'3 declined (not judged): |x| = ... is outside ... (2), ...': the count and each reason's, or ''."""
    reasons = {}
    for c in cases:
        if c.declined:
            # one key per limit: the row and the value that broke it left out
            key = re.sub(r"^row \d+: ", "", c.declined)
            key = re.sub(r" \(\|x\| <= \S+ here\)", "", re.sub(r"(\|x\||\|mean\|/sigma|sigma) = \S+ is ", "", key))
            reasons[key] = reasons.get(key, 0) + 1
    if not reasons:
        return ""
    n = sum(reasons.values())
    return f", {n} declined, not judged: " + "; ".join(f"{r} ({k})" for r, k in reasons.items())


class CheckResult(_Verdicts):
    """check()'s verdicts: seed (None for given problems), cases, findings,
    declined (the cases outside the domain, not judged), domain (its text),
    limits (wide_range=True: the labelled cases outside the domain)."""

    def __init__(self, spec, seed, cases, harness, fn, domain=None):
        self.spec = spec
        self.seed = seed
        self.domain = harness.domain if domain is None else domain
        self.cases = cases
        self._harness = harness
        self._fn = fn

    @property
    def findings(self):
        return [c for c in self.cases if c.label and not c.outside]

    @property
    def limits(self):
        return [c for c in self.cases if c.label and c.outside]

    @property
    def declined(self):
        return [c for c in self.cases if c.declined]

    @property
    def judged(self):
        return len(self.cases) - len(self.declined)

    @property
    def declined_count(self):
        return len(self.declined)

    @property
    def first_decline(self):
        return next((c.declined for c in self.cases if c.declined), "")

    def summary(self):
        """'SPEC: 101 cases (seed S), 2 with a finding (accuracy 2), 1 declined, not judged: REASON (1)'."""
        seed = f" (seed {self.seed})" if self.seed is not None else ""
        labels = {}
        for c in self.findings:
            labels[c.label] = labels.get(c.label, 0) + 1
        by_label = " (" + ", ".join(f"{k} {n}" for k, n in labels.items()) + ")" if labels else ""
        if self.judged == 0:
            return f"{self.spec}: {len(self.cases)} cases{seed}, {self.nothing_judged()}"
        limits = {}
        for c in self.limits:
            limits[c.label] = limits.get(c.label, 0) + 1
        limit_text = (f", {len(self.limits)} limits outside the domain ("
                      + ", ".join(f"{k} {n}" for k, n in limits.items()) + ")") if limits else ""
        return (f"{self.spec}: {len(self.cases)} cases{seed}, {len(self.findings)} with a finding{by_label}"
                + limit_text + _declined_text(self.cases))

    def report(self, out_dir, name=None):
        """Writes the report of these cases to out_dir as `normcheck report`
        writes one (report.html, report.md, results.json, junit.xml, and each
        finding's problem file in findings/): the function a kernel row named
        `name` ([a-z0-9_.]+; default: python. and the function's name), its
        grade and its rounding policy's two verdicts. Returns report.html's
        path."""
        source = (f"{len(self.cases)} cases judged from a Python function by the normcheck module"
                  + (f", drawn with seed {self.seed}" if self.seed is not None else ", given by the caller"))
        if name is None:
            name = "python." + re.sub(r"[^a-z0-9_.]", "_", _fn_name(self._fn).lower())
        elif not re.fullmatch(r"[a-z0-9_.]+", name):
            raise ValueError(f"name {name!r}: a kernel's name is [a-z0-9_.]+")
        return self._harness.report(os.fspath(out_dir), name,
                                    [c.problem for c in self.cases], [c._outcome for c in self.cases],
                                    self.seed if self.seed is not None else 0, source)

    def __repr__(self):
        return f"<normcheck.CheckResult {self.summary()}>"


def check(fn, spec, problems=None, cases=101, seed=None, tensors=None, domain="", shapes=None, device=None,
          wide_range=False):
    """Runs fn on problems and holds its outputs to the spec's rounding policy.

    problems: None (cases 0..cases-1 of the seed, drawn as `normcheck gen` draws
    them, at `shapes` [(rows, cols), ...] when given), or Problem objects, dicts
    of arrays (problem()'s arguments) or problem files. fn is called with the
    spec's inputs x, residual, gamma, beta and eps (a backward spec's: dy, x,
    gamma, the saved mean and rstd / rrms, dresidual with `add`, y and beta
    with from=y; eps if fn takes it), by the names of its signature
    (normcheck's, or torch's weight, bias, grad_output, normalized_shape), numpy
    arrays or torch tensors in the spec's formats (tensors: 'numpy', 'torch',
    or None: told from what fn accepts; torch for a bf16 spec), on `device`
    when given, and returns y, or a tuple or dict of the spec's outputs (y,
    residual_out, mean, rstd / rrms; a backward's dx, dgamma, dbeta,
    dresidual). fn may be an nn.Module (normcheck.torch).
    A signature or return value normcheck cannot use is one UsageError.
    wide_range=True draws (and judges) in a plugin's default domain instead,
    as `normcheck fuzz --wide-range` does: a finding on a problem outside
    `domain` is one of the function's limits there (result.limits, each
    case's .outside says why), not a finding."""
    declared = _normcheck.Harness(_spec_text(fn, spec), lambda inputs, eps: None, domain) if wide_range else None
    h, fn = _harness(fn, spec, tensors, "" if wide_range else domain, shapes, device)
    if problems is None:
        seed = _normcheck.seed(seed)
        drawn = ((c, h.draw(seed, c)) for c in range(cases))
    else:
        seed = None
        drawn = enumerate(_given(h, problems))
    results = [Case(c, p, h.run(p), h.spec, declared.declines(p) if declared else "") for c, p in drawn]
    return CheckResult(h.spec, seed, results, h, fn, declared.domain if declared else None)


def _spec_text(fn, spec):
    """The spec's text, as _harness() checks it (a TypeError for another type)."""
    if not isinstance(spec, str):
        raise TypeError("spec: the op spec's text, e.g. 'rmsnorm fwd dtype=bf16 gamma=bf16' (docs/ops.md)")
    return spec


# ---- findings as problem files ----

class Finding:
    """A finding shrunk through fn and saved: label, input_class, the shrunk
    case (its problem and verdict), the problem file, and the seed and case
    number it was drawn as."""

    def __init__(self, label, input_class, case, file, seed, drawn_as):
        self.label, self.input_class, self.case, self.file = label, input_class, case, file
        self.seed, self.drawn_as = seed, drawn_as

    def __repr__(self):
        return f"<normcheck.Finding {self.label} ({self.input_class}) {self.file}>"


def _replay_lines(path):
    """How a saved problem file replays: in Python on fn, and with the command
    line on a C build of the kernel or a table kernel of the spec."""
    return [f"replay: normcheck.replay(fn, {os.fspath(path)!r})",
            f"or: normcheck check --input {os.fspath(path)} [--plugin LIBRARY] (a plugin or table kernel of the spec)"]


def _save(h, fn, case, out_dir, notes):
    """The case's problem as a problem file in out_dir, named by label and a
    hash of its body (as fuzz's corpus names them); returns its path."""
    os.makedirs(out_dir, exist_ok=True)
    body = h.problem_file(case.problem, [])
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    path = os.path.join(os.fspath(out_dir), f"python.{case.label}.{digest}.txt")
    notes = [f"normcheck (Python) finding: {case.label} on {_fn_name(fn)}, input class {case.input_class}"] + notes
    if case.detail:
        notes.append(case.detail)
    notes += _replay_lines(path)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(h.problem_file(case.problem, notes))
    os.replace(tmp, path)  # whole or not at all
    return path


def _shrink(h, case, seconds):
    p, o = h.shrink(case.problem, case._outcome, seconds)
    return Case(case.index, p, o, case.spec)


class FuzzResult(_Verdicts):
    """fuzz()'s run: seed, cases run, seconds, findings (one per label and input class)."""

    def __init__(self, spec, seed, cases, seconds, findings, declined=0, first_decline=""):
        self.spec, self.seed, self.cases, self.seconds, self.findings = spec, seed, cases, seconds, findings
        self.declined = declined
        self.first_decline = first_decline

    @property
    def judged(self):
        return self.cases - self.declined

    @property
    def declined_count(self):
        return self.declined

    def __repr__(self):
        return (f"<normcheck.FuzzResult {self.spec}: {self.cases} cases, seed {self.seed}, "
                f"{len(self.findings)} findings, {self.declined} declined>")


def fuzz(fn, spec, cases=None, seconds=None, seed=None, out_dir="normcheck-findings", tensors=None, domain="",
         shrink_seconds=20.0, max_findings=12, quiet=False, shapes=None, device=None):
    """A fuzz campaign on fn (check()'s arguments): cases drawn as
    `normcheck fuzz` draws them for a kernel of the spec (case c of the seed),
    each new (label, input class) shrunk through fn and saved in out_dir as a
    problem file that normcheck.replay(fn, FILE) (and `normcheck check --input
    FILE` on a kernel of the spec) replays. cases and seconds both bound the
    run (neither: 101 cases). Prints its seed on stderr unless quiet."""
    if cases is None and seconds is None:
        cases = 101
    h, fn = _harness(fn, spec, tensors, domain, shapes, device)
    seed = _normcheck.seed(seed)
    if not quiet:
        print(f"normcheck.fuzz: seed {seed} (NORMCHECK_SEED={seed} or seed={seed} replays it), spec {h.spec}",
              file=sys.stderr)
    start = time.monotonic()
    findings, seen, c, declined, first_decline = [], set(), 0, 0, ""
    while (cases is None or c < cases) and (seconds is None or time.monotonic() - start < seconds):
        p = h.draw(seed, c)
        case = Case(c, p, h.run(p), h.spec)
        declined += bool(case.declined)
        first_decline = first_decline or case.declined
        key = (case.label, case.input_class)
        if case.label and key not in seen and len(findings) < max_findings:
            seen.add(key)
            shrunk = _shrink(h, case, shrink_seconds)
            path = _save(h, fn, shrunk, out_dir, [f"drawn as case {c} of seed {seed} (normcheck.fuzz)"])
            findings.append(Finding(case.label, case.input_class, shrunk, path, seed, c))
            if not quiet:
                print(f"normcheck.fuzz: {case.label} ({case.input_class}) on case {c}: {shrunk.worst_text()}\n"
                      f"    saved {path}", file=sys.stderr)
        c += 1
    result = FuzzResult(h.spec, seed, c, time.monotonic() - start, findings, declined, first_decline)
    if not quiet and result.nothing_judged():
        print(f"normcheck.fuzz: {h.spec}: {result.nothing_judged()}", file=sys.stderr)
    return result


def replay(fn, file, spec=None, tensors=None, device=None):
    """Runs fn on the problem(s) of a problem file (a finding fuzz or
    assert_within_bound saved, `normcheck judge`'s case-NNN.finding.txt, a
    corpus file) and returns check()'s result. spec: the file's nc.spec
    unless given."""
    file_spec, _ = _normcheck.read_problem_file(os.fspath(file))
    spec = spec or file_spec
    if spec is None:
        raise ValueError(f"{file}: a plain row file names no spec: pass spec=")
    return check(fn, spec, problems=[file], tensors=tensors, device=device)


# ---- which rounding policy ----

class Policy:
    """One candidate rounding policy: its spec text, the projects that ship it
    (name, may be ''), the output elements outside its admissible range, its own
    y's distance from exact math, and whether it is the declared one."""

    def __init__(self, d):
        self.policy, self.name, self.outside = d["policy"], d["name"], d["outside"]
        self.exact_math_ulp, self.consistent, self.declared = d["exact_math_ulp"], d["consistent"], d["declared"]

    def __repr__(self):
        return f"<normcheck.Policy {self.policy!r} {self.name!r} outside={self.outside}>"


class Identification:
    """identify()'s answer: every candidate policy (policies), those fn's
    outputs are consistent with (consistent), their names, fn's y against
    exact math, and the fault when fn raised. A quantized y's casts: the
    declared cast done each other way (casts: dicts of cast and consistent).
    splits: each candidate that admitted fn's outputs as the declared policy
    did, and whether a problem drawn to split the two was found and run
    (dicts of other, tries, found, problem); told_apart and cannot_tell_apart
    list their spec texts."""

    def __init__(self, spec, seed, d):
        self.spec, self.seed = spec, seed
        self.problems, self.declined = d["problems"], d["declined"]
        self.exact_math_ulp, self.fault = d["exact_math_ulp"], d["fault"]
        self.policies = [Policy(p) for p in d["policies"]]
        self.casts, self.splits = d["casts"], d["splits"]

    @property
    def told_apart(self):
        return [s["other"] for s in self.splits if s["found"]]

    @property
    def cannot_tell_apart(self):
        return [s["other"] for s in self.splits if not s["found"]]

    @property
    def consistent(self):
        return [p for p in self.policies if p.consistent] if not self.fault else []

    @property
    def names(self):
        return [p.name for p in self.consistent]

    def __repr__(self):
        if self.fault:
            return f"<normcheck.Identification {self.spec}: fn failed: {self.fault}>"
        return f"<normcheck.Identification {self.spec}: consistent with {[p.policy for p in self.consistent]}>"


def identify(fn, spec, cases=24, seed=None, max_d=1024, tensors=None, domain="", device=None):
    """Which rounding policy fn follows: fn run on `cases` problems (finite
    inputs, eps = 1e-6, d <= max_d; `normcheck identify`'s), its outputs held
    to every candidate policy of the spec (its rounding points' subsets)."""
    h, fn = _harness(fn, spec, tensors, domain, device=device)
    seed = _normcheck.seed(seed)
    return Identification(h.spec, seed, h.identify(cases, seed, max_d))


# ---- accuracy baselines ----

class AccuracyResult:
    """accuracy()'s figures on every input class's realistic rows: seed,
    figures (a dict per class and output: input_class, output, problems,
    declined, error_over_bound, error_over_tight, max_ulp,
    max_ulp_elementwise), failed (the classes in which a problem failed its
    bound or the tight standard), worse (the figures that grew past the
    factor: input_class, output, metric, before, after), notes, written
    (the baseline file was rewritten), judged and declined (problems)."""

    def __init__(self, spec, baseline, d):
        self.spec, self.baseline = spec, baseline
        self.seed, self.figures, self.failed = d["seed"], d["figures"], d["failed"]
        self.worse, self.notes, self.written = d["worse"], d["notes"], d["written"]
        self.judged, self.declined, self._first_decline = d["judged"], d["declined"], d["first_decline"]
        self._text = d["text"]

    @property
    def passed(self):
        """Something judged, no class failed, no figure worse than the baseline."""
        return self.judged > 0 and not self.failed and not self.worse

    def __bool__(self):
        return self.passed

    def message(self):
        """The figures, the failed classes and the comparison, as `normcheck accuracy` prints them."""
        if self.judged == 0:
            return (f"{self.spec}: nothing judged: declined {self.declined} of {self.declined} problems: "
                    f"{self._first_decline}")
        return f"{self.spec}\n{self._text}"

    def __repr__(self):
        state = ("passed" if self.passed else "nothing judged" if self.judged == 0
                 else f"{len(self.failed)} classes failed, {len(self.worse)} figures worse")
        return f"<normcheck.AccuracyResult {self.spec}: {state}>"


def accuracy(fn, spec, baseline=None, update=None, worse_by=1.0, seed=None, name=None, tensors=None, domain="",
             device=None):
    """fn's accuracy figures on the realistic rows of every input class that
    applies to its spec (those on which `normcheck fuzz` rates a finding),
    as `normcheck accuracy` measures a plugin's kernel; the rows are fixed by
    the seed (the baseline's; else seed, else normcheck's fixed one).

    baseline: a file of figures. With update false, the figures are held to
    it: a figure that grows past worse_by times its value there is worse
    (result.worse) and the result does not pass. With update true (or, when
    update is None, the environment variable NORMCHECK_UPDATE_BASELINE=1)
    the file is rewritten with this run's figures, when something was judged
    and no class failed. name: fn's kernel name in the file ([a-z0-9_.]+;
    default: python. and the function's name), so that one file can hold
    several functions. A problem that fails its bound or the tight standard
    is a finding whatever the baseline (result.failed)."""
    if update is None:
        update = os.environ.get("NORMCHECK_UPDATE_BASELINE", "") == "1"
    h, fn = _harness(fn, spec, tensors, domain, device=device)
    if name is None:
        name = "python." + re.sub(r"[^a-z0-9_.]", "_", _fn_name(fn).lower())
    elif not re.fullmatch(r"[a-z0-9_.]+", name):
        raise ValueError(f"name {name!r}: a kernel's name is [a-z0-9_.]+")
    path = "" if baseline is None else os.path.abspath(os.fspath(baseline))
    if path and not update and not os.path.exists(path):
        raise FileNotFoundError(f"accuracy baseline {path} does not exist: write it once with update=True "
                                f"(or NORMCHECK_UPDATE_BASELINE=1) and commit it")
    seed = _normcheck.ACCURACY_SEED if seed is None else _normcheck.seed(seed)
    return AccuracyResult(h.spec, path or None, h.accuracy(name, path, bool(update), float(worse_by), seed))


def assert_accuracy(fn, spec, baseline, worse_by=1.0, seed=None, name=None, tensors=None, domain="", device=None):
    """accuracy() held to `baseline`, raising AssertionError with its figures,
    the classes that failed and the figures that got worse; returns the
    result when it passes. NORMCHECK_UPDATE_BASELINE=1 rewrites the file
    instead (and passes when nothing failed)."""
    __tracebackhide__ = True
    result = accuracy(fn, spec, baseline=baseline, worse_by=worse_by, seed=seed, name=name, tensors=tensors,
                      domain=domain, device=device)
    if result.passed:
        return result
    raise AssertionError(f"normcheck: {_fn_name(fn)}'s accuracy: " + result.message()) from None


# ---- pytest ----

def assert_within_bound(fn, spec, problems=None, cases=101, seed=None, tensors=None, domain="", out_dir=None,
                        shrink_seconds=10.0, shapes=None, device=None):
    """check() (the same arguments and defaults), raising AssertionError on
    the first finding: the finding shrunk through fn, saved as a problem file
    in out_dir (default: a new temporary directory), and a message giving its
    label, input class, the shrunk problem (eps, d, small inputs' values),
    the worst element (computed and exact, decimal and hex, the allowance),
    the rounding policies by name and spec, the file and how to replay it.
    Returns check()'s result when every case passes."""
    __tracebackhide__ = True  # pytest: the test's line and this message, not normcheck's frames
    result = check(fn, spec, problems=problems, cases=cases, seed=seed, tensors=tensors, domain=domain,
                   shapes=shapes, device=device)
    if result.passed:
        return result
    if not result.findings:  # every case declined: no verdict, which is not a pass
        raise AssertionError(f"normcheck: {_fn_name(result._fn)} on {result.spec}: {result.nothing_judged()}") from None
    first = result.findings[0]
    shrunk = _shrink(result._harness, first, shrink_seconds)
    if out_dir is None:
        out_dir = tempfile.mkdtemp(prefix="normcheck-")
    drawn = f"case {first.index} of seed {result.seed}" if result.seed is not None else f"given problem {first.index}"
    path = _save(result._harness, result._fn, shrunk, out_dir, [f"drawn as {drawn} (normcheck.assert_within_bound)"])
    smaller = shrunk.problem.cols < first.problem.cols or shrunk.problem.rows < first.problem.rows
    lines = [f"normcheck: {_fn_name(result._fn)} breaks {result.spec} on {drawn} "
             f"({len(result.findings)} of {len(result.cases)} cases with a finding"
             + (f", {len(result.declined)} declined" if result.declined else "") + ")",
             *("  " + line for line in shrunk.message().split("\n"))]
    if smaller:
        lines[1] += f" (shrunk from {first.problem.rows} x {first.problem.cols})"
    lines.append(f"  problem file: {path}")
    lines += ["  " + line for line in _replay_lines(path)]
    if result.seed is not None:
        lines.append(f"  the same cases: seed={result.seed} (or NORMCHECK_SEED={result.seed})")
    raise AssertionError("\n".join(lines)) from None
