"""The compiled interpreter against the plain-Python one, the dot-product test, the tape
layout, and the same generated kernels run by the Python interpreter (NUMBA_DISABLE_JIT=1)."""
import os
import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import burnumba as bn
import burnumba.numpy as bnp
from burnumba.kernels import engine, layout, reference
from graphs import micrograd_readme

UNARY = [np.tanh, np.sin, np.cos, bn.sigmoid, lambda v: v * v, lambda v: -v, np.exp,
         lambda v: np.sqrt(v * v + 1.0), lambda v: np.log(v * v + 0.5), abs, bn.relu,
         lambda v: v ** 3, lambda v: 1.0 / (v * v + 1.0)]
BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.minimum,
          lambda u, v: u / (v * v + 0.5), lambda u, v: bnp.where(u > v, u, v * 0.5),
          lambda u, v: bn.inner([np.sum(u), v[0] if np.ndim(v) else v], [np.sum(v), u ** 2],
                                bias=np.sum(u) if np.ndim(u) else u) if np.ndim(u) == 0 else
          bn.inner([np.sum(u)], [np.sum(v)], bias=np.sum(v))]


def random_graph(program):
    """A function of (x: array(3), s: float) built from a program of (op, operand) choices;
    every value stays in a pool, so later ops reuse earlier ones (fan-out)."""
    def f(x, s):
        pool = [x, s, x[::-1] * s, np.sum(x)]
        for kind, k, i, j in program:
            if kind == 0:
                pool.append(UNARY[k % len(UNARY)](pool[i % len(pool)]))
            else:
                pool.append(BINARY[k % len(BINARY)](pool[i % len(pool)], pool[j % len(pool)]))
        tail = pool[-4:]
        return bnp.stack([np.sum(v) if np.ndim(v) else v for v in tail])
    return f


PROGRAMS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 50), st.integers(0, 50),
                              st.integers(0, 50)), min_size=1, max_size=25)


@given(PROGRAMS)
def test_njit_sweep_matches_plain_python_sweep(program):
    f = random_graph(program)
    x, s = np.array([0.3, -0.8, 1.1]), 0.45
    g = lambda x, s: np.sum(f(x, s) * np.array([1.0, -2.0, 0.5, 3.0]))   # noqa: E731
    tape = bn.trace(g, x, s, argnums=(0, 1))
    F1, C = tape.F0.copy(), engine.control_block(tape.dtype)
    v_njit = tape.kernel.caller(tape.I, F1, C)(layout.MODE_VALUE_AND_GRAD)
    F2 = tape.F0.copy()
    v_ref = reference.value_and_grad(tape.I, F2)
    np.testing.assert_allclose(v_njit, v_ref, rtol=1e-13)
    np.testing.assert_allclose(F1, F2, rtol=1e-12, atol=1e-300, equal_nan=True)


@given(PROGRAMS, st.integers(0, 2 ** 31))
def test_dot_product_test(program, seed):
    """<u, J v> (J v by central differences) equals <J^T u, v> (J^T u by burnumba's vjp)."""
    rng = np.random.default_rng(seed)
    f = random_graph(program)
    x, s = rng.uniform(-1, 1, size=3), float(rng.uniform(-1, 1))
    y, pull = bn.vjp(f, x, s)
    u = rng.normal(size=y.shape)
    vx, vs = rng.normal(size=3), float(rng.normal())
    h = 1e-6
    forward = lambda x, s: bn.vjp(f, x, s)[0]    # noqa: E731
    jv = (forward(x + h * vx, s + h * vs) - forward(x - h * vx, s - h * vs)) / (2 * h)
    gx, gs = pull(u)
    lhs = float(u @ jv)
    rhs = float(gx @ vx + gs * vs)
    if np.isfinite(lhs) and np.isfinite(rhs) and max(abs(lhs), abs(rhs)) < 1e6:
        np.testing.assert_allclose(lhs, rhs, rtol=1e-4, atol=1e-5)


