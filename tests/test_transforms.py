"""The functional transformations: jvp, linearize, jacfwd / jacrev / jacobian, hessian, hvp,
elementwise_grad, stop_gradient, and derivatives of derivatives, for every row of the table.

Each row is reached by a function of one array x, checked JAX-style (``check_grads``):
forward mode against central differences and against reverse mode (the inner-product
identity <u, J v> = <J^T u, v>), at orders 1 and 2, at random points of the row's domain,
and against HIPS autograd's jacobian, make_jvp and hessian.
"""
import autograd
import autograd.numpy as anp
import autograd.scipy.special as asp
import autograd.scipy.stats.norm as anorm
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
import burnumba.scipy.special as bsp
from burnumba.kernels import ROWS
from conftest import (AG_BETAINC_DA, AG_BETAINC_DB, AG_GAMMAINC_DA, AG_GAMMAINCCINV,
                      AG_GAMMAINCINV, AG_JV, AG_KV, AG_KVE, AG_OWENS_T, AG_YV)
from graphs import adjoints

SHAPE = (2, 3)


def positive(x, xp):
    return x * x + 0.5


# row -> (burnumba f(x), autograd f(x)) for x of SHAPE; each must put the row on the tape.
# Binary rows pair x with x reversed (a partner that varies with x) or a constant.
def _rev(x):
    return x[::-1, ::-1]


def _square(x, xp):
    """A (2, 2) matrix of x, diagonally dominant."""
    return x[:, :2] + xp.array([[4.0, 0.0], [0.0, 5.0]])


def _spd(x, xp):
    """A symmetric positive definite (2, 2) matrix of x with well separated eigenvalues."""
    m = x[:, :2]
    return xp.dot(m, m.T) * 0.5 + xp.array([[1.0, 0.0], [0.0, 4.0]])


