"""numpy.linalg.qr of traced matrices (burnumba/numpy/linalg.py: LAPACK's Householder
reflections in traced ops): Q and R equal numpy's to rounding in every mode, gradients
against central differences and, for m >= n, the closed-form reverse rule of the
factorization (Walter & Lehmann; PyTorch's linalg_qr_backward), an independent
implementation (autograd has no rule for qr)."""
import numpy as np
import pytest

import burnumba as bn

SHAPES = [(4, 3), (3, 3), (3, 5), (6, 2), (1, 3), (3, 1)]


def weights(shape, mode, seed):
    rng = np.random.default_rng(seed)
    m, n = shape
    k = min(m, n)
    q = (m, k) if mode == "reduced" else (m, m)
    r = (k, n) if mode != "complete" else (m, n)
    return rng.normal(size=q), rng.normal(size=r)


def loss(mode, WQ, WR):
    def f(a):
        out = np.linalg.qr(a, mode=mode)
        if mode == "r":
            return np.sum(out * WR)
        return np.sum(out[0] * WQ) + np.sum(out[1] * WR)
    return f


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", SHAPES)
def test_values_are_numpys_and_gradients_central_differences(shape, mode):
    a = np.random.default_rng(sum(shape)).normal(size=shape)
    f = loss(mode, *weights(shape, mode, 7))
    traced = bn.value_and_grad(f)
    value, g = traced(a)
    assert value == pytest.approx(f(a), rel=1e-12, abs=1e-12)       # numpy's Q and R
    h = 1e-6
    fd = np.array([(f(a + h * e.reshape(shape)) - f(a - h * e.reshape(shape))) / (2 * h)
                   for e in np.eye(a.size)]).reshape(shape)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (7, 4)])
def test_gradient_is_the_closed_form_rule(shape):
    rng = np.random.default_rng(3)
    a = rng.normal(size=shape)
    WQ, WR = weights(shape, "reduced", 5)
    g = bn.grad(loss("reduced", WQ, WR))(a)
    Q, R = np.linalg.qr(a)
    gR = np.triu(WR)
    M = R @ gR.T - WQ.T @ Q
    ref = np.linalg.solve(R, (WQ + Q @ (np.tril(M) + np.tril(M, -1).T)).T).T
    np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-13)


def test_the_traced_factors_are_numpys_under_jacobian_and_vmap():
    a = np.random.default_rng(0).normal(size=(4, 3))
    jac = bn.jacobian(lambda a: np.linalg.qr(a)[1])(a)
    h = 1e-6
    fd = np.stack([(np.linalg.qr(a + h * e.reshape(4, 3))[1]
                    - np.linalg.qr(a - h * e.reshape(4, 3))[1]) / (2 * h)
                   for e in np.eye(12)], axis=-1).reshape(3, 3, 4, 3)
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-7)
    for mode in ("reduced", "complete"):
        got = bn.vmap(lambda a: np.concatenate([np.ravel(m) for m in np.linalg.qr(a, mode)]))(
            a[None])[0]
        want = np.concatenate([np.ravel(m) for m in np.linalg.qr(a, mode)])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_a_zero_column_is_not_reflected_and_another_call_traces_anew():
    """A column already zero below its diagonal is left as it is (tau = 0, as LAPACK's
    dlarfg): a decision, so a later matrix without it traces again."""
    a = np.array([[2.0, 1.0], [0.0, 3.0]])
    f = loss("reduced", *weights((2, 2), "reduced", 1))
    g = bn.value_and_grad(f)
    assert g(a)[0] == pytest.approx(f(a), rel=1e-13)
    b = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert g(b)[0] == pytest.approx(f(b), rel=1e-13)
    assert g(-a)[0] == pytest.approx(f(-a), rel=1e-13)


def test_refused_with_the_fix():
    with pytest.raises(bn.UnsupportedOpError, match="mode 'reduced'"):
        bn.grad(lambda a: np.sum(np.linalg.qr(a, mode="raw")[0]))(np.eye(2))
    with pytest.raises(bn.UnsupportedOpError, match="per matrix"):
        bn.grad(lambda a: np.sum(np.linalg.qr(a)[1]))(np.ones((2, 3, 3)))
