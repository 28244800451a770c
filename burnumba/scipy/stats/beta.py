"""``burnumba.scipy.stats.beta``: the beta distribution, as scipy.stats.beta (a, b, loc,
scale): logpdf and pdf, with gradients to x, a, b, loc and scale; -inf outside [0, 1] (in z).
cdf, sf, logcdf and logsf are the incomplete beta rows (special.betainc / betaincc), with
gradients to x, a, b, loc and scale (in a and b the rows betainc_da / betainc_db, #31); a
second derivative in a or b is an error that names it."""
from ...numpy import elementwise as ew
from .. import special
from ._common import log_scale, method, positive, standard, valid


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
