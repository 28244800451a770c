"""Issue #11, numpy breadth: the remaining ufuncs and common numpy functions on traced values.

Each function is called as numpy code, unchanged: values against numpy itself (bit for bit
where burnumba follows numpy's formula), gradients against HIPS autograd where it has the
function (autograd has no derivative of average, median, cov or convolve) and against
central differences of numpy's own function everywhere, in float64 and
float32, over shapes, axes, broadcasting and keepdims. The new map rows' gradients and IEEE
cases are in test_ops.py, test_transforms.py and test_ieee.py (the row tables).
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp

nan, inf = np.nan, np.inf


def _np(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kw)


def _value(f, *args):
    """f traced (every float argument differentiable) and run on args."""
    return bn.trace(f, *args, argnums=tuple(range(len(args))))(*args)


def _same(got, want):
    """Equal with NaNs and the sign of zeros."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def _central(f, args, k, h=1e-6):
    """Central differences of the scalar numpy function f in argument k."""
    x = np.array(args[k], dtype=np.float64)
    g = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[j] = h
        hi = list(args)
        lo = list(args)
        hi[k], lo[k] = x + e, x - e
        g[j] = (_np(f, *hi) - _np(f, *lo)) / (2 * h)
    return g


def _check(f, *args, ref=None, rtol=1e-12, grad_rtol=1e-6, argnums=None, seed=0):
    """Values against numpy (rtol), gradients of sum(f * w) against central differences of
    numpy's f and, when given, against autograd's ``ref`` (rtol 1e-10)."""
    argnums = tuple(range(len(args))) if argnums is None else argnums
    want = _np(f, *args)
    got = bn.trace(f, *args, argnums=argnums)(*args)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-14, equal_nan=True)
    w = np.random.default_rng(seed).normal(size=np.shape(want))
    g = bn.grad(lambda *a: np.sum(f(*a) * w), argnums=argnums)(*args)
    g = g if isinstance(g, tuple) else (g,)
    for gk, k in zip(g, argnums):
        assert np.shape(gk) == np.shape(args[k])
        fd = _central(lambda *a: np.sum(f(*a) * w), args, k)
        np.testing.assert_allclose(gk, fd, rtol=grad_rtol, atol=1e-6)
        if ref is not None:
            ra = autograd.grad(lambda *a: anp.sum(ref(*a) * w), k)(*args)
            np.testing.assert_allclose(gk, ra, rtol=1e-10, atol=1e-12)
    return got, g


@pytest.fixture
def rng():
    return np.random.default_rng(11)


# -- ufuncs: the rows' values over many points, aliases and compositions ---------------------

def test_every_numpy_ufunc_is_traced_or_refused_by_name():
    """The ufuncs issue #11 lists all reach burnumba; those left (integer, bitwise, complex
    and a few exotic ones) are refused with an error that names them."""
    listed = ["arcsinh", "arccosh", "arctanh", "cbrt", "copysign", "fmod", "heaviside", "rint",
              "trunc", "float_power", "deg2rad", "radians", "rad2deg", "degrees", "fabs",
              "conj", "conjugate", "positive", "acos", "asin", "atan", "atan2", "acosh",
              "asinh", "atanh", "pow", "isnan", "isinf", "isfinite", "signbit", "logical_and",
              "logical_or", "logical_xor", "logical_not", "modf", "divmod", "frexp",
              "floor_divide", "ldexp"]
    missing = [n for n in listed if n not in vars(bnp)]   # burnumba's own, not numpy's
    assert not missing
    assert bnp.acos is bnp.arccos and bnp.atanh is bnp.arctanh and bnp.pow is bnp.power
    for name in listed:
        assert name in bnp.__all__
    with pytest.raises(bn.UnsupportedOpError, match="numpy.gcd"):
        bn.grad(lambda x: np.sum(np.gcd(x, x)))(np.ones(2))


NEW_ROWS = {
    "arcsinh": (np.arcsinh, (-30.0, 30.0)), "arccosh": (np.arccosh, (1.0, 30.0)),
    "arctanh": (np.arctanh, (-1.0, 1.0)), "cbrt": (np.cbrt, (-30.0, 30.0)),
    "rint": (np.rint, (-5.0, 5.0)), "trunc": (np.trunc, (-5.0, 5.0)),
}


