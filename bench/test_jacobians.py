"""pytest-benchmark: per-item Jacobians (``jacobian_workloads.py``), one benchmark group.

Run with ``.venv/bin/python -m pytest bench/test_jacobians.py --benchmark-only``: the (2, 12)
Jacobians of a reprojection residual at 10,000 items by burnumba (vmap of jacfwd and of
jacrev, one thread), jax.jit (the same two) and hand-written C++ Jets (skipped without a
C++ compiler or jax). Every library is pinned to one thread, as in report_jacobians.py.
Nothing here asserts on time, only that each result equals the C++ Jacobians to relative
1e-10, and those equal central differences to 1e-7.
"""
import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jacobian_workloads as jw  # noqa: E402

CASES = [("burnumba", "fwd"), ("burnumba", "rev"), ("jax", "fwd"), ("jax", "rev"),
         ("cpp", "fwd")]


@pytest.fixture(scope="module")
def reference():
    fn, why = jw.build_cpp()
    if fn is None:
        pytest.skip(why)
    x, observed = jw.data()
    _, J = jw.make_cpp(len(x))
    fd = jw.central_differences(x[:20], observed[:20])
    assert np.max(np.abs(J[:20] - fd)) / np.max(np.abs(fd)) < 1e-7
    return J


@pytest.mark.parametrize("system,how", CASES, ids=[f"{s}-{h}" for s, h in CASES])
def test_reprojection_jacobians(benchmark, reference, system, how):
    if system == "jax":
        pytest.importorskip("jax")
    make = {"burnumba": jw.make_burnumba, "jax": jw.make_jax, "cpp": jw.make_cpp}[system]
    call, J = make(jw.N_ITEMS, how)
    assert np.max(np.abs(np.asarray(J) - reference)) / np.max(np.abs(reference)) <= 1e-10
    benchmark.group = "reprojection-jacobians"
    benchmark.extra_info.update(items=jw.N_ITEMS, mode=how)
    result = benchmark(call)
    assert np.max(np.abs(np.asarray(result) - reference)) / np.max(np.abs(reference)) <= 1e-10