CASES = {
    "add": (lambda x: x + _rev(x) * 0.5, lambda x: x + _rev(x) * 0.5),
    "subtract": (lambda x: x - _rev(x) ** 2, lambda x: x - _rev(x) ** 2),
    "multiply": (lambda x: x * _rev(x), lambda x: x * _rev(x)),
    "divide": (lambda x: x / positive(_rev(x), np), lambda x: x / positive(_rev(x), anp)),
    "negative": (lambda x: -x * x, lambda x: -x * x),
    "square": (lambda x: x ** 2, lambda x: x ** 2),
    "cube": (lambda x: x ** 3, lambda x: x ** 3),
    "powi": (lambda x: x ** 4, lambda x: x ** 4),
    "pow_c": (lambda x: positive(x, np) ** 2.5, lambda x: positive(x, anp) ** 2.5),
    "power": (lambda x: positive(x, np) ** _rev(x), lambda x: positive(x, anp) ** _rev(x)),
    "exp": (np.exp, anp.exp),
    "log": (lambda x: np.log(positive(x, np)), lambda x: anp.log(positive(x, anp))),
    "sqrt": (lambda x: np.sqrt(positive(x, np)), lambda x: anp.sqrt(positive(x, anp))),
    "reciprocal": (lambda x: 1.0 / positive(x, np), lambda x: 1.0 / positive(x, anp)),
    "rsqrt": (lambda x: bn.rsqrt(positive(x, np)),
              lambda x: 1.0 / anp.sqrt(positive(x, anp))),
    "tanh": (np.tanh, anp.tanh),
    "sigmoid": (bn.sigmoid, lambda x: 1.0 / (1.0 + anp.exp(-x))),
    "gelu_tanh": (bn.gelu, lambda x: 0.5 * x * (1.0 + anp.tanh(
        np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))),
    "gelu_erf": (lambda x: bn.gelu(x, approximate=False),
                 lambda x: 0.5 * x * (1.0 + asp.erf(x / np.sqrt(2.0)))),
    "erf": (bnp.erf, asp.erf),
    "sin": (np.sin, anp.sin),
    "cos": (np.cos, anp.cos),
    # the kinks are avoided by the points (see _point); their conventions are in test_ieee
    "relu": (bn.relu, lambda x: anp.where(x > 0, x, 0.0)),
    "absolute": (abs, anp.abs),
    "maximum": (lambda x: np.maximum(x, _rev(x) + 0.3), lambda x: anp.maximum(x, _rev(x) + 0.3)),
    "minimum": (lambda x: np.minimum(x, _rev(x) + 0.3), lambda x: anp.minimum(x, _rev(x) + 0.3)),
    "where": (lambda x: bnp.where(x > 0.1, x ** 2, np.sin(x)),
              lambda x: anp.where(x > 0.1, x ** 2, anp.sin(x))),
    "gather": (lambda x: x.T[::-1] * x.T, lambda x: x.T[::-1] * x.T),
    "sum": (lambda x: bnp.sum([x[0, 0] * x[1, 1], x[0, 1] ** 2]),
            lambda x: x[0, 0] * x[1, 1] + x[0, 1] ** 2),
    "sumsq": (lambda x: bn.sumsq(x * _rev(x)), lambda x: anp.sum((x * _rev(x)) ** 2)),
    "inner": (lambda x: bn.inner(x[0], np.sin(x[1]), bias=x[1, 0]),
              lambda x: anp.dot(x[0], anp.sin(x[1])) + x[1, 0]),
    "sum_axis": (lambda x: np.sum(x * x, axis=0) * np.mean(x, axis=1, keepdims=True),
                 lambda x: anp.sum(x * x, axis=0) * anp.mean(x, axis=1, keepdims=True)),
    "max_axis": (lambda x: np.max(x, axis=1) + np.min(x * _rev(x), axis=0).sum(),
                 lambda x: anp.max(x, axis=1) + anp.sum(anp.min(x * _rev(x), axis=0))),
    "softmax": (lambda x: bn.softmax(x * 2.0, axis=0),
                lambda x: anp.exp(2 * x) / anp.sum(anp.exp(2 * x), axis=0, keepdims=True)),
    "causal_softmax": (lambda x: bn.causal_softmax(x[:, :2].reshape(1, 2, 2) * x[0, 2], 0.7),
                       None),
    "log_softmax": (lambda x: bn.log_softmax(x * _rev(x)),
                    lambda x: x * _rev(x) - anp.log(anp.sum(anp.exp(x * _rev(x)), axis=-1,
                                                            keepdims=True))),
    "logsumexp": (lambda x: bn.logsumexp(x * x, axis=0),
                  lambda x: anp.log(anp.sum(anp.exp(x * x), axis=0))),
    "layer_norm": (lambda x: bn.layer_norm(x * _rev(x)), None),
    "cross_entropy": (lambda x: bn.cross_entropy(x * _rev(x), np.array([2, 0])), None),
    "take": (lambda x: x[np.array([1, 0, 1])] * 1.5, lambda x: x[np.array([1, 0, 1])] * 1.5),
    "scatter": (lambda x: adjoints.scatter(np.sin(x).reshape(-1), [3, 0, 3, 5, 1, 0], (6,)),
                None),
    "take_add": (lambda x: adjoints.take_add(np.tanh(x), np.array([2, 0]), 3), None),
    "matmul": (lambda x: x @ np.sin(x).T @ x, lambda x: x @ anp.sin(x).T @ x),
    "stop_gradient": (lambda x: x * bn.stop_gradient(x), lambda x: x * x.copy()),
    # issue #11's ufuncs; sign, floor and ceil have gradient 0, seen through a product with x
    "sign": (lambda x: np.sign(x) * x, lambda x: anp.sign(x) * x),
    "sinh": (np.sinh, anp.sinh),
    "cosh": (np.cosh, anp.cosh),
    "tan": (lambda x: np.tan(0.7 * x), lambda x: anp.tan(0.7 * x)),
    "arcsin": (lambda x: np.arcsin(0.6 * x), lambda x: anp.arcsin(0.6 * x)),
    "arccos": (lambda x: np.arccos(0.6 * x), lambda x: anp.arccos(0.6 * x)),
    "arctan": (np.arctan, anp.arctan),
    "arctan2": (lambda x: np.arctan2(x, _rev(x) ** 2 + 0.5),
                lambda x: anp.arctan2(x, _rev(x) ** 2 + 0.5)),
    # (autograd has no forward-mode rule for hypot: the formula instead)
    "hypot": (lambda x: np.hypot(x, _rev(x)), lambda x: anp.sqrt(x * x + _rev(x) ** 2)),
    "exp2": (np.exp2, anp.exp2),
    "expm1": (np.expm1, anp.expm1),
    "log1p": (lambda x: np.log1p(x * x), lambda x: anp.log1p(x * x)),
    "log2": (lambda x: np.log2(positive(x, np)), lambda x: anp.log2(positive(x, anp))),
    "log10": (lambda x: np.log10(positive(x, np)), lambda x: anp.log10(positive(x, anp))),
    "logaddexp": (lambda x: np.logaddexp(x, _rev(x) * 2.0),
                  lambda x: anp.logaddexp(x, _rev(x) * 2.0)),
    "logaddexp2": (lambda x: np.logaddexp2(x, _rev(x) * 2.0),
                   lambda x: anp.logaddexp2(x, _rev(x) * 2.0)),
    "fmax": (lambda x: np.fmax(x, _rev(x) + 0.3), lambda x: anp.fmax(x, _rev(x) + 0.3)),
    "fmin": (lambda x: np.fmin(x, _rev(x) + 0.3), lambda x: anp.fmin(x, _rev(x) + 0.3)),
    "floor": (lambda x: np.floor(2.0 * x) * x, lambda x: anp.floor(2.0 * x) * x),
    "ceil": (lambda x: np.ceil(2.0 * x) * x, lambda x: anp.ceil(2.0 * x) * x),
    "remainder": (lambda x: x % (_rev(x) ** 2 + 0.5) + x * (x % 0.7),
                  lambda x: x % (_rev(x) ** 2 + 0.5) + x * (x % 0.7)),
    # reductions and scans (#11); autograd has no cumprod and sorts 1-D arrays only
    "cumsum": (lambda x: np.cumsum(x * _rev(x), axis=1),
               lambda x: anp.cumsum(x * _rev(x), axis=1)),
    "cumprod": (lambda x: np.cumprod(x, axis=0) + np.prod(x, axis=1, keepdims=True),
                lambda x: anp.stack([x[0], x[0] * x[1]])
                + (x[:, 0] * x[:, 1] * x[:, 2])[:, None]),
    "argsort": (lambda x: np.sort(x, axis=1) * _rev(x),
                lambda x: anp.stack([anp.sort(x[0]), anp.sort(x[1])]) * _rev(x)),
    # numpy.linalg's rows, on (2, 2) matrices built from x (well conditioned, distinct
    # eigenvalues)
    "solve": (lambda x: np.linalg.solve(_square(x, np), x[:, 2]),
              lambda x: anp.linalg.solve(_square(x, anp), x[:, 2])),
    "slogdet": (lambda x: np.linalg.slogdet(_square(x, np))[1] * x[0, 2],
                lambda x: anp.linalg.slogdet(_square(x, anp))[1] * x[0, 2]),
    "cholesky": (lambda x: np.linalg.cholesky(_spd(x, np)),
                 lambda x: anp.linalg.cholesky(_spd(x, anp))),
    "eigh": (lambda x: np.linalg.eigh(_spd(x, np))[0] + np.linalg.eigh(_spd(x, np))[1] ** 2,
             lambda x: anp.linalg.eigh(_spd(x, anp))[0] + anp.linalg.eigh(_spd(x, anp))[1] ** 2),
    # more ufuncs (#11); the flat ones (rint, trunc, floor_divide) seen through a product
    # with x, heaviside's d/db through heaviside(0 * x, x) = x
    "arcsinh": (lambda x: np.arcsinh(2.0 * x), lambda x: anp.arcsinh(2.0 * x)),
    "arccosh": (lambda x: np.arccosh(x * x + 1.5), lambda x: anp.arccosh(x * x + 1.5)),
    "arctanh": (lambda x: np.arctanh(0.6 * x), lambda x: anp.arctanh(0.6 * x)),
    "cbrt": (np.cbrt, lambda x: anp.sign(x) * anp.abs(x) ** (1.0 / 3.0)),
    "copysign": (lambda x: np.copysign(x * x, _rev(x)) + np.copysign(x, 1.0),
                 lambda x: x * x * anp.sign(_rev(x)) + anp.abs(x)),
    "fmod": (lambda x: np.fmod(x, _rev(x) ** 2 + 0.5) + x * np.fmod(x, 0.7),
             lambda x: (x - (_rev(x) ** 2 + 0.5) * anp.trunc(x / (_rev(x) ** 2 + 0.5)))
             + x * (x - 0.7 * anp.trunc(x / 0.7))),
    "heaviside": (lambda x: np.heaviside(0.0 * x, x * x) + np.heaviside(x, 0.5) * x,
                  lambda x: x * x + anp.where(x > 0, 1.0, 0.0) * x),
    "rint": (lambda x: np.rint(2.0 * x) * x, lambda x: anp.rint(2.0 * x) * x),
    "trunc": (lambda x: np.trunc(2.0 * x) * x, lambda x: anp.trunc(2.0 * x) * x),
    "floor_divide": (lambda x: (x // 0.7) * x + x // (_rev(x) ** 2 + 0.5),
                     lambda x: anp.floor(x / 0.7) * x + anp.floor(x / (_rev(x) ** 2 + 0.5))),
    # scipy.special's rows (#31), on arguments inside their domains (autograd has no
    # forward-mode rules for them: NO_JVP_REFERENCE)
    "gammaln": (lambda x: bsp.gammaln(x * x + 0.5), lambda x: asp.gammaln(x * x + 0.5)),
    "polygamma": (lambda x: bsp.polygamma(1, x * x + 0.5),
                  lambda x: asp.polygamma(1, x * x + 0.5)),
    "erfc": (bsp.erfc, asp.erfc),
    "erfinv": (lambda x: bsp.erfinv(0.6 * np.tanh(x)), lambda x: asp.erfinv(0.6 * anp.tanh(x))),
    "ndtri": (lambda x: bsp.ndtri(bn.sigmoid(x)),
              lambda x: asp.erfinv(2.0 / (1.0 + anp.exp(-x)) - 1.0) * np.sqrt(2.0)),
    "log_ndtr": (lambda x: bsp.log_ndtr(2.0 * x), lambda x: anorm.logcdf(2.0 * x)),
    "i0": (lambda x: bsp.i0(2.0 * x), lambda x: asp.i0(2.0 * x)),
    "i1": (lambda x: bsp.i1(2.0 * x), lambda x: asp.i1(2.0 * x)),
    "j0": (lambda x: bsp.j0(3.0 * x), lambda x: asp.j0(3.0 * x)),
    "j1": (lambda x: bsp.j1(3.0 * x), lambda x: asp.j1(3.0 * x)),
    "y0": (lambda x: bsp.y0(x * x + 0.3), lambda x: asp.y0(x * x + 0.3)),
    "y1": (lambda x: bsp.y1(x * x + 0.3), lambda x: asp.y1(x * x + 0.3)),
    # (their first argument has no derivative: a constant here)
    "gammainc": (lambda x: bsp.gammainc(2.5, x * x + 0.1),
                 lambda x: asp.gammainc(2.5, x * x + 0.1)),
    "gammaincc": (lambda x: bsp.gammaincc(0.7, x * x + 0.1),
                  lambda x: asp.gammaincc(0.7, x * x + 0.1)),
    "gammaincinv": (lambda x: bsp.gammaincinv(2.5, 0.3 + 0.2 * anp.tanh(x)),
                    lambda x: AG_GAMMAINCINV(2.5, 0.3 + 0.2 * anp.tanh(x))),
    "gammainccinv": (lambda x: bsp.gammainccinv(0.7, 0.3 + 0.2 * anp.tanh(x)),
                     lambda x: AG_GAMMAINCCINV(0.7, 0.3 + 0.2 * anp.tanh(x))),
    "gammainc_da": (lambda x: bsp._gammainc_da(2.5, x * x + 0.1),
                    lambda x: AG_GAMMAINC_DA(2.5, x * x + 0.1)),
    "jn": (lambda x: bsp.jn(3, 3.0 * x), lambda x: asp.jn(3, 3.0 * x)),
    "yn": (lambda x: bsp.yn(2, x * x + 0.3), lambda x: asp.yn(2, x * x + 0.3)),
    # Owen's T in both operands (h = x, a = 3x: the reflection for |a| > 1 and the methods
    # for a < 1 along the way); autograd has none: scipy's values, the closed-form
    # derivatives in autograd's numpy (tests/conftest.py)
    "owens_t": (lambda x: bsp.owens_t(x, 3.0 * x), lambda x: AG_OWENS_T(x, 3.0 * x)),
    # the Bessel functions of real order (v constant, non-integer or negative: the
    # reflections), x > 0 through x * x + 0.3; kv, kve: scipy's values with the recurrences
    "jv": (lambda x: bsp.jv(2.3, 3.0 * x * x + 0.3), lambda x: AG_JV(2.3, 3.0 * x * x + 0.3)),
    "yv": (lambda x: bsp.yv(-1.7, x * x + 0.3), lambda x: AG_YV(-1.7, x * x + 0.3)),
    "iv": (lambda x: bsp.iv(1.6, x * x + 0.3), lambda x: asp.iv(1.6, x * x + 0.3)),
    "ive": (lambda x: bsp.ive(-0.7, x * x + 0.3), lambda x: asp.ive(-0.7, x * x + 0.3)),
    "kv": (lambda x: bsp.kv(0.7, x * x + 0.3), lambda x: AG_KV(0.7, x * x + 0.3)),
    "kve": (lambda x: bsp.kve(-2.3, x * x + 0.3), lambda x: AG_KVE(-2.3, x * x + 0.3)),
    # the incomplete beta rows (a, b constants: no derivative), x in (0, 1) through a
    # sigmoid; autograd's betainc has d/dx, and betainc_dx is its density
    "betainc": (lambda x: bsp.betainc(2.5, np.array([1.7, 0.6, 4.0]), bn.sigmoid(x)),
                lambda x: asp.betainc(2.5, np.array([1.7, 0.6, 4.0]), 1 / (1 + anp.exp(-x)))),
    "betaincc": (lambda x: bsp.betaincc(0.8, 1.7, bn.sigmoid(x)),
                 lambda x: 1.0 - asp.betainc(0.8, 1.7, 1 / (1 + anp.exp(-x)))),
    "betainc_dx": (lambda x: bsp._betainc_dx(2.5, 1.7, bn.sigmoid(x)),
                   lambda x: (anp.power(1 / (1 + anp.exp(-x)), 1.5)
                              * anp.power(1 - 1 / (1 + anp.exp(-x)), 0.7)
                              / asp.beta(2.5, 1.7))),
    # their derivatives in a and b (a, b constants: refused), mpmath's values, d/dx in
    # autograd's numpy (tests/conftest.py)
    "betainc_da": (lambda x: bsp._betainc_da(2.5, 1.7, bn.sigmoid(x)),
                   lambda x: AG_BETAINC_DA(1 / (1 + anp.exp(-x)), 2.5, 1.7)),
    "betainc_db": (lambda x: bsp._betainc_db(0.8, 1.7, bn.sigmoid(x)),
                   lambda x: AG_BETAINC_DB(1 / (1 + anp.exp(-x)), 0.8, 1.7)),
}
# the autograd side of stop_gradient: x * c with c = x, not differentiated
NO_REFERENCE = {name for name, (_, ref) in CASES.items() if ref is None} | {"stop_gradient"}
# autograd has no JVP of erf, of its linalg functions, nor of scipy.special's
NO_JVP_REFERENCE = {"erf", "gelu_erf", "solve", "slogdet", "cholesky", "eigh", "gammaln",
                    "polygamma", "erfc", "erfinv", "ndtri", "log_ndtr", "i0", "i1", "j0",
                    "j1", "y0", "y1", "gammainc", "gammaincc", "gammaincinv",
                    "gammainccinv", "jn", "yn", "betainc",
                    "betaincc", "betainc_dx", "gammainc_da", "betainc_da", "betainc_db",
                    "owens_t", "jv", "yv", "iv", "ive", "kv", "kve"}


def test_every_row_is_covered():
    traced = {r.name for r in ROWS if r.traced is not None}
    required = {r.name for r in ROWS if r.kind != "leaf"} - {
        "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
        # the predicates (#11): masks without gradient, like the comparisons
        "isnan", "isinf", "isfinite", "signbit", "logical_not", "logical_and", "logical_or",
        "logical_xor"} - {r.name for r in ROWS if r.lanes_of} - traced \
        - {"njit_call"}     # vmap's internal forms; a user's op: tests/test_njit_op.py
    # rows with their rules in numpy's names are covered by tests/test_traced_rows.py, from
    # the table; the cases here that reach them through numpy's functions stay as well
    assert required <= set(CASES) and set(CASES) - required <= traced


def _point(seed):
    """A random point away from the kinks of relu / abs / maximum (|x| > 0.05, ties apart)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, size=SHAPE)
    x = np.where(np.abs(x) < 0.05, 0.3, x)
    return x


def _scalar(f, w):
    return lambda x: np.sum(f(x) * w)


def _central(f, x, v, h=1e-6):
    return (np.asarray(f(x + h * v)) - np.asarray(f(x - h * v))) / (2 * h)


def _out_weight(f, x, seed):
    y = np.asarray(bn.jvp(f, (x,), (np.zeros_like(x),))[0])
    return np.random.default_rng(seed + 1).normal(size=y.shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_against_central_differences_and_vjp(name):
    f = CASES[name][0]
    for seed in range(3):
        x = _point(seed)
        v = np.random.default_rng(seed + 7).normal(size=SHAPE)
        y, jv = bn.jvp(f, (x,), (v,))
        # central differences see x * x where stop_gradient makes the derivative x * v
        fd = x * v if name == "stop_gradient" else _central(
            lambda z: bn.jvp(f, (z,), (v,))[0], x, v)
        np.testing.assert_allclose(jv, fd, rtol=1e-5, atol=1e-7, err_msg=name)
        u = np.random.default_rng(seed + 9).normal(size=np.shape(y))
        _, pull = bn.vjp(f, x)
        (jtu,) = pull(u)
        np.testing.assert_allclose(np.sum(u * jv), np.sum(jtu * v), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacobians_forward_reverse_and_autograd(name):
    f, ref = CASES[name]
    x = _point(3)
    Jf, Jr, J = bn.jacfwd(f)(x), bn.jacrev(f)(x), bn.jacobian(f)(x)
    np.testing.assert_allclose(Jf, Jr, rtol=1e-12, atol=1e-13, err_msg=name)
    # traced (inside another trace: every direction at once, the batched tangent rules)
    np.testing.assert_allclose(bn.trace(bn.jacfwd(f), x)(x), Jf, rtol=1e-12, atol=1e-13,
                               err_msg=name)
    np.testing.assert_allclose(bn.trace(bn.jacrev(f), x)(x), Jf, rtol=1e-12, atol=1e-13,
                               err_msg=name)
    np.testing.assert_array_equal(J, Jf if np.size(J) and x.size <= np.size(J) // x.size
                                  else J)
    if name not in NO_REFERENCE:
        np.testing.assert_allclose(Jf, autograd.jacobian(ref)(x), rtol=1e-10, atol=1e-12,
                                   err_msg=name)
    if name not in NO_REFERENCE | NO_JVP_REFERENCE:
        v = np.random.default_rng(4).normal(size=SHAPE)
        _, jv_ref = autograd.make_jvp(ref)(x)(v)
        np.testing.assert_allclose(bn.jvp(f, (x,), (v,))[1], jv_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Output seems independent of input")   # autograd, H = 0
@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order_hessian_hvp_and_grad_of_grad(name):
    """Order 2: the Hessian of sum(f(x) * w) by jacfwd(jacrev), checked against central
    differences of the gradient, autograd.hessian, hvp and a nested grad."""
    f = CASES[name][0]
    x = _point(5)
    w = _out_weight(f, x, 5)
    s = _scalar(f, w)
    H = bn.hessian(s)(x)
    np.testing.assert_allclose(bn.trace(bn.hessian(s), x)(x), H, rtol=1e-11, atol=1e-12,
                               err_msg=name)
    # order 2 in every pairing of the modes: forward over forward, reverse over reverse
    np.testing.assert_allclose(bn.jacfwd(bn.jacfwd(s))(x), H, rtol=1e-10, atol=1e-11,
                               err_msg=name)
    np.testing.assert_allclose(bn.jacrev(bn.jacrev(s))(x), H, rtol=1e-10, atol=1e-11,
                               err_msg=name)
    g = bn.grad(s)
    for k in range(x.size if name != "stop_gradient" else 0):
        e = np.zeros(x.size)
        e[k] = 1.0
        e = e.reshape(SHAPE)
        np.testing.assert_allclose(H[..., k // SHAPE[1], k % SHAPE[1]] if H.ndim == 4 else 0,
                                   _central(g, x, e), rtol=2e-5, atol=1e-6, err_msg=name)
        hv = bn.hvp(s, x, e)
        np.testing.assert_allclose(hv, H[..., k // SHAPE[1], k % SHAPE[1]],
                                   rtol=1e-10, atol=1e-12, err_msg=name)
        # after the first call, hvp sweeps without the values its tangents never read
        # (MODE_JVP_LEAN): the same bits as the full jvp of the gradient
        assert hv.tobytes() == bn.jvp(g, (x,), (e,))[1].tobytes(), name
    if name not in NO_REFERENCE:
        ref = CASES[name][1]
        Ha = autograd.hessian(lambda x: anp.sum(ref(x) * w))(x)
        np.testing.assert_allclose(H, Ha, rtol=1e-9, atol=1e-11, err_msg=name)
    # the same second derivative through nested grads (symbolic inside, compiled outside)
    v = np.random.default_rng(6).normal(size=SHAPE)
    directional = bn.grad(lambda x: np.sum(bn.grad(s)(x) * v))(x)
    np.testing.assert_allclose(directional, np.tensordot(H, v, axes=2), rtol=1e-10,
                               atol=1e-11, err_msg=name)


def test_third_order_and_mixed_nesting():
    f = lambda x: x ** 3 + np.sin(x) * x                           # noqa: E731
    d3 = bn.grad(bn.grad(bn.grad(f)))(0.7)
    assert abs(d3 - (6 - 3 * np.sin(0.7) - 0.7 * np.cos(0.7))) < 1e-12
    x = np.array([0.3, -0.4])
    J = bn.jacfwd(bn.jacrev(lambda x: np.sin(x) * x[::-1]))(x)      # a third-order tensor
    Ja = autograd.jacobian(autograd.jacobian(lambda x: anp.sin(x) * x[::-1]))(x)
    np.testing.assert_allclose(J, Ja, rtol=1e-12)
    # jvp of a gradient inside a gradient
    g = bn.grad(lambda x: bn.jvp(bn.grad(lambda y: np.sum(y ** 4)), (x,), (x,))[1].sum())(x)
    np.testing.assert_allclose(g, 36 * x ** 2, rtol=1e-12)


def test_nested_rules_broadcast_as_the_kernel_does():
    """A map row whose operands are nodes of shapes (n,) and (n, 1) (a matrix-vector product
    is an (n, 1) node seen as (n,)): the traced rules must read them elementwise, as the
    kernel does, not broadcast them to (n, n). Every argument's second derivatives."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(4, 3))
    w, y = rng.normal(size=3), rng.normal(size=4)

    def f(w, y, np=np):
        return np.sum(np.sin(y * (X @ w)) + (X @ w) * y ** 2)
    fa = lambda w, y: f(w, y, anp)                                  # noqa: E731
    for i in (0, 1):
        for j in (0, 1):
            J = bn.jacfwd(bn.grad(f, argnums=i), argnums=j)(w, y)
            Ja = autograd.jacobian(autograd.grad(fa, i), j)(w, y)
            np.testing.assert_allclose(J, Ja, rtol=1e-12, atol=1e-14, err_msg=(i, j))
    # a block row with broadcast operands (where, inside logsumexp's rules) likewise
    W = rng.normal(size=(3, 2))
    lse = lambda W: np.sum(bn.logsumexp(W, axis=-1))                # noqa: E731
    from autograd.scipy.special import logsumexp as alse
    np.testing.assert_allclose(bn.hessian(lse)(W),
                               autograd.hessian(lambda W: anp.sum(alse(W, axis=-1)))(W),
                               rtol=1e-12, atol=1e-14)
    # the gradient of a data argument is not traced when it is not asked for
    H = bn.hessian(f)
    H(w, y)
    tape = next(iter(H.tapes.values()))
    assert max(int(np.prod(s)) for s in tape.shapes) <= 12, tape


def test_traced_transformations_equal_their_direct_calls():
    """A transformation traced inside another trace (bn.trace, vmap, an outer grad) gives
    the numbers a direct call gives, also when the function's output is a pending view
    (a reshape or a transpose, which becomes a node only when read)."""
    x = np.array([-0.65, -0.17, 1.66])
    f = lambda x: np.sum(np.sin(x) * x)                             # noqa: E731
    for fn in (bn.hessian(f), bn.jacfwd(bn.grad(f)), bn.jacrev(bn.grad(f)),
               bn.jacfwd(lambda x: np.reshape(x * x, (3, 1))),
               bn.jacrev(lambda x: np.reshape(np.sin(x) * x, (1, 3)).T),
               lambda x: bn.vjp(lambda y: np.reshape(np.sin(y), (3, 1)), x)[1](
                   np.reshape(x, (3, 1)))[0],
               lambda x: bn.jvp(lambda y: np.reshape(np.sin(y), (1, 3)).T, (x,), (x,))[1]):
        np.testing.assert_allclose(bn.trace(fn, x)(x), fn(x), rtol=1e-14, atol=1e-15)


def test_perturbation_confusion():
    """d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x: the inner derivative holds x constant."""
    assert bn.grad(lambda x: x * bn.grad(lambda y: x * y)(x))(3.0) == 6.0
    assert bn.grad(lambda x: bn.grad(lambda y: x * y)(x))(2.0) == 1.0


def test_linearize_reuses_the_forward_and_serves_threads():
    import concurrent.futures as cf
    f = lambda x: np.tanh(x @ x.T)                               # noqa: E731
    x = _point(8)
    y, f_jvp = bn.linearize(f, x)
    np.testing.assert_allclose(y, np.tanh(x @ x.T), rtol=1e-14)
    vs = [np.random.default_rng(k).normal(size=SHAPE) for k in range(20)]
    serial = [f_jvp(v) for v in vs]
    for v, got in zip(vs, serial):
        np.testing.assert_allclose(got, bn.jvp(f, (x,), (v,))[1], rtol=1e-13)
    with cf.ThreadPoolExecutor(4) as ex:
        again = list(ex.map(f_jvp, vs * 5))
    for k, got in enumerate(again):
        np.testing.assert_array_equal(got, serial[k % 20])


def test_elementwise_grad_and_stop_gradient():
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(bn.elementwise_grad(np.tanh)(x), 1 - np.tanh(x) ** 2, rtol=1e-13)
    assert bn.grad(lambda x: bn.stop_gradient(x) * x)(3.0) == 3.0
    np.testing.assert_array_equal(bn.grad(lambda x: np.sum(bn.stop_gradient(x ** 2)))(x), 0.0)
    assert bn.jvp(lambda x: bn.stop_gradient(x) * x, (2.0,), (1.0,)) == (4.0, 2.0)


def test_pytrees_and_several_arguments():
    def f(p, x):
        return np.tanh(x @ p["w"]) * p["b"]
    p = {"w": np.array([[0.5, -1.0], [0.2, 0.3]]), "b": np.array([1.0, 2.0])}
    x = np.array([[1.0, -0.5], [0.3, 0.8]])
    Jp, Jx = bn.jacrev(f, argnums=(0, 1))(p, x)
    ref = lambda w, b, x: anp.tanh(anp.dot(x, w)) * b              # noqa: E731
    Jw, Jb, Jx_ref = (autograd.jacobian(ref, argnum=k)(p["w"], p["b"], x) for k in range(3))
    np.testing.assert_allclose(Jp["w"], Jw, rtol=1e-12)
    np.testing.assert_allclose(Jp["b"], Jb, rtol=1e-12)
    np.testing.assert_allclose(Jx, Jx_ref, rtol=1e-12)
    Hf = bn.jacfwd(bn.jacrev(f, argnums=1), argnums=1)(p, x)
    np.testing.assert_allclose(Hf, autograd.jacobian(autograd.jacobian(
        lambda x: anp.tanh(anp.dot(x, p["w"])) * p["b"]))(x), rtol=1e-11)


def test_jacobians_of_several_outputs_and_arguments():
    """A tuple or dict of outputs and several argnums give JAX's nested blocks (outputs
    outside, argnums inside), each equal to autograd's Jacobian of that output by that
    argument; hessian(f, argnums=(0, 1)) is the 2 x 2 of blocks, also inside another trace."""
    x, y = np.array([0.3, -0.7, 1.1]), np.array([0.5, 2.0])

    def f(x, y):
        return np.sin(x) * np.sum(y), {"a": np.sum(x * x) * y, "b": np.tanh(x[0] * y[1])}

    refs = (lambda x, y: anp.sin(x) * anp.sum(y), lambda x, y: anp.sum(x * x) * y,
            lambda x, y: anp.tanh(x[0] * y[1]))
    for jac in (bn.jacfwd, bn.jacrev, bn.jacobian):
        for _ in range(2):                       # traced, then from the cache
            J = jac(f, argnums=(0, 1))(x, y)
            assert isinstance(J, tuple) and isinstance(J[0], tuple) and set(J[1]) == {"a", "b"}
            for got, ref in zip((J[0], J[1]["a"], J[1]["b"]), refs):
                for k in range(2):
                    np.testing.assert_allclose(got[k], autograd.jacobian(ref, argnum=k)(x, y),
                                               rtol=1e-13)
        one = jac(f)(x, y)                       # one argnum: a block per output
        np.testing.assert_allclose(one[1]["b"], autograd.jacobian(refs[2])(x, y), rtol=1e-13)
    # a constant output's Jacobian is zeros, of its shape
    const = bn.jacfwd(lambda x: (np.sin(x), 1.0))(x)
    assert const[1].shape == (3,) and not const[1].any()

    def g(a, b):
        return np.sum(np.tanh(a * b) * a) + np.sum(b ** 3)

    def ga(a, b):
        return anp.sum(anp.tanh(a * b) * a) + anp.sum(b ** 3)
    H = bn.hessian(g, argnums=(0, 1))(x, 2.0 * x)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(H[i][j], autograd.jacobian(
                autograd.grad(ga, argnum=i), argnum=j)(x, 2.0 * x), rtol=1e-12)
    # inside another trace: blocks of a traced Jacobian, differentiated again
    for jac in (bn.jacfwd, bn.jacrev):
        h = bn.grad(lambda x: np.sum(jac(lambda z: (z * z, np.sin(z)))(x)[1] * 3.0))
        np.testing.assert_allclose(h(x), -3.0 * np.sin(x), rtol=1e-14)


def test_has_aux():
    """has_aux: f returns (output, aux); the Jacobians and hessian return (result, aux), jvp
    (value, tangent, aux) and linearize (value, f_jvp, aux), the aux evaluated at the point
    (as in JAX), on every path and inside another trace."""
    x = np.array([0.3, -0.7, 1.1])

    def f(x):
        return np.sin(x) * x, {"n": np.sum(x ** 2), "c": 3}
    J_ref = autograd.jacobian(lambda x: anp.sin(x) * x)(x)
    for jac in (bn.jacfwd, bn.jacrev, bn.jacobian):
        for _ in range(2):
            J, aux = jac(f, has_aux=True)(x)
            np.testing.assert_allclose(J, J_ref, rtol=1e-14)
            assert aux["c"] == 3 and aux["n"] == np.sum(x ** 2)

    def g(x):
        return np.sum(np.tanh(x) ** 2), np.tanh(x)
    H, aux = bn.hessian(g, has_aux=True)(x)
    np.testing.assert_allclose(H, autograd.hessian(lambda x: anp.sum(anp.tanh(x) ** 2))(x),
                               rtol=1e-13)
    np.testing.assert_allclose(aux, np.tanh(x), rtol=1e-15)
    # inside a trace the aux is a traced value: differentiated through
    d = bn.grad(lambda x: np.sum(bn.jacfwd(f, has_aux=True)(x)[1]["n"] * x))(x)
    np.testing.assert_allclose(d, 2.0 * x * np.sum(x) + np.sum(x ** 2), rtol=1e-14)
    def traced_linearize(g, x):
        return bn.grad(lambda x: np.sum(bn.linearize(g, x, has_aux=True)[0]))(x)
    for transform in (lambda g, x: bn.jacrev(g, has_aux=True)(x), traced_linearize):
        with pytest.raises(bn.OutputError, match="has_aux=True: the function must return a pair"):
            transform(lambda x: x * 2.0, x)
    # jvp and linearize too: (value, tangent, aux) and (value, f_jvp, aux)
    v = np.array([1.0, -2.0, 0.5])
    for _ in range(2):                          # traced, then the plain arrays' fast path
        y, t, aux = bn.jvp(f, (x,), (v,), has_aux=True)
        np.testing.assert_allclose(t, J_ref @ v, rtol=1e-14)
        assert aux["n"] == np.sum(x ** 2) and np.array_equal(y, bn.jvp(
            lambda x: f(x)[0], (x,), (v,))[0])
    y2, lin, aux2 = bn.linearize(f, x, has_aux=True)
    np.testing.assert_allclose(lin(v), J_ref @ v, rtol=1e-14)
    assert aux2["n"] == aux["n"] and np.array_equal(y2, y)
    d = bn.grad(lambda x: bn.jvp(f, (x,), (v,), has_aux=True)[2]["n"])(x)
    np.testing.assert_allclose(d, 2.0 * x, rtol=1e-15)


def test_vjp_of_several_outputs_and_aux():
    """vjp of a dict of outputs: the value in that structure and a vjp_fun taking a cotangent
    of that structure, equal to autograd's vjp of the concatenated outputs; has_aux; inside
    another trace; a cotangent of another structure or shape is refused, naming it."""
    x = np.array([0.3, -0.7, 1.1])

    def f(x):
        return {"s": np.sin(x), "t": (np.sum(x * x), x[:2] * x[2])}

    def flat(x):
        return anp.concatenate([anp.sin(x), anp.array([anp.sum(x * x)]), x[:2] * x[2]])
    ct = {"s": np.array([1.0, -2.0, 0.5]), "t": (2.0, np.array([1.0, -1.0]))}
    flat_ct = np.concatenate([ct["s"], [ct["t"][0]], ct["t"][1]])
    y, pull = bn.vjp(f, x)
    assert isinstance(y["t"][0], float) and y["t"][1].shape == (2,)
    np.testing.assert_allclose(np.concatenate([y["s"], [y["t"][0]], y["t"][1]]), flat(x),
                               rtol=1e-15)
    np.testing.assert_allclose(pull(ct)[0], autograd.make_vjp(flat)(x)[0](flat_ct),
                               rtol=1e-14)
    y2, pull2, aux = bn.vjp(lambda x: (f(x), {"n": np.sum(x)}), x, has_aux=True)
    assert aux["n"] == np.sum(x) and np.array_equal(pull2(ct)[0], pull(ct)[0])
    g = bn.grad(lambda x: np.sum(bn.vjp(f, x)[1](ct)[0] * x))(x)
    np.testing.assert_allclose(g, autograd.grad(
        lambda x: anp.sum(autograd.make_vjp(flat)(x)[0](flat_ct) * x))(x), rtol=1e-13)
    with pytest.raises(bn.PytreeError, match="the cotangent has the structure"):
        pull({"s": ct["s"]})
    with pytest.raises(bn.ShapeError, match=r"cotangent leaf 0 has shape \(2,\)"):
        pull({"s": np.ones(2), "t": ct["t"]})


def test_vjp_traces_once_and_its_pullbacks_stay_independent():
    """vjp keeps its tapes per function and signature (a loop of vjp calls traces once: it
    took 267 us per call with a trace each, 25 us without, for tanh(x) * x at n = 1,000),
    and a pullback made earlier still pulls back at its own point after a later vjp of the
    same tape ran on this thread."""
    calls = []

    def f(x):
        calls.append(1)
        return np.sin(x) * x
    rng = np.random.default_rng(11)
    x1, x2, ct = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    y1, pull1 = bn.vjp(f, x1)
    y2, pull2 = bn.vjp(f, x2)
    assert len(calls) == 1
    g2, g1 = pull2(ct)[0], pull1(ct)[0]
    for x, y, g in ((x1, y1, g1), (x2, y2, g2)):
        np.testing.assert_allclose(y, np.sin(x) * x, rtol=1e-15)
        np.testing.assert_allclose(g, ct * (np.cos(x) * x + np.sin(x)), rtol=1e-14)
    bn.vjp(f, x1.astype(np.float32))                # a new signature traces again
    assert len(calls) == 2


def test_jvp_and_linearize_of_several_outputs():
    """jvp and linearize of a function with a tuple or dict of outputs return the values and
    the tangents in that structure, equal to each output's own jvp; also inside a trace. So
    hvp and hessian take a dict of parameters."""
    x, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -2.0])

    def f(x):
        return {"s": np.sum(np.sin(x)), "t": (np.tanh(x) * 2.0, x[:2] * x[2])}
    parts = (lambda x: np.sum(np.sin(x)), lambda x: np.tanh(x) * 2.0, lambda x: x[:2] * x[2])
    for _ in range(2):                           # traced, then the plain arrays' fast path
        y, ty = bn.jvp(f, (x,), (v,))
        y2, lin = bn.linearize(f, x)
        for got in (ty, lin(v)):
            assert isinstance(got["s"], float) and isinstance(got["t"], tuple)
            for k, part in enumerate(parts):
                ref_y, ref_t = bn.jvp(part, (x,), (v,))
                out = (got["s"], *got["t"])[k]
                val = (y["s"], *y["t"])[k]
                assert np.array_equal(out, ref_t) and np.array_equal(val, ref_y)
                assert np.array_equal((y2["s"], *y2["t"])[k], ref_y)
    # pytrees of parameters: hvp (the tangent of a dict of gradients) and hessian (a dict of
    # dicts, as jax.hessian gives), against autograd's blocks
    p, w = {"a": x, "b": x[:2] * 2.0}, {"a": v, "b": np.array([1.0, -1.0])}

    def loss(p):
        return np.sum(np.tanh(p["a"]) * p["a"]) * np.sum(p["b"] ** 2)

    def loss_a(a, b):
        return anp.sum(anp.tanh(a) * a) * anp.sum(b ** 2)
    blocks = [[autograd.jacobian(autograd.grad(loss_a, i), j)(p["a"], p["b"]) for j in range(2)]
              for i in range(2)]
    Hv = bn.hvp(loss, p, w)
    H = bn.hessian(loss)(p)
    for i, ki in enumerate("ab"):
        np.testing.assert_allclose(Hv[ki], blocks[i][0] @ w["a"] + blocks[i][1] @ w["b"],
                                   rtol=1e-12)
        for j, kj in enumerate("ab"):
            np.testing.assert_allclose(H[ki][kj], blocks[i][j], rtol=1e-12)
    # linearize inside another trace: its value and f_jvp are traced there
    lin_g = bn.grad(lambda x: np.sum(bn.linearize(f, x)[1](v)["t"][0]) + bn.linearize(f, x)[0]["s"])
    np.testing.assert_allclose(lin_g(x), autograd.grad(
        lambda x: anp.sum(autograd.make_jvp(lambda z: anp.tanh(z) * 2.0)(x)(v)[1])
        + anp.sum(anp.sin(x)))(x), rtol=1e-13)
    g = bn.grad(lambda x: np.sum(bn.jvp(f, (x,), (v,))[1]["t"][0]))
    np.testing.assert_allclose(g(x), autograd.grad(
        lambda x: anp.sum(autograd.make_jvp(lambda z: anp.tanh(z) * 2.0)(x)(v)[1]))(x),
        rtol=1e-13)