@pytest.mark.parametrize("name", sorted(NEW_ROWS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_new_unary_rows_equal_numpy(name, dtype, rng):
    fn, (lo, hi) = NEW_ROWS[name]
    x = rng.uniform(lo, hi, size=(4, 50)).astype(dtype)
    x[0, :6] = [lo, hi, 0.0, -0.0, 0.5, -2.5] if lo < 0 else [lo, hi, 1.0, 2.5, 3.5, 1.5]
    got = _value(fn, x)
    assert got.dtype == dtype
    if name in ("rint", "trunc"):
        _same(got, _np(fn, x))
    else:
        # libm's functions, which numba calls; numpy may use SIMD ones (SVML): 1 ulp apart
        ulp = np.finfo(dtype).eps
        np.testing.assert_allclose(got, _np(fn, x), rtol=2 * ulp, atol=0)


def test_arctanh_is_accurate_near_zero_and_near_one():
    """A row of libm's atanh (not 0.5 log1p(2x / (1 - x))): numpy's values to 1 ulp next to
    0 and to +-1."""
    x = np.array([1e-300, -1e-17, 1e-9, 0.3, 1 - 1e-15, -(1 - 2 ** -52), 0.999999, -0.5])
    np.testing.assert_allclose(_value(np.arctanh, x), np.arctanh(x), rtol=2.3e-16, atol=0)
    g = bn.grad(lambda x: np.sum(np.arctanh(x)))(x)
    np.testing.assert_allclose(g, 1 / (1 - x * x), rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_rows_broadcast_and_equal_numpy(dtype, rng):
    a = rng.uniform(-6, 6, size=(3, 4, 5)).astype(dtype)
    b = rng.uniform(-3, 3, size=(4, 1)).astype(dtype)
    a[0, 0, :4] = [0.0, -0.0, 4.0, -3.0]
    b[:3, 0] = [0.0, -0.0, 1.5]
    for fn in (np.copysign, np.fmod, np.heaviside, np.floor_divide, np.remainder,
               lambda a, b: a // b, np.logical_and, np.logical_or, np.logical_xor):
        got = _value(lambda a, b: fn(a, b) * 1.0, a, b)
        assert got.dtype == dtype
        _same(got, _np(fn, a, b).astype(dtype))


def test_floor_divide_and_divmod_follow_numpy(rng):
    """// and divmod as numpy's floor_divide and remainder: 1 // 0.1 is 9.0, signs of zero,
    b = 0 gives +-inf or NaN; gradients 0 (floor_divide) and 1, -quotient (remainder)."""
    a = np.concatenate([rng.normal(size=40) * 5, [1.0, -1.0, 0.0, -0.0, 3.0, inf, nan, 7.0]])
    b = np.concatenate([rng.normal(size=40), [0.1, 0.1, -1.5, 1.5, 0.0, 2.0, 1.0, -inf]])
    _same(_value(lambda a, b: a // b, a, b), _np(np.floor_divide, a, b))
    _same(_value(lambda a: 2.5 // a, b), _np(np.floor_divide, 2.5, b))
    _same(_value(lambda a: a // 0.7, a), _np(np.floor_divide, a, 0.7))
    q, r = _np(np.divmod, a, b)
    for f in (lambda a, b: divmod(a, b), lambda a, b: np.divmod(a, b)):
        _same(_value(lambda a, b: f(a, b)[0], a, b), q)
        _same(_value(lambda a, b: f(a, b)[1], a, b), r)
    _same(_value(lambda b: divmod(3.0, b)[0], b), _np(np.floor_divide, 3.0, b))
    x, y = np.array([5.5, -5.5, 0.3]), np.array([2.0, 2.0, -0.7])
    ga, gb = bn.grad(lambda a, b: np.sum(a // b + divmod(a, b)[1]), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(ga, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gb, -np.floor_divide(x, y))
    assert bn.grad(lambda a: a // 2.0)(3.7) == 0.0


def test_compositions_equal_numpy_bit_for_bit(rng):
    x = rng.normal(size=(5, 7)) * 100
    for fn in (np.deg2rad, np.radians, np.rad2deg, np.degrees, np.fabs, np.conj,
               np.conjugate, np.positive, np.real, lambda x: np.float_power(x * x, 1.5),
               lambda x: np.pow(np.abs(x), 0.5), lambda x: np.fix(x / 30),
               lambda x: np.round(x, 1), lambda x: np.around(x, -1), lambda x: np.round(x),
               lambda x: np.ldexp(x, 3), lambda x: np.ldexp(x, np.arange(7) - 3)):
        _same(_value(fn, x), _np(fn, x))
    # numpy 2's alias names reach the same rows (libm's functions: within 1 ulp of numpy's)
    for fn in (lambda x: np.acos(x / 500), lambda x: np.asin(x / 500), lambda x: np.atan(x),
               lambda x: np.atan2(x, 3.0), np.asinh, lambda x: np.acosh(np.abs(x) + 1),
               lambda x: np.atanh(x / 500)):
        np.testing.assert_allclose(_value(fn, x), _np(fn, x), rtol=4.5e-16, atol=0)
    _same(_value(lambda x: x + np.imag(x), x), x)
    g = bn.grad(lambda x: np.sum(np.deg2rad(x) + np.degrees(x) + np.fabs(x) + np.conj(x)))(x)
    np.testing.assert_allclose(g, np.pi / 180 + 180 / np.pi + np.sign(x) + 1, rtol=1e-15)
    assert bn.grad(lambda x: np.sum(np.imag(x) + np.real(x)))(x).tolist() == np.ones_like(
        x).tolist()


def test_round_half_to_even_with_decimals_and_zero_gradient():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.135, 1234.5678, -0.049, 2.675])
    for d in (0, 1, 2, 3, -1, -2):
        _same(_value(lambda x: np.round(x, d), x), np.round(x, d))
        _same(_value(lambda x: np.around(x, decimals=d), x), np.around(x, decimals=d))
    # d/dx round(x) x = round(x): the rounding itself is flat
    for d in (0, 2, -1):
        g = bn.grad(lambda x: np.sum(np.round(x, d) * x))(x)
        np.testing.assert_array_equal(g, np.round(x, d))


def test_modf_frexp_ldexp():
    x = np.array([2.75, -2.75, -2.0, 0.0, -0.0, inf, -inf, nan, 1e300, -1e-300])
    frac, whole = np.modf(x)
    _same(_value(lambda x: np.modf(x)[0], x), frac)
    _same(_value(lambda x: np.modf(x)[1], x), whole)
    g = bn.grad(lambda x: np.sum(np.modf(x)[0] * 2.0 + np.modf(x)[1]))(x[:3])
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    # ldexp: exact powers of two, beyond 2**1023 too; gradient 2**i
    e = np.array([3, -1074, 1100, -1100, 0, 1023, -1022, 2000, 1, 5])
    y = np.array([1.5, 3.0, 1e-300, 1e300, -0.0, 1.0, 1.0, 1e-320, inf, nan])
    _same(_value(lambda y: np.ldexp(y, e), y), np.ldexp(y, e))
    np.testing.assert_array_equal(bn.grad(lambda y: np.sum(np.ldexp(y, 4)))(y[:3]), [16.0] * 3)
    with pytest.raises(bn.UnsupportedOpError, match="ldexp: the exponent"):
        bn.grad(lambda y, k: np.sum(np.ldexp(y, k)), argnums=(0, 1))(y[:2], y[:2])
    with pytest.raises(bn.UnsupportedOpError, match="frexp"):
        bn.grad(lambda y: np.sum(np.frexp(y)[0]))(y[:2])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predicates_select_in_where_and_count(dtype):
    x = np.array([1.0, nan, -inf, 0.0, -0.0, 2.0, inf, -3.0], dtype=dtype)

    def f(x):
        # the double where: inf * inf in an unchosen branch would make its gradient NaN
        return np.sum(bnp.where(np.isfinite(x), x, 0.0) ** 2) + np.sum(np.isnan(x)) * 10.0 \
            + np.sum(np.signbit(x)) * 100.0 + np.sum(np.isinf(x)) * 1000.0
    v, g = bn.value_and_grad(f)(x)
    fin = np.isfinite(x)
    assert v == np.sum(np.where(fin, x, 0) ** 2) + 10 + 300 + 2000
    np.testing.assert_array_equal(g, np.where(fin, 2 * np.where(fin, x, 0), 0).astype(dtype))
    assert g.dtype == dtype


def test_mask_operators_are_logical_ops_on_masks(rng):
    """numpy code combines boolean masks with & | ^ ~: between traced masks (comparisons,
    predicates, their slices), numpy bool arrays and bools they are the logical rows; on
    other traced values they stay refused with a message that names the fix."""
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0, nan])
    keep = np.array([True, False, True, True, False, True])

    def f(x):
        m = ((x > -1.0) & (x < 1.0)) | np.isnan(x)
        m = (m ^ (x == 0.0)) & ~(x == 2.0)
        m = (keep & m) | (m[::-1] & False) | (True & np.isinf(x))
        return np.sum(bnp.where(m, x, 0.0) * 3.0 + ~m * x)
    want = ((((x > -1.0) & (x < 1.0)) | np.isnan(x)) ^ (x == 0.0)) & ~(x == 2.0)
    want = (keep & want) | (want[::-1] & False) | (True & np.isinf(x))
    v, g = bn.value_and_grad(f)(x)
    np.testing.assert_allclose(v, np.sum(np.where(want, x, 0.0) * 3.0 + ~want * x))
    np.testing.assert_array_equal(g, np.where(want, 3.0, 1.0))
    for bad in (lambda x: x & (x > 0), lambda x: ~x, lambda x: (x > 0) | x,
                lambda x: np.ones(6) & (x > 0)):
        with pytest.raises(bn.UnsupportedOpError, match="masks"):
            bn.grad(lambda x: np.sum(bad(x) * x))(x)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3)),
                                    ((2, 3, 4), (3, 4))], ids=str)
def test_vecdot_matvec_vecmat(shapes, rng):
    """numpy 2's vector gufuncs (ufuncs, reached through __array_ufunc__)."""
    s1, s2 = shapes
    x, y = rng.normal(size=s1), rng.normal(size=s2)
    _check(lambda x, y: np.vecdot(x, y), x, y)
    if len(s1) >= 2:
        v = rng.normal(size=s1[:-2] + s1[-1:])
        _check(lambda x, v: np.matvec(x, v), x, v)
        _check(lambda x, v: np.vecmat(v, np.swapaxes(x, -1, -2)), x, v)
    _check(lambda y: np.vecdot(y, y[::-1], axis=0), y)


# -- functions: shapes, averages, nan-reductions ----------------------------------------------

def test_like_functions_are_constants_of_the_shape():
    x = np.arange(6.0).reshape(2, 3)

    def f(x):
        z, o, e = np.zeros_like(x), np.ones_like(x), np.empty_like(x, shape=(3,))
        # traced constants (in-place writes can fill them), of x's shape or the one asked
        assert not isinstance(z, np.ndarray) and z.shape == (2, 3) and e.shape == (3,)
        assert np.full_like(x, 7.0, dtype=np.float32).dtype == np.float32
        return np.sum(x * o + z + np.full_like(x, 2.0)) + np.sum(e)
    v, g = bn.value_and_grad(f)(x)
    assert v == np.sum(x) + 12.0 and np.all(g == 1.0)
    # a traced fill value is broadcast: its gradient sums over the copies
    g = bn.grad(lambda x, c: np.sum(np.full_like(x, c) * x), argnums=1)(x, 1.5)
    assert g == np.sum(x)
    with pytest.raises(bn.InplaceError, match="bnp.full_like"):   # numpy's copyto, refused
        bn.grad(lambda c: np.sum(np.full_like(x, c) * x))(1.5)
    g = bn.grad(lambda c: np.sum(bnp.full_like(np.ones((2, 3)), c) * x))(1.5)
    assert g == np.sum(x)
    g32 = bn.grad(lambda x: np.sum(np.ones_like(x) * x))(x.astype(np.float32))
    assert g32.dtype == np.float32


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_average_mean_and_weights(axis, rng):
    a = rng.normal(size=(3, 4, 2))
    _check(lambda a: np.average(a, axis=axis), a)
    w = rng.uniform(0.5, 2.0, size=a.shape)
    _check(lambda a, w: np.average(a, axis=axis, weights=w), a, w)
    avg = bn.trace(lambda a: np.average(a, axis=axis, returned=True)[0], a)(a)
    want, scl = np.average(a, axis=axis, returned=True)
    np.testing.assert_allclose(avg, want, rtol=1e-14)
    assert np.array_equal(bnp.average(a, axis=axis, returned=True)[1], scl)
    got = bn.trace(lambda a, w: np.average(a, axis=axis, weights=w, returned=True)[1], a, w)(a, w)
    np.testing.assert_allclose(got, np.average(a, axis=axis, weights=w, returned=True)[1],
                               rtol=1e-14)
    if axis is not None:
        ax = axis if isinstance(axis, tuple) else (axis,)
        w1 = rng.uniform(0.5, 2.0, size=tuple(a.shape[k] for k in ax))
        _check(lambda a, w: np.average(a, axis=axis, weights=w, keepdims=True), a, w1)


def test_average_errors():
    a = np.ones((2, 3))
    with pytest.raises(bn.UnsupportedOpError, match="axis must be specified"):
        bn.grad(lambda a: np.average(a, weights=np.ones(3)))(a)
    with pytest.raises(bn.ShapeError, match="shape of weights"):
        bn.grad(lambda a: np.average(a, axis=0, weights=np.ones(3)))(a)
    with pytest.raises(ZeroDivisionError):
        bn.grad(lambda a: np.average(a, axis=0, weights=np.zeros(2)))(a)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_ptp_and_count_nonzero(axis, rng):
    a = rng.normal(size=(4, 5))
    _check(lambda a: np.ptp(a, axis=axis), a,
           ref=lambda a: anp.max(a, axis=axis) - anp.min(a, axis=axis))
    b = np.where(rng.normal(size=(4, 5)) > 0, a, 0.0)
    got = _value(lambda b: np.count_nonzero(b, axis=axis) * 1.0, b)
    np.testing.assert_array_equal(got, np.count_nonzero(b, axis=axis))
    # the count is a constant for the gradient: d/db sum(count * b) = count, broadcast
    g = bn.grad(lambda b: np.sum(np.count_nonzero(b, axis=axis, keepdims=True) * b))(b)
    np.testing.assert_array_equal(g, np.broadcast_to(
        np.count_nonzero(b, axis=axis, keepdims=True), b.shape))


NAN_FUNCS = {"nansum": (np.nansum, np.sum), "nanmean": (np.nanmean, np.mean),
             "nanmax": (np.nanmax, np.max), "nanmin": (np.nanmin, np.min),
             "nanprod": (np.nanprod, np.prod)}


@pytest.mark.parametrize("name", sorted(NAN_FUNCS))
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_reductions_skip_nans_with_zero_gradient(name, axis, dtype, rng):
    """Values as numpy (an all-NaN slice of nanmax / nanmin / nanmean is NaN, as numpy's,
    without the warning); gradients 0 at the NaNs, and elsewhere the gradient of the plain
    reduction of the non-NaN entries (JAX's rule)."""
    fn, plain = NAN_FUNCS[name]
    x = rng.uniform(0.5, 2.0, size=(4, 5)).astype(dtype)
    x[1, 2] = x[3, 0] = nan
    if axis == 1:
        x[2] = nan                                        # an all-NaN row
    got = _value(lambda x: fn(x, axis=axis), x)
    want = _np(fn, x, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == np.float64 else 1e-5,
                               equal_nan=True)
    g = bn.grad(lambda x: np.sum(fn(x, axis=axis) * 1.5))(x)
    assert g.dtype == dtype
    nans = np.isnan(x)
    assert np.all(g[nans] == 0.0) and np.all(np.isfinite(g))
    if dtype == np.float64:
        fill = {"nansum": 0.0, "nanmean": None, "nanmax": -inf, "nanmin": inf,
                "nanprod": 1.0}[name]
        if fill is not None:
            ref = autograd.grad(lambda z: anp.sum(getattr(anp, plain.__name__)(
                anp.where(nans, fill, z), axis=axis) * 1.5))(np.where(nans, 1.0, x))
            ref = np.where(nans | ~np.isfinite(ref), 0.0, ref)
            np.testing.assert_allclose(g, ref, rtol=1e-12)
        else:
            cnt = np.sum(~nans, axis=axis, keepdims=True)
            np.testing.assert_allclose(g, np.where(nans, 0.0, 1.5 / np.maximum(cnt, 1)),
                                       rtol=1e-14)


@pytest.mark.parametrize("fn", [np.nanvar, np.nanstd])
@pytest.mark.parametrize("axis,ddof", [(None, 0), (0, 1), (1, 0), (1, 3), ((0, 1), 1)])
def test_nanvar_nanstd(fn, axis, ddof, rng):
    x = rng.normal(size=(4, 5))
    x[1, 2] = x[3, 0] = x[0, 1] = nan
    got = _value(lambda x: fn(x, axis=axis, ddof=ddof), x)
    want = _np(fn, x, axis=axis, ddof=ddof)
    np.testing.assert_allclose(got, want, rtol=1e-13, equal_nan=True)
    w = rng.normal(size=np.shape(want))
    g = bn.grad(lambda x: np.sum(bnp.where(np.isnan(fn(x, axis=axis, ddof=ddof)), 0.0,
                                           fn(x, axis=axis, ddof=ddof)) * w))(x)
    nans = np.isnan(x)
    assert np.all(g[nans] == 0.0) and np.all(np.isfinite(g))
    ok = ~np.isnan(want)

    def dense(z):                     # numpy on the NaN-free entries, as a function of them
        full = x.copy()
        full[~nans] = z
        return np.sum(np.where(ok, _np(fn, full, axis=axis, ddof=ddof), 0.0) * w)
    fd = _central(dense, (x[~nans],), 0)
    np.testing.assert_allclose(g[~nans], fd, rtol=1e-6, atol=1e-7)


NAN_ORDER = {
    "nanmedian-1": lambda x: np.nanmedian(x, axis=1),
    "nanmedian-all": lambda x: np.nanmedian(x),
    "nanmedian-0-keep": lambda x: np.nanmedian(x, axis=0, keepdims=True),
    "nanquantile-q": lambda x: np.nanquantile(x, [0.0, 0.3, 0.5, 0.999, 1.0], axis=1),
    "nanquantile-2d-q": lambda x: np.nanquantile(x, [[0.1, 0.2], [0.7, 1.0]]),
    "nanpercentile": lambda x: np.nanpercentile(x, 40, axis=0, keepdims=True),
}


@pytest.mark.parametrize("name", sorted(NAN_ORDER))
def test_nanmedian_nanquantile(name, rng):
    """Order statistics of each lane's non-NaN values (a lane of NaNs only is NaN): values as
    numpy, gradient 0 at the NaNs, and elsewhere central differences of numpy's function of
    the non-NaN entries."""
    f = NAN_ORDER[name]
    x = rng.normal(size=(4, 7))
    x[0, 2] = x[2, 1] = x[2, 3] = nan
    if "1" in name or "q" in name:
        x[1] = nan
    got, want = _value(f, x), _np(f, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, equal_nan=True)
    ok = ~np.isnan(want)
    w = rng.normal(size=want.shape)
    g = bn.grad(lambda x: np.sum(bnp.where(np.isnan(f(x)), 0.0, f(x)) * w))(x)
    nans = np.isnan(x)
    assert np.all(g[nans] == 0.0) and np.all(np.isfinite(g))

    def dense(z):
        full = x.copy()
        full[~nans] = z
        return np.sum(np.where(ok, _np(f, full), 0.0) * w)
    np.testing.assert_allclose(g[~nans], _central(dense, (x[~nans],), 0), rtol=1e-6,
                               atol=1e-7)
    with pytest.raises(bn.UnsupportedOpError, match="method='linear'"):
        bn.grad(lambda x: np.sum(np.nanquantile(x, 0.5, method="lower")))(x)


def test_nan_reductions_of_numpy_arrays_call_numpy_and_refuse_what_they_cannot_trace():
    x = np.array([1.0, nan, 3.0])
    assert bnp.nansum(x) == 4.0 and bnp.nanmax(x) == 3.0 and bnp.nanmean(x) == 2.0
    with pytest.raises(bn.UnsupportedOpError, match="nanmax: keyword arguments"):
        bn.grad(lambda x: np.nanmax(x, initial=0.0))(x)
    with pytest.raises(bn.UnsupportedOpError, match="nancumprod"):
        bn.grad(lambda x: np.sum(np.nancumprod(x)))(x)


def test_isclose_allclose():
    a = np.array([1.0, 1.0, inf, inf, nan, 0.0, 1e-9, -inf])
    b = np.array([1.0 + 1e-9, 1.1, inf, -inf, nan, 1e-9, 0.0, -inf])
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.2}, {"atol": 0.0}):
        got = _value(lambda a, b: np.isclose(a, b, **kw) * 1.0, a, b)
        np.testing.assert_array_equal(got, np.isclose(a, b, **kw))
        got = _value(lambda a: np.isclose(a, b, **kw) * 1.0, a)
        np.testing.assert_array_equal(got, np.isclose(a, b, **kw))
    g = bn.grad(lambda a: np.sum(bnp.where(np.isclose(a, 1.0), a, 0.0)))(a[:2])
    np.testing.assert_array_equal(g, [1.0, 1.0])
    # allclose is Python's bool, decided by a guard (tests/test_guards.py)
    g = bn.grad(lambda a: np.sum(a) if np.allclose(a, 1.0) else 0.0)
    assert g(a[:2]).tolist() == [1.0, 1.0] and g(a[1:3]).tolist() == [0.0, 0.0]


# -- median, quantile, percentile -------------------------------------------------------------

SHAPES_AXES = [((7,), None), ((6,), 0), ((4, 5), None), ((4, 5), 0), ((4, 5), 1),
               ((4, 5), -1), ((2, 3, 4), (0, 2)), ((2, 3, 4), 1), ((3, 1, 2), (1,))]


@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median(shape, axis, keepdims, rng):
    x = rng.normal(size=shape)
    _check(lambda x: np.median(x, axis=axis, keepdims=keepdims), x)


def test_median_ties_and_nans():
    x = np.array([[3.0, 1.0, 2.0, 2.0], [nan, 1.0, 5.0, 0.0], [-0.0, 0.0, 4.0, -1.0]])
    _same(_value(lambda x: np.median(x, axis=1), x), np.median(x, axis=1))
    g = bn.grad(lambda x: np.sum(np.median(x, axis=1)))(x)
    # a tie of the two middle elements: each gets 1/2 through the sort; the NaN row gets 0
    np.testing.assert_array_equal(g, [[0.0, 0.0, 0.5, 0.5], [0.0] * 4, [0.5, 0.5, 0.0, 0.0]])


QS = [0.5, 0.0, 1.0, 0.37, [0.1, 0.5, 0.9], [[0.25, 0.75], [0.01, 0.99]]]


@pytest.mark.parametrize("q", QS, ids=str)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES[::2])
def test_quantile_linear(q, shape, axis, rng):
    x = rng.normal(size=shape)
    _check(lambda x: np.quantile(x, q, axis=axis), x)
    _check(lambda x: np.percentile(x, np.multiply(q, 100), axis=axis, keepdims=True), x)


@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "midpoint", "inverted_cdf",
                                    "averaged_inverted_cdf", "closest_observation",
                                    "interpolated_inverted_cdf", "hazen", "weibull",
                                    "median_unbiased", "normal_unbiased"])
