"""The regularized incomplete beta function (issue #31): betainc(a, b, x) = I_x(a, b) and
betaincc(a, b, x) = 1 - I_x(a, b) (scipy.special's names and argument order),
betainc_dx(a, b, x) = x^(a-1) (1-x)^(b-1) / B(a, b), their derivative in x, and
betainc_da(a, b, x) = dI/da, betainc_db(a, b, x) = dI/db, their derivatives in a and b.

Three operands, elementwise: block rows of layout "tiles" (as where's): a is the node
P[p], b is a0 and x is a1, each as large as the output, a scalar, or a tile repeated over
it (its index wraps at its size). The rules see the operands in that order, (a, b, x),
which is the public functions' order. The scalar code is ``special_beta.py``'s (the rules
call it by the names in ``rules.SPECIAL``; its digest keys only these rows' objects).

Derivatives (autograd has d/dx only, JAX none in a and b):

    d/dx betainc = betainc_dx = -d/dx betaincc,
    d/da betainc = betainc_da = -d/da betaincc,  d/db betainc = betainc_db = -d/db betaincc,
    d/dx betainc_dx = betainc_dx ((a - 1) / x - (b - 1) / (1 - x)),
    d/da betainc_dx = d/dx betainc_da = betainc_dx (log x - psi(a) + psi(a + b)),
    d/db betainc_dx = d/dx betainc_db = betainc_dx (log(1 - x) - psi(b) + psi(a + b)).

dI/da and dI/db come as one pair from the scalar code (betainc_dab: the continued fraction
in forward mode, special_beta.py), the density's pair from betainc_dx_dab. betainc_da's
and betainc_db's own derivatives in a and b (I's second derivatives in its shape) are
``refused``: differentiating them is an error that names the argument, as gammainc_da's a.
Derivatives of any order in x stay rows; betainc_dx's in a and b are traced ops (digamma)
beyond the first. At x = 0 and 1, where the density vanishes with a > 1 or b > 1, d/dx
betainc_dx is NaN (0 * inf), not its limit.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
import math

from .row import OnTrace, Op, Sparsity
from .rules import template
from .special_beta import (betainc, betainc_dab, betainc_dx, betainc_dx_dab,  # noqa: F401
                           betaincc)                  # (the rules' calls)

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
@template
def _partials(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, val):
    """betainc's derivatives at one element, those its operands need: in x the density, in
    a and b the pair betainc_dab gives (one call: numba inlines the fraction at each)."""
    av = val[oa + ka]
    bv = val[ob + kb]
    xv = val[ox + kx]
    dx = betainc_dx(av, bv, xv) if need[ix] else 0.0
    da = 0.0
    db = 0.0
    if need[ia] or need[ib]:
        da, db = betainc_dab(av, bv, xv)
    return dx, da, db


def _betainc_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        val[oy + j] = betainc(val[oa + ka], val[ob + kb], val[ox + kx])
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        dx, da, db = _partials(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, val)
        gy = grad[oy + j]
        if need[ix]:
            grad[ox + kx] += gy * dx
        if need[ia]:
            grad[oa + ka] += gy * da
        if need[ib]:
            grad[ob + kb] += gy * db
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


# the tangent: the sum over the operands that have one (their tangents in grad)
@template
def _tangent(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, grad, dx, da, db):
    ty = grad[ox + kx] * dx if need[ix] else 0.0
    if need[ia]:
        ty += grad[oa + ka] * da
    if need[ib]:
        ty += grad[ob + kb] * db
    return ty


def _betainc_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        dx, da, db = _partials(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, val)
        ty = _tangent(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, grad, dx, da, db)
        grad[oy + j] = ty
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
    for j in range(ny):
        dx, da, db = _partials(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, val)
        gy = -grad[oy + j]
        if need[ix]:
            grad[ox + kx] += gy * dx
        if need[ia]:
            grad[oa + ka] += gy * da
        if need[ib]:
            grad[ob + kb] += gy * db
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betaincc_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        dx, da, db = _partials(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, val)
        ty = _tangent(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, grad, dx, da, db)
        grad[oy + j] = -ty
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
# exponent is (a = 1, b = 1: its x or 1 - x may be 0 there). In a and b: betainc_dx_dab's
# pair, y (log x - psi(a) + psi(a + b)) and y (log(1 - x) - psi(b) + psi(a + b))
@template
def _density_partials(need, ia, ib, ix, oy, j, oa, ka, ob, kb, ox, kx, val):
    av = val[oa + ka]
    bv = val[ob + kb]
    xv = val[ox + kx]
    ta = (av - 1.0) / xv if av != 1.0 else 0.0
    tb = (bv - 1.0) / (1.0 - xv) if bv != 1.0 else 0.0
    dx = val[oy + j] * (ta - tb) if need[ix] else 0.0
    da = 0.0
    db = 0.0
    if need[ia] or need[ib]:
        da, db = betainc_dx_dab(av, bv, xv)
    return dx, da, db


def _betainc_dx_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        dx, da, db = _density_partials(need, ia, ib, ix, oy, j, oa, ka, ob, kb, ox, kx, val)
        gy = grad[oy + j]
        if need[ix]:
            grad[ox + kx] += gy * dx
        if need[ia]:
            grad[oa + ka] += gy * da
        if need[ib]:
            grad[ob + kb] += gy * db
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_dx_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        dx, da, db = _density_partials(need, ia, ib, ix, oy, j, oa, ka, ob, kb, ox, kx, val)
        ty = _tangent(need, ia, ib, ix, oa, ka, ob, kb, ox, kx, grad, dx, da, db)
        grad[oy + j] = ty
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


# betainc_da / betainc_db: dI/da, dI/db (betainc_dab's pair, the first or the second); their
# derivative in x is betainc_dx_dab's (d/da of the density); in a and b refused
def _betainc_da_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        val[oy + j] = betainc_dab(val[oa + ka], val[ob + kb], val[ox + kx])[0]
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_da_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    if need[ix]:
        for j in range(ny):
            grad[ox + kx] += grad[oy + j] * betainc_dx_dab(val[oa + ka], val[ob + kb],
                                                           val[ox + kx])[0]
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0
            kx = kx + 1 if kx + 1 < nx else 0


def _betainc_da_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        grad[oy + j] = (grad[ox + kx] * betainc_dx_dab(val[oa + ka], val[ob + kb],
                                                       val[ox + kx])[0] if need[ix] else 0.0)
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_db_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        val[oy + j] = betainc_dab(val[oa + ka], val[ob + kb], val[ox + kx])[1]
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


def _betainc_db_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    if need[ix]:
        for j in range(ny):
            grad[ox + kx] += grad[oy + j] * betainc_dx_dab(val[oa + ka], val[ob + kb],
                                                           val[ox + kx])[1]
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0
            kx = kx + 1 if kx + 1 < nx else 0


def _betainc_db_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ia, oa, na, ib, ob, nb, ix, ox, nx, ka, kb, kx = _beta_operands(i, p, P, a0, a1, off)
    for j in range(ny):
        grad[oy + j] = (grad[ox + kx] * betainc_dx_dab(val[oa + ka], val[ob + kb],
                                                       val[ox + kx])[1] if need[ix] else 0.0)
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0
        kx = kx + 1 if kx + 1 < nx else 0


# -- the derivatives as traced ops (``OnTrace``: the rows appended have no numpy name). ``t``
# is the trace (burnumba/derive/traced.py: Trace), ``np`` burnumba.numpy.
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


def _on_operands(name):
    """The part that appends a node of row ``name`` on node i's operands, of its shape (its
    need and refusals are the trace's: Trace.append)."""
    def part(np, t, i):
        a, b, x = _nodes(t, i)
        return t.append(name, t.shapes[i], t.var(b), t.var(x), params=[a])
    return part


