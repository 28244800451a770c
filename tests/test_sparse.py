"""Sparse Jacobians and Hessians (burnumba/derive/sparsity.py, transforms/colouring.py,
transforms/sparse.py): patterns hold every nonzero of the dense derivatives, colourings are
valid, and the compressed values equal the dense ones, over programs that use each row kind."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import burnumba as bn
import burnumba.numpy as bnp
import burnumba.scipy.special as bss
from burnumba.derive.sparsity import EXACT
from burnumba.transforms.colouring import (ORDERS, column_colouring, greedy, hessian_colouring,
                                           is_star, is_valid, row_colouring, star_colouring,
                                           star_recovery)

RNG = np.random.default_rng(7)
_W9 = np.arange(9.0).reshape(3, 3) / 9.0


def _spd(x):
    m = x.reshape(3, 3)
    return m @ m.T + 3.0 * np.eye(3)


def _band(x):
    return x[1:] * x[:-1] + np.sin(x[1:])


def _rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


# (name, f of one vector, n, the rows it exercises); each f maps R^n to a vector or a scalar
PROGRAMS = [
    ("maps", lambda x: np.tanh(x) * 2.0 + x ** 3 / (1.0 + x * x), 6),
    ("broadcast scalar", lambda x: x * x[0] + np.exp(x[2]), 5),
    ("band", _band, 7),
    ("stencil", lambda x: x[2:] - 2.0 * x[1:-1] + x[:-2] + 0.1 * x[1:-1] ** 3, 8),
    ("reverse and step", lambda x: x[::-1] * x[::2].sum(), 6),
    ("where", lambda x: np.where(x > 0.0, x ** 2, np.sin(x)), 6),
    ("comparison", lambda x: (x > 0.0) * x, 5),
    ("sum and sumsq", lambda x: np.stack([np.sum(x[:3]), np.sum(x[2:] ** 2)]), 6),
    ("matmul", lambda x: x[:6].reshape(2, 3) @ x[6:].reshape(3, 2), 12),
    ("matvec", lambda x: np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]) @ x, 3),
    ("axis sum", lambda x: np.sum(x.reshape(3, 4) ** 2, axis=0), 12),
    ("axis max", lambda x: np.max(x.reshape(3, 4), axis=1), 12),
    ("softmax", lambda x: bn.softmax(x.reshape(2, 3), axis=1), 6),
    ("log_softmax", lambda x: bn.log_softmax(x.reshape(3, 2), axis=0), 6),
    ("logsumexp", lambda x: bn.logsumexp(x.reshape(2, 3), axis=1), 6),
    ("cumsum", lambda x: np.cumsum(x.reshape(2, 3), axis=1), 6),
    ("cumprod", lambda x: np.cumprod(x), 5),
    ("concatenate", lambda x: np.concatenate([x[:2] * 2.0, x[3:] ** 2]), 6),
    ("outer", lambda x: np.outer(x[:2], x[2:]).ravel(), 5),
    ("solve", lambda x: np.linalg.solve(x[:4].reshape(2, 2) + 3 * np.eye(2), x[4:]), 6),
    ("scalar", _rosen, 6),
    # betainc's derivatives in a and b as rows of x (in a, b, x: test_incomplete_beta_...)
    ("betainc_da, betainc_db", lambda x: np.concatenate([
        bss._betainc_da(2.5, 1.7, bn.sigmoid(x[:3])),
        bss._betainc_db(0.8, np.array([0.5, 1.7, 3.0]), bn.sigmoid(x[3:]))]), 6),
]


def _point(n):
    return RNG.uniform(0.3, 1.5, size=n) * np.where(RNG.random(n) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("name,f,n", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_jacobian_pattern_and_values(name, f, n):
    for _ in range(3):
        x = _point(n)
        dense = np.atleast_2d(np.asarray(bn.jacobian(f)(x))).reshape(-1, n)
        pattern = bn.jacobian_sparsity(f)(x).toarray().astype(bool)
        assert pattern.shape == dense.shape
        missed = (dense != 0) & ~pattern
        assert not missed.any(), f"{name}: nonzeros outside the pattern at {np.argwhere(missed)}"
        for mode in ("fwd", "rev", "auto"):
            J = bn.sparse_jacobian(f, mode=mode)(x)
            assert sp.issparse(J) and J.shape == dense.shape
            np.testing.assert_allclose(J.toarray(), dense, rtol=1e-12, atol=1e-12)


def test_incomplete_beta_pattern_in_a_b_x():
    """betainc / betaincc in a, b and x at once (the rows' "tiles" rule: each output element
    reads its own a, b, x, or the one a scalar repeats): the pattern is the dense Jacobian's
    exactly. (Not through sparse_jacobian: it traces the derivative as ops with the inputs
    differentiable, where betainc_da's refused a, I's second derivative, is an error, as
    gammainc_da's; bn.jacobian in reverse mode runs the compiled sweeps.)"""
    def f(x):
        return np.concatenate([
            bss.betainc(1.0 + x[:3] ** 2, 0.5 + x[3:6] ** 2, bn.sigmoid(x[6:9])),
            bss.betaincc(1.0 + x[0] ** 2, 0.5 + x[3:6] ** 2, bn.sigmoid(x[6:9]))])
    for _ in range(3):
        x = _point(9)
        dense = np.asarray(bn.jacrev(f)(x))
        pattern = bn.jacobian_sparsity(f)(x).toarray().astype(bool)
        np.testing.assert_array_equal(pattern, dense != 0)


SCALARS = [
    ("rosenbrock", _rosen, 7),
    ("sum of products", lambda x: np.sum(x[1:] * x[:-1]), 6),
    ("quotients", lambda x: np.sum(x[:3] / (2.0 + x[3:] ** 2)), 6),
    ("linear", lambda x: np.sum(3.0 * x - x[::-1]), 5),
    ("quadratic form", lambda x: x @ np.diag([1.0, 2.0, 0.0, 4.0]) @ x, 4),
    ("matmul", lambda x: np.sum(x[:4].reshape(2, 2) @ x[4:].reshape(2, 2)), 8),
    ("softmax", lambda x: np.sum(bn.softmax(x.reshape(2, 3), axis=1) * np.arange(6.0)
                                 .reshape(2, 3)), 6),
    ("sumsq", lambda x: bn.sumsq(x[:3]) + np.sum(np.exp(x[3:])), 6),
    ("inner", lambda x: bn.inner([x[:2]], [x[2:4]]) + x[4], 5),
    ("max", lambda x: np.max(x.reshape(2, 3) ** 2, axis=1).sum(), 6),
    ("logsumexp", lambda x: bn.logsumexp(x[:3]) + x[3] ** 2, 5),
    ("take", lambda x: np.sum(np.take(x.reshape(3, 2), np.array([2, 0, 2]), axis=0) ** 3), 6),
    ("cross_entropy", lambda x: bn.cross_entropy(x.reshape(2, 3), np.array([0, 2])), 6),
    ("layer_norm", lambda x: np.sum(bn.layer_norm(x[:6].reshape(2, 3)) * x[6:]), 9),
    # the incomplete beta rows (a, b constants; x through a sigmoid), betainc_dx in the
    # gradient
    ("incomplete beta", lambda x: np.sum(bss.betainc(2.5, 1.7, bn.sigmoid(x[:3])))
     + np.sum(bss.betaincc(0.8, 1.7, bn.sigmoid(x[3:])) * x[:3]), 6),
    # the beta density in a, b and x (its second derivatives in a and b are traced ops:
    # digamma), and betainc_da / betainc_db in x (their a and b refused)
    ("beta density", lambda x: np.sum(bss._betainc_dx(1.0 + x[:2] ** 2, 0.5 + x[2:4] ** 2,
                                                      bn.sigmoid(x[4:6]))), 6),
    ("betainc_da and betainc_db in x", lambda x: np.sum(
        bss._betainc_da(2.5, 1.7, bn.sigmoid(x[:3])) * x[3:]
        + bss._betainc_db(0.8, 1.7, bn.sigmoid(x[3:])) * x[:3]), 6),
    ("causal_softmax", lambda x: np.sum(bn.causal_softmax(x.reshape(3, 3)) * _W9), 9),
    ("slogdet", lambda x: np.linalg.slogdet(x.reshape(2, 2) + 3.0 * np.eye(2))[1], 4),
    ("cholesky", lambda x: np.sum(np.linalg.cholesky(_spd(x)) * _W9), 9),
    ("eigh", lambda x: np.sum(np.linalg.eigh(_spd(x))[0] ** 3), 9),
    ("sort", lambda x: np.sum(np.sort(x) * np.arange(5.0) * x), 5),
    ("logcumsumexp", lambda x: np.sum(bnp.logcumsumexp(x) * np.arange(5.0)), 5),
    ("where", lambda x: np.sum(np.where(x > 0.0, x ** 3, x[::-1] * x)), 6),
    ("solve", lambda x: np.sum(np.linalg.solve(_spd(x[:9]), x[9:])), 12),
]


@pytest.mark.parametrize("name,f,n", SCALARS, ids=[p[0] for p in SCALARS])
def test_hessian_pattern_and_values(name, f, n):
    for _ in range(3):
        x = _point(n)
        dense = np.asarray(bn.hessian(f)(x))
        pattern = bn.hessian_sparsity(f)(x).toarray().astype(bool)
        assert (pattern == pattern.T).all()
        missed = (np.abs(dense) > 1e-12) & ~pattern
        assert not missed.any(), f"{name}: nonzeros outside the pattern at {np.argwhere(missed)}"
        H = bn.sparse_hessian(f)(x)
        np.testing.assert_allclose(H.toarray(), dense, rtol=1e-10, atol=1e-10)


def test_the_programs_hold_every_row_kind():
    """Every block row a trace can hold (the lanes rows are vmap's) is in a program above,
    in f or in its gradient (scatter, take_add), so each pattern rule is checked against
    dense derivatives."""
    seen = set()
    for _, f, n in PROGRAMS + SCALARS:
        seen |= set(bn.trace(f, _point(n)).ops)
        if (_, f, n) in SCALARS:
            seen |= set(bn.trace(bn.grad(f), _point(n)).ops)
    # (njit_call, a user's numba op, has no derivative as traced ops to check a pattern with:
    # its rule is dense_a0, marked inexact)
    blocks = {r.name for r in bn.kernels.ROWS if r.kind == "block" and r.lanes_of is None
              and r.name != "njit_call"}
    assert blocks <= seen | {r.name for r in AXIS_ROWS}, sorted(blocks - seen)
    maps = {r.name for r in bn.kernels.ROWS if r.kind == "map"}
    assert len(maps & seen) >= 15


# the axis rows with rules in numpy's names, each alone along each axis (below): a new such
# row is checked here without a program of its own
AXIS_ROWS = [r for r in bn.kernels.ROWS if r.traced is not None and r.layout in
             ("axis", "axis_reduce", "axis_rows")]


@pytest.mark.parametrize("row", AXIS_ROWS, ids=[r.name for r in AXIS_ROWS])
def test_every_axis_row(row):
    """Each axis row alone on a (2, 3) array, along each axis it takes (with each immediate
    its tests try), at random points and on a grid of ties: its Jacobian's pattern holds the
    dense Jacobian's nonzeros, and the Hessian's pattern the dense Hessian's."""
    lo, hi = row.domain[0]
    r = np.random.default_rng(5)
    axes = (1,) if row.layout == "axis_rows" else (0, 1)
    for axis, c, ties in [(a, c, t) for a in axes for c in row.traced.imm for t in (0, 1)]:
        shape = (2, 2) if row.layout == "axis_rows" else (2, 3)
        out = shape[:axis] + shape[axis + 1:] if row.layout == "axis_reduce" else shape
        x = r.uniform(lo, hi, math.prod(shape))
        x = np.clip(np.round(2.0 * x) / 2.0, lo, hi) if ties else x
        w = r.uniform(0.5, 1.5, out)

        def f(x):
            x = np.reshape(x, shape)
            return np.ravel(x._b.axis(row.name, x, axis, out, imm=c) * 1.0)
        dense = np.asarray(bn.jacobian(f)(x)).reshape(-1, x.size)
        pattern = bn.jacobian_sparsity(f)(x).toarray().astype(bool)
        assert not ((dense != 0) & ~pattern).any(), (row.name, axis, c, ties)
        h = bn.hessian(lambda x: np.sum(f(x) * np.ravel(w)))(x)
        hp = bn.hessian_sparsity(lambda x: np.sum(f(x) * np.ravel(w)))(x).toarray()
        assert not ((np.abs(h) > 1e-12) & ~hp.astype(bool)).any(), (row.name, axis, c, ties)


MAP_ROWS = [r for r in bn.kernels.ROWS if r.kind == "map" and r.arity in (1, 2)]
# the rows whose derivative in a is the gammainc_da row, whose own d/da is refused: their
# Jacobian is checked whole, their Hessian with a held
SECOND_IN_A_REFUSED = {"gammainc", "gammaincc", "gammaincinv", "gammainccinv"}


@pytest.mark.parametrize("row", MAP_ROWS, ids=[r.name for r in MAP_ROWS])
def test_every_map_row(row):
    """Each map row alone, on vectors and with a broadcast scalar: its Jacobian's and its
    Hessian's patterns hold the dense ones' nonzeros."""
    fn = (getattr(bnp, row.name, None) or getattr(bn, row.name, None)
          or getattr(bss, row.name, None))
    if fn is None:                      # cube, powi, pow_c, gelu_*: written by x ** k, gelu
        pytest.skip(f"{row.name} has no public function")
    lo, hi = row.domain[0]
    r = np.random.default_rng(3)
    if row.arity == 1:
        n, f = 4, lambda x: fn(x) * 1.0
    else:
        lo2, hi2 = row.domain[1] if len(row.domain) > 1 else row.domain[0]
        n, f = 7, lambda x: fn(x[:3], x[3:6]) + fn(x[:3], x[6])
    x = r.uniform(lo, hi, n)
    if row.arity == 2:
        x[3:] = r.uniform(lo2, hi2, 4)
    try:
        dense = np.asarray(bn.jacobian(f)(x)).reshape(-1, n)
    except (bn.BurnumbaError, TypeError) as e:       # polygamma(n, x): n an integer
        pytest.skip(f"{row.name}: {e}")
    pattern = bn.jacobian_sparsity(f)(x).toarray().astype(bool)
    assert not ((dense != 0) & ~pattern).any()
    w = r.uniform(0.5, 1.5, dense.shape[0])
    if row.name in SECOND_IN_A_REFUSED:         # their Hessian with a held (stop_gradient)
        f = lambda x: (fn(bn.stop_gradient(x[:3]), x[3:6])             # noqa: E731
                       + fn(bn.stop_gradient(x[:3]), x[6]))

    def scalar(z):
        return np.sum(f(z) * w)
    h = np.asarray(bn.hessian(scalar)(x))
    hp = bn.hessian_sparsity(scalar)(x).toarray().astype(bool)
    assert not ((np.abs(h) > 1e-12) & ~hp).any()
    np.testing.assert_allclose(bn.sparse_hessian(scalar)(x).toarray(), h, rtol=1e-10,
                               atol=1e-10)


def test_linear_function_has_empty_hessian():
    assert bn.hessian_sparsity(lambda x: np.sum(2.0 * x[1:] - x[:-1]))(np.ones(5)).nnz == 0


def test_banded_patterns_are_exact_and_colours_do_not_grow():
    for n in (10, 100, 1000):
        x = _point(n)
        P = bn.jacobian_sparsity(_band)(x)
        assert P.nnz == 2 * (n - 1)                       # exact: the band, nothing more
        assert column_colouring(P)[1] == 2
        H = bn.hessian_sparsity(_rosen)(x)
        assert H.nnz == 3 * n - 2                         # tridiagonal
        assert column_colouring(H)[1] == 3


def test_colourings_are_valid_on_random_patterns():
    for seed in range(20):
        r = np.random.default_rng(seed)
        P = sp.random(30, 25, density=0.1, random_state=r, format="csr")
        cols, count = column_colouring(P)
        assert is_valid(P, cols, "column") and count <= 25
        rows, count = row_colouring(P)
        assert is_valid(P, rows, "row") and count <= 30
        bad = np.zeros(25, dtype=np.int64)              # one colour: invalid unless diagonal
        assert not is_valid(P, bad, "column") or (P.getnnz(axis=1) <= 1).all()


def _stencil(k):
    """The 2-D five-point stencil's pattern on a k x k grid."""
    t = sp.diags([np.ones(k - 1), np.ones(k), np.ones(k - 1)], [-1, 0, 1], shape=(k, k))
    e = sp.eye(k)
    return (sp.kron(t, e) + sp.kron(e, t)).tocsr()


def test_five_point_stencil_takes_five_colours():
    for k in (10, 40):
        L = _stencil(k)
        cols, count = column_colouring(L)
        assert count == 5 and is_valid(L, cols, "column")
        for order in ORDERS:                               # each order alone is valid
            c, _ = column_colouring(L, orders=(order,))
            assert is_valid(L, c, "column"), order


def _random_symmetric(seed, n=40, density=0.08):
    r = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, random_state=r, format="csr")
    h = a + a.T + sp.diags(r.uniform(1.0, 2.0, n))
    h = sp.csr_matrix(h)
    h.sort_indices()
    return h


