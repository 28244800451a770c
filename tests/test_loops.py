"""Structured loops (bn.fori_loop, bn.scan, bn.while_loop): values and gradients against the
same loop in Python under autograd and against central differences, with and without
checkpointing, under every transformation; the tape's size does not grow with the steps;
bad input is an error that names the loop.

Table-driven: each CASE is a function written with a loop op (its checkpoint policy a
parameter), the same function as a Python loop for autograd, and its arguments."""
import io
import pickle

import numpy as np
import pytest

import burnumba as bn
from burnumba import optim
from conftest import central_diff

ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

RTOL = 1e-9
POLICIES = (None, 1, 3, True)
_rng = np.random.default_rng(7)
W = _rng.normal(size=(4, 4)) * 0.4
TS = np.linspace(0.0, 1.0, 9)


# -- the cases: (loop-op function of checkpoint, Python-loop function for autograd, args) -------
def euler(ck):
    def f(x, k):
        def step(i, y):
            return y + 0.05 * (-k * y + np.sin(y) * x)
        return np.sum(bn.fori_loop(0, 12, step, x, checkpoint=ck) ** 2)
    return f


def euler_ag(x, k):
    y = x
    for i in range(12):
        y = y + 0.05 * (-k * y + anp.sin(y) * x)
    return anp.sum(y ** 2)


def counter_used(ck):
    def f(x):
        return np.sum(bn.fori_loop(3, 9, lambda i, y: y * np.cos(i * x) + i, x, checkpoint=ck))
    return f


def counter_used_ag(x):
    y = x
    for i in range(3, 9):
        y = y * anp.cos(i * x) + i
    return anp.sum(y)


def rnn_pytree(ck):
    def f(x, w):
        def step(c, t):
            h, s = c["h"], c["acc"][0]
            h = np.tanh(W @ h * w + t * x)
            return {"h": h, "acc": (s + np.sum(h), t)}, (h[0] * t, h * w)
        c, (y0, hs) = bn.scan(step, {"h": x, "acc": (0.0, 0.0)}, TS, checkpoint=ck)
        return np.sum(c["h"] ** 2) + c["acc"][0] + np.sum(y0 ** 2) + np.sum(np.sin(hs))
    return f


def rnn_pytree_ag(x, w):
    h, s, y0, hs = x, 0.0, [], []
    for t in TS:
        h = anp.tanh(anp.dot(W, h) * w + t * x)
        s = s + anp.sum(h)
        y0.append(h[0] * t)
        hs.append(h * w)
    return (anp.sum(h ** 2) + s + anp.sum(anp.array(y0) ** 2)
            + anp.sum(anp.sin(anp.array(hs))))


def scan_xs_tree(ck):
    def f(a, xs):
        def step(c, x):
            c = c * a + x["u"] * np.cos(x["v"])
            return c, np.sum(c)
        c, ys = bn.scan(step, np.zeros(3), {"u": xs, "v": xs[::-1] * 2.0}, checkpoint=ck)
        return np.sum(c) + np.sum(ys * ys)
    return f


def scan_xs_tree_ag(a, xs):
    c, ys = anp.zeros(3), []
    v = xs[::-1] * 2.0
    for k in range(xs.shape[0]):
        c = c * a + xs[k] * anp.cos(v[k])
        ys.append(anp.sum(c))
    return anp.sum(c) + anp.sum(anp.array(ys) ** 2)


def nested(ck):
    def f(x):
        def outer(i, y):
            return bn.fori_loop(0, 3, lambda j, z: z * 0.9 + np.sin(z) * x, y, checkpoint=ck)
        return np.sum(bn.fori_loop(0, 4, outer, x, checkpoint=ck))
    return f


def nested_ag(x):
    y = x
    for i in range(4):
        for j in range(3):
            y = y * 0.9 + anp.sin(y) * x
    return anp.sum(y)


def newton(ck):
    def f(a):
        return bn.while_loop(lambda x: abs(x * x - a) > 1e-12 * a,
                             lambda x: x - (x * x - a) / (2.0 * x), a, checkpoint=ck)
    return f


