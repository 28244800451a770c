"""``burnumba.scipy.stats.skewnorm``: the skew-normal distribution (a, loc, scale), as
scipy.stats.skewnorm: logpdf, pdf, cdf, sf, logcdf and logsf, with gradients to x, a, loc and
scale. NaN for scale <= 0 and for an infinite a (scipy's shape must be finite).

The cdf is F(z; a) = Phi(z) - 2 T(z, a), T Owen's T function (the owens_t row), and sf(z; a)
= F(-z; -a). Each is taken in the form that keeps its digits:

* a <= 1 outside the lower tail below: Phi(z) - 2 T(z, a) itself (a sum of terms of one sign,
  or a difference that loses at most about 2.5 digits);
* a > 1: by Owen's reflection T(z, a) + T(az, 1/a) = (Phi(z) + Phi(az)) / 2 - Phi(z) Phi(az),
  F = 2 T(az, 1/a) + 2 Phi(az) (Phi(z) - 1/2), two positive terms for z >= 0;
* the lower tail z < 0 < a with c = -az >= 3, or z <= -3, where both forms subtract nearly
  equal numbers (F is far below Phi(z)) or lose Phi(z)'s own z^2 ulps to it: with h = -z,
  F = 1/pi int_a^inf e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, in s = h x

      F = e^(-h^2/2) / (pi h) int_c^inf e^(-s^2/2) / (1 + s^2/h^2) ds,

  from c1 = max(c, 3) up a Laplace transform in t = (s^2 - c1^2) / 2 summed by 32-point
  Gauss-Laguerre quadrature (relative error below 5e-14 from c1 = 3 on, where the
  integrand's nearest singularity, t = -c1^2/2, is far enough), from c < 3 to 3 20-point
  Gauss-Legendre (h >= 3: the poles s = +-ih are far), its log taken in log space: logcdf
  stays finite where F underflows (scipy's is -inf there).

Where F > 1/2, cdf is 1 - sf and logcdf log1p(-sf) (so that a cdf near 1 keeps the digits
of its complement, in its log and in its derivatives); sf and logsf the same with the roles
swapped. Against mpmath (40 digits) at 2,000 random points (z to +-37, |a| to 1e3) the cdf
is within 1.4e-13 relative and logcdf within 2.3e-13 wherever F is above 1e-300 (the
rounding of az and of the squares in the exponent, about (h^2 + c^2) ulps, sets the
last); scipy's, a numerical integral below 1e-6, is 1e-8 to 1e-6 off there (1.2e-6 at
z = -10, a = 3). Where F underflows with a <= 0 (z below about -37.5: the normal factor's
own far tail) logcdf is -inf, as scipy's log(cdf), and its gradient NaN.

>>> import burnumba.scipy.stats.skewnorm as skewnorm
>>> bn.grad(lambda a: skewnorm.cdf(0.0, a))(1.0)           # -1 / (2 pi) = -0.15915494309189535
"""
import functools

import numpy as np

from ... import numpy as bnp
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG2, LOG_2PI, log_scale, method, positive, standard, traced, valid

LOG_PI = 1.1447298858494002
INV_SQRT2 = 0.7071067811865476
# where the lower tail's quadrature starts
C_TAIL = 3.0


@functools.lru_cache(maxsize=None)
def _quadrature():
    """The lower tail's 32-point Gauss-Laguerre nodes and weights, and the 20-point
    Gauss-Legendre ones (from h = 3 on, below c = 3, from c to 3 ahead of it). Made on first
    use: numpy.polynomial costs every process that imports burnumba 1.7 MB otherwise."""
    return (np.polynomial.laguerre.laggauss(32) + np.polynomial.legendre.leggauss(20))


@method("skewnorm")
def logpdf(x, a, loc=0.0, scale=1.0):
    """log 2 + log phi(z) + log Phi(a z) - log scale: log_ndtr keeps the skewed tail"""
    z = standard(x, loc, scale)
    out = LOG2 - 0.5 * LOG_2PI - 0.5 * z * z + special.log_ndtr(a * z) - log_scale(scale)
    return valid(out, positive(scale), _finite(a))


@method("skewnorm")
def pdf(x, a, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, a, loc, scale))


@method("skewnorm")
def cdf(x, a, loc=0.0, scale=1.0):
    """F(z; a) = Phi(z) - 2 T(z, a), in the form that keeps its digits (the module's doc)"""
    z, a, finite = _standard(x, a, loc, scale)
    return valid(_cdf(z, a), positive(scale), finite)


@method("skewnorm")
def sf(x, a, loc=0.0, scale=1.0):
    """F(-z; -a)"""
    z, a, finite = _standard(x, a, loc, scale)
    return valid(_cdf(-z, -a), positive(scale), finite)


@method("skewnorm")
def logcdf(x, a, loc=0.0, scale=1.0):
    """log F(z; a) where F <= 1/2, log1p(-F(-z; -a)) above"""
    z, a, finite = _standard(x, a, loc, scale)
    return valid(_cdf(z, a, log=True), positive(scale), finite)


@method("skewnorm")
def logsf(x, a, loc=0.0, scale=1.0):
    """log F(-z; -a) where it is <= 1/2, log1p(-F(z; a)) above"""
    z, a, finite = _standard(x, a, loc, scale)
    return valid(_cdf(-z, -a, log=True), positive(scale), finite)


