"""pytest-benchmark: sparse Jacobians and Hessians, and the solver bridge (``report_sparse.py``'s
problem families, one size each, so the groups print side by side).

Run with ``.venv/bin/python -m pytest bench/test_sparse.py --benchmark-only``. The groups are
``sparse-hessian-rosen-n<N>`` (chained Rosenbrock), ``sparse-jacobian-poisson-n<N>`` (a 2-D
Poisson residual) and ``sparse-jacobian-bundle-n<N>`` (bundle adjustment), each with
burnumba's coloured evaluation, burnumba's dense ``bn.hessian`` / ``bn.jacobian`` where it fits,
jax.jit's dense ``hessian`` / ``jacfwd`` and CasADi's sparse function; ``sparse-setup-*``
times the pattern pass and the colouring alone; ``bridge-rosen-n1000`` is what
burnumba.optimize gives scipy as ``fun`` with ``jac=True`` against the compiled sweep alone.
Peers that are not installed are skipped. Every library runs on one thread (through the
environment, unless already set).

Nothing here asserts on time, only that each system's matrix equals burnumba's sparse one to
relative 1e-10 (``report_sparse._close``).
"""
import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import math  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_sparse as rs  # noqa: E402

import burnumba as bn  # noqa: E402

RTOL = 1e-10
# (family, n): n = 10^4 where a dense peer still fits in memory and time at this size
SIZES = {"hessian": 10_000, "jacobian": 2_500, "bundle": 2_000}
NAMES = {"hessian": "sparse-hessian-rosen", "jacobian": "sparse-jacobian-poisson",
         "bundle": "sparse-jacobian-bundle"}
SYSTEMS = ("burnumba-sparse", "burnumba-dense", "jax.jit-dense", "casadi-sparse")


def _problem(kind):
    fun, x, data = rs._function(kind, SIZES[kind])
    f, ref, _ = rs.burnumba_sparse(kind, fun, x)
    return fun, x, data, f, ref


def _same(a):
    return a


def _call(kind, system, fun, x, data, f):
    """(a no-argument call, what turns its result into a matrix _close reads). CasADi's call
    is timed as report_sparse.py times it, returning its own sparse DM, unconverted."""
    if system == "burnumba-sparse":
        return (lambda: f(x)), _same
    if system == "burnumba-dense":
        dense = rs.burnumba_dense(kind, fun, x)
        return (lambda: dense(x)), _same
    if system == "jax.jit-dense":
        pytest.importorskip("jax")
        return rs.jax_dense(kind, x, data), _same
    pytest.importorskip("casadi")
    fn = rs.casadi_sparse(kind, x.size, data)
    if kind != "jacobian":
        return (lambda: fn(x)), (lambda m: m.sparse())
    # casadi's grid is column-major: permute its input, and its matrix back to burnumba's order
    k = math.isqrt(x.size)
    perm = np.arange(x.size).reshape(k, k).T.reshape(-1)
    xin = x[perm]
    return (lambda: fn(xin)), (lambda m: m.sparse()[perm][:, perm])


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("kind", list(SIZES))
def test_sparse_evaluation(benchmark, kind, system):
    fun, x, data, f, ref = _problem(kind)
    call, matrix = _call(kind, system, fun, x, data, f)
    assert rs._close(matrix(call()), ref) <= RTOL, (kind, system)
    benchmark.group = f"{NAMES[kind]}-n{x.size}"
    benchmark.extra_info.update(n=int(x.size), nnz=int(ref.nnz))
    result = benchmark(call)
    assert rs._close(matrix(result), ref) <= RTOL


@pytest.mark.parametrize("part", ["pattern", "colouring"])
@pytest.mark.parametrize("kind", list(SIZES))
def test_sparse_setup(benchmark, kind, part):
    """The pattern pass over the tape, or the colouring of that pattern, alone."""
    from burnumba.derive.sparsity import hessian_pattern, jacobian_pattern
    from burnumba.transforms.colouring import column_colouring, hessian_colouring, \
        row_colouring
    _, x, _, f, ref = _problem(kind)
    tape = next(iter(f.tapes.values()))
    pattern = (hessian_pattern if kind == "hessian" else jacobian_pattern)(tape)
    assert pattern.nnz == ref.nnz            # the pattern is the evaluated matrix's, exactly
    if part == "pattern":
        call = lambda: (hessian_pattern if kind == "hessian"        # noqa: E731
                        else jacobian_pattern)(tape)
    elif kind == "hessian":
        call = lambda: hessian_colouring(pattern)                    # noqa: E731
    else:
        call = lambda: (column_colouring(pattern), row_colouring(pattern))   # noqa: E731
    benchmark.group = f"sparse-setup-{NAMES[kind]}-n{x.size}"
    benchmark.extra_info.update(part=part)
    benchmark(call)


@pytest.mark.parametrize("what", ["fun-and-jac", "sweep-alone"])
def test_bridge(benchmark, what):
    """The solver bridge's overhead is the difference of the two rows' medians."""
    from burnumba.kernels import layout
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 1000)
    vg = bn.value_and_grad(rs.rosen)
    value, grad = vg(x)
    tape = next(iter(vg.tapes.values()))
    state = tape.state()
    state.write([x])
    benchmark.group = "bridge-rosen-n1000"
    if what == "fun-and-jac":
        benchmark(vg, x)
    else:
        assert state.call(layout.MODE_VALUE_AND_GRAD) == pytest.approx(value, rel=1e-14)
        benchmark(state.call, layout.MODE_VALUE_AND_GRAD)