def test_errors_name_the_transformation_and_the_fix():
    x = np.ones(3)
    with pytest.raises(bn.ShapeError, match="tangent 0 .* has shape"):
        bn.jvp(np.sin, (x,), (np.ones(2),))
    with pytest.raises(bn.InputError, match="tuple"):
        bn.jvp(np.sin, x, (x,))
    with pytest.raises(bn.OutputError, match="returned an empty tuple"):
        bn.jacfwd(lambda x: ())(x)
    with pytest.raises(bn.OutputError, match="returned an empty dict"):
        bn.jvp(lambda x: {}, (x,), (x,))
    with pytest.raises(bn.OutputError, match="returned a str among its outputs; vjp, jvp"):
        bn.jacrev(lambda x: (x, "a"))(x)
    with pytest.raises(bn.OutputError, match="returned str; a tape's output is one array"):
        bn.jvp(lambda x: "a", (x,), (x,))
    with pytest.raises(bn.OutputError, match="returned tuple; a tape's output is one array or "
                       "number: return one .*Jacobians also take a tuple"):
        bn.trace(lambda x: (x, x), x)
    # an error inside a nested transformation is the user's error alone, not chained to the
    # internal signal that switched the transformation to the trace in progress
    for transform in (bn.hessian, bn.grad, lambda f: bn.grad(lambda x: bn.jvp(f, (x,), (x,))[1])):
        with pytest.raises(bn.UnsupportedOpError, match="nancumsum") as info:
            transform(lambda x: np.sum(np.nancumsum(x) * x))(x if transform is bn.hessian else 1.0)
        assert info.value.__context__ is None and info.value.__cause__ is None


