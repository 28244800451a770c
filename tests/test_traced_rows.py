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
from burnumba.kernels.row import NODE_SHAPES
from burnumba.tracing.tracer import Var

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

TRACED = [r for r in ROWS if r.traced is not None]
AXIS = [r for r in TRACED if r.layout.startswith("axis")]
MATRICES = [r for r in TRACED if r.layout == "matrices"]
LISTED = [r for r in TRACED if r.layout in ("listed", "inner")]
TILES = [r for r in TRACED if r.layout == "tiles"]
CASES = [((5,), 0), ((4, 3), 0), ((4, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), -1)]


def test_rows_with_traced_rules_have_what_they_need():
    for row in TRACED:
        assert row.kind == "block" and row.layout in NODE_SHAPES, row.name
        assert row in AXIS or row in MATRICES or row in LISTED or row in TILES, row.name
        assert not row.public or row.public in vars(bnp), row.name
        assert row.traced.imm, row.name


def test_every_block_row_carries_its_derivative_rules():
    """A block row's vjp and jvp are in its row (``traced`` or ``on_trace``), none in
    burnumba/derive; the rows its ``on_trace`` rules append exist."""
    from burnumba.derive.sweeps import BLOCK
    names = {r.name for r in ROWS}
    for row in ROWS:
        if row.kind != "block" or row.lanes_of:
            continue
        assert row.traced is not None or row.on_trace is not None, row.name
        assert row.name in BLOCK and None not in BLOCK[row.name], row.name
        assert set(row.appends) <= names and (row.on_trace or not row.appends), row.name


def _differentiable(row):
    """False for an axis row of integer data (argsort), whose rules give no cotangent."""
    a = np.ones((1, 2, 1))
    return row.traced.vjp(np, a, a, a, row.traced.imm[0]) is not None


DIFFERENTIABLE = [r for r in AXIS if _differentiable(r)]


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


def _hessian_against_differences(loss, x, atol=1e-8):
    """bn.hessian of loss at x (through the traced rules) against central differences of
    its gradient, and symmetric."""
    H = np.reshape(bn.hessian(loss)(x), (x.size, x.size))
    gradient = bn.grad(loss)
    eps, fd = 1e-5, np.zeros((x.size, x.size))
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        fd[:, k] = (np.ravel(gradient(x + e.reshape(x.shape)) - gradient(x - e.reshape(x.shape)))
                    / (2 * eps))
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=atol)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-14)


def test_public_functions_are_the_rules_on_numpy_data():
    for row in AXIS:
        if row.public:
            a = _points(row, (3, 4), 0)
            want = row.traced.value(np, a.reshape(_view((3, 4), 1)), 0.0).reshape(3, 4)
            np.testing.assert_array_equal(getattr(bnp, row.public)(a, axis=1), want)


@pytest.mark.parametrize("ties", [False, True], ids=["random", "ties"])
@pytest.mark.parametrize("row, shape, axis, c", _table(AXIS, CASES))
def test_kernels_agree_with_the_numpy_rules(row, shape, axis, c, ties):
    f = _node(row, axis, c)
    (sa,), sy, _ = row.node_shapes(_view(shape, axis))
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
    (sa,), _, _ = row.node_shapes(_view(shape, axis))
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
    _hessian_against_differences(loss, a)


# -- "matrices" rows (matmul, the linalg rows): stacks of matrices, the node's result followed
# by its work space. A square operand is symmetric positive definite (every linalg row's
# domain: solvable, a Cholesky factor, distinct eigenvalues); cholesky and eigh read the lower
# triangle, so differences are taken along symmetric directions.
# the parameters of each case by name; each row takes those of its shape rule
MATRIX_CASES = [dict(nb=1, n=3, k=2, M=2, K=3, N=2, sa=1, sb=1),
                dict(nb=2, n=2, k=1, M=3, K=2, N=1, sa=1, sb=0),
                dict(nb=1, n=1, k=1, M=1, K=1, N=1, sa=1, sb=1),
                dict(nb=3, n=4, k=3, M=2, K=4, N=3, sa=0, sb=1)]


def _matrix_table(cases):
    return [pytest.param(row, _params(row, case), id=f"{row.name}-{_params(row, case)}")
            for row in MATRICES for case in cases]


def _params(row, case):
    code = row.shapes.__code__
    return [case[name] for name in code.co_varnames[:code.co_argcount]]