_density = _on_operands("betainc_dx")


def _slope(np, t, i):
    """d/dx of betainc_dx node i, traced: y ((a - 1) / x - (b - 1) / (1 - x))."""
    a, b, x = (t.var(k) for k in _nodes(t, i))
    return t.var(i) * ((a - 1.0) / x - (b - 1.0) / (1.0 - x))


def _weights(np, t, i):
    """(log x - psi(a) + psi(a + b), log(1 - x) - psi(b) + psi(a + b)), traced: the density's
    logarithmic derivatives in a and b."""
    a, b, x = (t.var(k) for k in _nodes(t, i))
    psi = t.special("polygamma")
    both = psi(0.0, a + b)
    return np.log(x) - psi(0.0, a) + both, np.log1p(-x) - psi(0.0, b) + both


def _rules(parts, sign):
    """(vjp, jvp) of a row whose derivative in operand k (a, b, x) is ``parts[k](np, t, i)``
    times ``sign``; None for an operand it refuses (refused where the node was made)."""
    def vjp(np, t, i, g, need=None):
        return [(k, _untile(np, sign * g * part(np, t, i), t.shapes[k]))
                for k, part in zip(_nodes(t, i), parts)
                if part is not None and (need is None or need(k))]

    def jvp(np, t, i, tangent):
        ty = None
        for k, part in zip(_nodes(t, i), parts):
            tk = tangent(k)
            if part is not None and tk is not None:
                ty = tk * part(np, t, i) if ty is None else ty + tk * part(np, t, i)
        return None if ty is None else np.broadcast_to(sign * ty, t.shapes[i])
    return vjp, jvp