def test_star_colourings_are_stars_and_recover_symmetric_matrices():
    for seed in range(25):
        H = _random_symmetric(seed)
        colour, count = star_colouring(H)
        assert is_star(H, colour)
        n = H.shape[0]
        S = np.zeros((n, count))
        S[np.arange(n), colour] = 1.0
        C = np.ascontiguousarray((H @ S).T)                 # (colours x n), as the plan's
        values = C.reshape(-1)[star_recovery(H, colour)]
        np.testing.assert_array_equal(values, H.data)
        assert count <= column_colouring(H)[1]              # never more than distance-2
    assert not is_star(_stencil(4), np.zeros(16, dtype=np.int64))
    path = sp.diags([np.ones(3), np.ones(3)], [-1, 1], shape=(4, 4)).tocsr()   # P4
    assert not is_star(path, np.array([0, 1, 0, 1]))
    assert is_star(path, np.array([0, 1, 2, 0]))


def test_star_colouring_of_the_stencil_and_its_hessian_values():
    L = _stencil(12)
    colour, count, kind = hessian_colouring(L)
    assert kind == "star" and count <= column_colouring(L)[1] == 5

    def energy(x):                           # H has the five-point pattern
        u = x.reshape(12, 12)
        return (np.sum((u[1:, :] - u[:-1, :]) ** 2) + np.sum((u[:, 1:] - u[:, :-1]) ** 2)
                + np.sum(np.cos(u)) + np.sum(u[1:, :] ** 2 * u[:-1, :] ** 2))
    x = _point(144)
    H = bn.sparse_hessian(energy)(x)
    np.testing.assert_allclose(H.toarray(), np.asarray(bn.hessian(energy)(x)), rtol=1e-12,
                               atol=1e-12)


