"""Many threads and processes at once: every call gives exactly the serial result.

A tape is immutable; each thread runs its own state (values, gradients, control block), and
large tapes release the GIL while their kernel runs. Stateful objects (a Trainer, an
optimiser) refuse a second thread with a clear error instead of corrupting themselves.
"""
import concurrent.futures as cf
import multiprocessing as mp
import os
import sys
import threading

import numpy as np
import pytest

import burnumba as bn
from burnumba import nn, optim

sys.path.insert(0, os.path.dirname(__file__))
from graphs import tiny  # noqa: E402

THREADS = 8


def _hammer(fn, inputs, threads=THREADS):
    """Run fn on every input from ``threads`` threads at once, each thread in its own order;
    return {input index: every result}."""
    start = threading.Barrier(threads)
    results = {k: [] for k in range(len(inputs))}
    lock = threading.Lock()

    def worker(seed):
        order = np.random.default_rng(seed).permutation(len(inputs))
        start.wait()
        for k in order:
            r = fn(*inputs[k])
            with lock:
                results[int(k)].append(r)
    with cf.ThreadPoolExecutor(threads) as ex:
        list(ex.map(worker, range(threads)))
    return results


def _bits(x):
    """A result as bytes, so that comparisons are bit for bit (NaN and -0.0 included)."""
    if isinstance(x, dict):
        return b"".join(_bits(x[k]) for k in sorted(x))
    if isinstance(x, (tuple, list)):
        return b"".join(_bits(v) for v in x)
    return np.asarray(x, dtype=np.float64).tobytes()


def test_threads_calling_one_scalar_function_get_serial_results():
    """The reported bug: 13 of 40,000 concurrent results were wrong."""
    vg = bn.value_and_grad(tiny, argnums=(0, 1))
    rng = np.random.default_rng(0)
    inputs = [tuple(float(v) for v in rng.uniform(-3, 3, size=2)) for _ in range(500)]
    serial = [_bits(vg(*x)) for x in inputs]
    results = _hammer(vg, inputs * 1)
    for k, got in results.items():
        assert len(got) == THREADS
        assert all(_bits(r) == serial[k] for r in got), inputs[k]


def test_threads_calling_one_tensor_function_get_serial_results():
    """A tensor graph (GIL released during the kernel) called with arrays of several shapes,
    so threads also trace and use several tapes at once."""
    def loss(w, x):
        return np.sum(np.tanh(x @ w["a"]) @ w["b"]) + 0.1 * np.sum(w["a"] ** 2)
    rng = np.random.default_rng(1)
    w = {"a": rng.normal(size=(6, 16)), "b": rng.normal(size=(16, 3))}
    inputs = [(w, rng.normal(size=(n, 6))) for n in (1, 7, 40, 64) for _ in range(25)]
    vg = bn.value_and_grad(loss)
    fresh = bn.value_and_grad(loss)
    serial = [_bits(fresh(*x)) for x in inputs]
    results = _hammer(vg, inputs)
    for k, got in results.items():
        assert all(_bits(r) == serial[k] for r in got), k


def test_threads_get_serial_results_through_gemv_register_loops_and_vexp():
    """The matmul paths that call cblas_?gemv (a vector times a large matrix) and sum in
    registers (per-head products, forward and backward), and softmax's and causal softmax's
    vectorized-exp path (64 values or more): bit for bit against serial calls."""
    def loss(w, x, q, k):
        h = np.tanh(x @ w["big"])                                   # (2, 64) @ (64, 96): gemv
        att = bn.softmax(q @ np.transpose(k, (0, 1, 3, 2)), axis=-1)    # (2, 3, 8, 8)
        causal = bn.causal_softmax(q @ np.transpose(k, (0, 1, 3, 2)), 0.5)
        return np.sum(h * h) + np.sum(att @ k * w["v"]) + np.sum(causal * att)
    rng = np.random.default_rng(4)
    w = {"big": rng.normal(size=(64, 96)), "v": rng.normal(size=(2, 3, 8, 4))}
    inputs = [(w, rng.normal(size=(2, 64)), rng.normal(size=(2, 3, 8, 4)),
               rng.normal(size=(2, 3, 8, 4))) for _ in range(40)]
    vg = bn.value_and_grad(loss, argnums=(0, 1, 2, 3))
    serial = [_bits(bn.value_and_grad(loss, argnums=(0, 1, 2, 3))(*x)) for x in inputs]
    for k, got in _hammer(vg, inputs).items():
        assert all(_bits(r) == serial[k] for r in got), k


