"""``burnumba.scipy.stats.multinomial``: the multinomial distribution, as
scipy.stats.multinomial (n, p): logpmf and pmf of counts x (shape (..., k)) with the gradient to
p (and to n, through gammaln). p is used as given, as jax.scipy's: its gradient is the partial
derivative in every p_i, which along the simplex (p from a softmax, say) is the derivative of
scipy's function. p must sum to 1 (within 1e-10) with entries in [0, 1], or the value is NaN
(scipy 1.17 adjusts the last entry with a warning, and gives NaN from 1.18 on)."""
from ...numpy import elementwise as ew
from ...numpy import reductions
from .. import special
from ._common import method

INF = float("inf")


def _every(mask):
    """mask holds along the last axis (a mask is 0 / 1 on a tape: its minimum)"""
    return ew.greater(reductions.min(ew.where(mask, 1.0, 0.0), axis=-1), 0.5)


@method("multinomial")
def logpmf(x, n, p):
    """gammaln(n + 1) + sum(xlogy(x, p) - gammaln(x + 1)) over the last axis, for integer
    counts x >= 0 summing to n (-inf elsewhere)"""
    whole = ew.logical_and(ew.greater_equal(x, 0.0), ew.equal(ew.floor(x), x))
    ok = ew.logical_and(_every(whole),
                        ew.equal(reductions.sum(x, axis=-1), n))
    xs = ew.where(whole, x, 0.0)
    out = special.gammaln(n + 1.0) + reductions.sum(
        special.xlogy(xs, p) - special.gammaln(xs + 1.0), axis=-1)
    p_ok = ew.logical_and(
        ew.less_equal(ew.absolute(reductions.sum(p, axis=-1) - 1.0), 1e-10),
        _every(ew.logical_and(ew.greater_equal(p, 0.0), ew.less_equal(p, 1.0))))
    return ew.where(p_ok, ew.where(ok, out, -INF), float("nan"))


@method("multinomial")
def pmf(x, n, p):
    return ew.exp(logpmf(x, n, p))