def test_hvp_fast_path_equals_jvp_of_grad():
    """Repeated hvp / jvp calls with plain arrays take a fast path (the tape swept directly):
    the same bits as the first, traced call, per dtype and shape, and the checks still hold."""
    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    rng = np.random.default_rng(5)
    for n in (7, 12, 7):
        for dtype in (np.float64, np.float32):
            x, v = (rng.standard_normal(n).astype(dtype) for _ in range(2))
            want = bn.jvp(bn.grad(rosen), (x,), (v,))[1]
            for _ in range(3):                   # the first call traces, the rest are fast
                got = bn.hvp(rosen, x, v)
                assert got.dtype == dtype and got.tobytes() == want.tobytes()
            with bn.debug_nans():
                assert bn.hvp(rosen, x, v).tobytes() == want.tobytes()
            with pytest.raises(bn.ShapeError, match="tangent"):
                bn.hvp(rosen, x, v[:-1])
    x = np.array([1.0, 2.0, 3.0])
    assert np.array_equal(bn.hvp(rosen, x[::-1], np.ones(3)),
                          bn.hvp(rosen, np.ascontiguousarray(x[::-1]), np.ones(3)))


def test_hvp_fast_path_new_values_threads_and_scalars():
    """hvp's prepared views: every call reads its own x and v (nothing stale), a v of another
    float dtype is converted as the general path converts it, threads each use their own
    state, and a 0-d x gives a float."""
    import concurrent.futures

    def f(x):
        return np.sum(np.sin(x) * x ** 2)

    def af(x):
        return anp.sum(anp.sin(x) * x ** 2)
    rng = np.random.default_rng(8)
    H = autograd.hessian(af)
    for _ in range(4):
        x, v = rng.standard_normal(6), rng.standard_normal(6)
        np.testing.assert_allclose(bn.hvp(f, x, v), H(x) @ v, rtol=1e-12, atol=1e-12)
    v32 = v.astype(np.float32)
    assert bn.hvp(f, x, v32).tobytes() == bn.hvp(f, x, v32.astype(np.float64)).tobytes()
    points = [(rng.standard_normal(6), rng.standard_normal(6)) for _ in range(64)]
    serial = [bn.hvp(f, x, v) for x, v in points]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(lambda p: bn.hvp(f, *p), points * 4))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(serial * 4, threaded))
    g = lambda x: np.sin(x) * x ** 3                                     # noqa: E731
    for t in (0.5, 1.5):
        r = bn.hvp(g, np.array(t), np.array(2.0))
        r = bn.hvp(g, np.array(t), np.array(2.0))                        # the fast path
        assert isinstance(r, float)
        assert r == pytest.approx(2.0 * autograd.hessian(lambda x: anp.sin(x) * x ** 3)(t),
                                  rel=1e-12)