def test_quantile_methods(method, rng):
    x = rng.normal(size=(3, 9))
    q = [0.0, 0.1, 0.25, 0.5, 0.77, 1.0]
    got = _value(lambda x: np.quantile(x, q, axis=1, method=method), x)
    np.testing.assert_allclose(got, np.quantile(x, q, axis=1, method=method), rtol=1e-14)
    _check(lambda x: np.percentile(x, 40.0, axis=0, method=method), x)


def test_quantile_nan_lanes_float32_and_errors(rng):
    x = rng.normal(size=(3, 6))
    x[1, 2] = nan
    for f in (lambda x: np.quantile(x, [0.2, 0.6], axis=1),
              lambda x: np.percentile(x, 50, axis=1), lambda x: np.median(x, axis=1)):
        _same(_value(f, x), _np(f, x))
        g = bn.grad(lambda x: np.sum(f(x)))(x)
        assert np.all(g[1] == 0.0) and np.all(np.isfinite(g))
        x32 = np.where(np.isnan(x), 0.0, x).astype(np.float32)
        np.testing.assert_allclose(_value(f, x32), f(x32), rtol=1e-6)
    with pytest.raises(bn.UnsupportedOpError, match="traced q"):
        bn.grad(lambda x, q: np.sum(np.quantile(x, q)), argnums=(0, 1))(x[0], 0.5)
    with pytest.raises(bn.ShapeError, match="range"):
        bn.grad(lambda x: np.sum(np.quantile(x, 1.5)))(x[0])
    with pytest.raises(bn.ShapeError, match="not a valid method"):
        bn.grad(lambda x: np.sum(np.quantile(x, 0.5, method="fancy")))(x[0])


