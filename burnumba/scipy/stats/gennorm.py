"""``burnumba.scipy.stats.gennorm``: the generalized normal distribution, as
scipy.stats.gennorm (beta, loc, scale): density beta / (2 gamma(1 / beta)) exp(-|z|^beta).
logpdf and pdf, with gradients to x, beta, loc and scale. For beta <= 1 the density has a kink
at z = 0, where the gradient in x is 0 (absolute's convention). cdf, sf, logcdf and logsf from
the upper incomplete gamma row, Q(1 / beta, |z|^beta) / 2 in the near tail, with gradients to
x, beta (through gammaincc's derivative in a), loc and scale."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG2, entropy_of, log_scale, method, positive, standard, valid


@method("gennorm")
def logpdf(x, beta, loc=0.0, scale=1.0):
    """log(beta) - log(2) - gammaln(1 / beta) - |z|^beta - log(scale)"""
    z = standard(x, loc, scale)
    out = (log_scale(beta) - LOG2 - special.gammaln(1.0 / beta) - ew.absolute(z) ** beta
           - log_scale(scale))
    return valid(out, positive(beta), positive(scale))


@method("gennorm")
def pdf(x, beta, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, beta, loc, scale))


def _cdf(z, beta):
    """P(Z <= z) = Q(1 / beta, |z|^beta) / 2 for z < 0, 1 - that above (scipy's 1/2 + sign(z)
    P / 2, with the tail below 1/2 computed itself). At z = 0, where |z|^beta has no
    derivative, 1/2 + z pdf(0) with pdf(0) = beta / (2 Gamma(1 / beta)): the value 1/2 and
    the gradient pdf(0) in z, 0 in beta (the median stays at 0); z held at 1 elsewhere."""
    zero = ew.equal(z, 0.0)
    t = ew.absolute(ew.where(zero, 1.0, z)) ** beta
    half = 0.5 * special.gammaincc(1.0 / beta, t)
    pdf0 = 0.5 * beta * ew.exp(-special.gammaln(1.0 / beta))
    return ew.where(zero, 0.5 + z * pdf0, ew.where(ew.less(z, 0.0), half, 1.0 - half))


@method("gennorm")
def cdf(x, beta, loc=0.0, scale=1.0):
    """Q(1 / beta, |z|^beta) / 2 below loc, 1 - that above."""
    return valid(_cdf(standard(x, loc, scale), beta), positive(beta), positive(scale))


@method("gennorm")
def sf(x, beta, loc=0.0, scale=1.0):
    """cdf at -z (the density is symmetric): the upper tail computed itself."""
    return valid(_cdf(-standard(x, loc, scale), beta), positive(beta), positive(scale))


@method("gennorm")
def logcdf(x, beta, loc=0.0, scale=1.0):
    return ew.log(cdf(x, beta, loc, scale))


@method("gennorm")
def logsf(x, beta, loc=0.0, scale=1.0):
    return ew.log(sf(x, beta, loc, scale))


@method("gennorm")
def entropy(beta, loc=0.0, scale=1.0):
    """1 / beta - log(beta / 2) + gammaln(1 / beta) + log scale."""
    return entropy_of(1.0 / beta - log_scale(0.5 * beta) + special.gammaln(1.0 / beta), loc,
                      scale, positive(beta))