def _finite(a):
    return True if not traced(a) and bool(np.all(np.isfinite(a))) else ew.isfinite(a)


def _standard(x, a, loc, scale):
    """(z, a held at 0 where it is not finite, where a is finite): the caller puts NaN there
    (``valid``), and no inf or NaN reaches a branch's derivative"""
    finite = _finite(a)
    if finite is not True:
        a = ew.where(finite, a, 0.0)
    return standard(x, loc, scale), a, finite


def _cdf(z, a, log=False):
    """F(z; a), or log F(z; a): where F <= 1/2 the lower form (``_lower``), above it 1 - G or
    log1p(-G) with G = F(-z; -a) from the lower form, so that a cdf near 1 keeps the digits
    of its complement, in its value's log and in its derivatives (Phi(z) - 2 T(z, a) for z > 0
    > a has the slope phi(z) (1 + erf(az / sqrt 2)), which cancels). Each branch reads
    operands held at a point of its own domain where it is not taken (no inf * 0 in a
    gradient), and only the form asked for is traced (an unused log of an underflowed F
    would still send 0 * inf into the reverse sweep)."""
    f, log_f = _lower(z, a, log)
    upper = ew.greater(f, 0.5)
    g = ew.where(upper, _lower(-z, -a, False)[0], 0.0)
    return ew.where(upper, ew.log1p(-g), log_f) if log else ew.where(upper, 1.0 - g, f)


def _lower(z, a, log):
    """(F(z; a), log F(z; a) if ``log`` else None) for the standard skew-normal (loc 0, scale
    1, a finite): the direct form, the reflection for a > 1 and the quadrature in the lower
    tail (the module's doc). Each form is evaluated everywhere on operands held inside its own
    region where it is not taken, so that its derivative there is finite."""
    finite = ew.isfinite(z)
    c = -(a * z)
    far = ew.logical_or(ew.greater_equal(c, C_TAIL), ew.less_equal(z, -C_TAIL))
    tail = ew.logical_and(finite, ew.logical_and(ew.less(z, 0.0), far))
    tail = ew.logical_and(tail, ew.greater(a, 0.0))
    reflect = ew.logical_and(ew.logical_and(finite, ew.greater(a, 1.0)), ew.logical_not(tail))
    # Phi(z) - 2 T(z, a)
    direct = special.ndtr(z) - 2.0 * special.owens_t(z, a)
    # 2 T(az, 1/a) + 2 Phi(az) (Phi(z) - 1/2), for a > 1 (a = 2, z = 0 where not taken)
    ar = ew.where(reflect, a, 2.0)
    zr = ew.where(reflect, z, 0.0)
    cr = ar * zr
    mirrored = (2.0 * special.owens_t(cr, 1.0 / ar)
                + special.ndtr(cr) * special.erf(zr * INV_SQRT2))
    # the lower tail's log, from the quadrature (h = 3, c = 3 where not taken)
    h = ew.where(tail, -z, C_TAIL)
    ct = ew.where(tail, c, C_TAIL)
    log_tail = _log_tail(h, ct)
    f = ew.where(tail, ew.exp(log_tail), ew.where(reflect, mirrored, direct))
    if not log:
        return f, None
    return f, ew.where(tail, log_tail, ew.log(ew.where(tail, 1.0, f)))


def _log_tail(h, c):
    """log F(-h; c / h) for h > 0, c > 0 with c >= 3 or h >= 3: F = e^(-h^2/2) / (pi h) int_c^inf
    e^(-s^2/2) / (1 + s^2/h^2) ds, the integral from c1 = max(c, 3) up by the Laguerre sum
    and from c to c1 (empty for c >= 3) by 20-point Gauss-Legendre (the integrand's poles
    s = +-ih lie 3 or more away: 1e-25): log(h / pi) - (h^2 + c1^2) / 2 + log(sum_j w_j /
    (s_j (h^2 + s_j^2)) + (c1 - c) / 2 sum_i v_i e^((c1^2 - r_i^2) / 2) / (h^2 + r_i^2)),
    s_j = sqrt(c1^2 + 2 t_j), r_i the Legendre nodes on [c, c1]; the nodes on a last axis"""
    nodes, weights, legendre_nodes, legendre_weights = _quadrature()
    h2 = h * h
    c1 = ew.where(ew.greater(c, C_TAIL), c, C_TAIL)
    s2 = bnp.expand_dims(c1 * c1, -1) + 2.0 * nodes
    hh = bnp.expand_dims(h2, -1)
    tail = bnp.sum(weights / (ew.sqrt(s2) * (hh + s2)), axis=-1)
    width = c1 - c
    r = bnp.expand_dims(c, -1) + bnp.expand_dims(0.5 * width, -1) * (1.0 + legendre_nodes)
    cc = bnp.expand_dims(c1 * c1, -1)
    near = bnp.sum(legendre_weights * ew.exp(0.5 * (cc - r * r)) / (hh + r * r), axis=-1)
    return (ew.log(h) - LOG_PI - 0.5 * (h2 + c1 * c1)
            + ew.log(tail + 0.5 * width * near))
