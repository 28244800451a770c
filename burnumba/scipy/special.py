"""``burnumba.scipy.special``: scipy.special's functions on traced values, with scipy's names,
signatures and defaults (``from burnumba.scipy.special import logsumexp`` where
``autograd.scipy.special`` or ``jax.scipy.special`` was imported).

The functions no composition computes to float64 accuracy are rows of their own
(kernels/maps_special.py: gammaln, polygamma with digamma, erfc, erfinv, ndtri, log_ndtr,
i0, i1, the Bessel functions j0, j1, y0, y1, jn, yn and those of real order jv, yv, iv, ive,
kv, kve, the incomplete gamma functions gammainc, gammaincc and their inverses gammaincinv,
gammainccinv, Owen's T function owens_t; the incomplete beta functions
betainc, betaincc are three-operand block rows, kernels/blocks_beta.py); the rest are built
from rows here, in the forms that keep their accuracy (ndtr through erfc, logit through
log1p, xlogy with its 0 log 0 = 0 guarded so that no NaN enters a gradient). On plain numpy
values each function calls scipy.special itself.

scipy.special's own ufuncs (``scipy.special.gammaln(x)`` on a traced x) arrive here through
numpy's ``__array_ufunc__``: each function below is registered for the ufunc of its name
(``tracing.dispatch.implements_scipy_ufunc``; scipy is not imported to do that).
"""
import numbers

import numpy as np

from .._errors import InputError, UnsupportedOpError, at_user_site
from ..kernels import BY_NAME as _ROWS
from ..kernels.special_beta import (betainc_dab as _betainc_dab_scalar,
                                    betainc_dx_dab as _betainc_dx_dab_scalar)
from ..kernels.special_gamma import gammainc_da as _gammainc_da_scalar
from ..numpy import functional as _functional
from ..numpy import elementwise as _ew
from ..numpy import reductions as _red
from ..numpy import shapes as _shapes
from ..numpy._common import _builder, namesake
from ..tracing.conversions import refuse as _refuse
from ..tracing.dispatch import implements_scipy_ufunc
from ..tracing.tracer import Var as _Var, broadcast_to as _expand, tiles as _tiles

__all__ = ["gammaln", "digamma", "psi", "polygamma", "multigammaln", "gamma", "rgamma",
           "gammasgn", "beta",
           "betaln", "erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "i0",
           "i1", "j0", "j1", "y0", "y1", "gammainc", "gammaincc", "gammaincinv",
           "gammainccinv", "betainc", "betaincc",
           "jn", "yn", "jv", "yv", "iv", "ive", "kv", "kve", "k0", "k1", "k0e", "k1e",
           "i0e", "i1e", "owens_t",
           "expit", "logit",
           "log_expit", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "logsumexp",
           "softmax", "log_softmax"]


def _scipy(name):
    import scipy.special                       # the eager path only: not at import
    return getattr(scipy.special, name)


def _row(name, x, imm=0.0):
    """The map row ``name`` on x, or scipy.special's function on plain values."""
    b = _builder(x)
    if b is None:
        return _scipy(name)(x)
    return b.map(name, x, imm=imm)


def _traced(*xs):
    return _builder(*xs) is not None


# -- rows ------------------------------------------------------------------------------------
@implements_scipy_ufunc("gammaln")
def gammaln(x):
    """log |Gamma(x)| (a row; +inf at the poles 0 and the negative integers).

    >>> bn.grad(lambda x: gammaln(x))(3.0)        # digamma(3) = 0.9227843350984671
    """
    return _row("gammaln", x)


@implements_scipy_ufunc("psi", "digamma")
def digamma(x):
    """psi(x) = d/dx log Gamma(x) (the polygamma row with n = 0)."""
    b = _builder(x)
    return _scipy("digamma")(x) if b is None else b.map("polygamma", x, imm=0.0)


psi = digamma