def _operands(row, P, seed):
    """Random operands; a square one symmetric positive definite."""
    rng = np.random.default_rng(seed)
    shapes, _, _ = row.node_shapes(P)
    xs = [rng.normal(size=s) for s in shapes]
    if shapes[0][-1] == shapes[0][-2]:
        xs[0] = xs[0] @ np.swapaxes(xs[0], 1, 2) + shapes[0][-1] * np.eye(shapes[0][-1])
    return xs


def _symmetric(x):
    return x + np.swapaxes(x, -1, -2) if x.ndim == 3 and x.shape[-1] == x.shape[-2] else x


def _matrix_node(row, P, c=0.0):
    """(operands...) -> the row's result, as burnumba.numpy makes it: one node of the
    result and its work space, the result viewed."""
    shapes, result, work = row.node_shapes(P)

    def f(*xs):
        b = next(x._b for x in xs if isinstance(x, Var))
        xs = [b.lift(x) for x in xs]
        size = math.prod(result) + work
        node = b.add(row.name, (size,), xs[0].node, xs[1].node if len(xs) > 1 else -1,
                     params=P, imm=c, need=any(b.need[x.node] for x in xs))
        return bnp.reshape(Var(b, node, (size,))[:math.prod(result)], result)
    return f


def _matrix_case(row, P, seed):
    """The row's node as a function, operands, and weights of the result's shape."""
    _, result, _ = row.node_shapes(P)
    xs = _operands(row, P, seed)
    return _matrix_node(row, P), xs, np.random.default_rng(seed + 1).normal(size=result)


def _rule_vjp(row, xs, y, g):
    if len(xs) == 1:
        return [row.traced.vjp(np, *xs, y, g, 0.0)]
    return list(row.traced.vjp(np, *xs, y, g, 0.0))


