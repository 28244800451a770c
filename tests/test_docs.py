"""The docs site builds strictly (a warning is an error), with every code block executed and
its printed output checked; its generated parts (supported numpy, the op table, the API
reference) cover the code; and a page whose example prints something else fails."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
import _execute  # noqa: E402
import hooks  # noqa: E402


@pytest.mark.slow
def test_the_docs_build_strictly_with_every_example_run(tmp_path):
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    seconds = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-6000:]
    site = tmp_path / "site"
    pages = sorted(site.rglob("index.html"))
    print(f"\ndocs: built in {seconds:.1f} s, {len(pages)} pages")
    api = (site / "api" / "index.html").read_text()
    for name in ("burnumba.grad", "burnumba.vmap", "burnumba.Tape", "burnumba.TracerBoolError"):
        assert name in api, name
    supported = (site / "supported" / "index.html").read_text()
    assert "linalg.norm" in supported and "logaddexp" in supported


PAGE = '''# A page

```python
x = 6 * 7
print(x)                 # 42
```

```pycon
>>> x + 1
43
```
'''


def test_a_page_that_prints_what_it_claims_passes():
    assert _execute.run_page("page.md", PAGE) == []


@pytest.mark.parametrize("wrong", [PAGE.replace("# 42", "# 41"), PAGE.replace("\n43\n", "\n44\n"),
                                   PAGE.replace("x = 6 * 7", "x = 6 * 7\nraise ValueError('no')")])
def test_a_wrong_output_or_an_error_fails(wrong):
    failures = _execute.run_page("page.md", wrong)
    assert failures and "page.md" in failures[0]


def test_blocks_inside_list_items_are_found():
    text = "* a list item:\n\n  ```python\n  print(1)  # 1\n  ```\n"
    assert _execute.blocks(text) == [("python", "print(1)  # 1\n", 3)]


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in hooks.pages():
        assert page.replace(os.sep, "/") in nav, page


def test_the_supported_numpy_list_names_every_table_entry(monkeypatch):
    """Every entry of burnumba.numpy's dispatch tables is in the generated list, by numpy's
    public name (so a function added to dispatch.FUNCTIONS by any branch shows up, e.g.
    numpy.linalg.norm as `linalg.norm`)."""
    import numpy as np

    from burnumba.tools import supported as _supported
    from burnumba.tracing import dispatch
    from burnumba.tracing.tracer import supported_methods
    generated = hooks.supported_numpy()
    for uf in dispatch.UFUNCS:
        assert f"`{uf.__name__}" in generated, uf
    for uf in dispatch.ACCUMULATE:
        assert f"`{uf.__name__}.accumulate`" in generated, uf
    for f in dispatch.FUNCTIONS:
        assert f"`{_supported._public_name(f)}" in generated, f
    for m in supported_methods():
        assert f"`{m}`" in generated, m
        assert hasattr(np.ndarray, m)
    monkeypatch.setattr(dispatch, "FUNCTIONS", {**dispatch.FUNCTIONS, np.cumsum: None})
    assert "`cumsum`" in hooks.supported_numpy()


def test_the_op_table_page_has_every_row():
    from burnumba.kernels import ROWS
    table = hooks.op_table()
    for row in ROWS:
        assert f"| `{row.name}` | {row.kind} | {row.arity} |" in table, row.name
    assert "`g * (1.0 - y * y)`" in table          # tanh's derivative, read from its row


def test_the_api_reference_has_every_public_name():
    import burnumba
    generated = hooks.api("burnumba")
    for name in burnumba.__all__:
        if name not in ("numpy", "nn", "optim", "data"):     # pages of their own
            # kernels' names (precompile, KernelError) are written from the live object
            assert (f"::: burnumba.{name}\n" in generated
                    or f"## `burnumba.{name}`" in generated), name
    for module in ("nn", "optim", "data", "distributed"):
        page = (ROOT / "docs" / "api" / f"{module}.md").read_text()
        assert f"<!-- generated:api:burnumba.{module} -->" in page
        assert hooks.api(f"burnumba.{module}"), module