def test_every_order_colours_random_graphs_validly():
    for seed in range(10):
        P = sp.random(50, 40, density=0.1, random_state=np.random.default_rng(seed),
                      format="csr")
        g = (sp.csr_matrix(P.T) @ P).tocsr()
        for order in ORDERS:
            cols, _ = greedy(g, (order,))
            assert is_valid(P, cols, "column"), order


def test_several_arguments_and_data():
    f = lambda a, b, c: a[1:] * b[:-1] * c           # noqa: E731 (c is data)
    a, b, c = _point(5), _point(5), _point(4)
    J = bn.sparse_jacobian(f, argnums=(0, 1))(a, b, c)
    ja, jb = bn.jacobian(f, argnums=(0, 1))(a, b, c)
    np.testing.assert_allclose(J.toarray(), np.hstack([ja, jb]), rtol=1e-13)
    c2 = _point(4)                                      # new data: same tape, new values
    J2 = bn.sparse_jacobian(f, argnums=(0, 1))(a, b, c2)
    np.testing.assert_allclose(J2.toarray(), np.hstack(bn.jacobian(f, argnums=(0, 1))(a, b, c2)),
                               rtol=1e-13)


def test_one_plan_per_signature():
    sj = bn.sparse_jacobian(_band)
    for _ in range(3):
        sj(_point(9))
    assert len(sj.tapes) == 1 and len(sj.plans) == 1
    sj(_point(10))
    assert len(sj.tapes) == 2


