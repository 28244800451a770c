"""Data-movement numpy functions on traced values: flip, roll, repeat, tile, moveaxis,
rollaxis, atleast_1d/2d/3d, vstack, hstack, column_stack, tril, triu, diag, diagonal, trace,
diff, outer, kron, cross, pad, take_along_axis, integer-array indexing, append, insert,
delete, array_split, dstack, rot90, resize, block and ediff1d.

Each case is written once against a numpy-like module ``m``: numpy itself (the reference
values), plain ``np`` on traced values (through ``__array_function__``), ``burnumba.numpy``
called directly, and ``autograd.numpy`` (the reference gradients). Values must equal numpy's
exactly (they are gathers, or numpy's own order of multiplies and subtracts), in float64 and
float32; the vector-Jacobian product for a random cotangent must equal HIPS autograd's.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
from conftest import central_diff

IDX = np.array([[2, 0, 1, 1], [3, 3, 0, 2], [1, 0, 0, 3]])

# (id, f(m, *xs), shapes of xs)
CASES = [
    ("flip-1d", lambda m, x: m.flip(x), [(5,)]),
    ("flip-axis-1", lambda m, x: m.flip(x, -1), [(3, 4)]),
    ("flip-axes", lambda m, x: m.flip(x, axis=(0, 2)), [(2, 3, 4)]),
    ("flip-all-3d", lambda m, x: m.flip(x), [(2, 3, 4)]),
    ("fliplr", lambda m, x: m.fliplr(x), [(3, 4)]),
    ("flipud-3d", lambda m, x: m.flipud(x), [(2, 3, 4)]),
    ("roll-1d", lambda m, x: m.roll(x, 2), [(5,)]),
    ("roll-axis0", lambda m, x: m.roll(x, -1, axis=0), [(3, 4)]),
    ("roll-axes", lambda m, x: m.roll(x, (1, 2), axis=(-1, 0)), [(2, 3, 4)]),
    ("roll-flat", lambda m, x: m.roll(x, 5), [(3, 4)]),
    ("repeat-1d", lambda m, x: m.repeat(x, 3), [(4,)]),
    ("repeat-counts", lambda m, x: m.repeat(x, [1, 0, 2], axis=0), [(3, 4)]),
    ("repeat-axis-1", lambda m, x: m.repeat(x, 2, axis=-1), [(2, 3, 4)]),
    ("repeat-flat", lambda m, x: m.repeat(x, 2), [(2, 3)]),
    ("tile-1d", lambda m, x: m.tile(x, 2), [(3,)]),
    ("tile-3reps", lambda m, x: m.tile(x, (2, 1, 3)), [(2, 3)]),
    ("tile-3d", lambda m, x: m.tile(x, 2), [(2, 1, 3)]),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), [(2, 3, 4)]),
    ("moveaxis-many", lambda m, x: m.moveaxis(x, [0, 1], [-1, -2]), [(2, 3, 4)]),
    ("rollaxis", lambda m, x: m.rollaxis(x, 2), [(2, 3, 4)]),
    ("rollaxis-start", lambda m, x: m.rollaxis(x, -1, 1), [(2, 3, 4)]),
    ("atleast_1d-0d", lambda m, x: m.atleast_1d(x), [()]),
    ("atleast_2d-1d", lambda m, x: m.atleast_2d(x), [(3,)]),
    ("atleast_3d-1d", lambda m, x: m.atleast_3d(x), [(3,)]),
    ("atleast_3d-2d", lambda m, x: m.atleast_3d(x), [(2, 3)]),
    ("atleast_3d-3d", lambda m, x: m.atleast_3d(x), [(2, 3, 4)]),
    ("vstack-1d-2d", lambda m, x, y: m.vstack([x, y]), [(3,), (2, 3)]),
    ("vstack-2d", lambda m, x, y: m.vstack([x, y, x]), [(2, 3), (1, 3)]),
    ("hstack-1d", lambda m, x, y: m.hstack([x, y]), [(2,), (3,)]),
    ("hstack-2d", lambda m, x, y: m.hstack([x, y]), [(2, 3), (2, 1)]),
    ("hstack-3d", lambda m, x, y: m.hstack([x, y]), [(2, 1, 2), (2, 3, 2)]),
    ("column_stack", lambda m, x, y: m.column_stack([x, y]), [(3,), (3, 2)]),
    ("tril", lambda m, x: m.tril(x), [(4, 4)]),
    ("tril-k-1", lambda m, x: m.tril(x, -1), [(3, 5)]),
    ("tril-k2-3d", lambda m, x: m.tril(x, k=2), [(2, 5, 3)]),
    ("tril-1d", lambda m, x: m.tril(x, 1), [(4,)]),
    ("triu", lambda m, x: m.triu(x), [(4, 4)]),
    ("triu-k1", lambda m, x: m.triu(x, 1), [(3, 5)]),
    ("triu-k-2-3d", lambda m, x: m.triu(x, k=-2), [(2, 5, 3)]),
    ("diag-vector", lambda m, x: m.diag(x), [(4,)]),
    ("diag-vector-k-2", lambda m, x: m.diag(x, -2), [(3,)]),
    ("diag-vector-k1", lambda m, x: m.diag(x, k=1), [(3,)]),
    ("diag-matrix", lambda m, x: m.diag(x), [(4, 4)]),
    ("diag-matrix-k1", lambda m, x: m.diag(x, 1), [(3, 4)]),
    ("diagflat", lambda m, x: m.diagflat(x), [(2, 2)]),
    ("diagflat-k-1", lambda m, x: m.diagflat(x, -1), [(3,)]),
    ("compress-axis1", lambda m, x: m.compress([True, False, True], x, axis=1), [(2, 4)]),
    ("diag-matrix-k-1", lambda m, x: m.diag(x, -1), [(4, 3)]),
    ("diagonal", lambda m, x: m.diagonal(x, 1), [(3, 4)]),
    ("diagonal-3d", lambda m, x: m.diagonal(x, -1, axis1=2, axis2=0), [(4, 3, 3)]),
    ("trace", lambda m, x: m.trace(x), [(4, 4)]),
    ("trace-offset", lambda m, x: m.trace(x, 2), [(3, 5)]),
    ("trace-3d", lambda m, x: m.trace(x, 0, axis1=1, axis2=-1), [(2, 3, 4)]),
    ("diff-1d", lambda m, x: m.diff(x), [(5,)]),
    ("diff-n2-axis0", lambda m, x: m.diff(x, 2, axis=0), [(4, 5)]),
    ("diff-n3-3d", lambda m, x: m.diff(x, n=3, axis=-1), [(2, 3, 5)]),
    ("diff-axis1-3d", lambda m, x: m.diff(x, axis=1), [(2, 3, 4)]),
    ("diff-prepend-append", lambda m, x: m.diff(x, axis=0, prepend=0.5, append=x[:1] * 2.0),
     [(3, 4)]),
    ("outer", lambda m, x, y: m.outer(x, y), [(3,), (4,)]),
    ("outer-ravels", lambda m, x, y: m.outer(x, y), [(2, 2), (3,)]),
    ("outer-same", lambda m, x: m.outer(x, x), [(3,)]),
    ("kron-1d", lambda m, x, y: m.kron(x, y), [(2,), (3,)]),
    ("kron-2d", lambda m, x, y: m.kron(x, y), [(2, 3), (2, 2)]),
    ("kron-mixed", lambda m, x, y: m.kron(x, y), [(2, 1, 2), (3, 2)]),
    ("kron-1d-2d", lambda m, x, y: m.kron(x, y), [(3,), (2, 2)]),
    ("cross", lambda m, x, y: m.cross(x, y), [(3,), (3,)]),
    ("cross-broadcast", lambda m, x, y: m.cross(x, y), [(4, 3), (3,)]),
    ("cross-axis", lambda m, x, y: m.cross(x, y, axis=1), [(2, 3, 4), (2, 3, 4)]),
    ("cross-axisabc", lambda m, x, y: m.cross(x, y, axisa=0, axisb=-1, axisc=0),
     [(3, 2), (2, 3)]),
    ("pad-1d", lambda m, x: m.pad(x, 2), [(3,)]),
    ("pad-values", lambda m, x: m.pad(x, ((1, 0), (2, 1)), constant_values=((1.5, -2.0),
                                                                             (3.0, 4.0))),
     [(2, 3)]),
    ("pad-3d", lambda m, x: m.pad(x, ((0, 1), (1, 1), (2, 0)), "constant",
                                  constant_values=-0.25), [(2, 3, 2)]),
    ("pad-edge", lambda m, x: m.pad(x, ((1, 2), (2, 1)), mode="edge"), [(3, 4)]),
    ("pad-reflect", lambda m, x: m.pad(x, 2, mode="reflect"), [(3, 4)]),
    ("pad-symmetric", lambda m, x: m.pad(x, ((1, 2), (0, 3)), mode="symmetric"), [(3, 4)]),
    ("pad-wrap", lambda m, x: m.pad(x, 3, mode="wrap"), [(5,)]),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, IDX, axis=1), [(3, 4)]),
    ("take_along_axis-0", lambda m, x: m.take_along_axis(x, IDX[:2, :3, None] % 2, axis=0),
     [(2, 3, 4)]),
    ("take_along_axis-flat", lambda m, x: m.take_along_axis(x, IDX.ravel(), axis=None),
     [(2, 3)]),
    ("index-pairs", lambda m, x: x[np.arange(3), IDX[0, :3]], [(3, 4)]),
    ("index-columns", lambda m, x: x[:, IDX[1]], [(3, 4)]),
    ("index-2d-rows", lambda m, x: x[IDX[:2, :2] % 2], [(2, 3, 4)]),
    ("index-mixed", lambda m, x: x[IDX[0, :3] % 2, :, IDX[2, :3]], [(2, 3, 4)]),
    ("append-flat", lambda m, x, y: m.append(x, y), [(2, 3), (4,)]),
    ("append-axis0", lambda m, x, y: m.append(x, y, axis=0), [(2, 3), (1, 3)]),
    ("insert-column", lambda m, x, y: m.insert(x, 1, y, axis=1), [(2, 3), (2,)]),
    ("insert-many", lambda m, x: m.insert(x, [0, 2, 2], 7.0), [(5,)]),
    ("delete-columns", lambda m, x: m.delete(x, [0, 2], axis=1), [(2, 4)]),
    ("delete-flat", lambda m, x: m.delete(x, 3), [(2, 3)]),
    ("array_split", lambda m, x: m.concatenate([p.ravel() * (k + 1.0) for k, p in enumerate(
        m.array_split(x, 5, axis=1))]), [(2, 3)]),
    ("dstack", lambda m, x, y: m.dstack([x, y]), [(2, 3), (2, 3)]),
    ("rot90", lambda m, x: m.rot90(x), [(2, 3)]),
    ("rot90-k3-axes", lambda m, x: m.rot90(x, 3, axes=(1, 2)), [(2, 3, 4)]),
    ("resize", lambda m, x: m.resize(x, (4, 4)), [(2, 3)]),
    ("block", lambda m, x, y: m.block([[x, y[:, :1]], [y[:1], y[:1, :1]]]), [(2, 3), (2, 3)]),
    ("ediff1d", lambda m, x, y: m.ediff1d(x, to_end=y[:2], to_begin=y[2]), [(2, 3), (4,)]),
]
IDS = [c[0] for c in CASES]


def _points(rng, shapes, dtype=np.float64):
    return [np.asarray(rng.normal(size=s), dtype=dtype) for s in shapes]


def _vjp(f, xs, u):
    y, pull = bn.vjp(f, *xs)
    return y, pull(np.asarray(u, dtype=np.asarray(y).dtype))


def _reference_vjp(f, xs, u):
    """HIPS autograd's vector-Jacobian product of f(anp, *xs) at u."""
    loss = lambda *a: anp.sum(f(anp, *a) * u)                       # noqa: E731
    return autograd.grad(loss, argnum=tuple(range(len(xs))))(*xs)