def test_tangent_sweep_zeroes_again_what_a_reverse_sweep_wrote():
    """A tangent sweep zeroes the need-0 nodes' tangents only after a reverse sweep may have
    written there (layout.C_CLEAN): a gather's backward adds into a captured constant's
    gradient, and the next jvp on that state still sees the constant's tangent as 0."""
    from burnumba.transforms import forward as _forward
    from burnumba.kernels import layout
    c = np.array([1.0, 2.0])

    def f(x):
        return bnp.concatenate([x, c]) * 3.0      # the gather reads c's slice (need 0)
    x, t = np.array([0.5, -1.0]), np.array([1.0, 1.0])
    want = np.array([3.0, 3.0, 0.0, 0.0])
    assert np.array_equal(bn.jvp(f, (x,), (t,))[1], want)
    assert np.array_equal(bn.jvp(f, (x,), (t,))[1], want)           # the plain path
    cache = _forward._CACHES.get(f, ("jvp", 1, False), None)
    (tape, _), = cache.plain.values()
    state = tape.state()
    assert state.C[layout.C_CLEAN] == 1
    const = next(i for i in range(tape.n) if ROWS[tape.op[i]].name == "const"
                 and tape.off[i + 1] - tape.off[i] == 2)
    written = slice(int(tape.off[const]), int(tape.off[const + 1]))
    tape.run_vjp([x], np.ones(4))                  # a reverse sweep on the same state
    assert state.C[layout.C_CLEAN] == 0 and np.all(state.grad[written] == 3.0)
    for _ in range(2):
        assert np.array_equal(bn.jvp(f, (x,), (t,))[1], want)
        assert np.all(state.grad[written] == 0.0)
    tape.grad[written] = 7.0                       # the public region, written by hand
    assert np.array_equal(bn.jvp(f, (x,), (t,))[1], want)
    J = np.kron(np.eye(4, 2), 1.0) * 3.0           # jacrev and jacfwd alternately
    for jac in (bn.jacrev, bn.jacfwd, bn.jacrev, bn.jacfwd):
        assert np.array_equal(jac(f)(x), J)


