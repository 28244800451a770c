"""pytest-benchmark: structured loops against the Python loop and jax.jit
(``loop_workloads.py``).

Run with ``.venv/bin/python -m pytest bench/test_loops.py --benchmark-only``. Groups:
``loops-ode`` (issue #32's ODE: 10 Euler steps on a state of 1000, the gradient with respect
to the initial state: the Python loop unrolled, bn.fori_loop with and without checkpoint,
jax.jit of the Python loop and of lax.fori_loop) and ``loops-long-10`` / ``loops-long-1000``
(the step on a state of 100, 10 and 1000 steps). jax is skipped when not installed. Nothing
here asserts on time.
"""
import os
import sys

import pytest

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loop_workloads as lw  # noqa: E402


@pytest.mark.parametrize("case", list(lw.CASES))
def test_loops(benchmark, case):
    if "jax" in case:
        pytest.importorskip("jax")
    call = lw.CASES[case]()
    benchmark.group = lw.GROUPS[case]
    benchmark(call)
