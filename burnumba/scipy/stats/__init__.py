"""``burnumba.scipy.stats``: scipy.stats' distributions on traced values, one module each, with
scipy's function names and parameters (``norm.logpdf(x, loc=0, scale=1)``), so that
``import burnumba.scipy.stats.norm as norm`` replaces ``autograd.scipy.stats.norm``.
Gradients flow to x and to every parameter; invalid parameters give NaN, as scipy."""
from . import (  # noqa: F401
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, f, gamma,
    gennorm, geom, gumbel_l, gumbel_r, halfnorm, invgamma, laplace, loggamma, logistic,
    lognorm, multinomial, multivariate_normal, multivariate_t, nbinom, norm, pareto, poisson,
    rayleigh, skewnorm, t, truncnorm, uniform, vonmises, weibull_min)

from ...numpy._common import namesake  # noqa: E402

__getattr__ = namesake(__name__, "scipy.stats")    # scipy's own distributions, the others
__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "f",
           "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "halfnorm", "invgamma", "laplace",
           "loggamma", "logistic", "lognorm", "multinomial", "multivariate_normal",
           "multivariate_t", "nbinom",
           "norm", "pareto", "poisson", "rayleigh", "skewnorm", "t", "truncnorm", "uniform",
           "vonmises", "weibull_min"]
from . import _common  # noqa: E402

for _name in __all__:                  # a function scipy has and the module lacks: named
    _module = globals()[_name]
    _module.__getattr__ = _common.missing(_module)
del _name, _module
METHODS = _common.METHODS             # the functions a distribution module may have
