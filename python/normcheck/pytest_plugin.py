"""A pytest fixture for normcheck (docs/python.md): in a conftest.py,

    pytest_plugins = ["normcheck.pytest_plugin"]

(or `pytest -p normcheck.pytest_plugin`), then in a test

    def test_my_rmsnorm(normcheck_check):
        normcheck_check(my_rmsnorm, "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16")

normcheck_check is normcheck.assert_within_bound with the test's tmp_path as
the directory of the finding's problem file.
"""

import pytest

import normcheck


@pytest.fixture
def normcheck_check(tmp_path):
    def check(fn, spec, **kwargs):
        kwargs.setdefault("out_dir", tmp_path)
        return normcheck.assert_within_bound(fn, spec, **kwargs)
    return check
