"""The Python door as a PyTorch kernel author uses it (docs/python.md): torch's
argument names, one usage error for a signature or return normcheck cannot
use, findings' messages, shapes, modules and devices, pytest's fixture and
marker, and the replay of a saved finding with `normcheck check`.

Every verdict is evaluate()'s (no tolerance here). Random cases come from
SEED: NORMCHECK_SEED when set, else normcheck's default.
"""

import json
import os
import struct
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import hf_norms as hf
import normcheck
import normcheck.torch
from door_specs import GEMMA, LAYERNORM, LAYERNORM_BF16, LLAMA, RMSNORM, SEED


def realistic(d, rows=4):
    """Transformer activations: rows of c + N(0, 1), c in [-10, 10]; gamma
    1 + 0.1 N, beta 0.1 N; eps 1e-5 (nn.LayerNorm's), drawn from SEED."""
    rng = np.random.default_rng(SEED)
    x = rng.uniform(-10, 10, (rows, 1)) + rng.standard_normal((rows, d))
    return {"x": x, "gamma": 1 + 0.1 * rng.standard_normal(d), "beta": 0.1 * rng.standard_normal(d), "eps": 1e-5}


def labels(result):
    return sorted({c.label for c in result.findings})


def run_cli(*args):
    return subprocess.run([os.environ["NORMCHECK_CLI"], *args], capture_output=True, text=True, timeout=300)


# ---- 1. bound by its signature ----

def test_torch_argument_names_work_unchanged():
    def ln(x, weight, bias, eps):  # as a torch author names them
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)

    result = normcheck.check(ln, LAYERNORM, problems=[realistic(768)])
    assert result.passed, result.summary()
    # F.layer_norm itself: input, normalized_shape, weight, bias, eps; torch tensors told from what it accepts
    result = normcheck.check(F.layer_norm, LAYERNORM, problems=[realistic(768), realistic(4096)])
    assert result.passed, result.summary()


def test_hugging_face_names_and_positional_only():
    def rms(hidden_states, weight, variance_epsilon, /):
        return hf.as_fn(hf.LlamaRMSNorm)(hidden_states, weight, variance_epsilon)

    result = normcheck.check(rms, LLAMA, cases=16, seed=SEED)
    assert result.passed, result.summary()


def test_a_wrong_signature_is_one_usage_error():
    def no_weight(x, eps):
        return x
    with pytest.raises(normcheck.UsageError, match=r"no parameter for gamma \(gamma or weight\)") as raised:
        normcheck.check(no_weight, LLAMA, cases=101, seed=SEED)
    assert "expected fn(x, gamma, eps) -> y" in str(raised.value)

    def unknown(x, gamma, eps, stream):
        return x
    with pytest.raises(normcheck.UsageError, match="'stream' without a default"):
        normcheck.check(unknown, LLAMA, cases=101, seed=SEED)

    def both(x, gamma, weight, eps):
        return x
    with pytest.raises(normcheck.UsageError, match="both 'gamma' and 'weight'"):
        normcheck.check(both, LLAMA, cases=101, seed=SEED)


def test_torch_function_given_numpy_is_one_usage_error_and_is_detected_without_tensors():
    def torch_rms(x, gamma, eps):  # a torch function: numpy arrays have no .float()
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * gamma).to(x.dtype)

    with pytest.raises(normcheck.UsageError, match="AttributeError") as raised:
        normcheck.check(torch_rms, RMSNORM, cases=101, seed=SEED, tensors="numpy")
    assert "numpy tensors" in str(raised.value) and "expected fn(x, gamma, eps) -> y" in str(raised.value)
    # tensors not given: torch tensors, since the function takes no numpy arrays
    result = normcheck.check(torch_rms, RMSNORM, cases=32, seed=SEED, domain="finite")
    assert "exception" not in labels(result), result.summary()


def test_a_numpy_function_may_return_a_tensor_and_a_float64_return_is_one_error():
    def numpy_in_torch_out(x, gamma, eps):
        r = 1 / np.sqrt(np.mean(x * x, axis=1, keepdims=True, dtype=np.float32) + np.float32(eps))
        return torch.from_numpy((x * r * gamma).astype(np.float32))
    result = normcheck.check(numpy_in_torch_out, RMSNORM, cases=16, seed=SEED, domain="finite")
    assert "exception" not in labels(result), result.summary()

    def float64_out(x, gamma, eps):
        return x.astype(np.float64)
    with pytest.raises(normcheck.OutputError, match="float64"):
        normcheck.check(float64_out, RMSNORM, cases=101, seed=SEED)