def test_tape_is_a_struct_of_arrays_within_64_bytes_per_scalar_node():
    def chain(a, b):
        for _ in range(1000):
            a = np.tanh(a * b + 0.5)
        return a
    tape = bn.trace(chain, 0.3, 0.7, argnums=(0, 1))
    arrays = [tape.I, tape.F0]
    assert all(isinstance(a, np.ndarray) for a in arrays)
    assert tape.nbytes == sum(a.nbytes for a in arrays)
    assert tape.bytes_per_node <= 64
    for column in ("op", "a0", "a1", "pp", "need", "off", "imm", "val", "grad"):
        assert isinstance(getattr(tape, column), np.ndarray)
    # every node owns a slice of the one value buffer; a scalar owns a slice of length 1
    assert np.all(np.diff(tape.off) == 1)
    assert "multiply" in str(tape) and "tanh" in str(tape)


def test_tape_order_is_execution_order():
    tape = bn.trace(micrograd_readme, -4.0, 2.0, argnums=(0, 1))
    for i in range(tape.n):
        for operand in (tape.a0[i], tape.a1[i]):
            assert operand < i


NO_JIT_SCRIPT = """
import numpy as np, burnumba as bn, sys
sys.path.insert(0, {tests!r})
from graphs import micrograd_readme, tiny
v, g = bn.value_and_grad(micrograd_readme, argnums=(0, 1))(-4.0, 2.0)
w, h = bn.value_and_grad(tiny, argnums=(0, 1))(-41.0, 2.0)
x = np.array([0.3, -1.2, 2.0])
k = bn.grad(lambda x: np.sum(np.tanh(x[::-1] * x) ** 2) + bn.inner(x, x, bias=x[0]))(x)
print(repr((v, g, w, h, k.tolist())))
"""


def test_kernels_interpreted_with_jit_disabled():
    """The same generated kernels, run by the Python interpreter (as numba tests its own)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    script = NO_JIT_SCRIPT.format(tests=os.path.dirname(__file__))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    v, g, w, h, k = eval(out.stdout.strip())
    x = np.array([0.3, -1.2, 2.0])
    expected_k = bn.grad(lambda x: np.sum(np.tanh(x[::-1] * x) ** 2) + bn.inner(x, x, bias=x[0]))(x)
    np.testing.assert_allclose(v, 24.70408163265306, rtol=1e-12)
    np.testing.assert_allclose(g, (138.83381924198252, 645.5772594752186), rtol=1e-12)
    np.testing.assert_allclose((w,) + tuple(h), (612.5, -35.0, 1050.0), rtol=1e-12)
    np.testing.assert_allclose(k, expected_k, rtol=1e-12)


CALLS_SCRIPT = """
import numpy as np, burnumba as bn, sys, json
sys.path.insert(0, {tests!r})
from graphs import micrograd_readme, tiny
from burnumba import nn, optim
out = [bn.value_and_grad(tiny, argnums=(0, 1))(-41.0, 2.0)]
x = np.linspace(-1, 1, 300)
out.append(bn.value_and_grad(lambda x: np.sum(np.tanh(x) @ np.ones(300)))(x)[1].tolist())
model = nn.MLP([3, 16, 2])
xs, ys = np.random.default_rng(0).normal(size=(8, 3)), np.array([0, 1] * 4)
trainer = optim.Trainer(model.loss, model.init(seed=0), optim.AdamW(lr=0.1), xs, ys, clip=1.0)
out.append([trainer.step(xs, ys) for _ in range(3)])
# vmap's chunks: on OpenMP's threads with the C extension, on a pool's through ctypes
loss = lambda w, x, y: (np.tanh(x @ w) - y) ** 2
ws, X, Y = np.linspace(-1, 1, 3), np.random.default_rng(1).normal(size=(200, 3)), np.ones(200)
out.append(bn.vmap(bn.grad(loss), in_axes=(None, 0, 0), threads=2)(ws, X, Y).tolist())
print(json.dumps(out))
"""


def test_calls_through_ctypes_give_the_same_results():
    """Without the optional C extension (BURNUMBA_CALLER=ctypes forces it), kernels are
    called through ctypes: the same numbers, bit for bit."""
    script = CALLS_SCRIPT.format(tests=os.path.dirname(__file__))
    results = []
    for caller in ("c", "ctypes"):
        env = dict(os.environ, BURNUMBA_CALLER=caller)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        results.append(out.stdout.strip().splitlines()[-1])
    assert results[0] == results[1]


# -- which BLAS the products call --------------------------------------------------------------
_BLAS_PROBE = """
import json, os
import numpy as np
import burnumba as bn
from burnumba.kernels import engine
from threadpoolctl import threadpool_info
from burnumba.kernels import layout
r = np.random.default_rng(0)
W = r.normal(size=(256, 256)).astype(np.float32)     # 64 x 256 x 256: a large product
x = r.normal(size=(64, 256)).astype(np.float32)
f = bn.grad(lambda W, x: np.sum(np.tanh(x @ W)))
g = f(W, x)
h = np.tanh(x.astype(np.float64) @ W.astype(np.float64))
ref = x.astype(np.float64).T @ (1.0 - h * h)
large = f.trace(W, x).new_state().C[layout.C_GEMM]
import threading
same = []
def calls():
    same.extend(np.array_equal(f(W, x), g) for _ in range(10))
