"""Owen's T function (the owens_t row, kernels/special_owens.py; #31): values against
scipy.special.owens_t over a grid that crosses the boundaries of Patefield and Tandy's
table, against mpmath's integral, gradients against central differences and the closed
forms."""
import numpy as np
import pytest
import scipy.special
import scipy.stats

import burnumba as bn
import burnumba.scipy.special as bsp
from burnumba.kernels import special_owens as kowens
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
