"""``burnumba.scipy.stats.gamma``: the gamma distribution, as scipy.stats.gamma (a, loc,
scale): logpdf and pdf, with gradients to x, a, loc and scale, -inf below loc, as scipy; cdf,
logcdf, sf and logsf from the incomplete gamma rows (special.gammainc / gammaincc), with
gradients to x, a, loc and scale: the derivative in the shape a is the gammainc_da row
(dP/da, as JAX's igamma_grad_a; autograd has none). A second derivative in a is refused
(an error that names ``a``)."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, entropy_of, log_scale, method, positive, standard, valid


@method("gamma")
def logpdf(x, a, loc=0.0, scale=1.0):
    """xlogy(a - 1, z) - z - gammaln(a) - log scale for z = (x - loc) / scale >= 0."""
    z = standard(x, loc, scale)
    inside = ew.greater_equal(z, 0.0)
    zs = ew.where(inside, z, 1.0)
    out = special.xlogy(a - 1.0, zs) - zs - special.gammaln(a) - log_scale(scale)
    return valid(ew.where(inside, out, -float("inf")), positive(scale), positive(a))


@method("gamma")
def pdf(x, a, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, a, loc, scale))


def _tail(fn, x, a, loc, scale, below):
    """fn(a, z) for z = (x - loc) / scale >= 0 and ``below`` under loc; z held at 1 in the
    unused branch (gammainc's d/dx is infinite at 0 for a < 1: no inf * 0 in a gradient)."""
    z = standard(x, loc, scale)
    inside = ew.greater_equal(z, 0.0)
    zs = ew.where(inside, z, 1.0)
    return valid(ew.where(inside, fn(a, zs), below), positive(scale), positive(a))


@method("gamma")
def cdf(x, a, loc=0.0, scale=1.0):
    """P(a, z) = gammainc(a, z) for z = (x - loc) / scale >= 0, 0 below; differentiable in
    x, a, loc and scale.

    >>> bn.grad(lambda x: cdf(x, 2.0))(1.5)      # the pdf: 1.5 e^-1.5 = 0.33469524022264474
    >>> bn.grad(lambda a: cdf(1.5, a))(2.0)      # dP/da: -0.31348863782507935
    """
    return _tail(special.gammainc, x, a, loc, scale, 0.0)


@method("gamma")
def sf(x, a, loc=0.0, scale=1.0):
    """Q(a, z) = gammaincc(a, z) (accurate in the upper tail), 1 below loc."""
    return _tail(special.gammaincc, x, a, loc, scale, 1.0)


@method("gamma")
def logcdf(x, a, loc=0.0, scale=1.0):
    """log P(a, z): -inf below loc."""
    return ew.log(cdf(x, a, loc, scale))


@method("gamma")
def logsf(x, a, loc=0.0, scale=1.0):
    """log Q(a, z): 0 below loc."""
    return ew.log(sf(x, a, loc, scale))


@method("gamma")
def entropy(a, loc=0.0, scale=1.0):
    """a + gammaln(a) + (1 - a) digamma(a) + log scale; from a = 250 on, scipy's asymptotic
    series (the exact form loses its digits to cancellation there)."""
    small = ew.less(a, 250.0)
    r = ew.where(small, a, 1.0)                   # each branch read at a point of its own
    g = ew.where(small, 250.0, a)
    regular = special.digamma(r) * (1.0 - r) + r + special.gammaln(r)
    series = (0.5 * (1.0 + LOG_2PI + log_scale(g)) - 1.0 / (3.0 * g) - g ** -2.0 / 12.0
              - g ** -3.0 / 90.0 + g ** -4.0 / 120.0)
    return entropy_of(ew.where(small, regular, series), loc, scale, positive(a))
