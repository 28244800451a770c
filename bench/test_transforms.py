"""pytest-benchmark: the functional transformations of ``transform_workloads.py``.

Run with ``.venv/bin/python -m pytest bench/test_transforms.py --benchmark-only``. Each case is
a benchmark group, so burnumba and its peers print side by side: ``hvp-rosenbrock`` (n = 1000),
``hessian-logreg`` (d = 50, n = 1000), ``per-sample-mlp`` (B = 1024; burnumba on one thread
and on two) and ``njit-tiny-x10000``, where one round is 10,000 value-and-gradient calls of
the tiny graph: through the njit handle from a ``@numba.njit`` loop, and through
``bn.value_and_grad`` from a Python loop (``extra_info`` has the ns per call). Peers that are
not installed are skipped, as is the whole module without pytest-benchmark. Every library is
pinned to one thread (through the environment, unless already set, and
``torch.set_num_threads(1)``), as in ``report_transforms.py``; unlike there, the systems share
one process here, so jax runs with synchronous dispatch only (its dispatch setting is read
once per process). The torch.compile tests compile on their first call (~5-15 s each, cold).

Nothing here asserts on time, only that each system's result agrees with the closed-form
float64 numpy reference to relative 1e-10 (max |r - ref| / max |ref|).
"""
import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import sys  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transform_workloads as tw  # noqa: E402

# jax reads its dispatch setting once per process: the async-dispatch row is only in
# report_transforms.py, where each row has a process of its own
PAIRS = [(case, system) for case, (_, systems, _) in tw.CASES.items() for system in systems
         if system != "jax-async"]


@pytest.mark.parametrize("case,system", PAIRS, ids=[f"{c}-{s}" for c, s in PAIRS])
def test_transform(benchmark, case, system):
    pytest.importorskip(tw.MODULES[system])
    call, to_array, inner = tw.make(case, system)
    err = tw.rel_err(to_array(call()), tw.reference(case))    # traces / compiles
    assert err <= tw.RTOL, (case, system, err)
    result = tw.warm_up(call)
    benchmark.group = case
    if case == "njit-tiny":
        # one round = NJIT_INNER calls for both rows: the njit loop, or a Python loop
        benchmark.group = f"{case}-x{tw.NJIT_INNER}"
        if inner == 1:
            one = call

            def call():
                for _ in range(tw.NJIT_INNER):
                    r = one()
                return r
        inner = tw.NJIT_INNER
    benchmark.extra_info.update(label=tw.LABELS[system], threads=tw.THREADS.get(system, 1),
                                calls_per_round=inner, rel_err=err)
    result = benchmark(call)
    stats = getattr(benchmark, "stats", None)
    if stats is not None and case == "njit-tiny":
        benchmark.extra_info["ns_per_call"] = stats.stats.median / inner * 1e9
    assert tw.rel_err(to_array(result), tw.reference(case)) <= tw.RTOL