@pytest.mark.parametrize("row, P", _matrix_table(MATRIX_CASES))
def test_matrix_kernels_agree_with_the_numpy_rules(row, P):
    f, xs, g = _matrix_case(row, P, 1)
    ts = [np.random.default_rng(3 + j).normal(size=x.shape) for j, x in enumerate(xs)]
    want_y = row.traced.value(np, *xs, 0.0)
    argnums = tuple(range(len(xs)))
    y, ty = bn.jvp(f, tuple(xs), tuple(ts))
    np.testing.assert_allclose(y, want_y, rtol=1e-11, atol=1e-12)
    value, grads = bn.value_and_grad(lambda *a: np.sum(f(*a) * g), argnums=argnums)(*xs)
    np.testing.assert_allclose(value, np.sum(want_y * g), rtol=1e-11)
    for got, want in zip(grads, _rule_vjp(row, xs, want_y, g)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    want_t = row.traced.jvp(np, *xs, want_y, *ts, 0.0)
    np.testing.assert_allclose(ty, want_t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("row, P", _matrix_table(MATRIX_CASES))
def test_matrix_gradient_against_autograd_and_central_differences(row, P):
    f, xs, w = _matrix_case(row, P, 4)
    argnums = tuple(range(len(xs)))

    def theirs(*a):
        return anp.sum(row.traced.value(anp, *a, 0.0) * w)
    grads = bn.grad(lambda *a: np.sum(f(*a) * w), argnums=argnums)(*xs)
    for j, got in enumerate(grads):
        np.testing.assert_allclose(got, autograd.grad(theirs, j)(*xs), rtol=1e-9, atol=1e-11)
    eps = 1e-6
    for seed in range(3):                       # along symmetric directions (see above)
        vs = [_symmetric(np.random.default_rng(10 + seed + 7 * j).normal(size=x.shape))
              for j, x in enumerate(xs)]
        plus = theirs(*[x + eps * v for x, v in zip(xs, vs)])
        minus = theirs(*[x - eps * v for x, v in zip(xs, vs)])
        np.testing.assert_allclose(sum(np.sum(gr * v) for gr, v in zip(grads, vs)),
                                   (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("row, P", _matrix_table(MATRIX_CASES[:3]))
def test_matrix_second_derivatives_through_the_traced_rules(row, P):
    f, (A, *rest), w = _matrix_case(row, P, 6)

    def loss(a):
        return np.sum(f(a, *rest) * w)
    H = bn.hessian(loss)(A).reshape(A.size, A.size)
    gradient = bn.grad(loss)
    eps = 1e-5
    for seed in range(3):                       # H v against differences of the gradient
        v = _symmetric(np.random.default_rng(20 + seed).normal(size=A.shape))
        fd = (gradient(A + eps * v) - gradient(A - eps * v)).ravel() / (2 * eps)
        np.testing.assert_allclose(H @ v.ravel(), fd, rtol=1e-6, atol=1e-7)


# -- "listed" rows (sum, sumsq) and inner: a scalar of every element of the nodes listed in
# P, of any shapes, the same node possibly twice; the rules take and give lists. inner's
# list is x_1..x_m, w_1..w_m and the bias if any: 1-D arrays (m = 1) or scalars.
LISTED_CASES = {                                  # "again": the first operand once more
    "listed": [[(3,)], [(2, 2), (), (3,)], [(4,), "again"]],
    "inner": [[(4,), (4,)], [(), (), (), (), ()], [(3,), (3,), ()], [(3,), "again"]],
}


def _listed_table():
    return [pytest.param(row, shapes, c, id=f"{row.name}-{k}-{c}")
            for row in LISTED for k, shapes in enumerate(LISTED_CASES[row.layout])
            for c in row.traced.imm]


def _listed_node(row, listed, c):
    """The row's node of the traced operands ``listed``, as burnumba.numpy makes it."""
    b = next(x._b for x in listed if isinstance(x, Var))
    if row.layout == "listed":
        return b.reduce(row.name, listed, scale=c)
    m = len(listed) // 2
    xs, ws, bias = listed[:m], listed[m:2 * m], (listed[2 * m:] or [None])[0]
    if m == 1 and np.ndim(xs[0]):
        return bnp.inner(xs[0], ws[0], bias=bias)
    return bnp.inner(xs, ws, bias=bias)


def _listed_case(row, shapes, c, seed):
    """f(*xs): the row's node of the operands (listed in the order of ``shapes``), and the
    operands: random arrays, one per distinct shape entry."""
    rng = np.random.default_rng(seed)
    xs = [rng.uniform(-2.0, 2.0, s) for s in shapes if s != "again"]
    order = [0 if s == "again" else k for k, s in enumerate(shapes)]

    def f(*a):
        return _listed_node(row, [a[k] for k in order], c)
    return f, xs, order


@pytest.mark.parametrize("row, shapes, c", _listed_table())
def test_listed_kernels_agree_with_the_numpy_rules(row, shapes, c):
    f, xs, order = _listed_case(row, shapes, c, 1)
    listed = [xs[k] for k in order]
    ts = [np.random.default_rng(3 + j).normal(size=np.shape(x)) for j, x in enumerate(xs)]
    want_y = row.traced.value(np, listed, c)
    argnums = tuple(range(len(xs)))
    y, ty = bn.jvp(f, tuple(xs), tuple(ts))
    np.testing.assert_allclose(y, want_y, rtol=1e-13)
    value, grads = bn.value_and_grad(lambda *a: 1.5 * f(*a), argnums=argnums)(*xs)
    np.testing.assert_allclose(value, 1.5 * want_y, rtol=1e-13)
    want_g = [np.zeros(np.shape(x)) for x in xs]           # a node listed twice: both
    for k, d in zip(order, row.traced.vjp(np, listed, want_y, 1.5, c)):
        want_g[k] = want_g[k] + d
    for got, want in zip(grads, want_g):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    want_t = row.traced.jvp(np, listed, want_y, [ts[k] for k in order], c)
    np.testing.assert_allclose(ty, want_t, rtol=1e-12, atol=1e-14)
    if row.traced.batched is not None:                   # B tangents at once = B jvps
        tb = [np.stack([t, 2.0 * t - 1.0]) for t in ts]
        got = row.traced.batched(np, listed, want_y, [tb[k] for k in order], c)
        for j in range(2):
            want = row.traced.jvp(np, listed, want_y, [tb[k][j] for k in order], c)
            np.testing.assert_allclose(got[j], want, rtol=1e-13)


@pytest.mark.parametrize("row, shapes, c", _listed_table())
def test_listed_gradient_against_autograd_and_central_differences(row, shapes, c):
    f, xs, order = _listed_case(row, shapes, c, 4)
    argnums = tuple(range(len(xs)))

    def theirs(*a):
        return row.traced.value(anp, [a[k] for k in order], c)
    grads = bn.grad(f, argnums=argnums)(*xs)
    eps = 1e-6
    for j, x in enumerate(xs):
        np.testing.assert_allclose(grads[j], autograd.grad(theirs, j)(*xs), rtol=1e-12)
        fd = np.zeros(np.shape(x))
        for k in np.ndindex(np.shape(x)):
            e = np.zeros(np.shape(x))
            e[k] = eps
            plus, minus = list(xs), list(xs)
            plus[j], minus[j] = x + e, x - e
            fd[k] = (theirs(*plus) - theirs(*minus)) / (2 * eps)
        np.testing.assert_allclose(grads[j], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("row, shapes, c", _listed_table())
def test_listed_second_derivatives_through_the_traced_rules(row, shapes, c):
    f, (x, *rest), _ = _listed_case(row, shapes, c, 6)

    def loss(a):
        return f(a, *rest) * np.sum(np.sin(a))        # a product, so that H is not 0
    _hessian_against_differences(loss, x)


# -- "tiles" rows (where): the operands cond (the node P[p]), a0 and a1, each the output's
# shape, a scalar, or its trailing axes (a tile repeated over it). No cotangent for cond.
TILE_CASES = [[(2, 3), (2, 3), (2, 3)], [(2, 3), (), (3,)], [(3,), (2, 3), ()],
              [(), (4,), (4,)], [(2, 1, 3), (1, 3), (2, 1, 3)]]


def _tile_case(row, shapes, seed):
    """f(a, b): the row's node on the constant condition and traced a, b of ``shapes``
    (cond, a, b), and the operands."""
    rng = np.random.default_rng(seed)
    cond = rng.uniform(size=shapes[0]) > 0.5
    a, b = (rng.uniform(-2.0, 2.0, s) for s in shapes[1:])
    out = max(shapes, key=lambda s: math.prod(s))

    def f(x, y):
        bld = next(v._b for v in (x, y) if isinstance(v, Var))
        c, x, y = bld.lift(cond.astype(float)), bld.lift(x), bld.lift(y)
        node = bld.add(row.name, out, x.node, y.node, params=[c.node],
                       need=bld.need[x.node] or bld.need[y.node])
        return Var(bld, node, out)
    return f, cond, a, b, out


@pytest.mark.parametrize("row", TILES, ids=lambda r: r.name)
@pytest.mark.parametrize("shapes", TILE_CASES, ids=str)
def test_tile_kernels_agree_with_the_numpy_rules(row, shapes):
    f, cond, a, b, out = _tile_case(row, shapes, 1)
    g = np.random.default_rng(2).normal(size=out)
    ta, tb = (np.random.default_rng(3 + k).normal(size=x.shape) for k, x in enumerate((a, b)))
    want_y = row.traced.value(np, cond, a, b, 0.0)
    y, ty = bn.jvp(f, (a, b), (ta, tb))
    np.testing.assert_array_equal(y, want_y)
    grads = bn.grad(lambda x, z: np.sum(f(x, z) * g), argnums=(0, 1))(a, b)
    want_c, *want_g = row.traced.vjp(np, cond, a, b, want_y, g, 0.0)
    assert want_c is None
    for got, want in zip(grads, want_g):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ty, row.traced.jvp(np, cond, a, b, want_y, None, ta, tb, 0.0),
                               rtol=1e-13)
    _, ta_only = bn.jvp(lambda x: f(x, b), (a,), (ta,))     # one operand without a tangent
    np.testing.assert_allclose(ta_only, row.traced.jvp(np, cond, a, b, want_y, None, ta, None,
                                                       0.0), rtol=1e-13)


@pytest.mark.parametrize("row", TILES, ids=lambda r: r.name)
@pytest.mark.parametrize("shapes", TILE_CASES, ids=str)
def test_tile_gradient_against_autograd_and_central_differences(row, shapes):
    f, cond, a, b, out = _tile_case(row, shapes, 4)
    w = np.random.default_rng(5).normal(size=out)

    def theirs(x, z):
        return anp.sum(row.traced.value(anp, cond, x, z, 0.0) ** 3 * w)
    grads = bn.grad(lambda x, z: np.sum(f(x, z) ** 3 * w), argnums=(0, 1))(a, b)
    eps = 1e-6
    for j, x in enumerate((a, b)):
        np.testing.assert_allclose(grads[j], autograd.grad(theirs, j)(a, b), rtol=1e-12)
        fd = np.zeros(x.shape)
        for k in np.ndindex(x.shape):
            e = np.zeros(x.shape)
            e[k] = eps
            args_p, args_m = [a, b], [a, b]
            args_p[j], args_m[j] = x + e, x - e
            fd[k] = (theirs(*args_p) - theirs(*args_m)) / (2 * eps)
        np.testing.assert_allclose(grads[j], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("row", TILES, ids=lambda r: r.name)
@pytest.mark.parametrize("shapes", TILE_CASES, ids=str)
def test_tile_second_derivatives_through_the_traced_rules(row, shapes):
    f, cond, a, b, out = _tile_case(row, shapes, 6)
    w = np.random.default_rng(7).normal(size=out)

    def loss(x):
        return np.sum(f(x, b * x.sum()) ** 3 * w)          # both operands depend on x
    _hessian_against_differences(loss, a, atol=1e-7)
