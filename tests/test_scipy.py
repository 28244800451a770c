"""burnumba.scipy, table-driven: every function's values against scipy's, its gradients with
respect to x and to every parameter against central differences of scipy's own function and
against autograd.scipy where autograd has it; the edges (tails, zeros, infinities); scipy's
own functions called on traced values (the ufuncs work, the rest name our replacement).

The special rows themselves (gammaln, polygamma, erfc, erfinv, ndtri, log_ndtr, i0, i1) are
rows of the op table, so tests/test_ops.py and tests/test_ieee.py test them with the others;
here their scalar code (kernels/special.py) is also held to scipy over the whole domain.
"""
import warnings
import zlib
from typing import Callable, NamedTuple, Optional, Tuple

import autograd
import autograd.numpy as anp
import autograd.scipy.linalg as alinalg
import autograd.scipy.special as asp
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

import burnumba as bn
import burnumba.scipy.special as bsp
import burnumba.scipy.stats.norm as norm
from burnumba import ConcretizationError, UnsupportedOpError
from burnumba.kernels import special as kspecial
from burnumba.kernels import special_bessel as kbessel
from burnumba.kernels import special_beta as kbeta
from burnumba.kernels import special_gamma as kgamma
from burnumba.scipy import integrate, linalg, signal, stats
from conftest import central_diff, mpmath_betainc_dab, mpmath_gammainc_da


class Case(NamedTuple):
    ours: Callable                       # burnumba.scipy's function (scipy's on plain values)
    ref: Callable                        # scipy's
    args: Callable                       # rng -> the arguments
    argnums: Tuple[int, ...]             # the ones differentiated
    autograd: Optional[Callable] = None  # autograd.scipy's, where autograd has it
    rtol: float = 1e-11                  # values against scipy
    symmetric: Tuple[int, ...] = ()      # symmetric-matrix arguments: gradients compared
    # with autograd's folded into the lower triangle (autograd splits them over both; scipy
    # and burnumba read the lower triangle only)


def _u(lo, hi, shape=(4,)):
    return lambda rng: rng.uniform(lo, hi, size=shape)


def _at(*values):
    return lambda rng: np.array(values)


