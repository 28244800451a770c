"""bn.njit_op: a user's @numba.njit function as an op of the tape, with its vjp and jvp,
run inside the compiled loop (issue #31). Values and derivatives are checked against the
same function written with burnumba.numpy and against central differences; a deliberately
different rule must be the one used."""
import pickle
import threading

import numba
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp


@numba.njit
def softplus(x):
    return np.log1p(np.exp(x))


@numba.njit
def softplus_vjp(x, y, g):
    return g / (1.0 + np.exp(-x))


@numba.njit
def softplus_jvp(x, y, t):
    return t / (1.0 + np.exp(-x))


@numba.njit
def wrong_vjp(x, y, g):             # a deliberately different rule: 3 times the true one
    return 3.0 * g / (1.0 + np.exp(-x))


@numba.njit
def affine(w, x, b):                # three arguments of different ranks: w @ x + b
    return w @ x + b


@numba.njit
def affine_vjp(w, x, b, y, g):
    return np.outer(g, x), w.T @ g, g.sum()


@numba.njit
def affine_jvp(w, x, b, y, tw, tx, tb):
    return tw @ x + w @ tx + tb


@numba.njit
def raises(x):
    if x[0] > 100.0:
        raise ValueError("too large")
    return 2.0 * x


@numba.njit
def raises_vjp(x, y, g):
    return 2.0 * g


SOFTPLUS = bn.njit_op(softplus, vjp=softplus_vjp, jvp=softplus_jvp)
AFFINE = bn.njit_op(affine, vjp=affine_vjp, jvp=affine_jvp)
RNG = np.random.default_rng(3)


def _central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_values_and_gradients_match_burnumba_numpy_and_central_differences():
    x = RNG.normal(size=(4, 3))

    def loss(op):
        return lambda x: bnp.sum(op(x) * bnp.sin(x))

    mine = bn.value_and_grad(loss(SOFTPLUS))(x)
    ref = bn.value_and_grad(loss(lambda v: bnp.logaddexp(0.0, v)))(x)
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-14)
    np.testing.assert_allclose(mine[1], ref[1], rtol=1e-13)
    np.testing.assert_allclose(mine[1], _central(lambda v: float(np.sum(
        softplus(v) * np.sin(v))), x), rtol=1e-6, atol=1e-8)


def test_three_arguments_of_different_ranks():
    w, x, b = RNG.normal(size=(3, 4)), RNG.normal(size=4), 0.5

    def loss(w, x, b):
        return bnp.sum(bnp.tanh(AFFINE(w, x, b)))

    def ref(w, x, b):
        return bnp.sum(bnp.tanh(w @ x + b))

    got = bn.grad(loss, argnums=(0, 1, 2))(w, x, b)
    want = bn.grad(ref, argnums=(0, 1, 2))(w, x, b)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-15)
    # forward mode from the jvp rule
    tw, tx = RNG.normal(size=(3, 4)), RNG.normal(size=4)
    got = bn.jvp(lambda w, x: AFFINE(w, x, b), (w, x), (tw, tx))
    np.testing.assert_allclose(got[0], w @ x + b, rtol=1e-14)
    np.testing.assert_allclose(got[1], tw @ x + w @ tx, rtol=1e-13)


def test_the_users_rule_is_the_one_used():
    op = bn.njit_op(softplus, vjp=wrong_vjp)
    x = RNG.normal(size=5)
    g = bn.grad(lambda x: bnp.sum(op(x)))(x)
    np.testing.assert_allclose(g, 3.0 / (1.0 + np.exp(-x)), rtol=1e-14)


def test_under_vmap_and_njit_value_and_grad():
    xs = RNG.normal(size=(6, 3))
    f = bn.grad(lambda x: bnp.sum(SOFTPLUS(x) ** 2))
    want = np.array([f(x) for x in xs])
    np.testing.assert_allclose(bn.vmap(f)(xs), want, rtol=1e-14)
    handle = bn.njit_value_and_grad(lambda x: bnp.sum(SOFTPLUS(x) ** 2), xs[0])

    @numba.njit
    def use(h, x, grad):
        return h(x, grad)

    grad = np.zeros(3)
    value = use(handle, xs[1], grad)
    np.testing.assert_allclose(grad, want[1], rtol=1e-14)
    np.testing.assert_allclose(value, np.sum(softplus(xs[1]) ** 2), rtol=1e-14)


def test_float32_tapes():
    x = RNG.normal(size=4).astype(np.float32)
    g = bn.grad(lambda x: bnp.sum(SOFTPLUS(x)))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 1.0 / (1.0 + np.exp(-x)), rtol=1e-6)


