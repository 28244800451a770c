"""The regularized incomplete beta function (issue #31): betainc(a, b, x) = I_x(a, b) and
betaincc(a, b, x) = 1 - I_x(a, b) (scipy.special's names and argument order), and
betainc_dx(a, b, x) = x^(a-1) (1-x)^(b-1) / B(a, b), their derivative in x.

Three operands, elementwise: block rows of layout "tiles" (as where's): a is the node
P[p], b is a0 and x is a1, each as large as the output, a scalar, or a tile repeated over
it (its index wraps at its size). The rules see the operands in that order, (a, b, x),
which is the public functions' order. The scalar code is ``special_beta.py``'s (the rules
call it by the names in ``rules.SPECIAL``; its digest keys only these rows' objects).

Derivatives: d/dx betainc = betainc_dx = -d/dx betaincc; d/dx betainc_dx =
betainc_dx * ((a - 1) / x - (b - 1) / (1 - x)), so derivatives of any order in x stay rows.
In a and b the derivative is not defined here (nor in autograd; JAX raises too): those
operands are ``refused``, and differentiating them is an error that names them, as
jn's n. (It is a series in digamma-weighted terms, Boik & Robison-Cox 1998; not
written.) At x = 0 and 1, where the density vanishes with a > 1 or b > 1, d/dx
betainc_dx is NaN (0 * inf), not its limit.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
import math

from .row import OnTrace, Op, Sparsity
from .rules import template
from .special_beta import betainc, betainc_dx, betaincc  # noqa: F401 (the rules' calls)

nan = float("nan")
inf = float("inf")


@template
def _beta_operands(i, p, P, a0, a1, off):
    """The three operands (a is the node P[p], b a0, x a1) with their sizes, and a wrapping
    counter each: an operand is as large as the output, a scalar, or a tile repeated."""
    ia = P[p]
    oa = off[ia]
    na = off[ia + 1] - oa
    ib = a0[i]
    ob = off[ib]
    nb = off[ib + 1] - ob
    ix = a1[i]
    ox = off[ix]
    nx = off[ix + 1] - ox
    ka = 0
    kb = 0
    kx = 0
    return ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx


# -- the rows' rules (statements over the sweep's locals: kernels/rules.py)
def _betainc_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        val[oy + j] = betainc(val[oa + ka], val[ob + kb], val[ox + kx])
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    if need[ix]:
        for j in range(ny):
            grad[ox + kx] += grad[oy + j] * betainc_dx(val[oa + ka], val[ob + kb],
                                                       val[ox + kx])
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0
            kx = kx + 1 if kx + 1 < nx else 0


def _betainc_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        grad[oy + j] = (grad[ox + kx] * betainc_dx(val[oa + ka], val[ob + kb], val[ox + kx])
                        if need[ix] else 0.0)
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betaincc_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        val[oy + j] = betaincc(val[oa + ka], val[ob + kb], val[ox + kx])
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betaincc_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    if need[ix]:
        for j in range(ny):
            grad[ox + kx] -= grad[oy + j] * betainc_dx(val[oa + ka], val[ob + kb],
                                                       val[ox + kx])
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0
            kx = kx + 1 if kx + 1 < nx else 0


def _betaincc_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        grad[oy + j] = (-grad[ox + kx] * betainc_dx(val[oa + ka], val[ob + kb], val[ox + kx])
                        if need[ix] else 0.0)
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_dx_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        val[oy + j] = betainc_dx(val[oa + ka], val[ob + kb], val[ox + kx])
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


# d/dx of the density y: y ((a - 1) / x - (b - 1) / (1 - x)); a term is 0 where its
# exponent is (a = 1, b = 1: its x or 1 - x may be 0 there)
@template
def _density_slope(oy, j, oa, ka, ob, kb, ox, kx, val):
    av = val[oa + ka]
    bv = val[ob + kb]
    xv = val[ox + kx]
    ta = (av - 1.0) / xv if av != 1.0 else 0.0
    tb = (bv - 1.0) / (1.0 - xv) if bv != 1.0 else 0.0
    slope = val[oy + j] * (ta - tb)
    return slope


def _betainc_dx_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    if need[ix]:
        for j in range(ny):
            slope = _density_slope(oy, j, oa, ka, ob, kb, ox, kx, val)
            grad[ox + kx] += grad[oy + j] * slope
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0
            kx = kx + 1 if kx + 1 < nx else 0


def _betainc_dx_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        slope = _density_slope(oy, j, oa, ka, ob, kb, ox, kx, val)
        grad[oy + j] = grad[ox + kx] * slope if need[ix] else 0.0
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


# -- the derivatives as traced ops (``OnTrace``: d/dx is the betainc_dx row, which has no
# numpy name). ``t`` is the trace (burnumba/derive/traced.py: Trace), ``np`` burnumba.numpy.
def _untile(np, v, shape):
    """A cotangent of the output's shape summed back to a tile of it (as where's)."""
    if v.shape == tuple(shape):
        return v
    n = math.prod(shape)
    if n == v.size:                              # the same elements
        return np.reshape(v, shape)
    return np.reshape(np.sum(np.reshape(v, (-1, n)), axis=0), shape)


def _nodes(t, i):
    """(a, b, x): the node P[p], a0 and a1."""
    return int(t.params(i)[0]), int(t.a0[i]), int(t.a1[i])


def _density(t, i):
    """A betainc_dx node on node i's operands, of its shape (x has a derivative here)."""
    a, b, x = _nodes(t, i)
    return t.append("betainc_dx", t.shapes[i], t.var(b), t.var(x), params=[a], need=True)


