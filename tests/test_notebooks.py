"""Every notebook in notebooks/ runs top to bottom without raising.

Each notebook is executed with nbclient in a fresh ``python3`` kernel, with the notebooks
folder as the working directory. ipykernel's ``python3`` kernelspec launches ``python -m
ipykernel_launcher``, and jupyter_client replaces that ``python`` with ``sys.executable``;
a check cell appended to the in-memory copy of each notebook confirms that the kernel ran in
this test's Python environment (so it imported this checkout of burnumba).
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
CELL_TIMEOUT = 600          # seconds; a cold numba compile of the kernels takes ~20 s
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


@pytest.mark.parametrize("path", PARAMS)
def test_notebook_runs(path):
    if path is None:
        pytest.fail(f"no notebooks (*.ipynb) found in {NOTEBOOK_DIR}", pytrace=False)
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