def test_numpy_warnings_are_silenced_inside_normcheck_calls():
    def numpy_rms(x, gamma, eps):  # NaN and inf rows of the default domain make numpy warn
        r = np.float32(1) / np.sqrt(np.mean(x * x, axis=1, keepdims=True, dtype=np.float32) + np.float32(eps))
        return (x * r) * gamma
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would be an exception finding
        result = normcheck.check(numpy_rms, RMSNORM, cases=101, seed=SEED)
    assert "exception" not in labels(result), result.summary()


# ---- 2. messages ----

def test_a_finding_message_holds_class_eps_problem_policy_and_python_replay(tmp_path):
    with pytest.raises(AssertionError) as raised:
        normcheck.assert_within_bound(hf.as_fn(hf.LlamaRoundsOnce), LLAMA, cases=64, seed=SEED, out_dir=tmp_path)
    message = str(raised.value)
    print(message)
    assert "policy_mismatch in input class " in message
    assert "problem: " in message and "eps = " in message and "(d = " in message
    assert "x[0] = [" in message and "hex [" in message  # the shrunk input, decimal and hex
    assert "worst: y[row " in message and "exact " in message and "(0x" in message
    assert "the spec's rounding policy: x r rounded before the weight (Hugging Face LlamaRMSNorm" in message
    assert f"({LLAMA})" in message
    assert "its outputs follow: one rounding at the output" in message
    path = next(tmp_path.iterdir())
    assert f"replay: normcheck.replay(fn, '{path}')" in message
    assert "..." not in message
    assert len(message.splitlines()) < 20


def test_summary_counts_declined_cases_and_why():
    x = np.array([[4.0, -3.0, 1.0]], dtype=np.float32)
    result = normcheck.check(hf.as_fn(hf.LlamaRMSNorm), LLAMA, domain="|x|<=2",
                             problems=[{"x": x}, {"x": x / 4}])
    assert result.passed and len(result.declined) == 1
    summary = result.summary()
    assert "1 declined, not judged: " in summary and "outside the kernel's declared domain |x|<=2 (1)" in summary
    assert "..." not in summary


def test_bf16_draws_stay_inside_the_domain_once_rounded():
    """x drawn inside |x| <= 2^62/sqrt(d) may round past it in bf16: such a
    draw is replaced (harness_draw.h), so no drawn case is declined."""
    result = normcheck.check(hf.as_fn(hf.LlamaRMSNorm), LLAMA, cases=101, seed=SEED)
    assert not result.declined, result.summary()
    assert "declined" not in result.summary()


# ---- 3. a saved finding replays with `normcheck check` on the table's kernels ----

def test_check_replays_a_stats_none_file_on_table_kernels(tmp_path):
    def unbiased(x, gamma, beta, eps):
        return hf.layernorm_unbiased(x, gamma, beta, eps)
    found = normcheck.fuzz(unbiased, LAYERNORM, cases=16, seed=SEED, out_dir=tmp_path, quiet=True,
                           shrink_seconds=5)
    assert found.findings
    replay = run_cli("check", "--input", found.findings[0].file)
    assert replay.returncode == 0, replay.stdout + replay.stderr  # the table's LayerNorms pass the problem
    assert "layernorm_fwd.twopass" in replay.stdout


def test_check_says_why_no_table_kernel_replays_a_file(tmp_path):
    found = normcheck.fuzz(hf.as_fn(hf.LlamaRoundsOnce), LLAMA, cases=32, seed=SEED, out_dir=tmp_path,
                           quiet=True, shrink_seconds=5)
    replay = run_cli("check", "--input", found.findings[0].file)
    assert replay.returncode == 2
    assert "has the problem file's spec" in replay.stderr and "--kernel NAME" in replay.stderr


# ---- 4. shapes ----

def test_cases_are_drawn_at_the_shapes_given():
    shapes = [(3, 4097), (2, 64), (1, 5)]
    result = normcheck.check(hf.as_fn(hf.LlamaRMSNorm), LLAMA, cases=12, seed=SEED, shapes=shapes)
    assert result.passed, result.summary()
    drawn = {(c.problem.rows, c.problem.cols) for c in result.cases}
    assert drawn <= set(shapes) and len(drawn) > 1
    seed, ps = normcheck.problems(LLAMA, cases=6, seed=SEED, shapes=[(2, 7)])
    assert {(p.rows, p.cols) for p in ps} == {(2, 7)}
    with pytest.raises(ValueError, match="outside the domain"):
        normcheck.check(hf.as_fn(hf.LlamaRMSNorm), LLAMA, cases=1, shapes=[(2, 16)], domain="d<=8")
    with pytest.raises(ValueError, match="rows and cols"):
        normcheck.check(hf.as_fn(hf.LlamaRMSNorm), LLAMA, cases=1, shapes=[(0, 16)])