def test_threads_sharing_one_tape_and_vjp():
    tape = bn.trace(lambda x, y: np.sum(np.sin(x) * y), np.ones(300), np.ones(300),
                    argnums=(0, 1))
    rng = np.random.default_rng(2)
    inputs = [(rng.normal(size=300), rng.normal(size=300)) for _ in range(60)]
    serial = [_bits(tape.value_and_grad(*x)) for x in inputs]
    for k, got in _hammer(tape.value_and_grad, inputs).items():
        assert all(_bits(r) == serial[k] for r in got)
    serial_fwd = [_bits(tape(*x)) for x in inputs]
    for k, got in _hammer(tape, inputs).items():
        assert all(_bits(r) == serial_fwd[k] for r in got)
    f = lambda x: np.sin(x) * x                                         # noqa: E731
    pulls = [bn.vjp(f, x)[1] for x, _ in inputs[:10]]
    serial_vjp = [_bits(p(np.ones(300))) for p in pulls]
    got = _hammer(lambda k: pulls[k](np.ones(300)), [(k,) for k in range(10)])
    for k, rs in got.items():
        assert all(_bits(r) == serial_vjp[k] for r in rs)


def test_a_trainer_used_by_two_threads_raises_instead_of_corrupting():
    model = nn.MLP([4, 32, 32, 1])
    params = model.init(seed=0)
    x, y = np.random.default_rng(3).normal(size=(64, 4)), np.zeros(64, np.int64)
    loss = lambda p, x, y: np.mean((model.apply(p, x)[:, 0] - y) ** 2)  # noqa: E731
    trainer = optim.Trainer(loss, params, optim.AdamW(lr=1e-2), x, y)
    errors, steps = [], []
    start = threading.Barrier(4)

    def worker():
        start.wait()
        for _ in range(300):
            try:
                steps.append(trainer.step(x, y))
            except bn.ConcurrencyError as e:
                errors.append(str(e))
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors and "another thread" in errors[0]
    assert trainer.steps == len(steps)              # every accepted step was applied once
    # and the trainer is intact: the same number of steps serially gives the same parameters
    serial = optim.Trainer(loss, params, optim.AdamW(lr=1e-2), x, y)
    for _ in range(len(steps)):
        serial.step(x, y)
    for k in trainer.params:
        np.testing.assert_array_equal(trainer.params[k], serial.params[k])


def _child(conn, which):
    """In a forked or spawned process: run a transformed function (inherited, or new)."""
    try:
        vg = bn.value_and_grad(tiny, argnums=(0, 1))
        conn.send(vg(-41.0, 2.0))
    except BaseException as e:                # noqa: BLE001
        conn.send(repr(e))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_forked_and_spawned_processes_use_cached_kernels(method):
    vg = bn.value_and_grad(tiny, argnums=(0, 1))
    expected = vg(-41.0, 2.0)
    ctx = mp.get_context(method)
    procs = []
    for _ in range(3):
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_child, args=(child, method))
        p.start()
        procs.append((p, parent))
    for p, parent in procs:
        assert parent.poll(120), "the child did not answer"
        assert parent.recv() == expected
        p.join(30)
        assert p.exitcode == 0


def test_forked_child_reuses_the_parents_tape():
    """A tape traced and run in the parent keeps working in a forked child (its state was
    the parent thread's; the child thread gets its own)."""
    vg = bn.value_and_grad(lambda x: np.sum(np.tanh(x) ** 2))
    x = np.linspace(-1, 1, 50)
    expected = vg(x)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()

    def run(conn):
        conn.send(_bits(vg(x)))
    p = ctx.Process(target=run, args=(child,))
    p.start()
    assert parent.poll(60) and parent.recv() == _bits(expected)
    p.join(30)


