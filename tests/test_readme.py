"""The README's code runs as written: every ```python block, in a fresh process, in a
temporary folder. A line ``print(...)  # expected`` claims an output: the printed line must
match the comment (up to a ';', which starts prose). The two commands are what .ci/run runs
(tests/test_repo.py)."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def python_blocks():
    text = open(README).read()
    return [(m.start(), textwrap.dedent(m.group(1)))
            for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


def claims(code):
    """[(line number, expected text)] for each print with an output in its comment."""
    out = []
    for k, line in enumerate(code.splitlines()):
        m = re.match(r"\s*print\(.*\)\s+#\s*(.+)$", line)
        if m:
            out.append((k, m.group(1).split(";")[0].strip()))
    return out


BLOCKS = python_blocks()


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("offset, code", BLOCKS, ids=[f"at-char-{o}" for o, _ in BLOCKS])
def test_readme_block_runs_and_prints_what_it_claims(offset, code, tmp_path):
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip().splitlines()
    expected = claims(code)
    assert len(printed) >= len(expected), (printed, expected)
    for (line, want), got in zip(expected, printed[-len(expected):] if expected else []):
        assert got.startswith(want) or got == want, f"line {line}: printed {got!r}, " \
                                                   f"the README says {want!r}"


def test_the_supported_numpy_list_matches_the_tables():
    """The README's *Supported numpy* list is generated from burnumba.numpy's dispatch tables
    and the methods of a traced array: a function, ufunc or method added to them (or removed)
    without rerunning the generator fails here."""
    from burnumba.tools import supported as _supported
    with open(README, encoding="utf-8") as f:
        section = _supported.readme_section(f.read())
    assert section is not None, "README.md lost the supported-numpy markers"
    assert section == _supported.markdown(), (
        "README.md's supported-numpy list is stale: run "
        "`.venv/bin/python -m burnumba.tools.supported --write`")


def test_the_supported_numpy_list_names_every_table_entry(monkeypatch):
    """Every table entry is in the generated list, by numpy's public name (so a function
    added to dispatch.FUNCTIONS by any branch shows up, e.g. numpy.linalg.norm as `linalg.norm`)."""
    import numpy as np

    from burnumba.tools import supported as _supported
    from burnumba.tracing import dispatch
    from burnumba.tracing.tracer import supported_methods
    generated = _supported.markdown()
    for uf in dispatch.UFUNCS:
        assert f"`{uf.__name__}" in generated, uf
    for f in dispatch.FUNCTIONS:
        assert f"`{_supported._public_name(f)}" in generated, f
    for m in supported_methods():
        assert f"`{m}`" in generated, m
        assert hasattr(np.ndarray, m)
    # an entry another branch adds appears without touching the generator
    monkeypatch.setattr(dispatch, "FUNCTIONS", {**dispatch.FUNCTIONS, np.linalg.norm: None,
                                                 np.cumsum: None})
    assert "`linalg.norm`" in _supported.markdown() and "`cumsum`" in _supported.markdown()
