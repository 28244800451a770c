"""``burnumba.scipy.stats``: scipy.stats' distributions on traced values, one module each, with
scipy's function names and parameters (``norm.logpdf(x, loc=0, scale=1)``), so that
``import burnumba.scipy.stats.norm as norm`` replaces ``autograd.scipy.stats.norm``.
Gradients flow to x and to every parameter; invalid parameters give NaN, as scipy."""
from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma,  # noqa: F401
               laplace, logistic, multivariate_normal, norm, poisson, t, uniform)

from ...numpy._common import namesake  # noqa: E402

__getattr__ = namesake(__name__, "scipy.stats")    # lognorm, ...: scipy's own distributions
__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "laplace", "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform"]
# the functions a distribution module may have (scipy's method names)
METHODS = ("logpdf", "pdf", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