def test_conservative_rows_are_listed():
    for name in ("take", "cross_entropy", "eigh", "layer_norm"):
        assert name not in EXACT
    for name in ("gather", "matmul", "softmax", "cumsum", "tanh", "multiply"):
        assert name in EXACT


def test_a_block_rows_rule_is_its_rows_own():
    """Every block row's sparsity rule is the ``Sparsity`` its rule file gives it (a row
    without one is dense and nonlinear): derive/sparsity.py holds no rule by row name."""
    from burnumba.derive import sparsity
    from burnumba.kernels import ROWS
    for row in ROWS:
        if row.kind == "block":
            want = tuple(row.sparsity) if row.sparsity else ("dense", "nonlinear", False)
            assert sparsity.rule(row) == want, row.name
    assert all(r.sparsity is not None for r in ROWS if r.kind == "block" and r.name in EXACT)
    assert not [k for k, v in vars(sparsity).items() if isinstance(v, dict) and "gather" in v]


# -- the differential fuzz's random programs (tests/test_fuzz.py) --------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from test_fuzz import programs  # noqa: E402


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_patterns_hold_the_fuzz_programs_derivatives(prog):
    f = prog.function(np, bn)
    given_args = [np.asarray(a) for a in prog.arguments(np.float64)]
    args = [a for a in given_args if a.dtype.kind == "f"]          # integer inputs: data
    shapes = [a.shape for a in args]
    bounds = np.cumsum([0] + [a.size for a in args])

    def flat(z):               # the loss of one vector holding every float input
        parts = iter([z[bounds[k]:bounds[k + 1]].reshape(shapes[k]) for k in range(len(args))])
        return f(*[next(parts) if a.dtype.kind == "f" else a for a in given_args])
    z = np.concatenate([a.ravel() for a in args])
    dense = np.asarray(bn.hessian(flat)(z)).reshape(z.size, z.size)
    pattern = bn.hessian_sparsity(flat)(z).toarray().astype(bool)
    missed = (dense != 0) & ~pattern
    assert not missed.any(), f"Hessian nonzeros outside the pattern at {np.argwhere(missed)}"
    grad_pattern = bn.jacobian_sparsity(flat)(z).toarray().astype(bool).ravel()
    g = np.asarray(bn.grad(flat)(z))
    assert not ((g != 0) & ~grad_pattern).any()
    scale = max(1.0, float(np.abs(dense).max()))
    np.testing.assert_allclose(bn.sparse_hessian(flat)(z).toarray(), dense, rtol=1e-9,
                               atol=1e-9 * scale)