def _scipy_logm_quiet(a):
    """scipy's logm without its "result may be inaccurate" warning (an estimate of 3e-13 at
    the central differences' points of a wide spectrum; the values agree to 1e-11)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "logm result may be inaccurate")
        return scipy.linalg.logm(a)


def _args(*makers):
    return lambda rng: tuple(m(rng) if callable(m) else m for m in makers)


def _spd(rng, k=3):
    a = rng.normal(size=(k, k))
    return a @ a.T + k * np.eye(k)


S, ST = scipy.special, scipy.stats
# correlate2d(mode='same'), ours and scipy's (two cases below)
_CORRELATE2D_SAME = (lambda a, k: signal.correlate2d(a, k, mode="same"),
                     lambda a, k: scipy.signal.correlate2d(a, k, mode="same"))
CASES = {
    # -- special
    "gammaln": Case(bsp.gammaln, S.gammaln, _args(_u(-4.5, 8.0)), (0,), asp.gammaln),
    "digamma": Case(bsp.digamma, S.digamma, _args(_u(0.1, 8.0)), (0,), asp.digamma),
    "polygamma2": Case(lambda x: bsp.polygamma(2, x), lambda x: S.polygamma(2, x),
                       _args(_u(0.3, 6.0)), (0,), lambda x: asp.polygamma(2, x)),
    "multigammaln": Case(lambda a: bsp.multigammaln(a, 3), lambda a: S.multigammaln(a, 3),
                         _args(_u(1.5, 6.0)), (0,), lambda a: asp.multigammaln(a, 3)),
    "gamma": Case(bsp.gamma, S.gamma, _args(_u(-3.7, 6.0)), (0,), asp.gamma, 1e-13 * 50),
    "rgamma": Case(bsp.rgamma, S.rgamma, _args(_u(-3.7, 6.0)), (0,), asp.rgamma, 1e-13 * 50),
    "gammasgn": Case(bsp.gammasgn, S.gammasgn, _args(_u(-3.7, 6.0)), (0,)),
    "beta": Case(bsp.beta, S.beta, _args(_u(0.3, 4.0), _u(0.3, 4.0)), (0, 1), asp.beta, 1e-12),
    "betaln": Case(bsp.betaln, S.betaln, _args(_u(0.3, 9.0), _u(0.3, 9.0)), (0, 1), asp.betaln,
                   1e-12),
    "erf": Case(bsp.erf, S.erf, _args(_u(-3, 3)), (0,), asp.erf),
    "erfcinv": Case(bsp.erfcinv, S.erfcinv, _args(_u(0.05, 1.95)), (0,), asp.erfcinv),
    "ndtr": Case(bsp.ndtr, S.ndtr, _args(_u(-9, 5)), (0,)),
    "owens_t": Case(bsp.owens_t, S.owens_t, _args(_u(-4, 4), _u(-5, 5)), (0, 1), rtol=1e-13),
    "expit": Case(bsp.expit, S.expit, _args(_u(-30, 30)), (0,), asp.expit),
    "logit": Case(bsp.logit, S.logit, _args(_u(0.01, 0.99)), (0,), asp.logit),
    "log_expit": Case(bsp.log_expit, S.log_expit, _args(_u(-30, 30)), (0,)),
    "xlogy": Case(bsp.xlogy, S.xlogy, _args(_u(-2, 2), _u(0.1, 3)), (0, 1)),
    "xlog1py": Case(bsp.xlog1py, S.xlog1py, _args(_u(-2, 2), _u(-0.9, 3)), (0, 1)),
    "entr": Case(bsp.entr, S.entr, _args(_u(0.05, 3)), (0,)),
    "rel_entr": Case(bsp.rel_entr, S.rel_entr, _args(_u(0.05, 3), _u(0.05, 3)), (0, 1)),
    "kl_div": Case(bsp.kl_div, S.kl_div, _args(_u(0.05, 3), _u(0.05, 3)), (0, 1)),
    "logsumexp": Case(bsp.logsumexp, S.logsumexp, _args(_u(-5, 5, (3, 4))), (0,),
                      asp.logsumexp),
    "logsumexp_axis": Case(lambda a: bsp.logsumexp(a, axis=0, keepdims=True),
                           lambda a: S.logsumexp(a, axis=0, keepdims=True),
                           _args(_u(-5, 5, (3, 4))), (0,),
                           lambda a: asp.logsumexp(a, axis=0, keepdims=True)),
    "logsumexp_axes": Case(lambda a: bsp.logsumexp(a, axis=(0, 2)),
                           lambda a: S.logsumexp(a, axis=(0, 2)),
                           _args(_u(-5, 5, (2, 3, 4))), (0,)),
    "logsumexp_b": Case(lambda a, b: bsp.logsumexp(a, axis=1, b=b),
                        lambda a, b: S.logsumexp(a, axis=1, b=b),
                        _args(_u(-5, 5, (3, 4)), _u(0.1, 2, (3, 4))), (0, 1)),
    "logsumexp_sign": Case(lambda a, b: _stack2(bsp.logsumexp(a, b=b, return_sign=True)),
                           lambda a, b: np.stack(S.logsumexp(a, b=b, return_sign=True)),
                           _args(_u(-2, 2, (5,)), np.array([1.0, -2.0, 0.5, -0.3, 0.2])),
                           (0,)),
    "softmax": Case(bsp.softmax, S.softmax, _args(_u(-5, 5, (3, 4))), (0,)),
    "softmax_axis": Case(lambda x: bsp.softmax(x, axis=0), lambda x: S.softmax(x, axis=0),
                         _args(_u(-5, 5, (3, 4))), (0,)),
    "log_softmax": Case(lambda x: bsp.log_softmax(x, axis=1),
                        lambda x: S.log_softmax(x, axis=1), _args(_u(-5, 5, (3, 4))), (0,)),
    # -- stats: gradients to x and every parameter
    "norm.logpdf": Case(norm.logpdf, ST.norm.logpdf, _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)),
                        (0, 1, 2), astats.norm.logpdf),
    "norm.pdf": Case(norm.pdf, ST.norm.pdf, _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)),
                     (0, 1, 2), astats.norm.pdf),
    "norm.cdf": Case(norm.cdf, ST.norm.cdf, _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)),
                     (0, 1, 2), astats.norm.cdf),
    "norm.logcdf": Case(norm.logcdf, ST.norm.logcdf, _args(_u(-9, 6), _u(-1, 1), _u(0.5, 2)),
                        (0, 1, 2), astats.norm.logcdf),
    "norm.sf": Case(norm.sf, ST.norm.sf, _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2),
                    astats.norm.sf),
    "norm.logsf": Case(norm.logsf, ST.norm.logsf, _args(_u(-6, 9), _u(-1, 1), _u(0.5, 2)),
                       (0, 1, 2), astats.norm.logsf),
    "norm.ppf": Case(norm.ppf, ST.norm.ppf, _args(_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)),
                     (0, 1, 2)),
    "norm.isf": Case(norm.isf, ST.norm.isf, _args(_u(0.01, 0.99), _u(-1, 1), _u(0.5, 2)),
                     (0, 1, 2)),
    "t.logpdf": Case(stats.t.logpdf, ST.t.logpdf,
                     _args(_u(-4, 4), _u(1.0, 9.0), _u(-1, 1), _u(0.5, 2)), (0, 1, 2, 3),
                     astats.t.logpdf),
    "t.pdf": Case(stats.t.pdf, ST.t.pdf, _args(_u(-4, 4), _u(1.0, 9.0), _u(-1, 1), _u(0.5, 2)),
                  (0, 1, 2, 3), astats.t.pdf),
    "gamma.logpdf": Case(stats.gamma.logpdf, ST.gamma.logpdf,
                         _args(_u(0.2, 5), _u(0.5, 4), _u(-0.1, 0.1), _u(0.5, 2)),
                         (0, 1, 2, 3)),
    "gamma.logpdf_std": Case(stats.gamma.logpdf, ST.gamma.logpdf,
                             _args(_u(0.2, 5), _u(0.5, 4)), (0, 1), astats.gamma.logpdf),
    # (the shape a / df has no derivative in cdf / sf: refused, test_refused_operands_...)
    "gamma.cdf": Case(stats.gamma.cdf, ST.gamma.cdf,
                      _args(_u(0.2, 5), _u(0.5, 4), _u(-0.1, 0.1), _u(0.5, 2)), (0, 2, 3)),
    "gamma.cdf_std": Case(stats.gamma.cdf, ST.gamma.cdf, _args(_u(0.2, 8), _u(0.5, 4)), (0,),
                          lambda x, a: astats.gamma.cdf(x, a)),
    "gamma.sf": Case(stats.gamma.sf, ST.gamma.sf,
                     _args(_u(0.2, 9), _u(0.5, 4), _u(-0.1, 0.1), _u(0.5, 2)), (0, 2, 3)),
    "gamma.logcdf": Case(stats.gamma.logcdf, ST.gamma.logcdf, _args(_u(0.05, 5), _u(0.5, 4)),
                         (0,)),
    "gamma.logsf": Case(stats.gamma.logsf, ST.gamma.logsf, _args(_u(0.2, 30), _u(0.5, 4)),
                        (0,)),
    "chi2.cdf": Case(stats.chi2.cdf, ST.chi2.cdf, _args(_u(0.2, 8), _u(1.0, 6)), (0,),
                     lambda x, df: astats.chi2.cdf(x, df)),
    "chi2.sf": Case(stats.chi2.sf, ST.chi2.sf, _args(_u(0.2, 8), _u(1.0, 6)), (0,)),
    "chi2.logcdf": Case(stats.chi2.logcdf, ST.chi2.logcdf, _args(_u(0.2, 8), _u(1.0, 6)), (0,)),
    "chi2.logsf": Case(stats.chi2.logsf, ST.chi2.logsf, _args(_u(0.2, 8), _u(1.0, 6)), (0,)),
    "poisson.cdf": Case(stats.poisson.cdf, ST.poisson.cdf,
                        _args(np.array([-1.0, 0.0, 2.5, 7.0]), _u(0.5, 6)), (1,),
                        astats.poisson.cdf),
    "poisson.sf": Case(stats.poisson.sf, ST.poisson.sf,
                       _args(np.array([-1.0, 0.0, 2.5, 7.0]), _u(0.5, 6)), (1,)),
    "poisson.logcdf": Case(stats.poisson.logcdf, ST.poisson.logcdf,
                           _args(np.array([0.0, 1.0, 3.0, 7.0]), _u(0.5, 6)), (1,)),
    "poisson.logsf": Case(stats.poisson.logsf, ST.poisson.logsf,
                          _args(np.array([0.0, 1.0, 3.0, 7.0]), _u(0.5, 6)), (1,)),
    # t, beta and binom from the incomplete beta rows (#31): t in df, beta in a and b
    # through betainc_da / betainc_db; binom's integer n refused (test_binom_refuses_n)
    "t.cdf": Case(stats.t.cdf, ST.t.cdf,
                  _args(_u(-4, 4), _u(0.5, 30), _u(-0.3, 0.3), _u(0.5, 2)), (0, 1, 2, 3)),
    "t.cdf_std": Case(stats.t.cdf, ST.t.cdf, _args(_u(-4, 4), _u(0.5, 30)), (0, 1)),
    "t.sf": Case(stats.t.sf, ST.t.sf, _args(_u(-4, 4), _u(0.5, 30), _u(-0.3, 0.3), _u(0.5, 2)),
                 (0, 1, 2, 3)),
    "t.logcdf": Case(stats.t.logcdf, ST.t.logcdf, _args(_u(-40, 8), _u(0.5, 30)), (0, 1)),
    "t.logsf": Case(stats.t.logsf, ST.t.logsf, _args(_u(-8, 40), _u(0.5, 30)), (0, 1)),
    # (autograd's betainc has d/dx only)
    "beta.cdf": Case(stats.beta.cdf, ST.beta.cdf, _args(_u(0.05, 0.95), _u(0.3, 6), _u(0.3, 6)),
                     (0,), lambda x, a, b: asp.betainc(a, b, x)),
    "beta.cdf_shape": Case(stats.beta.cdf, ST.beta.cdf,
                           _args(_u(0.05, 0.95), _u(0.3, 6), _u(0.3, 6)), (0, 1, 2)),
    "beta.cdf_loc": Case(stats.beta.cdf, ST.beta.cdf,
                         _args(_u(0.1, 0.9), _u(0.3, 6), _u(0.3, 6), _u(-0.05, 0.05),
                               _u(1.0, 1.2)), (0, 1, 2, 3, 4)),
    "beta.sf": Case(stats.beta.sf, ST.beta.sf, _args(_u(0.05, 0.95), _u(0.3, 6), _u(0.3, 6)),
                    (0, 1, 2)),
    "beta.logcdf": Case(stats.beta.logcdf, ST.beta.logcdf,
                        _args(_u(0.01, 0.95), _u(0.3, 6), _u(0.3, 6)), (0, 1, 2)),
    "beta.logsf": Case(stats.beta.logsf, ST.beta.logsf,
                       _args(_u(0.05, 0.99), _u(0.3, 6), _u(0.3, 6)), (0, 1, 2)),
    "binom.cdf": Case(stats.binom.cdf, ST.binom.cdf,
                      _args(np.array([-1.0, 0.0, 2.5, 7.0, 9.0]), 8.0, _u(0.05, 0.95, (5,))),
                      (2,)),
    "binom.sf": Case(stats.binom.sf, ST.binom.sf,
                     _args(np.array([-1.0, 0.0, 2.5, 7.0, 9.0]), 8.0, _u(0.05, 0.95, (5,))),
                     (2,)),
    "binom.logcdf": Case(stats.binom.logcdf, ST.binom.logcdf,
                         _args(np.array([0.0, 1.0, 3.5, 7.0]), 8.0, _u(0.05, 0.95)), (2,)),
    "binom.logsf": Case(stats.binom.logsf, ST.binom.logsf,
                        _args(np.array([-1.0, 0.0, 3.5, 7.0]), 8.0, _u(0.05, 0.95)), (2,)),
    "chi2.logpdf": Case(stats.chi2.logpdf, ST.chi2.logpdf, _args(_u(0.2, 5), _u(1.0, 6)),
                        (0, 1)),
    "beta.logpdf": Case(stats.beta.logpdf, ST.beta.logpdf,
                        _args(_u(0.05, 0.95), _u(0.5, 4), _u(0.5, 4)), (0, 1, 2),
                        astats.beta.logpdf),
    # (x stays on the simplex: its gradient is checked in test_dirichlet_gradient_in_x)
    "dirichlet.logpdf": Case(stats.dirichlet.logpdf, ST.dirichlet.logpdf,
                             _args(np.array([0.2, 0.3, 0.5]), _u(0.5, 4, (3,))), (1,),
                             lambda x, a: astats.dirichlet.logpdf(x, a)),
    "poisson.logpmf": Case(stats.poisson.logpmf, ST.poisson.logpmf,
                           _args(np.array([0.0, 1.0, 3.0, 7.0]), _u(0.5, 6)), (1,),
                           astats.poisson.logpmf),
    "bernoulli.logpmf": Case(stats.bernoulli.logpmf, ST.bernoulli.logpmf,
                             _args(np.array([0.0, 1.0, 1.0, 0.0]), _u(0.05, 0.95)), (1,)),
    "bernoulli.cdf": Case(stats.bernoulli.cdf, ST.bernoulli.cdf,
                          _args(np.array([-1.0, 0.0, 0.5, 1.0]), _u(0.05, 0.95)), (1,)),
    "bernoulli.logcdf": Case(stats.bernoulli.logcdf, ST.bernoulli.logcdf,
                             _args(np.array([0.0, 0.5, 1.0, 3.0]), _u(0.05, 0.95)), (1,)),
    "bernoulli.logsf": Case(stats.bernoulli.logsf, ST.bernoulli.logsf,
                            _args(np.array([-1.0, 0.0, 0.5, 0.0]), _u(0.05, 0.95)), (1,)),
    "binom.logpmf": Case(stats.binom.logpmf, ST.binom.logpmf,
                         _args(np.array([0.0, 2.0, 5.0, 9.0]), 9.0, _u(0.05, 0.95)), (2,)),
    "laplace.logpdf": Case(stats.laplace.logpdf, ST.laplace.logpdf,
                           _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "laplace.cdf": Case(stats.laplace.cdf, ST.laplace.cdf, _args(_u(-3, 3), _u(-1, 1),
                                                                 _u(0.5, 2)), (0, 1, 2)),
    "laplace.logcdf": Case(stats.laplace.logcdf, ST.laplace.logcdf,
                           _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "laplace.logsf": Case(stats.laplace.logsf, ST.laplace.logsf,
                          _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "laplace.ppf": Case(stats.laplace.ppf, ST.laplace.ppf, _args(_u(0.05, 0.95), 0.5, 1.5),
                        (0,)),
    "cauchy.logpdf": Case(stats.cauchy.logpdf, ST.cauchy.logpdf,
                          _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "cauchy.cdf": Case(stats.cauchy.cdf, ST.cauchy.cdf, _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)),
                       (0, 1, 2)),
    "cauchy.ppf": Case(stats.cauchy.ppf, ST.cauchy.ppf, _args(_u(0.05, 0.95), 0.5, 1.5), (0,)),
    "logistic.logpdf": Case(stats.logistic.logpdf, ST.logistic.logpdf,
                            _args(_u(-3, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "logistic.logcdf": Case(stats.logistic.logcdf, ST.logistic.logcdf,
                            _args(_u(-30, 30), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "logistic.sf": Case(stats.logistic.sf, ST.logistic.sf, _args(_u(-3, 3), _u(-1, 1),
                                                                 _u(0.5, 2)), (0, 1, 2)),
    "logistic.ppf": Case(stats.logistic.ppf, ST.logistic.ppf, _args(_u(0.05, 0.95), 0.5, 1.5),
                         (0,)),
    "expon.logpdf": Case(stats.expon.logpdf, ST.expon.logpdf,
                         _args(_u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2)),
    "expon.cdf": Case(stats.expon.cdf, ST.expon.cdf, _args(_u(0.5, 4), _u(-0.4, 0.4),
                                                           _u(0.5, 2)), (0, 1, 2)),
    "expon.logsf": Case(stats.expon.logsf, ST.expon.logsf, _args(_u(0.5, 4), _u(-0.4, 0.4),
                                                                 _u(0.5, 2)), (0, 1, 2)),
    "expon.ppf": Case(stats.expon.ppf, ST.expon.ppf, _args(_u(0.05, 0.95), 0.5, 1.5), (0,)),
    "uniform.logpdf": Case(stats.uniform.logpdf, ST.uniform.logpdf,
                           _args(_u(0.6, 1.4), 0.5, _u(1.0, 2.0)), (2,)),
    "uniform.cdf": Case(stats.uniform.cdf, ST.uniform.cdf,
                        _args(_u(0.6, 1.4), _u(0.2, 0.5), _u(1.0, 2.0)), (0, 1, 2)),
    "multivariate_normal.logpdf": Case(
        stats.multivariate_normal.logpdf, ST.multivariate_normal.logpdf,
        _args(_u(-2, 2, (5, 3)), _u(-1, 1, (3,)), _spd), (0, 1, 2),
        astats.multivariate_normal.logpdf, symmetric=(2,)),
    "multivariate_normal.pdf1": Case(
        stats.multivariate_normal.pdf, ST.multivariate_normal.pdf,
        _args(_u(-1, 1, (3,)), _u(-1, 1, (3,)), _spd), (0, 1, 2)),
    "multivariate_normal.diag": Case(
        stats.multivariate_normal.logpdf, ST.multivariate_normal.logpdf,
        _args(_u(-2, 2, (4, 3)), _u(-1, 1, (3,)), _u(0.5, 2, (3,))), (0, 1, 2)),
    "multivariate_t.logpdf": Case(
        stats.multivariate_t.logpdf, ST.multivariate_t.logpdf,
        _args(_u(-2, 2, (5, 3)), _u(-1, 1, (3,)), _spd, _u(1.5, 9.0, ())), (0, 1, 2, 3),
        symmetric=(2,)),
    "multivariate_t.pdf1": Case(
        stats.multivariate_t.pdf, ST.multivariate_t.pdf,
        _args(_u(-1, 1, (3,)), _u(-1, 1, (3,)), _spd, _u(0.5, 4.0, ())), (0, 1, 2, 3)),
    "multivariate_t.diag": Case(
        stats.multivariate_t.logpdf, ST.multivariate_t.logpdf,
        _args(_u(-2, 2, (4, 3)), _u(-1, 1, (3,)), _u(0.5, 2, (3,)), 2.5), (0, 1, 2)),
    # distributions beyond autograd's (jax.scipy has most): scipy is the reference
    "lognorm.logpdf": Case(stats.lognorm.logpdf, ST.lognorm.logpdf,
                           _args(_u(0.6, 4), _u(0.3, 1.5), _u(-0.4, 0.4), _u(0.5, 2)),
                           (0, 1, 2, 3)),
    "lognorm.cdf": Case(stats.lognorm.cdf, ST.lognorm.cdf,
                        _args(_u(0.6, 4), _u(0.3, 1.5), _u(-0.4, 0.4), _u(0.5, 2)),
                        (0, 1, 2, 3)),
    "lognorm.logsf": Case(stats.lognorm.logsf, ST.lognorm.logsf,
                          _args(_u(0.6, 40), _u(0.3, 1.5)), (0, 1)),
    "lognorm.logcdf": Case(stats.lognorm.logcdf, ST.lognorm.logcdf,
                           _args(_u(0.01, 4), _u(0.3, 1.5)), (0, 1)),
    "lognorm.ppf": Case(stats.lognorm.ppf, ST.lognorm.ppf,
                        _args(_u(0.05, 0.95), _u(0.3, 1.5), 0.2, 1.5), (0, 1)),
    "skewnorm.logpdf": Case(stats.skewnorm.logpdf, ST.skewnorm.logpdf,
                            _args(_u(-3, 3), _u(-4, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                            (0, 1, 2, 3)),
    "skewnorm.pdf": Case(stats.skewnorm.pdf, ST.skewnorm.pdf,
                         _args(_u(-3, 3), _u(-4, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2, 3)),
    # (Owen's T; scipy's own value, where it is below 1e-6 with a > 0, is a numerical
    # integral: its tails against mpmath in tests/test_scipy_owens.py)
    "skewnorm.cdf": Case(stats.skewnorm.cdf, ST.skewnorm.cdf,
                         _args(_u(-3, 3), _u(-4, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2, 3),
                         rtol=1e-12),
    "skewnorm.sf": Case(stats.skewnorm.sf, ST.skewnorm.sf,
                        _args(_u(-3, 3), _u(-4, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2, 3),
                        rtol=1e-12),
    "skewnorm.logcdf": Case(stats.skewnorm.logcdf, ST.skewnorm.logcdf,
                            _args(_u(-3, 3), _u(-4, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                            (0, 1, 2, 3), rtol=1e-12),
    "skewnorm.logsf": Case(stats.skewnorm.logsf, ST.skewnorm.logsf,
                           _args(_u(-3, 3), _u(-4, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                           (0, 1, 2, 3), rtol=1e-12),
    "loggamma.logpdf": Case(stats.loggamma.logpdf, ST.loggamma.logpdf,
                            _args(_u(-3, 2), _u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                            (0, 1, 2, 3)),
    "loggamma.pdf": Case(stats.loggamma.pdf, ST.loggamma.pdf,
                         _args(_u(-3, 2), _u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2, 3)),
    "loggamma.cdf": Case(stats.loggamma.cdf, ST.loggamma.cdf,
                         _args(_u(-3, 2), _u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 2, 3)),
    "loggamma.sf": Case(stats.loggamma.sf, ST.loggamma.sf,
                        _args(_u(-3, 2), _u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 2, 3)),
    "loggamma.logcdf": Case(stats.loggamma.logcdf, ST.loggamma.logcdf,
                            _args(_u(-3, 2), _u(0.5, 4)), (0,)),
    "loggamma.logsf": Case(stats.loggamma.logsf, ST.loggamma.logsf,
                           _args(_u(-3, 2), _u(0.5, 4)), (0,)),
    "halfnorm.logpdf": Case(stats.halfnorm.logpdf, ST.halfnorm.logpdf,
                            _args(_u(0.5, 3), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2)),
    "halfnorm.cdf": Case(stats.halfnorm.cdf, ST.halfnorm.cdf,
                         _args(_u(0.5, 3), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2)),
    "halfnorm.logsf": Case(stats.halfnorm.logsf, ST.halfnorm.logsf,
                           _args(_u(0.5, 15), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2)),
    "halfnorm.logcdf": Case(stats.halfnorm.logcdf, ST.halfnorm.logcdf, _args(_u(0.05, 3)),
                            (0,)),
    "halfnorm.ppf": Case(stats.halfnorm.ppf, ST.halfnorm.ppf, _args(_u(0.05, 0.95), 0.2, 1.5),
                         (0,)),
    "gumbel_r.logpdf": Case(stats.gumbel_r.logpdf, ST.gumbel_r.logpdf,
                            _args(_u(-3, 5), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "gumbel_r.cdf": Case(stats.gumbel_r.cdf, ST.gumbel_r.cdf,
                         _args(_u(-3, 5), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "gumbel_r.logsf": Case(stats.gumbel_r.logsf, ST.gumbel_r.logsf,
                           _args(_u(-3, 30), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "gumbel_r.logcdf": Case(stats.gumbel_r.logcdf, ST.gumbel_r.logcdf,
                            _args(_u(-3, 5)), (0,)),
    "gumbel_r.ppf": Case(stats.gumbel_r.ppf, ST.gumbel_r.ppf, _args(_u(0.05, 0.95), 0.2, 1.5),
                         (0,)),
    "gumbel_l.logpdf": Case(stats.gumbel_l.logpdf, ST.gumbel_l.logpdf,
                            _args(_u(-5, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "gumbel_l.logcdf": Case(stats.gumbel_l.logcdf, ST.gumbel_l.logcdf,
                            _args(_u(-30, 3), _u(-1, 1), _u(0.5, 2)), (0, 1, 2)),
    "gumbel_l.sf": Case(stats.gumbel_l.sf, ST.gumbel_l.sf, _args(_u(-5, 3)), (0,)),
    "gumbel_l.logsf": Case(stats.gumbel_l.logsf, ST.gumbel_l.logsf, _args(_u(-5, 3)), (0,)),
    "gumbel_l.ppf": Case(stats.gumbel_l.ppf, ST.gumbel_l.ppf, _args(_u(0.05, 0.95), 0.2, 1.5),
                         (0,)),
    "rayleigh.logpdf": Case(stats.rayleigh.logpdf, ST.rayleigh.logpdf,
                            _args(_u(0.5, 3), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2)),
    "rayleigh.cdf": Case(stats.rayleigh.cdf, ST.rayleigh.cdf,
                         _args(_u(0.5, 3), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2)),
    "rayleigh.logcdf": Case(stats.rayleigh.logcdf, ST.rayleigh.logcdf, _args(_u(0.05, 3)),
                            (0,)),
    "rayleigh.logsf": Case(stats.rayleigh.logsf, ST.rayleigh.logsf, _args(_u(0.05, 3)), (0,)),
    "rayleigh.ppf": Case(stats.rayleigh.ppf, ST.rayleigh.ppf, _args(_u(0.05, 0.95), 0.2, 1.5),
                         (0,)),
    "pareto.logpdf": Case(stats.pareto.logpdf, ST.pareto.logpdf,
                          _args(_u(1.6, 6), _u(0.5, 4), _u(-0.2, 0.2), _u(0.5, 1.2)),
                          (0, 1, 2, 3)),
    "pareto.cdf": Case(stats.pareto.cdf, ST.pareto.cdf,
                       _args(_u(1.6, 6), _u(0.5, 4), _u(-0.2, 0.2), _u(0.5, 1.2)),
                       (0, 1, 2, 3)),
    "pareto.logcdf": Case(stats.pareto.logcdf, ST.pareto.logcdf, _args(_u(1.1, 6), _u(0.5, 4)),
                          (0, 1)),
    "pareto.logsf": Case(stats.pareto.logsf, ST.pareto.logsf, _args(_u(1.1, 60), _u(0.5, 4)),
                         (0, 1)),
    "pareto.ppf": Case(stats.pareto.ppf, ST.pareto.ppf, _args(_u(0.05, 0.95), _u(0.5, 4)),
                       (0, 1)),
    "weibull_min.logpdf": Case(stats.weibull_min.logpdf, ST.weibull_min.logpdf,
                               _args(_u(0.5, 3), _u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                               (0, 1, 2, 3)),
    "weibull_min.cdf": Case(stats.weibull_min.cdf, ST.weibull_min.cdf,
                            _args(_u(0.5, 3), _u(0.5, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                            (0, 1, 2, 3)),
    "weibull_min.logcdf": Case(stats.weibull_min.logcdf, ST.weibull_min.logcdf,
                               _args(_u(0.05, 3), _u(0.5, 4)), (0, 1)),
    "weibull_min.logsf": Case(stats.weibull_min.logsf, ST.weibull_min.logsf,
                              _args(_u(0.05, 3), _u(0.5, 4)), (0, 1)),
    "weibull_min.ppf": Case(stats.weibull_min.ppf, ST.weibull_min.ppf,
                            _args(_u(0.05, 0.95), _u(0.5, 4), 0.2, 1.5), (0, 1)),
    "invgamma.logpdf": Case(stats.invgamma.logpdf, ST.invgamma.logpdf,
                            _args(_u(0.5, 3), _u(0.5, 4), _u(-0.2, 0.2), _u(0.5, 2)),
                            (0, 1, 2, 3)),
    # (the shape a has no derivative in cdf / sf: refused, as gamma.cdf's)
    "invgamma.cdf": Case(stats.invgamma.cdf, ST.invgamma.cdf,
                         _args(_u(0.5, 3), _u(0.5, 4), _u(-0.2, 0.2), _u(0.5, 2)), (0, 2, 3)),
    "invgamma.logsf": Case(stats.invgamma.logsf, ST.invgamma.logsf,
                           _args(_u(0.5, 3), _u(0.5, 4)), (0,)),
    "f.logpdf": Case(stats.f.logpdf, ST.f.logpdf,
                     _args(_u(0.2, 4), _u(1.0, 9), _u(1.0, 9), _u(-0.1, 0.1), _u(0.5, 2)),
                     (0, 1, 2, 3, 4)),
    # f and nbinom tails from the incomplete beta rows: in dfn, dfd and n through betainc_da /
    # betainc_db (#31)
    "f.cdf": Case(stats.f.cdf, ST.f.cdf,
                  _args(_u(0.05, 6), _u(0.5, 20), _u(0.5, 20), _u(-0.05, 0.05), _u(0.5, 2)),
                  (0, 1, 2, 3, 4)),
    "f.sf": Case(stats.f.sf, ST.f.sf, _args(_u(0.05, 30), _u(0.5, 20), _u(0.5, 20)),
                 (0, 1, 2)),
    "f.logcdf": Case(stats.f.logcdf, ST.f.logcdf, _args(_u(0.01, 6), _u(1, 20), _u(1, 20)),
                     (0, 1, 2)),
    "f.logsf": Case(stats.f.logsf, ST.f.logsf, _args(_u(0.05, 60), _u(1, 20), _u(1, 20)),
                    (0, 1, 2)),
    "gennorm.logpdf": Case(stats.gennorm.logpdf, ST.gennorm.logpdf,
                           _args(_u(-3, 3), _u(0.7, 4), _u(-0.4, 0.4), _u(0.5, 2)),
                           (0, 1, 2, 3)),
    # gennorm's tails: Q(1 / beta, |z|^beta) / 2, differentiable in beta through gammaincc's a
    "gennorm.cdf": Case(stats.gennorm.cdf, ST.gennorm.cdf,
                        _args(_u(-3, 3), _u(0.7, 4), _u(-0.4, 0.4), _u(0.5, 2)), (0, 1, 2, 3)),
    "gennorm.sf": Case(stats.gennorm.sf, ST.gennorm.sf, _args(_u(-3, 3), _u(0.7, 4)), (0, 1)),
    "gennorm.logcdf": Case(stats.gennorm.logcdf, ST.gennorm.logcdf,
                           _args(_u(-3, 3), _u(0.7, 4)), (0, 1)),
    "gennorm.logsf": Case(stats.gennorm.logsf, ST.gennorm.logsf, _args(_u(-3, 3), _u(0.7, 4)),
                          (0, 1)),
    "truncnorm.logpdf": Case(stats.truncnorm.logpdf, ST.truncnorm.logpdf,
                             _args(_u(-0.5, 1.4), _u(-2, -0.8), _u(1.5, 3), _u(-0.2, 0.2),
                                   _u(0.9, 1.2)), (0, 1, 2, 3, 4)),
    "truncnorm.logpdf_tail": Case(stats.truncnorm.logpdf, ST.truncnorm.logpdf,
                                  _args(_u(4.1, 4.9), 4.0, 5.0), (0,), rtol=1e-9),
    "truncnorm.cdf": Case(stats.truncnorm.cdf, ST.truncnorm.cdf,
                          _args(_u(-0.5, 1.4), _u(-2, -0.8), _u(1.5, 3), _u(-0.2, 0.2),
                                _u(0.9, 1.2)), (0, 1, 2, 3, 4), rtol=1e-9),
    "truncnorm.sf": Case(stats.truncnorm.sf, ST.truncnorm.sf,
                         _args(_u(-0.5, 1.4), _u(-2, -0.8), _u(1.5, 3)), (0, 1, 2), rtol=1e-9),
    "truncnorm.logcdf": Case(stats.truncnorm.logcdf, ST.truncnorm.logcdf,
                             _args(_u(-0.5, 1.4), _u(-2, -0.8), _u(1.5, 3), _u(-0.2, 0.2),
                                   _u(0.9, 1.2)), (0, 1, 2, 3, 4), rtol=1e-9),
    "truncnorm.logsf": Case(stats.truncnorm.logsf, ST.truncnorm.logsf,
                            _args(_u(-0.5, 1.4), _u(-2, -0.8), _u(1.5, 3), _u(-0.2, 0.2),
                                  _u(0.9, 1.2)), (0, 1, 2, 3, 4), rtol=1e-9),
    # both tails: each mass is taken on its own accurate side of 0
    "truncnorm.logcdf_tail": Case(stats.truncnorm.logcdf, ST.truncnorm.logcdf,
                                  _args(_u(-5.9, -5.1), -6.0, -3.0), (0, 1, 2), rtol=1e-9),
    "truncnorm.logsf_tail": Case(stats.truncnorm.logsf, ST.truncnorm.logsf,
                                 _args(_u(4.1, 4.9), 4.0, 6.0), (0, 1, 2), rtol=1e-9),
    "vonmises.logpdf": Case(stats.vonmises.logpdf, ST.vonmises.logpdf,
                            _args(_u(-5, 5), _u(0.1, 30), _u(-1, 1), _u(0.5, 2)), (0, 1, 2, 3)),
    "vonmises.logpdf_concentrated": Case(stats.vonmises.logpdf, ST.vonmises.logpdf,
                                         _args(_u(-0.05, 0.05), _u(550, 2000)), (0, 1)),
    # vonmises' cdf on the whole line (turns counted), its series below kappa = 25 and its
    # asymptotic series above; against scipy below 50 only (scipy's normal approximation
    # from 50 on is off by up to 3e-6: test_vonmises_cdf_against_mpmath); scipy's series
    # is good to 2e-13 absolute (its 1 - cdf in the tails too), so rtol 1e-9 on values kept
    # away from 0: over several turns at moderate kappa, near the mode above the seam
    "vonmises.cdf": Case(stats.vonmises.cdf, ST.vonmises.cdf,
                         _args(_u(-9, 9), _u(0.1, 6), _u(-1, 1), _u(0.5, 2)), (0, 1, 2, 3),
                         rtol=1e-9),
    "vonmises.cdf_concentrated": Case(stats.vonmises.cdf, ST.vonmises.cdf,
                                      _args(_u(-0.3, 0.3), _u(26, 48)), (0, 1), rtol=1e-9),
    "vonmises.sf": Case(stats.vonmises.sf, ST.vonmises.sf,
                        _args(_u(-9, 9), _u(0.1, 6), _u(-1, 1), _u(0.5, 2)), (0, 1, 2, 3),
                        rtol=1e-9),
    "vonmises.sf_concentrated": Case(stats.vonmises.sf, ST.vonmises.sf,
                                     _args(_u(-0.3, 0.3), _u(20, 48), _u(-0.1, 0.1)), (0, 1, 2),
                                     rtol=1e-9),
    "vonmises.logcdf": Case(stats.vonmises.logcdf, ST.vonmises.logcdf,
                            _args(_u(-2.5, 3), _u(0.1, 4), _u(-0.3, 0.3), _u(0.8, 1.2)),
                            (0, 1, 2, 3), rtol=1e-9),
    "vonmises.logsf": Case(stats.vonmises.logsf, ST.vonmises.logsf,
                           _args(_u(-3, 2.5), _u(0.1, 4), _u(-0.3, 0.3), _u(0.8, 1.2)),
                           (0, 1, 2, 3), rtol=1e-9),
    # (p is used as given, scipy adjusts its last entry: the two agree along the simplex)
    "multinomial.logpmf": Case(
        lambda z: stats.multinomial.logpmf(np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 2.0]]), 6,
                                           bsp.softmax(z)),
        lambda z: ST.multinomial.logpmf(np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 2.0]]), 6,
                                        S.softmax(z)), _args(_u(-1, 1, (3,))), (0,)),
    "geom.logpmf": Case(stats.geom.logpmf, ST.geom.logpmf,
                        _args(np.array([1.0, 2.0, 3.0, 7.0]), _u(0.05, 0.95)), (1,)),
    "geom.cdf": Case(stats.geom.cdf, ST.geom.cdf,
                     _args(np.array([0.0, 1.0, 2.5, 7.0]), _u(0.05, 0.95)), (1,)),
    "geom.logcdf": Case(stats.geom.logcdf, ST.geom.logcdf,
                        _args(np.array([1.0, 2.0, 2.5, 30.0]), _u(0.05, 0.95)), (1,)),
    "geom.logsf": Case(stats.geom.logsf, ST.geom.logsf,
                       _args(np.array([0.0, 1.0, 2.5, 7.0]), _u(0.05, 0.95)), (1,)),
    "nbinom.logpmf": Case(stats.nbinom.logpmf, ST.nbinom.logpmf,
                          _args(np.array([0.0, 1.0, 3.0, 9.0]), _u(0.5, 6), _u(0.05, 0.95)),
                          (1, 2)),
    "nbinom.cdf": Case(stats.nbinom.cdf, ST.nbinom.cdf,
                       _args(np.array([-1.0, 0.0, 2.5, 9.0]), _u(0.5, 6), _u(0.05, 0.95)),
                       (1, 2)),
    "nbinom.sf": Case(stats.nbinom.sf, ST.nbinom.sf,
                      _args(np.array([-1.0, 0.0, 2.5, 9.0]), _u(0.5, 6), _u(0.05, 0.95)),
                      (1, 2)),
    "nbinom.logcdf": Case(stats.nbinom.logcdf, ST.nbinom.logcdf,
                          _args(np.array([0.0, 1.0, 3.5, 9.0]), _u(0.5, 6), _u(0.05, 0.95)),
                          (1, 2)),
    "nbinom.logsf": Case(stats.nbinom.logsf, ST.nbinom.logsf,
                         _args(np.array([-1.0, 0.0, 3.5, 9.0]), _u(0.5, 6), _u(0.05, 0.95)),
                         (1, 2)),
    "betabinom.logpmf": Case(stats.betabinom.logpmf, ST.betabinom.logpmf,
                             _args(np.array([0.0, 2.0, 5.0, 9.0]), 9.0, _u(0.5, 4),
                                   _u(0.5, 4)), (2, 3)),
    # -- linalg
    "solve_triangular": Case(lambda a, b: linalg.solve_triangular(a, b, lower=True),
                             lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True),
                             _args(lambda r: r.normal(size=(3, 3)) + 4 * np.eye(3),
                                   _u(-1, 1, (3, 2))), (0, 1),
                             lambda a, b: alinalg.solve_triangular(a, b, lower=True)),
    "solve_triangular_T": Case(
        lambda a, b: linalg.solve_triangular(a, b, trans="T", unit_diagonal=True),
        lambda a, b: scipy.linalg.solve_triangular(a, b, trans="T", unit_diagonal=True),
        _args(lambda r: r.normal(size=(3, 3)), _u(-1, 1, (3,))), (0, 1)),
    "cho_solve": Case(lambda a, b: linalg.cho_solve(linalg.cho_factor(a), b),
                      lambda a, b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b),
                      _args(_spd, _u(-1, 1, (3,))), (0, 1)),
    "cho_solve_lower": Case(lambda a, b: linalg.cho_solve(linalg.cho_factor(a, lower=True), b),
                            lambda a, b: scipy.linalg.cho_solve(
                                scipy.linalg.cho_factor(a, lower=True), b),
                            _args(_spd, _u(-1, 1, (3, 2))), (0, 1)),
    "expm": Case(linalg.expm, scipy.linalg.expm, _args(lambda r: r.normal(size=(3, 3))), (0,),
                 rtol=1e-12),
    "expm_large": Case(linalg.expm, scipy.linalg.expm,
                       _args(lambda r: 4.0 * r.normal(size=(3, 3))), (0,), rtol=1e-10),
    # logm: near I (no square root), an SPD matrix, a non-normal one with a wide spectrum
    # (several roots); values to scipy's own accuracy (its Schur form; ours has none)
    "logm_near_identity": Case(linalg.logm, scipy.linalg.logm,
                               _args(lambda r: np.eye(3) + 0.07 * r.normal(size=(3, 3))), (0,)),
    "logm_spd": Case(linalg.logm, scipy.linalg.logm, _args(_spd), (0,), rtol=1e-11),
    "logm_spread": Case(linalg.logm, _scipy_logm_quiet,
                        _args(lambda r: np.diag([50.0, 2.0, 0.02])
                              + np.triu(0.1 * r.normal(size=(3, 3)), 1)), (0,), rtol=1e-11),
    "lu_factor": Case(lambda a: linalg.lu_factor(a)[0], lambda a: scipy.linalg.lu_factor(a)[0],
                      _args(lambda r: r.normal(size=(4, 4))), (0,)),
    "lu_factor_tall": Case(lambda a: linalg.lu_factor(a)[0],
                           lambda a: scipy.linalg.lu_factor(a)[0],
                           _args(lambda r: r.normal(size=(5, 3))), (0,)),
    "lu_factor_wide": Case(lambda a: linalg.lu_factor(a)[0],
                           lambda a: scipy.linalg.lu_factor(a)[0],
                           _args(lambda r: r.normal(size=(3, 5))), (0,)),
    "lu_solve": Case(lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b),
                     lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b),
                     _args(lambda r: r.normal(size=(4, 4)), _u(-1, 1, (4, 2))), (0, 1),
                     # autograd has no lu: its solve is the same function of (a, b)
                     lambda a, b: anp.linalg.solve(a, b)),
    "lu_solve_T": Case(lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b, trans=1),
                       lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=1),
                       _args(lambda r: r.normal(size=(3, 3)), _u(-1, 1, (3,))), (0, 1),
                       lambda a, b: anp.linalg.solve(a.T, b)),
    "lu_L": Case(lambda a: linalg.lu(a)[1], lambda a: scipy.linalg.lu(a)[1],
                 _args(lambda r: r.normal(size=(4, 3))), (0,)),
    "lu_U": Case(lambda a: linalg.lu(a)[2], lambda a: scipy.linalg.lu(a)[2],
                 _args(lambda r: r.normal(size=(3, 4))), (0,)),
    "lu_permute_l": Case(lambda a: linalg.lu(a, permute_l=True)[0],
                         lambda a: scipy.linalg.lu(a, permute_l=True)[0],
                         _args(lambda r: r.normal(size=(4, 4))), (0,)),
    # -- signal
    "convolve": Case(signal.convolve, scipy.signal.convolve,
                     _args(_u(-1, 1, (7,)), _u(-1, 1, (3,))), (0, 1)),
    "convolve_same_2d": Case(lambda a, k: signal.convolve(a, k, mode="same"),
                             lambda a, k: scipy.signal.convolve(a, k, mode="same"),
                             _args(_u(-1, 1, (5, 4)), _u(-1, 1, (3, 2))), (0, 1)),
    "convolve_valid_3d": Case(lambda a, k: signal.convolve(a, k, mode="valid"),
                              lambda a, k: scipy.signal.convolve(a, k, mode="valid"),
                              _args(_u(-1, 1, (4, 3, 3)), _u(-1, 1, (2, 2, 2))), (0, 1)),
    "correlate_valid_swap": Case(lambda a, k: signal.correlate(a, k, mode="valid"),
                                 lambda a, k: scipy.signal.correlate(a, k, mode="valid"),
                                 _args(_u(-1, 1, (2, 3)), _u(-1, 1, (4, 5))), (0, 1)),
    "correlate_same": Case(lambda a, k: signal.correlate(a, k, mode="same"),
                           lambda a, k: scipy.signal.correlate(a, k, mode="same"),
                           _args(_u(-1, 1, (6,)), _u(-1, 1, (4,))), (0, 1)),
    "convolve2d": Case(signal.convolve2d, scipy.signal.convolve2d,
                       _args(_u(-1, 1, (4, 5)), _u(-1, 1, (2, 3))), (0, 1)),
    "correlate2d_valid": Case(lambda a, k: signal.correlate2d(a, k, mode="valid"),
                              lambda a, k: scipy.signal.correlate2d(a, k, mode="valid"),
                              _args(_u(-1, 1, (4, 5)), _u(-1, 1, (2, 3))), (0, 1)),
    # correlate2d's 'same' window starts one later than correlate's where a side of the
    # kernel is even (3 x 3 does not tell them apart)
    "correlate2d_same_even": Case(*_CORRELATE2D_SAME,
                                  _args(_u(-1, 1, (5, 6)), _u(-1, 1, (3, 2))), (0, 1)),
    "correlate2d_same_big_kernel": Case(*_CORRELATE2D_SAME,
                                        _args(_u(-1, 1, (3, 4)), _u(-1, 1, (4, 6))), (0, 1)),
    "fftconvolve_same": Case(lambda a, k: signal.fftconvolve(a, k, mode="same"),
                             lambda a, k: scipy.signal.fftconvolve(a, k, mode="same"),
                             _args(_u(-1, 1, (5, 4)), _u(-1, 1, (2, 3))), (0, 1), rtol=1e-9),
    "oaconvolve": Case(signal.oaconvolve, scipy.signal.oaconvolve,
                       _args(_u(-1, 1, (9,)), _u(-1, 1, (4,))), (0, 1), rtol=1e-9),
}


# entropy: scipy's value and central differences of it at points across each branch
# (gamma's series from a = 250, invgamma's from 200, chi2's from df = 500, t's from 100); the
# gradient to loc is 0
_ENTROPY_SHAPES = {
    "norm": (), "expon": (), "uniform": (), "laplace": (), "logistic": (), "cauchy": (),
    "gumbel_r": (), "gumbel_l": (), "rayleigh": (), "halfnorm": (), "lognorm": (_u(0.3, 1.5),),
    "weibull_min": (_u(0.5, 3),), "pareto": (_u(1, 4),), "gennorm": (_u(0.5, 3),),
    "vonmises": (_u(0.2, 20),), "gamma": (_at(0.7, 3.0, 240.0, 300.0),),
    "invgamma": (_at(0.8, 5.0, 150.0, 260.0),), "t": (_at(0.9, 4.0, 80.0, 250.0),),
    "chi2": (_at(0.7, 9.0, 240.0, 600.0),), "beta": (_u(0.3, 5), _u(0.3, 5))}
for _dist, _shapes in _ENTROPY_SHAPES.items():
    CASES[f"{_dist}.entropy"] = Case(getattr(stats, _dist).entropy,
                                     getattr(ST, _dist).entropy,
                                     _args(*_shapes, _u(-1, 1), _u(0.5, 2)),
                                     tuple(range(len(_shapes) + 2)), rtol=1e-12)
CASES["bernoulli.entropy"] = Case(stats.bernoulli.entropy, ST.bernoulli.entropy,
                                  _args(_u(0.05, 0.95)), (0,))
CASES["multivariate_normal.entropy"] = Case(stats.multivariate_normal.entropy,
                                            ST.multivariate_normal.entropy,
                                            _args(_u(-1, 1, (3,)), _spd), (0, 1))
del _dist, _shapes


def _stack2(pair):
    import burnumba.numpy as bnp
    return bnp.stack(pair)


def _fold(g):
    """A symmetric matrix's gradient as the lower triangle alone (g_ij + g_ji below the
    diagonal): the derivative along symmetric perturbations, whatever the convention."""
    return np.tril(g + g.T, -1) + np.diag(np.diag(g))


def _value(f, args, argnums):
    return bn.trace(lambda *a: f(*a), *args, argnums=argnums)(*args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    case = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))   # the same points every run
    args = case.args(rng)
    want = case.ref(*args)
    got = _value(case.ours, args, case.argnums)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=case.rtol, atol=1e-13)
    w = rng.normal(size=np.shape(want))

    def loss(*a):
        return np.sum(case.ours(*a) * w)
    grads = bn.grad(loss, argnums=case.argnums)(*args)

    def ref_loss(*a):
        return float(np.sum(case.ref(*a) * w))
    for k, g in zip(case.argnums, grads):
        np.testing.assert_allclose(g, central_diff(ref_loss, args, k), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name}: d/d argument {k}")
    if case.autograd is not None:
        ref = autograd.grad(lambda *a: anp.sum(case.autograd(*a) * w), case.argnums)(*args)
        for k, g, r in zip(case.argnums, grads, ref):
            if k in case.symmetric:
                g, r = _fold(g), _fold(r)
            np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-11,
                                       err_msg=f"{name}: against autograd, argument {k}")


def test_dirichlet_gradient_in_x():
    """d/dx logpdf = (alpha - 1) / x (x on the simplex: no central differences of scipy's,
    which refuses points off it), as autograd's rule."""
    x, alpha = np.array([0.2, 0.3, 0.5]), np.array([1.5, 0.7, 3.0])
    g = bn.grad(stats.dirichlet.logpdf)(x, alpha)
    np.testing.assert_allclose(g, (alpha - 1) / x, rtol=1e-14)
    xs = np.array([[0.2, 0.1], [0.3, 0.6], [0.5, 0.3]])        # two points, scipy's layout
    np.testing.assert_allclose(_value(stats.dirichlet.logpdf, (xs, alpha), (0, 1)),
                               ST.dirichlet.logpdf(xs, alpha), rtol=1e-13)


