"""Block rows that scan or sort along an axis: cumsum, cumprod, logcumsumexp, cummax, cummin
and argsort.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
import operator
from math import exp, inf, log1p, nan

import numpy

from .row import Op, Sparsity, Traced
from .rules import template
from .templates import _axis


# -- reductions and scans (#11): the rules of the cumsum, cumprod and argsort rows. Each is
# an axis row (``_axis``: the operand seen as (outer, m, inner), the output the same shape).
def _cumsum_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            val[oy + b0 + k] = val[oa + b0 + k]
        # y_j = y_{j-1} + a_j, in numpy's order (the same sums, float32 included)
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                val[oy + q] = val[oy + q - inner] + val[oa + q]


def _cumsum_bwd(i, oy, p, P, off, a0, need, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        # da_j = sum_{k >= j} g_k: the reversed cumulative sum of g
        for o in range(outer):
            for k in range(inner):
                acc = 0.0
                for j in range(m - 1, -1, -1):
                    q = (o * m + j) * inner + k
                    acc += grad[oy + q]
                    grad[oa + q] += acc


def _cumsum_jvp(i, oy, p, P, off, a0, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            grad[oy + b0 + k] = grad[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                grad[oy + q] = grad[oy + q - inner] + grad[oa + q]


def _cumprod_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            val[oy + b0 + k] = val[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                val[oy + q] = val[oy + q - inner] * val[oa + q]


def _cumprod_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        # da_j = y_{j-1} * s_j with s_j = sum_{k >= j} g_k prod_{j < i <= k} a_i, run from
        # the end as s_j = g_j + a_{j+1} s_{j+1}: products of the other elements only, never
        # y / a, so exact where a line holds zeros (one zero: the product of the others at
        # it; two: 0) and no 0 / 0 or inf / inf
        for o in range(outer):
            for k in range(inner):
                s = 0.0
                for j in range(m - 1, -1, -1):
                    q = (o * m + j) * inner + k
                    if j == m - 1:
                        s = grad[oy + q]
                    else:
                        s = grad[oy + q] + val[oa + q + inner] * s
                    grad[oa + q] += s * (val[oy + q - inner] if j > 0 else 1.0)


def _cumprod_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    # t_j = t_{j-1} a_j + y_{j-1} ta_j (the product rule along the scan, exact at zeros)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            grad[oy + b0 + k] = grad[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                grad[oy + q] = (grad[oy + q - inner] * val[oa + q]
                                + val[oy + q - inner] * grad[oa + q])


# -- logcumsumexp: y_j = logaddexp(y_{j-1}, a_j), np.logaddexp.accumulate along the axis. The
# row is the chain of logaddexp steps in one node, with the logaddexp row's conventions at
# every step (numpy's value, ties of infinities of one sign included; JAX's slopes, and the
# logaddexp row's where the output is infinite). Its rules in numpy's names (``Traced``) are
# its reference and its derivative as traced ops: burnumba/derive needs no code for it.
@template
def _logaddexp_step(su, sx):
    """logaddexp(su, sx) as numpy's npy_logaddexp (and the logaddexp row): an exact tie
    (infinities of one sign too) is su + log 2, a NaN difference is NaN."""
    sd = su - sx
    if su == sx:
        s = su + 0.6931471805599453
    elif sd > 0.0:
        s = su + log1p(exp(-sd))
    elif sd <= 0.0:
        s = sx + log1p(exp(sd))
    else:
        s = sd
    return s


@template
def _logaddexp_slope(sa, sb, s):
    """d logaddexp(sa, sb) / d sa at its value s, as the logaddexp row's da: exp(sa - s)
    where s is finite; where it is infinite, 1/2 at a tie, else 1 for the larger operand
    and 0 for the smaller (NaN for a NaN)."""
    if s > -inf and s < inf:
        w = exp(sa - s)
    elif sa == sb:
        w = 0.5
    elif sa > sb:
        w = 1.0
    elif sa < sb:
        w = 0.0
    else:
        w = nan
    return w


def _logcumsumexp_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            val[oy + b0 + k] = val[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                su = val[oy + q - inner]
                sx = val[oa + q]
                s = _logaddexp_step(su, sx)
                val[oy + q] = s


def _logcumsumexp_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        # the chain rule through the steps, last to first: acc = d out / d y_j reaches a_j
        # through the step's slope in a_j and y_{j-1} through its slope in y_{j-1}
        for o in range(outer):
            for k in range(inner):
                acc = 0.0
                for j in range(m - 1, 0, -1):
                    q = (o * m + j) * inner + k
                    acc += grad[oy + q]
                    s = val[oy + q]
                    sa = val[oa + q]
                    sb = val[oy + q - inner]
                    w = _logaddexp_slope(sa, sb, s)
                    grad[oa + q] += acc * w
                    sa = val[oy + q - inner]
                    sb = val[oa + q]
                    w = _logaddexp_slope(sa, sb, s)
                    acc = acc * w
                q = o * m * inner + k
                grad[oa + q] += acc + grad[oy + q]


def _logcumsumexp_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    # t_j = slope_u * t_{j-1} + slope_x * ta_j, the steps' tangents first to last
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            grad[oy + b0 + k] = grad[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                s = val[oy + q]
                sa = val[oy + q - inner]
                sb = val[oa + q]
                w = _logaddexp_slope(sa, sb, s)
                tu = grad[oy + q - inner] * w
                sa = val[oa + q]
                sb = val[oy + q - inner]
                w = _logaddexp_slope(sa, sb, s)
                grad[oy + q] = tu + grad[oa + q] * w


def _slope(np, sa, sb, s):
    """``_logaddexp_slope`` on arrays, in the namespace ``np``."""
    finite = np.isfinite(s)
    inside = np.exp(sa - np.where(finite, s, 0.0))
    return np.where(finite, inside, np.where(sa == sb, 0.5, np.where(
        sa > sb, 1.0, np.where(sa < sb, 0.0, float("nan")))))


def _logcumsumexp_value(np, a, c):
    steps = [a[:, 0]]
    for j in range(1, a.shape[1]):
        steps.append(np.logaddexp(steps[-1], a[:, j]))
    return np.stack(steps, axis=1)


def _logcumsumexp_vjp(np, a, y, g, c):
    m = a.shape[1]
    acc, da = g[:, m - 1], [None] * m
    for j in range(m - 1, 0, -1):
        da[j] = acc * _slope(np, a[:, j], y[:, j - 1], y[:, j])
        acc = g[:, j - 1] + acc * _slope(np, y[:, j - 1], a[:, j], y[:, j])
    da[0] = acc
    return np.stack(da, axis=1)


def _logcumsumexp_tangent(np, a, y, t, c):
    ty = [t[:, 0]]
    for j in range(1, a.shape[1]):
        ty.append(ty[-1] * _slope(np, y[:, j - 1], a[:, j], y[:, j])
                  + t[:, j] * _slope(np, a[:, j], y[:, j - 1], y[:, j]))
    return np.stack(ty, axis=1)


# -- cummax / cummin: np.maximum.accumulate / np.minimum.accumulate along the axis, the chain
# of steps y_j = maximum(y_{j-1}, a_j) in one node, with the maximum (minimum) row's
# conventions at every step: its value (the new element on a tie, as numpy: signed zeros
# too; NaN propagates) and its slopes, 1 to the larger operand, 1/2 each at a tie, 0 to both
# where one is NaN (JAX's lax.max rule; HIPS autograd's np.maximum). So a tie splits the
# cotangent between the running extreme and the new element at each step: cummax of
# [1, 1, 1] gives d y_2 / d a = (1/4, 1/4, 1/2), the gradient of the chain written with
# np.maximum (max_axis splits a line's ties evenly instead). ``sgn`` is 1.0 for the maximum,
# -1.0 for the minimum.
@template
def _extreme_step(su, sx, sgn):
    """maximum(su, sx) (sgn = 1) or minimum (sgn = -1), as the maximum / minimum rows."""
    if sgn * su > sgn * sx or su != su:
        s = su
    else:
        s = sx
    return s


@template
def _extreme_slopes(su, sx, sgn):
    """(d s / d su, d s / d sx) of that step, as the maximum / minimum rows' da, db."""
    if sgn * su > sgn * sx:
        wu = 1.0
        wx = 0.0
    elif sgn * sx > sgn * su:
        wu = 0.0
        wx = 1.0
    elif su == sx:
        wu = 0.5
        wx = 0.5
    else:
        wu = 0.0
        wx = 0.0
    return wu, wx