def test_misuse_is_named():
    with pytest.raises(bn.InputError, match="mode"):
        bn.sparse_jacobian(_band, mode="sideways")
    with pytest.raises(bn.BurnumbaError, match="sparse_jacobian"):
        bn.grad(lambda x: bn.sparse_jacobian(_band)(x).sum())(np.ones(4))


# -- the numba passes' cache (kernels/numba_cache.py) -------------------------------------------
NUMBA_FILES = ("burnumba/derive/sparsity_numba.py", "burnumba/transforms/colouring_numba.py")


@pytest.mark.parametrize("path", NUMBA_FILES)
def test_each_numba_file_calls_only_its_own_functions(path):
    """numba's cache checks a function's own file, not its callees': each file compiled
    through numba_cache imports nothing but numpy and that njit, so no compiled function can
    hold an inlined callee that changed since."""
    import ast
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tree = ast.parse(open(os.path.join(root, path)).read())
    imported = {(n.level, n.module) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {(0, a.name) for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names}
    assert imported == {(0, "numpy"), (2, "kernels.numba_cache")}


CACHED = """
import json, numpy as np
from burnumba.transforms import colouring_numba as c
indptr, indices = np.array([0, 1, 2], np.int64), np.array([1, 0], np.int64)
c.degrees(indptr, indices, 2)
print(json.dumps({"hits": sum(c.degrees.stats.cache_hits.values()),
                  "path": c.degrees.stats.cache_path}))
"""


def test_the_numba_passes_are_cached_in_the_cache_folder(tmp_path):
    """Compiled once into this environment's cache folder (not beside the source, where a
    new checkout would compile them again), then loaded by the next process."""
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, BURNUMBA_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", CACHED], env=env, check=True,
                                      capture_output=True, text=True).stdout)
            for _ in range(2)]
    assert [r["hits"] for r in runs] == [0, 1]
    assert runs[0]["path"].startswith(str(tmp_path)) and runs[0]["path"].endswith("numba")
    assert any(name.startswith("colouring_numba.degrees") for name in os.listdir(
        runs[0]["path"]))