def _slope(np, t, i):
    """d/dx of betainc_dx node i, traced: y ((a - 1) / x - (b - 1) / (1 - x))."""
    a, b, x = (t.var(k) for k in _nodes(t, i))
    return t.var(i) * ((a - 1.0) / x - (b - 1.0) / (1.0 - x))


def _rules(derivative, sign):
    """(vjp, jvp) of a row whose d/dx is ``derivative(np, t, i)`` times ``sign``."""
    def vjp(np, t, i, g, need=None):
        x = _nodes(t, i)[2]
        if need is not None and not need(x):
            return []
        return [(x, _untile(np, sign * g * derivative(np, t, i), t.shapes[x]))]

    def jvp(np, t, i, tangent):
        tx = tangent(_nodes(t, i)[2])
        if tx is None:
            return None
        return np.broadcast_to(sign * tx * derivative(np, t, i), t.shapes[i])
    return vjp, jvp


_betainc_vjp, _betainc_tangent = _rules(lambda np, t, i: _density(t, i), 1.0)
_betaincc_vjp, _betaincc_tangent = _rules(lambda np, t, i: _density(t, i), -1.0)
_dx_vjp, _dx_tangent = _rules(_slope, 1.0)


# -- the tape-file check (``Op.check``, burnumba/ir/tapefile.py): ``t`` is its checker
def _beta_check(t, i):
    """a = the node P[p], b = a0 and x = a1: each tiles the node."""
    (a,) = t.params(i, 1)
    for k in (t.node(i, "P[pp] (a)", a), t.node(i, "a0 (b)", t.a0[i]),
              t.node(i, "a1 (x)", t.a1[i])):
        t.tiles(i, k)


_DOMAIN = ((0.3, 6.0), (0.3, 6.0), (0.05, 0.95))   # a, b, x: the tests sample there
# each output element reads its a, b, x elements; only x has a derivative (a, b refused)
_SPARSITY = Sparsity("where", "nonlinear")

ROWS = (
    Op("betainc", 2, "block", fwd=_betainc_fwd, bwd=_betainc_bwd, jvp=_betainc_jvp,
       layout="tiles", check=_beta_check, domain=_DOMAIN, refused=("a", "b"),
       on_trace=OnTrace(_betainc_vjp, _betainc_tangent), appends=("betainc_dx",),
       sparsity=_SPARSITY,
       doc="the regularized incomplete beta function I_x(a, b) (scipy.special.betainc)",
       opcode=120),
    Op("betaincc", 2, "block", fwd=_betaincc_fwd, bwd=_betaincc_bwd, jvp=_betaincc_jvp,
       layout="tiles", check=_beta_check, domain=_DOMAIN, refused=("a", "b"),
       on_trace=OnTrace(_betaincc_vjp, _betaincc_tangent), appends=("betainc_dx",),
       sparsity=_SPARSITY,
       doc="its complement 1 - I_x(a, b) (scipy.special.betaincc)", opcode=121),
    # the derivative in x of both, which their traced derivatives append
    Op("betainc_dx", 2, "block", fwd=_betainc_dx_fwd, bwd=_betainc_dx_bwd,
       jvp=_betainc_dx_jvp, layout="tiles", check=_beta_check, domain=_DOMAIN,
       refused=("a", "b"), on_trace=OnTrace(_dx_vjp, _dx_tangent), sparsity=_SPARSITY,
       doc="x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of betainc in x", opcode=122),
)