def safetensors_shapes(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    return {k: tuple(v["shape"]) for k, v in header.items() if k != "__metadata__"}


def test_gen_draws_at_the_shapes_given(tmp_path):
    out = run_cli("gen", "--spec", LLAMA, "--out", str(tmp_path / "cases"), "--cases", "8", "--seed", str(SEED),
                  "--shape", "3x17", "--shape", "2x5")
    assert out.returncode == 0, out.stderr
    shapes = {safetensors_shapes(p)["x"] for p in (tmp_path / "cases").glob("case-*.inputs.safetensors")}
    assert shapes == {(3, 17), (2, 5)}
    bad = run_cli("gen", "--spec", LLAMA, "--out", str(tmp_path / "bad"), "--shape", "3by17")
    assert bad.returncode == 2 and "ROWSxCOLS" in bad.stderr


# ---- 5. modules and devices ----

def test_check_module_nn_layernorm_float32_at_user_shapes():
    ln = torch.nn.LayerNorm(768)
    result = normcheck.torch.check_module(ln, LAYERNORM, problems=[realistic(768, rows=7)])
    assert result.passed, result.summary()
    # drawn at the user's shapes, its findings are those of torch's float32 layer_norm
    # (test_python_module.py): rows that cancel, and subnormal squares
    drawn = normcheck.torch.check_module(ln, LAYERNORM, shapes=[(8, 768), (3, 768)], cases=24, seed=SEED)
    assert {c.input_class for c in drawn.findings} <= {"mean_sigma_ge_1e5", "subnormal"}, drawn.summary()


def test_check_module_nn_layernorm_bf16_is_flagged_on_this_cpu():
    """torch 1.13's CPU LayerNorm on bf16 tensors (test_python_module.py:
    F.layer_norm) is outside the bound of a LayerNorm rounded once at y: the
    module is judged, with accuracy findings, not a usage error."""
    ln = torch.nn.LayerNorm(768).to(torch.bfloat16)
    result = normcheck.torch.check_module(ln, LAYERNORM_BF16, problems=[realistic(768, rows=8)])
    assert labels(result) == ["accuracy"], result.summary()


def test_check_module_hf_rmsnorm_bf16_at_user_shapes():
    llama = hf.LlamaRMSNorm(4096).to(torch.bfloat16)
    before = llama.weight.detach().clone()
    result = normcheck.torch.check_module(llama, LLAMA, shapes=[(8, 4096), (3, 4096)], cases=12, seed=SEED)
    assert result.passed, result.summary()
    assert {c.problem.cols for c in result.cases} == {4096}
    assert torch.equal(llama.weight, before) and llama.variance_epsilon == 1e-6  # restored


def test_check_module_catches_a_broken_module():
    broken = hf.LlamaRoundsOnce(64).to(torch.bfloat16)
    result = normcheck.torch.check_module(broken, LLAMA, cases=24, seed=SEED)
    assert "policy_mismatch" in labels(result)
    assert {(c.problem.rows, c.problem.cols) for c in result.cases} <= {(1, 64), (4, 64), (7, 64)}


def test_module_usage_errors():
    with pytest.raises(normcheck.UsageError, match="weight is torch.float32, the spec's gamma torch.bfloat16"):
        normcheck.torch.check_module(hf.LlamaRMSNorm(64), LLAMA, cases=101, seed=SEED)
    with pytest.raises(normcheck.UsageError, match=r"every shape is \(rows, 64\)"):
        normcheck.torch.check_module(hf.LlamaRMSNorm(64), LLAMA, shapes=[(2, 32)])
    with pytest.raises(normcheck.UsageError, match="no parameter for beta"):
        normcheck.torch.check_module(hf.LlamaRMSNorm(64), LAYERNORM, cases=101)


def test_device_for_a_plain_function():
    seen = set()

    def on_device(x, gamma, eps):
        seen.add(str(x.device))
        return hf.as_fn(hf.LlamaRMSNorm)(x, gamma, eps)
    result = normcheck.check(on_device, LLAMA, cases=8, seed=SEED, device="cpu")
    assert result.passed and seen == {"cpu"}
    with pytest.raises(ValueError, match="device"):
        normcheck.check(on_device, RMSNORM, cases=1, device="cpu", tensors="numpy")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU visible: the CUDA path is not run here")
def test_device_cuda_module_and_function():
    llama = hf.LlamaRMSNorm(1024).to(torch.bfloat16).cuda()
    result = normcheck.torch.check_module(llama, LLAMA, shapes=[(8, 1024)], cases=12, seed=SEED, device="cuda")
    assert result.passed, result.summary()


# ---- 6. pytest as users write it ----

PYTEST_FILE = """
    import pytest, hf_norms as hf

    GEMMA = "rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma stats=none"

    def test_broken(normcheck_check):
        normcheck_check(hf.as_fn(hf.GemmaWeightNotOnePlus), GEMMA)

    @pytest.mark.normcheck(cases=5)
    @pytest.mark.parametrize("d", [64, 4097])
    def test_marker_and_shapes(normcheck_check, d):
        result = normcheck_check(hf.as_fn(hf.GemmaRMSNorm), GEMMA, shapes=[(3, d)])
        assert len(result.cases) == 5 and {c.problem.cols for c in result.cases} == {d}

    def test_defaults(normcheck_check, request):
        result = normcheck_check(hf.as_fn(hf.GemmaRMSNorm), GEMMA)
        assert len(result.cases) == 101 and result.seed == 7 and result.domain.endswith("sigma>=2^-63")
"""


def test_pytest_failure_is_short_and_the_fixture_has_its_defaults(tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent(PYTEST_FILE))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]))
    env.pop("NORMCHECK_SEED", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "normcheck.pytest_plugin", "-p", "no:cacheprovider",
                          "--normcheck-seed", "7", str(tmp_path)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    assert "1 failed, 3 passed" in out, out
    assert "normcheck: seed 7" in out  # the header
    failure = out[out.index("_ test_broken _"):out.index("short test summary")]
    assert "normcheck: GemmaWeightNotOnePlus breaks" in failure and "seed=7" in failure
    assert "def assert_within_bound" not in failure and "normcheck/__init__.py" not in failure
    assert len(failure.splitlines()) < 40, failure


def test_a_report_replays_its_findings_in_python(tmp_path):
    result = normcheck.check(hf.as_fn(hf.LlamaRoundsOnce), LLAMA, cases=16, seed=SEED)
    assert result.findings
    result.report(tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text()
    first = tmp_path / "report" / "findings" / f"case-{result.findings[0].index}.finding.txt"
    assert f"replay: normcheck.replay(fn, '{first}')" in md
    assert labels(normcheck.replay(hf.as_fn(hf.LlamaRoundsOnce), first)) == ["policy_mismatch"]


def test_fuzz_module_saves_a_finding_that_replays_on_the_module(tmp_path):
    broken = hf.LlamaRoundsOnce(64).to(torch.bfloat16)
    result = normcheck.torch.fuzz_module(broken, LLAMA, cases=24, seed=SEED, out_dir=tmp_path, quiet=True,
                                         shrink_seconds=5)
    finding = next(f for f in result.findings if f.label == "policy_mismatch")
    assert finding.case.problem.cols == 64  # a module's d is its weight's: shrinking keeps it
    assert labels(normcheck.replay(normcheck.torch.module_fn(broken), finding.file)) == ["policy_mismatch"]


# Nothing judged is never a pass (docs/cli.md): a spec evaluate() does not
# judge (a forward that sums in bf16) has every case declined; check() does
# not pass, its summary says why, and the assertion helper and fuzz() say so.
def test_nothing_judged_is_never_a_pass():
    spec = "rmsnorm fwd acc=bf16 stats=none"

    def rms(x, weight, eps):
        return x.copy()

    result = normcheck.check(rms, spec, cases=5, seed=1)
    assert not result.passed and result.judged == 0
    reason = "nothing judged: declined 5 of 5 cases: evaluate() judges no forward spec with 'acc='"
    assert reason in result.summary()
    with pytest.raises(AssertionError, match="nothing judged: declined 5 of 5 cases"):
        normcheck.assert_within_bound(rms, spec, cases=5, seed=1)
    fuzzed = normcheck.fuzz(rms, spec, cases=5, seed=1, quiet=True)
    assert not fuzzed.passed and fuzzed.nothing_judged().startswith("nothing judged: declined 5 of 5 cases")