def test_hvp_lean_sweep_skips_unread_values_bit_for_bit():
    """A repeated hvp evaluates only the values its tangent sweep reads (MODE_JVP_LEAN):
    through elementwise rows, gathers and block rows (matmul, sum, softmax, layer_norm,
    take, where), with the bits of the full jvp of the gradient, and fewer values."""
    from burnumba.transforms import forward as _forward
    from burnumba.kernels import layout
    rng = np.random.default_rng(11)
    X, y = rng.normal(size=(30, 5)), np.sign(rng.normal(size=30))
    idx = np.array([2, 0, 1, 1])

    def logreg(w):
        return np.mean(np.log(1.0 + np.exp(-y * (X @ w)))) + 0.05 * np.sum(w * w)

    def block(x):
        h = np.tanh(x[:8].reshape(2, 4) @ X[:4, :3] + x[8:11])
        h = bn.layer_norm(bn.softmax(h, axis=-1) * x[:3], eps=1e-5)
        return np.sum(bnp.where(h > 0, h, 0.5 * h) ** 2) + np.sum(h[:, idx] * x[:4])
    for f, n in ((logreg, 5), (block, 11)):
        for _ in range(3):
            x, v = rng.normal(size=n), rng.normal(size=n)
            want = bn.jvp(bn.grad(f), (x,), (v,))[1]
            for _ in range(2):                # the first call traces, the next ones are lean
                assert bn.hvp(f, x, v).tobytes() == want.tobytes()
        (tape, _), = _forward._CACHES.get(f, "hvp", None).plain.values()
        read = _forward._tangent_reads(tape)
        assert read is not None and not read.all()
        assert tape.state().views[_forward._LEAN_MODE] == layout.MODE_JVP_LEAN
        if f is logreg:          # the gradient's X^T g: its tangent reads X, not its value
            assert any(ROWS[tape.op[j]].name == "matmul" and not read[j]
                       for j in range(tape.n))
    assert all(r.tangent_reads in (None, "", "cross") and (r.tangent_reads is None
                                                          or r.kind == "block") for r in ROWS)
    np.testing.assert_allclose(bn.hvp(logreg, x[:5], v[:5]),
                               autograd.hessian(lambda w: anp.mean(anp.log(
                                   1.0 + anp.exp(-y * (X @ w)))) + 0.05 * anp.sum(w * w))(
                                   x[:5]) @ v[:5], rtol=1e-12, atol=1e-14)