# -- special values (test data, tests/test_ieee.py): (expression, inputs, value, cotangent,
# gradients); a and b enter through bn.stop_gradient (refused: no derivative)
_I = "bn.scipy.special.betainc(bn.stop_gradient(a), bn.stop_gradient(b), c)"
_Q = "bn.scipy.special.betaincc(bn.stop_gradient(a), bn.stop_gradient(b), c)"
_D = ("bn.elementwise_grad(lambda u: bn.scipy.special.betainc(bn.stop_gradient(a), "
      "bn.stop_gradient(b), u))(c)")
_X = [nan, inf, -inf, 0.0, -0.0, 1.0]
_COT = [1.0, -2.0, 0.5, 1.0, -2.0, 0.5]
IEEE_CASES = {
    "betainc": (
        # x outside [0, 1] or NaN: NaN with a NaN slope; I = 0 at x = +-0, 1 at x = 1, and
        # the density there 0 (a, b > 1)
        (_I, [2.5, 1.5, _X], [nan, nan, nan, 0.0, 0.0, 1.0], _COT,
         [None, None, [nan, nan, nan, 0.0, 0.0, 0.0]]),
        # at x = 0: the density is +inf for a < 1, b for a = 1
        (_I, [0.5, 2.5, [0.0, 0.5]], [0.0, 0.9244131815783876], [1.0, 1.0],
         [None, None, [inf, 0.4244131815783878]]),
        (_I, [1.0, 2.5, [0.0, 1.0]], [0.0, 1.0], [1.0, 1.0], [None, None, [2.5, 0.0]]),
        # a, b at 0 or inf (scipy 1.17): I = 1 for a = 0 or b = inf, 0 for b = 0 or
        # a = inf, NaN for a = b = 0, a = b = inf, a NaN or a negative a or b; flat in x
        (_I, [[0.0, 2.0, inf, 2.0, 0.0, inf, nan, -1.0], [2.0, 0.0, 2.0, inf, 0.0, inf, 2.0,
                                                          -0.0], 0.5],
         [1.0, 0.0, 0.0, 1.0, nan, nan, nan, nan], [1.0] * 8,
         [None, None, nan]),
    ),
    "betaincc": (
        (_Q, [2.5, 1.5, _X], [nan, nan, nan, 1.0, 1.0, 0.0], _COT,
         [None, None, [nan, nan, nan, -0.0, 0.0, -0.0]]),
        (_Q, [0.5, 2.5, [0.0, 0.5]], [1.0, 0.07558681842161244], [1.0, 1.0],
         [None, None, [-inf, -0.4244131815783878]]),
        (_Q, [[0.0, 2.0, inf, 2.0, 0.0, inf, nan, -1.0], [2.0, 0.0, 2.0, inf, 0.0, inf, 2.0,
                                                          -0.0], 0.5],
         [0.0, 1.0, 1.0, 0.0, nan, nan, nan, nan], [1.0] * 8,
         [None, None, nan]),
    ),
    "betainc_dx": (
        # the density: NaN outside [0, 1]; at x = 0, +inf (a < 1), b (a = 1), 0 (a > 1);
        # its own slope NaN where the density vanishes at an end (0 * inf), -b (b - 1) at
        # x = 0 for a = 1
        (_D, [2.5, 1.5, _X], [nan, nan, nan, 0.0, 0.0, 0.0], _COT,
         [None, None, [nan, nan, nan, nan, nan, nan]]),
        (_D, [1.0, 2.5, [0.0, 1.0]], [2.5, 0.0], [1.0, 1.0], [None, None, [-3.75, nan]]),
        (_D, [0.5, 2.5, [0.0, 0.5]], [inf, 0.4244131815783878], [1.0, 1.0],
         [None, None, [-inf, -1.6976527263135512]]),
    ),
}
