"""pytest-benchmark: one value-and-gradient call on the BurTorch paper's scalar graphs.

Run with ``.venv/bin/python -m pytest bench/ --benchmark-only``. Each workload is its own
benchmark group, so burnumba and its peers print side by side. Peers that are not installed
are skipped, and so is the whole module when pytest-benchmark is not installed.
The timed call and the warm-up are those of ``workloads.py``; see there for what each
system's call includes. pytest-benchmark calibrates its own rounds and keeps the garbage
collector on, like ``report.py``. Nothing here asserts on time, only that each system
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