def test_jvp_fast_path_with_several_primals():
    def f(x, y):
        return np.sin(x) * y[:3] + np.sum(y ** 2)
    rng = np.random.default_rng(6)
    x, y, tx, ty = (rng.standard_normal(n) for n in (3, 5, 3, 5))
    first = bn.jvp(f, (x, y), (tx, ty))
    again = bn.jvp(f, (x, y), (tx, ty))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(first, again))
    with pytest.raises(bn.ShapeError, match="tangent 1"):
        bn.jvp(f, (x, y), (tx, ty[:4]))
    y2 = rng.standard_normal(5)
    want = (np.sin(x) * y2[:3] + np.sum(y2 ** 2),
            np.cos(x) * tx * y2[:3] + np.sin(x) * ty[:3] + 2 * np.dot(y2, ty))
    got = bn.jvp(f, (x, y2), (tx, ty))
    assert np.allclose(got[0], want[0], rtol=1e-13) and np.allclose(got[1], want[1], rtol=1e-13)


def _computed_but_unread(tape):
    """The non-leaf nodes of a tape that its output (and aux) does not depend on."""
    live = {int(tape.out)} | {node for node, _ in (tape.aux[1] if tape.aux else [])
                              if node != "const"}
    for i in range(tape.n - 1, -1, -1):
        if i in live:
            p = int(tape.pp[i])
            listed = []
            if ROWS[tape.op[i]].name in ("sum", "sumsq") and p >= 0:
                listed = [int(k) for k in tape.P[p + 1:p + 1 + int(tape.P[p])]]
            live |= {int(k) for k in (tape.a0[i], tape.a1[i]) if k >= 0} | set(listed)
    return [i for i in range(tape.n) if i not in live and ROWS[tape.op[i]].kind != "leaf"]