def _cummax_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    sgn = 1.0                  # the maximum (cummin: -1.0)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            val[oy + b0 + k] = val[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                su = val[oy + q - inner]
                sx = val[oa + q]
                s = _extreme_step(su, sx, sgn)
                val[oy + q] = s


def _cummin_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    sgn = -1.0                 # the minimum (cummax: 1.0)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            val[oy + b0 + k] = val[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                su = val[oy + q - inner]
                sx = val[oa + q]
                s = _extreme_step(su, sx, sgn)
                val[oy + q] = s


# The backward runs the chain rule through the steps, last to first: acc = d out / d y_j
# reaches a_j through the step's slope in a_j and y_{j-1} through its slope in y_{j-1}. A
# zero slope passes 0, not 0 * acc (the rows' literal 0: an infinite cotangent stays off
# the losing operand); the tangent likewise.
def _cummax_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    sgn = 1.0                  # the maximum (cummin: -1.0)
    if need[ia]:
        for o in range(outer):
            for k in range(inner):
                acc = 0.0
                for j in range(m - 1, 0, -1):
                    q = (o * m + j) * inner + k
                    acc += grad[oy + q]
                    su = val[oy + q - inner]
                    sx = val[oa + q]
                    wu, wx = _extreme_slopes(su, sx, sgn)
                    if wx != 0.0:
                        grad[oa + q] += acc * wx
                    acc = acc * wu if wu != 0.0 else 0.0
                q = o * m * inner + k
                grad[oa + q] += acc + grad[oy + q]