def test_sort_based_functions_build_a_few_nodes_for_large_arrays(rng):
    """Vectorized: the gathers are numpy index arithmetic, so the tape of a median or
    percentile over 200,000 elements (or a convolution) has a handful of nodes."""
    x = rng.normal(size=(400, 500))
    tape = bn.trace(lambda x: np.sum(np.percentile(x, [5, 50, 95], axis=0)), x)
    assert len(tape.op) < 20
    np.testing.assert_allclose(tape(x), np.sum(np.percentile(x, [5, 50, 95], axis=0)),
                               rtol=1e-12)
    tape = bn.trace(lambda a, v: np.sum(np.convolve(a, v, "same")), x[0], x[1, :30])
    assert len(tape.op) < 12
    # the NaN variants pick by masks over the lane: more nodes, as many for any size
    y = x[:, :50]
    tape = bn.trace(lambda y: np.sum(np.nanpercentile(y, [5, 50, 95], axis=0)), y)
    assert len(tape.op) < 60
    np.testing.assert_allclose(tape(y), np.sum(np.nanpercentile(y, [5, 50, 95], axis=0)),
                               rtol=1e-12)


# -- cov, corrcoef, convolve, correlate, meshgrid, linspace -----------------------------------

@pytest.mark.parametrize("kw", [{}, {"rowvar": False}, {"bias": True}, {"ddof": 2},
                                {"fweights": [1, 2, 1, 3, 1, 2]},
                                {"aweights": [0.5, 1.0, 2.0, 1.0, 0.25, 1.5]},
                                {"fweights": [1, 2, 1, 3, 1, 2], "aweights": [0.5, 1.0, 2.0,
                                                                              1.0, 0.25, 1.5],
                                 "ddof": 1}], ids=str)