def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma, for an integer order n >= 0 (a constant:
    its own derivative is not defined)."""
    if _traced(n) or not isinstance(n, numbers.Integral) and not (
            np.ndim(n) == 0 and float(n) == int(n)):
        raise InputError(at_user_site(
            f"polygamma(n, x): n must be a constant integer >= 0, got {n!r}"))
    n = int(n)
    if not 0 <= n <= 300:
        raise InputError(at_user_site(f"polygamma(n, x): n must be in [0, 300] (n! overflows "
                                      f"past 170), got {n}"))
    b = _builder(x)
    if b is None:
        return _scipy("polygamma")(n, x)
    return b.map("polygamma", x, imm=float(n))


@implements_scipy_ufunc("erfc")
def erfc(x):
    """1 - erf(x), without the cancellation (a row)."""
    return _row("erfc", x)


@implements_scipy_ufunc("erfinv")
def erfinv(y):
    """The inverse of erf on [-1, 1] (a row)."""
    return _row("erfinv", y)


@implements_scipy_ufunc("ndtri")
def ndtri(p):
    """The standard normal quantile, norm.ppf (a row)."""
    return _row("ndtri", p)


@implements_scipy_ufunc("log_ndtr")
def log_ndtr(x):
    """log of the standard normal CDF, accurate in both tails (a row)."""
    return _row("log_ndtr", x)


@implements_scipy_ufunc("i0")
def i0(x):
    """The modified Bessel function of the first kind of order 0 (a row)."""
    return _row("i0", x)


@implements_scipy_ufunc("i1")
def i1(x):
    """The modified Bessel function of the first kind of order 1 (a row)."""
    return _row("i1", x)


@implements_scipy_ufunc("j0")
def j0(x):
    """The Bessel function of the first kind of order 0 (a row; j0' = -j1).

    >>> bn.grad(lambda x: j0(x))(1.5)             # -j1(1.5) = -0.5579365079100996
    """
    return _row("j0", x)


@implements_scipy_ufunc("j1")
def j1(x):
    """The Bessel function of the first kind of order 1 (a row; j1' = j0 - j1 / x, 1/2 at
    0)."""
    return _row("j1", x)


@implements_scipy_ufunc("y0")
def y0(x):
    """The Bessel function of the second kind of order 0 (a row; y0' = -y1): -inf at 0 and
    NaN for x < 0, as scipy's."""
    return _row("y0", x)


@implements_scipy_ufunc("y1")
def y1(x):
    """The Bessel function of the second kind of order 1 (a row; y1' = y0 - y1 / x): -inf
    at 0 and NaN for x < 0, as scipy's."""
    return _row("y1", x)


def _binary_row(name, a, x):
    """The binary map row ``name`` on (a, x), or scipy.special's function on plain values."""
    b = _builder(a, x)
    if b is None:
        return _scipy(name)(a, x)
    return b.map(name, a, x)


@implements_scipy_ufunc("gammainc")
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a) (a
    row). Its derivative in x is x^(a-1) e^-x / Gamma(a); in ``a`` it is dP/da, the
    gammainc_da row (as JAX's igamma_grad_a; autograd has none), whose own derivative in
    ``a`` is refused: a second derivative in ``a`` is an error that names it.

    >>> bn.grad(lambda x: gammainc(2.0, x))(1.5)  # 1.5 e^-1.5 = 0.33469524022264474
    >>> bn.grad(lambda a: gammainc(a, 1.5))(2.0)  # -0.31348863782507935
    """
    return _binary_row("gammainc", a, x)


@implements_scipy_ufunc("gammaincc")
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (a row,
    accurate in the upper tail); d/dx = -x^(a-1) e^-x / Gamma(a), d/da = -dP/da (as
    gammainc)."""
    return _binary_row("gammaincc", a, x)


@implements_scipy_ufunc("gammaincinv")
def gammaincinv(a, p):
    """x with gammainc(a, x) = p (a row): the inverse in x, whose derivative in p is the
    reciprocal slope Gamma(a) e^x x^(1-a), and in ``a`` -(dP/da) Gamma(a) e^x x^(1-a) (the
    implicit function theorem at the output x)."""
    return _binary_row("gammaincinv", a, p)


@implements_scipy_ufunc("gammainccinv")
def gammainccinv(a, q):
    """x with gammaincc(a, x) = q (a row, accurate for small q); d/dq = -Gamma(a) e^x
    x^(1-a), d/da as gammaincinv's at the same x."""
    return _binary_row("gammainccinv", a, q)


@implements_scipy_ufunc("owens_t")
def owens_t(h, a):
    """Owen's T function T(h, a) = 1/(2 pi) int_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx (a
    row, kernels/special_owens.py: Patefield and Tandy's method, as scipy's). Its
    derivatives are closed forms: dT/dh = -phi(h) erf(a h / sqrt 2) / 2 and dT/da =
    e^(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2)).

    >>> bn.grad(lambda a: owens_t(0.0, a))(1.0)   # 1 / (4 pi) = 0.07957747154594767
    """
    return _binary_row("owens_t", h, a)


def _gammainc_da(a, x):
    """dP(a, x)/da, the derivative of gammainc in a (the gammainc_da row; a traced
    derivative of gammainc, gammaincc or their inverses appends it; scipy has no such
    function). On plain values, the row's scalar code (kernels/special_gamma.py) elementwise.
    Its derivative in x is d/da of the density; in ``a`` it is refused (an error that names
    it)."""
    if not _traced(a, x):
        out = np.vectorize(_gammainc_da_scalar, otypes=[np.float64])(a, x)
        return out if out.shape else float(out)
    return _binary_row("gammainc_da", a, x)


def _beta_row(name, a, b, x):
    """The three-operand block row ``name`` (kernels/blocks_beta.py: a is the node P[p], b
    a0, x a1) on numpy-broadcast operands, each left a tile of the result where it is one;
    an operand the row refuses (``Op.refused``: betainc_da's and betainc_db's a and b) that
    depends on a differentiated argument is an error that names it."""
    bld = _builder(a, b, x)
    xs = [bld.lift(v) for v in (a, b, x)]
    try:
        shape = np.broadcast_shapes(*(v.shape for v in xs))
    except ValueError:
        raise InputError(at_user_site(
            f"{name}: operands could not be broadcast together with shapes "
            f"{' '.join(str(v.shape) for v in xs)}")) from None
    xs = [v if _tiles(v.shape, shape) else _expand(v, shape) for v in xs]
    row = _ROWS[name]
    _refuse(row, xs, bld.need)
    a, b, x = xs
    node = bld.add(name, shape, b.node, x.node, params=[a.node],
                   need=any(bool(bld.need[xs[k].node]) for k in row.diff_operands))
    return _Var(bld, node, shape)


@implements_scipy_ufunc("betainc")
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b) (a row,
    kernels/blocks_beta.py). Its derivative in x is the beta density x^(a-1) (1-x)^(b-1) /
    B(a, b); in ``a`` and ``b`` the rows betainc_da and betainc_db (kernels/special_beta.py:
    the continued fraction carried in forward mode; autograd and JAX have none), whose own
    derivatives in ``a`` and ``b`` are refused: a second derivative in the shape is an error
    that names it (the mixed ones with x run). Values as scipy's: NaN outside 0 <= x <= 1
    and for a < 0 or b < 0.

    >>> bn.grad(lambda x: betainc(2.0, 3.0, x))(0.5)   # 12 x (1 - x)^2 = 1.5
    >>> bn.grad(lambda a: betainc(a, 3.0, 0.5))(2.0)   # -0.19528868663496224
    """
    if not _traced(a, b, x):
        return _scipy("betainc")(a, b, x)
    return _beta_row("betainc", a, b, x)


@implements_scipy_ufunc("betaincc")
def betaincc(a, b, x):
    """The complement 1 - I_x(a, b) of betainc (a row, accurate in the upper tail); its
    derivatives are betainc's negated (d/dx minus the beta density)."""
    if not _traced(a, b, x):
        return _scipy("betaincc")(a, b, x)
    return _beta_row("betaincc", a, b, x)


def _betainc_dx(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of betainc in x (the betainc_dx row;
    a traced derivative appends it). On plain values, in log space with scipy.special."""
    if not _traced(a, b, x):
        return np.exp(_scipy("xlogy")(np.subtract(a, 1.0), x)
                      + _scipy("xlog1py")(np.subtract(b, 1.0), np.negative(x))
                      - _scipy("betaln")(a, b))
    return _beta_row("betainc_dx", a, b, x)


def _plain(fn, k, a, b, x):
    """Element k of the pair ``fn`` gives (a row's scalar code), elementwise on plain values."""
    out = np.vectorize(lambda *v: fn(*v)[k], otypes=[np.float64])(a, b, x)
    return out if out.shape else float(out)


def _betainc_da(a, b, x):
    """dI_x(a, b)/da, the derivative of betainc in a (the betainc_da row; a traced derivative
    of betainc or betaincc appends it; scipy has no such function). On plain values, the
    row's scalar code (kernels/special_beta.py) elementwise. Its derivative in x is d/da of
    the density; in ``a`` and ``b`` it is refused (an error that names them)."""
    if not _traced(a, b, x):
        return _plain(_betainc_dab_scalar, 0, a, b, x)
    return _beta_row("betainc_da", a, b, x)


def _betainc_db(a, b, x):
    """dI_x(a, b)/db (the betainc_db row), as _betainc_da."""
    if not _traced(a, b, x):
        return _plain(_betainc_dab_scalar, 1, a, b, x)
    return _beta_row("betainc_db", a, b, x)


def _betainc_dab(a, b, x):
    """(dI/da, dI/db): the kernels' betainc_dab on traced values (derive/maps.py)."""
    return _betainc_da(a, b, x), _betainc_db(a, b, x)


def _betainc_dx_dab(a, b, x):
    """(d/da, d/db) of the beta density: the density times log x - psi(a) + psi(a + b) and
    times log(1 - x) - psi(b) + psi(a + b) (the kernels' betainc_dx_dab; on plain values its
    scalar code)."""
    if not _traced(a, b, x):
        return (_plain(_betainc_dx_dab_scalar, 0, a, b, x),
                _plain(_betainc_dx_dab_scalar, 1, a, b, x))
    d = _betainc_dx(a, b, x)
    both = digamma(a + b)
    return (d * (_ew.log(x) - digamma(a) + both), d * (_ew.log1p(-x) - digamma(b) + both))


def _integer_order(name, n):
    """An order n given as numbers must be integers; a traced n gives NaN at a
    non-integer."""
    if not _traced(n) and not np.all(np.asarray(n) == np.floor(np.asarray(n))):
        raise InputError(at_user_site(
            f"{name}(n, x): n must hold integers (the integer-order Bessel function), got "
            f"{n!r}; for a real order use burnumba.scipy.special.jv / yv"))


def _plain_integers(v):
    """Whether the order v is given as numbers (not traced) that are all finite integers:
    then jv and yv are the jn and yn rows (their own code for integer orders)."""
    if _traced(v):
        return False
    a = np.asarray(v, dtype=np.float64)
    return bool(np.all(np.isfinite(a)) and np.all(a == np.floor(a)))


@implements_scipy_ufunc("jn")          # scipy.special.jn is jv itself: it reaches jv below
def jn(n, x):
    """The Bessel function of the first kind of integer order n (a row; d/dx = (jn(n - 1, x)
    - jn(n + 1, x)) / 2; no derivative in ``n``, refused as gammainc's ``a``). scipy's jn
    is jv, of a real order: here the order must hold integers.

    >>> bn.grad(lambda x: jn(2, x))(1.5)          # (j1 - jn(3)) / 2 = 0.23...
    """
    _integer_order("jn", n)
    return _binary_row("jn", n, x)


@implements_scipy_ufunc("yn")
def yn(n, x):
    """The Bessel function of the second kind of integer order n (a row; d/dx = (yn(n - 1,
    x) - yn(n + 1, x)) / 2; -inf at 0 and NaN for x < 0, as scipy's)."""
    _integer_order("yn", n)
    return _binary_row("yn", n, x)


@implements_scipy_ufunc("jv")
def jv(v, x):
    """The Bessel function of the first kind of real order v (a row, kernels/
    special_bessel_real.py; an order given as integers is the jn row). d/dx = (jv(v - 1, x) -
    jv(v + 1, x)) / 2; no derivative in ``v`` (refused: an error that names it). As scipy's:
    NaN for x < 0 at a non-integer v, +-inf at x = 0 for a negative non-integer v.

    >>> bn.grad(lambda x: jv(0.5, x))(1.0)        # (jv(-0.5, 1) - jv(1.5, 1)) / 2 = 0.1...
    """
    return _binary_row("jn" if _plain_integers(v) else "jv", v, x)


@implements_scipy_ufunc("yv")
def yv(v, x):
    """The Bessel function of the second kind of real order v (a row; an order given as
    integers is the yn row). d/dx = (yv(v - 1, x) - yv(v + 1, x)) / 2; no derivative in
    ``v``. NaN for x < 0, -inf at x = 0 for v >= 0, as scipy's."""
    return _binary_row("yn" if _plain_integers(v) else "yv", v, x)


@implements_scipy_ufunc("iv")
def iv(v, x):
    """The modified Bessel function of the first kind of real order v (a row). d/dx =
    (iv(v - 1, x) + iv(v + 1, x)) / 2; no derivative in ``v``. NaN for x < 0 at a non-integer
    v, as scipy's.

    >>> bn.grad(lambda x: iv(2.5, x))(1.0)        # (iv(1.5, 1) + iv(3.5, 1)) / 2
    """
    return _binary_row("iv", v, x)


@implements_scipy_ufunc("ive")
def ive(v, x):
    """iv(v, x) e^-|x| (a row, computed scaled: no overflow for large x). d/dx = (iv'(v, x)
    - sign(x) iv(v, x)) e^-|x|; no derivative in ``v``."""
    return _binary_row("ive", v, x)


@implements_scipy_ufunc("kv")
def kv(v, x):
    """The modified Bessel function of the second kind of real order v (a row; Matern
    covariances). d/dx = -(kv(v - 1, x) + kv(v + 1, x)) / 2; no derivative in ``v``. +inf at
    x = 0, NaN for x < 0, as scipy's.

    >>> bn.grad(lambda x: kv(1.5, x))(2.0)        # -(kv(0.5, 2) + kv(2.5, 2)) / 2
    """
    return _binary_row("kv", v, x)


@implements_scipy_ufunc("kve")
def kve(v, x):
    """kv(v, x) e^x (a row, computed scaled). d/dx = (kv'(v, x) + kv(v, x)) e^x; no
    derivative in ``v``."""
    return _binary_row("kve", v, x)


@implements_scipy_ufunc("k0")
def k0(x):
    """K_0(x): the kv row at order 0."""
    return kv(0.0, x) if _traced(x) else _scipy("k0")(x)


@implements_scipy_ufunc("k1")
def k1(x):
    """K_1(x): the kv row at order 1."""
    return kv(1.0, x) if _traced(x) else _scipy("k1")(x)


@implements_scipy_ufunc("k0e")
def k0e(x):
    """K_0(x) e^x: the kve row at order 0."""
    return kve(0.0, x) if _traced(x) else _scipy("k0e")(x)


@implements_scipy_ufunc("k1e")
def k1e(x):
    """K_1(x) e^x: the kve row at order 1."""
    return kve(1.0, x) if _traced(x) else _scipy("k1e")(x)


@implements_scipy_ufunc("i0e")
def i0e(x):
    """I_0(x) e^-|x|: the ive row at order 0."""
    return ive(0.0, x) if _traced(x) else _scipy("i0e")(x)


@implements_scipy_ufunc("i1e")
def i1e(x):
    """I_1(x) e^-|x|: the ive row at order 1."""
    return ive(1.0, x) if _traced(x) else _scipy("i1e")(x)


# the derivatives in x as rows (derive/maps.py: the rules' jv_dx ... on traced values, so that
# derivatives of any order are rows); on plain values scipy's jvp, yvp, ivp, kvp
def _jv_dx(v, x):
    if not _traced(v, x):
        return _scipy("jvp")(v, x)
    return (jv(v - 1.0, x) - jv(v + 1.0, x)) * 0.5


def _yv_dx(v, x):
    if not _traced(v, x):
        return _scipy("yvp")(v, x)
    return (yv(v - 1.0, x) - yv(v + 1.0, x)) * 0.5


def _iv_dx(v, x):
    if not _traced(v, x):
        return _scipy("ivp")(v, x)
    return (iv(v - 1.0, x) + iv(v + 1.0, x)) * 0.5


def _ive_dx(v, x):
    if not _traced(v, x):
        return (_scipy("ive")(np.subtract(v, 1.0), x) + _scipy("ive")(np.add(v, 1.0), x)) * 0.5 \
            - np.sign(x) * _scipy("ive")(v, x)
    return (ive(v - 1.0, x) + ive(v + 1.0, x)) * 0.5 - _ew.sign(x) * ive(v, x)


def _kv_dx(v, x):
    if not _traced(v, x):
        return _scipy("kvp")(v, x)
    return (kv(v - 1.0, x) + kv(v + 1.0, x)) * -0.5


def _kve_dx(v, x):
    if not _traced(v, x):
        return (_scipy("kve")(np.subtract(v, 1.0), x) + _scipy("kve")(np.add(v, 1.0), x)) \
            * -0.5 + _scipy("kve")(v, x)
    return (kve(v - 1.0, x) + kve(v + 1.0, x)) * -0.5 + kve(v, x)


@implements_scipy_ufunc("erf")
def erf(x):
    """The error function (the erf row)."""
    return _ew.erf(x)


# -- built from rows -------------------------------------------------------------------------
@implements_scipy_ufunc("erfcinv")
def erfcinv(y):
    """The inverse of erfc on [0, 2]: -ndtri(y / 2) / sqrt 2 (exact scaling, so the tail
    keeps its accuracy down to the subnormals)."""
    if not _traced(y):
        return _scipy("erfcinv")(y)
    return ndtri(y * 0.5) * -0.7071067811865476


@implements_scipy_ufunc("ndtr")
def ndtr(x):
    """The standard normal CDF, erfc(-x / sqrt 2) / 2 (accurate in the left tail)."""
    if not _traced(x):
        return _scipy("ndtr")(x)
    return erfc(x * -0.7071067811865476) * 0.5


@implements_scipy_ufunc("expit")
def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)) (the sigmoid row)."""
    return _ew.sigmoid(x) if _traced(x) else _scipy("expit")(x)


@implements_scipy_ufunc("logit")
def logit(p):
    """log(p / (1 - p)), as log(p) - log1p(-p)."""
    if not _traced(p):
        return _scipy("logit")(p)
    return _ew.log(p) - _ew.log1p(-p)


@implements_scipy_ufunc("log_expit")
def log_expit(x):
    """log(expit(x)) = -log(1 + exp(-x)) = -logaddexp(0, -x), stable both ways."""
    if not _traced(x):
        return _scipy("log_expit")(x)
    return -_ew.logaddexp(0.0, -x)


def _zero_guarded(x, value, y_safe_of):
    """where(x == 0, 0, value(x, y_safe)) with the y the value reads replaced where x == 0,
    so that the unused branch holds no inf / NaN a gradient would multiply by 0."""
    zero = _ew.equal(x, 0.0)
    return _ew.where(zero, 0.0, value(y_safe_of(zero)))


@implements_scipy_ufunc("xlogy")
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (whatever y; scipy's convention, NaN y aside); the
    gradient with respect to y is x / y, 0 where x == 0."""
    if not _traced(x, y):
        return _scipy("xlogy")(x, y)
    return _zero_guarded(x, lambda ys: x * _ew.log(ys), lambda zero: _ew.where(zero, 1.0, y))


@implements_scipy_ufunc("xlog1py")
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0."""
    if not _traced(x, y):
        return _scipy("xlog1py")(x, y)
    return _zero_guarded(x, lambda ys: x * _ew.log1p(ys), lambda zero: _ew.where(zero, 0.0, y))


@implements_scipy_ufunc("entr")
def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below (scipy's entr)."""
    if not _traced(x):
        return _scipy("entr")(x)
    pos = _ew.greater(x, 0.0)
    xs = _ew.where(pos, x, 1.0)
    inside = _ew.where(_ew.equal(x, 0.0), 0.0, -np.inf)
    return _ew.where(pos, -xs * _ew.log(xs), _ew.where(_ew.isnan(x), x, inside))


@implements_scipy_ufunc("rel_entr")
def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 at x = 0, y >= 0; +inf otherwise (scipy's rel_entr)."""
    if not _traced(x, y):
        return _scipy("rel_entr")(x, y)
    both = _ew.logical_and(_ew.greater(x, 0.0), _ew.greater(y, 0.0))
    xs, ys = _ew.where(both, x, 1.0), _ew.where(both, y, 1.0)
    edge = _ew.where(_ew.logical_and(_ew.equal(x, 0.0), _ew.greater_equal(y, 0.0)), 0.0, np.inf)
    nan = _ew.logical_or(_ew.isnan(x), _ew.isnan(y))
    return _ew.where(both, xs * (_ew.log(xs) - _ew.log(ys)),
                     _ew.where(nan, x + y, edge))


@implements_scipy_ufunc("kl_div")
def kl_div(x, y):
    """x log(x / y) - x + y (scipy's kl_div): rel_entr(x, y) - x + y."""
    if not _traced(x, y):
        return _scipy("kl_div")(x, y)
    return rel_entr(x, y) - x + y


@implements_scipy_ufunc("betaln")
def betaln(a, b):
    """log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b). Accurate to about
    1e-16 times the largest gammaln term, so for a moderate result of huge arguments (a =
    1e10, b = 1) relative digits are lost, where scipy's betaln keeps them."""
    if not _traced(a, b):
        return _scipy("betaln")(a, b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def _gamma_sign(x):
    """The sign of Gamma(x): +1 for x > 0, (-1)^ceil(-x) ... = +1 where floor(x) is even."""
    f = _ew.floor(x)
    odd = _ew.not_equal(_ew.remainder(f, 2.0), 0.0)
    return _ew.where(_ew.logical_or(_ew.greater(x, 0.0), _ew.logical_not(odd)), 1.0, -1.0)


@implements_scipy_ufunc("gamma")
def gamma(x):
    """Gamma(x) = sign * exp(gammaln(x)); relative accuracy about 1e-16 |gammaln(x)| (1e-13 at
    x = 170)."""
    if not _traced(x):
        return _scipy("gamma")(x)
    return _gamma_sign(x) * _ew.exp(gammaln(x))


def _signed_gamma_sign(x):
    """The sign of Gamma(x) with scipy's at the zeros: -1 at -0 (Gamma(-0) = -inf)."""
    zero = _ew.where(_ew.signbit(x), -1.0, 1.0)
    return _ew.where(_ew.equal(x, 0.0), zero, _gamma_sign(x))


@implements_scipy_ufunc("gammasgn")
def gammasgn(x):
    """The sign of Gamma(x): 1 for x > 0 (and +0), -1 at -0, (-1)^ceil(-x) below; NaN at
    NaN, -inf and the negative integers, as scipy's. Piecewise constant: gradient 0 (autograd
    defines none)."""
    if not _traced(x):
        return _scipy("gammasgn")(x)
    bad = _ew.logical_or(_ew.isnan(x), _ew.logical_and(
        _ew.less(x, 0.0), _ew.equal(_ew.floor(x), x)))
    return _ew.where(bad, np.nan, _signed_gamma_sign(x))


@implements_scipy_ufunc("rgamma")
def rgamma(x):
    """1 / Gamma(x) = sign * exp(-gammaln(x)): 0 at the poles and at +-inf, -0 at -0 (as
    scipy's); relative accuracy about 1e-16 |gammaln(x)|. Its gradient -psi(x) / Gamma(x) is
    NaN at the poles (as autograd's psi(x) / -gamma(x)), where the limit is finite."""
    if not _traced(x):
        return _scipy("rgamma")(x)
    inf = _ew.isinf(x)
    xs = _ew.where(inf, 1.0, x)
    return _ew.where(inf, 0.0, _signed_gamma_sign(xs) * _ew.exp(-gammaln(xs)))


@implements_scipy_ufunc("beta")
def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), through betaln and the signs."""
    if not _traced(a, b):
        return _scipy("beta")(a, b)
    return _gamma_sign(a) * _gamma_sign(b) * _gamma_sign(a + b) * _ew.exp(betaln(a, b))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a constant integer):
    d (d - 1) / 4 log pi + sum_j gammaln(a - j / 2), j = 0..d-1."""
    if not isinstance(d, numbers.Integral) or d < 1:
        raise InputError(at_user_site(f"multigammaln(a, d): d must be an integer >= 1, "
                                      f"got {d!r}"))
    if not _traced(a):
        return _scipy("multigammaln")(a, d)
    out = d * (d - 1) / 4.0 * np.log(np.pi)
    for j in range(d):
        out = out + gammaln(a - j / 2.0)
    return out


# -- reductions ------------------------------------------------------------------------------
def _axis_last(a, axis):
    """a with the axes ``axis`` (an int, a tuple or None) flattened into its last one, and the
    shape the result has with keepdims."""
    nd = np.ndim(a)
    axes = tuple(range(nd)) if axis is None else (
        (axis,) if isinstance(axis, numbers.Integral) else tuple(axis))
    axes = tuple(sorted(int(ax) % nd if nd else 0 for ax in axes))
    keep = tuple(1 if k in axes else n for k, n in enumerate(np.shape(a)))
    rest = [k for k in range(nd) if k not in axes]
    moved = _shapes.transpose(a, rest + list(axes)) if nd else a
    lead = tuple(np.shape(a)[k] for k in rest)
    return _shapes.reshape(moved, lead + (-1,)), keep, lead


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over ``axis`` (None: every element), as scipy.special.logsumexp:
    with ``b`` the weights (negative ones allowed: the log of the absolute value, and with
    ``return_sign`` the sign as a second result; without it a negative sum gives NaN).

    Without ``b`` it is the logsumexp row (its gradient softmax); with ``b``, the maximum of
    ``a`` is held constant as the shift (its value cancels exactly in the derivative).
    """
    if not _traced(a, b):
        return _scipy("logsumexp")(a, axis=axis, b=b, keepdims=keepdims,
                                   return_sign=return_sign)
    bb = _builder(a, b)
    a = bb.lift(a)
    if b is None:
        flat, keep, lead = _axis_last(a, axis)
        out = _functional.logsumexp(flat, axis=-1)
        out = _shapes.reshape(out, keep) if keepdims else out
        if return_sign:
            return out, _ew.where(_ew.isnan(out), np.nan, 1.0)
        return out
    b = bb.lift(b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = _shapes.broadcast_to(a, shape), _shapes.broadcast_to(b, shape)
    flat_a, keep, lead = _axis_last(a, axis)
    flat_b = _axis_last(b, axis)[0]
    m = _ew.stop_gradient(_red.max(flat_a, axis=-1, keepdims=True))
    m = _ew.where(_ew.isfinite(m), m, 0.0)
    s = _red.sum(flat_b * _ew.exp(flat_a - m), axis=-1)
    m = _shapes.reshape(m, lead)
    if return_sign:
        sign = _ew.sign(s)
        out = _ew.log(_ew.absolute(s)) + m
    else:
        out = _ew.log(s) + m
    if keepdims:
        out = _shapes.reshape(out, keep)
        if return_sign:
            sign = _shapes.reshape(sign, keep)
    return (out, sign) if return_sign else out


def _softmax_axis(name, x, axis):
    fn = _functional.softmax if name == "softmax" else _functional.log_softmax
    if axis is None:
        flat = _shapes.reshape(x, (-1,))
        return _shapes.reshape(fn(flat, axis=-1), np.shape(x))
    if not isinstance(axis, numbers.Integral):
        raise UnsupportedOpError(at_user_site(
            f"{name}(x, axis={axis!r}): a tuple of axes is not supported on traced values; "
            "pass one axis or None"))
    return fn(x, axis=int(axis))


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over ``axis`` (None: every element, scipy's default; note that
    bn.softmax defaults to the last axis). One softmax row."""
    if not _traced(x):
        return _scipy("softmax")(x, axis=axis)
    return _softmax_axis("softmax", x, axis)


def log_softmax(x, axis=None):
    """x - logsumexp(x) over ``axis`` (None: every element, scipy's default)."""
    if not _traced(x):
        return _scipy("log_softmax")(x, axis=axis)
    return _softmax_axis("log_softmax", x, axis)

__getattr__ = namesake(__name__, "scipy.special")    # what burnumba does not define: scipy's own