threads = [threading.Thread(target=calls) for _ in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
small = f.trace(W[:16, :16], x[:, :16]).new_state().C[layout.C_GEMM]
with engine.blas_threads():
    pinned = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"what": {k: engine.blas(k, True).what for k in ("float64", "float32")},
                  "threads_same": all(same) and len(same) == 40,
                  "small_is_numpys": int(small) == engine.blas("float32").gemm,
                  "large_is_own": int(large) == engine.blas("float32", True).gemm,
                  "env": os.environ.get("OPENBLAS_CORETYPE"),
                  "err": float(np.max(np.abs(g - ref)) / np.max(np.abs(ref))),
                  "pinned": pinned,
                  "after": [i["num_threads"] for i in threadpool_info()
                            if i["user_api"] == "blas"]}))
"""


def _blas_probe(**env):
    import json
    full = dict(os.environ, OPENBLAS_NUM_THREADS="2", **env)
    for k in ("BURNUMBA_BLAS_CORE", "OPENBLAS_CORETYPE"):
        if k not in env:
            full.pop(k, None)
    out = subprocess.run([sys.executable, "-c", _BLAS_PROBE], env=full, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_float32_products_on_burnumbas_own_openblas_when_asked():
    """BURNUMBA_BLAS_CORE names the OpenBLAS kernels of burnumba's own OpenBLAS (the
    scipy-openblas32 wheel), which then computes the float32 products of tapes with large
    ones; float64 stays on numpy's. Loading it leaves the process's OPENBLAS_CORETYPE as it
    was; it runs on one thread (it is loaded so), and four threads calling one function get
    the serial call's bits; the BLAS thread pinning covers both libraries, and puts numpy's
    back."""
    probe = _blas_probe(BURNUMBA_BLAS_CORE="Haswell")
    assert "scipy-openblas32 (Haswell kernels" in probe["what"]["float32"]
    # only tapes with a product of LARGE_PRODUCT multiply-adds or more use it
    assert probe["small_is_numpys"] and probe["large_is_own"]
    assert probe["what"]["float64"].startswith("numpy's")
    assert probe["env"] is None
    assert probe["err"] < 1e-5
    assert probe["threads_same"]
    assert len(probe["pinned"]) == 2 and probe["pinned"] == [1, 1]
    assert sorted(probe["after"]) == [1, 2]          # numpy's 2 threads back; its own: 1


def test_numpys_blas_when_asked_or_when_the_user_chose_its_kernels():
    for env in ({"BURNUMBA_BLAS_CORE": "numpy"}, {"OPENBLAS_CORETYPE": "Haswell"}):
        probe = _blas_probe(**env)
        assert probe["what"]["float32"] == probe["what"]["float64"]
        assert probe["what"]["float32"].startswith("numpy's")
        assert probe["env"] == env.get("OPENBLAS_CORETYPE")
        assert probe["err"] < 1e-5 and probe["pinned"] == [1]


def test_own_core_policy(monkeypatch):
    """Zen kernels on an AMD CPU where numpy's OpenBLAS took AVX-512 ones; the user's
    choices first."""
    from burnumba.kernels import blas
    for k in ("BURNUMBA_BLAS_CORE", "OPENBLAS_CORETYPE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(blas, "_amd", lambda: True)
    assert blas.own_core("SkylakeX") == "Zen"
    assert blas.own_core("Haswell") is None                   # not AVX-512: as numpy's
    monkeypatch.setattr(blas, "_amd", lambda: False)
    assert blas.own_core("SkylakeX") is None                  # an Intel CPU: as numpy's
    monkeypatch.setenv("BURNUMBA_BLAS_CORE", "Haswell")
    assert blas.own_core("SkylakeX") == "Haswell"
    monkeypatch.setenv("BURNUMBA_BLAS_CORE", "numpy")
    assert blas.own_core("SkylakeX") is None
    monkeypatch.delenv("BURNUMBA_BLAS_CORE")
    monkeypatch.setattr(blas, "_amd", lambda: True)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SkylakeX")
    assert blas.own_core("SkylakeX") is None


_K_SWEEP = """
import numpy as np
import burnumba as bn
from burnumba.kernels import engine
assert "scipy-openblas32" in engine.blas("float32", True).what
r = np.random.default_rng(1)
for K in (256, 512, 1024, 4096, 8192):                    # 64 x K x 512: large products
    A = r.normal(size=(64, K)).astype(np.float32)
    W = r.normal(size=(K, 512)).astype(np.float32) / np.sqrt(K)
    (gA, gW) = bn.grad(lambda A, W: np.sum(np.tanh(A @ W)), argnums=(0, 1))(A, W)
    A64, W64 = A.astype(np.float64), W.astype(np.float64)
    d = 1.0 - np.tanh(A64 @ W64) ** 2
    for got, ref in ((gA, d @ W64.T), (gW, A64.T @ d)):
        assert np.max(np.abs(got - ref)) <= 1e-4 * np.max(np.abs(ref)), K
