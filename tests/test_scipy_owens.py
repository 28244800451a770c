"""Owen's T function (the owens_t row, kernels/special_owens.py) and the skew-normal cdf / sf
/ logcdf / logsf made from it (burnumba/scipy/stats/skewnorm.py; #31): values against
scipy.special.owens_t over a grid that crosses the boundaries of Patefield and Tandy's
table, against mpmath's integral, gradients against central differences; the skew-normal
functions against scipy.stats.skewnorm and, in the tails scipy integrates numerically,
against mpmath."""
import functools

import numpy as np
import pytest
import scipy.special
import scipy.stats

import burnumba as bn
import burnumba.scipy.special as bsp
from burnumba.kernels import special_owens as kowens
from burnumba.scipy import stats
from conftest import central_diff

S, ST = scipy.special, scipy.stats


def _kernel(f, *args):
    """f on the arguments through a traced call: the compiled row's values."""
    return bn.trace(lambda *a: f(*a), *args, argnums=tuple(range(len(args))))(*args)


def _boundary_grid():
    """(h, a): the table's range boundaries of h and a (and the reflection's 1 and 0.67 in
    ah, the quadrature's H_LARGE) each with its neighbours one ulp away, crossed with each
    other and with small, large and negative values"""
    hs = [0.0, 1e-300, 1e-8, 0.67, 1.0, 7.0, 12.0, 30.0, 37.0, kowens.H_LARGE, *kowens._H_RANGE]
    as_ = [1e-300, 1e-8, 1.0, 1.5, 10.0, 1e3, 1e8, 1e300, *kowens._A_RANGE]
    hs = [np.nextafter(h, d) for h in hs for d in (-np.inf, np.inf)] + hs
    as_ = [np.nextafter(a, d) for a in as_ for d in (-np.inf, np.inf)] + as_
    # a > 1: the reflection takes (ah, 1/a) to the table; ah crossing 0.67 and the h ranges
    as_ += [1.0 / a for a in kowens._A_RANGE] + [0.67 / 0.5, 3.36 / 2.0]
    h, a = np.meshgrid(np.abs(hs), as_)
    h, a = h.ravel(), a.ravel()
    return np.concatenate([h, -h, h, -h]), np.concatenate([a, a, -a, -a])


def test_owens_t_scalar_code_and_kernel_match_scipy_over_the_table():
    """Against scipy's (Patefield and Tandy's table, whose error relative to T grows to 2e-13
    at large h, where this code's quadrature and the corrected Q(h) are closer to mpmath: the
    tolerance is scipy's error, measured below against mpmath), and exactly the kernel's."""
    rng = np.random.default_rng(31)
    h0, a0 = _boundary_grid()
    n = 3000
    h = np.concatenate([h0, rng.uniform(-10, 10, n), np.exp(rng.uniform(-10, 3.6, n)) *
                        rng.choice([-1, 1], n)])
    a = np.concatenate([a0, rng.uniform(-3, 3, n), np.exp(rng.uniform(-10, 10, n)) *
                        rng.choice([-1, 1], n)])
    want = S.owens_t(h, a)
    got = np.array([kowens.owens_t(x, y) for x, y in zip(h, a)])
    # scipy's T2 of order 10 (|a| <= 0.025, |h| > 4.8) is 1e-9 off there (against mpmath):
    # those points against mpmath instead, a sample of them
    t2 = (np.abs(a) <= 0.025) & (np.abs(h) > 4.8)
    np.testing.assert_allclose(got[~t2], want[~t2], rtol=3e-13, atol=1e-300)
    pick = rng.choice(np.flatnonzero(t2 & (np.abs(want) > 1e-300)), 60, replace=False)
    np.testing.assert_allclose(got[pick], [float(_mpmath_owens_t(h[i], a[i])) for i in pick],
                               rtol=1e-15)
    # the kernel's libm exp / erf against numpy's: the last bits
    np.testing.assert_allclose(_kernel(bsp.owens_t, h, a), got, rtol=4e-15, atol=1e-300)
    # odd in a, even in h: exactly
    np.testing.assert_array_equal(got, -np.array([kowens.owens_t(-x, -y)
                                                  for x, y in zip(h, a)]))


