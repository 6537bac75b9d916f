"""Accuracy baselines from Python (docs/python.md, "Accuracy baselines"):
normcheck.accuracy() measures a function on every input class's realistic
rows and writes or holds a baseline file; a function that regresses (its mean
square rounded to and summed in float16) is worse than the float32
function's baseline and fails its bound and the tight standard; the
correct function passes its own. The rows are fixed by the baseline's seed,
so none of this depends on NORMCHECK_SEED.
"""

import numpy as np
import pytest
import torch

import normcheck
from door_specs import LAYERNORM, RMSNORM


def rmsnorm(x, gamma, eps):
    """float32 RMSNorm: the mean square summed pairwise in float32 (numpy)."""
    ms = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return (x / np.sqrt(ms + np.float32(eps)) * gamma).astype(np.float32)


def rmsnorm_f16_mean_square(x, gamma, eps):
    """The regression: the mean square accumulated in float16."""
    ms = np.mean((x * x).astype(np.float16), axis=-1, keepdims=True, dtype=np.float16).astype(np.float32)
    return (x / np.sqrt(ms + np.float32(eps)) * gamma).astype(np.float32)


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "accuracy.txt"
    written = normcheck.accuracy(rmsnorm, RMSNORM, baseline=path, update=True, name="my.rmsnorm")
    assert written.written and written.passed, written.message()
    return path


def test_a_function_passes_its_own_baseline(baseline):
    text = baseline.read_text()
    assert "# seed " in text and "my.rmsnorm d_257_4096 all " in text
    result = normcheck.accuracy(rmsnorm, RMSNORM, baseline=baseline, name="my.rmsnorm")
    assert result.passed, result.message()
    assert result.judged > 0 and not result.worse and not result.failed
    classes = {f["input_class"] for f in result.figures}
    assert {"d_1_16", "d_257_4096", "d_gt_4096"} <= classes
    assert "mean_sigma_10_1e3" not in classes  # RMSNorm does not subtract the mean: no conditioning band
    assert "no figure got worse than " in result.message()


def test_a_regressed_function_is_worse_and_fails_the_tight_standard(baseline):
    result = normcheck.accuracy(rmsnorm_f16_mean_square, RMSNORM, baseline=baseline, name="my.rmsnorm",
                                worse_by=2)
    assert not result.passed
    grown = {(w["input_class"], w["metric"]) for w in result.worse}
    assert ("d_257_4096", "error/tight") in grown, result.message()
    assert "d_257_4096" in result.failed, result.message()
    with pytest.raises(AssertionError, match=r"got worse than .* by more than 2x"):
        normcheck.assert_accuracy(rmsnorm_f16_mean_square, RMSNORM, baseline, worse_by=2, name="my.rmsnorm")
    # The correct function under assert_accuracy passes and returns its result.
    assert normcheck.assert_accuracy(rmsnorm, RMSNORM, baseline, name="my.rmsnorm").passed


def test_a_missing_baseline_says_how_to_write_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="update=True"):
        normcheck.accuracy(rmsnorm, RMSNORM, baseline=tmp_path / "none.txt")


def test_the_environment_rewrites_a_baseline(tmp_path, monkeypatch):
    path = tmp_path / "b.txt"
    monkeypatch.setenv("NORMCHECK_UPDATE_BASELINE", "1")
    assert normcheck.accuracy(rmsnorm, RMSNORM, baseline=path).written
    assert "python.rmsnorm d_1_16 all " in path.read_text()
    # A failing function's figures are never written.
    failing = normcheck.accuracy(rmsnorm_f16_mean_square, RMSNORM, baseline=tmp_path / "f.txt")
    assert failing.failed and not failing.written
    assert not (tmp_path / "f.txt").exists()


def test_a_module_of_one_width_declines_the_other_widths(tmp_path):
    module = torch.nn.LayerNorm(768)
    result = normcheck.accuracy(module, LAYERNORM, baseline=tmp_path / "ln.txt", update=True)
    assert result.passed and result.written, result.message()
    by_class = {f["input_class"]: f for f in result.figures if f["output"] == "all"}
    assert by_class["d_257_4096"]["problems"] > 0 and by_class["d_257_4096"]["declined"] > 0
    assert by_class["d_1_16"]["problems"] == 0
