"""Block statements that rows of several families share (``@template``): the (outer, m,
inner) view of an axis row, the largest element and sums of four rows at once, and the
product sums of small matmuls. A rule calls one as ``names = _template(args)``; the
generator pastes its body in place of the call (``rules.py``).
"""
from .rules import template


# -- templates: statements that several block rules share. A rule calls one as
# ``names = _template(args)`` with the template's own argument and result names; the
# generator pastes the template's body in place of the call (kernels/rules.py), so compiled
# code has no call, and Python can still call it as a function.
@template
def _axis(i, p, P, a0, off):
    """The (outer, m, inner) view of an axis row's operand: the reduced (or normalised)
    axis has length m; element (o, j, k) sits at oa + (o * m + j) * inner + k."""
    outer = P[p]
    m = P[p + 1]
    inner = P[p + 2]
    ia = a0[i]
    oa = off[ia]
    return outer, m, inner, ia, oa


@template
def _max_along(o, k, m, inner, oa, val):
    """The largest element of lane (o, k) along the axis, for the stable softmax family."""
    mx = val[oa + o * m * inner + k]
    for j in range(1, m):
        mx = max(mx, val[oa + (o * m + j) * inner + k])
    return mx


# The sums of an axis row, y[o, k] = c * sum_j a[o, j, k], with each line summed in j order
# (0.0 + a[o, 0, k] + a[o, 1, k] + ..., then times c) in a float64 local, as one accumulator
# per line sums it (float32 tapes too: a local 0.0 is a double; an accumulator in the
# float32 arena would round after every add). Several lines at a time keep independent
# chains of adds in flight: with inner > 1, eight neighbouring k of a block (eight adjacent
# values per j, instead of a strided pass per k: a (16, 1000, 16) reduction, the Hessian of
# a k-means objective pushed forward along 16 directions); with inner = 1, four neighbouring
# rows (_sum4).
@template
def _sum_lines(outer, m, inner, oa, oy, c, val):
    """y = c * (the sums along the axis) of the (outer, m, inner) operand at oa, into oy."""
    if inner == 1:
        o4 = outer - outer % 4
        for o in range(0, o4, 4):
            b0 = oa + o * m
            s0, s1, s2, s3 = _sum4(b0, m, val)
            val[oy + o] = c * s0
            val[oy + o + 1] = c * s1
            val[oy + o + 2] = c * s2
            val[oy + o + 3] = c * s3
        for o in range(o4, outer):
            acc = 0.0
            for j in range(m):
                acc += val[oa + o * m + j]
            val[oy + o] = c * acc
    else:
        k8 = inner - inner % 8
        for o in range(outer):
            b0 = oa + o * m * inner
            yo = oy + o * inner
            for k in range(0, k8, 8):
                s0 = 0.0
                s1 = 0.0
                s2 = 0.0
                s3 = 0.0
                s4 = 0.0
                s5 = 0.0
                s6 = 0.0
                s7 = 0.0
                for j in range(m):
                    b = b0 + j * inner + k
                    s0 += val[b]
                    s1 += val[b + 1]
                    s2 += val[b + 2]
                    s3 += val[b + 3]
                    s4 += val[b + 4]
                    s5 += val[b + 5]
                    s6 += val[b + 6]
                    s7 += val[b + 7]
                val[yo + k] = c * s0
                val[yo + k + 1] = c * s1
                val[yo + k + 2] = c * s2
                val[yo + k + 3] = c * s3
                val[yo + k + 4] = c * s4
                val[yo + k + 5] = c * s5
                val[yo + k + 6] = c * s6
                val[yo + k + 7] = c * s7
            for k in range(k8, inner):
                acc = 0.0
                for j in range(m):
                    acc += val[b0 + j * inner + k]
                val[yo + k] = c * acc


# Four rows at once (an axis row's last-axis case, inner = 1): each row's reduction is a
# chain of dependent operations, so one row at a time waits on every comparison or add
# (softmax's 3,072 rows of 8 in the GPT block: 91 us forward, of which the exponentials
# 20). Four chains side by side keep the FPU busy. Each row's operations, and so its bits,
# are the one-row loop's, in the same order.
@template
def _max4(b0, m, val):
    """The largest element of each of the four rows of m values from b0."""
    m0 = val[b0]
    m1 = val[b0 + m]
    m2 = val[b0 + 2 * m]
    m3 = val[b0 + 3 * m]
    for j in range(1, m):
        m0 = max(m0, val[b0 + j])
        m1 = max(m1, val[b0 + m + j])
        m2 = max(m2, val[b0 + 2 * m + j])
        m3 = max(m3, val[b0 + 3 * m + j])
    return m0, m1, m2, m3


@template
def _sum4(b0, m, val):
    """The sums, in j order, of the four rows of m values from b0."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for j in range(m):
        s0 += val[b0 + j]
        s1 += val[b0 + m + j]
        s2 += val[b0 + 2 * m + j]
        s3 += val[b0 + 3 * m + j]
    return s0, s1, s2, s3


@template
def _dot4(b0, m, u, w):
    """sum_j u[b + j] * w[b + j], in j order, for the four rows b = b0, b0 + m, ..."""
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    d3 = 0.0
    for j in range(m):
        d0 += u[b0 + j] * w[b0 + j]
        d1 += u[b0 + m + j] * w[b0 + m + j]
        d2 += u[b0 + 2 * m + j] * w[b0 + 2 * m + j]
        d3 += u[b0 + 3 * m + j] * w[b0 + 3 * m + j]
    return d0, d1, d2, d3


@template
def _four_sums(T, u, ua, us, w, wa, ws, wl):
    """Four sums kept in registers: s_l = sum over t < T of u[ua + t us] w[wa + t ws + l wl],
    l = 0..3, each in t order (matmul's small products, four output columns at a time; a
    loop that adds into the output in memory stores and reloads it at every t, since
    nothing tells LLVM that the output and the operands do not overlap)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    for t in range(T):
        x = u[ua + t * us]
        q = wa + t * ws
        s0 += x * w[q]
        s1 += x * w[q + wl]
        s2 += x * w[q + 2 * wl]
        s3 += x * w[q + 3 * wl]
    return s0, s1, s2, s3


@template
def _eight_sums(T, u, ua, ub, us, w, wa, ws, wl):
    """_four_sums for two u vectors at once (from ua and ub) against the same four w: s0 ..
    s3 and t0 .. t3, each in t order, so each has the bits _four_sums gives it. Eight
    chains of adds hide each add's latency that four leave exposed, and the w loads are
    shared (the GPT block's 384 per-head 8x4 by 4x8 products, backward: see matmul)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    t3 = 0.0
    for t in range(T):
        x = u[ua + t * us]
        z = u[ub + t * us]
        q = wa + t * ws
        w0 = w[q]
        w1 = w[q + wl]
        w2 = w[q + 2 * wl]
        w3 = w[q + 3 * wl]
        s0 += x * w0
        s1 += x * w1
        s2 += x * w2
        s3 += x * w3
        t0 += z * w0
        t1 += z * w1
        t2 += z * w2
        t3 += z * w3
    return s0, s1, s2, s3, t0, t1, t2, t3