_INC = (_on_operands("betainc_da"), _on_operands("betainc_db"), _density)
_betainc_vjp, _betainc_tangent = _rules(_INC, 1.0)
_betaincc_vjp, _betaincc_tangent = _rules(_INC, -1.0)
_dx_vjp, _dx_tangent = _rules((lambda np, t, i: t.var(i) * _weights(np, t, i)[0],
                               lambda np, t, i: t.var(i) * _weights(np, t, i)[1], _slope), 1.0)
_da_vjp, _da_tangent = _rules((None, None,
                               lambda np, t, i: _density(np, t, i) * _weights(np, t, i)[0]),
                              1.0)
_db_vjp, _db_tangent = _rules((None, None,
                               lambda np, t, i: _density(np, t, i) * _weights(np, t, i)[1]),
                              1.0)


# -- the tape-file check (``Op.check``, burnumba/ir/tapefile.py): ``t`` is its checker
def _beta_check(t, i):
    """a = the node P[p], b = a0 and x = a1: each tiles the node."""
    (a,) = t.params(i, 1)
    for k in (t.node(i, "P[pp] (a)", a), t.node(i, "a0 (b)", t.a0[i]),
              t.node(i, "a1 (x)", t.a1[i])):
        t.tiles(i, k)


_DOMAIN = ((0.3, 6.0), (0.3, 6.0), (0.05, 0.95))   # a, b, x: the tests sample there
# each output element reads its a, b and x elements (the three tiles)
_SPARSITY = Sparsity("tiles", "nonlinear")