def test_every_public_function_has_a_case():
    """Adding a function to burnumba.scipy without a row in CASES fails."""
    for public in (bsp.__all__, linalg.__all__, signal.__all__):
        for fn in public:
            assert fn in _ELSEWHERE or any(c == fn or c.startswith(fn + "_") or (
                c.startswith(fn) and c[len(fn):].isdigit()) for c in CASES), fn
    for dist in stats.__all__:
        assert any(c.startswith(dist + ".") for c in CASES), dist


# tested by the op-table tests (their own rows), by a test below, or in test_scipy_dense.py
_ELSEWHERE = {"psi", "polygamma", "erfc", "erfinv", "ndtri", "log_ndtr", "i0", "i1",
              "j0", "j1", "y0", "y1", "gammainc", "gammaincc", "gammaincinv", "gammainccinv",
              "jn", "yn", "cho_factor", "jv", "yv", "iv", "ive", "kv", "kve", "k0", "k1",
              "k0e", "k1e", "i0e", "i1e",
              "betainc", "betaincc",
              *linalg._dense.__all__}


# -- the special rows' scalar code against scipy, over the domain -------------------------
def _grid(rng):
    return np.concatenate([rng.uniform(-60, 60, 400), rng.uniform(0, 4, 400),
                           np.exp(rng.uniform(-300, 300, 300)),
                           -np.exp(rng.uniform(-8, 8, 200)) + 0.25])


