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

from burnumba.kernels.row import VIEWS

TRACED = [r for r in ROWS if r.traced is not None]
CASES = [((5,), 0), ((4, 3), 0), ((4, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), -1)]


def test_rows_with_traced_rules_have_what_they_need():
    for row in TRACED:
        assert row.kind == "block" and row.layout in VIEWS, row.name
        assert not row.public or hasattr(bnp, row.public), row.name
        assert row.traced.imm, row.name


def _differentiable(row):
    """False for a row of integer data (argsort), whose rules give no cotangent."""
    a = np.ones((1, 2, 1))
    return row.traced.vjp(np, a, a, a, row.traced.imm[0]) is not None


DIFFERENTIABLE = [r for r in TRACED if _differentiable(r)]


def _cases(row, cases):
    """(shape, axis, c) for the row: an "axis_rows" row works along the last axis only."""
    return [(shape, axis, c) for shape, axis in cases for c in row.traced.imm
            if row.layout != "axis_rows" or axis % len(shape) == len(shape) - 1]


def _table(rows, cases):
    return [pytest.param(row, shape, axis, c, id=f"{row.name}-{shape}-{axis}-{c}")
            for row in rows for shape, axis, c in _cases(row, cases)]


def _view(shape, axis):
    """(outer, m, inner): an array of ``shape`` seen along ``axis``."""
    axis %= len(shape)
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _out_shape(row, shape, axis):
    axis %= len(shape)
    return shape[:axis] + shape[axis + 1:] if row.layout == "axis_reduce" else shape


def _node(row, axis, c):
    """x -> the row's node on traced x along ``axis`` with immediate c (how burnumba.numpy
    makes it), for a table-driven test of every row."""
    def f(x):
        return x._b.axis(row.name, x, axis, _out_shape(row, x.shape, axis), imm=c)
    return f


def _points(row, shape, seed, ties=False):
    """Random points of the row's domain; ``ties``: on a grid of halves, so that a line
    holds equal values (tied maxima, kinks of max and sort)."""
    lo, hi = row.domain[0]
    a = np.random.default_rng(seed).uniform(lo, hi, shape)
    return np.clip(np.round(2.0 * a) / 2.0, lo, hi) if ties else a


def test_public_functions_are_the_rules_on_numpy_data():
    for row in TRACED:
        if row.public:
            a = _points(row, (3, 4), 0)
            want = row.traced.value(np, a.reshape(_view((3, 4), 1)), 0.0).reshape(3, 4)
            np.testing.assert_array_equal(getattr(bnp, row.public)(a, axis=1), want)


@pytest.mark.parametrize("ties", [False, True], ids=["random", "ties"])
@pytest.mark.parametrize("row, shape, axis, c", _table(TRACED, CASES))
def test_kernels_agree_with_the_numpy_rules(row, shape, axis, c, ties):
    f = _node(row, axis, c)
    sa, sy = VIEWS[row.layout](*_view(shape, axis))
    out = _out_shape(row, shape, axis)
    a = _points(row, shape, 1, ties)
    g = np.random.default_rng(2).normal(size=out)
    t = np.random.default_rng(3).normal(size=shape)
    want_y = row.traced.value(np, a.reshape(sa), c).reshape(out)
    y2, ty = bn.jvp(f, (a,), (t,))                       # the kernels' value and tangent
    np.testing.assert_allclose(y2, want_y, rtol=1e-13, atol=1e-15)
    if not _differentiable(row):
        assert not np.any(ty), row.name
        return
    value, grad = bn.value_and_grad(lambda x: np.sum(f(x) * g))(a)
    np.testing.assert_allclose(value, np.sum(want_y * g), rtol=1e-12)
    want_g = row.traced.vjp(np, a.reshape(sa), want_y.reshape(sy), g.reshape(sy), c)
    np.testing.assert_allclose(grad, want_g.reshape(shape), rtol=1e-12, atol=1e-14)
    want_t = row.traced.jvp(np, a.reshape(sa), want_y.reshape(sy), t.reshape(sa), c)
    np.testing.assert_allclose(ty, want_t.reshape(out), rtol=1e-12, atol=1e-14)
    if row.traced.batched is not None:                   # B tangents at once = B jvps
        ts = np.stack([t, 2.0 * t - 1.0])
        want_b = row.traced.batched(np, a.reshape(sa), want_y.reshape(sy),
                                    ts.reshape((2,) + sa), c)
        for k in range(2):
            want_k = row.traced.jvp(np, a.reshape(sa), want_y.reshape(sy),
                                    ts[k].reshape(sa), c)
            np.testing.assert_allclose(want_b[k], want_k, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("row, shape, axis, c", _table(DIFFERENTIABLE, CASES))
def test_gradient_against_autograd_and_central_differences(row, shape, axis, c):
    f = _node(row, axis, c)
    sa, _ = VIEWS[row.layout](*_view(shape, axis))
    out = _out_shape(row, shape, axis)
    a = _points(row, shape, 4)
    w = np.random.default_rng(5).normal(size=out)

    def theirs(x):
        return anp.sum(anp.reshape(row.traced.value(anp, anp.reshape(x, sa), c), out) * w)
    grad = bn.grad(lambda x: np.sum(f(x) * w))(a)
    np.testing.assert_allclose(grad, autograd.grad(theirs)(a), rtol=1e-12, atol=1e-14)
    eps, fd = 1e-6, np.zeros(shape)
    for k in np.ndindex(shape):
        e = np.zeros(shape)
        e[k] = eps
        fd[k] = (theirs(a + e) - theirs(a - e)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("row, shape, axis, c",
                         _table(DIFFERENTIABLE, [((4,), 0), ((2, 3), 1), ((3, 2), 0)]))
def test_second_derivatives_through_the_traced_rules(row, shape, axis, c):
    f = _node(row, axis, c)
    a = _points(row, shape, 6)
    w = np.random.default_rng(7).normal(size=_out_shape(row, shape, axis))

    def loss(x):
        return np.sum(f(x) * w)
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
