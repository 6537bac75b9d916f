"""normcheck in pytest (docs/python.md, "In pytest"): in a conftest.py

    pytest_plugins = ["normcheck.pytest_plugin"]

(or `pytest -p normcheck.pytest_plugin`), then in a test

    def test_my_rmsnorm(normcheck_check):
        normcheck_check(my_rmsnorm, "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none")

The fixture normcheck_check is normcheck.assert_within_bound with check()'s
defaults (101 cases) but the realistic domain (domain="realistic": the inputs
of a trained model's norm, docs/plugins.md), the test's tmp_path as the
directory of the finding's problem file, and the seed of the run: the option
--normcheck-seed, else NORMCHECK_SEED, else normcheck's default, printed in
pytest's header. The marker @pytest.mark.normcheck(cases=..., domain=...,
shapes=..., ...) sets the fixture's defaults for a test (or a class or
module, with pytestmark); the fixture's own arguments override them.
"""

import pytest

import normcheck


def pytest_addoption(parser):
    parser.addoption("--normcheck-seed", default=None,
                     help="seed of normcheck's random cases (default: NORMCHECK_SEED, else 20261127)")


def pytest_configure(config):
    config.addinivalue_line("markers", "normcheck(**kwargs): defaults of the normcheck_check fixture for the test "
                                       "(cases, seed, domain, shapes, tensors, device, ...)")


def _seed(config):
    return normcheck._normcheck.seed(config.getoption("--normcheck-seed"))


def pytest_report_header(config):
    seed = _seed(config)
    return f"normcheck: seed {seed} (--normcheck-seed={seed} or NORMCHECK_SEED={seed} draws the same cases)"


@pytest.fixture
def normcheck_check(request, tmp_path):
    defaults = {"out_dir": tmp_path, "seed": _seed(request.config), "domain": "realistic"}
    for marker in reversed(list(request.node.iter_markers("normcheck"))):  # the closest marker last: it wins
        defaults.update(marker.kwargs)

    def check(fn, spec, **kwargs):
        __tracebackhide__ = True
        return normcheck.assert_within_bound(fn, spec, **{**defaults, **kwargs})
    return check