SCALAR = [
    ("lgamma", kspecial.lgamma, S.gammaln, 1e-14, 1e-12),
    ("digamma", lambda x: kspecial.polygamma(0, x), S.digamma, 1e-14, 1e-10),
    ("trigamma", lambda x: kspecial.polygamma(1, x), lambda x: S.polygamma(1, x), 0, 1e-12),
    ("polygamma3", lambda x: kspecial.polygamma(3, x), lambda x: S.polygamma(3, x), 0, 1e-12),
    ("erfinv", kspecial.erfinv, S.erfinv, 0, 1e-14),
    ("ndtri", kspecial.ndtri, S.ndtri, 0, 1e-14),
    ("log_ndtr", kspecial.log_ndtr, S.log_ndtr, 1e-300, 1e-13),
    ("i0", kspecial.i0, S.i0, 0, 1e-14),
    ("i1", kspecial.i1, S.i1, 0, 1e-14),
]


@pytest.mark.parametrize("name, ours, ref, atol, rtol", SCALAR, ids=[s[0] for s in SCALAR])
def test_special_scalar_code_matches_scipy(name, ours, ref, atol, rtol):
    """kernels/special.py against scipy.special: random points over the whole domain, the
    tails and the points near the poles (digamma, whose relative accuracy near its positive
    root and scipy's near its poles are both limited, at an absolute 1e-14 there)."""
    rng = np.random.default_rng(3)
    if name in ("erfinv",):
        xs = np.concatenate([rng.uniform(-1, 1, 800), 1 - np.exp(rng.uniform(-36, 0, 300)),
                             -np.exp(rng.uniform(-700, 0, 300))])
    elif name == "ndtri":
        xs = np.concatenate([rng.uniform(0, 1, 800), np.exp(rng.uniform(-700, 0, 400)),
                             1 - np.exp(rng.uniform(-36, 0, 200))])
    else:
        xs = _grid(rng)
        if name.startswith(("trigamma", "polygamma")):
            xs = xs[np.abs(xs) < 1e5]
        if name == "digamma":        # scipy's reflection loses digits near the poles
            xs = xs[(xs > 0) | (np.abs(xs - np.round(xs)) > 0.05)]
        if name in ("i0", "i1"):
            xs = xs[np.abs(xs) < 700]
    with np.errstate(all="ignore"):
        got = np.array([ours(np.float64(x)) for x in xs])
        want = ref(xs)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _bessel_points(rng, second_kind):
    xs = np.concatenate([rng.uniform(0, 25, 1500), np.exp(rng.uniform(-30, np.log(25), 500)),
                         [1.0, 1.0 - 2**-52, 25.0, 25.0 + 2**-48]])
    return xs if second_kind else np.concatenate([xs, -xs])


@pytest.mark.parametrize("name", ["j0", "j1", "y0", "y1"])
def test_bessel_scalar_code_matches_scipy(name):
    """kernels/special_bessel.py against scipy.special (Cephes), max relative error measured
    below 2e-14 for |x| <= 25 (the series, Miller's recurrence and their seams); next to a
    zero only absolute digits exist, so the check is rtol 1e-13 with an absolute 2e-15
    (scipy's own absolute accuracy there, about 1e-16 of the function's scale). Beyond 25
    scipy reduces x - pi/4 in double and loses digits as x grows (1e-12 relative at 1600,
    against mpmath; ours stay within 2e-15 of the scale), so there the check is absolute,
    1e-13 of the envelope sqrt(2 / (pi x)), up to x = 2000."""
    rng = np.random.default_rng(5)
    ours = getattr(kbessel, name)
    ref = getattr(S, name)
    xs = _bessel_points(rng, name.startswith("y"))
    got = np.array([ours(np.float64(x)) for x in xs])
    np.testing.assert_allclose(got, ref(xs), rtol=1e-13, atol=2e-15)
    far = rng.uniform(25, 2000, 1000)
    got = np.array([ours(np.float64(x)) for x in far])
    assert np.all(np.abs(got - ref(far)) <= 1e-13 * np.sqrt(2 / (np.pi * far)))


@pytest.mark.parametrize("name", ["jn", "yn"])
def test_integer_order_bessel_scalar_code_matches_scipy(name):
    """jn / yn (kernels/special_bessel.py) against scipy.special for orders -30..30: rtol 1e-13
    with an absolute 5e-15 of the envelope (next to the zeros), x in (-40, 40) for jn and (0,
    40) for yn, and x up to n (J_n's tiny values: relative, measured 5e-14 against mpmath,
    scipy 4e-14)."""
    rng = np.random.default_rng(6)
    ours, ref = getattr(kbessel, name), getattr(S, name)
    n = rng.integers(-30, 31, 1500)
    x = rng.uniform(-40 if name == "jn" else 0, 40, 1500)
    got = np.array([ours(float(k), v) for k, v in zip(n, x)])
    want = ref(n, x)
    env = np.maximum(np.abs(want), np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x)))))
    assert np.all(np.abs(got - want) <= 1e-13 * np.abs(want) + 5e-15 * env)
    n = rng.integers(2, 60, 800)
    x = n * rng.uniform(0.01, 0.9, 800)
    got = np.array([ours(float(k), v) for k, v in zip(n, x)])
    np.testing.assert_allclose(got, ref(n, x), rtol=1e-12 if name == "jn" else 1e-13)


def test_bessel_derivatives_of_any_order_stay_rows():
    """The Hessian of j1 (j1'' from the traced rule j0 - j1 / x) and of y0 (-y1'), against
    central differences of scipy's first derivatives."""
    x = np.array([0.7, 2.5, 9.0, 14.2])
    h = bn.hessian(lambda x: np.sum(bsp.j1(x)))(x)
    d = lambda x: S.j0(x) - S.j1(x) / x                           # noqa: E731
    np.testing.assert_allclose(np.diag(h), (d(x + 1e-6) - d(x - 1e-6)) / 2e-6, rtol=1e-6)
    h = bn.hessian(lambda x: np.sum(bsp.y0(x)))(x)
    d = lambda x: -S.y1(x)                                        # noqa: E731
    np.testing.assert_allclose(np.diag(h), (d(x + 1e-6) - d(x - 1e-6)) / 2e-6, rtol=1e-6)
    for ours, ref in ((bsp.jn, S.jn), (bsp.yn, S.yn)):
        h = bn.hessian(lambda x: np.sum(ours(4, x)))(x)
        d = lambda x: (ref(3, x) - ref(5, x)) / 2                  # noqa: E731
        np.testing.assert_allclose(np.diag(h), (d(x + 1e-6) - d(x - 1e-6)) / 2e-6, rtol=1e-6)
    with pytest.raises(bn.InputError, match=r"jn\(n, x\): n must hold integers"):
        bn.grad(lambda x: bsp.jn(2.5, x))(1.0)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_scalar_code_matches_scipy(name):
    """kernels/special_gamma.py against scipy.special at rtol 1e-13, for a in (0.1, 50) and x
    in (0, 100) (uniform, and x within a factor e^+-0.6 of a, where series and fraction
    meet). Against mpmath (40 digits) both codes stay within 7e-14 there, the far lower tail
    included (ours 6.7e-14 at values near 1e-110, scipy 5.5e-14), so 1e-13 is about their
    sum (measured 8.6e-14 apart at 20000 points). Up to a = 1000 both lose digits in the
    prefactor (ours 3.7e-13 against mpmath, scipy 1.7e-12): checked at 2e-12."""
    rng = np.random.default_rng(9)
    ours, ref = getattr(kgamma, name), getattr(S, name)
    for amax, rtol in ((50.0, 1e-13), (1000.0, 2e-12)):
        a = np.concatenate([rng.uniform(0.1, amax, 800),
                            np.exp(rng.uniform(np.log(0.1), np.log(amax), 800))])
        x = np.concatenate([rng.uniform(0, 2 * amax, 800),
                            a[800:] * np.exp(rng.normal(0, 0.3, 800))])
        got = np.array([ours(u, v) for u, v in zip(a, x)])
        np.testing.assert_allclose(got, ref(a, x), rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("name", ["gammaincinv", "gammainccinv"])
def test_incomplete_gamma_inverse_scalar_code_matches_scipy_and_inverts(name):
    """The inverses (kernels/special_gamma.py: a first guess, then Halley's steps on the tail
    that keeps its digits) against scipy.special for a in (0.05, 150) and p in (0, 1) (also
    near 0 and 1, as p^5 and p^20): rtol 1e-12 for a >= 0.2, where both invert to rounding;
    for a below that, where x spans hundreds of decades, 5e-13 of the forward function:
    P(a, ours) = p to that. Results below 1e-290 (subnormal in scipy) are left out."""
    rng = np.random.default_rng(11)
    ours, ref = getattr(kgamma, name), getattr(S, name)
    forward = kgamma.gammainc if name == "gammaincinv" else kgamma.gammaincc
    a = np.exp(rng.uniform(np.log(0.05), np.log(150.0), 3000))
    p = rng.uniform(0, 1, 3000) ** rng.choice([1, 5, 20], 3000)
    got = np.array([ours(u, v) for u, v in zip(a, p)])
    want = ref(a, p)
    keep = want > 1e-290
    big = keep & (a >= 0.2)
    np.testing.assert_allclose(got[big], want[big], rtol=1e-12)
    back = np.array([forward(u, v) for u, v in zip(a[keep], got[keep])])
    np.testing.assert_allclose(back, p[keep], rtol=5e-13)


def test_incomplete_gamma_gradients_against_autograd_and_differences():
    """d/dx of gammainc and gammaincc on arrays (a broadcast), against autograd.scipy and
    central differences of scipy's; the Hessian in x (the traced rule) against differences
    of the first derivative."""
    a = np.array([0.4, 1.0, 2.5, 7.0, 30.0])
    x = np.array([0.3, 2.0, 1.5, 9.0, 25.0])
    w = np.array([1.0, -0.5, 2.0, 0.3, 1.5])
    for ours, theirs, ref in ((bsp.gammainc, asp.gammainc, S.gammainc),
                              (bsp.gammaincc, asp.gammaincc, S.gammaincc)):
        g = bn.grad(lambda x: np.sum(ours(a, x) * w))(x)
        np.testing.assert_allclose(g, autograd.grad(lambda x: anp.sum(theirs(a, x) * w))(x),
                                   rtol=1e-12)
        np.testing.assert_allclose(
            g, central_diff(lambda x: float(np.sum(ref(a, x) * w)), (x,), 0), rtol=1e-6)
        h = bn.hessian(lambda x: np.sum(ours(a, x)))(x)
        d = lambda x: bn.grad(lambda x: np.sum(ours(a, x)))(x)       # noqa: E731
        np.testing.assert_allclose(np.diag(h), (d(x + 1e-6) - d(x - 1e-6)) / 2e-6, rtol=1e-6)


def test_gammainc_da_scalar_code_matches_mpmath():
    """dP/da (kernels/special_gamma.py: gammainc_da, the series carrying psi(a + n + 1) or
    Lentz's fraction in forward mode) against mpmath at 40 digits, a in (0.05, 200)
    log-uniform, x in (1e-10, 500) log-uniform, in the bulk (x = a e^(N(0, 1) / sqrt a)) and
    within 1.5 of a (where series and fraction meet): rtol 1e-12 (measured 1.7e-13 at 4800
    points, the worst at values near 1e-280, from the prefactor), atol 1e-290."""
    rng = np.random.default_rng(31)
    a = np.exp(rng.uniform(np.log(0.05), np.log(200.0), 240))
    x = np.concatenate([np.exp(rng.uniform(np.log(1e-10), np.log(500.0), 80)),
                        a[80:160] * np.exp(rng.normal(0, 1, 80) / np.sqrt(a[80:160])),
                        np.maximum(a[160:] + rng.uniform(-1.5, 1.5, 80), 1e-10)])
    x = np.concatenate([x, a[:20], np.nextafter(a[:20], np.inf), a[:20] + 1.0])
    a = np.concatenate([a, a[:20], a[:20], a[:20]])
    got = np.array([kgamma.gammainc_da(u, v) for u, v in zip(a, x)])
    np.testing.assert_allclose(got, mpmath_gammainc_da(a, x), rtol=1e-12, atol=1e-290)
    # a = 0: the one-sided limit -E1(x), in both regions
    e1 = -scipy.special.exp1(np.array([1e-10, 0.5, 1.0, 3.0, 40.0]))
    np.testing.assert_allclose([kgamma.gammainc_da(0.0, v) for v in (1e-10, 0.5, 1.0, 3.0,
                                                                      40.0)], e1, rtol=1e-13)


def _stencil(f, a, h):
    """d f / d a by the 4-point central stencil (error h^4 f^(5) / 30)."""
    return (-f(a + 2 * h) + 8 * f(a + h) - 8 * f(a - h) + f(a - 2 * h)) / (12 * h)


# (x, shape): small a (0.1), large a (50), x in the series (x <= max(a, 1)) and in the
# continued fraction's region, and next to the switch x = a
SHAPE_POINTS = [(0.05, 0.1), (0.7, 0.1), (3.0, 0.1), (0.4, 2.5), (2.4, 2.5), (2.6, 2.5),
                (9.0, 2.5), (30.0, 50.0), (49.9, 50.0), (50.1, 50.0), (72.0, 50.0)]


@pytest.mark.parametrize("name", ["cdf", "sf", "logcdf", "logsf"])
def test_gamma_distribution_is_differentiable_in_its_shape(name):
    """gamma.cdf / sf / logcdf / logsf in a (issue #31) against a 4-point stencil of
    scipy.stats.gamma at rtol 1e-7 (step 1e-3 a), with loc and scale; arrays of a and of x
    with the gradient summed back to a's shape."""
    ours, ref = getattr(stats.gamma, name), getattr(ST.gamma, name)
    for x, a in SHAPE_POINTS:
        for loc, scale in ((0.0, 1.0), (0.5, 2.0)):
            xx = loc + x * scale
            g = bn.grad(lambda a: ours(xx, a, loc, scale))(a)
            want = _stencil(lambda s: ref(xx, s, loc, scale), a, 1e-3 * a)
            np.testing.assert_allclose(g, want, rtol=1e-7, err_msg=f"{name} x={x} a={a}")
    xs = np.array([p[0] for p in SHAPE_POINTS])
    a = np.array([p[1] for p in SHAPE_POINTS])
    g = bn.grad(lambda a: np.sum(ours(xs, a)))(a)
    np.testing.assert_allclose(g, _stencil(lambda s: ref(xs, s), a, 1e-3 * a), rtol=1e-7)
    g = bn.grad(lambda a: np.sum(ours(xs, a)))(2.5)         # one a for every x
    np.testing.assert_allclose(g, np.sum(_stencil(lambda s: ref(xs, s), 2.5, 2.5e-3)),
                               rtol=1e-7)


@pytest.mark.parametrize("dist,shape", [("chi2", 5.0), ("invgamma", 2.5), ("loggamma", 2.5)])
@pytest.mark.parametrize("name", ["cdf", "sf", "logcdf", "logsf"])
def test_distributions_of_gammainc_are_differentiable_in_their_shape(dist, shape, name):
    """chi2 in df, invgamma in a, loggamma in c (their tails are the incomplete gamma rows),
    against a 4-point stencil of scipy.stats at rtol 1e-7, at small and large shapes, at
    the quantiles 0.1, 0.5 and 0.9."""
    ours, ref = getattr(getattr(stats, dist), name), getattr(getattr(ST, dist), name)
    for s in (0.2, shape, 60.0):
        for x in getattr(ST, dist).ppf([0.1, 0.5, 0.9], s):     # values away from 0 and 1
            g = bn.grad(lambda s: ours(x, s))(s)
            want = _stencil(lambda u: ref(x, u), s, 1e-3 * s)
            np.testing.assert_allclose(g, want, rtol=1e-7, err_msg=f"{dist}.{name} {x} {s}")


def test_the_second_derivative_in_the_shape_is_refused_and_edges_are_kept():
    """gammainc's d/da is the gammainc_da row, whose own d/da is refused: a second derivative
    in the shape is an error naming ``a``; the mixed one (d/dx of d/da) runs. Below loc cdf =
    0, sf = 1 with finite gradients (a < 1, whose pdf is infinite at 0), in a too."""
    with pytest.raises(UnsupportedOpError, match="gammainc_da: .*`a`"):
        bn.grad(bn.grad(lambda a: stats.gamma.cdf(1.5, a)))(2.0)
    with pytest.raises(UnsupportedOpError, match="`a`"):
        bn.hessian(lambda df: stats.chi2.sf(1.5, df))(3.0)
    mixed = bn.grad(lambda x: bn.grad(lambda a: bsp.gammainc(a, x))(2.5))(1.5)
    want = _stencil(lambda x: mpmath_gammainc_da(2.5, x), 1.5, 1e-3)
    np.testing.assert_allclose(mixed, want, rtol=1e-7)
    x = np.array([-1.0, 0.0, 0.5, 3.0])
    for f, ref in ((stats.gamma.cdf, ST.gamma.cdf), (stats.gamma.sf, ST.gamma.sf)):
        np.testing.assert_allclose(_value(lambda x: f(x, 0.5), (x,), (0,)), ref(x, 0.5),
                                   rtol=1e-13)
        g = bn.grad(lambda x: np.sum(f(x[[0, 2, 3]], 0.5)))(x)
        assert np.all(np.isfinite(g)) and g[0] == 0.0
        ga = [bn.grad(lambda a: f(v, a))(0.5) for v in x]
        assert np.all(np.isfinite(ga)) and ga[0] == 0.0 and ga[1] == 0.0


def test_gennorm_tails_at_the_median_and_in_beta():
    """gennorm.cdf at z = 0 (where |z|^beta has no derivative): 1/2, d/dx the density
    beta / (2 Gamma(1 / beta)) / scale, d/d beta 0; in beta against a 4-point stencil of
    scipy's at both sides, beta < 1 and > 1."""
    for beta in (0.6, 1.0, 2.5):
        v, (gx, gb) = bn.value_and_grad(lambda x, b: stats.gennorm.cdf(x, b, 1.0, 2.0),
                                        argnums=(0, 1))(1.0, beta)
        assert v == 0.5 and gb == 0.0
        np.testing.assert_allclose(gx, ST.gennorm.pdf(1.0, beta, 1.0, 2.0), rtol=1e-13)
        for name in ("cdf", "sf", "logcdf", "logsf"):
            for x in (-1.7, -0.2, 0.3, 2.5):
                g = bn.grad(lambda b: getattr(stats.gennorm, name)(x, b))(beta)
                want = _stencil(lambda b: getattr(ST.gennorm, name)(x, b), beta, 1e-3 * beta)
                np.testing.assert_allclose(g, want, rtol=1e-7, err_msg=f"{name} {x} {beta}")


def test_incomplete_gamma_inverses_in_a_by_the_implicit_function_theorem():
    """gammaincinv / gammainccinv in a (-(dP/da) / (dP/dx) at the output x) against a
    4-point stencil of scipy's, at small and large a, p in both tails."""
    for ours, ref in ((bsp.gammaincinv, S.gammaincinv), (bsp.gammainccinv, S.gammainccinv)):
        for a in (0.3, 2.5, 50.0):
            for p in (1e-3, 0.3, 0.9):
                g = bn.grad(lambda a: ours(a, p))(a)
                want = _stencil(lambda u: ref(u, p), a, 1e-3 * a)
                np.testing.assert_allclose(g, want, rtol=1e-7, err_msg=f"a={a} p={p}")


# -- the incomplete beta rows (kernels/blocks_beta.py, special_beta.py; #31) -----------------
def _beta_grid(rng, n, log_uniform):
    """a, b in 1e-2 .. 50 (log-uniform or uniform), x uniform in (0, 1)."""
    ab = ((lambda: np.exp(rng.uniform(np.log(1e-2), np.log(50.0), n))) if log_uniform
          else (lambda: rng.uniform(1e-2, 50.0, n)))
    return ab(), ab(), rng.uniform(0.0, 1.0, n)


@pytest.mark.parametrize("log_uniform", [True, False], ids=["log-uniform", "uniform"])
def test_incomplete_beta_scalar_code_matches_scipy(log_uniform):
    """kernels/special_beta.py against scipy.special at rtol 1e-13 where the continued
    fraction gives the value itself (betainc below the swap point x = (a + 1) / (a + b + 2),
    betaincc above it: measured 3.8e-14 at 4000 points) and where the other side's 1 - p is
    above 0.1 (5.5e-14); everywhere at 3e-12: a small value computed as 1 - p (betainc
    above the swap point near 0, a tiny b against a large a) loses the digits of p / value
    (measured 1.5e-12 at 20000 points, a = 47, b = 0.017, x = 0.979, I = 0.004)."""
    rng = np.random.default_rng(11 if log_uniform else 12)
    a, b, x = _beta_grid(rng, 3000, log_uniform)
    direct = x * (a + b + 2.0) < a + 1.0
    for name, own in (("betainc", direct), ("betaincc", ~direct)):
        got = np.array([getattr(kbeta, name)(*t) for t in zip(a, b, x)])
        want = getattr(S, name)(a, b, x)
        rel = np.abs(got - want) / want
        assert rel[own | (want > 0.1)].max() < 1e-13, name
        assert rel.max() < 3e-12, name
        # the compiled kernel: the scalar code compiled (libm's log / exp / pow, not numpy's,
        # and LLVM's contractions: 1.4e-14 apart at most, measured)
        kernel = _value(getattr(bsp, name), (a[:200], b[:200], x[:200]), (2,))
        np.testing.assert_allclose(kernel, got[:200], rtol=5e-14, atol=0)
    dx = np.array([kbeta.betainc_dx(*t) for t in zip(a, b, x)])
    want = np.exp(S.xlogy(a - 1, x) + S.xlog1py(b - 1, -x) - S.betaln(a, b))
    np.testing.assert_allclose(dx, want, rtol=1e-13)


def test_incomplete_beta_edges_match_scipy():
    """Every combination of NaN, negative, zero, infinite and ordinary a, b with x at NaN,
    +-inf, outside [0, 1], +-0, inside and 1: scipy's values (1.17: a = 0 gives 1 inside,
    b = 0 gives 0), in the scalar code and through the kernel."""
    inf, nan = np.inf, np.nan
    v = [nan, -1.0, -0.0, 0.0, 0.5, 2.0, inf]
    xs = [nan, -inf, -0.1, -0.0, 0.0, 0.3, 1.0, 1.1, inf]
    a, b, x = (np.array(t, dtype=float) for t in zip(*[(p, q, r) for p in v for q in v
                                                         for r in xs]))
    for name in ("betainc", "betaincc"):
        want = getattr(S, name)(a, b, x)
        got = np.array([getattr(kbeta, name)(*t) for t in zip(a, b, x)])
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)   # NaN where scipy's
        np.testing.assert_allclose(_value(getattr(bsp, name), (a, b, x), (2,)), want,
                                   rtol=1e-14, atol=0)


