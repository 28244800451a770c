"""pytest-benchmark: save and load the small-graph tape (report_tapefile.py's methods).

Run with ``.venv/bin/python -m pytest bench/test_tapefile.py --benchmark-only``. The groups
``tape-save`` and ``tape-load`` put burnumba's file, BytesIO and pickle next to torch.save /
torch.load and numpy's raw bytes of the same two arrays (torch is skipped when not
installed, as is the module without pytest-benchmark). Nothing here asserts on time; the
burnumba loads must give the golden value and gradient.
"""
import os
import sys
import tempfile

import pytest

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_tapefile as rt  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

NAMES = ["burnumba file (save / load_tape)", "burnumba BytesIO",
         "burnumba pickle (dumps / loads)", "numpy tobytes / frombuffer",
         "torch file (save / load)", "torch BytesIO"]


@pytest.fixture(scope="module")
def all_methods():
    with tempfile.TemporaryDirectory() as tmp:
        tape = rt.small_tape()
        yield tape, rt.methods(tape, tmp)


def _method(all_methods, name):
    if name not in all_methods[1]:
        pytest.skip(f"{name}: torch is not installed")
    return all_methods[1][name]


@pytest.mark.parametrize("name", NAMES)
def test_save(benchmark, all_methods, name):
    save, _, size = _method(all_methods, name)
    benchmark.group = "tape-save"
    benchmark.extra_info["bytes"] = size(benchmark(save))


@pytest.mark.parametrize("name", NAMES)
def test_load(benchmark, all_methods, name):
    save, load, _ = _method(all_methods, name)
    saved = save()
    benchmark.group = "tape-load"
    loaded = benchmark(load, saved)
    if name.startswith("burnumba"):
        value, (da, db) = loaded.value_and_grad(-4.0, 2.0)
        assert (value, da, db) == pytest.approx(WORKLOADS["small-graph"][2], rel=1e-10)
