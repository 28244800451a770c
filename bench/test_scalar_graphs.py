"""pytest-benchmark: one value-and-gradient call on the BurTorch paper's scalar graphs.

Run with ``.venv/bin/python -m pytest bench/ --benchmark-only``. Each workload is its own
benchmark group, so burnumba and its peers print side by side. Peers that are not installed
are skipped, and so is the whole module when pytest-benchmark is not installed.
The timed call and the warm-up are those of ``workloads.py``; see there for what each
system's call includes. pytest-benchmark calibrates its own rounds and keeps the garbage
collector on, like ``report_scalar.py``. Nothing here asserts on time, only that each system
computed the right numbers.
"""
import os
import sys

import pytest

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import MODULES, SYSTEMS, WORKLOADS, make, warm_up  # noqa: E402


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_value_and_grad(benchmark, workload, system):
    pytest.importorskip(MODULES[system])
    call, to_floats = make(system, workload)
    warm_up(call)                      # compile (numba, jax) and fill caches before timing
    benchmark.group = workload
    result = to_floats(benchmark(call))
    benchmark.extra_info["value_and_grad"] = result
    assert result == pytest.approx(WORKLOADS[workload][2], rel=1e-10)


@pytest.mark.parametrize("system", ["burnumba", "c-switch"])
def test_random_scalar_graph(benchmark, system):
    """Issue #14's large random scalar graph (report_interp.py, 6,000 ops, about 11,700 tape
    nodes): burnumba's value_and_grad against the hand-written C switch interpreter over the
    same arrays (skipped without a C compiler). Both must give burnumba's numbers."""
    import ctypes

    import numpy as np

    import burnumba as bn
    import report_interp

    f = report_interp.random_graph(6000)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, report_interp.INPUTS)
    vg = bn.value_and_grad(f)
    value, _ = vg(x)
    benchmark.group = "random-scalar-graph"
    if system == "burnumba":
        assert benchmark(vg, x)[0] == value
        return
    c_fn, why = report_interp.build_c("-O2")
    if c_fn is None:
        pytest.skip(why)
    tape = bn.trace(f, x)
    ints, F = np.ascontiguousarray(tape.I), tape.F0.copy()
    start, size = tape.in_slots[0][:2]
    F[tape.n + start:tape.n + start + size] = x
    err = ctypes.c_int64(0)
    got = benchmark(c_fn, ints.ctypes.data, F.ctypes.data, ctypes.byref(err))
    assert err.value == 0 and got == pytest.approx(value, rel=1e-12)