def test_incomplete_beta_gradients_against_autograd_and_differences():
    """d/dx of betainc and betaincc with broadcast operands (a scalar, b a row, x a matrix;
    x a tile of a, b), against autograd.scipy's betainc (d/dx only, as here) and central
    differences of scipy's; the Hessian in x through the betainc_dx row against differences
    of the gradient; forward mode (jvp) against reverse."""
    rng = np.random.default_rng(13)
    x = rng.uniform(0.05, 0.95, (2, 3))
    b = np.array([0.4, 2.0, 7.5])
    w = rng.normal(size=(2, 3))
    for ours, sign in ((bsp.betainc, 1.0), (bsp.betaincc, -1.0)):
        ref = getattr(S, ours.__name__)
        g = bn.grad(lambda x: np.sum(ours(1.7, b, x) * w))(x)
        np.testing.assert_allclose(
            g, sign * autograd.grad(lambda x: anp.sum(asp.betainc(1.7, b, x) * w))(x),
            rtol=1e-12)
        np.testing.assert_allclose(
            g, central_diff(lambda x: float(np.sum(ref(1.7, b, x) * w)), (x,), 0), rtol=1e-6,
            atol=1e-9)
        h = bn.hessian(lambda x: np.sum(ours(1.7, b, x) * w))(x).reshape(6, 6)
        d = lambda x: bn.grad(lambda x: np.sum(ours(1.7, b, x) * w))(x)   # noqa: E731
        e = np.eye(6).reshape(6, 2, 3) * 1e-6
        fd = np.array([(d(x + k) - d(x - k)).reshape(-1) / 2e-6 for k in e])
        np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
        t = rng.normal(size=x.shape)
        _, ty = bn.jvp(lambda x: ours(1.7, b, x), (x,), (t,))
        np.testing.assert_allclose(ty, sign * np.exp(
            S.xlogy(0.7, x) + S.xlog1py(b - 1, -x) - S.betaln(1.7, b)) * t, rtol=1e-13)
        # x a tile of a and b (a scalar x broadcast over them): its cotangent summed back
        a2 = np.array([[0.5, 1.0, 3.0], [2.0, 0.8, 9.0]])
        gs = bn.grad(lambda x: np.sum(ours(a2, b, x) * w))(0.4)
        np.testing.assert_allclose(gs, sign * np.sum(w * np.exp(
            S.xlogy(a2 - 1, 0.4) + S.xlog1py(b - 1, -0.4) - S.betaln(a2, b))), rtol=1e-13)


def _beta_shape_grid(rng, n):
    """a, b log-uniform in [0.05, 500]; x uniform, log-uniform toward 0 and toward 1 (down to
    1e-12), at the swap point (a + 1) / (a + b + 2) within 1e-3, and in the bulk."""
    a, b = (np.exp(rng.uniform(np.log(0.05), np.log(500.0), n)) for _ in range(2))
    kind = rng.integers(0, 5, n)
    swap = (a + 1) / (a + b + 2)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    x = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                  [rng.uniform(0, 1, n), np.exp(rng.uniform(np.log(1e-12), np.log(0.5), n)),
                   1 - np.exp(rng.uniform(np.log(1e-12), np.log(0.5), n)),
                   swap * (1 + rng.uniform(-1e-3, 1e-3, n))],
                  np.clip(swap + rng.normal(0, 1, n) * sd, 1e-9, 1 - 1e-9))
    return a, b, x


def test_betainc_da_db_scalar_code_matches_mpmath():
    """dI/da and dI/db (kernels/special_beta.py: betainc_dab) against mpmath (50+ digits) at
    rtol 2e-12, where they are normal numbers (below, an absolute 1e-300): measured 4.4e-13
    at most over 10000 points of this grid (2.7e-12 before the second turn on the other
    side where a small a against a large b cancels next to the swap point). The
    compiled kernel (libm's log / exp, LLVM's contractions over the fraction) is 6e-14
    from the scalar code at most (measured); the signs are dI/da < 0 < dI/db
    (the distribution moves right as a grows, left as b does)."""
    rng = np.random.default_rng(31)
    a, b, x = _beta_shape_grid(rng, 300)
    got = np.array([kbeta.betainc_dab(*t) for t in zip(a, b, x)])
    want = np.stack(mpmath_betainc_dab(a, b, x), axis=1)
    normal = np.abs(want) > 1e-300
    np.testing.assert_allclose(got[normal], want[normal], rtol=2e-12, atol=0)
    np.testing.assert_allclose(got[~normal], want[~normal], rtol=0, atol=1e-300)
    assert np.all(got[:, 0] <= 0) and np.all(got[:, 1] >= 0)
    for k, name in enumerate(("_betainc_da", "_betainc_db")):
        kernel = _value(getattr(bsp, name), (a[:100], b[:100], x[:100]), (2,))
        np.testing.assert_allclose(kernel, got[:100, k], rtol=2e-13, atol=1e-300)
    # the density's derivatives in a and b (betainc_dx_dab), against mpmath's
    import mpmath
    for t in zip(a[:60], b[:60], x[:60]):
        with mpmath.workdps(40):
            A, B, X = (mpmath.mpf(float(v)) for v in t)

            def dens(s, u):
                return X ** (s - 1) * (1 - X) ** (u - 1) / mpmath.beta(s, u)
            want = [float(mpmath.diff(lambda s: dens(s, B), A)),
                    float(mpmath.diff(lambda u: dens(A, u), B))]
        np.testing.assert_allclose(kbeta.betainc_dx_dab(*t), want, rtol=1e-11, atol=1e-300)


def test_betainc_gradients_in_a_and_b():
    """betainc and betaincc in a, b and x at once, with broadcast operands (a a column, b a
    row, x a matrix; a scalar a), reverse and forward mode, against mpmath's d/da, d/db and
    the density; at a = 0 and b = 0 the one-sided limits (-int_0^(1-x) t^(b-1) / (1 - t) dt
    and int_0^x t^(a-1) / (1 - t) dt)."""
    rng = np.random.default_rng(37)
    a = np.array([[0.3], [2.0]])
    b = np.array([0.4, 2.0, 75.0])
    x = rng.uniform(0.05, 0.95, (2, 3))
    w = rng.normal(size=(2, 3))
    da, db = mpmath_betainc_dab(*np.broadcast_arrays(a, b, x))
    dens = np.exp(S.xlogy(a - 1, x) + S.xlog1py(b - 1, -x) - S.betaln(a, b))
    for ours, sign in ((bsp.betainc, 1.0), (bsp.betaincc, -1.0)):
        ga, gb, gx = bn.grad(lambda a, b, x: np.sum(ours(a, b, x) * w), argnums=(0, 1, 2))(
            a, b, x)
        np.testing.assert_allclose(ga, sign * np.sum(w * da, axis=1, keepdims=True),
                                   rtol=1e-11)
        np.testing.assert_allclose(gb, sign * np.sum(w * db, axis=0), rtol=1e-11)
        np.testing.assert_allclose(gx, sign * w * dens, rtol=1e-12)
        ta, tb, tx = rng.normal(size=a.shape), rng.normal(size=b.shape), rng.normal(size=x.shape)
        _, ty = bn.jvp(lambda a, b, x: ours(a, b, x), (a, b, x), (ta, tb, tx))
        np.testing.assert_allclose(ty, sign * (ta * da + tb * db + tx * dens), rtol=1e-11)
        g = bn.grad(lambda a: np.sum(ours(a, 2.5, x) * w))(1.5)
        np.testing.assert_allclose(g, sign * np.sum(w * mpmath_betainc_dab(1.5, 2.5, x)[0]),
                                   rtol=1e-11)
    import mpmath
    for p, q, z in ((0.0, 2.5, 0.3), (0.0, 0.7, 0.9)):
        want = -float(mpmath.quad(lambda t: t ** (q - 1) / (1 - t), [0, 1 - z]))
        got = bn.grad(lambda a, b: bsp.betainc(a, b, z), argnums=(0, 1))(p, q)
        np.testing.assert_allclose(got, (want, 0.0), rtol=1e-12)
        want = float(mpmath.quad(lambda t: t ** (q - 1) / (1 - t), [0, z]))
        got = bn.grad(lambda a, b: bsp.betainc(a, b, z), argnums=(0, 1))(q, p)
        np.testing.assert_allclose(got, (0.0, want), rtol=1e-12)