def _cummin_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    sgn = -1.0                 # the minimum (cummax: 1.0)
    if need[ia]:
        for o in range(outer):
            for k in range(inner):
                acc = 0.0
                for j in range(m - 1, 0, -1):
                    q = (o * m + j) * inner + k
                    acc += grad[oy + q]
                    su = val[oy + q - inner]
                    sx = val[oa + q]
                    wu, wx = _extreme_slopes(su, sx, sgn)
                    if wx != 0.0:
                        grad[oa + q] += acc * wx
                    acc = acc * wu if wu != 0.0 else 0.0
                q = o * m * inner + k
                grad[oa + q] += acc + grad[oy + q]


def _cummax_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    sgn = 1.0                  # the maximum (cummin: -1.0)
    # t_j = slope_u * t_{j-1} + slope_x * ta_j, the steps' tangents first to last
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            grad[oy + b0 + k] = grad[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                su = val[oy + q - inner]
                sx = val[oa + q]
                wu, wx = _extreme_slopes(su, sx, sgn)
                tu = grad[oy + q - inner] * wu if wu != 0.0 else 0.0
                tx = grad[oa + q] * wx if wx != 0.0 else 0.0
                grad[oy + q] = tu + tx


def _cummin_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    sgn = -1.0                 # the minimum (cummax: 1.0)
    for o in range(outer):
        b0 = o * m * inner
        for k in range(inner):
            grad[oy + b0 + k] = grad[oa + b0 + k]
        for j in range(1, m):
            for k in range(inner):
                q = b0 + j * inner + k
                su = val[oy + q - inner]
                sx = val[oa + q]
                wu, wx = _extreme_slopes(su, sx, sgn)
                tu = grad[oy + q - inner] * wu if wu != 0.0 else 0.0
                tx = grad[oa + q] * wx if wx != 0.0 else 0.0
                grad[oy + q] = tu + tx


def _extreme_rules(extreme, wins):
    """cummax's (extreme = np.maximum's name, wins = operator.gt) or cummin's rules in
    numpy's names: a, y, g are (outer, m, inner), the axis 1; the tangent takes t of a's
    shape or, batched, (B,) + a's shape (it indexes from the end), so it is both."""
    def pick(np, s, win, tie):
        """s where the slope is 1, s / 2 at a tie, 0 elsewhere (a NaN operand too)."""
        return np.where(win, s, np.where(tie, 0.5 * s, 0.0))

    def value(np, a, c):
        steps = [a[:, 0]]
        for j in range(1, a.shape[1]):
            steps.append(getattr(np, extreme)(steps[-1], a[:, j]))
        return np.stack(steps, axis=1)

    def vjp(np, a, y, g, c):
        m = a.shape[1]
        acc, da = g[:, m - 1], [None] * m
        for j in range(m - 1, 0, -1):
            u, x = y[:, j - 1], a[:, j]
            da[j] = pick(np, acc, wins(x, u), x == u)
            acc = g[:, j - 1] + pick(np, acc, wins(u, x), u == x)
        da[0] = acc
        return np.stack(da, axis=1)

    def tangent(np, a, y, t, c):
        ty = [t[..., 0, :]]
        for j in range(1, a.shape[1]):
            u, x = y[:, j - 1], a[:, j]
            ty.append(pick(np, ty[-1], wins(u, x), u == x)
                      + pick(np, t[..., j, :], wins(x, u), x == u))
        return np.stack(ty, axis=-2)
    return Traced(value, vjp, tangent, tangent)


# -- cumsum, cumprod and argsort in numpy's names (``Traced``): a, y, g, t are (outer, m,
# inner), the axis is 1. Their reference and their derivative as traced ops.
def _cumsum_value(np, a, c):
    return np.cumsum(a, axis=1)


def _cumsum_vjp(np, a, y, g, c):
    return np.flip(np.cumsum(np.flip(g, axis=1), axis=1), axis=1)     # sum_{k >= j} g_k


def _cumsum_tangent(np, a, y, t, c):
    return np.cumsum(t, axis=1)


def _cumprod_value(np, a, c):
    steps = [a[:, 0]]                                  # y_j = y_{j-1} * a_j, numpy's order
    for j in range(1, a.shape[1]):
        steps.append(steps[-1] * a[:, j])
    return np.stack(steps, axis=1)


def _cumprod_weights(np, a):
    """W[o, j, k, n] = d y[o, k, n] / d a[o, j, n] = prod_{i <= k, i != j} a_i for k >= j, else
    0: the cumulative products with a_j replaced by 1 (m lines of m, exact at zeros; the
    masks are constants, in numpy itself)."""
    o, m, n = a.shape
    eye = numpy.eye(m, dtype=bool).reshape(1, m, m, 1)
    others = np.cumprod(np.where(eye, 1.0, np.reshape(a, (o, 1, m, n))), axis=2)
    return np.where(numpy.triu(numpy.ones((m, m), dtype=bool)).reshape(1, m, m, 1),
                    others, 0.0)


def _cumprod_vjp(np, a, y, g, c):
    o, m, n = a.shape
    return np.sum(_cumprod_weights(np, a) * np.reshape(g, (o, 1, m, n)), axis=2)


def _cumprod_tangent(np, a, y, t, c):
    o, m, n = a.shape
    return np.sum(_cumprod_weights(np, a) * np.reshape(t, (o, m, 1, n)), axis=1)


def _argsort_value(np, a, c):
    idx = np.argsort(a, axis=1, kind="stable")         # NaN last, ties in index order
    if c != 0.0:                                       # positions in the flat operand
        o, m, n = a.shape
        idx = ((numpy.arange(o).reshape(o, 1, 1) * m + idx) * n
               + numpy.arange(n).reshape(1, 1, n))
    return idx.astype(a.dtype)


def _no_derivative(np, a, y, g, c):
    return None                                        # integer data: no cotangent, tangent


@template
def _sort_before(u, v, base, xb, inner, val):
    """Whether heap slot u sorts before heap slot v in the order (value, index): NaN last
    (as numpy), equal values (-0.0 == 0.0 too) by their index, so the order is stable."""
    iu = int(val[base + u * inner])
    iv = int(val[base + v * inner])
    xu = val[xb + iu * inner]
    xv = val[xb + iv * inner]
    lt = (xv != xv and (xu == xu or iu < iv)) or xu < xv or (xu == xv and iu < iv)
    return lt


def _argsort_fwd(i, oy, c, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            base = oy + o * m * inner + k
            xb = oa + o * m * inner + k
            for j in range(m):
                val[base + j * inner] = j
            # heapsort of the line's indices in place (no work space): a max-heap in the
            # order (value, index), its largest moved to the end one by one
            start = m // 2
            end = m
            while end > 1:
                if start > 0:
                    start -= 1
                else:
                    end -= 1
                    tmp = val[base + end * inner]
                    val[base + end * inner] = val[base]
                    val[base] = tmp
                r = start
                while 2 * r + 1 < end:
                    ch = 2 * r + 1
                    if ch + 1 < end:
                        u = ch
                        v = ch + 1
                        lt = _sort_before(u, v, base, xb, inner, val)
                        if lt:
                            ch += 1
                    u = r
                    v = ch
                    lt = _sort_before(u, v, base, xb, inner, val)
                    if not lt:
                        break
                    tmp = val[base + r * inner]
                    val[base + r * inner] = val[base + ch * inner]
                    val[base + ch * inner] = tmp
                    r = ch
            # c = 1: positions in the flat operand (the indices of the take row that sorts)
            if c != 0.0:
                for j in range(m):
                    val[base + j * inner] = (o * m + int(val[base + j * inner])) * inner + k


def _argsort_bwd(i):
    # integer data: no gradient (the node has need 0, so the sweep never calls this)
    pass


def _argsort_jvp(oy, ny, grad):
    for j in range(ny):
        grad[oy + j] = 0.0


# The special-value (IEEE) cases of cummax and cummin, test data next to their rows (the form
# of ieee_cases.py's block cases: expression, inputs, value, cotangent, gradients; no kernel
# is generated from them, so no key sees them). Values are numpy 2.4's accumulate; gradients
# HIPS autograd's of the chain of np.maximum / np.minimum steps (its balanced rule at ties),
# which is JAX's lax.max at every step (jax.lax.cummax scans as a tree, so a tie of three or
# more can split differently there).
IEEE_CASES = {
    "cummax": (
        # NaN propagates; a NaN step passes no slope (the maximum row's 0, 0)
        ("np.maximum.accumulate(a)", [[1.5, nan, -2.0]], [1.5, nan, nan], [1.0, -2.0, 0.5],
         [[1.0, 0.0, 0.0]]),
        # NaN first: every later step is NaN
        ("np.maximum.accumulate(a)", [[nan, 1.0, 2.0]], [nan, nan, nan], [1.0, -2.0, 0.5],
         [[1.0, 0.0, 0.0]]),
        # -inf loses, +inf takes over
        ("np.maximum.accumulate(a)", [[-inf, 1.0, inf]], [-inf, 1.0, inf], [1.0, -2.0, 0.5],
         [[1.0, -2.0, 0.5]]),
        # a tie of +inf: 1/2 each
        ("np.maximum.accumulate(a)", [[inf, inf, 2.0]], [inf, inf, inf], [1.0, -2.0, 0.5],
         [[0.25, -0.75, 0.0]]),
        # all -inf: a tie at every step
        ("np.maximum.accumulate(a)", [[-inf, -inf, -inf]], [-inf, -inf, -inf], [1.0, -2.0, 0.5],
         [[0.125, -0.875, 0.25]]),
        # signed zeros tie: the new element's sign (numpy's value)
        ("np.maximum.accumulate(a)", [[-0.0, 0.0, -0.0]], [-0.0, 0.0, -0.0], [1.0, -2.0, 0.5],
         [[0.125, -0.875, 0.25]]),
        # the kink: ties split at each step, (1/4, 1/4, 1/2) of y_2
        ("np.maximum.accumulate(a)", [[1.0, 1.0, 1.0]], [1.0, 1.0, 1.0], [1.0, -2.0, 0.5],
         [[0.125, -0.875, 0.25]]),
        # a later tie with the running maximum
        ("np.maximum.accumulate(a)", [[2.0, -0.5, 2.0]], [2.0, 2.0, 2.0], [1.0, -2.0, 0.5],
         [[-0.75, 0.0, 0.25]]),
        # the public function: the flattened array
        ("bnp.cummax(a)", [[[0.5, -inf], [0.5, 2.0]]], [0.5, 0.5, 0.5, 2.0],
         [1.0, -2.0, 0.5, 0.25], [[[-0.75, 0.0], [0.25, 0.25]]]),
        # along axis 0 (inner > 1)
        ("np.maximum.accumulate(a, axis=0)", [[[1.0, -inf], [inf, 2.0], [nan, 2.0]]],
         [[1.0, -inf], [inf, 2.0], [nan, 2.0]], [[1.0, -2.0], [0.5, 1.0], [-1.0, 2.0]],
         [[[1.0, -2.0], [0.5, 2.0], [0.0, 1.0]]]),
    ),
    "cummin": (
        # NaN propagates; a NaN step passes no slope (the minimum row's 0, 0)
        ("np.minimum.accumulate(a)", [[1.5, nan, -2.0]], [1.5, nan, nan], [1.0, -2.0, 0.5],
         [[1.0, 0.0, 0.0]]),
        # NaN first: every later step is NaN
        ("np.minimum.accumulate(a)", [[nan, 1.0, 2.0]], [nan, nan, nan], [1.0, -2.0, 0.5],
         [[1.0, 0.0, 0.0]]),
        # +inf loses, -inf takes over
        ("np.minimum.accumulate(a)", [[inf, 1.0, -inf]], [inf, 1.0, -inf], [1.0, -2.0, 0.5],
         [[1.0, -2.0, 0.5]]),
        # a tie of -inf: 1/2 each
        ("np.minimum.accumulate(a)", [[-inf, -inf, 2.0]], [-inf, -inf, -inf], [1.0, -2.0, 0.5],
         [[0.25, -0.75, 0.0]]),
        # all +inf: a tie at every step
        ("np.minimum.accumulate(a)", [[inf, inf, inf]], [inf, inf, inf], [1.0, -2.0, 0.5],
         [[0.125, -0.875, 0.25]]),
        # signed zeros tie: the new element's sign (numpy's value)
        ("np.minimum.accumulate(a)", [[0.0, -0.0, 0.0]], [0.0, -0.0, 0.0], [1.0, -2.0, 0.5],
         [[0.125, -0.875, 0.25]]),
        # the kink: ties split at each step, (1/4, 1/4, 1/2) of y_2
        ("np.minimum.accumulate(a)", [[1.0, 1.0, 1.0]], [1.0, 1.0, 1.0], [1.0, -2.0, 0.5],
         [[0.125, -0.875, 0.25]]),
        # a later tie with the running minimum
        ("np.minimum.accumulate(a)", [[-2.0, 0.5, -2.0]], [-2.0, -2.0, -2.0], [1.0, -2.0, 0.5],
         [[-0.75, 0.0, 0.25]]),
        # the public function: the flattened array
        ("bnp.cummin(a)", [[[0.5, inf], [0.5, -2.0]]], [0.5, 0.5, 0.5, -2.0],
         [1.0, -2.0, 0.5, 0.25], [[[-0.75, 0.0], [0.25, 0.25]]]),
        # along axis 0 (inner > 1)
        ("np.minimum.accumulate(a, axis=0)", [[[1.0, inf], [-inf, -2.0], [nan, -2.0]]],
         [[1.0, inf], [-inf, -2.0], [nan, -2.0]], [[1.0, -2.0], [0.5, 1.0], [-1.0, 2.0]],
         [[[1.0, -2.0], [0.5, 2.0], [0.0, 1.0]]]),
    ),
}


ROWS = (
    # -- reductions and scans (#11) --
    # cumsum and cumprod along one axis (np.cumsum / np.cumprod; np.prod is cumprod's last
    # slice, so its gradient is the product of the other elements, exact at zeros: one zero
    # gets the product of the others, the rest 0; two zeros: all 0). Backward: the reversed
    # cumulative sum; for cumprod, y_{j-1} * (g_j + a_{j+1} (g_{j+1} + ...)), no division.
    Op("cumsum", 1, "block", doc="y[o, j, k] = sum_{i <= j} a[o, i, k]",
       fwd=_cumsum_fwd, bwd=_cumsum_bwd, jvp=_cumsum_jvp, layout="axis",
       sparsity=Sparsity("prefix", "linear"),
       traced=Traced(_cumsum_value, _cumsum_vjp, _cumsum_tangent), accumulate="add",
       opcode=73),
    Op("cumprod", 1, "block", doc="y[o, j, k] = prod_{i <= j} a[o, i, k]",
       fwd=_cumprod_fwd, bwd=_cumprod_bwd, jvp=_cumprod_jvp, layout="axis",
       sparsity=Sparsity("prefix"),
       traced=Traced(_cumprod_value, _cumprod_vjp, _cumprod_tangent), accumulate="multiply",
       opcode=74),
    # argsort along one axis, as numpy's stable sort: NaN last, equal values (-0.0 and 0.0
    # too) in their original order. Integer data (need 0, no gradient); with c = 1 it gives
    # positions in the flat operand, which a take row reads: np.sort(x) is take(x, argsort),
    # so the permutation is computed at run time and the gradient scatters through it.
    Op("argsort", 1, "block", doc="y[o, :, k] = the stable order of a[o, :, k] (integers)",
       fwd=_argsort_fwd, bwd=_argsort_bwd, jvp=_argsort_jvp, layout="axis",
       sparsity=Sparsity("none", "linear"),
       traced=Traced(_argsort_value, _no_derivative, _no_derivative, _no_derivative,
                     imm=(0.0, 1.0)), opcode=75),
    Op("logcumsumexp", 1, "block", doc="y[o, j, k] = log sum_{i <= j} exp(a[o, i, k])",
       fwd=_logcumsumexp_fwd, bwd=_logcumsumexp_bwd, jvp=_logcumsumexp_jvp, layout="axis",
       sparsity=Sparsity("prefix"),
       traced=Traced(_logcumsumexp_value, _logcumsumexp_vjp, _logcumsumexp_tangent),
       public="logcumsumexp", accumulate="logaddexp", opcode=101),
    Op("cummax", 1, "block", doc="y[o, j, k] = max_{i <= j} a[o, i, k]",
       fwd=_cummax_fwd, bwd=_cummax_bwd, jvp=_cummax_jvp, layout="axis",
       sparsity=Sparsity("prefix"), traced=_extreme_rules("maximum", operator.gt),
       public="cummax", accumulate="maximum", opcode=118),
    Op("cummin", 1, "block", doc="y[o, j, k] = min_{i <= j} a[o, i, k]",
       fwd=_cummin_fwd, bwd=_cummin_bwd, jvp=_cummin_jvp, layout="axis",
       sparsity=Sparsity("prefix"), traced=_extreme_rules("minimum", operator.lt),
       public="cummin", accumulate="minimum", opcode=119),
)
