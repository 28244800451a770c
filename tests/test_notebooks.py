"""Every notebook in notebooks/ runs top to bottom without raising, and its stored outputs are
what it prints today.

Each notebook is executed with nbclient in a fresh ``python3`` kernel, with the notebooks
folder as the working directory. ipykernel's ``python3`` kernelspec launches ``python -m
ipykernel_launcher``, and jupyter_client replaces that ``python`` with ``sys.executable``;
a check cell appended to the in-memory copy of each notebook confirms that the kernel ran in
this test's Python environment (so it imported this checkout of burnumba).

The notebooks are stored with their outputs, so a reader browsing the repository sees the
results and plots. A cell's text output must equal the stored one (images are not compared,
nor cells tagged ``varies``: timings, versions). A cell tagged ``float32`` prints numbers of a
float32 training run, whose last bits depend on the CPU (its BLAS kernels' order of
additions: AMD's and Intel's differ), and 400 steps carry them into the third digit: its
text must be the same with every number within 5% of the stored one. Refresh them all with

    .venv/bin/python tests/test_notebooks.py --update
"""
import json
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT = 600          # seconds; a cold compile of the kernels takes a few seconds
VARIES = "varies"           # cell tag: outputs that differ from run to run
FLOAT32 = "float32"         # cell tag: numbers of a float32 run, compared at RTOL_FLOAT32
RTOL_FLOAT32 = 0.05
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")
# where an error message points into a notebook cell: a path that changes with every kernel
CELL_PATH = re.compile(r"/tmp/ipykernel_\d+/\d+\.py:\d+")
ENV_MARK = "BURNUMBA_NOTEBOOK_ENV="
ANSI = re.compile(r"\x1b\[[0-9;]*m")     # IPython colours its tracebacks

# An empty parameter list would make pytest skip the test; a sentinel makes it fail instead.
PARAMS = [pytest.param(p, id=p.name) for p in NOTEBOOKS] or [
    pytest.param(None, id="no-notebooks-found")]

ENV_CHECK = f"""
import json as _json, os as _os, sys as _sys
print({ENV_MARK!r} + _json.dumps({{"executable": _sys.executable, "prefix": _sys.prefix,
                                  "cwd": _os.getcwd()}}))
"""


def _same_outputs(old, new):
    """Whether a cell prints what it printed when stored: the same text, or for a cell tagged
    ``float32`` the same text around numbers within RTOL_FLOAT32 of the stored ones."""
    a, b = _outputs(old), _outputs(new)
    if FLOAT32 not in old.metadata.get("tags", []):
        return a == b
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    return all(abs(float(y) - float(x)) <= RTOL_FLOAT32 * abs(float(x))
               for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)))


def _failing_cell(nb):
    """Index of the first code cell with an error output, or None."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and any(o.get("output_type") == "error"
                                            for o in cell.get("outputs", [])):
            return index
    return None


def _kernel_env(nb):
    for output in nb.cells[-1].get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(ENV_MARK):
                return json.loads(line[len(ENV_MARK):])
    return None


def _outputs(cell):
    """A code cell's text outputs, normalised: images, execution counts and cell paths out."""
    parts = []
    for o in cell.get("outputs", []):
        kind = o.get("output_type")
        if kind == "stream":         # the compile notice depends on the cache, not the code
            parts.append("".join(line for line in o.get("text", "").splitlines(True)
                                 if not line.startswith("burnumba: compiling")))
        elif kind in ("execute_result", "display_data"):
            data = o.get("data", {})
            parts.append("<image>" if "image/png" in data else data.get("text/plain", ""))
        elif kind == "error":
            parts.append(f"error: {o.get('ename')}")
    return CELL_PATH.sub("<cell>", "".join(parts))


def execute(path):
    """The notebook at path, executed (a fresh kernel, the notebooks folder as cwd), and the
    error text of a failing cell or None."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    try:
        client.execute()
    except CellExecutionError as err:
        return nb, ANSI.sub("", str(err))
    return nb, None


@pytest.mark.slow
@pytest.mark.parametrize("path", PARAMS)
def test_notebook_runs(path):
    if path is None:
        pytest.fail(f"no notebooks (*.ipynb) found in {NOTEBOOK_DIR}", pytrace=False)
    stored = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    n_cells = len(nb.cells)
    nb.cells.append(nbformat.v4.new_code_cell(ENV_CHECK.strip()))
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    error = None
    try:
        client.execute()
    except CellExecutionError as err:
        error = ANSI.sub("", str(err))
    if error is not None:                  # outside `except`: report the cell's error once
        index = _failing_cell(nb)
        where = "a cell" if index is None else (
            "the environment check cell" if index == n_cells
            else f"cell {index} (0-based, counting markdown cells)")
        pytest.fail(f"{path.name}: {where} raised:\n{error}", pytrace=False)

    env = _kernel_env(nb)
    assert env is not None, f"{path.name}: the environment check cell printed nothing"
    assert os.path.samefile(env["cwd"], NOTEBOOK_DIR), env
    assert env["prefix"] == sys.prefix, (
        f"the notebook kernel ran in {env['prefix']} ({env['executable']}), not in this test's "
        f"environment {sys.prefix} ({sys.executable}): check `jupyter kernelspec list`")
    assert os.path.samefile(env["executable"], sys.executable), env

    # the stored outputs are today's: a reader of the repository sees what the code prints
    stale = [k for k, (old, new) in enumerate(zip(stored.cells, nb.cells[:n_cells]))
             if old.cell_type == "code" and VARIES not in old.metadata.get("tags", [])
             and not _same_outputs(old, new)]
    assert not stale, (
        f"{path.name}: the stored outputs of cells {stale} are stale or missing; refresh them "
        f"with `.venv/bin/python tests/test_notebooks.py --update`. Cell {stale[0]} now "
        f"prints:\n{_outputs(nb.cells[stale[0]])}")


def update():
    """Execute every notebook and store its outputs."""
    for path in NOTEBOOKS:
        nb, error = execute(path)
        if error is not None:
            raise SystemExit(f"{path.name}: {error}")
        nbformat.write(nb, path)
        print(f"{path.name}: outputs stored")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit("usage: python tests/test_notebooks.py --update")
    update()