@pytest.mark.parametrize("name", ["betainc_da", "betainc_db"])
def test_betainc_da_db_rows(name):
    """The rows' derivative in x (d/da or d/db of the density) against mpmath's mixed
    derivative, in both orders of a nested grad (x first through betainc_dx's a / b, the
    shape first through the row's x), and its own derivative in x (a Hessian) against
    differences; in a and b they are refused: a second derivative in the shape is an error
    that names it, in a scalar, a tensor and forward mode (held, the gradient in x runs)."""
    import mpmath
    f = getattr(bsp, "_" + name)
    k = 0 if name == "betainc_da" else 1
    a, b, x = 2.5, 1.7, 0.4
    with mpmath.workdps(40):
        mixed = float(mpmath.diff(lambda *v: mpmath.betainc(v[0], v[1], 0, v[2],
                                                            regularized=True),
                                  (a, b, x), (1 - k, k, 1)))
    np.testing.assert_allclose(bn.grad(lambda u: f(a, b, u))(x), mixed, rtol=1e-11)
    ab = [a, b]

    def with_shape(u):
        return [u if j == k else ab[j] for j in (0, 1)]
    np.testing.assert_allclose(bn.grad(lambda u: bn.grad(
        lambda x: bsp.betainc(*with_shape(u), x))(x))(ab[k]), mixed, rtol=1e-11)
    np.testing.assert_allclose(bn.grad(lambda x: bn.grad(
        lambda u: bsp.betainc(*with_shape(u), x))(ab[k]))(x), mixed, rtol=1e-11)
    xs = np.array([0.2, 0.5, 0.9])
    h = bn.hessian(lambda x: np.sum(f(a, b, x)))(xs)
    d = lambda x: bn.grad(lambda x: np.sum(f(a, b, x)))(x)   # noqa: E731
    fd = np.array([(d(xs + e) - d(xs - e)) / 2e-6 for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
    for j, arg in enumerate(("a", "b")):
        args = [a, b, x]
        for given in (args, [np.full(3, v) for v in args]):
            with pytest.raises(UnsupportedOpError, match=f"{name}: .*`{arg}`.*stop_gradient"):
                bn.grad(lambda *v: np.sum(f(*v)), argnums=j)(*given)
        with pytest.raises(UnsupportedOpError, match=f"`{arg}`"):
            bn.jvp(lambda u: f(*[u if i == j else args[i] for i in range(3)]), (args[j],),
                   (1.0,))
        # I's second derivative in a or b: the traced derivative appends this row
        with pytest.raises(UnsupportedOpError, match=f"betainc_d{'ab'[j]}: .*`{arg}`"):
            bn.hessian(lambda u: bsp.betainc(*[u if i == j else args[i] for i in range(3)]))(
                args[j])
        held = bn.grad(lambda *v: f(*[bn.stop_gradient(u) if i == j else u
                                      for i, u in enumerate(v)]), argnums=2)(*args)
        assert np.isfinite(held)
    assert bn.kernels.BY_NAME[name].diff_operands == (2,)


def test_jacobians_in_the_shape():
    """bn.jacfwd in a shape parameter (few inputs: its batched tape, the Jacobian as traced
    ops, refuses betainc_da's / gammainc_da's a as a possible second derivative, and falls
    back on the tangent sweeps of f's tape) agrees with jacrev and mpmath; the Hessian in the
    shape is still the error naming it."""
    a = np.array([0.5, 2.0, 3.0])
    x = np.array([0.2, 0.5, 0.9])
    J = bn.jacfwd(lambda a: bsp.betainc(a, 2.0, x))(a)
    np.testing.assert_allclose(J, np.diag(mpmath_betainc_dab(a, 2.0, x)[0]), rtol=1e-11)
    np.testing.assert_allclose(bn.jacfwd(lambda a: bsp.gammainc(a, 2.0))(a),
                               np.diag(mpmath_gammainc_da(a, 2.0)), rtol=1e-11)
    f = lambda ab: stats.beta.cdf(x, ab[0], ab[1])             # noqa: E731
    ab = np.array([2.0, 3.0])
    np.testing.assert_allclose(bn.jacobian(f)(ab), bn.jacrev(f)(ab), rtol=1e-13)
    with pytest.raises(UnsupportedOpError, match="betainc_da: .*`a`"):
        bn.hessian(lambda a: bsp.betainc(a, 2.0, 0.4))(1.5)


def test_binom_refuses_n():
    """binom's n is an integer in scipy (NaN at any other): its tails' derivative in n is an
    error that names n, although betainc's in a and b is defined; nbinom's real n has one."""
    for m in ("cdf", "sf", "logcdf", "logsf"):
        with pytest.raises(UnsupportedOpError, match="binom.*`n`.*integer"):
            bn.grad(lambda n: getattr(stats.binom, m)(2.0, n, 0.3))(5.0)
        g = bn.grad(lambda p: getattr(stats.binom, m)(2.0, bn.stop_gradient(5.0), p))(0.3)
        assert np.isfinite(g)
    g = bn.grad(lambda n: stats.nbinom.cdf(2.0, n, 0.3))(5.5)
    np.testing.assert_allclose(
        g, central_diff(lambda n: float(ST.nbinom.cdf(2.0, n, 0.3)), (5.5,), 0), rtol=1e-7)


def test_distribution_cdfs_from_betainc_keep_their_edges():
    """t at z = 0 (the tail's pole: 1/2 + z pdf(0)), beta at and beyond 0 and 1, binom at
    k < 0, k >= n and p at 0 and 1, with scipy's values and finite gradients; bad
    parameters give NaN as scipy."""
    x = np.array([-2.0, 0.0, 0.3, 5.0])
    for m in ("cdf", "sf", "logcdf", "logsf"):
        np.testing.assert_allclose(_value(lambda x: getattr(stats.t, m)(x, 2.5, 0.0, 1.3),
                                          (x,), (0,)), getattr(ST.t, m)(x, 2.5, 0.0, 1.3),
                                   rtol=1e-13)
        g = bn.elementwise_grad(lambda x: getattr(stats.t, m)(x, 2.5, 0.0, 1.3))(x)
        pdf = ST.t.pdf(x, 2.5, 0.0, 1.3)
        want = {"cdf": pdf, "sf": -pdf, "logcdf": pdf / ST.t.cdf(x, 2.5, 0.0, 1.3),
                "logsf": -pdf / ST.t.sf(x, 2.5, 0.0, 1.3)}[m]
        np.testing.assert_allclose(g, want, rtol=1e-12)
    z = np.array([-0.5, 0.0, 0.4, 1.0, 1.5])
    for m in ("cdf", "sf"):
        np.testing.assert_allclose(_value(lambda z: getattr(stats.beta, m)(z, 0.5, 0.7),
                                          (z,), (0,)), getattr(ST.beta, m)(z, 0.5, 0.7),
                                   rtol=1e-14, atol=0)
        g = bn.grad(lambda z: np.sum(getattr(stats.beta, m)(z, 0.5, 0.7)))(z)
        assert np.all(np.isfinite(g[[0, 2, 4]])) and g[0] == 0.0 and g[4] == 0.0
    k = np.array([-3.0, 0.0, 2.7, 6.0, 10.0])
    for p in (0.0, 0.3, 1.0):
        for m in ("cdf", "sf"):
            np.testing.assert_allclose(
                _value(lambda p: getattr(stats.binom, m)(k, 6.0, p), (p,), (0,)),
                getattr(ST.binom, m)(k, 6, p), rtol=1e-13, atol=1e-300)
    held = bn.stop_gradient
    for bad, u in ((lambda u: stats.t.cdf(0.5, held(u)), -1.0),
                   (lambda u: stats.beta.sf(0.5, held(u), 2.0), 0.0),
                   (lambda u: stats.binom.cdf(2.0, held(u), 0.3), 5.5),
                   (lambda u: stats.binom.sf(2.0, 5.0, u), 1.5)):
        assert np.isnan(_value(bad, (u,), (0,)))


def test_digamma_near_the_poles_is_the_true_value():
    """Near a negative pole scipy's digamma loses digits (its reflection reduces x - floor
    x near 1); ours reduces to the nearest integer: -482.99997506... is -40093.681796997191
    (mpmath, 40 digits), scipy gives ...6831."""
    assert abs(kspecial.polygamma(0, -482.9999750622589) + 40093.681796997191) < 1e-10


# -- edges ------------------------------------------------------------------------------------
def test_norm_tails_and_zeros():
    x = np.array([-40.0, -10.0, -0.0, 0.0, 10.0, 40.0])
    for f, ref in ((norm.logcdf, ST.norm.logcdf), (norm.logsf, ST.norm.logsf),
                   (norm.cdf, ST.norm.cdf), (norm.sf, ST.norm.sf)):
        got = _value(f, (x,), (0,))
        np.testing.assert_allclose(got, ref(x), rtol=1e-13, atol=1e-300)
    g = bn.grad(lambda x: np.sum(norm.logcdf(x)))(x)
    # d/dx log Phi(x) -> -x in the left tail, 0 in the right
    np.testing.assert_allclose(g[0], 40.02496884720726, rtol=1e-13)
    assert g[-1] == 0.0 and np.all(np.isfinite(g))


def test_invalid_parameters_give_nan():
    got = _value(lambda s: norm.logpdf(1.0, 0.0, s), (np.array([-1.0, 0.0, 2.0]),), (0,))
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isfinite(got[2])
    got = _value(lambda p: stats.bernoulli.logpmf(1.0, p), (np.array([-0.5, 0.5, 1.5]),), (0,))
    assert np.isnan(got[0]) and np.isnan(got[2])


# (function, argument tuple, the position of the varied argument): each distribution beyond
# autograd's at the edges of its support and at invalid parameters
EDGES = [
    ("lognorm", (None, 0.8, 0.5, 2.0), np.array([-1.0, 0.5, 0.5 + 1e-300, 1.0, 3.0, np.inf])),
    ("halfnorm", (None, 0.5, 2.0), np.array([-1.0, 0.5, 0.6, 40.0, np.inf])),
    ("gumbel_r", (None, 0.5, 2.0), np.array([-np.inf, -30.0, 0.0, 40.0, np.inf])),
    ("gumbel_l", (None, 0.5, 2.0), np.array([-np.inf, -40.0, 0.0, 3.0, np.inf])),
    ("rayleigh", (None, 0.5, 2.0), np.array([-1.0, 0.5, 0.6, 40.0, np.inf])),
    ("pareto", (None, 2.5, 0.5, 2.0), np.array([-1.0, 2.5, 2.6, 40.0, np.inf])),
    # (not +inf: scipy's weibull_min.logpdf gives inf - inf = NaN there, ours -inf)
    ("weibull_min", (None, 1.5, 0.5, 2.0), np.array([-1.0, 0.5, 0.6, 40.0])),
    ("invgamma", (None, 1.5, 0.5, 2.0), np.array([-1.0, 0.5, 0.6, 40.0, np.inf])),
    ("truncnorm", (None, -1.0, 2.0), np.array([-3.0, -1.0, 0.0, 2.0, 3.0])),
    ("geom", (None, 0.3), np.array([-1.0, 0.0, 1.0, 2.5, 10.0])),
]


@pytest.mark.parametrize("dist, args, xs", EDGES, ids=[e[0] for e in EDGES])
def test_new_distributions_at_their_edges(dist, args, xs):
    """Outside the support, at its boundary, at infinities and far in the tails, every
    function of the module gives scipy's value (0, 1, -inf or NaN, and the digits of the
    tails), and the gradient to x is finite wherever the value is."""
    mod, ref = getattr(stats, dist), getattr(ST, dist)
    for fn in stats.METHODS:
        if not hasattr(mod, fn) or fn in ("ppf", "isf", "entropy"):
            continue
        f = getattr(mod, fn)
        with np.errstate(all="ignore"):
            want = getattr(ref, fn)(xs, *args[1:])
        got = _value(lambda x: f(x, *args[1:]), (xs,), (0,))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=f"{dist}.{fn}")
        # (at the support's boundary a density that is 0 there has a one-sided derivative:
        # checked inside and outside, not at it)
        density = getattr(ref, "logpmf" if hasattr(ref, "logpmf") else "logpdf")
        with np.errstate(all="ignore"):
            finite = np.isfinite(want) & np.isfinite(xs) & (density(xs, *args[1:]) > -np.inf)
        if finite.any():
            g = bn.grad(lambda x: np.sum(f(x, *args[1:])))(xs[finite])
            assert np.all(np.isfinite(g)), (dist, fn, g)


def test_vonmises_normaliser_over_the_whole_range_of_kappa():
    """log(i0(kappa)) - kappa, from i0 below 600 and the asymptotic series above (i0 itself
    overflows past 713): scipy's i0e to 1e-15 relative, or 5e-16 absolute where the value is
    near 0 (small kappa: a log of a number near 1), on both sides of the seam and beyond."""
    from burnumba.scipy.stats.vonmises import log_i0e
    k = np.concatenate([np.exp(np.linspace(-5, 12, 300)), [599.999, 600.0, 600.001]])
    np.testing.assert_allclose(_value(log_i0e, (k,), (0,)), np.log(S.i0e(k)), rtol=1e-15,
                               atol=5e-16)
    g = bn.grad(lambda k: np.sum(log_i0e(k)))(k)       # d/dk = i1(k) / i0(k) - 1
    np.testing.assert_allclose(g, S.i1e(k) / S.i0e(k) - 1.0, rtol=1e-12, atol=1e-15)


def _vonmises_cdf_mpmath(t, kappa):
    """The cdf on [-pi, pi] by quadrature of the density (mpmath, 40 digits)."""
    import mpmath
    with mpmath.workdps(40):
        k, t = mpmath.mpf(kappa), mpmath.mpf(t)
        f = lambda s: mpmath.exp(k * (mpmath.cos(s) - 1))             # noqa: E731
        norm = 2 * mpmath.pi * mpmath.besseli(0, k) * mpmath.exp(-k)
        if t > 0:
            return float(1 - mpmath.quad(f, [t, mpmath.pi]) / norm)
        return float(mpmath.quad(f, [-mpmath.pi, t]) / norm)


VONMISES_KAPPAS = np.array([0.0, 1e-3, 0.3, 2.0, 11.0, 24.999, 25.0, 25.001, 49.9, 50.0,
                            130.0, 1000.0])


def test_vonmises_cdf_against_mpmath():
    """cdf to 2e-15 absolute against mpmath (measured 1.0e-15 over kappa in [0, 1000]), on
    both sides of the seam at 25 and of scipy's at 50, where scipy's normal approximation is
    3e-6 off (ours and scipy's agree to 4e-6 there, to 2e-13 below 50). On the whole line
    the turns are counted: cdf(z + 2 pi j) = cdf(z) + j, and sf = 1 - cdf."""
    rng = np.random.default_rng(11)
    t = np.concatenate([np.linspace(-3.1, 3.1, 9), rng.uniform(-np.pi, np.pi, 5)])
    for k in VONMISES_KAPPAS:
        want = np.array([_vonmises_cdf_mpmath(v, k) for v in t])
        kk = np.full_like(t, k)
        got = _value(stats.vonmises.cdf, (t, kk), (0, 1))
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-15, err_msg=f"kappa {k}")
        np.testing.assert_allclose(got, ST.vonmises.cdf(t, k), rtol=0,
                                   atol=4e-6 if k >= 50 else 2e-13, err_msg=f"kappa {k}")
        for turns in (-3.0, -1.0, 2.0):
            z = t + 2 * np.pi * turns
            np.testing.assert_allclose(_value(stats.vonmises.cdf, (z, kk), (0, 1)), want + turns,
                                       rtol=0, atol=2e-14)
            # loc and scale enter as z = (x - loc) / scale, scipy's
            np.testing.assert_allclose(
                _value(stats.vonmises.sf, (0.5 + 1.5 * z, kk, 0.5, 1.5), (0, 1, 2, 3)),
                1.0 - (want + turns), rtol=0, atol=2e-14)


