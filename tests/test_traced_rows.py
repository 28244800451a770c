"""Block rows that carry their rules in numpy's names (``Op.traced``, kernels/row.py), driven
by the op table: adding such a row needs no test of its own here.

For every such row, on several shapes and axes, at random points of its domain:
* its kernels against its numpy rules: the value against ``traced.value``, the gradient
  against ``traced.vjp`` and the tangent (``bn.jvp``) against ``traced.jvp``, run with numpy;
* its gradient against HIPS autograd's gradient of ``traced.value`` run with autograd.numpy
  (an independent differentiation of the same formula) and against central differences;
* its second derivatives (a Hessian through the traced rules, ``burnumba/derive/traced.py``)
  against central differences of its gradient.
Its special values (NaN, +-inf, +-0) are checked with every block row's in test_ieee.py.
"""
import math

import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
from burnumba.kernels import ROWS

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

TRACED = [r for r in ROWS if r.traced is not None]
CASES = [((5,), 0), ((4, 3), 0), ((4, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), -1)]


def test_rows_with_traced_rules_have_what_they_need():
    for row in TRACED:
        assert row.kind == "block" and row.layout == "axis", row.name
        assert row.public and hasattr(bnp, row.public), row.name


def _lanes(shape, axis):
    axis %= len(shape)
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _points(row, shape, seed):
    lo, hi = row.domain[0]
    return np.random.default_rng(seed).uniform(lo, hi, shape)


@pytest.mark.parametrize("row", TRACED, ids=lambda r: r.name)
@pytest.mark.parametrize("shape, axis", CASES)
def test_kernels_agree_with_the_numpy_rules(row, shape, axis):
    f = getattr(bnp, row.public)
    a = _points(row, shape, 1)
    g = np.random.default_rng(2).normal(size=shape)
    t = np.random.default_rng(3).normal(size=shape)
    y = f(a, axis=axis)                                   # numpy data: traced.value itself
    lanes = _lanes(shape, axis)
    want_y = row.traced.value(np, a.reshape(lanes), 0.0).reshape(shape)
    np.testing.assert_array_equal(y, want_y)
    value, grad = bn.value_and_grad(lambda x: np.sum(f(x, axis=axis) * g))(a)
    np.testing.assert_allclose(value, np.sum(want_y * g), rtol=1e-12)
    want_g = row.traced.vjp(np, a.reshape(lanes), want_y.reshape(lanes), g.reshape(lanes), 0.0)
    np.testing.assert_allclose(grad, want_g.reshape(shape), rtol=1e-12, atol=1e-14)
    y2, ty = bn.jvp(lambda x: f(x, axis=axis), (a,), (t,))
    np.testing.assert_allclose(y2, want_y, rtol=1e-13)
    want_t = row.traced.jvp(np, a.reshape(lanes), want_y.reshape(lanes), t.reshape(lanes), 0.0)
    np.testing.assert_allclose(ty, want_t.reshape(shape), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("row", TRACED, ids=lambda r: r.name)
@pytest.mark.parametrize("shape, axis", CASES)
def test_gradient_against_autograd_and_central_differences(row, shape, axis):
    f = getattr(bnp, row.public)
    a = _points(row, shape, 4)
    w = np.random.default_rng(5).normal(size=shape)
    lanes = _lanes(shape, axis)

    def theirs(x):
        return anp.sum(anp.reshape(row.traced.value(anp, anp.reshape(x, lanes), 0.0), shape)
                       * w)
    grad = bn.grad(lambda x: np.sum(f(x, axis=axis) * w))(a)
    np.testing.assert_allclose(grad, autograd.grad(theirs)(a), rtol=1e-12, atol=1e-14)
    eps, fd = 1e-6, np.zeros(shape)
    for k in np.ndindex(shape):
        e = np.zeros(shape)
        e[k] = eps
        fd[k] = (theirs(a + e) - theirs(a - e)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("row", TRACED, ids=lambda r: r.name)
@pytest.mark.parametrize("shape, axis", [((4,), 0), ((2, 3), 1), ((3, 2), 0)])
def test_second_derivatives_through_the_traced_rules(row, shape, axis):
    f = getattr(bnp, row.public)
    a = _points(row, shape, 6)
    w = np.random.default_rng(7).normal(size=shape)

    def loss(x):
        return np.sum(f(x, axis=axis) * w)
    H = bn.hessian(loss)(a).reshape(a.size, a.size)
    gradient = bn.grad(loss)
    eps, fd = 1e-5, np.zeros((a.size, a.size))
    for k in range(a.size):
        e = np.zeros(a.size)
        e[k] = eps
        fd[:, k] = ((gradient(a + e.reshape(shape)) - gradient(a - e.reshape(shape))).ravel()
                    / (2 * eps))
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-14)
