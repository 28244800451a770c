"""pytest-benchmark: one training step (forward, backward, AdamW) per system
(``train_workloads.py``).

Run with ``.venv/bin/python -m pytest bench/test_train_steps.py --benchmark-only``. Each case
is a benchmark group, float32: ``train-gpt-b1``, ``train-gpt-b8``, ``train-gpt-b64``,
``train-makemore-b1``, ``train-makemore-b64``, with one test per system (burnumba, torch eager
with ``scaled_dot_product_attention``, torch.compile of the whole step, jax.jit) side by side
(``-k compile`` selects torch.compile's). Each system runs as ``train_workloads.make_step``
builds it (for torch.compile: one compiled graph of grad_and_value + AdamW, explicit
attention; its first step compiles, which takes seconds to a minute per case, untimed).
Peers that are not installed are skipped, as is the whole module without pytest-benchmark.
Data: the folder in ``$BURNUMBA_DATA_DIR``, else ``../shared/data`` next to the repository if
it exists, else burnumba's embedded corpus and generated names. Every library is pinned to
one thread (through the environment, unless already set, and ``torch.set_num_threads(1)``),
as in ``report_train.py``; peak memory is only measured there (one process per case).

Nothing here asserts on time. The checks: each system's first loss agrees with a float64 numpy
forward pass (relative 1e-4 in float32), and, outside ``--benchmark-only``, the systems'
parameters agree after three float64 steps (same init, batches and AdamW).
"""
import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_k, "1")
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false")

import functools  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_workloads as tw  # noqa: E402

WARMUP = 20
DATA_DIR = os.environ.get("BURNUMBA_DATA_DIR") or next(
    (d for d in [os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")]
     if os.path.isfile(os.path.join(d, tw.GPT_FILE))), None)


@functools.cache
def data(model):
    return tw.load_data(model, DATA_DIR)


@functools.cache
def params(model):
    return tw.init_params(model, 0, data(model).vocab_size)


def make(system, model, batch, dtype, n_batches=tw.N_BATCHES):
    pytest.importorskip(tw.MODULES[system])
    return tw.make_step(system, model, batch, dtype, data=data(model), params=params(model),
                        n_batches=n_batches)


@pytest.mark.parametrize("system", tw.SYSTEMS)
@pytest.mark.parametrize("model,batch", tw.CASES, ids=[f"{m}-b{b}" for m, b in tw.CASES])
def test_train_step(benchmark, model, batch, system):
    pytest.importorskip("pytest_benchmark")
    dtype = "float32"
    step, info = make(system, model, batch, dtype)
    first = step()                      # traces / compiles
    ref, rel, ok = tw.first_loss_check(model, dtype, info["params0"], info["batches"], first)
    assert ok, (system, first, ref, rel)
    for _ in range(WARMUP):
        step()
    benchmark.group = f"train-{model}-b{batch}"
    loss = benchmark(step)
    benchmark.extra_info.update(first_loss=first, reference_loss=ref, last_loss=loss,
                                variant=info["variant"], data=data(model).source)
    assert math.isfinite(loss)


@pytest.mark.parametrize("model,batch", [("gpt", 8), ("makemore", 4)])
def test_same_updates(model, batch):
    """Same init, batches and AdamW: the parameters agree after three float64 steps."""
    got = {}
    for system in tw.SYSTEMS:
        try:
            step, info = make(system, model, batch, "float64", n_batches=3)
        except pytest.skip.Exception:
            continue
        losses = [step() for _ in range(3)]
        got[system] = losses, info["params"]()
    if len(got) < 2:
        pytest.skip("one system only")
    (l0, p0), *others = got.values()
    for losses, p in others:
        np.testing.assert_allclose(losses, l0, rtol=1e-10)
        for k in p0:
            # Adam's first steps move every weight by ~lr whatever its gradient, so the
            # parameters agree to rounding unless a formula differs
            np.testing.assert_allclose(p[k], p0[k], rtol=1e-9, atol=1e-12, err_msg=k)