def test_cov(kw, rng):
    m = rng.normal(size=(3, 6)) if kw.get("rowvar", True) else rng.normal(size=(6, 3))
    _check(lambda m: np.cov(m, **kw), m)
    y = rng.normal(size=m.shape)
    _check(lambda m, y: np.cov(m, y, **kw), m, y)
    _check(lambda v: np.cov(v), m[0])                   # one variable: a scalar
    _check(lambda v: np.cov(v, rowvar=False, bias=True), m[:1])   # (1, N): N variables


def test_cov_with_traced_weights(rng):
    m, w = rng.normal(size=(2, 5)), rng.uniform(0.5, 2, size=5)
    _check(lambda m, w: np.cov(m, aweights=w), m, w)


@pytest.mark.parametrize("rowvar", [True, False])
def test_corrcoef(rowvar, rng):
    x = rng.normal(size=(3, 7))
    x = x if rowvar else x.T
    got, _ = _check(lambda x: np.corrcoef(x, rowvar=rowvar), x)
    assert np.all(np.abs(got) <= 1.0)
    _check(lambda x, y: np.corrcoef(x, y), x[0] if rowvar else x[:, 0], x[1] if rowvar
           else x[:, 1])


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(7, 3), (3, 7), (5, 5), (4, 1), (1, 4), (6, 4), (8, 2)])
def test_convolve_and_correlate(mode, n, m, rng):
    a, v = rng.normal(size=n), rng.normal(size=m)
    _check(lambda a, v: np.convolve(a, v, mode), a, v)
    _check(lambda a, v: np.correlate(a, v, mode), a, v)
    _check(lambda a: np.convolve(a, v, mode=mode), a)              # one side constant
    _check(lambda v: np.correlate(a, v, mode=mode), v)