def test_threads_calling_one_vmapped_function_get_serial_bits():
    """Python threads calling one vmapped function at once, each call on two OpenMP threads
    of its own, with batch sizes that change the chunks and lanes (the kept control blocks):
    every result equals a serial call's, bit for bit."""
    loss = lambda w, x, y: (np.tanh(x @ w) - y) ** 2           # noqa: E731
    per_sample = bn.vmap(bn.grad(loss), in_axes=(None, 0, 0), threads=2)
    rng = np.random.default_rng(4)
    w = rng.normal(size=3)
    batches = [(rng.normal(size=(n, 3)), rng.normal(size=n)) for n in (300, 70, 300, 129, 5)]
    expected = [_bits(per_sample(w, X, Y)) for X, Y in batches]

    def call(k):
        X, Y = batches[k % len(batches)]
        return k % len(batches), _bits(per_sample(w, X, Y))
    with cf.ThreadPoolExecutor(6) as pool:
        for k, got in pool.map(call, range(60)):
            assert got == expected[k]


def test_a_forked_child_runs_vmap_on_threads_after_its_parent_did():
    """vmap runs its chunks on OpenMP's threads (kernels/_bncall.c): a child forked after
    the parent ran them runs its own, with the same bits (no hang on the parent's team)."""
    loss = lambda w, x, y: (np.tanh(x @ w) - y) ** 2           # noqa: E731
    per_sample = bn.vmap(bn.grad(loss), in_axes=(None, 0, 0), threads=2)
    w, X, Y = np.linspace(-1, 1, 3), np.random.default_rng(2).normal(size=(300, 3)), np.ones(300)
    expected = per_sample(w, X, Y)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()

    def run(conn):
        conn.send(_bits(per_sample(w, X, Y)))
    p = ctx.Process(target=run, args=(child,))
    p.start()
    try:
        assert parent.poll(60), "the forked child did not answer"
        assert parent.recv() == _bits(expected)
        p.join(30)
    finally:
        if p.is_alive():                # a hung child would hold pytest's pipes open
            p.kill()


def test_threads_calling_one_function_of_the_issue_11_rows_get_serial_results():
    """The rows added for numpy breadth (sort's run-time argsort, cumprod, linalg's
    factorizations, einsum's products, traced integer indices) from many threads at once,
    bit for bit against serial calls."""
    def f(a, x, idx):
        s = np.sort(x, axis=1)
        m = a @ a.T + 3.0 * np.eye(3)
        sol = np.linalg.solve(m, x[:, :3].T)
        w, v = np.linalg.eigh(m)
        rows = x[np.arange(3), idx]
        return (np.sum(np.cumprod(s, axis=1)) + np.sum(sol * sol) + np.sum(w)
                + np.sum(np.einsum("ij,jk->ik", v, m) ** 2) + np.sum(rows)
                + np.linalg.slogdet(m)[1] + np.sum(np.linalg.cholesky(m)))
    vg = bn.value_and_grad(f, argnums=(0, 1))
    rng = np.random.default_rng(3)
    inputs = [(rng.normal(size=(3, 3)), rng.uniform(0.5, 1.5, size=(3, 5)),
               rng.integers(0, 5, size=3)) for _ in range(60)]
    serial = [_bits(vg(*x)) for x in inputs]
    results = _hammer(vg, inputs)
    for k, got in results.items():
        assert len(got) == THREADS
        assert all(_bits(r) == serial[k] for r in got), f"input {k}"


def test_threads_tracing_jacobians_of_several_outputs_get_serial_results():
    """Threads that trace one Jacobian of a dict of outputs (several signatures, so traces
    race) and jvp with aux each get the serial nested blocks: a tape's output structure is
    recorded before another thread can see the tape."""
    def f(x, y):
        return {"a": np.sin(x) * np.sum(y), "b": (np.tanh(x[0] * y), x * x)}
    rng = np.random.default_rng(9)
    inputs = [(rng.normal(size=n), rng.normal(size=m)) for n in (2, 3, 4) for m in (1, 2)] * 3

    def serial(x, y):
        return (bn.jacrev(f, argnums=(0, 1))(x, y),
                bn.jvp(lambda x: (f(x, y), np.sum(x)), (x,), (np.ones_like(x),),
                       has_aux=True)[1:])
    expected = [_bits(serial(*xs)) for xs in inputs]
    jac = bn.jacrev(f, argnums=(0, 1))                 # fresh: its traces race below

    def call(x, y):
        return (jac(x, y), bn.jvp(lambda x: (f(x, y), np.sum(x)), (x,), (np.ones_like(x),),
                                  has_aux=True)[1:])
    for k, results in _hammer(call, inputs).items():
        assert all(_bits(r) == expected[k] for r in results), k
