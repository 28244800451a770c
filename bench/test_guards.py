"""pytest-benchmark: what guards cost (``guard_workloads.py``).

Run with ``.venv/bin/python -m pytest bench/test_guards.py --benchmark-only``. Groups:
``guards-a-replay`` (tapes without guards: unchanged by guards), ``guards-b-small`` and
``guards-b-mlp`` (a tape whose guards all hold against the same tape without them) and
``guards-c-adam`` (an optimiser loop passing its step number, 100 steps: burnumba, autograd,
jax.jit side by side; peers that are not installed are skipped). Nothing here asserts on
time.
"""
import os
import sys

import pytest

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guard_workloads as gw  # noqa: E402


@pytest.mark.parametrize("case", list(gw.CASES))
def test_guards(benchmark, case):
    if case in gw.MODULES:
        pytest.importorskip(gw.MODULES[case])
    call = gw.CASES[case]()
    benchmark.group = gw.GROUPS[case]
    benchmark(call)