ROWS = (
    Op("betainc", 2, "block", fwd=_betainc_fwd, bwd=_betainc_bwd, jvp=_betainc_jvp,
       layout="tiles", check=_beta_check, domain=_DOMAIN,
       on_trace=OnTrace(_betainc_vjp, _betainc_tangent),
       appends=("betainc_dx", "betainc_da", "betainc_db"), sparsity=_SPARSITY,
       doc="the regularized incomplete beta function I_x(a, b) (scipy.special.betainc)",
       opcode=120),
    Op("betaincc", 2, "block", fwd=_betaincc_fwd, bwd=_betaincc_bwd, jvp=_betaincc_jvp,
       layout="tiles", check=_beta_check, domain=_DOMAIN,
       on_trace=OnTrace(_betaincc_vjp, _betaincc_tangent),
       appends=("betainc_dx", "betainc_da", "betainc_db"), sparsity=_SPARSITY,
       doc="its complement 1 - I_x(a, b) (scipy.special.betaincc)", opcode=121),
    # the derivative in x of both, which their traced derivatives append
    Op("betainc_dx", 2, "block", fwd=_betainc_dx_fwd, bwd=_betainc_dx_bwd,
       jvp=_betainc_dx_jvp, layout="tiles", check=_beta_check, domain=_DOMAIN,
       on_trace=OnTrace(_dx_vjp, _dx_tangent), sparsity=_SPARSITY,
       doc="x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of betainc in x", opcode=122),
    # the derivatives in a and b (no scipy name: a traced derivative appends them); their own
    # in a and b, I's second in its shape, are refused
    Op("betainc_da", 2, "block", fwd=_betainc_da_fwd, bwd=_betainc_da_bwd,
       jvp=_betainc_da_jvp, layout="tiles", check=_beta_check, domain=_DOMAIN,
       refused=("a", "b"), on_trace=OnTrace(_da_vjp, _da_tangent), appends=("betainc_dx",),
       sparsity=_SPARSITY, doc="dI_x(a, b)/da, the derivative of betainc in a", opcode=127),
    Op("betainc_db", 2, "block", fwd=_betainc_db_fwd, bwd=_betainc_db_bwd,
       jvp=_betainc_db_jvp, layout="tiles", check=_beta_check, domain=_DOMAIN,
       refused=("a", "b"), on_trace=OnTrace(_db_vjp, _db_tangent), appends=("betainc_dx",),
       sparsity=_SPARSITY, doc="dI_x(a, b)/db, the derivative of betainc in b", opcode=128),
)


# -- special values (test data, tests/test_ieee.py): (expression, inputs, value, cotangent,
# gradients); in the first cases a and b enter through bn.stop_gradient (x alone), in the
# shape cases all three are differentiated: d/da, d/db NaN where I is NaN, 0 where I is
# constant in them (x = 0, x = 1, an infinite a or b, and in b along a = 0, in a along b =
# 0), at a = 0 and b = 0 the one-sided limits (-int_0^(1-x) t^(b-1) / (1 - t) dt, int_0^x
# t^(a-1) / (1 - t) dt); the finite ones mpmath's
_I = "bn.scipy.special.betainc(bn.stop_gradient(a), bn.stop_gradient(b), c)"
_Q = "bn.scipy.special.betaincc(bn.stop_gradient(a), bn.stop_gradient(b), c)"
_D = ("bn.elementwise_grad(lambda u: bn.scipy.special.betainc(bn.stop_gradient(a), "
      "bn.stop_gradient(b), u))(c)")
_X = [nan, inf, -inf, 0.0, -0.0, 1.0]
_COT = [1.0, -2.0, 0.5, 1.0, -2.0, 0.5]
# the shape cases: a NaN, b NaN, x NaN, +inf, -inf, +-0, a = inf, b = inf, a = -inf, b =
# -inf, a = +-0, b = +-0, a = b = 0, a = b = inf, a < 0, and three inside
_SA = [nan, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, inf, 2.5, -inf, 2.5, 0.0, -0.0, 2.5, 2.5, 0.0, inf,
       -1.0, 2.5, 60.0, 0.3]
_SB = [1.5, nan, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, inf, 1.5, -inf, 1.5, 1.5, 0.0, -0.0, 0.0, inf,
       1.5, 3.5, 45.0, 40.0]
_SX = [0.5, 0.5, nan, inf, -inf, 0.0, -0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
       0.5, 0.3, 0.6, 0.01]
_N5 = [nan] * 5
_Z6 = [0.0] * 6
_N3 = [nan] * 3
_S_I = _N5 + [0.0, 0.0, 0.0, 1.0, nan, nan, 1.0, 1.0, 0.0, 0.0] + _N3 + [
    0.2967529892956667, 0.7205918295496911, 0.7757445280124501]
_S_DA = _N5 + _Z6[:4] + [nan, nan, -0.348533611665991, -0.348533611665991, 0.0, 0.0] + _N3 + [
    -0.20268249182819467, -0.02765426537699465, -0.7565792800880052]