def _numpy_vjp(f, xs, u):
    """u . J for each argument, J built column by column from numpy's own f at unit vectors:
    exact for these functions, which are affine in each argument (f(e_j) - f(0) is column j,
    computed without rounding but for one product in outer / kron / cross)."""
    out = []
    for k, x in enumerate(xs):
        at = lambda v: np.asarray(f(np, *xs[:k], v, *xs[k + 1:]), dtype=np.float64)  # noqa: E731
        f0 = at(np.zeros_like(x))
        g = np.zeros(x.size)
        for j in range(x.size):
            e = np.zeros(x.size)
            e[j] = 1.0
            g[j] = np.sum((at(e.reshape(x.shape)) - f0) * u)
        out.append(g.reshape(x.shape))
    return out


# HIPS autograd (1.7) has no VJP, or a wrong one, for these: there the reference is numpy's
# Jacobian by unit vectors only (see _numpy_vjp). The reasons, as autograd reports them:
AUTOGRAD_LACKS = {
    "flip-": "no VJP for flip",
    "diagflat": "no VJP for diagflat",
    "compress": "no VJP for compress",
    "take_along_axis": "no VJP for take_along_axis",
    "pad-1d": "pad's VJP fails when mode is left to its default (pad_vjp() missing 'mode')",
    "pad-values": "pad's VJP fails when mode is left to its default",
    "pad-edge": "VJP for mode='constant' only", "pad-reflect": "VJP for mode='constant' only",
    "pad-symmetric": "VJP for mode='constant' only", "pad-wrap": "VJP for mode='constant' only",
    "roll-axes": "roll's VJP fails on a tuple shift",
    "rollaxis-start": "no gradient of rollaxis for axis < 0",
    "repeat-counts": "repeat's VJP fails on per-element counts",
    "repeat-axis-1": "repeat's VJP is wrong for a negative axis",
    "tile-3d": "tile's VJP is wrong when reps is shorter than the array's ndim",
    "tril-1d": "tril's VJP fails on a 1-D array (shape mismatch)",
    "diag-matrix-": "diag's VJP fails for a non-square matrix",
    "diagonal": "diagonal's VJP supports offset=0, axis1=-1, axis2=-2 only",
    "trace-3d": "trace's VJP fails on axis1 / axis2 keywords",
    "diff-prepend-append": "diff's VJP fails on prepend / append",
    "outer-ravels": "outer's VJP fails on a 2-D argument",
    "cross-broadcast": "cross's VJP fails with broadcasting",
    "insert": "no VJP for insert", "delete": "no VJP for delete",
    "resize": "no VJP for resize", "ediff1d": "no VJP for ediff1d",
    "rot90-k3-axes": "rot90's VJP fails on axes=",
}
# not affine in its argument: autograd is the reference
NOT_AFFINE = {"outer-same"}