def _mpmath_owens_t(h, a):
    """T(h, a) at 40 digits: the integral for |a| <= 1 (in s = h x above h = 1, with break
    points at the integers: one tanh-sinh interval misses the peak of width 1/h at x = 0),
    the reflection (exact) for |a| > 1."""
    import mpmath as mp

    def integral(h, a):
        if h <= 1:
            return mp.quad(lambda x: mp.exp(-h * h * (1 + x * x) / 2) / (1 + x * x),
                           [0, a]) / (2 * mp.pi)
        top = min(a * h, mp.mpf(60))
        pts = [mp.mpf(0)] + [mp.mpf(k) for k in range(1, int(top) + 1) if k < top] + [top]
        return mp.exp(-h * h / 2) / (2 * mp.pi * h) * mp.quad(
            lambda s: mp.exp(-s * s / 2) / (1 + (s / h) ** 2), pts)

    with mp.workdps(40):
        h, a = abs(mp.mpf(float(h))), mp.mpf(float(a))
        sign, a = (-1 if a < 0 else 1), abs(a)
        if a <= 1:
            return sign * integral(h, a)
        q = lambda x: mp.ncdf(-x)   # noqa: E731
        return sign * (q(h) / 2 + q(a * h) / 2 - q(h) * q(a * h) - integral(a * h, 1 / a))


def test_owens_t_against_mpmath():
    """Relative error against mpmath's integral at 300 random points (|h| to 40, |a| from 1e-4
    to 1e4): 1.6e-15 at most over 6,000 such points (scipy's: 1.9e-13); 4e-15 here."""
    rng = np.random.default_rng(2000)
    n = 300
    h = np.where(rng.random(n) < 0.5, 10 ** rng.uniform(-4, 1.6, n), rng.uniform(0, 10, n))
    a = np.where(rng.random(n) < 0.5, 10 ** rng.uniform(-4, 4, n), rng.uniform(0, 3, n))
    h, a = h * rng.choice([-1, 1], n), a * rng.choice([-1, 1], n)
    want = np.array([float(_mpmath_owens_t(x, y)) for x, y in zip(h, a)])
    got = _kernel(bsp.owens_t, h, a)
    keep = np.abs(want) > 1e-300
    np.testing.assert_allclose(got[keep], want[keep], rtol=4e-15)


