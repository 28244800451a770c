"""``burnumba.scipy.stats.lognorm``: the log-normal distribution, as scipy.stats.lognorm (s,
loc, scale): log(z) is normal with standard deviation s, z = (x - loc) / scale. logpdf, pdf,
cdf, logcdf, sf, logsf, ppf, with gradients to x, s, loc and scale; -inf (logpdf), 0 (cdf)
and 1 (sf) at and below loc, as scipy."""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, above, entropy_of, log_scale, method, positive, valid

INF = float("inf")


def _logz(x, loc, scale):
    inside, z = above(x, loc, scale, strict=True)
    return inside, ew.log(z)


@method("lognorm")
def logpdf(x, s, loc=0.0, scale=1.0):
    """-log(s z scale) - log(2 pi) / 2 - log(z)^2 / (2 s^2)"""
    inside, lz = _logz(x, loc, scale)
    out = -lz - log_scale(s) - log_scale(scale) - 0.5 * LOG_2PI - 0.5 * (lz / s) ** 2
    return valid(ew.where(inside, out, -INF), positive(s), positive(scale))


@method("lognorm")
def pdf(x, s, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, s, loc, scale))


@method("lognorm")
def cdf(x, s, loc=0.0, scale=1.0):
    """ndtr(log(z) / s)"""
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, special.ndtr(lz / s), 0.0), positive(s), positive(scale))


@method("lognorm")
def logcdf(x, s, loc=0.0, scale=1.0):
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, special.log_ndtr(lz / s), -INF), positive(s),
                 positive(scale))


@method("lognorm")
def sf(x, s, loc=0.0, scale=1.0):
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, special.ndtr(-lz / s), 1.0), positive(s), positive(scale))


@method("lognorm")
def logsf(x, s, loc=0.0, scale=1.0):
    inside, lz = _logz(x, loc, scale)
    return valid(ew.where(inside, special.log_ndtr(-lz / s), 0.0), positive(s),
                 positive(scale))


@method("lognorm")
def ppf(q, s, loc=0.0, scale=1.0):
    """loc + scale exp(s ndtri(q))"""
    return valid(loc + scale * ew.exp(s * special.ndtri(q)), positive(s), positive(scale))


@method("lognorm")
def entropy(s, loc=0.0, scale=1.0):
    """(1 + log 2 pi) / 2 + log s + log scale."""
    return entropy_of(0.5 * (1.0 + LOG_2PI) + log_scale(s), loc, scale, positive(s))
