"""``burnumba.scipy``: scipy's functions on traced values, under scipy's module paths, names,
signatures and defaults, so that ``import burnumba.scipy.stats.norm as norm`` or
``from burnumba.scipy.special import logsumexp`` replaces ``autograd.scipy.…`` or
``jax.scipy.…``:

    special     gammaln, digamma, polygamma, erf, erfc, erfinv, ndtr, ndtri, log_ndtr, i0, i1,
                logsumexp, softmax, expit, logit, xlogy, betaln, ...
    stats       norm, multivariate_normal, t, gamma, beta, dirichlet, poisson, bernoulli,
                binom, laplace, cauchy, logistic, expon, uniform, lognorm, weibull_min,
                gumbel_r, nbinom, truncnorm, ... (one module each)
    linalg      solve_triangular, cho_factor / cho_solve, lu_factor / lu_solve / lu, expm
    signal      convolve, correlate (N-d; full / valid / same), convolve2d, correlate2d
    integrate   odeint, solve_ivp (a fixed-step Runge-Kutta traced as ops)

The layer sits between ``burnumba.numpy``, which it is built from, and ``derive``, whose
traced derivatives of the special rows call it. scipy itself is imported only where a
function runs on plain values.
"""
import numpy as _np

from ..tracing.dispatch import SCIPY_REPLACEMENTS as _REPLACEMENTS
from ..tracing.dispatch import SCIPY_UFUNCS as _SCIPY_UFUNCS
from ..tracing.dispatch import UFUNCS as _UFUNCS
from . import integrate, linalg, signal, special, stats  # noqa: F401

# scipy.special's ufuncs that are numpy's own functions under the same name: a traced value
# takes numpy's row (scipy.special.log1p(x) is np.log1p(x))
for _n in ("expm1", "log1p", "cbrt", "exp2"):
    _SCIPY_UFUNCS.setdefault(_n, _UFUNCS[getattr(_np, _n)])


def _public(module):
    return [n for n in getattr(module, "__all__", ()) if callable(getattr(module, n, None))]


# scipy's public names -> ours, for the error a scipy function raises on a traced value
for _mod in (special, linalg, signal, integrate):
    _area = _mod.__name__.rsplit(".", 1)[1]
    for _n in _public(_mod):
        _REPLACEMENTS[f"scipy.{_area}.{_n}"] = f"burnumba.scipy.{_area}.{_n}"
for _dist in stats.__all__:
    for _n in dir(getattr(stats, _dist)):
        if not _n.startswith("_") and _n in stats.METHODS:
            _REPLACEMENTS[f"scipy.stats.{_dist}.{_n}"] = f"burnumba.scipy.stats.{_dist}.{_n}"
del _mod, _area, _n, _dist, _np