def test_convolve_errors_and_float32(rng):
    a, v = rng.normal(size=6).astype(np.float32), rng.normal(size=3).astype(np.float32)
    got = _value(lambda a, v: np.convolve(a, v), a, v)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.convolve(a, v), rtol=1e-5, atol=1e-6)
    with pytest.raises(bn.ShapeError, match="1-D"):
        bn.grad(lambda a: np.sum(np.convolve(a, v)))(np.ones((2, 2)))
    with pytest.raises(bn.ShapeError, match="mode"):
        bn.grad(lambda a: np.sum(np.correlate(a, v, "middle")))(np.ones(5))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse, rng):
    x, y, z = rng.normal(size=3), rng.normal(size=4), rng.normal(size=2)
    for k in range(3):
        _check(lambda x, y, z: np.meshgrid(x, y, z, indexing=indexing, sparse=sparse)[k]
               * 1.0, x, y, z)
    _check(lambda x, y: np.meshgrid(x, y, indexing=indexing)[0] * np.meshgrid(
        x, y, indexing=indexing)[1], x, y)


def test_linspace_with_traced_endpoints(rng):
    a, b = rng.normal(size=3), rng.normal(size=3)
    for kw in ({}, {"num": 5}, {"num": 4, "endpoint": False}, {"num": 6, "axis": 1},
               {"num": 1}):
        _check(lambda a, b: np.linspace(a, b, **kw), a, b)
    _check(lambda a: np.linspace(a, 3.0, 9), 0.5)
    y, step = bnp.linspace(np.float64(0.0), 1.0, 5, retstep=True)
    assert step == 0.25


# -- gradients as JAX's (a peer comparison: skipped without jax) ------------------------------

def _quartiles(xp, x):
    return xp.quantile(x, xp.asarray([0.25, 0.5, 0.9]), axis=0)


JAX_CASES = {
    "median": lambda xp, x, y: xp.median(x, axis=1) * y[:, 0],
    "quantile": lambda xp, x, y: _quartiles(xp, x) * y[:3],
    "percentile": lambda xp, x, y: xp.percentile(x * y, 30.0),
    "nansum": lambda xp, x, y: xp.nansum(xp.where(x > 1.0, xp.nan, x) * y, axis=0),
    "nanmean": lambda xp, x, y: xp.nanmean(xp.where(x > 1.0, xp.nan, x) * y, axis=1),
    "nanmax": lambda xp, x, y: xp.nanmax(xp.where(x > 1.0, xp.nan, x * y), axis=1),
    "nanmin": lambda xp, x, y: xp.nanmin(xp.where(x < -1.0, xp.nan, x * y)),
    "nanvar": lambda xp, x, y: xp.nanvar(xp.where(x > 1.0, xp.nan, x * y), axis=0, ddof=1),
    "nanstd": lambda xp, x, y: xp.nanstd(xp.where(x > 1.0, xp.nan, x * y), axis=1),
    "nanmedian": lambda xp, x, y: xp.nanmedian(xp.where(x > 0.8, xp.nan, x * y), axis=0),
    "nanquantile": lambda xp, x, y: xp.nanquantile(xp.where(x > 0.8, xp.nan, x * y),
                                                   xp.asarray([0.2, 0.75]), axis=1),
    "average": lambda xp, x, y: xp.average(x, axis=1, weights=y * y + 0.5),
    "ptp": lambda xp, x, y: xp.ptp(x * y, axis=0),
    "cov": lambda xp, x, y: xp.cov(x, y, aweights=xp.arange(1.0, 6.0)),
    "corrcoef": lambda xp, x, y: xp.corrcoef(x * y),
    "convolve": lambda xp, x, y: xp.convolve(x[:, 0], y[1], mode="same"),
    "correlate": lambda xp, x, y: xp.correlate(x.reshape(-1), y[0], mode="full"),
    "modf": lambda xp, x, y: xp.modf(x * 3.0)[0] * y,
    "divmod": lambda xp, x, y: xp.divmod(x * 3.0, y + 2.0)[1] * y,
    "copysign": lambda xp, x, y: xp.copysign(x, y) * y,
    "heaviside": lambda xp, x, y: xp.heaviside(x * 0.0, y) + xp.heaviside(x, y),
    "fmod": lambda xp, x, y: xp.fmod(x * 3.0, y + 2.0),
    "round": lambda xp, x, y: xp.round(x * y, 1) * x,
    "linspace": lambda xp, x, y: xp.linspace(x[0], y[0], 5) * x[1, 0],
    "meshgrid": lambda xp, x, y: xp.meshgrid(x[0], y[0])[0] * xp.meshgrid(x[0], y[0])[1],
    "inverse hyperbolic": lambda xp, x, y: xp.arcsinh(x) + xp.arccosh(y * y + 1.5)
    + xp.arctanh(x * 0.3) + xp.cbrt(y),
}


