"""The README's code runs as written: every ```python block, in a fresh process, in a
temporary folder. A line ``print(...)  # expected`` claims an output: the printed line must
match the comment (up to a ';', which starts prose). The two commands are what .ci/run runs
(tests/test_repo.py). The docs' pages are run the same way by tests/test_docs.py."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")


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
    assert len(BLOCKS) >= 1


@pytest.mark.slow
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


def test_the_headline_table_is_the_committed_run():
    """The README's table of ratios is what bench/_headline.py makes of the run committed in
    docs/benchmarks/data (the run the docs' benchmark page shows), never typed by hand:
    after a new run of bench/report.py, `python bench/_headline.py --write` updates it."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import _headline
    text = open(README, encoding="utf-8").read()
    assert _headline.readme_section(text) == _headline.markdown(_headline.DATA), (
        "README.md's headline table is not the committed run's: run "
        "`.venv/bin/python bench/_headline.py --write`")


def test_the_readme_fits_a_newcomer():
    assert len(open(README, encoding="utf-8").read().splitlines()) <= 250