def test_eager_call_is_the_numba_function():
    x = np.array([0.0, 1.0])
    np.testing.assert_array_equal(SOFTPLUS(x), softplus(x))


def test_a_python_decision_on_its_output_is_guarded():
    def f(x):
        y = SOFTPLUS(x)
        return bnp.sum(y) if bnp.sum(y) > 2.0 else -bnp.sum(y)

    g = bn.grad(f)
    np.testing.assert_allclose(g(np.array([3.0, 0.0])), 1.0 / (1.0 + np.exp(-np.array(
        [3.0, 0.0]))), rtol=1e-14)
    np.testing.assert_allclose(g(np.array([-3.0, 0.0])), -1.0 / (1.0 + np.exp(-np.array(
        [-3.0, 0.0]))), rtol=1e-14)


def test_threads_get_identical_results():
    x = RNG.normal(size=(50,))
    f = bn.grad(lambda x: bnp.sum(SOFTPLUS(x) * x))
    want = f(x)
    out = [None] * 8

    def work(k):
        for _ in range(50):
            out[k] = f(x)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in out:
        np.testing.assert_array_equal(got, want)


def test_errors_name_the_op_and_the_fix():
    with pytest.raises(bn.BurnumbaError, match="not a numba @njit function"):
        bn.njit_op(lambda x: x)
    no_vjp = bn.njit_op(softplus)
    with pytest.raises(bn.BurnumbaError, match="'softplus'.*needs a rule.*vjp="):
        bn.grad(lambda x: bnp.sum(no_vjp(x)))(np.ones(2))
    with pytest.raises(bn.BurnumbaError, match="'softplus'.*needs a rule.*jvp="):
        bn.jvp(lambda x: no_vjp(x), (np.ones(2),), (np.ones(2),))
    op = bn.njit_op(raises, vjp=raises_vjp)
    f = bn.grad(lambda x: bnp.sum(op(x)))
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    with pytest.raises(bn.BurnumbaError, match="'raises'.*raised an exception"):
        f(np.array([200.0, 1.0]))
    short = bn.njit_op(softplus, vjp=short_vjp)
    with pytest.raises(bn.BurnumbaError, match="'softplus'.*raised.*cotangent whose size"):
        bn.grad(lambda x: bnp.sum(short(x)))(np.ones(3))
    with pytest.raises(bn.BurnumbaError, match="'softplus'.*derivative of its derivative"):
        bn.hessian(lambda x: bnp.sum(SOFTPLUS(x)))(np.ones(2))
    with pytest.raises(bn.BurnumbaError, match="takes 1 to 3"):
        bn.grad(lambda x: bnp.sum(SOFTPLUS(x, x, x, x)))(np.ones(2))
    tape = bn.trace(lambda x: bnp.sum(SOFTPLUS(x)), np.ones(2))
    assert tape(np.zeros(2)) == pytest.approx(2 * np.log(2.0))
    with pytest.raises(bn.BurnumbaError, match="cannot be pickled.*machine code"):
        pickle.dumps(tape)


@numba.njit
def short_vjp(x, y, g):             # a cotangent of the wrong size: reported, never read past
    return g[:1]


@numba.njit
def no_zeros(x):
    if x[0] == 0.0:
        raise ValueError("zero")
    return 1.0 / x


def test_an_output_shape_fwd_cannot_find_asks_for_shape():
    with pytest.raises(bn.BurnumbaError, match="'no_zeros'.*calling fwd on zeros.*shape="):
        bn.grad(lambda x: bnp.sum(bn.njit_op(no_zeros)(x)))(np.ones(2))
    op = bn.njit_op(no_zeros, vjp=numba.njit(lambda x, y, g: -g * y * y), shape=(2,))
    np.testing.assert_allclose(bn.grad(lambda x: bnp.sum(op(x)))(np.array([1.0, 2.0])),
                               [-1.0, -0.25])


def test_rules_are_given_before_the_first_traced_call():
    op = bn.njit_op(softplus)
    op.defvjp(softplus_vjp)                      # before any trace: fine
    g = bn.grad(lambda x: bnp.sum(op(x)))(np.zeros(2))
    np.testing.assert_array_equal(g, [0.5, 0.5])
    with pytest.raises(bn.BurnumbaError, match="traced already.*make a new bn.njit_op"):
        op.defjvp(softplus_jvp)


def test_a_rule_that_does_not_compile_is_named():
    @numba.njit
    def bad_vjp(x, y, g):
        return g + "text"

    op = bn.njit_op(softplus, vjp=bad_vjp)
    with pytest.raises(bn.BurnumbaError, match="'softplus': its vjp rule does not compile"):
        bn.grad(lambda x: bnp.sum(op(x)))(np.ones(2))