def newton_ag(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = x - (x * x - a) / (2.0 * x)
    return x


def closure_only(ck):
    def f(x):                               # the carry starts concrete; x only in the body
        return np.sum(bn.fori_loop(0, 6, lambda i, h: np.tanh(h + x), np.zeros(3),
                                   checkpoint=ck))
    return f


def closure_only_ag(x):
    h = anp.zeros(3)
    for i in range(6):
        h = anp.tanh(h + x)
    return anp.sum(h)


X3 = np.array([0.3, -0.7, 1.1])
CASES = {
    "euler": (euler, euler_ag, (X3, 0.8), (0, 1)),
    "counter": (counter_used, counter_used_ag, (X3 * 0.3,), (0,)),
    "rnn_pytree": (rnn_pytree, rnn_pytree_ag, (np.array([0.2, -0.1, 0.4, 0.3]), 0.9), (0, 1)),
    "scan_xs_tree": (scan_xs_tree, scan_xs_tree_ag, (0.7, _rng.normal(size=(6, 3))), (0, 1)),
    "nested": (nested, nested_ag, (X3,), (0,)),
    "newton": (newton, newton_ag, (2.5,), (0,)),
    "closure_only": (closure_only, closure_only_ag, (X3,), (0,)),
}


def _close(a, b, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol,
                               atol=1e-12)


@pytest.mark.parametrize("ck", POLICIES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_grad_against_autograd(name, ck):
    make, ref, args, argnums = CASES[name]
    vg = bn.value_and_grad(make(ck), argnums=argnums)
    value, grads = vg(*args)
    _close(value, ref(*args))
    for k, g in zip(argnums, grads):
        _close(g, ag.grad(ref, k)(*args))
    tape = next(iter(vg.tapes.values()))
    assert tape.loops, "the loop was unrolled instead of traced once"


@pytest.mark.parametrize("name", sorted(CASES))
def test_central_differences(name):
    make, _, args, argnums = CASES[name]
    f = make(None)
    grads = bn.grad(f, argnums=argnums)(*args)
    for k, g in zip(argnums, grads):
        np.testing.assert_allclose(g, central_diff(f, args, k), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CASES))
def test_checkpoint_gives_the_same_bits(name):
    """Recomputing the steps from a kept carry runs the same kernel on the same values."""
    make, _, args, argnums = CASES[name]
    want = bn.grad(make(None), argnums=argnums)(*args)
    for ck in (1, 2, 5, True):
        got = bn.grad(make(ck), argnums=argnums)(*args)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_unrolled_equals_structured(name):
    """unroll=True traces the Python loop step by step: the same numbers."""
    make, _, args, argnums = CASES[name]
    f = make(None)
    want = bn.value_and_grad(f, argnums=argnums)(*args)
    got = bn.value_and_grad(_unrolled(f), argnums=argnums)(*args)
    _close(got[0], want[0])
    for a, b in zip(got[1], want[1]):
        _close(a, b)


def _unrolled(f):
    """f with every loop op called with unroll=True."""
    def g(*args):
        saved = (bn.fori_loop, bn.scan, bn.while_loop)
        try:
            bn.fori_loop = lambda *a, **k: saved[0](*a, **{**k, "unroll": True})
            bn.scan = lambda *a, **k: saved[1](*a, **{**k, "unroll": True})
            bn.while_loop = lambda *a, **k: saved[2](*a, **{**k, "unroll": True})
            return f(*args)
        finally:
            bn.fori_loop, bn.scan, bn.while_loop = saved
    return g


# -- the tape is O(body) ----------------------------------------------------------------------
def test_tape_size_does_not_grow_with_steps():
    sizes = {}
    for n in (1, 10, 1000):
        def f(x, n=n):
            return np.sum(bn.fori_loop(0, n, lambda i, y: y + 0.001 * np.sin(y) * x, x))
        vg = bn.value_and_grad(f)
        vg(X3)
        sizes[n] = len(next(iter(vg.tapes.values())))
    assert sizes[1] == sizes[10] == sizes[1000]
    unrolled = bn.trace(lambda x: np.sum(bn.fori_loop(0, 10, lambda i, y: y + np.sin(y) * x,
                                                      x)), X3)
    assert len(unrolled) > 10 and not unrolled.loops


def test_traced_trip_count_is_data():
    """An int argument is data: one tape, no guard, for every trip count (0 included)."""
    vg = bn.value_and_grad(lambda x, n: bn.fori_loop(0, n, lambda i, y: y * x, 1.0))
    for n in (0, 1, 4, 7):
        value, g = vg(1.3, n)
        _close(value, 1.3 ** n)
        _close(g, n * 1.3 ** (n - 1) if n else 0.0)
    (tape,) = vg.tapes.values()
    assert tape.guards is None and tape.loops
    assert not vg.variants


def test_while_loop_newton_one_tape():
    """Reverse-mode through while_loop (JAX refuses it): one tape for every trip count,
    against the derivative of sqrt; the unrolled loop needs one variant per count."""
    f = CASES["newton"][0](None)
    g = bn.grad(f)
    for a in (0.3, 2.0, 10.0, 1e6):
        _close(g(a), 0.5 / np.sqrt(a), rtol=1e-8)
    assert len(g.tapes) == 1 and not g.variants
    assert next(iter(g.tapes.values())).guards is None


def test_zero_steps_and_scan_ys():
    f = bn.value_and_grad(lambda x: np.sum(bn.fori_loop(5, 5, lambda i, y: y * 3.0, x)))
    _close(f(X3)[1], np.ones(3))
    c, ys = bn.scan(lambda c, x: (c + x, c * x), 1.0, np.arange(4.0))    # concrete: numpy
    assert c == 7.0 and ys.tolist() == [0.0, 1.0, 4.0, 12.0]
    grad_ys = bn.grad(lambda a: np.sum(bn.scan(lambda c, x: (c * a, c + x), 1.0,
                                              np.arange(4.0))[1] ** 2))(1.5)
    _close(grad_ys, ag.grad(lambda a: sum((a ** k + k) ** 2 for k in range(4)))(1.5))


def test_concrete_values_run_the_python_loop():
    assert bn.fori_loop(0, 4, lambda i, c: c + i, 0) == 6
    assert bn.while_loop(lambda c: c < 10, lambda c: c * 2, 1) == 16
    c, ys = bn.scan(lambda c, x: (c + 1.0, c), 0.0, length=3)
    assert c == 3.0 and ys.tolist() == [0.0, 1.0, 2.0]


# -- every transformation ----------------------------------------------------------------------
def vec(x):
    return bn.fori_loop(0, 6, lambda i, y: y + 0.1 * np.sin(y) * x, x)


def vec_ag(x):
    y = x
    for i in range(6):
        y = y + 0.1 * anp.sin(y) * x
    return y


def scalar(x):
    return np.sum(vec(x) ** 2)


def scalar_ag(x):
    return anp.sum(vec_ag(x) ** 2)


def test_forward_mode_and_jacobians():
    v = np.array([0.5, -1.0, 2.0])
    _close(bn.jvp(vec, (X3,), (v,))[1], ag.make_jvp(vec_ag)(X3)(v)[1])
    _close(bn.vjp(vec, X3)[1](v)[0], ag.make_vjp(vec_ag)(X3)[0](v))
    J = ag.jacobian(vec_ag)(X3)
    for jac in (bn.jacobian, bn.jacfwd, bn.jacrev):
        _close(jac(vec)(X3), J)
    _close(bn.linearize(vec, X3)[1](v), J @ v)
    H = ag.hessian(scalar_ag)(X3)
    _close(bn.hessian(scalar)(X3), H)
    _close(bn.hvp(scalar)(X3, v), H @ v)


def test_nested_and_vmap():
    _close(bn.grad(lambda x: np.sum(bn.grad(scalar)(x) ** 2))(X3),
           ag.grad(lambda x: anp.sum(ag.grad(scalar_ag)(x) ** 2))(X3))
    batch = _rng.normal(size=(5, 3))
    want = np.stack([ag.grad(scalar_ag)(r) for r in batch])
    _close(bn.vmap(bn.grad(scalar))(batch), want)
    _close(bn.vmap(vec)(batch), np.stack([vec_ag(r) for r in batch]))
    _close(bn.vmap(bn.value_and_grad(scalar))(batch)[1], want)


def test_njit_and_tape_files():
    handle = bn.njit_value_and_grad(scalar, X3)
    g = np.zeros(3)
    value = handle(X3, g)
    _close(value, scalar_ag(X3))
    _close(g, ag.grad(scalar_ag)(X3))
    tape = bn.trace(scalar, X3)                 # bn.trace unrolls: its tapes can be saved
    buf = io.BytesIO()
    tape.save(buf)
    buf.seek(0)
    _close(bn.load_tape(buf).value_and_grad(X3)[1], ag.grad(scalar_ag)(X3))
    vg = bn.value_and_grad(scalar)
    vg(X3)
    looped = next(iter(vg.tapes.values()))
    with pytest.raises(bn.UnsupportedOpError, match="structured loop.*cannot be saved"):
        looped.save(io.BytesIO())
    with pytest.raises(bn.UnsupportedOpError, match="structured loop.*cannot be pickled"):
        pickle.dumps(looped)


def test_debug_nans_and_trainer():
    with bn.debug_nans():
        _close(bn.grad(scalar)(X3), ag.grad(scalar_ag)(X3))
    X = _rng.normal(size=(12, 3))
    y = _rng.normal(size=12)

    def loss(p, X, y, op):
        def step(i, h):
            return np.tanh(X @ p["w"] + h * p["a"])
        h = op(0, 4, step, np.zeros(12))
        return np.mean((h - y) ** 2)

    def python_loop(lo, hi, body, h):
        for i in range(lo, hi):
            h = body(i, h)
        return h

    p0 = {"w": np.zeros(3), "a": np.array([0.5])}
    t1 = optim.Trainer(lambda p, X, y: loss(p, X, y, bn.fori_loop), dict(p0), optim.SGD(0.1),
                       X, y)
    t2 = optim.Trainer(lambda p, X, y: loss(p, X, y, python_loop), dict(p0), optim.SGD(0.1),
                       X, y)
    l1 = [t1.step(X, y) for _ in range(8)]
    l2 = [t2.step(X, y) for _ in range(8)]
    _close(l1, l2)
    assert t1.tape.loops and len(t1.tape) < len(t2.tape)


# -- bodies that one traced step cannot stand for: unrolled, still right ---------------------
def test_body_with_a_decision_is_unrolled():
    def f(x):
        def body(i, y):
            if np.sum(y) > 1.0:
                return y * 0.5
            return y * 2.0
        return np.sum(bn.fori_loop(0, 4, body, x))

    def f_ag(x):
        y = x
        for i in range(4):
            y = y * 0.5 if anp.sum(y) > 1.0 else y * 2.0
        return anp.sum(y)
    g = bn.grad(f)
    for x in (X3, X3 * 0.1, -X3):
        _close(g(x), ag.grad(f_ag)(x))
    assert not next(iter(g.tapes.values())).loops


def test_body_with_random_draws_is_unrolled():
    """A draw burnumba records (from a generator the function names) is drawn anew on
    each step and each call (a traced step would repeat its one draw)."""
    rng = np.random.default_rng(3)

    def f(x):
        return bn.fori_loop(0, 3, lambda i, y: y + rng.normal(), x)
    vg = bn.value_and_grad(f)
    for _ in range(2):
        ref = np.random.default_rng(3)
        ref.bit_generator.state = rng.bit_generator.state
        want = 0.5 + sum(ref.normal() for _ in range(3))
        value, g = vg(0.5)
        _close(value, want)
        _close(g, 1.0)
    assert not next(iter(vg.tapes.values())).loops


# -- errors -----------------------------------------------------------------------------------
def test_errors_name_the_loop():
    grad = bn.grad
    with pytest.raises(bn.ShapeError, match="fori_loop: body_fun changed the shape"):
        grad(lambda x: np.sum(bn.fori_loop(0, 3, lambda i, y: np.concatenate([y, y]), x)))(X3)
    with pytest.raises(bn.ShapeError, match="changed the shape of the carry's leaf 0"):
        bn.fori_loop(0, 3, lambda i, y: np.ones(2), np.ones(3))
    with pytest.raises(bn.PytreeError, match="while_loop: body_fun returned a carry of "
                                             "structure"):
        grad(lambda x: bn.while_loop(lambda c: c[0] < 3.0, lambda c: c[0] + x, (x, x))[0])(1.0)
    with pytest.raises(bn.InputError, match="fori_loop: body_fun changed the dtype"):
        bn.fori_loop(0, 2, lambda i, c: c + 0.5, 0)
    with pytest.raises(bn.InputError, match="fori_loop: upper must be an int"):
        bn.fori_loop(0, 2.5, lambda i, c: c, 0.0)
    with pytest.raises(bn.InputError, match="checkpoint must be"):
        bn.fori_loop(0, 2, lambda i, c: c, 0.0, checkpoint=0)
    with pytest.raises(bn.ShapeError, match="scan: the leading axes of xs"):
        bn.scan(lambda c, x: (c, x), 0.0, (np.zeros(3), np.zeros(4)))
    with pytest.raises(bn.PytreeError, match="scan: f must return a pair"):
        grad(lambda x: bn.scan(lambda c, t: c * t, x, np.ones(3))[0])(1.0)
    with pytest.raises(bn.ShapeError, match="while_loop: cond_fun must return a scalar"):
        grad(lambda x: np.sum(bn.while_loop(lambda c: c > 0.0, lambda c: c - 1.0, x)))(X3)


def test_data_error_inside_a_step_is_raised():
    def f(x, idx):
        return bn.fori_loop(0, 3, lambda i, c: c + x[idx], 0.0)
    vg = bn.value_and_grad(f)
    _close(vg(X3, np.array(1))[0], 3 * X3[1])
    with pytest.raises(bn.DataError, match="out of bounds"):
        vg(X3, np.array(7))


def test_decisions_around_a_loop_are_guards():
    """A Python decision on the loop's result evaluates the loop's steps while tracing
    (tracing/concrete.py); the tape keeps the loop and the guard, and retraces only when the
    decision goes the other way."""
    def f(x, n):
        if np.sum(x) > 0.0:                      # before the loop
            x = x * 2.0
        y = bn.fori_loop(0, n, lambda i, y: y * 0.5 + np.sin(y), x)
        if np.sum(y) > 1.0:                      # after it: the loop's steps evaluated
            return np.sum(y * y)
        return np.sum(y)

    def f_ag(x, n):
        if anp.sum(x) > 0.0:
            x = x * 2.0
        y = x
        for i in range(n):
            y = y * 0.5 + anp.sin(y)
        return anp.sum(y * y) if anp.sum(y) > 1.0 else anp.sum(y)
    vg = bn.value_and_grad(f)
    for x, n in ((X3, 3), (X3, 9), (-X3, 3), (-X3 * 3.0, 7), (X3, 3)):
        value, g = vg(x, n)
        _close(value, f_ag(x, n))
        _close(g, ag.grad(f_ag)(x, n))
    tapes = [next(iter(vg.tapes.values()))] + [t for v in vg.variants.values() for t in v]
    assert all(t.loops for t in tapes) and all(t.guards is not None for t in tapes)


def test_decision_after_nested_and_while_loops():
    def f(a):
        z = bn.while_loop(lambda z: z < 10.0, lambda z: z * a + 0.5, 1.0)
        w = bn.fori_loop(0, 2, lambda i, w: bn.fori_loop(0, 3, lambda j, v: v * a, w), z)
        if w > 500.0:
            return np.sqrt(w)
        return w

    def f_ag(a):
        z = 1.0
        while z < 10.0:
            z = z * a + 0.5
        w = z * a ** 6
        return anp.sqrt(w) if w > 500.0 else w
    vg = bn.value_and_grad(f)
    for a in (1.5, 2.5, 1.2, 3.0):
        value, g = vg(a)
        _close(value, f_ag(a))
        _close(g, ag.grad(f_ag)(a))


def test_while_loop_checkpoint_keeps_fewer_carries():
    """checkpoint=True on a while_loop: k from the previous run's trip count, the same
    gradient bit for bit."""
    def f(a, ck):
        return bn.while_loop(lambda c: c[1] < 400.0,
                             lambda c: (np.sin(c[0]) * a + c[0], c[1] + 1.0), (a, 0.0),
                             checkpoint=ck)[0]
    g_all = bn.grad(f)(0.3, None)
    gck = bn.grad(f)
    for _ in range(2):
        np.testing.assert_array_equal(gck(0.3, True), g_all)
    (tape,) = [t for t in gck.tapes.values() if t.loops[0].checkpoint == -1]
    run = tape.state().call.runs[tape.loops[0]]
    assert run.steps == 400 and run.every == 20           # ceil(sqrt(400))


def test_threads_and_float32():
    """Each thread runs its own State (and so its own loop runner); float32 tapes loop too."""
    import threading
    g = bn.grad(scalar)
    want = ag.grad(scalar_ag)(X3)
    inputs = [X3 * (1.0 + 0.1 * k) for k in range(4)]
    wants = [ag.grad(scalar_ag)(x) for x in inputs]
    errors = []

    def work(k):
        for _ in range(30):
            got = g(inputs[k])
            if not np.allclose(got, wants[k], rtol=RTOL, atol=1e-12):
                errors.append((k, got))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    x32 = X3.astype(np.float32)
    g32 = bn.grad(scalar)(x32)
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, want, rtol=1e-5)
    assert next(t for t in bn.grad(scalar).tapes.values() if t.dtype == np.float32).loops