def _lacks(name):
    return next((why for key, why in AUTOGRAD_LACKS.items() if name.startswith(key)), None)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_and_gradients_against_numpy_and_autograd(case, rng):
    name, f, shapes = case
    xs = _points(rng, shapes)
    ref = f(np, *xs)
    u = rng.normal(size=np.shape(ref))
    y, g = _vjp(lambda *a: f(np, *a), xs, u)
    assert np.shape(y) == np.shape(ref)
    if name.startswith("trace"):          # a sum: burnumba's order of additions, not numpy's
        np.testing.assert_allclose(y, ref, rtol=1e-15)
    else:
        np.testing.assert_array_equal(y, ref)
    # burnumba.numpy called directly: the same tape, the same values and gradients
    y2, g2 = _vjp(lambda *a: f(bnp, *a), xs, u)
    np.testing.assert_array_equal(y2, y)
    for a, b in zip(g2, g):
        np.testing.assert_array_equal(a, b)
    # and on plain numpy arrays it is numpy
    np.testing.assert_array_equal(f(bnp, *xs), ref)
    refs = [] if name in NOT_AFFINE else [("numpy's Jacobian", _numpy_vjp(f, xs, u))]
    if _lacks(name) is None:
        refs.append(("autograd", _reference_vjp(f, xs, u)))
    for who, ref_g in refs:
        for k, (gk, rk) in enumerate(zip(g, ref_g)):
            assert np.shape(gk) == np.shape(xs[k])
            np.testing.assert_allclose(gk, rk, rtol=1e-13, atol=1e-13,
                                       err_msg=f"{name}: gradient of argument {k} vs {who}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_values_equal_numpy_and_gradients_are_float32(case, rng):
    name, f, shapes = case
    xs = _points(rng, shapes, np.float32)
    ref = f(np, *xs)
    u = rng.normal(size=np.shape(ref)).astype(np.float32)
    y, g = _vjp(lambda *a: f(np, *a), xs, u)
    if np.ndim(ref):                      # scalar outputs come back as Python-like floats
        assert y.dtype == np.float32
    if name.startswith("trace") or ref.dtype != np.float32:
        # a sum in burnumba's order; or numpy promoted to float64 (diff's prepend=0.5 is a
        # float64 array to numpy), while a tape computes in its one dtype
        np.testing.assert_allclose(y, ref, rtol=1e-6)
    else:
        np.testing.assert_array_equal(y, ref)
    x64, u64 = [x.astype(np.float64) for x in xs], u.astype(np.float64)
    ref_g = _reference_vjp(f, x64, u64) if name in NOT_AFFINE else _numpy_vjp(f, x64, u64)
    for gk, rk in zip(g, ref_g):
        assert gk.dtype == np.float32
        np.testing.assert_allclose(gk, rk, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["diff-n3-3d", "kron-mixed", "cross-axis", "pad-values",
                                  "trace-3d"])
def test_gradients_against_central_differences(name, rng):
    """A second, independent reference for the compositions (not only gathers)."""
    _, f, shapes = CASES[IDS.index(name)]
    xs = _points(rng, shapes)
    u = rng.normal(size=np.shape(f(np, *xs)))
    loss = lambda *a: np.sum(f(np, *a) * u)                          # noqa: E731
    g = bn.grad(loss, argnums=tuple(range(len(xs))))(*xs)
    for k in range(len(xs)):
        np.testing.assert_allclose(g[k], central_diff(loss, xs, k), rtol=1e-6, atol=1e-8)


def test_tril_triu_diag_pad_write_exact_zeros_and_constants_over_inf_and_nan():
    """The written elements read constants, so inf and NaN in the dropped part do not leak
    (0 * inf would be NaN) and receive no gradient."""
    x = np.array([[1.0, np.inf, np.nan], [-np.inf, 2.0, 3.0], [4.0, np.nan, 5.0]])
    finite = np.arange(1.0, 10.0).reshape(3, 3)
    cases = [(lambda m, x: m.tril(x)), (lambda m, x: m.triu(x, 1)),
             (lambda m, x: m.diag(m.diag(x))),
             (lambda m, x: m.pad(x[1:, :1], 1, constant_values=-0.0))]
    for f in cases:
        ref = f(np, x)
        y, pull = bn.vjp(lambda x: f(np, x), x)
        np.testing.assert_array_equal(y, ref)
        assert np.array_equal(np.signbit(y), np.signbit(ref))
        u = np.arange(1.0, ref.size + 1.0).reshape(ref.shape)
        (g,) = pull(u)
        np.testing.assert_array_equal(g, _numpy_vjp(f, [finite], u)[0])


def test_repeat_collects_the_gradient_of_every_copy(rng):
    x = rng.normal(size=(2, 3))
    g = bn.grad(lambda x: np.sum(np.repeat(x, [3, 0, 1], axis=1) ** 2))(x)
    np.testing.assert_array_equal(g, 2 * x * np.array([3.0, 0.0, 1.0]))


def test_several_arrays_to_atleast(rng):
    x, y = rng.normal(size=3), rng.normal(size=(2, 3))
    f = lambda x, y: np.concatenate([np.ravel(a) for a in np.atleast_3d(x, y)])  # noqa: E731
    value, pull = bn.vjp(f, x, y)
    np.testing.assert_array_equal(value, f(x, y))
    gx, gy = pull(np.arange(9.0))
    np.testing.assert_array_equal(gx, np.arange(3.0))
    np.testing.assert_array_equal(gy, np.arange(3.0, 9.0).reshape(2, 3))


def test_grad_jacrev_and_vmap(rng):
    x = rng.normal(size=(3, 3))
    # bn.grad of a loss made of several of them
    # (autograd has no flip, and pads in mode "constant" only)
    loss = lambda x: np.trace(np.kron(np.tril(x), x[::-1])) + np.sum(  # noqa: E731
        np.diff(np.pad(x, ((1, 1), (1, 1)), "constant"), axis=0) ** 2)
    a_loss = lambda x: anp.trace(anp.kron(anp.tril(x), x[::-1])) + anp.sum(  # noqa: E731
        anp.diff(anp.pad(x, ((1, 1), (1, 1)), "constant"), axis=0) ** 2)
    np.testing.assert_allclose(bn.grad(loss)(x), autograd.grad(a_loss)(x), rtol=1e-12)
    # bn.jacrev of an array-valued one
    f = lambda x: np.roll(np.outer(np.diag(x), x[0]), 1, axis=-1)    # noqa: E731
    fa = lambda x: anp.roll(anp.outer(anp.diag(x), x[0]), 1, axis=-1)  # noqa: E731
    np.testing.assert_allclose(bn.jacrev(f)(x), autograd.jacobian(fa)(x), rtol=1e-13)
    # bn.vmap of per-sample gradients: equal to a loop of bn.grad, and to autograd's
    xs = rng.normal(size=(5, 2, 3))
    per = lambda x: np.sum(np.cross(np.repeat(x, 2, axis=0), np.tile(x[::-1], (2, 1))) ** 2)  # noqa: E731
    per_a = lambda x: anp.sum(anp.cross(anp.repeat(x, 2, axis=0),  # noqa: E731
                                        anp.tile(x[::-1], (2, 1))) ** 2)
    got = bn.vmap(bn.grad(per))(xs)
    np.testing.assert_array_equal(got, np.stack([bn.grad(per)(x) for x in xs]))
    np.testing.assert_allclose(got, np.stack([autograd.grad(per_a)(x) for x in xs]),
                               rtol=1e-12)


def test_a_tape_is_reused_at_new_points(rng):
    vg = bn.value_and_grad(lambda x: np.sum(np.diff(np.tril(x), axis=-1) ** 2))
    for _ in range(3):
        x = rng.normal(size=(4, 4))
        value, g = vg(x)
        a = lambda x: anp.sum(anp.diff(anp.tril(x), axis=-1) ** 2)   # noqa: E731
        np.testing.assert_allclose(value, a(x), rtol=1e-14)
        np.testing.assert_allclose(g, autograd.grad(a)(x), rtol=1e-14)
    assert len(vg.tapes) == 1


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda x, i: np.repeat(x, i), ["repeat", "`repeats`", "constant"]),
    (lambda x, i: np.roll(x, i), ["roll", "`shift`", "constant"]),
    (lambda x, i: np.tile(x, i), ["tile", "`reps`", "constant"]),
    (lambda x, i: np.take_along_axis(x, i + 0.5, axis=0), ["must be integer data",
                                                           ".astype(int)"]),
    (lambda x, i: np.pad(x, 1, mode="mean"), ["pad", "mode='mean'", "mode='constant'"]),
    (lambda x, i: np.pad(x, 1, constant_values=x[0]), ["pad", "`constant_values`"]),
    (lambda x, i: np.cross(x[:2], x[1:]), ["cross", "3-vectors", "a[..., 0] * b[..., 1]"]),
])
def test_unsupported_arguments_raise_naming_the_function_and_the_fix(call, words):
    x, i = np.arange(1.0, 4.0), np.array([1, 2, 0])
    with pytest.raises(bn.UnsupportedOpError) as e:
        bn.grad(lambda x, i: np.sum(call(x, i)))(x, i)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_shape_errors_are_burnumba_errors():
    x = np.ones((2, 3))
    with pytest.raises(bn.ShapeError, match="vstack"):
        bn.grad(lambda x: np.sum(np.vstack([x, x[:, :2]])))(x)
    with pytest.raises(bn.ShapeError, match="moveaxis"):
        bn.grad(lambda x: np.sum(np.moveaxis(x, 0, 5)))(x)
    with pytest.raises(bn.ShapeError, match="diff"):
        bn.grad(lambda x: np.sum(np.diff(x, axis=2)))(x)
    with pytest.raises(bn.InplaceError, match="outer"):
        bn.grad(lambda x: np.sum(np.outer(x, x, out=np.empty((6, 6)))))(x)


def test_stack_dtype_is_refused_on_traced_values_and_numpy_s_otherwise():
    x = np.ones(3)
    with pytest.raises(bn.UnsupportedOpError, match=r"vstack\(\.\.\., dtype=.*drop dtype="):
        bn.grad(lambda x: np.sum(np.vstack([x, x], dtype=np.float32)))(x)
    assert bnp.hstack([x, x], dtype=np.float32).dtype == np.float32