def test_vonmises_cdf_gradients_over_the_whole_range_of_kappa():
    """d cdf / dx is scipy's pdf (1e-12 relative, or 1e-15 absolute in the far tails, where
    either series' absolute error is all that is left), d / dloc = -pdf, d / dscale =
    -z pdf / scale; d / dkappa against central differences of the cdf (ours: tied to mpmath
    by the test above); the Hessian in (x, kappa) against central differences of the
    gradient, and forward mode (jacfwd) against reverse; kappa = 0 (the uniform cdf) has
    finite derivatives, dcdf/dkappa = sin(x) / (2 pi) there."""
    x = np.array([-7.0, -2.5, -0.3, 0.01, 0.4, 2.0, 9.0])

    def cdf(x, k, loc, scale):
        return _value(stats.vonmises.cdf, (x, k, loc, scale), (0, 1, 2, 3))
    for k in VONMISES_KAPPAS:
        kk = np.full_like(x, k)
        loc, scale = np.full_like(x, 0.3), np.full_like(x, 1.7)
        gx, gk, gl, gs = bn.grad(lambda *a: np.sum(stats.vonmises.cdf(*a)),
                                 argnums=(0, 1, 2, 3))(x, kk, loc, scale)
        pdf = ST.vonmises.pdf(x, k, loc, scale)
        np.testing.assert_allclose(gx, pdf, rtol=1e-12, atol=1e-15, err_msg=f"kappa {k}")
        np.testing.assert_allclose(gl, -pdf, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(gs, -(x - 0.3) / 1.7 * pdf, rtol=1e-11, atol=1e-14)
        h = 1e-4 * max(k, 1.0)
        if k > h:
            fd = (cdf(x, kk + h, loc, scale) - cdf(x, kk - h, loc, scale)) / (2 * h)
            np.testing.assert_allclose(gk, fd, rtol=1e-6, atol=1e-11, err_msg=f"kappa {k}")
        else:
            np.testing.assert_allclose(gk, np.sin((x - 0.3) / 1.7) / (2 * np.pi), rtol=1e-13,
                                       atol=1e-16)

        def f(v):
            return stats.vonmises.cdf(v[0], v[1])

        def g(v):
            return bn.grad(f)(v)
        for t in (-2.0, 0.4, 8.0):
            v = np.array([t, k])
            hess = bn.hessian(f)(v)
            np.testing.assert_allclose(bn.jacfwd(f)(v), g(v), rtol=1e-10, atol=1e-16)
            steps = np.array([1e-5, 1e-5 * max(k, 1.0)])
            if k == 0.0:
                steps[1] = 0.0              # one-sided at kappa = 0: the x column only
            fd = np.stack([(g(v + np.eye(2)[i] * steps[i]) - g(v - np.eye(2)[i] * steps[i]))
                           / (2 * steps[i]) for i in range(2) if steps[i]])
            np.testing.assert_allclose(hess[:len(fd)], fd, rtol=1e-5, atol=1e-9,
                                       err_msg=f"kappa {k}, x {t}")


def test_vonmises_parameters_and_infinities_as_scipy():
    """kappa = 0 is scipy's uniform density (logpdf -log 2 pi, cdf 1/2 + z / (2 pi)), kappa <
    0 or scale <= 0 NaN; x = +-inf gives the limits 0 / 1 (logs -inf / 0) with finite
    gradients; a new kappa, on either side of the seam, reuses the tape (no guard on it)."""
    for fn in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):      # (the density: NaN)
        ours, ref = getattr(stats.vonmises, fn), getattr(ST.vonmises, fn)
        for k, scale in ((0.0, 1.0), (-1.0, 1.0), (2.0, -1.0), (2.0, 0.0), (2.0, 1.5),
                         (30.0, 2.0)):
            # (-4: a turn below at scale 1, a negative cdf and a NaN logcdf, as scipy's)
            x = np.array([-np.inf, -4.0 if k < 30 else 0.0, 0.3, np.inf])
            with np.errstate(all="ignore"):
                want = ref(x, k, 0.5, scale)
            got = _value(lambda x, k, s: ours(x, k, 0.5, s), (x, k, scale), (0, 1, 2))
            np.testing.assert_allclose(got, want, rtol=1e-11, atol=0,
                                       err_msg=f"{fn} kappa {k} scale {scale}")
        if "pdf" not in fn:
            g = bn.grad(lambda x: np.sum(ours(x, 3.0)))(np.array([-np.inf, np.inf]))
            assert np.all(g == 0.0), (fn, g)
    traces = []

    def counted(x, k):
        traces.append(1)
        return np.sum(stats.vonmises.cdf(x, k))
    grad = bn.grad(counted, argnums=(0, 1))
    for k in (0.5, 24.0, 26.0, 300.0, 0.0):
        grad(np.array([-4.0, 0.3]), k)
    assert len(traces) == 1


def test_multinomial_gradient_along_the_simplex():
    """p = softmax(logits): the gradient to the logits against autograd's differentiation of
    the same formula (p on the simplex, so scipy's adjusted last entry changes nothing), and
    counts that are not integers or do not sum to n give -inf, bad p NaN, as scipy."""
    x = np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 2.0]])

    def ours(z):
        return np.sum(stats.multinomial.logpmf(x, 6.0, bsp.softmax(z)))

    def theirs(z):
        p = anp.exp(z - asp.logsumexp(z))
        return anp.sum(asp.gammaln(7.0) + anp.sum(x * anp.log(p) - asp.gammaln(x + 1), -1))
    z = np.array([0.3, -1.2, 0.5])
    np.testing.assert_allclose(bn.grad(ours)(z), autograd.grad(theirs)(z), rtol=1e-12)
    np.testing.assert_allclose(_value(ours, (z,), (0,)), theirs(z), rtol=1e-13)
    odd = np.array([[1.0, 2.0, 2.0], [1.0, 2.5, 2.5], [-1.0, 3.0, 4.0]])
    p = np.array([0.2, 0.3, 0.5])
    got = _value(lambda p: stats.multinomial.logpmf(odd, 6.0, p), (p,), (0,))
    np.testing.assert_array_equal(got, ST.multinomial.logpmf(odd, 6, p))
    for bad_p in ([0.2, -0.3, 1.1], [0.2, 0.3, 0.4]):      # outside [0, 1]; not summing to 1
        bad = _value(lambda p: stats.multinomial.logpmf(x, 6.0, p), (np.array(bad_p),), (0,))
        assert np.all(np.isnan(bad))


def test_geom_logcdf_keeps_the_digits_scipy_loses():
    """log(1 - 0.7^k) (mpmath, 40 digits) to 2e-15: scipy's log(-expm1(.)) rounds 1 - 0.7^k
    first, off by 1.6e-12 relative at k = 30 and 5e-5 at k = 80."""
    got = _value(lambda k, p: stats.geom.logcdf(k, p), (np.array([30.0, 80.0]), 0.3), (1,))
    want = np.array([-2.253959430543951828703577932e-05, -4.0536215597152602756e-13])
    np.testing.assert_allclose(got, want, rtol=2e-15)
    got = _value(lambda x: stats.weibull_min.logpdf(x, 1.5), (np.array([np.inf]),), (0,))
    assert got[0] == -np.inf            # scipy: NaN


@pytest.mark.parametrize("dist, args", [
    ("lognorm", (1.0, -0.5)), ("halfnorm", (1.0, 0.0, -1.0)), ("pareto", (2.0, -1.0)),
    ("weibull_min", (1.0, 0.0)), ("invgamma", (1.0, -2.0)), ("gennorm", (0.5, -1.0)),
    ("f", (1.0, 2.0, -1.0)), ("truncnorm", (0.5, 2.0, 1.0)), ("geom", (1.0, 1.5)),
    ("nbinom", (2.0, 3.0, 1.5)), ("betabinom", (2.0, 5.0, 1.0, -1.0)),
    ("gumbel_r", (0.5, 0.0, -1.0)), ("rayleigh", (0.5, 0.0, 0.0)),
    ("skewnorm", (0.5, 2.0, 0.0, -1.0)), ("loggamma", (0.5, -1.0)), ("loggamma", (0.5, 2.0, 0.0,
                                                                                  0.0))])
def test_new_distributions_give_nan_for_invalid_parameters(dist, args):
    """A shape or scale <= 0, p outside (0, 1], a > b: NaN, as scipy, whatever x."""
    fn = "logpmf" if hasattr(getattr(stats, dist), "logpmf") else "logpdf"
    f, ref = getattr(getattr(stats, dist), fn), getattr(getattr(ST, dist), fn)
    with np.errstate(all="ignore"):
        assert np.isnan(ref(*args))
    got = _value(lambda x: f(x, *args[1:]), (np.array([args[0]]),), (0,))
    assert np.isnan(got[0])


# a point inside each distribution's support and parameters (the first argument is x or k)
NAN_ARGS = {"norm": (), "t": (4.0,), "gamma": (2.0,), "beta": (2.0, 3.0), "chi2": (3.0,),
            "poisson": (2.0,), "bernoulli": (0.3,), "binom": (6.0, 0.3),
            "laplace": (), "cauchy": (), "logistic": (), "expon": (), "uniform": (),
            "lognorm": (0.7,), "halfnorm": (), "gumbel_r": (), "gumbel_l": (), "rayleigh": (),
            "pareto": (2.0,), "weibull_min": (1.5,), "invgamma": (2.0,), "f": (3.0, 5.0),
            "gennorm": (1.5,), "truncnorm": (-1.0, 2.0), "vonmises": (2.0,), "geom": (0.3,),
            "nbinom": (2.5, 0.4), "betabinom": (5.0, 2.0, 3.0), "skewnorm": (2.0,),
            "loggamma": (2.0,)}
_MULTIVARIATE = {"multivariate_normal", "multivariate_t", "dirichlet", "multinomial"}


def test_every_univariate_distribution_has_nan_args():
    assert set(NAN_ARGS) == set(stats.__all__) - _MULTIVARIATE


@pytest.mark.parametrize("dist", sorted(NAN_ARGS))
def test_nan_x_or_loc_gives_nan_as_scipy(dist):
    """NaN in x (or k) and NaN in loc give NaN from every function, as scipy: a body's support
    test (z >= 0, 0 <= k <= n) is False at NaN and put 0, 1 or -inf there before (a silently
    wrong number). The gradient there is NaN too; at +-inf the values are scipy's (the one
    exception: weibull_min's log density at +inf, -inf where scipy's inf - inf is NaN)."""
    mod, ref_mod, args = getattr(stats, dist), getattr(ST, dist), NAN_ARGS[dist]
    fns = [m for m in ("logpdf", "pdf", "logpmf", "pmf", "cdf", "sf", "logcdf", "logsf")
           if hasattr(mod, m)]
    assert fns
    for m in fns:
        f = getattr(mod, m)
        for x in (np.nan, np.inf, -np.inf):
            value, g = bn.value_and_grad(lambda v: f(v, *args))(x)
            with np.errstate(all="ignore"):
                want = getattr(ref_mod, m)(x, *args)
            if dist == "weibull_min" and m in ("logpdf", "pdf") and x == np.inf:
                want = -np.inf if m == "logpdf" else 0.0
            assert value == want or (np.isnan(value) and np.isnan(want)), (dist, m, x, value)
            if np.isnan(x):
                assert np.isnan(g), f"{dist}.{m}: gradient at NaN"
        value = bn.grad(lambda loc: f(1.0, *args, loc=loc))(np.nan)
        assert np.isnan(value), f"{dist}.{m}: gradient at loc NaN"
        assert np.isnan(_value(lambda loc: f(1.0, *args, loc=loc), (np.nan,), (0,)))


def test_entropy_conventions_and_scipys_own_names():
    """entropy: NaN for a scale, shape or p outside the domain and for a NaN loc, as scipy;
    the shape of loc and the parameters broadcast together; scipy's own names inside a
    traced function (a frozen distribution too) are ours; a distribution without a closed
    form here names what it has."""
    import scipy.stats
    for f, args in ((stats.norm.entropy, (0.0, -1.0)), (stats.gamma.entropy, (-1.0,)),
                    (stats.beta.entropy, (2.0, 0.0)), (stats.bernoulli.entropy, (1.5,)),
                    (stats.t.entropy, (-1.0,)), (stats.norm.entropy, (np.nan, 2.0))):
        assert np.isnan(_value(f, args, tuple(range(len(args))))), (f, args)
    loc, s = np.array([0.0, 1.0, 2.0]), 1.5
    got = _value(lambda s: stats.gumbel_r.entropy(loc, s), (s,), (0,))
    np.testing.assert_allclose(got, ST.gumbel_r.entropy(loc, s), rtol=1e-15)

    def f(m, s):
        return (scipy.stats.norm(m, s).entropy() + scipy.stats.gamma.entropy(s, scale=2.0)
                + scipy.stats.multivariate_normal(np.zeros(2), s * np.eye(2)).entropy())
    value, (gm, gs) = bn.value_and_grad(f, argnums=(0, 1))(0.3, 1.5)
    assert value == pytest.approx(f(0.3, 1.5), rel=1e-14) and gm == 0.0
    assert gs == pytest.approx(central_diff(lambda s: f(0.3, s), (1.5,), 0), rel=1e-7)
    with pytest.raises(bn.UnsupportedOpError, match="skewnorm has no 'entropy'"):
        stats.skewnorm.entropy


@pytest.mark.parametrize("dist, args", [
    ("beta", (6e6, 7e6)), ("beta", (2.0, 5e8)), ("beta", (5e8, 3.0)), ("t", (1e4,)),
    ("t", (np.inf,)), ("gamma", (1e5,)), ("invgamma", (1e4,)), ("chi2", (1e6,))])
def test_entropy_asymptotic_forms_are_scipys(dist, args):
    """Far out in the parameters, scipy's series (the exact form cancels there), with a finite
    gradient."""
    f = getattr(stats, dist).entropy
    got = _value(f, args, (0,))
    assert got == pytest.approx(getattr(ST, dist).entropy(*args), rel=1e-13)
    assert np.isfinite(bn.grad(f)(*args))


def test_beta_entropy_has_no_gap_where_scipys_gives_zero():
    """scipy's beta.entropy is 0 for 4.9e6 <= a = b < 4.96e6 (none of its four forms is
    chosen); here the exact form, between its neighbours on both sides."""
    assert ST.beta.entropy(4.92e6, 4.92e6) == 0.0
    got = _value(stats.beta.entropy, (4.92e6, 4.92e6), (0, 1))
    assert ST.beta.entropy(4.97e6, 4.97e6) < got < ST.beta.entropy(4.85e6, 4.85e6)


def test_logm_decides_again_on_a_replay_and_refuses_what_is_complex():
    """logm's square roots and iterations are decisions (guards): a replay at a matrix that
    needs other counts traces again and stays scipy's; scipy.linalg.logm inside a traced
    function is ours; disp=False gives scipy's error estimate; a matrix with an eigenvalue
    on the negative real axis (scipy's logm is complex) is an error that says so."""
    f = bn.value_and_grad(lambda a: np.sum(scipy.linalg.logm(a) * np.arange(4.0).reshape(2, 2)))
    for A in (np.array([[1.1, 0.2], [0.1, 0.9]]), np.array([[30.0, 1.0], [0.0, 0.5]]),
              np.array([[1.0, -0.5], [0.5, 1.0]])):       # the last: eigenvalues 1 +- 0.5i
        value, _ = f(A)
        assert value == pytest.approx(np.sum(scipy.linalg.logm(A) * np.arange(4.0).reshape(2, 2)),
                                      rel=1e-13)
    A = _spd(np.random.default_rng(4), 3)
    err = _value(lambda a: linalg.logm(a, disp=False)[1], (A,), (0,))
    assert err == pytest.approx(scipy.linalg.logm(A, disp=False)[1], abs=1e-14)
    with pytest.raises(bn.InputError, match="eigenvalue on the closed negative real axis"):
        bn.grad(lambda a: np.sum(linalg.logm(a)))(np.diag([-1.0, 2.0]))
    t, w = np.polynomial.legendre.leggauss(8)          # logm's Gauss-Legendre constants
    assert linalg._LOG_T == tuple((t + 1.0) / 2.0) and linalg._LOG_W == tuple(w / 2.0)


def test_xlogy_at_zero_has_finite_gradients():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 0.5])
    np.testing.assert_array_equal(_value(bsp.xlogy, (x, y), (0, 1)), S.xlogy(x, y))
    gx, gy = bn.grad(lambda x, y: np.sum(bsp.xlogy(x, y)), argnums=(0, 1))(x, y)
    assert np.all(np.isfinite(gy)) and gy[0] == 0.0 and gy[1] == 0.0 and gy[2] == 4.0


def test_logsumexp_masked_lanes_and_negative_weights():
    a = np.array([[-np.inf, 1.0, 2.0], [-np.inf, -np.inf, -np.inf]])
    np.testing.assert_allclose(_value(lambda a: bsp.logsumexp(a, axis=1), (a,), (0,)),
                               S.logsumexp(a, axis=1))
    b = np.array([1.0, -3.0])
    with np.errstate(invalid="ignore"):
        assert np.isnan(_value(lambda a: bsp.logsumexp(a, b=b), (np.zeros(2),), (0,)))


def test_gamma_sign_at_negative_arguments():
    x = np.array([-0.5, -1.5, -2.5, 0.5])
    np.testing.assert_allclose(_value(bsp.gamma, (x,), (0,)), S.gamma(x), rtol=1e-13)


def test_hessian_of_gammaln_is_trigamma():
    """Derivatives of any order stay rows: gammaln'' = polygamma(1, .)."""
    x = np.array([0.7, 2.5, 9.0])
    h = bn.hessian(lambda x: np.sum(bsp.gammaln(x)))(x)
    np.testing.assert_allclose(np.diag(h), S.polygamma(1, x), rtol=1e-13)
    h = bn.hessian(lambda x: np.sum(bsp.i1(x)))(x)
    # i1'' = i1 - i1' / x... checked against central differences of i1'
    d = lambda x: S.i0(x) - S.i1(x) / x                           # noqa: E731
    np.testing.assert_allclose(np.diag(h), (d(x + 1e-6) - d(x - 1e-6)) / 2e-6, rtol=1e-6)


# -- integrate --------------------------------------------------------------------------------
def _rhs(y, t, k, w):
    return -k * y + w * np.sin(3.0 * t)


