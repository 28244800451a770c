"""``burnumba.scipy.stats.vonmises``: the von Mises (circular normal) distribution, as
scipy.stats.vonmises (kappa, loc, scale): logpdf and pdf on the whole line (periodic, as
scipy's), with gradients to x, kappa, loc and scale. (cdf is a series scipy sums in Python:
refused.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, log_scale, method, positive, standard, valid

# log I0(k) - k: log(i0(k) e^-k) below BIG (one rounding each, no cancellation; I0 overflows
# past 713), else from the asymptotic series I0(k) e^-k sqrt(2 pi k) = sum_n a_n / k^n,
# a_n = ((2n - 1)!!)^2 / (n! 8^n), whose 8th term at k = 600 is 1e-21 of the sum
BIG = 600.0
SERIES = (1.0, 1 / 8, 9 / 128, 225 / 3072, 11025 / 98304, 893025 / 3932160,
          108056025 / 188743680, 18261468225 / 10569646080)


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


@method("vonmises")
def logpdf(x, kappa, loc=0.0, scale=1.0):
    """kappa (cos z - 1) - log(2 pi) - log(i0e(kappa)) - log(scale), cos z - 1 written
    -2 sin(z / 2)^2 (its digits near z = 0)"""
    z = standard(x, loc, scale)
    s = ew.sin(0.5 * z)
    out = -2.0 * kappa * s * s - LOG_2PI - log_i0e(kappa) - log_scale(scale)
    return valid(out, positive(kappa), positive(scale))


@method("vonmises")
def pdf(x, kappa, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, kappa, loc, scale))
