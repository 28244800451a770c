"""``burnumba.scipy.stats.vonmises``: the von Mises (circular normal) distribution, as
scipy.stats.vonmises (kappa, loc, scale): logpdf, pdf, cdf, sf, logcdf and logsf on the
whole line, with gradients to x, kappa, loc and scale (of any order: every function is a
composition of rows).

As scipy's, the density is periodic and the cdf counts whole turns of z = (x - loc) / scale,
cdf(z + 2 pi) = cdf(z) + 1 (so it leaves [0, 1] outside [-pi, pi], and logcdf / logsf are NaN
where cdf / sf are negative, as scipy's log(cdf) / log(1 - cdf)); kappa = 0 is the uniform
density 1 / (2 pi), kappa < 0 gives NaN.

>>> import burnumba.scipy.stats.vonmises as vonmises
>>> bn.grad(lambda x: vonmises.cdf(x, 2.0))(1.0)          # the pdf, 0.2057144995155954
>>> bn.grad(lambda k: vonmises.cdf(1.0, k))(2.0)          # 0.06962858818573776
"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, entropy_of, log_scale, method, positive, standard, valid

PI = 3.141592653589793
TWO_PI = 6.283185307179586

# log I0(k) - k: log(i0(k) e^-k) below BIG (one rounding each, no cancellation; I0 overflows
# past 713), else from the asymptotic series I0(k) e^-k sqrt(2 pi k) = sum_n a_n / k^n,
# a_n = ((2n - 1)!!)^2 / (n! 8^n), whose 8th term at k = 600 is 1e-21 of the sum
BIG = 600.0
SERIES = (1.0, 1 / 8, 9 / 128, 225 / 3072, 11025 / 98304, 893025 / 3932160,
          108056025 / 188743680, 18261468225 / 10569646080)

# the cdf on [-pi, pi]: below SEAM, the Fourier series of Hill's algorithm 518 (scipy's) with
# a fixed TERMS terms; from SEAM on, the asymptotic series in 1 / kappa with ORDERS terms past
# the first. Against mpmath (40 digits) both are within 1e-15 of the cdf, at their worst
# next to the seam (40 terms would leave 1.6e-15 at kappa = 25, 16 orders 8e-16); both are
# fixed structures, so a new kappa never retraces. Small values carry that absolute error
# (logcdf / logsf lose digits where the cdf is below ~1e-6, as scipy's, whose series is good
# to 1e-13)
SEAM = 25.0
TERMS = 48
ORDERS = 20
W_MAX = 40.0          # |w| past which Phi(w) is 0 or 1 in double (Phi(-38) = 3e-316)


def log_i0e(k):
    """log(i0(k)) - k for k >= 0"""
    small = ew.less(k, BIG)
    ks = ew.where(small, k, 1.0)
    kb = ew.where(small, BIG, k)
    inv, term, total = 1.0 / kb, 1.0, 0.0
    for c in SERIES:
        total = total + c * term
        term = term * inv
    big = ew.log(total) - 0.5 * (LOG_2PI + ew.log(kb))
    return ew.where(small, ew.log(special.i0(ks) * ew.exp(-ks)), big)


def _nonnegative(kappa):
    """scipy's vonmises takes kappa >= 0 (kappa = 0: the uniform density)"""
    return positive(kappa) if positive(kappa) is True else ew.greater_equal(kappa, 0.0)


@method("vonmises")
def logpdf(x, kappa, loc=0.0, scale=1.0):
    """kappa (cos z - 1) - log(2 pi) - log(i0e(kappa)) - log(scale), cos z - 1 written
    -2 sin(z / 2)^2 (its digits near z = 0)"""
    z = standard(x, loc, scale)
    s = ew.sin(0.5 * z)
    out = -2.0 * kappa * s * s - LOG_2PI - log_i0e(kappa) - log_scale(scale)
    return valid(out, _nonnegative(kappa), positive(scale))


@method("vonmises")
def pdf(x, kappa, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, kappa, loc, scale))


def _series(t, k):
    """F(t) = 1/2 + t / (2 pi) + (1 / pi) sum_n (I_n(k) / I_0(k)) sin(n t) / n for t in
    [-pi, pi] (the cdf of the density integrated term by term). The ratios r_n = I_n / I_{n-1}
    come from the backward recurrence r_n = k / (2n + k r_{n+1}) (Hill's continued fraction,
    multiplied through by k so that k = 0 has a finite derivative, 1 / (2n)), started at
    r_{TERMS + 1} = 0, and v_n = r_n (sin(n t) / n + v_{n+1}) sums the products."""
    r = v = 0.0
    for n in range(TERMS, 0, -1):
        r = k / (2.0 * n + k * r)
        v = r * (ew.sin(float(n) * t) * (1.0 / n) + v)
    return 0.5 + t * (1.0 / TWO_PI) + v * (1.0 / PI)