_S_DB = _N5 + _Z6[:4] + [nan, nan, 0.0, 0.0, 0.11283135127047517, 0.11283135127047517] + _N3 + [
    0.11134948154937009, 0.03913769113181459, 0.004294324701139449]
_S_DENS = _N5 + _Z6[:4] + [nan, nan] + [0.0] * 4 + _N3 + [
    1.8297671231132147, 7.042651674751382, 17.113926652678146]
# the density's d/da and d/db there (betainc_dx's, and betainc_da's / betainc_db's d/dx)
_S_DDA = _N5 + _Z6[:4] + [nan, nan] + [0.0] * 4 + _N3 + [
    -0.3678047400703354, 0.3688742466693895, 44.17527610288541]
_S_DDB = _N5 + _Z6[:4] + [nan, nan] + [0.0] * 4 + _N3 + [
    0.45064617910505456, -0.4409409384032674, -0.04251949007262899]
_S = [_SA, _SB, _SX]
_ONE = [1.0] * 21
# at the ends (a <= 1 at x = 0, b <= 1 at x = 1): I's slope +inf or a / b, the density's
# d/da and d/db +-inf (log x -> -inf) or 1 (b (psi(1 + b) - psi(b)) = 1)
_E = [[0.5, 1.0, 2.5, 2.5, 2.5], [2.5, 2.5, 0.5, 1.0, 1.5], [0.0, 0.0, 1.0, 1.0, 1.0]]
_E_DX = [inf, 2.5, inf, 2.5, 0.0]
_E_DDA = [-inf, -inf, inf, 1.0, 0.0]
_E_DDB = [inf, 1.0, -inf, -inf, 0.0]


def _neg(v):
    return [-t for t in v]


_BI = "bn.scipy.special.betainc(a, b, c)"
_BQ = "bn.scipy.special.betaincc(a, b, c)"
_BD = "bn.scipy.special._betainc_dx(a, b, c)"
_DA = "bn.scipy.special._betainc_da(bn.stop_gradient(a), bn.stop_gradient(b), c)"
_DB = "bn.scipy.special._betainc_db(bn.stop_gradient(a), bn.stop_gradient(b), c)"
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
        (_BI, _S, _S_I, _ONE, [_S_DA, _S_DB, _S_DENS]),
        (_BI, _E, [0.0, 0.0, 1.0, 1.0, 1.0], [1.0] * 5, [[0.0] * 5, [0.0] * 5, _E_DX]),
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
        (_BQ, _S, [1.0 - v for v in _S_I[:18]] + [0.7032470107043334, 0.2794081704503088,
                                                   0.22425547198754991],
         _ONE, [_neg(_S_DA), _neg(_S_DB), _neg(_S_DENS)]),
        (_BQ, _E, [1.0, 1.0, 0.0, 0.0, 0.0], [1.0] * 5, [[0.0] * 5, [0.0] * 5, _neg(_E_DX)]),
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
        # in a and b (all three differentiated): the density's d/da, d/db; its slope in x
        # NaN where the density is 0 and (a - 1) / x or (b - 1) / (1 - x) infinite (0 * inf:
        # x = 0 as above, an infinite a or b), 0 at a = 0 or b = 0
        (_BD, _S, _S_DENS, _ONE, [_S_DDA, _S_DDB, _N5 + [nan] * 6 + [0.0] * 4 + _N3 + [
            2.6139530330188783, -82.16426953876605, -1872.159855035397]]),
        (_BD, _E, _E_DX, [1.0] * 5, [_E_DDA, _E_DDB, [-inf, -3.75, inf, 3.75, nan]]),
    ),
    # dI/da and dI/db (a and b refused: held), their d/dx the density's d/da and d/db
    "betainc_da": (
        (_DA, _S, _S_DA, _ONE, [None, None, _S_DDA]),
        (_DA, _E, [0.0] * 5, [1.0] * 5, [None, None, _E_DDA]),
    ),
    "betainc_db": (
        (_DB, _S, _S_DB, _ONE, [None, None, _S_DDB]),
        (_DB, _E, [0.0] * 5, [1.0] * 5, [None, None, _E_DDB]),
    ),
}
