"""``burnumba.scipy.stats.dirichlet``: the Dirichlet distribution, as scipy.stats.dirichlet
(alpha of shape (K,); x with its K components along the FIRST axis, scipy's layout):
logpdf and pdf, with gradients to x and alpha."""
from ...numpy import elementwise as ew
from ...numpy import reductions as red
from ...numpy import shapes
from .. import special
from ._common import eager, traced


def logpdf(x, alpha):
    """sum_k xlogy(alpha_k - 1, x_k) - (sum_k gammaln(alpha_k) - gammaln(sum_k alpha_k))."""
    if not traced(x, alpha):
        return eager("dirichlet", "logpdf", x, alpha)
    nd = len(getattr(x, "shape", ()))
    a = shapes.reshape(alpha, (-1,) + (1,) * (nd - 1)) if nd > 1 else alpha
    norm = red.sum(special.gammaln(alpha)) - special.gammaln(red.sum(alpha))
    return red.sum(special.xlogy(a - 1.0, x), axis=0) - norm


def pdf(x, alpha):
    if not traced(x, alpha):
        return eager("dirichlet", "pdf", x, alpha)
    return ew.exp(logpdf(x, alpha))