def _asymptotic(t, k):
    """With u = 2 sin(t / 2), cos t - 1 = -u^2 / 2 and dt = du / sqrt(1 - u^2 / 4), so
    F(t) is proportional to int_{-2}^{u} exp(-k s^2 / 2) (1 - s^2 / 4)^(-1/2) ds. Expanding
    (1 - s^2 / 4)^(-1/2) = sum_j c_j s^(2j), c_j = binom(2j, j) / 16^j, and moving the lower
    end to -inf (a change of e^-2k), with w = u sqrt(k):

        F = sum_j c_j k^-j M_j(w) / sum_j c_j k^-j M_j(inf),
        M_0 = Phi(w), M_j = (2j - 1) M_{j-1} - w^(2j-1) phi(w), M_j(inf) = (2j - 1)!!

    (the denominator is the series of I0(k) e^-k sqrt(2 pi k), log_i0e's). In the left tail
    every term is positive (no cancellation), but the expansion converges there like
    (u^2 / 4)^ORDERS: a cdf of 1e-12 keeps 6 digits at kappa = 25 (all of them past kappa =
    100), one under 1e-30 few, far below the 1e-15 of absolute accuracy."""
    w = ew.clip(2.0 * ew.sin(0.5 * t) * ew.sqrt(k), -W_MAX, W_MAX)
    phi = ew.exp(-0.5 * (w * w)) * 0.3989422804014327           # 1 / sqrt(2 pi)
    w2 = w * w
    m, wp, inv = special.ndtr(w), w * phi, 1.0 / k
    num, den, c, full, kj = m, 1.0, 1.0, 1.0, 1.0
    for j in range(1, ORDERS + 1):
        c *= (2 * j - 1) / (2 * j) / 4.0
        full *= 2 * j - 1
        kj = kj * inv
        m = (2 * j - 1) * m - wp
        wp = wp * w2
        num = num + (c * kj) * m
        den = den + (c * full) * kj
    return num / den


def _cdf(z, kappa):
    """scipy's cdf of the standardised z on the whole line: the turns round(z / 2 pi) plus
    the cdf of the rest, in [-pi, pi] (z = +-inf: 1 or 0, the limits, as scipy's)."""
    finite = ew.isfinite(z)
    zf = ew.where(finite, z, 0.0)
    turns = ew.rint(zf / TWO_PI)
    t = zf - turns * TWO_PI
    small = ew.less(kappa, SEAM)
    # each branch reads kappa held at a point of its own side where it is not taken (no
    # inf * 0 in a gradient)
    ks = ew.where(small, kappa, SEAM)
    kb = ew.where(small, SEAM, kappa)
    f = ew.where(small, _series(t, ks), _asymptotic(t, kb)) + turns
    return ew.where(finite, f, ew.where(ew.greater(z, 0.0), 1.0, 0.0))


def _tail(x, kappa, loc, scale, sign):
    z = standard(x, loc, scale)
    return valid(_cdf(sign * z, kappa), _nonnegative(kappa), positive(scale))


@method("vonmises")
def cdf(x, kappa, loc=0.0, scale=1.0):
    """the series of Hill's algorithm 518 below kappa = 25, an asymptotic series in 1 / kappa
    above (scipy switches at 50 to Phi(sqrt(2 / pi) / i0e(kappa) sin(z / 2)), a normal
    approximation off by up to 3e-6 at kappa = 50: ours is the cdf to 1e-15 there)"""
    return _tail(x, kappa, loc, scale, 1.0)


@method("vonmises")
def sf(x, kappa, loc=0.0, scale=1.0):
    """1 - cdf(z) written cdf(-z) (the density is even: equal on the whole line, turns
    included), which keeps the right tail's digits"""
    return _tail(x, kappa, loc, scale, -1.0)


@method("vonmises")
def logcdf(x, kappa, loc=0.0, scale=1.0):
    return ew.log(_tail(x, kappa, loc, scale, 1.0))


@method("vonmises")
def logsf(x, kappa, loc=0.0, scale=1.0):
    return ew.log(_tail(x, kappa, loc, scale, -1.0))


@method("vonmises")
def entropy(kappa, loc=0.0, scale=1.0):
    """log(2 pi I0(kappa)) - kappa I1(kappa) / I0(kappa) + log scale, with the scaled Bessel
    functions (i0e, i1e: finite for every kappa), as scipy."""
    i0e = special.i0e(kappa)
    return entropy_of(-kappa * special.i1e(kappa) / i0e + log_scale(2.0 * PI * i0e) + kappa,
                      loc, scale, positive(kappa))