print("ok")
"""


def test_own_openblas_products_over_a_range_of_inner_sizes():
    """OpenBLAS with kernels chosen by OPENBLAS_CORETYPE has overrun a stack buffer for large
    inner sizes (a segfault: 0.3.33's dgemm at K = 512 on this AMD EPYC; OpenMathLib/OpenBLAS
    #6021, #6026). burnumba's own OpenBLAS, with the Zen kernels, through all three products
    of a matmul node (forward, dA, dB) up to K = 8192, in a process of its own."""
    env = dict(os.environ, BURNUMBA_BLAS_CORE="Zen", OPENBLAS_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    out = subprocess.run([sys.executable, "-c", _K_SWEEP], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), (out.returncode,
                                                                        out.stderr[-3000:])


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _global_names(const)
    return names


def test_the_reference_engine_defines_every_name_a_block_statement_uses():
    """The plain-Python twin runs every block row's own statements (for tests, and for the
    values of Python decisions while tracing): each name they read that is not a local, an
    attribute or a builtin must be in its namespace. (inf and nan were missing: a decision
    after a causal_softmax, a solve or a Cholesky factor raised NameError.)"""
    import builtins
    import textwrap
    from burnumba.kernels import rules
    from burnumba.kernels.ops import ROWS
    provided = set(reference._block("pass", "probe").__globals__) | set(dir(builtins))
    for row in ROWS:
        if row.kind != "block":
            continue
        for slot in ("fwd", "bwd"):
            source = rules.block_source(getattr(row, slot), row.name, slot)
            module = compile(f"def block({reference._NAMES}):\n"
                             + textwrap.indent(source, "    "), row.name, "exec")
            fn = next(c for c in module.co_consts if hasattr(c, "co_names"))
            used = _global_names(fn) - set(fn.co_varnames)
            attributes = {n for n in used if f".{n}" in source}
            assert not used - attributes - provided, (row.name, slot)


def test_a_decision_after_block_rows_reads_their_values():
    # causal attention, a linear solve, a log-determinant, then a Python `if` on the result
    def f(x, A, causal_softmax):
        s = np.sum(causal_softmax(x.reshape(2, 2)) * x.reshape(2, 2))
        s = s + np.sum(np.linalg.solve(A, x)) + np.linalg.slogdet(A)[1]
        return s * 2.0 if s > 0 else s * -1.0

    def plain_causal_softmax(z):
        z = np.where(np.triu(np.ones(z.shape, bool), 1), -np.inf, z)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    A = np.eye(4) * 2.0 + 0.1
    g = bn.value_and_grad(lambda x: f(x, A, bn.causal_softmax))
    for x in (np.array([0.5, -1.0, 2.0, 0.25]), np.array([-3.0, -1.0, -2.0, -0.25])):
        value, grad = g(x)
        plain = lambda x: f(x, A, plain_causal_softmax)     # noqa: E731
        assert np.isclose(value, plain(x), rtol=1e-13)
        fd = [(plain(x + h) - plain(x - h)) / 2e-6 for h in np.eye(4) * 1e-6]
        np.testing.assert_allclose(grad, fd, rtol=1e-6)


def _piecewise(a, b):
    if a * b > 1.0:                     # a guard: two variants of one signature
        return np.tanh(a) * b ** 2
    return np.log1p(a * a) - 3.0 * b + np.sqrt(b)


def test_the_scalar_entry_gives_what_the_python_runner_gives():
    """A transformed function's scalar fast path (``run.entry``: the C extension's Fast, else
    Python's float_entry) returns None unless every argument is a Python float; otherwise
    what the Python runner and the general path give, bit for bit: value_and_grad, grad of
    one argument, permuted argnums, a guard that switches branch, a NaN value, and a thread
    whose first call has no caller yet."""
    import threading
    cases = [bn.value_and_grad(_piecewise, argnums=(0, 1)), bn.grad(_piecewise, argnums=(0, 1)),
             bn.value_and_grad(_piecewise, argnums=(1, 0)),
             bn.value_and_grad(lambda a: np.sqrt(a) * a), bn.grad(lambda a: np.sqrt(a) * a)]
    points = [(0.5, 3.0), (2.0, 3.0), (0.5, 3.0), (-1.0, 2.0), (4.0, -2.0)]
    for f in cases:
        n = f.__wrapped__.__code__.co_argcount
        for p in points:
            args = tuple(float(x) for x in p[:n])
            expected = f._transformed.call(args, {})        # the general path
            f(*args)
            got = f(*args)                                 # the fast path
            assert repr(got) == repr(expected), (f, args)
        state = f._transformed
        entry = state.fast[1]
        assert entry((1,) * n) is None and entry((1.0,) * (n + 1)) is None
        assert entry(tuple(np.float64(1.0) for _ in range(n))) is None
        results = []
        thread = threading.Thread(target=lambda: results.extend(
            repr(f(*p[:n])) for p in points * 2))
        thread.start()
        thread.join()
        assert results == [repr(f._transformed.call(tuple(p[:n]), {})) for p in points * 2]
    assert type(cases[0]._transformed.fast[1]).__name__ == (
        "Fast" if hasattr(engine._extension, "Fast") else "function")