def test_odeint_values_and_gradients_against_scipy():
    t = np.linspace(0.0, 2.0, 5)
    y0, k, w = np.array([1.0, 0.5]), 0.7, 0.3

    def ours(y0, k, w, t):
        return np.sum(integrate.odeint(_rhs, y0, t, args=(k, w), substeps=64) ** 2)

    def ref(y0, k, w, t):
        return float(np.sum(scipy.integrate.odeint(_rhs, y0, t, args=(k, w), rtol=1e-12,
                                                   atol=1e-12) ** 2))
    args = (y0, k, w, t)
    value, grads = bn.value_and_grad(ours, argnums=(0, 1, 2, 3))(*args)
    np.testing.assert_allclose(value, ref(*args), rtol=1e-9)
    for j, g in enumerate(grads):
        np.testing.assert_allclose(g, central_diff(ref, args, j, h=1e-5), rtol=1e-5,
                                   atol=1e-7)
    # the derivative of the discrete solution: the traced scheme's own slope (its tape
    # replayed at the shifted points)
    replayed = lambda *a: bn.value_and_grad(ours, argnums=(0, 1, 2, 3))(*a)[0]  # noqa: E731
    np.testing.assert_allclose(grads[0], central_diff(replayed, args, 0), rtol=1e-7)


def test_solve_ivp_with_t_eval_and_args():
    f = lambda t, y, k: -k * y                                     # noqa: E731
    res = bn.trace(lambda k: integrate.solve_ivp(f, (0.0, 1.0), np.array([1.0, 2.0]),
                                                 args=(k,), t_eval=np.array([0.5, 1.0])).y,
                   0.5)(0.5)
    np.testing.assert_allclose(res, np.array([[1.0], [2.0]]) * np.exp(-0.5 * np.array(
        [0.5, 1.0])), rtol=1e-9)
    g = bn.grad(lambda k: np.sum(integrate.solve_ivp(
        f, (0.0, 1.0), np.array([1.0, 2.0]), args=(k,), t_eval=np.array([0.5, 1.0])).y))(0.5)
    np.testing.assert_allclose(g, -3.0 * (0.5 * np.exp(-0.25) + np.exp(-0.5)), rtol=1e-9)


@pytest.mark.parametrize("rtol", [1e-3, 1e-7])
def test_odeint_meets_rtol_and_atol(rtol):
    """With rtol / atol the step count is chosen to meet them: the values are within the
    tolerance of the exact solution (y = y0 exp(-k t) sin-free decay, and a rotation), the
    gradient is the discrete solution's (central differences of the traced scheme at the
    same step count), and a tighter tolerance takes more steps."""
    t = np.linspace(0.0, 2.0, 6)

    def rhs(y, t, k):
        return np.array([-k * y[0] + y[1], -y[0] - k * y[1]])

    def exact(k):
        c, s_ = np.cos(t), np.sin(t)
        return np.exp(-k * t)[:, None] * np.stack([c + 0.5 * s_, 0.5 * c - s_], axis=1)

    y0 = np.array([1.0, 0.5])
    sol = bn.trace(lambda k: integrate.odeint(rhs, y0, t, args=(k,), rtol=rtol, atol=rtol),
                   0.3)(0.3)
    err = np.abs(sol - exact(0.3)) / (rtol + rtol * np.abs(exact(0.3)))
    assert err.max() <= 1.0, err.max()
    g = bn.grad(lambda k: np.sum(integrate.odeint(rhs, y0, t, args=(k,), rtol=rtol,
                                                  atol=rtol)))(0.3)
    want = (np.sum(exact(0.3 + 1e-6)) - np.sum(exact(0.3 - 1e-6))) / 2e-6
    assert abs(g - want) <= 30 * rtol * abs(want) + 1e-6, (g, want)


def test_odeint_tolerance_is_a_guard():
    """The step count chosen is a decision of the trace: a replay at inputs that need more
    steps traces a new variant (and meets the tolerance there too); inputs that need the same
    count reuse the tape."""
    t = np.array([0.0, 1.0])
    f = bn.value_and_grad(lambda k: integrate.odeint(lambda y, t: -k * y, 1.0, t,
                                                     rtol=1e-6, atol=1e-12)[1, 0])
    for k in (0.5, 0.51, 6.0, 0.52, 6.1):
        v, g = f(k)
        np.testing.assert_allclose(v, np.exp(-k), rtol=1e-6)
        np.testing.assert_allclose(g, -np.exp(-k), rtol=1e-4)
    key = next(iter(f.tapes))
    assert len(f.tapes) == 1 and len(f.variants[key]) == 2


def test_integrate_refuses_what_it_cannot_do():
    with pytest.raises(UnsupportedOpError, match="max_step"):
        bn.grad(lambda k: np.sum(integrate.solve_ivp(lambda t, y: -k * y, (0.0, 1.0),
                                                     np.ones(2), max_step=0.1).y))(0.5)
    with pytest.raises(bn.InputError, match="rtol must be a plain number"):
        bn.grad(lambda k: np.sum(integrate.odeint(lambda y, t: -k * y, 1.0,
                                                  np.array([0.0, 1.0]), rtol=k)))(0.5)
    with pytest.raises(bn.InputError, match="does not meet"):   # stiff: RK4 needs h < 2.8 / k
        bn.grad(lambda k: np.sum(integrate.odeint(lambda y, t: -k * y, 1.0,
                                                  np.array([0.0, 1.0]), rtol=1e-6)))(1e4)


# -- scipy's own functions on traced values ------------------------------------------------
UFUNCS = ["gammaln", "digamma", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "i0",
          "i1", "j0", "j1", "y0", "y1", "expit", "logit", "entr", "gamma", "rgamma", "gammasgn"]


@pytest.mark.parametrize("name", UFUNCS)
def test_scipy_special_ufuncs_trace_unchanged(name):
    """scipy.special.gammaln(x) on a traced x reaches burnumba's row (numpy's
    __array_ufunc__): the user's scipy code runs as it is."""
    x = np.array([0.2, 0.4, 0.7])
    theirs = getattr(scipy.special, name)
    ours = getattr(bsp, name)
    np.testing.assert_allclose(_value(theirs, (x,), (0,)), theirs(x), rtol=1e-13)
    g1 = bn.grad(lambda x: np.sum(theirs(x)))(x)
    g2 = bn.grad(lambda x: np.sum(ours(x)))(x)
    np.testing.assert_array_equal(g1, g2)


def test_scipy_binary_ufuncs_trace_unchanged():
    x, y = np.array([0.5, 2.0]), np.array([1.5, 0.3])
    for name in ("xlogy", "xlog1py", "betaln", "rel_entr"):
        f = getattr(scipy.special, name)
        np.testing.assert_allclose(_value(f, (x, y), (0, 1)), f(x, y), rtol=1e-13)
    # the rows whose first argument has no derivative: it is data here
    n = np.array([2.0, 3.0])
    for name in ("gammainc", "gammaincc", "gammaincinv", "gammainccinv", "jn", "yn"):
        f = getattr(scipy.special, name)
        yy = np.minimum(y, 0.9)             # the inverses take a probability
        np.testing.assert_allclose(_value(f, (n, yy), (1,)), f(n, yy), rtol=1e-13)
        np.testing.assert_array_equal(bn.grad(lambda y: np.sum(f(n, y)))(yy),
                                      bn.grad(lambda y: np.sum(getattr(bsp, name)(n, y)))(yy))


@pytest.mark.parametrize("name", ["expm1", "log1p", "cbrt", "exp2"])
def test_scipy_special_ufuncs_named_as_numpys_take_numpys_rows(name):
    """scipy.special.log1p(x) on a traced x is np.log1p(x): the same row, the same bits."""
    x = np.array([0.2, 0.4, 0.7])
    theirs, numpys = getattr(scipy.special, name), getattr(np, name)
    np.testing.assert_allclose(_value(theirs, (x,), (0,)), theirs(x), rtol=1e-15)
    np.testing.assert_array_equal(bn.grad(lambda x: np.sum(theirs(x)))(x),
                                  bn.grad(lambda x: np.sum(numpys(x)))(x))


AS_WRITTEN = [
    ("scipy.stats.norm.logpdf", lambda x: ST.norm.logpdf(x),
     lambda x: stats.norm.logpdf(x)),
    ("scipy.stats.norm.cdf (frozen)", lambda x: ST.norm(0.0, 2.0).cdf(x),
     lambda x: stats.norm.cdf(x, 0.0, 2.0)),
    ("scipy.stats.norm frozen at traced parameters", lambda x: ST.norm(x[0], 2.0).logpdf(x),
     lambda x: stats.norm.logpdf(x, x[0], 2.0)),
    ("scipy.stats.multivariate_normal.logpdf",
     lambda x: ST.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3)),
     lambda x: stats.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3))),
    ("scipy.special.logsumexp", lambda x: S.logsumexp(x), lambda x: bsp.logsumexp(x)),
    ("scipy.special.polygamma", lambda x: S.polygamma(1, x), lambda x: bsp.polygamma(1, x)),
    ("scipy.signal.convolve", lambda x: scipy.signal.convolve(x, np.ones(2)),
     lambda x: signal.convolve(x, np.ones(2))),
    ("scipy.integrate.odeint", lambda x: scipy.integrate.odeint(
        lambda y, t: -y, x, np.array([0.0, 1.0])),
     lambda x: integrate.odeint(lambda y, t: -y, x, np.array([0.0, 1.0]))),
    ("scipy.linalg.expm", lambda x: scipy.linalg.expm(np.outer(x, x)),
     lambda x: linalg.expm(np.outer(x, x))),
]


@pytest.mark.parametrize("name, call, ours", AS_WRITTEN, ids=[r[0] for r in AS_WRITTEN])
def test_scipy_calls_inside_a_traced_function_run_as_written(name, call, ours):
    """scipy's own functions, read by the traced function from a module it names (ST.norm,
    scipy.linalg.expm), are burnumba.scipy's on traced values while it is traced
    (transforms/library_calls.py): the same values and gradients, and scipy's objects are
    back in place afterwards."""
    x = np.array([0.3, 0.5, 0.9])
    before = (ST.norm, S.logsumexp, scipy.linalg.expm)
    value, grad = bn.value_and_grad(lambda x: np.sum(call(x)))(x)
    want_value, want_grad = bn.value_and_grad(lambda x: np.sum(ours(x)))(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-14)
    # scipy's own value (odeint: burnumba's integrator against LSODA, to scipy's rtol)
    np.testing.assert_allclose(value, np.sum(call(x)), rtol=1e-7 if "odeint" in name else 1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-14)
    assert (ST.norm, S.logsumexp, scipy.linalg.expm) == before


_scipy_logsumexp = scipy.special.logsumexp          # a name bound to scipy's function


def _autograd_style_loss(mu, log_sigma, x):
    """A Gaussian fit as an autograd user writes it, with scipy instead of autograd.scipy:
    scipy.stats and scipy.special through names and modules, a frozen distribution and a
    closure over a scipy function."""
    cdf = scipy.stats.norm.cdf

    def tail(v):
        return np.log(1.0 - cdf(v))
    sigma = np.exp(log_sigma)
    return (-np.sum(scipy.stats.norm(mu, sigma).logpdf(x)) + _scipy_logsumexp(x / sigma)
            + tail(mu))


def test_an_autograd_style_program_with_scipy_runs_as_written():
    x = np.array([0.2, -0.4, 1.1, 0.7])

    def ours(mu, log_sigma, x):
        sigma = np.exp(log_sigma)
        return (-np.sum(stats.norm.logpdf(x, mu, sigma)) + bsp.logsumexp(x / sigma)
                + np.log(1.0 - stats.norm.cdf(mu)))

    got = bn.value_and_grad(_autograd_style_loss, argnums=(0, 1))(0.3, -0.2, x)
    want = bn.value_and_grad(ours, argnums=(0, 1))(0.3, -0.2, x)
    assert got[0] == pytest.approx(_autograd_style_loss(0.3, -0.2, x), rel=1e-12)
    assert got[0] == pytest.approx(want[0], rel=1e-14)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-13)
    assert _scipy_logsumexp is scipy.special.logsumexp and type(scipy.stats.norm).__name__ \
        == "norm_gen"


def test_other_threads_get_scipys_own_results_during_a_trace():
    """While one thread traces, another thread reading scipy.stats.norm gets scipy's own
    object (the module's class gives the stand-in to the tracing thread's code only), and
    scipy's own result."""
    import threading
    stop, errors = threading.Event(), []
    x = np.linspace(-2.0, 2.0, 7)
    want = scipy.stats.norm.logpdf(x, 0.3, 1.5)
    norm = scipy.stats.norm

    def plain():
        while not stop.is_set():
            if scipy.stats.norm is not norm or not isinstance(scipy.stats.norm,
                                                              scipy.stats.rv_continuous):
                errors.append("not scipy's object")
            if not np.array_equal(scipy.stats.norm.logpdf(x, 0.3, 1.5), want):
                errors.append("differs")

    worker = threading.Thread(target=plain)
    worker.start()
    try:
        for k in range(30):
            f = eval("lambda m: np.sum(scipy.stats.norm.logpdf(x, m, 1.5)) * %d" % (k + 1),
                     {"np": np, "scipy": scipy, "x": x})
            bn.grad(f)(0.3)                              # a new function: a new trace
    finally:
        stop.set()
        worker.join()
    assert not errors and type(scipy.stats.norm).__name__ == "norm_gen"


REFUSED = [
    ("scipy.stats.t.ppf", lambda x: ST.t.ppf(x, 3.0), "no replacement"),
    ("scipy.special.logsumexp by a computed name",
     lambda x: getattr(S, "logsum" + "exp")(x), "burnumba.scipy.special.logsumexp"),
]


@pytest.mark.parametrize("name, call, replacement", REFUSED, ids=[r[0] for r in REFUSED])
def test_scipy_calls_that_cannot_trace_name_the_replacement(name, call, replacement):
    """A scipy function burnumba.scipy lacks, or one the function reaches in a way the walk
    does not follow (a computed name), refuses a traced value with a burnumba error that
    names our function and points at the user's line (this file)."""
    with pytest.raises(ConcretizationError) as err:
        bn.grad(lambda x: np.sum(call(x)))(np.array([0.3, 0.5, 0.9]))
    message = str(err.value)
    assert replacement in message and name.split(" ")[0] in message
    assert "test_scipy.py" in message.splitlines()[-1]


def test_unsupported_scipy_ufunc_is_named():
    # erfcx (scaled erfc): not provided (iv, the example before, now is: the Bessel rows)
    with pytest.raises(UnsupportedOpError, match="scipy.special.erfcx .*burnumba.scipy"):
        bn.grad(lambda x: np.sum(S.erfcx(x)))(np.ones(2))


def test_the_support_table_lists_every_burnumba_scipy_function():
    """docs' generated list names each public function of burnumba.scipy (tools/supported)."""
    from burnumba.tools import supported
    text = supported.markdown()
    for module, area in ((bsp, "special"), (linalg, "linalg"), (signal, "signal"),
                         (integrate, "integrate")):
        for fn in module.__all__:
            assert f"`{area}.{fn}`" in text, fn
    for dist in stats.__all__:
        for fn in stats.METHODS:
            if hasattr(getattr(stats, dist), fn):
                assert f"`stats.{dist}.{fn}`" in text, (dist, fn)


def test_bessel_order_one_slopes_at_subnormal_arguments():
    """j1' = j0 - j1 / a and i1' = i0 - i1 / a at a = +-5e-324 (hypothesis found it): j1(a)
    is subnormal there and j1(a) / a rounded to 1, so the slope came out 1, not 1/2."""
    for f in (bsp.j1, bsp.i1):
        for a in (5e-324, -5e-324, 1e-160, 0.0):
            assert bn.grad(f)(a) == 0.5, (f, a)


def test_a_function_a_distribution_lacks_is_named_not_a_bare_attribute_error():
    """skewnorm has no ppf, halfnorm no isf: an error naming what the module has and scipy's
    own function for plain values; hasattr still answers False."""
    with pytest.raises(bn.UnsupportedOpError, match=r"skewnorm has no 'ppf': it defines "
                                                       r"cdf, logcdf, logpdf, logsf, pdf, sf\."
                                                       r".*scipy.stats.skewnorm"):
        stats.skewnorm.ppf
    # the module's scipy functions only, not its helpers (multivariate_t uses mvn's)
    with pytest.raises(bn.UnsupportedOpError, match=r"multivariate_normal has no 'cdf': it "
                                                       r"defines entropy, logpdf, pdf\. "):
        stats.multivariate_normal.cdf
    assert not hasattr(stats.halfnorm, "isf") and hasattr(stats.halfnorm, "ppf")
    for name in stats.__all__:
        with pytest.raises(AttributeError):
            getattr(stats, name).no_such_function


def test_multivariate_t_with_infinite_df_is_the_normal_and_invalid_df_is_nan():
    x, loc, S = np.array([[0.5, 1.0], [0.0, 0.2]]), np.array([0.1, -0.2]), _spd(
        np.random.default_rng(3), 2)
    np.testing.assert_allclose(stats.multivariate_t.logpdf(x, loc, S, np.inf),
                               ST.multivariate_t.logpdf(x, loc, S, np.inf), rtol=1e-13)
    f = bn.value_and_grad(lambda df: np.sum(stats.multivariate_t.logpdf(x, loc, S, df)))
    assert np.isnan(f(-1.0)[0]) and np.isnan(f(0.0)[0]) and np.isfinite(f(3.0)[1])
