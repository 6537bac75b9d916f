"""Every `python` block of docs/python.md runs (the page's promise): in
order, in one namespace, in a temporary directory, as a reader would paste
them. A block's info string says how:

    ```python                 run
    ```python needs=cuda,X    run when a GPU is visible and module X imports, else skipped
    ```python conftest        written as conftest.py for the pytest blocks
    ```python pytest          written as a test file and run by pytest, which must pass

Blocks of other languages (sh, text) are not run.
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest
import torch

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def blocks():
    text = open(DOC).read()
    found = re.findall(r"^```python([^\n]*)\n(.*?)^```$", text, flags=re.M | re.S)
    return [(info.split(), code) for info, code in found]


def missing(needs):
    for need in needs:
        if need == "cuda":
            if not torch.cuda.is_available():
                return "no GPU visible"
        elif importlib.util.find_spec(need) is None:
            return f"no module {need}"
    return None


BLOCKS = blocks()


@pytest.fixture(scope="module")
def namespace(tmp_path_factory):
    where = tmp_path_factory.mktemp("docs")
    before = os.getcwd()
    os.chdir(where)
    yield {"__name__": "docs_python_md"}, where
    os.chdir(before)


def test_the_page_has_its_blocks():
    assert len(BLOCKS) >= 12 and any("pytest" in info for info, _ in BLOCKS)


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_block(index, namespace):
    info, code = BLOCKS[index]
    ns, where = namespace
    needs = [n for word in info if word.startswith("needs=") for n in word[len("needs="):].split(",")]
    if reason := missing(needs):
        pytest.skip(reason)
    if "conftest" in info:
        (where / "conftest.py").write_text(code)
        return
    if "pytest" in info:
        (where / f"test_block{index}.py").write_text(code)
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"test_block{index}.py"],
                             cwd=where, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        return
    exec(compile(code, f"docs/python.md block {index}", "exec"), ns)
