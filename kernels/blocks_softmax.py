"""Block rows that normalise along an axis: softmax, causal_softmax (attention's scale,
mask and softmax in one row), log_softmax, logsumexp, layer_norm and cross_entropy.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
from math import exp, log, sqrt

from ._prims import exp as vexp  # rules.BLOCK_MATH (compiled: kernels/_native)
from .layout import ERR_TARGET  # the block rules' error codes
import numpy

from .row import OnTrace, Op, Sparsity, Traced
from .rules import template
from .templates import _axis, _dot4, _max4, _max_along, _sum4

inf = float("inf")


@template
def _ln_stats(o, m, oa, c, val):
    """Layer norm's row o (the last axis, m long), which a backward recomputes rather than
    stores: its start, mean and 1 / sqrt(var + eps)."""
    b0 = oa + o * m
    mu = 0.0
    for j in range(m):
        mu += val[b0 + j]
    mu /= m
    var = 0.0
    for j in range(m):
        d = val[b0 + j] - mu
        var += d * d
    rs = 1.0 / sqrt(var / m + c)
    return b0, mu, rs


@template
def _ln_stats4(o, m, oa, c, val):
    """_ln_stats of rows o .. o + 3 side by side (_max4), each row's bits as _ln_stats's:
    their start, means u0 .. u3 and 1 / sqrt(var + eps) r0 .. r3."""
    b0 = oa + o * m
    u0 = 0.0
    u1 = 0.0
    u2 = 0.0
    u3 = 0.0
    for j in range(m):
        u0 += val[b0 + j]
        u1 += val[b0 + m + j]
        u2 += val[b0 + 2 * m + j]
        u3 += val[b0 + 3 * m + j]
    u0 /= m
    u1 /= m
    u2 /= m
    u3 /= m
    v0 = 0.0
    v1 = 0.0
    v2 = 0.0
    v3 = 0.0
    for j in range(m):
        d0 = val[b0 + j] - u0
        d1 = val[b0 + m + j] - u1
        d2 = val[b0 + 2 * m + j] - u2
        d3 = val[b0 + 3 * m + j] - u3
        v0 += d0 * d0
        v1 += d1 * d1
        v2 += d2 * d2
        v3 += d3 * d3
    r0 = 1.0 / sqrt(v0 / m + c)
    r1 = 1.0 / sqrt(v1 / m + c)
    r2 = 1.0 / sqrt(v2 / m + c)
    r3 = 1.0 / sqrt(v3 / m + c)
    return b0, u0, u1, u2, u3, r0, r1, r2, r3


@template
def _ce_row(r, oa, ot, ncls, val):
    """Cross-entropy's row r: its start, target class, max and sum of exp(l - max). The
    caller checks the target (0 <= t < ncls) before using it."""
    b0 = oa + r * ncls
    t = int(val[ot + r])
    mx = val[b0]
    for j in range(1, ncls):
        mx = max(mx, val[b0 + j])
    s = 0.0
    for j in range(ncls):
        s += exp(val[b0 + j] - mx)
    return b0, t, mx, s


def _softmax_fwd(i, oy, ny, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if ny >= 64:
        # three passes, so that the exponentials are one loop over the whole slice (vexp: it
        # vectorizes; the GPT block's 64 x 6 x 8 x 8 scores: 70 against 145 us in
        # bn.profile). Below 64 values the one pass with libm's exp is faster. Rows along
        # the last axis go four at a time (_max4)
        o4 = outer - outer % 4 if inner == 1 else 0
        for o in range(0, o4, 4):
            b0 = oa + o * m
            m0, m1, m2, m3 = _max4(b0, m, val)
            y0 = oy + o * m
            for j in range(m):
                val[y0 + j] = val[b0 + j] - m0
                val[y0 + m + j] = val[b0 + m + j] - m1
                val[y0 + 2 * m + j] = val[b0 + 2 * m + j] - m2
                val[y0 + 3 * m + j] = val[b0 + 3 * m + j] - m3
        for o in range(o4, outer):
            for k in range(inner):
                mx = _max_along(o, k, m, inner, oa, val)
                for j in range(m):
                    q = (o * m + j) * inner + k
                    val[oy + q] = val[oa + q] - mx
        for q in range(ny):
            val[oy + q] = vexp(val[oy + q])
        for o in range(0, o4, 4):
            y0 = oy + o * m
            s0, s1, s2, s3 = _sum4(y0, m, val)
            # a loop per row: unit strides, one stream, so the divisions vectorize
            for j in range(m):
                val[y0 + j] /= s0
            for j in range(m):
                val[y0 + m + j] /= s1
            for j in range(m):
                val[y0 + 2 * m + j] /= s2
            for j in range(m):
                val[y0 + 3 * m + j] /= s3
        for o in range(o4, outer):
            for k in range(inner):
                s = 0.0
                for j in range(m):
                    s += val[oy + (o * m + j) * inner + k]
                for j in range(m):
                    val[oy + (o * m + j) * inner + k] /= s
    else:
        # a few values (a scalar graph's softmax): one pass with libm's exp, faster there
        for o in range(outer):
            for k in range(inner):
                mx = _max_along(o, k, m, inner, oa, val)
                s = 0.0
                for j in range(m):
                    e = exp(val[oa + (o * m + j) * inner + k] - mx)
                    val[oy + (o * m + j) * inner + k] = e
                    s += e
                for j in range(m):
                    val[oy + (o * m + j) * inner + k] /= s


def _softmax_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        # rows along the last axis four at a time, as the forward (_dot4)
        o4 = outer - outer % 4 if inner == 1 else 0
        for o in range(0, o4, 4):
            y0 = oy + o * m
            d0, d1, d2, d3 = _dot4(y0, m, grad, val)
            x0 = oa + o * m
            for j in range(m):
                grad[x0 + j] += val[y0 + j] * (grad[y0 + j] - d0)
                grad[x0 + m + j] += val[y0 + m + j] * (grad[y0 + m + j] - d1)
                grad[x0 + 2 * m + j] += val[y0 + 2 * m + j] * (grad[y0 + 2 * m + j] - d2)
                grad[x0 + 3 * m + j] += val[y0 + 3 * m + j] * (grad[y0 + 3 * m + j] - d3)
        for o in range(o4, outer):
            for k in range(inner):
                dot = 0.0
                for j in range(m):
                    q = (o * m + j) * inner + k
                    dot += grad[oy + q] * val[oy + q]
                for j in range(m):
                    q = (o * m + j) * inner + k
                    grad[oa + q] += val[oy + q] * (grad[oy + q] - dot)


def _softmax_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            dot = 0.0
            for j in range(m):
                q = (o * m + j) * inner + k
                dot += val[oy + q] * grad[oa + q]
            for j in range(m):
                q = (o * m + j) * inner + k
                grad[oy + q] = val[oy + q] * (grad[oa + q] - dot)


def _causal_softmax_fwd(i, oy, ny, c, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if ny >= 64:
        # as softmax: the shifted values (-inf in the masked half, whose exp is 0), then one
        # vectorized loop of exponentials over the slice, then the sums
        for o in range(outer):
            t = o % m
            b0 = oa + o * m
            y0 = oy + o * m
            mx = val[b0]
            for j in range(1, t + 1):
                mx = max(mx, val[b0 + j])
            for j in range(t + 1):
                val[y0 + j] = c * (val[b0 + j] - mx)
            for j in range(t + 1, m):
                val[y0 + j] = -inf
        for q in range(ny):
            val[oy + q] = vexp(val[oy + q])
        for o in range(outer):
            t = o % m
            y0 = oy + o * m
            s = 0.0
            for j in range(t + 1):
                s += val[y0 + j]
            r = 1.0 / s
            for j in range(t + 1):
                val[y0 + j] *= r
    else:
        for o in range(outer):
            t = o % m
            b0 = oa + o * m
            y0 = oy + o * m
            mx = val[b0]
            for j in range(1, t + 1):
                mx = max(mx, val[b0 + j])
            s = 0.0
            for j in range(t + 1):
                e = exp(c * (val[b0 + j] - mx))
                val[y0 + j] = e
                s += e
            r = 1.0 / s
            for j in range(t + 1):
                val[y0 + j] *= r
            for j in range(t + 1, m):
                val[y0 + j] = 0.0


def _causal_softmax_bwd(i, oy, c, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        for o in range(outer):
            t = o % m
            b0 = oa + o * m
            y0 = oy + o * m
            dot = 0.0
            for j in range(t + 1):
                dot += grad[y0 + j] * val[y0 + j]
            for j in range(t + 1):
                grad[b0 + j] += c * val[y0 + j] * (grad[y0 + j] - dot)


def _causal_softmax_jvp(i, oy, c, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        t = o % m
        b0 = oa + o * m
        y0 = oy + o * m
        dot = 0.0
        for j in range(t + 1):
            dot += val[y0 + j] * grad[b0 + j]
        for j in range(t + 1):
            grad[y0 + j] = c * val[y0 + j] * (grad[b0 + j] - dot)
        for j in range(t + 1, m):
            grad[y0 + j] = 0.0


def _log_softmax_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            mx = _max_along(o, k, m, inner, oa, val)
            s = 0.0
            for j in range(m):
                s += exp(val[oa + (o * m + j) * inner + k] - mx)
            lse = mx + log(s)
            for j in range(m):
                val[oy + (o * m + j) * inner + k] = val[oa + (o * m + j) * inner + k] - lse


def _log_softmax_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        for o in range(outer):
            for k in range(inner):
                gs = 0.0
                for j in range(m):
                    gs += grad[oy + (o * m + j) * inner + k]
                for j in range(m):
                    q = (o * m + j) * inner + k
                    grad[oa + q] += grad[oy + q] - exp(val[oy + q]) * gs


def _log_softmax_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            dot = 0.0
            for j in range(m):
                q = (o * m + j) * inner + k
                dot += exp(val[oy + q]) * grad[oa + q]
            for j in range(m):
                q = (o * m + j) * inner + k
                grad[oy + q] = grad[oa + q] - dot


def _logsumexp_fwd(i, oy, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            mx = _max_along(o, k, m, inner, oa, val)
            sh = mx if -1.7976931348623157e308 <= mx <= 1.7976931348623157e308 else 0.0
            s = 0.0
            for j in range(m):
                s += exp(val[oa + (o * m + j) * inner + k] - sh)
            val[oy + o * inner + k] = sh + log(s)


def _logsumexp_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        for o in range(outer):
            for k in range(inner):
                y = val[oy + o * inner + k]
                gk = grad[oy + o * inner + k]
                if y < -1.7976931348623157e308:
                    continue
                for j in range(m):
                    q = (o * m + j) * inner + k
                    grad[oa + q] += gk * exp(val[oa + q] - y)


def _logsumexp_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            y = val[oy + o * inner + k]
            acc = 0.0
            if y >= -1.7976931348623157e308:        # a line of -inf (fully masked) stays 0
                for j in range(m):
                    q = (o * m + j) * inner + k
                    acc += exp(val[oa + q] - y) * grad[oa + q]
            grad[oy + o * inner + k] = acc


def _layer_norm_fwd(i, oy, c, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    o4 = outer - outer % 4               # rows four at a time (_ln_stats4)
    for o in range(0, o4, 4):
        b0, u0, u1, u2, u3, r0, r1, r2, r3 = _ln_stats4(o, m, oa, c, val)
        y0 = oy + o * m
        for j in range(m):
            val[y0 + j] = (val[b0 + j] - u0) * r0
            val[y0 + m + j] = (val[b0 + m + j] - u1) * r1
            val[y0 + 2 * m + j] = (val[b0 + 2 * m + j] - u2) * r2
            val[y0 + 3 * m + j] = (val[b0 + 3 * m + j] - u3) * r3
    for o in range(o4, outer):
        b0, mu, rs = _ln_stats(o, m, oa, c, val)
        for j in range(m):
            val[oy + o * m + j] = (val[b0 + j] - mu) * rs


def _layer_norm_bwd(i, oy, c, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    o4 = outer - outer % 4 if need[ia] else 0
    for o in range(0, o4, 4):
        # four rows at a time, each row's operations in the order of the loop below
        b0, u0, u1, u2, u3, r0, r1, r2, r3 = _ln_stats4(o, m, oa, c, val)
        y0 = oy + o * m
        s0, s1, s2, s3 = _sum4(y0, m, grad)
        d0, d1, d2, d3 = _dot4(y0, m, grad, val)
        s0 /= m
        s1 /= m
        s2 /= m
        s3 /= m
        d0 /= m
        d1 /= m
        d2 /= m
        d3 /= m
        for j in range(m):
            grad[b0 + j] += r0 * (grad[y0 + j] - s0 - val[y0 + j] * d0)
            grad[b0 + m + j] += r1 * (grad[y0 + m + j] - s1 - val[y0 + m + j] * d1)
            grad[b0 + 2 * m + j] += r2 * (grad[y0 + 2 * m + j] - s2 - val[y0 + 2 * m + j] * d2)
            grad[b0 + 3 * m + j] += r3 * (grad[y0 + 3 * m + j] - s3 - val[y0 + 3 * m + j] * d3)
    for o in range(o4, outer if need[ia] else 0):
        b0, mu, rs = _ln_stats(o, m, oa, c, val)
        gm = 0.0
        gy = 0.0
        for j in range(m):
            gm += grad[oy + o * m + j]
            gy += grad[oy + o * m + j] * val[oy + o * m + j]
        gm /= m
        gy /= m
        for j in range(m):
            q = o * m + j
            grad[b0 + j] += rs * (grad[oy + q] - gm - val[oy + q] * gy)


def _layer_norm_jvp(i, oy, c, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        b0, mu, rs = _ln_stats(o, m, oa, c, val)
        gm = 0.0
        gy = 0.0
        for j in range(m):
            gm += grad[b0 + j]
            gy += grad[b0 + j] * val[oy + o * m + j]
        gm /= m
        gy /= m
        for j in range(m):
            q = o * m + j
            grad[oy + q] = rs * (grad[b0 + j] - gm - val[oy + q] * gy)


def _cross_entropy_fwd(i, oy, c, p, P, off, a0, a1, val):
    rows = P[p]
    ncls = P[p + 1]
    oa = off[a0[i]]
    ot = off[a1[i]]
    loss = 0.0
    for r in range(rows):
        b0, t, mx, s = _ce_row(r, oa, ot, ncls, val)
        if t < 0 or t >= ncls:
            return ERR_TARGET
        loss += mx + log(s) - val[b0 + t]
    val[oy] = c * loss


def _cross_entropy_bwd(i, oy, c, p, P, off, a0, a1, need, val, grad):
    rows = P[p]
    ncls = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    ot = off[a1[i]]
    gc = c * grad[oy]
    for r in range(rows if need[ia] else 0):
        b0, t, mx, s = _ce_row(r, oa, ot, ncls, val)
        if t < 0 or t >= ncls:
            return ERR_TARGET
        for j in range(ncls):
            grad[b0 + j] += gc * exp(val[b0 + j] - mx) / s
        grad[b0 + t] -= gc


def _cross_entropy_jvp(i, oy, c, p, P, off, a0, a1, val, grad):
    rows = P[p]
    ncls = P[p + 1]
    oa = off[a0[i]]
    ot = off[a1[i]]
    acc = 0.0
    for r in range(rows):
        b0, t, mx, s = _ce_row(r, oa, ot, ncls, val)
        if t < 0 or t >= ncls:
            return ERR_TARGET
        for j in range(ncls):
            acc += exp(val[b0 + j] - mx) / s * grad[b0 + j]
        acc -= grad[b0 + t]
    grad[oy] = c * acc


# -- the rules in numpy's names (``Traced``): a, y, g, t are (outer, m, inner) ("axis"; inner
# = 1 for "axis_rows"; y, g (outer, 1, inner) for logsumexp's "axis_reduce"), the axis is 1.
# The row's reference, and its derivative as traced ops; each reuses y where it can.
def _softmax_value(np, a, c):
    e = np.exp(a - np.max(a, axis=1, keepdims=True))
    return e / np.sum(e, axis=1, keepdims=True)


def _softmax_vjp(np, a, y, g, c):
    return y * (g - np.sum(g * y, axis=1, keepdims=True))


def _softmax_tangent(np, a, y, t, c):
    return y * (t - np.sum(y * t, axis=1, keepdims=True))


def _future(a):
    """Causal softmax's masked half: row o of the view is row t = o % m of its (T, T) block,
    whose columns j > t are masked (a constant, in numpy itself)."""
    outer, m = a.shape[0], a.shape[1]
    return (numpy.arange(m).reshape(1, m, 1)
            > (numpy.arange(outer) % m).reshape(outer, 1, 1))


def _causal_softmax_value(np, a, c):
    future = _future(a)
    z = np.where(future, -inf, a)
    e = np.where(future, 0.0, np.exp(c * (z - np.max(z, axis=1, keepdims=True))))
    return e / np.sum(e, axis=1, keepdims=True)


def _causal_softmax_vjp(np, a, y, g, c):
    # y is 0 beyond the diagonal, so the sums run over the visible part only
    return c * y * (g - np.sum(g * y, axis=1, keepdims=True))


def _causal_softmax_tangent(np, a, y, t, c):
    return c * y * (t - np.sum(y * t, axis=1, keepdims=True))


def _log_softmax_value(np, a, c):
    s = a - np.max(a, axis=1, keepdims=True)
    return s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))


def _log_softmax_vjp(np, a, y, g, c):
    return g - np.exp(y) * np.sum(g, axis=1, keepdims=True)


def _log_softmax_tangent(np, a, y, t, c):
    return t - np.sum(np.exp(y) * t, axis=1, keepdims=True)


def _logsumexp_value(np, a, c):
    mx = np.max(a, axis=1, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)            # shifted by a finite maximum only
    return mx + np.log(np.sum(np.exp(a - mx), axis=1, keepdims=True))


def _lse_weights(np, a, y):
    """exp(a - y) along the line, 0 in a line of -inf (which passes no gradient)."""
    w = np.where(y >= -inf, np.exp(a - np.where(y > -inf, y, 0.0)), 0.0)
    return np.where(y > -inf, w, 0.0)


def _logsumexp_vjp(np, a, y, g, c):
    return g * _lse_weights(np, a, y)


def _logsumexp_tangent(np, a, y, t, c):
    return np.sum(_lse_weights(np, a, y) * t, axis=1, keepdims=True)


def _layer_norm_rs(np, a, c):
    """1 / sqrt(var + eps) per row, recomputed from a."""
    d = a - np.mean(a, axis=1, keepdims=True)
    return 1.0 / np.sqrt(np.mean(d * d, axis=1, keepdims=True) + c)


def _layer_norm_value(np, a, c):
    return (a - np.mean(a, axis=1, keepdims=True)) * _layer_norm_rs(np, a, c)


def _layer_norm_vjp(np, a, y, g, c):
    rs = _layer_norm_rs(np, a, c)
    return rs * (g - np.mean(g, axis=1, keepdims=True)
                 - y * np.mean(g * y, axis=1, keepdims=True))


def _layer_norm_tangent(np, a, y, t, c):
    rs = _layer_norm_rs(np, a, c)
    return rs * (t - np.mean(t, axis=1, keepdims=True)
                 - y * np.mean(t * y, axis=1, keepdims=True))


# -- cross_entropy as traced ops (``OnTrace``: its rules append the softmax row, which numpy
# has no name for): c * g * (softmax(logits) - onehot(targets)). ``t`` is the trace
# (burnumba/derive/traced.py: Trace), ``np`` burnumba.numpy.
def _ce_parts(np, t, i):
    """softmax(logits) - onehot(targets), as (rows, classes)."""
    rows, ncls = t.params(i)[:2]
    logits = np.reshape(t.var(t.a0[i]), (rows, ncls))
    targets = np.reshape(t.var(t.a1[i]), (rows, 1))
    onehot = np.equal(targets, numpy.arange(ncls, dtype=float))
    return t.axis("softmax", logits) - onehot


def _cross_entropy_vjp(np, t, i, g, need=None):
    d = _ce_parts(np, t, i)
    return [(t.a0[i], np.reshape(float(t.imm[i]) * g * d, t.shapes[t.a0[i]]))]


def _cross_entropy_tangent(np, t, i, tangent):
    rows, ncls = t.params(i)[:2]
    ta = np.reshape(tangent(t.a0[i]), (rows, ncls))
    return float(t.imm[i]) * np.sum(_ce_parts(np, t, i) * ta)


# -- the tape-file check of each row here whose operands no layout kind describes
# (``Op.check``, which burnumba/ir/tapefile.py runs on every node of a file before it can
# run): ``t`` is its checker (node, none, params, ids, tiles, want; size, off, P, pp).

def _cross_entropy_check(t, i):
    """logits a0 (rows x classes = P[p], P[p+1]), targets a1 (rows), the node a scalar."""
    logits, targets = t.node(i, "a0", t.a0[i]), t.node(i, "a1", t.a1[i])
    rows, ncls = t.params(i, 2)
    t.want(i, rows >= 0 and ncls >= 1, f"rows, classes = {rows}, {ncls}")
    t.want(i, t.size[logits] == rows * ncls and t.size[targets] == rows and t.size[i] == 1,
           f"sizes (logits {t.size[logits]}, targets {t.size[targets]}, node {t.size[i]}) do "
           f"not fit rows {rows} x classes {ncls}")


ROWS = (
    # softmax along one axis, stable: exp(a - max) / sum; the backward reuses y
    Op("softmax", 1, "block", doc="y = exp(a - max) / sum(exp(a - max)) along the axis",
       fwd=_softmax_fwd, bwd=_softmax_bwd,
       jvp=_softmax_jvp, inline=True, layout="axis",
       traced=Traced(_softmax_value, _softmax_vjp, _softmax_tangent), sparsity=Sparsity("whole"),
       opcode=42),
    # attention's scale, causal mask and softmax in one row: x is (..., T, T), row t of each
    # (T, T) block keeps columns j <= t, y = softmax(c * x) over those and 0 beyond, c > 0.
    # The masked half is never exponentiated. dx_j = c * y_j * (g_j - sum_k g_k y_k), j <= t.
    Op("causal_softmax", 1, "block", doc="softmax(c * a) over j <= t in each (T, T) block",
       fwd=_causal_softmax_fwd, bwd=_causal_softmax_bwd,
       jvp=_causal_softmax_jvp, layout="axis_rows",
       traced=Traced(_causal_softmax_value, _causal_softmax_vjp, _causal_softmax_tangent,
                     imm=(1.0, 0.3)), opcode=43),
    Op("log_softmax", 1, "block", doc="y = a - logsumexp(a) along the axis",
       fwd=_log_softmax_fwd, bwd=_log_softmax_bwd,
       jvp=_log_softmax_jvp, layout="axis",
       traced=Traced(_log_softmax_value, _log_softmax_vjp, _log_softmax_tangent),
       sparsity=Sparsity("whole"), opcode=44),
    # logsumexp over one axis (the output drops the axis), shifted by the line's maximum when
    # it is finite (JAX's jax.nn.logsumexp): an +inf input gives +inf, a line of -inf gives
    # -inf (log 0), NaN propagates. The gradient is exp(a - y); a line of -inf (fully masked)
    # passes none (JAX and torch give NaN there).
    Op("logsumexp", 1, "block", doc="y[o, k] = log sum_j exp(a[o, j, k])",
       fwd=_logsumexp_fwd, bwd=_logsumexp_bwd,
       jvp=_logsumexp_jvp, layout="axis_reduce",
       traced=Traced(_logsumexp_value, _logsumexp_vjp, _logsumexp_tangent),
       sparsity=Sparsity("reduce"), opcode=45),
    # layer norm over the last axis (inner = 1), c = eps: y = (a - mean) / sqrt(var + eps).
    # Backward: da = rs * (g - mean(g) - y * mean(g * y)), rs = 1 / sqrt(var + eps).
    Op("layer_norm", 1, "block", doc="(a - mean) / sqrt(var + eps) over the last axis",
       fwd=_layer_norm_fwd, bwd=_layer_norm_bwd,
       jvp=_layer_norm_jvp, layout="axis_rows",
       traced=Traced(_layer_norm_value, _layer_norm_vjp, _layer_norm_tangent,
                     imm=(1e-5, 0.5)), opcode=46),
    # cross entropy of logits a0 (rows x classes = P[p], P[p+1]) with integer targets in the
    # node a1, fused: c * sum_r (logsumexp(l_r) - l_r[t_r]), c = 1 / rows for the mean.
    # Backward: c * g * (softmax(l_r) - onehot(t_r)).
    Op("cross_entropy", 2, "block", doc="mean_r -log softmax(logits_r)[target_r]",
       fwd=_cross_entropy_fwd, bwd=_cross_entropy_bwd,
       jvp=_cross_entropy_jvp, check=_cross_entropy_check,
       on_trace=OnTrace(_cross_entropy_vjp, _cross_entropy_tangent), appends=("softmax",),
       opcode=47),
)