def test_derived_tapes_compute_only_what_their_output_reads():
    """A gradient traced as ops leaves the loss value unread, a Hessian the gradient: those
    nodes become constants the sweeps skip, and the results stay exact."""
    f = lambda x: np.sum(np.sin(x) ** 3) + 0.5 * np.sum(x * x)               # noqa: E731
    af = lambda x: anp.sum(anp.sin(x) ** 3) + 0.5 * anp.sum(x * x)          # noqa: E731
    x, v = np.linspace(-1.0, 1.0, 5), np.arange(5.0)
    tape = bn.trace(lambda x: np.sum(bn.grad(f)(x) * v), x)
    assert tape.n > 0 and _computed_but_unread(tape) == []
    np.testing.assert_allclose(bn.grad(lambda x: np.sum(bn.grad(f)(x) * v))(x),
                               autograd.hessian(af)(x) @ v, rtol=1e-12)
    np.testing.assert_allclose(bn.hvp(f, x, v), autograd.hessian(af)(x) @ v, rtol=1e-12)
    np.testing.assert_allclose(bn.hessian(f)(x), autograd.hessian(af)(x), rtol=1e-12)
    # an aux value that only the aux reads stays computed
    both = bn.value_and_grad(lambda x: (np.sum(bn.grad(f)(x) * v), f(x)), has_aux=True)
    (value, aux), g = both(x)
    assert aux == pytest.approx(af(x), rel=1e-14)
    np.testing.assert_allclose(g, autograd.hessian(af)(x) @ v, rtol=1e-12)


def test_dead_code_in_a_plain_trace_is_kept():
    """Without derivatives traced as ops, a trace keeps every node it recorded (what bn.trace
    shows is what the function did)."""
    def f(x):
        unused = np.exp(x)                     # noqa: F841
        return np.sum(x * x)
    tape = bn.trace(f, np.ones(3))
    assert "exp" in [ROWS[k].name for k in tape.op]


def test_hessian_scales_elementwise_chains_once():
    """The Hessian of a logistic loss pushes d directions through exp, log and divides over
    n samples: those tangents are one direction-free coefficient times the seed, so the
    batched tape holds one (d, n) product (not one per row), and its final product reads X
    itself (no transposed copy of the (d, n) tangents)."""
    rng = np.random.default_rng(3)
    X, y, w = rng.normal(size=(40, 5)), np.sign(rng.normal(size=40)), rng.normal(size=5)

    def loss(w, X, y, xp=np):
        return xp.mean(xp.log(1.0 + xp.exp(-y * (X @ w)))) + 0.05 * xp.sum(w * w)

    H = bn.hessian(loss)
    got = H(w, X, y)
    np.testing.assert_allclose(got, autograd.hessian(lambda w: loss(w, X, y, anp))(w),
                               rtol=1e-12, atol=1e-14)
    btape = next(iter(H.batched_tapes.values()))
    names = [ROWS[k].name for k in btape.op]
    wide = [names[i] for i in range(btape.n)           # (dead nodes became constants)
            if tuple(btape.shapes[i]) == (5, 40) and names[i] != "const"]
    assert wide == ["multiply"], wide
    assert not any(names[i] == "gather" and tuple(btape.shapes[i]) == (40, 5)
                   for i in range(btape.n))


def test_jacobian_calls_like_the_last_one_and_unlike_it():
    """A Jacobian function keeps its last batched call's plan: arguments of the same
    structure, shapes, dtypes and static values reuse it, any others are traced or found
    again. Every call here equals the same Jacobian computed by a fresh function."""
    def f(w, X, power):
        return np.sum(np.log1p(np.exp(X @ w)) ** power) + 0.5 * np.sum(w * w)

    rng = np.random.default_rng(3)
    X, w = rng.normal(size=(30, 4)), rng.normal(size=4)
    H = bn.hessian(f)

    def check(w, X, power):
        got = H(w, X, power)
        want = bn.hessian(f)(w, X, power)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype and got.shape == want.shape
        return got

    first = check(w, X, 1)
    np.testing.assert_array_equal(check(w, X, 1), first)              # the plan
    X[0, 0] = 5.0                                                      # new values in place
    w = w + 1.0
    changed = check(w, X, 1)
    assert not np.array_equal(changed, first)
    check(w, X, 2)                                                     # another static value
    check(w, X[:10], 1)                                                # another shape
    check(w.astype(np.float32), X.astype(np.float32), 1)               # another dtype
    check(w, X, 1)
    with pytest.raises(bn.InputError):
        H(w, X.astype(np.complex128), 1)
    J = bn.jacfwd(lambda p, X: np.tanh(X @ p["w"] + p["b"]))
    p = {"w": w, "b": 0.5}
    for b in (0.5, -1.0):
        p["b"] = b
        got = J(p, X)
        want = bn.jacfwd(lambda p, X: np.tanh(X @ p["w"] + p["b"]))(p, X)
        np.testing.assert_array_equal(got["w"], want["w"])
        np.testing.assert_array_equal(got["b"], want["b"])
