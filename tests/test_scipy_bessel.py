"""The Bessel functions of real order (kernels/special_bessel_real.py; the jv, yv, iv, ive, kv,
kve rows): values against mpmath and scipy, the scalar code and the kernels alike, the
derivatives in x against scipy's jvp / yvp / ivp / kvp, the order's derivative refused, and
scipy's ufuncs on traced values reaching the rows."""
import numpy as np
import pytest

import burnumba as bn
import burnumba.scipy.special as bsp
from burnumba._errors import UnsupportedOpError
from burnumba.kernels import special_bessel_real as kb

S = pytest.importorskip("scipy.special")
mp = pytest.importorskip("mpmath")

NAMES = ("jv", "yv", "iv", "ive", "kv", "kve")


def _mp(name, v, x):
    f = {"jv": mp.besselj, "yv": mp.bessely, "iv": mp.besseli, "kv": mp.besselk,
         "ive": lambda v, x: mp.besseli(v, x) * mp.exp(-abs(x)),
         "kve": lambda v, x: mp.besselk(v, x) * mp.exp(x)}[name]
    return float(f(mp.mpf(v), mp.mpf(x)))


def _points(rng, n):
    """orders in [-20, 50], x log-uniform in [1e-6, 500], plus x near the order (the
    transition) and around x = 2 (the switch between Temme's series and Steed's method)"""
    v = np.concatenate([rng.uniform(-20, 50, n), rng.uniform(0, 50, n // 4),
                        rng.uniform(-3, 3, n // 4)])
    x = np.concatenate([np.exp(rng.uniform(np.log(1e-6), np.log(500), n)),
                        v[n:n + n // 4] * rng.uniform(0.9, 1.1, n // 4) + 1e-3,
                        rng.uniform(1.5, 2.5, n // 4)])
    return v, x


def _scale(name, v, x, ref):
    """The error's scale: |ref|, the envelope sqrt(2 / (pi x)) where J and Y oscillate (x >
    |v|: absolute next to their zeros, as scipy's own accuracy), and a reflection's terms for
    a negative order (the sum I_w + 2/pi sin(w pi) K_w has zeros too)."""
    s = abs(ref)
    w = -v
    if name in ("jv", "yv"):
        if x > abs(v):
            s = max(s, np.sqrt(2 / (np.pi * x)))
        if v < 0:
            s = max(s, abs(_mp("jv", w, x)), abs(_mp("yv", w, x)))
    elif name in ("iv", "ive") and v < 0 and v != int(v):
        s = max(s, _mp(name, w, x) + 2 / np.pi * abs(np.sin(np.pi * w)) * _mp("kv", w, x) * (
            np.exp(-x) if name == "ive" else 1.0))
    return s


@pytest.mark.parametrize("name", NAMES)
def test_real_order_bessel_against_mpmath(name):
    """At 400 points (of 40 digits): 5e-14 of the scale for jv, yv (measured 1.5e-14 and 2.4e-14
    at 2,800 points; scipy 1.17: 2.6e-13 and 4.3e-14), 1e-14 for iv, ive, kv, kve (measured
    3.9e-15 and 5.1e-15; scipy: 1.3e-13 for kv, 9.6e-14 for ive); results outside the normal
    range are left out (subnormal: no relative digits)."""
    mp.mp.dps = 40
    rng = np.random.default_rng(31)
    v, x = _points(rng, 240)
    fn = getattr(kb, name)
    tol = 5e-14 if name in ("jv", "yv") else 1e-14
    for a, b in zip(v, x):
        ref = _mp(name, a, b)
        if not 1e-300 < abs(ref) < 1e300:
            continue
        err = abs(float(fn(a, b)) - ref) / _scale(name, a, b, ref)
        assert err <= tol, (name, a, b, err)


@pytest.mark.parametrize("name", NAMES)
def test_real_order_bessel_matches_scipy(name):
    """Against scipy at 2,000 points of the same ranges, where scipy is finite (scipy's own
    error is the larger: 2.6e-13 for jv): 1e-12 of the scale."""
    rng = np.random.default_rng(7)
    v, x = _points(rng, 1600)
    got = np.array([kb.FUNCTIONS[name](a, b) for a, b in zip(v, x)])
    want = getattr(S, name)(v, x)
    ok = np.isfinite(want) & (np.abs(want) > 1e-290) & (np.abs(want) < 1e290)
    env = np.abs(want)
    if name in ("jv", "yv"):
        env = np.maximum(env, np.where(x > np.abs(v), np.sqrt(2 / (np.pi * x)), 0.0))
        ok &= v >= 0                   # negative orders: the reflection's terms (mpmath above)
    if name in ("iv", "ive"):
        ok &= (v >= 0) | (v == np.floor(v))
    assert np.all(np.abs(got - want)[ok] <= 1e-12 * env[ok])


@pytest.mark.parametrize("name", NAMES)
def test_real_order_bessel_derivatives_in_x(name):
    """The *_dx functions (one pass of the same code) against scipy's jvp / yvp / ivp / kvp
    (the scaled ones through the product rule), at moderate points."""
    rng = np.random.default_rng(3)
    v = rng.uniform(-6, 12, 300)
    x = rng.uniform(0.05, 30, 300)
    got = np.array([kb.FUNCTIONS[name + "_dx"](a, b) for a, b in zip(v, x)])
    base = {"jv": "jvp", "yv": "yvp", "iv": "ivp", "ive": "ivp", "kv": "kvp", "kve": "kvp"}
    want = getattr(S, base[name])(v, x)
    if name == "ive":
        want = (want - S.iv(v, x)) * np.exp(-x)
    if name == "kve":
        want = (want + S.kv(v, x)) * np.exp(x)
    scale = np.abs(want)
    if name in ("jv", "yv"):
        scale = np.maximum(scale, np.where(x > np.abs(v), np.sqrt(2 / (np.pi * x)), 0.0))
    if name in ("ive", "kve"):         # (f' -+ f): the cancellation is in scipy's side
        scale = np.maximum(scale, np.abs(getattr(S, name)(v, x)))
    ok = np.isfinite(want) & (np.abs(want) < 1e290)
    if name in ("jv", "yv", "iv", "ive"):
        ok &= v >= 0
    assert np.all(np.abs(got - want)[ok] <= 1e-12 * scale[ok])


@pytest.mark.parametrize("name", NAMES)
def test_kernel_matches_the_scalar_code_and_its_gradient(name):
    """The compiled row, value and d/dx element by element (a jvp with unit tangents: the
    row is elementwise), against the scalar code, at orders of both signs, integer and not,
    and x from 1e-3 to 300; infinities and NaNs where the scalar code gives them."""
    v = np.array([-7.5, -2.3, -2.0, 0.0, 0.4, 1.0, 3.7, 12.0, 31.2])
    x = np.array([1e-3, 0.7, 1.9, 2.1, 5.0, 17.0, 40.0, 120.0, 300.0])
    vv, xx = (a.ravel() for a in np.meshgrid(v, x))
    f = getattr(bsp, name)
    vals, slopes = bn.jvp(lambda x: f(vv, x), (xx,), (np.ones_like(xx),))
    want = np.array([kb.FUNCTIONS[name](a, b) for a, b in zip(vv, xx)])
    dwant = np.array([kb.FUNCTIONS[name + "_dx"](a, b) for a, b in zip(vv, xx)])
    np.testing.assert_allclose(vals, want, rtol=1e-13, atol=0)
    np.testing.assert_allclose(slopes, dwant, rtol=1e-13, atol=0)
    # on plain values the Python function is scipy's (within scipy's own accuracy; negative
    # orders against mpmath above)
    plain = np.array([float(f(a, np.float64(b))) for a, b in zip(vv, xx)])
    ok = np.isfinite(want) & (np.abs(want) > 1e-290) & (vv >= 0)
    np.testing.assert_allclose(plain[ok], want[ok], rtol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_the_order_is_refused(name):
    f = getattr(bsp, name)
    with pytest.raises(UnsupportedOpError, match=f"{name}: the derivative with respect to its "
                                                 f"argument `v`"):
        bn.grad(lambda v: f(v, 2.0))(1.5)


def test_scipy_ufuncs_reach_the_rows():
    """scipy.special's jv, yv, iv, ive, kv, kve, k0, k1, k0e, k1e, i0e, i1e on a traced x reach
    burnumba.scipy.special; jv / yv at an order given as integers are the jn / yn rows (their
    integer-order code); a Matern-type kernel's gradient against scipy's kvp."""
    x = 1.3
    for name in ("jv", "yv", "iv", "ive", "kv", "kve"):
        t = bn.trace(lambda x, name=name: getattr(S, name)(0.6, x), x)
        assert name in t.ops, (name, t.ops)
    assert "jn" in bn.trace(lambda x: S.jv(3, x), x).ops
    assert "yn" in bn.trace(lambda x: S.yv(2.0, x), x).ops
    for name, row, v in (("k0", "kv", 0.0), ("k1", "kv", 1.0), ("k0e", "kve", 0.0),
                         ("k1e", "kve", 1.0), ("i0e", "ive", 0.0), ("i1e", "ive", 1.0)):
        assert row in bn.trace(lambda x, name=name: getattr(S, name)(x), x).ops
        np.testing.assert_allclose(bn.grad(lambda x, name=name: getattr(S, name)(x))(x),
                                   kb.FUNCTIONS[row + "_dx"](v, x), rtol=1e-14)
    nu, ell = 1.5, 0.8
    g = bn.grad(lambda r: S.kv(nu, r / ell) * (r / ell) ** nu)(x)
    want = (S.kvp(nu, x / ell) * (x / ell) ** nu + S.kv(nu, x / ell) * nu * (x / ell) ** (nu - 1)
            ) / ell
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_a_huge_finite_order_is_nan_not_a_hang():
    """Past MAX_ORDER the recurrences would take |v| steps (past 2^53, v - 1 == v: forever):
    NaN, at once; an infinite order keeps its limit."""
    for name in NAMES:
        for v in (2e5, -1.7976931348623157e308, 1e300):
            assert np.isnan(kb.FUNCTIONS[name](v, 2.0)), (name, v)
            assert np.isnan(kb.FUNCTIONS[name + "_dx"](v, 2.0)), (name, v)
    assert kb.kv(np.inf, 2.0) == np.inf and kb.jv(np.inf, 2.0) == 0.0
