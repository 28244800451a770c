"""``burnumba.scipy.stats.beta``: the beta distribution, as scipy.stats.beta (a, b, loc,
scale): logpdf and pdf, with gradients to x, a, b, loc and scale; -inf outside [0, 1] (in z).
cdf, sf, logcdf and logsf are the incomplete beta rows (special.betainc / betaincc), with
gradients to x, a, b, loc and scale (in a and b the rows betainc_da / betainc_db, #31); a
second derivative in a or b is an error that names it."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, entropy_of, log_scale, method, positive, standard, valid


@method("beta")
def logpdf(x, a, b, loc=0.0, scale=1.0):
    """xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - log scale for 0 <= z <= 1."""
    z = standard(x, loc, scale)
    inside = ew.logical_and(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0))
    zs = ew.where(inside, z, 0.5)
    out = (special.xlogy(a - 1.0, zs) + special.xlog1py(b - 1.0, -zs) - special.betaln(a, b)
           - log_scale(scale))
    return valid(ew.where(inside, out, -float("inf")), positive(scale), positive(a), positive(b))


@method("beta")
def pdf(x, a, b, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, a, b, loc, scale))


def _between(fn, x, a, b, loc, scale, below, above):
    """fn(a, b, z) for 0 < z < 1, ``below`` at z <= 0 and ``above`` at z >= 1 (z held at
    1/2 outside: the density's poles at 0 and 1 stay out of the gradient)."""
    z = standard(x, loc, scale)
    inside = ew.logical_and(ew.greater(z, 0.0), ew.less(z, 1.0))
    zs = ew.where(inside, z, 0.5)
    out = ew.where(inside, fn(a, b, zs), ew.where(ew.less_equal(z, 0.0), below, above))
    return valid(out, positive(scale), positive(a), positive(b))


@method("beta")
def cdf(x, a, b, loc=0.0, scale=1.0):
    """I_z(a, b) = betainc(a, b, z) for z = (x - loc) / scale in [0, 1], 0 below, 1 above.

    >>> bn.grad(lambda x: cdf(x, 2.0, 3.0))(0.5)   # the pdf: 12 x (1 - x)^2 = 1.5
    """
    return _between(special.betainc, x, a, b, loc, scale, 0.0, 1.0)


@method("beta")
def sf(x, a, b, loc=0.0, scale=1.0):
    """1 - I_z(a, b) = betaincc(a, b, z) (accurate in the upper tail)."""
    return _between(special.betaincc, x, a, b, loc, scale, 1.0, 0.0)


@method("beta")
def logcdf(x, a, b, loc=0.0, scale=1.0):
    return ew.log(cdf(x, a, b, loc, scale))


@method("beta")
def logsf(x, a, b, loc=0.0, scale=1.0):
    return ew.log(sf(x, a, b, loc, scale))


def _threshold(v):
    """scipy's bound above which the other parameter counts as large: (the first digit of v
    + 2) 10^(7 + the exponent of v), 1000 at v = 1."""
    j = ew.floor(ew.log10(v))
    d = ew.floor(v / 10.0 ** j) + 2.0
    return ew.where(ew.equal(v, 1.0), 1000.0, d * 10.0 ** (7.0 + j))


def _b_large(a, b):
    """scipy's expansion for b much larger than a."""
    s = a + b
    t1 = special.gammaln(a) - (a - 1.0) * special.digamma(a)
    t2 = (-1.0 / (2.0 * b) + 1.0 / (12.0 * b) - b ** -2.0 / 12.0 - b ** -3.0 / 120.0
          + b ** -4.0 / 120.0 + b ** -5.0 / 252.0 - b ** -6.0 / 252.0 + 1.0 / s
          - 1.0 / (12.0 * s) + s ** -2.0 / 6.0 + s ** -3.0 / 120.0 - s ** -4.0 / 60.0
          - s ** -5.0 / 252.0 + s ** -6.0 / 126.0)
    return t1 + t2 + s * ew.log1p(a / b) + ew.log(b) - 2.0 * ew.log(s)


@method("beta")
def entropy(a, b, loc=0.0, scale=1.0):
    """betaln(a, b) - (a - 1) digamma(a) - (b - 1) digamma(b) + (a + b - 2) digamma(a + b)
    + log scale. With a and b past about 5e6, or one of them far past the other, scipy's
    asymptotic forms, chosen as scipy chooses them (the exact form loses its digits to
    cancellation there); where scipy's choice leaves a gap (4.9e6 <= a < 4.96e6), the exact
    form, not scipy's 0."""
    both = ew.logical_and(ew.greater_equal(a, 4.96e6), ew.greater_equal(b, 4.96e6))
    b_big = ew.logical_and(ew.logical_and(ew.less_equal(a, 4.9e6), ew.greater_equal(b - a, 1e6)),
                           ew.greater_equal(b, _threshold(ew.where(ew.greater(a, 0.0), a, 1.0))))
    a_big = ew.logical_and(ew.logical_and(ew.less_equal(b, 4.9e6), ew.greater_equal(a - b, 1e6)),
                           ew.greater_equal(a, _threshold(ew.where(ew.greater(b, 0.0), b, 1.0))))
    b_big = ew.logical_and(b_big, ew.logical_not(both))
    a_big = ew.logical_and(a_big, ew.logical_not(ew.logical_or(both, b_big)))
    exact = ew.logical_not(ew.logical_or(both, ew.logical_or(a_big, b_big)))
    # each form read at a point of its own where it is not the one taken
    ra, rb = ew.where(exact, a, 2.0), ew.where(exact, b, 3.0)
    regular = (special.betaln(ra, rb) - (ra - 1.0) * special.digamma(ra)
               - (rb - 1.0) * special.digamma(rb) + (ra + rb - 2.0) * special.digamma(ra + rb))
    ba, bb = ew.where(both, a, 5e6), ew.where(both, b, 5e6)
    s = ba + bb
    ab = (0.5 * (LOG_2PI + ew.log(ba) + ew.log(bb) - 3.0 * ew.log(s) + 1.0)
          + (110.0 / s + 20.0 * s ** -2.0 + s ** -3.0 - 2.0 * s ** -4.0
             - 50.0 / ba - 10.0 * ba ** -2.0 - ba ** -3.0 + ba ** -4.0
             - 50.0 / bb - 10.0 * bb ** -2.0 - bb ** -3.0 + bb ** -4.0) / 120.0)
    lb = _b_large(ew.where(b_big, a, 2.0), ew.where(b_big, b, 1e8))
    la = _b_large(ew.where(a_big, b, 2.0), ew.where(a_big, a, 1e8))
    value = ew.where(exact, regular, ew.where(both, ab, ew.where(b_big, lb, la)))
    return entropy_of(value, loc, scale, positive(a), positive(b))