def test_owens_t_gradients_against_differences_and_closed_forms():
    """dT/dh and dT/da against central differences of scipy's T (both sides of a = +-1, h
    across the quadrature's start) and against the closed forms at large |a| and h, where
    differences say nothing; second derivatives against differences of the first."""
    h = np.array([0.3, -1.2, 2.5, 3.3, 3.4, -4.0, 0.05, 1.7])
    a = np.array([0.4, 1.6, -0.8, 0.99, 1.01, 2.5, -7.0, 0.02])
    gh, ga = bn.grad(lambda h, a: np.sum(bsp.owens_t(h, a)), argnums=(0, 1))(h, a)

    def ref(*v):
        return float(np.sum(S.owens_t(*v)))
    np.testing.assert_allclose(gh, central_diff(ref, (h, a), 0), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(ga, central_diff(ref, (h, a), 1), rtol=1e-7, atol=1e-10)
    hh = bn.hessian(lambda v: bsp.owens_t(v[0], v[1]))(np.array([0.7, 1.8]))

    def grads(v):
        return np.array(bn.grad(lambda h, a: bsp.owens_t(h, a), argnums=(0, 1))(*v))
    fd = np.array([(grads(np.array([0.7, 1.8]) + e) - grads(np.array([0.7, 1.8]) - e)) / 2e-6
                   for e in np.eye(2) * 1e-6])
    np.testing.assert_allclose(hh, fd, rtol=1e-6, atol=1e-9)
    # far out: the closed forms (dT/dh = -phi(h) erf(a h / sqrt 2) / 2, dT/da = e^(-h^2 (1 +
    # a^2) / 2) / (2 pi (1 + a^2)))
    h = np.array([12.0, 0.01, -30.0, 1e-5])
    a = np.array([0.3, 3e4, 1.5, -1e6])
    gh, ga = bn.grad(lambda h, a: np.sum(bsp.owens_t(h, a)), argnums=(0, 1))(h, a)
    np.testing.assert_allclose(gh, -np.exp(-h * h / 2) / np.sqrt(2 * np.pi)
                               * S.erf(a * h / np.sqrt(2)) / 2, rtol=1e-14)
    np.testing.assert_allclose(ga, np.exp(-h * h * (1 + a * a) / 2) / (2 * np.pi * (1 + a * a)),
                               rtol=1e-14)


def test_scipy_owens_t_on_a_traced_value_reaches_the_row():
    f = bn.grad(lambda a: S.owens_t(0.0, a))
    assert f(1.0) == pytest.approx(1.0 / (4.0 * np.pi), rel=1e-15)
    np.testing.assert_allclose(_kernel(lambda h: S.owens_t(h, 2.0), np.array([0.5, -3.0])),
                               S.owens_t(np.array([0.5, -3.0]), 2.0), rtol=1e-14)


# -- the skew-normal distribution's cdf, sf, logcdf, logsf ----------------------------------
@functools.lru_cache(maxsize=None)
def _mpmath_lower(h, a):
    """F(-h; a) for h > 0 at 40 digits (an mpf), from 1/pi int_a^inf e^(-h^2 (1 + x^2) / 2) /
    (1 + x^2) dx (positive terms, no cancellation): in s = h x, the part above c0 = max(ah,
    0) in t = (s^2 - c0^2) / 2 (a Laplace transform mpmath integrates at any c0), the part
    from ah < 0 up to 0 in s."""
    import mpmath as mp
    with mp.workdps(40):
        h, a = mp.mpf(h), mp.mpf(a)
        c = a * h
        c0 = max(c, mp.mpf(0))
        if c0 == 0:
            up = mp.quad(lambda s: mp.exp(-s * s / 2) / (1 + (s / h) ** 2),
                         [0, 1, 2, 4, 8, 16, 40])
        else:
            up = mp.exp(-c0 * c0 / 2) * mp.quad(
                lambda t: mp.exp(-t) / (mp.sqrt(c0 * c0 + 2 * t) * (1 + (c0 * c0 + 2 * t)
                                                                     / (h * h))),
                [0, 1, 10, 100, mp.inf])
        lo = 0
        if c < 0:
            lo = mp.quad(lambda s: mp.exp(-s * s / 2) / (1 + (s / h) ** 2),
                         [c] + [mp.mpf(k) for k in range(int(c), 0)] + [0])
        return mp.exp(-h * h / 2) / (mp.pi * h) * (up + lo)


def _mpmath_skewnorm_cdf(z, a, log=False):
    """F(z; a), or its log, at 40 digits: F(-h; a) for z = -h < 0, 1/2 - atan(a) / pi at 0,
    1 - F(-z; -a) above (its log log1p(-F(-z; -a)))."""
    import mpmath as mp
    z, a = float(z), float(a)
    with mp.workdps(40):
        if z == 0:
            f = mp.mpf(1) / 2 - mp.atan(a) / mp.pi
        elif z < 0:
            f = _mpmath_lower(-z, a)
        else:
            g = _mpmath_lower(z, -a)
            return mp.log1p(-g) if log else 1 - g
        return mp.log(f) if log else f


def _tail_points():
    """(z, a): the lower tail where Phi(z) - 2 T(z, a) cancels (z < 0 < a, c = -az on both
    sides of the Laguerre sum's start 3, z on both sides of -3), the reflection's a > 1 near
    z = 0, a < 0, z far out (F underflows from z = -38 on), and the mirror images for sf"""
    rng = np.random.default_rng(7)
    n = 40
    z = np.concatenate([-np.exp(rng.uniform(-8, 3.6, n)), rng.uniform(-3, 3, n),
                        -np.exp(rng.uniform(-8, 2, n))])
    a = np.concatenate([np.exp(rng.uniform(-6, 7, n)), rng.uniform(-6, 6, n),
                        -np.exp(rng.uniform(-4, 4, n))])
    c = np.array([-3.0, -2.9, -3.1, -2.99999, -3.00001])      # c = -az at the switch
    zs = np.array([-0.01, -0.5, -2.0, -8.0, -25.0])
    z3 = np.array([-2.99999, -3.0, -3.00001, -2.9, -3.1])
    z = np.concatenate([z, zs, -0.5 * np.ones(5), z3, [-40.0, -39.0, -45.0]])
    a = np.concatenate([a, -c / zs, -c / 0.5, [0.3, 0.01, 0.5, 0.2, 0.7], [0.05, -2.0, 0.0]])
    return np.concatenate([z, -z]), np.concatenate([a, -a])


@pytest.mark.parametrize("name", ["cdf", "sf", "logcdf", "logsf"])
def test_skewnorm_tails_against_mpmath(name):
    """In the tails scipy's value is Boost's Phi(z) - 2 T(z, a), or (below 1e-6, a > 0) a
    numerical integral (1e-8 relative there) whose log is -inf once it underflows; these are
    within 2e-13 of mpmath (relative) wherever the value is above 1e-300, and logcdf / logsf
    stay finite in the quadrature's tail where F underflows."""
    z, a = _tail_points()
    loc, scale = 0.25, 1.5
    x = loc + scale * z
    got = _kernel(lambda x, a: getattr(stats.skewnorm, name)(x, a, loc, scale), x, a)
    lower = name in ("cdf", "logcdf")
    import mpmath as mp
    with mp.workdps(40):
        points = [v if lower else (-v[0], -v[1]) for v in zip(z, a)]
        f = [_mpmath_skewnorm_cdf(*v) for v in points]
        want = np.array([float(_mpmath_skewnorm_cdf(*v, log=True)) if name.startswith("log")
                         else float(g) for v, g in zip(points, f)])
        tiny = np.array([v < mp.mpf("1e-300") for v in f])
    if name.startswith("log"):
        np.testing.assert_allclose(got[~tiny], want[~tiny], rtol=2e-13)
        # the far tail: finite where it is the quadrature (a > 0 > z, -az >= 3 or z <= -3),
        # -inf elsewhere (a <= 0: the normal factor's own tail)
        far = tiny & np.isfinite(got)
        np.testing.assert_allclose(got[far], want[far], rtol=1e-13)
        sign = 1.0 if lower else -1.0
        laguerre = (sign * a > 0) & (sign * z < 0) & ((-a * z >= 3.0) | (sign * z <= -3.0))
        assert np.all(np.isfinite(got[tiny & laguerre]))
        assert np.all(got[tiny & ~laguerre] == -np.inf)
        assert np.any(tiny & laguerre) and np.any(tiny & ~laguerre)
    else:
        np.testing.assert_allclose(got[~tiny], want[~tiny], rtol=2e-13)
        assert np.all(got[tiny] < 1e-299)


def test_skewnorm_gradients_in_the_tails_against_closed_forms():
    """dF/dz = 2 phi(z) Phi(az) (the pdf), dF/da = -e^(-z^2 (1 + a^2) / 2) / (pi (1 + a^2)),
    through loc and scale, and the same over F for logcdf: where differences of scipy's
    values say nothing (the Laguerre tail, the reflection, values near 1e-200)."""
    import mpmath as mp
    z = np.array([-0.004, -2.0, -9.0, -0.7, 0.3, -30.0, 1.5])
    a = np.array([1500.0, 2.5, 0.6, 0.05, 40.0, 0.2, -3.0])
    loc, scale = -0.3, 0.8
    x = loc + scale * z
    with mp.workdps(40):
        f = np.array([_mpmath_skewnorm_cdf(*v) for v in zip(z, a)])
        dz = np.array([2 * mp.npdf(v) * mp.ncdf(w * v) for v, w in zip(z, a)])
        da = np.array([-mp.exp(-mp.mpf(v) ** 2 * (1 + mp.mpf(w) ** 2) / 2)
                       / (mp.pi * (1 + mp.mpf(w) ** 2)) for v, w in zip(z, a)])
        for name, scale_by in (("cdf", np.ones(len(z))), ("logcdf", 1 / f)):
            gx, ga, gl, gs = bn.grad(lambda *p: np.sum(getattr(stats.skewnorm, name)(*p)),
                                     argnums=(0, 1, 2, 3))(x, a, loc, scale)
            want = {"x": dz / scale * scale_by, "a": da * scale_by,
                    "loc": -np.sum(dz / scale * scale_by),
                    "scale": -np.sum(dz * z / scale * scale_by)}
            for got, key in ((gx, "x"), (ga, "a"), (gl, "loc"), (gs, "scale")):
                w = np.array([float(v) for v in np.atleast_1d(want[key])])
                np.testing.assert_allclose(np.atleast_1d(got), w, rtol=1e-11, atol=1e-300,
                                           err_msg=f"{name}: d/d{key}")


def test_skewnorm_cdf_at_its_edges():
    """a = 0 is the normal; z = 0 gives 1/2 - atan(a) / pi; +-inf give 0 and 1; an infinite
    a is NaN (scipy's shape must be finite), a scale <= 0 too."""
    x = np.array([-np.inf, -1.0, 0.0, 2.0, np.inf])
    np.testing.assert_allclose(_kernel(lambda x: stats.skewnorm.cdf(x, 0.0), x),
                               ST.norm.cdf(x), rtol=1e-15)
    import mpmath as mp
    got = _kernel(lambda a: stats.skewnorm.cdf(0.0, a), np.array([-3.0, 0.5, 1e6]))
    with mp.workdps(40):
        want = [float(mp.mpf(1) / 2 - mp.atan(v) / mp.pi) for v in (-3.0, 0.5, 1e6)]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    got = _kernel(lambda a: stats.skewnorm.cdf(1.0, a), np.array([np.inf, -np.inf, 1.0]))
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isfinite(got[2])
    got = _kernel(lambda s: stats.skewnorm.logsf(1.0, 2.0, 0.0, s), np.array([-1.0, 2.0]))
    assert np.isnan(got[0]) and got[1] == pytest.approx(ST.skewnorm.logsf(1.0, 2.0, 0, 2.0))