@pytest.mark.parametrize("name", sorted(JAX_CASES))
def test_gradients_are_jaxs(name, rng):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    f = JAX_CASES[name]
    x, y = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    w = rng.normal(size=np.shape(_np(f, np, x, y)))
    ours = bn.grad(lambda x, y: np.sum(f(np, x, y) * w), argnums=(0, 1))(x, y)
    theirs = jax.grad(lambda x, y: jnp.sum(f(jnp, x, y) * w), argnums=(0, 1))(x, y)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(_value(lambda x, y: f(np, x, y), x, y), _np(f, np, x, y),
                               rtol=1e-13, atol=1e-15)


FLOAT32 = {
    "average": lambda x: np.average(x, axis=0, weights=np.arange(1.0, 5.0)),
    "ptp": lambda x: np.ptp(x, axis=1),
    "nanmean": lambda x: np.nanmean(np.where(x > 1.0, np.nan, x), axis=1),
    "nanmax": lambda x: np.nanmax(np.where(x > 1.0, np.nan, x), axis=0),
    "median": lambda x: np.median(x, axis=0),
    "quantile": lambda x: np.quantile(x, [0.3, 0.8], axis=1),
    "cov": lambda x: np.cov(x),
    "corrcoef": lambda x: np.corrcoef(x.T),
    "convolve": lambda x: np.convolve(x[0], x[1], "same"),
    "linspace": lambda x: np.linspace(x[0], x[1], 4),
    "modf": lambda x: np.modf(x * 3.0)[0],
    "round": lambda x: np.round(x, 1) * x,
    "deg2rad": lambda x: np.deg2rad(x) + np.ldexp(x, 2),
    "isclose": lambda x: bnp.where(np.isclose(x, 0.5, atol=0.3), x, 0.0),
}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_functions_in_float32(name, rng):
    """float32 tapes: float32 values and gradients, close to float64's at the same numbers."""
    f = FLOAT32[name]
    x32 = rng.normal(size=(4, 5)).astype(np.float32)
    x64 = x32.astype(np.float64)
    w = rng.normal(size=np.shape(_np(f, x64)))
    v32, g32 = bn.value_and_grad(lambda x: np.sum(f(x) * w))(x32)
    v64, g64 = bn.value_and_grad(lambda x: np.sum(f(x) * w))(x64)
    assert g32.dtype == np.float32
    np.testing.assert_allclose(v32, v64, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g32, g64, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(_value(f, x32), _np(f, x32), rtol=1e-5, atol=1e-5)


# -- numpy functions a newcomer's programs used (2026-12-07): nan_to_num, sinc, vander,
# linalg.matrix_power
@pytest.mark.parametrize("kwargs", [{}, {"nan": -1.5, "posinf": 7.0, "neginf": -9.0}])
def test_nan_to_num(kwargs):
    x = np.array([0.3, nan, inf, -inf, -0.0, -2.5, 1e308])
    _same(_value(lambda x: np.nan_to_num(x, **kwargs), x), np.nan_to_num(x, **kwargs))
    # gradient 1 where finite, 0 where the value was replaced
    g = bn.grad(lambda x: np.sum(np.nan_to_num(x, **kwargs) * np.arange(1.0, 8.0)))(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0, 5.0, 6.0, 7.0])
    finite = np.array([0.3, -1.2, 2.0])
    _check(lambda x: np.nan_to_num(x, **kwargs) ** 2, finite, ref=lambda x: x ** 2)
    x32 = np.array([0.3, nan, inf, -inf, -0.0, -2.5, 3e38], dtype=np.float32)
    _same(_value(lambda x: np.nan_to_num(x, **kwargs), x32), np.nan_to_num(x32, **kwargs))
    with pytest.raises(bn.InplaceError, match="copy=False"):
        bn.grad(lambda x: np.sum(np.nan_to_num(x, copy=False)))(finite)


def test_sinc_is_numpys_with_the_gradient_zero_at_zero(rng):
    x = np.concatenate([rng.uniform(-3.0, 3.0, 9), [1.0, -2.0, 0.5]])
    _check(np.sinc, x, ref=anp.sinc)
    # at 0 autograd's rule divides by x**2 (NaN); the derivative there is 0
    _check(np.sinc, np.array([0.0, -0.0, 0.25]))
    special = np.array([0.0, -0.0, inf, nan])
    _same(_value(np.sinc, special), np.sinc(special))
    assert bn.grad(lambda x: np.sinc(x))(0.0) == 0.0


@pytest.mark.parametrize("n, N, increasing", [(4, None, False), (4, None, True), (3, 5, False),
                                              (5, 2, True), (3, 1, False), (3, 0, False)])
