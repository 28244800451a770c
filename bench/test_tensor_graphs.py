"""pytest-benchmark: one value-and-gradient call of the tensor workloads (``tensor_workloads.py``).

Run with ``.venv/bin/python -m pytest bench/test_tensor_graphs.py --benchmark-only``. Each
(workload, batch) is a benchmark group ("mlp-b1", "mlp-b64", "gpt-block-b1", "gpt-block-b64";
float32 runs get their own groups, "mlp-b1-float32", ...), so burnumba and its peers (micrograd,
autograd, jax.jit, torch eager, torch.compile) print side by side; ``-k compile`` selects
torch.compile's tests (``torch.compile(torch.func.grad_and_value(loss))``, see
``tensor_workloads.py``; its warm-up compiles, seconds per case, untimed). Peers that are not
installed are skipped, as are combinations a system does not do
(micrograd's GPT block; autograd and micrograd in float32), and the whole module when
pytest-benchmark is not installed. Every library is pinned to one thread (through the
environment, unless already set, and ``torch.set_num_threads(1)``), as in ``report_tensor.py``.
Nothing here asserts on time, only that each system's loss agrees with a numpy float64
forward pass (relative 1e-8 of the absolute loss terms in float64, 1e-4 in float32).
"""
import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import sys  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tensor_workloads import (BATCHES, DTYPES, MODULES, SYSTEMS, WORKLOADS,  # noqa: E402
                              Unsupported, loss_tolerance, make_case, reference_loss, warm_up)


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_value_and_grad(benchmark, workload, batch, dtype, system):
    pytest.importorskip(MODULES[system])
    try:
        call, to_summary, _, grad_dtype = make_case(system, workload, batch, dtype)
    except Unsupported as e:
        pytest.skip(f"{system} {dtype} {workload}: unsupported ({e})")
    result = warm_up(call)          # compile (numba, jax) and fill caches before timing
    if grad_dtype(result) != dtype:
        pytest.skip(f"{system}: asked for {dtype}, returned {grad_dtype(result)} gradients")
    benchmark.group = f"{workload}-b{batch}" + ("" if dtype == "float64" else f"-{dtype}")
    loss, grad_abs_sum = to_summary(benchmark(call))
    benchmark.extra_info["loss"] = loss
    benchmark.extra_info["grad_abs_sum"] = grad_abs_sum
    ref, scale = reference_loss(workload, batch, dtype)
    assert abs(loss - ref) <= loss_tolerance(dtype, scale), (loss, ref)
