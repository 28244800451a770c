"""bn.njit_value_and_grad: gradients called from the user's own @numba.njit code."""
import numba
import numpy as np
import pytest

import burnumba as bn


def tiny(a, b):
    return ((a + b) - (a * b + b ** 3)) ** 2 / 2


def test_equals_value_and_grad_bit_for_bit_from_numba_and_python():
    h = bn.njit_value_and_grad(tiny, 1.0, 2.0, argnums=(0, 1))
    assert h.grad_size == 2
    vg = bn.value_and_grad(tiny, argnums=(0, 1))

    @numba.njit
    def sweep(h, xs):
        out = np.empty((xs.shape[0], 3))
        g = np.empty(2)
        for i in range(xs.shape[0]):
            out[i, 0] = h(xs[i, 0], xs[i, 1], g)
            out[i, 1:] = g
        return out

    xs = np.random.default_rng(0).normal(size=(200, 2))
    got = sweep(h, xs)
    for i in range(len(xs)):
        value, (da, db) = vg(float(xs[i, 0]), float(xs[i, 1]))
        assert (got[i, 0], got[i, 1], got[i, 2]) == (value, da, db)
    g = np.empty(2)
    assert h(0.5, -1.5, g) == vg(0.5, -1.5)[0] and tuple(g) == vg(0.5, -1.5)[1]


def test_arrays_data_arguments_and_float32():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)

    def loss(w, X, y):
        return np.mean((np.tanh(X @ w) - y) ** 2) + 0.01 * np.sum(w * w)
    w = rng.normal(size=3)
    h = bn.njit_value_and_grad(loss, w, X, y)
    g = np.empty(3)
    v = h(w, X, y, g)
    v_ref, g_ref = bn.value_and_grad(loss)(w, X, y)
    assert v == v_ref
    np.testing.assert_array_equal(g, g_ref)
    h32 = bn.njit_value_and_grad(loss, w.astype(np.float32), X.astype(np.float32),
                                 y.astype(np.float32))
    g32 = np.empty(3, np.float32)
    v32 = h32(w.astype(np.float32), X.astype(np.float32), y.astype(np.float32), g32)
    v32_ref, g32_ref = bn.value_and_grad(loss)(w.astype(np.float32), X.astype(np.float32),
                                               y.astype(np.float32))
    assert np.float32(v32) == v32_ref
    np.testing.assert_array_equal(g32, g32_ref)
    # a 2-D argument, differentiated with respect to the second argument
    h2 = bn.njit_value_and_grad(loss, w, X, y, argnums=1)
    gX = np.empty(X.size)
    h2(w, X, y, gX)
    np.testing.assert_array_equal(gX.reshape(X.shape), bn.grad(loss, argnums=1)(w, X, y))


def test_gradient_descent_and_hmc_loops_written_in_numba():
    h = bn.njit_value_and_grad(lambda x: np.sum((x - 3.0) ** 2), np.zeros(4))

    @numba.njit
    def descend(x, steps, lr):
        g = np.empty(x.size)
        for _ in range(steps):
            h(x, g)
            x = x - lr * g
        return x
    np.testing.assert_allclose(descend(np.zeros(4), 200, 0.1), 3.0, rtol=1e-12)

    # HMC on a standard normal: leapfrog with the handle's gradient at every step
    logp = bn.njit_value_and_grad(lambda q: -0.5 * np.sum(q * q), np.zeros(2))

    @numba.njit
    def hmc(n, seed):
        np.random.seed(seed)
        q = np.zeros(2)
        g = np.empty(2)
        out = np.empty((n, 2))
        for i in range(n):
            p = np.random.standard_normal(2)
            lp0 = logp(q, g)
            h0 = -lp0 + 0.5 * np.sum(p * p)
            qn, pn = q.copy(), p + 0.1 * g
            for _ in range(10):
                qn = qn + 0.2 * pn
                lp = logp(qn, g)
                pn = pn + 0.2 * g
            pn = pn - 0.1 * g
            if np.random.random() < np.exp(h0 - (-lp + 0.5 * np.sum(pn * pn))):
                q = qn
            out[i] = q
        return out
    draws = hmc(4000, 0)
    assert abs(draws.mean()) < 0.1 and abs(draws.var() - 1.0) < 0.1


@pytest.mark.slow
def test_parallel_calls_from_prange_equal_serial():
    h = bn.njit_value_and_grad(lambda x: np.sum(np.sin(x) * x), np.zeros(8))

    @numba.njit(parallel=True)
    def many(X):
        G = np.empty_like(X)
        for i in numba.prange(X.shape[0]):
            g = np.empty(X.shape[1])
            h(X[i], g)
            G[i] = g
        return G
    X = np.random.default_rng(2).normal(size=(500, 8))
    G = many(X)
    ref = bn.grad(lambda x: np.sum(np.sin(x) * x))
    for i in range(0, 500, 37):
        np.testing.assert_array_equal(G[i], ref(X[i]))


def test_errors():
    h = bn.njit_value_and_grad(lambda x: np.sum(x ** 2), np.zeros(3))
    with pytest.raises(bn.NjitArgumentError, match="does not have the size traced"):
        h(np.zeros(4), np.empty(3))
    with pytest.raises(bn.NjitArgumentError, match="grad must be a 1-D array"):
        h(np.zeros(3), np.empty(2))
    # numba reports what it cannot type when it compiles the caller
    with pytest.raises(numba.core.errors.TypingError, match="called with 1 arguments; it takes"):
        h(np.zeros(3))
    with pytest.raises(numba.core.errors.TypingError, match="cannot be passed"):
        h([1.0, 2.0, 3.0], np.empty(3))
    assert "arg0: (3,)" in h.describe()
    with pytest.raises(bn.InputError, match="takes floats and numpy arrays"):
        bn.njit_value_and_grad(lambda d: d["a"], {"a": 1.0})
    with pytest.raises(bn.OutputError, match="scalar"):
        bn.njit_value_and_grad(lambda x: x * 2, np.zeros(3))
    with pytest.raises(bn.InputError, match="argnums 3 out of range"):
        bn.njit_value_and_grad(lambda x: np.sum(x), np.zeros(3), argnums=3)
    t = bn.njit_value_and_grad(lambda t, i: np.sum(t[i]), np.ones((3, 2)), np.array([0]),
                               argnums=0)
    with pytest.raises(bn.NjitArgumentError, match="index out of range"):
        t(np.ones((3, 2)), np.array([5]), np.empty(6))