def test_vander_is_numpys_bit_for_bit(n, N, increasing, rng):
    x = rng.normal(size=n)
    x[0] = 0.0
    f = lambda x: np.vander(x, N, increasing)  # noqa: E731
    _same(_value(f, x), np.vander(x, N, increasing))
    if (N is None or N > 0):
        powers = range(n if N is None else N)
        order = list(powers) if increasing else list(powers)[::-1]
        _check(f, x, ref=lambda x: anp.stack([x ** k for k in order], axis=1))
    with pytest.raises(bn.ShapeError, match="one-dimensional"):
        bn.grad(lambda x: np.sum(np.vander(np.outer(x, x))))(x)


@pytest.mark.parametrize("power", [-3, -1, 0, 1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_matrix_power(power, shape, rng):
    a = rng.normal(size=shape) * 0.5 + np.eye(shape[-1]) * 1.5

    def ref(a):                    # autograd has no derivative of matrix_power: a product
        m = anp.linalg.inv(a) if power < 0 else a
        out = anp.broadcast_to(anp.eye(shape[-1]), shape)
        for _ in range(abs(power)):
            out = anp.matmul(out, m)
        return out
    _check(lambda a: np.linalg.matrix_power(a, power), a, ref=ref, rtol=1e-11, grad_rtol=1e-5)
    assert bn.jacfwd(lambda a: np.linalg.matrix_power(a, power))(a).shape == shape + shape
    with pytest.raises(bn.UnsupportedOpError, match="integer"):
        bn.grad(lambda a: np.sum(np.linalg.matrix_power(a, 1.5)))(a)


# -- ufunc.outer (any traced ufunc) and ufunc.reduce (as the reduction that computes it)
OUTER_REDUCE = {
    "add.outer": (lambda x, y: np.add.outer(x, y), lambda x, y: x[:, None] + y[None, :]),
    "subtract.outer 2-d": (lambda x, y: np.subtract.outer(x, np.outer(y, y)),
                           lambda x, y: x[:, None, None] - anp.outer(y, y)[None]),
    "multiply.outer of a numpy array": (lambda x, y: np.multiply.outer(np.arange(1.0, 3.0), x),
                                        lambda x, y: anp.outer(np.arange(1.0, 3.0), x)),
    "maximum.outer": (lambda x, y: np.maximum.outer(x, y), lambda x, y: anp.maximum(
        x[:, None], y[None, :])),
    "add.reduce": (lambda x, y: np.add.reduce(np.outer(x, y)), lambda x, y: anp.sum(
        anp.outer(x, y), axis=0)),
    "multiply.reduce axis 1": (lambda x, y: np.multiply.reduce(np.outer(x, y), axis=1),
                               lambda x, y: anp.prod(anp.outer(x, y), axis=1)),
    "maximum.reduce axis None": (lambda x, y: np.maximum.reduce(np.outer(x, y), axis=None),
                                 lambda x, y: anp.max(anp.outer(x, y))),
    "minimum.reduce keepdims": (lambda x, y: np.minimum.reduce(x * y, keepdims=True),
                                lambda x, y: anp.min(x * y, keepdims=True)),
    "logaddexp.reduce": (lambda x, y: np.logaddexp.reduce(x * y),
                         lambda x, y: anp.log(anp.sum(anp.exp(x * y)))),
    "logaddexp.reduce axis 1 keepdims": (
        lambda x, y: np.logaddexp.reduce(np.outer(x, y), axis=1, keepdims=True),
        lambda x, y: anp.log(anp.sum(anp.exp(anp.outer(x, y)), axis=1, keepdims=True))),
    "logaddexp.reduce axis None": (lambda x, y: np.logaddexp.reduce(np.outer(x, y), axis=None),
                                   lambda x, y: anp.log(anp.sum(anp.exp(anp.outer(x, y))))),
    "logaddexp2.reduce": (lambda x, y: np.logaddexp2.reduce(np.outer(x, y)),
                          lambda x, y: anp.log2(anp.sum(2.0 ** anp.outer(x, y), axis=0))),
    "vdot of matrices": (lambda x, y: np.vdot(np.outer(x, y), np.outer(y, x) ** 2),
                         lambda x, y: anp.sum(anp.outer(x, y) * anp.outer(y, x) ** 2)),
    "vdot with numpy": (lambda x, y: np.vdot(np.arange(3.0), x * y),
                        lambda x, y: anp.sum(np.arange(3.0) * x * y)),
    "fromiter of traced values": (lambda x, y: np.fromiter((v * w for v, w in zip(x, y)),
                                                           dtype=float),
                                  lambda x, y: x * y),
}


@pytest.mark.parametrize("name", sorted(OUTER_REDUCE))
def test_ufunc_outer_and_reduce(name, rng):
    f, ref = OUTER_REDUCE[name]
    x, y = rng.normal(size=3), rng.normal(size=3)
    _check(f, x, y, ref=ref)


def test_logical_ufunc_reduce_is_any_all_and_outer_keeps_out():
    x = np.array([[0.5, -2.0, 0.0], [1.0, 3.0, -1.0]])
    got = _value(lambda x: np.logical_or.reduce(x > 0.7) * 1.0, x)
    np.testing.assert_array_equal(got, np.logical_or.reduce(x > 0.7))
    got = _value(lambda x: np.logical_and.reduce(x > -1.5, axis=1) * 1.0, x)
    np.testing.assert_array_equal(got, np.logical_and.reduce(x > -1.5, axis=1))
    with pytest.raises(bn.UnsupportedOpError, match="arctan2.reduce"):
        bn.grad(lambda x: np.sum(np.arctan2.reduce(x)))(x)
    with pytest.raises(bn.UnsupportedOpError, match="maximum.reduce.*dtype"):
        bn.grad(lambda x: np.sum(np.maximum.reduce(x, dtype=np.float64)))(x)
    with pytest.raises(bn.UnsupportedOpError, match="logaddexp.reduce"):
        bn.grad(lambda x: np.sum(np.logaddexp.reduce(x, axis=(0, 1))))(x)
    with pytest.raises(bn.ShapeError, match="vdot"):
        bn.grad(lambda x: np.vdot(x, x[0]))(x)
