"""Block rows that reduce: the n-ary sum, sumsq and inner (BurTorch's fused neuron), sum
and max along an axis, and sum's lanes form.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
from .row import Op, Sparsity, Traced, _always_fits
from .templates import _axis, _sum_lines


def _sum_fwd(oy, c, p, P, off, val):
    acc = 0.0
    for k in range(P[p]):
        ik = P[p + 1 + k]
        for e in range(off[ik], off[ik + 1]):
            acc += val[e]
    val[oy] = c * acc


def _sum_bwd(oy, c, p, P, off, need, grad):
    gc = c * grad[oy]
    for k in range(P[p]):
        ik = P[p + 1 + k]
        if need[ik]:
            for e in range(off[ik], off[ik + 1]):
                grad[e] += gc


def _sum_jvp(oy, c, p, P, off, need, grad):
    acc = 0.0
    for k in range(P[p]):
        ik = P[p + 1 + k]
        if need[ik]:
            for e in range(off[ik], off[ik + 1]):
                acc += grad[e]
    grad[oy] = c * acc


def _sumsq_fwd(oy, c, p, P, off, val):
    acc = 0.0
    for k in range(P[p]):
        ik = P[p + 1 + k]
        for e in range(off[ik], off[ik + 1]):
            acc += val[e] * val[e]
    val[oy] = c * acc


def _sumsq_bwd(oy, c, p, P, off, need, val, grad):
    gc = 2.0 * c * grad[oy]
    for k in range(P[p]):
        ik = P[p + 1 + k]
        if need[ik]:
            for e in range(off[ik], off[ik + 1]):
                grad[e] += gc * val[e]


def _sumsq_jvp(oy, c, p, P, off, need, val, grad):
    acc = 0.0
    for k in range(P[p]):
        ik = P[p + 1 + k]
        if need[ik]:
            for e in range(off[ik], off[ik + 1]):
                acc += val[e] * grad[e]
    grad[oy] = 2.0 * c * acc


def _inner_fwd(i, oy, p, P, off, a0, val):
    m = P[p]
    acc = val[off[a0[i]]] if a0[i] >= 0 else 0.0
    for k in range(m):
        ox = off[P[p + 1 + k]]
        ow = off[P[p + 1 + m + k]]
        for e in range(off[P[p + 1 + k] + 1] - ox):
            acc += val[ox + e] * val[ow + e]
    val[oy] = acc


def _inner_bwd(i, oy, p, P, off, a0, need, val, grad):
    m = P[p]
    gy = grad[oy]
    if a0[i] >= 0 and need[a0[i]]:
        grad[off[a0[i]]] += gy
    for k in range(m):
        ix = P[p + 1 + k]
        iw = P[p + 1 + m + k]
        ox = off[ix]
        ow = off[iw]
        for e in range(off[ix + 1] - ox):
            xe = val[ox + e]
            we = val[ow + e]
            if need[ix]:
                grad[ox + e] += gy * we
            if need[iw]:
                grad[ow + e] += gy * xe


def _inner_jvp(i, oy, p, P, off, a0, need, val, grad):
    m = P[p]
    acc = grad[off[a0[i]]] if a0[i] >= 0 and need[a0[i]] else 0.0
    for k in range(m):
        ix = P[p + 1 + k]
        iw = P[p + 1 + m + k]
        ox = off[ix]
        ow = off[iw]
        for e in range(off[ix + 1] - ox):
            if need[ix]:
                acc += grad[ox + e] * val[ow + e]
            if need[iw]:
                acc += val[ox + e] * grad[ow + e]
    grad[oy] = acc


def _sum_axis_fwd(i, oy, c, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    _sum_lines(outer, m, inner, oa, oy, c, val)


def _sum_axis_bwd(i, oy, c, p, P, off, a0, need, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia] and inner == 1:
        for o in range(outer):
            gk = c * grad[oy + o]
            for j in range(m):
                grad[oa + o * m + j] += gk
    elif need[ia]:
        # line j of block o at a time: unit strides in k (a (16, 1000, 16) reduction's
        # gradient: one pass instead of 256 strided ones); each element gets one add
        for o in range(outer):
            yo = oy + o * inner
            for j in range(m):
                b = oa + (o * m + j) * inner
                for k in range(inner):
                    grad[b + k] += c * grad[yo + k]


def _sum_axis_jvp(i, oy, c, p, P, off, a0, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    _sum_lines(outer, m, inner, oa, oy, c, grad)


def _max_axis_fwd(i, oy, c, p, P, off, a0, val):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            best = c * val[oa + o * m * inner + k]
            for j in range(1, m):
                v = c * val[oa + (o * m + j) * inner + k]
                if v > best or v != v:
                    best = v
                    if v != v:
                        break
            val[oy + o * inner + k] = c * best


def _max_axis_bwd(i, oy, p, P, off, a0, need, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        for o in range(outer):
            for k in range(inner):
                y = val[oy + o * inner + k]
                ties = 0
                for j in range(m):
                    if val[oa + (o * m + j) * inner + k] == y:
                        ties += 1
                # g / ties to each maximum; a NaN line has no element equal to its NaN maximum,
                # so g / 0 * 0 gives every element NaN, as JAX and torch
                share = grad[oy + o * inner + k] / ties
                for j in range(m):
                    q = oa + (o * m + j) * inner + k
                    grad[q] += share * (1.0 if val[q] == y else 0.0)


def _max_axis_jvp(i, oy, p, P, off, a0, val, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            y = val[oy + o * inner + k]
            ties = 0
            acc = 0.0
            for j in range(m):
                q = oa + (o * m + j) * inner + k
                if val[q] == y:
                    ties += 1
                    acc += grad[q]
            # the tangent of the maxima, averaged (JAX's balanced rule); a NaN line: 0 / 0
            grad[oy + o * inner + k] = acc / ties


def _sum_lanes_fwd(oy, c, p, P, off, val, lanes):
    L4 = lanes - lanes % 4
    for s in range(0, L4, 4):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for k in range(P[p]):
            ik = P[p + 1 + k]
            for e in range(off[ik] + s, off[ik + 1], lanes):
                s0 += val[e]
                s1 += val[e + 1]
                s2 += val[e + 2]
                s3 += val[e + 3]
        val[oy + s] = c * s0
        val[oy + s + 1] = c * s1
        val[oy + s + 2] = c * s2
        val[oy + s + 3] = c * s3
    for s in range(L4, lanes):
        s0 = 0.0
        for k in range(P[p]):
            ik = P[p + 1 + k]
            for e in range(off[ik] + s, off[ik + 1], lanes):
                s0 += val[e]
        val[oy + s] = c * s0


def _sum_lanes_bwd(oy, c, p, P, off, need, grad, lanes):
    for k in range(P[p]):
        ik = P[p + 1 + k]
        if need[ik]:
            for e in range(off[ik], off[ik + 1], lanes):
                for s in range(lanes):
                    grad[e + s] += c * grad[oy + s]


# sum_axis for L samples side by side (a wide tape, burnumba/ir/lanes.py): element (o, j, k)
# of sample s at oa + ((o * m + j) * inner + k) * L + s. Each sample's line is summed from
# 0.0 in j order in a float64 local and scaled by c at the end, as _sum_lines sums it for
# one sample, so every sample gets its own bits; four samples' lines at a time.
def _sum_axis_lanes_fwd(i, oy, c, p, P, off, a0, val, lanes):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    L4 = lanes - lanes % 4
    for o in range(outer):
        for k in range(inner):
            y = oy + (o * inner + k) * lanes
            for s in range(0, L4, 4):
                s0 = 0.0
                s1 = 0.0
                s2 = 0.0
                s3 = 0.0
                for j in range(m):
                    b = oa + ((o * m + j) * inner + k) * lanes + s
                    s0 += val[b]
                    s1 += val[b + 1]
                    s2 += val[b + 2]
                    s3 += val[b + 3]
                val[y + s] = c * s0
                val[y + s + 1] = c * s1
                val[y + s + 2] = c * s2
                val[y + s + 3] = c * s3
            for s in range(L4, lanes):
                acc = 0.0
                for j in range(m):
                    acc += val[oa + ((o * m + j) * inner + k) * lanes + s]
                val[y + s] = c * acc


def _sum_axis_lanes_bwd(i, oy, c, p, P, off, a0, need, grad, lanes):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        for o in range(outer):
            for j in range(m):
                for k in range(inner):
                    y = oy + (o * inner + k) * lanes
                    b = oa + ((o * m + j) * inner + k) * lanes
                    for s in range(lanes):
                        grad[b + s] += c * grad[y + s]


# -- sum, sumsq and inner in numpy's names (``Traced``), layouts "listed" and "inner": the
# operands are the list xs of the nodes named in P (any shapes), y and g scalars; the rules
# take and give lists (a vjp computes the cotangents ``need``, a list of bools, asks for).
def _sum_value(np, xs, c):
    return c * np.sum([np.sum(x) for x in xs])


def _sum_vjp(np, xs, y, g, c, need=None):
    return [np.broadcast_to(c * g, x.shape) for x in xs]     # every element gets c * g


def _sum_tangent(np, xs, y, ts, c):
    return c * np.sum([np.sum(t) for t in ts if t is not None])


def _sum_batched(np, xs, y, ts, c):
    # ts: (B,) + each operand's shape, or None; one sum per operand over its B rows
    terms = [np.sum(np.reshape(t, (t.shape[0], -1)), axis=1) for t in ts if t is not None]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return c * total


def _sumsq_value(np, xs, c):
    return c * np.sum([np.sum(x * x) for x in xs])


def _sumsq_vjp(np, xs, y, g, c, need=None):
    return [2.0 * c * g * x for x in xs]


def _sumsq_tangent(np, xs, y, ts, c):
    return 2.0 * c * np.sum([np.sum(x * t) for x, t in zip(xs, ts) if t is not None])


def _inner_value(np, xs, c):
    # xs = x_1..x_m, w_1..w_m, then the bias if the node has one
    m = len(xs) // 2
    y = np.sum([np.sum(x * w) for x, w in zip(xs[:m], xs[m:2 * m])])
    return y + np.reshape(xs[2 * m], ()) if len(xs) > 2 * m else y


def _inner_vjp(np, xs, y, g, c, need=None):
    m = len(xs) // 2
    need = need or [True] * len(xs)
    out = [g * w if need[k] else None for k, w in enumerate(xs[m:2 * m])]     # d x_k
    out += [g * x if need[m + k] else None for k, x in enumerate(xs[:m])]     # d w_k
    return out + [g] * (len(xs) - 2 * m)                                      # d bias


def _inner_tangent(np, xs, y, ts, c):
    m = len(xs) // 2
    terms = []
    for k in range(m):
        if ts[k] is not None:
            terms.append(np.sum(ts[k] * xs[m + k]))
        if ts[m + k] is not None:
            terms.append(np.sum(xs[k] * ts[m + k]))
    if len(xs) > 2 * m and ts[2 * m] is not None:
        terms.append(ts[2 * m])
    return np.sum(terms)


# -- sum_axis and max_axis in numpy's names (``Traced``): a is (outer, m, inner), y and g
# (outer, 1, inner) (layout "axis_reduce"). Their reference and their derivative as traced ops.
def _sum_axis_value(np, a, c):
    return c * np.sum(a, axis=1, keepdims=True)


def _sum_axis_vjp(np, a, y, g, c):
    return np.broadcast_to(c * g, a.shape)             # every element gets c * g


def _sum_axis_tangent(np, a, y, t, c):
    return c * np.sum(t, axis=1, keepdims=True)


def _sum_axis_batched(np, a, y, t, c):
    return c * np.sum(t, axis=2, keepdims=True)        # t: (B, outer, m, inner), one sum


def _max_mask(np, a, y):
    """The maxima of each line along the axis (1 where a equals y, else 0) and how many
    tie there."""
    mask = np.equal(a, y)
    return mask, np.sum(mask, axis=1, keepdims=True)


def _max_axis_value(np, a, c):
    return c * np.max(c * a, axis=1, keepdims=True)


def _max_axis_vjp(np, a, y, g, c):
    mask, ties = _max_mask(np, a, y)
    return g * mask / ties                             # split evenly among tied maxima


def _max_axis_tangent(np, a, y, t, c):
    mask, ties = _max_mask(np, a, y)
    return np.sum(t * mask, axis=1, keepdims=True) / ties


# -- the tape-file check of each row here whose operands no layout kind describes
# (``Op.check``, which burnumba/ir/tapefile.py runs on every node of a file before it can
# run): ``t`` is its checker (node, none, params, ids, tiles, want; size, off, P, pp).
def _inner_check(t, i):
    """sum_k x_k . w_k (+ the bias a0): P = m, x_1..x_m, w_1..w_m, pairs of equal size."""
    if t.a0[i] != -1:
        bias = t.node(i, "a0 (the bias)", t.a0[i])
        t.want(i, t.size[bias] >= 1, f"its bias %{bias} is empty")
    t.none(i, "a1", t.a1[i])
    t.want(i, t.size[i] == 1, f"has {t.size[i]} elements; inner has one")
    (m,) = t.params(i, 1)
    ids = t.ids(i, "a listed operand", t.params(i, 1 + 2 * m)[1:])
    for x, w in zip(ids[:m], ids[m:]):
        t.want(i, t.size[x] == t.size[w], f"operands %{x} and %{w} differ in size")


ROWS = (
    # -- fused n-ary reductions over a list of nodes P[p+1 : p+1+m], m = P[p]; each node may
    # be a scalar or a tensor. sum is scaled by c: c = 1 for sum, 1 / count for mean.
    Op("sum", -1, "block", doc="c * (sum of every element of the listed nodes)",
       fwd=_sum_fwd, bwd=_sum_bwd,
       jvp=_sum_jvp, inline=True, layout="listed", sparsity=Sparsity("listed", "linear"),
       traced=Traced(_sum_value, _sum_vjp, _sum_tangent, _sum_batched, imm=(1.0, 0.25)), opcode=37),
    Op("sumsq", -1, "block", doc="c * (sum of squares of every element of the listed nodes)",
       fwd=_sumsq_fwd, bwd=_sumsq_bwd,
       jvp=_sumsq_jvp, layout="listed", sparsity=Sparsity("listed", "squares"),
       traced=Traced(_sumsq_value, _sumsq_vjp, _sumsq_tangent, imm=(1.0, 0.25)), opcode=38),
    # inner product of two equally shaped lists of nodes, x = P[p+1 : p+1+m] and
    # w = P[p+1+m : p+1+2m], plus an optional bias node a0[i] (-1 for none): BurTorch's
    # fused neuron. The same node may appear in both lists (x . x).
    Op("inner", -1, "block", doc="sum_k x_k . w_k (+ bias)",
       fwd=_inner_fwd, bwd=_inner_bwd,
       jvp=_inner_jvp, layout="inner", check=_inner_check,
       sparsity=Sparsity("inner", "bilinear"),
       traced=Traced(_inner_value, _inner_vjp, _inner_tangent), opcode=39),

    # -- tensor rows ---------------------------------------------------------------------
    # sum over one axis, scaled by c (c = 1 / m for mean)
    Op("sum_axis", 1, "block", doc="y[o, k] = c * sum_j a[o, j, k]", fwd=_sum_axis_fwd,
       bwd=_sum_axis_bwd,
       jvp=_sum_axis_jvp, layout="axis_reduce", sparsity=Sparsity("reduce", "linear"),
       traced=Traced(_sum_axis_value, _sum_axis_vjp, _sum_axis_tangent, _sum_axis_batched,
                     imm=(1.0, 0.25)), opcode=40),
    # max over one axis (c = 1), or min (c = -1: y = -max(-a)). NaN propagates, as numpy.
    # The gradient is split evenly among tied maxima, as jax and autograd do.
    Op("max_axis", 1, "block", doc="y[o, k] = c * max_j (c * a[o, j, k])", fwd=_max_axis_fwd,
       bwd=_max_axis_bwd,
       jvp=_max_axis_jvp, layout="axis_reduce", sparsity=Sparsity("reduce"),
       traced=Traced(_max_axis_value, _max_axis_vjp, _max_axis_tangent, imm=(1.0, -1.0)),
       opcode=41),
    Op("sum_lanes", -1, "block", doc="sum for L samples side by side",
       fwd=_sum_lanes_fwd, bwd=_sum_lanes_bwd, lanes_of="sum", fits=_always_fits,
       sparsity=Sparsity("dense", "linear", exact=False), opcode=100),
    Op("sum_axis_lanes", 1, "block", doc="sum_axis for L samples side by side",
       fwd=_sum_axis_lanes_fwd, bwd=_sum_axis_lanes_bwd, lanes_of="sum_axis",
       fits=_always_fits, sparsity=Sparsity("dense", "linear", exact=False), opcode=129),
)
