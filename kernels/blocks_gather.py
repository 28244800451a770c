"""Block rows that move values: where, gather (indexing, slicing, transposes, stacking),
take (embedding lookup), scatter and take_add (their adjoints), and gather's lanes form.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
import math

import numpy

from .layout import ERR_INDEX  # the block rules' error codes
from .row import OnTrace, Op, Sparsity, Traced, _always_fits
from .rules import template


@template
def _where(i, p, P, a0, a1, off):
    """where's three operands (cond is the node P[p]) with their sizes, and a wrapping
    counter each: an operand is as large as the output, a scalar, or a tile repeated."""
    ic = P[p]
    oc = off[ic]
    nc = off[ic + 1] - oc
    ia = a0[i]
    oa = off[ia]
    na = off[ia + 1] - oa
    ib = a1[i]
    ob = off[ib]
    nb = off[ib + 1] - ob
    kc = 0
    ka = 0
    kb = 0
    return ic, oc, nc, ia, oa, na, ib, ob, nb, kc, ka, kb


# -- the block rows' rules (statements over the sweep's locals: kernels/rules.py), in the
# order of the table


def _where_fwd(i, oy, ny, p, P, off, a0, a1, val):
    ic, oc, nc, ia, oa, na, ib, ob, nb, kc, ka, kb = _where(i, p, P, a0, a1, off)
    if nc > 0 and ny % nc == 0 and (na == ny or na == 1) and (nb == ny or nb == 1):
        # the mask a tile of the output (masked_fill's (T, T) under (B, H, T, T)), each
        # choice whole or one value: plain indices instead of three wrapping counters (the
        # GPT block's 64 x 6 x 8 x 8 scores in bn.profile: 14.9 against 23.5 us, and the
        # backward 6.0 against 27.2 us); the same choices
        sa = 1 if na == ny else 0
        sb = 1 if nb == ny else 0
        for t in range(0, ny, nc):
            for j in range(nc):
                q = t + j
                val[oy + q] = val[oa + q * sa] if val[oc + j] != 0.0 else val[ob + q * sb]
    else:
        for j in range(ny):
            val[oy + j] = val[oa + ka] if val[oc + kc] != 0.0 else val[ob + kb]
            kc = kc + 1 if kc + 1 < nc else 0
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0


def _where_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ic, oc, nc, ia, oa, na, ib, ob, nb, kc, ka, kb = _where(i, p, P, a0, a1, off)
    if nc > 0 and ny % nc == 0 and (na == ny or na == 1) and (nb == ny or nb == 1):
        # as in the forward: the same additions in the same order, without the counters
        sa = 1 if na == ny else 0
        sb = 1 if nb == ny else 0
        need_a = need[ia]
        need_b = need[ib]
        for t in range(0, ny, nc):
            for j in range(nc):
                q = t + j
                if val[oc + j] != 0.0:
                    if need_a:
                        grad[oa + q * sa] += grad[oy + q]
                elif need_b:
                    grad[ob + q * sb] += grad[oy + q]
    else:
        for j in range(ny):
            if val[oc + kc] != 0.0:
                if need[ia]:
                    grad[oa + ka] += grad[oy + j]
            elif need[ib]:
                grad[ob + kb] += grad[oy + j]
            kc = kc + 1 if kc + 1 < nc else 0
            ka = ka + 1 if ka + 1 < na else 0
            kb = kb + 1 if kb + 1 < nb else 0


def _where_jvp(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    ic, oc, nc, ia, oa, na, ib, ob, nb, kc, ka, kb = _where(i, p, P, a0, a1, off)
    for j in range(ny):
        if val[oc + kc] != 0.0:
            grad[oy + j] = grad[oa + ka] if need[ia] else 0.0
        else:
            grad[oy + j] = grad[ob + kb] if need[ib] else 0.0
        kc = kc + 1 if kc + 1 < nc else 0
        ka = ka + 1 if ka + 1 < na else 0
        kb = kb + 1 if kb + 1 < nb else 0


# gather and scatter: c = 1 marks positions that are one run (a slice x[1:], a copy), and
# c = 2 (gather) one position repeated (a broadcast scalar): the loops then read or write
# consecutive elements, which vectorize, instead of one indexed access each (Rosenbrock's
# hvp: its slices, a broadcast and their adjoints took half the sweep). The same values and
# the same additions in the same order as the indexed loops.
@template
def _gathered(oy, ny, c, p, P, u):
    """u[oy + j] = u[P[p + j]]: gather's values forward, and (a copy maps tangents the same
    way) its tangents in the tangent sweep."""
    if c == 1.0:
        s = P[p]
        for j in range(ny):
            u[oy + j] = u[s + j]
    elif c == 2.0:
        v = u[P[p]]
        for j in range(ny):
            u[oy + j] = v
    else:
        for j in range(ny):
            u[oy + j] = u[P[p + j]]
    return oy


def _gather_fwd(oy, ny, c, p, P, val):
    oy = _gathered(oy, ny, c, p, P, val)


def _gather_bwd(oy, ny, c, p, P, grad):
    if c == 1.0:
        s = P[p]
        for j in range(ny):
            grad[s + j] += grad[oy + j]
    elif c == 2.0:
        s = P[p]
        acc = grad[s]
        for j in range(ny):
            acc += grad[oy + j]
        grad[s] = acc
    else:
        for j in range(ny):
            grad[P[p + j]] += grad[oy + j]


def _gather_jvp(oy, ny, c, p, P, grad):
    oy = _gathered(oy, ny, c, p, P, grad)


def _take_fwd(i, oy, ny, p, P, off, a0, a1, val):
    nrows = P[p]
    width = P[p + 1]
    oa = off[a0[i]]
    ot = off[a1[i]]
    for k in range(ny // width if width > 0 else 0):
        t = int(val[ot + k])
        if t < 0:
            t += nrows
        if t < 0 or t >= nrows:
            return ERR_INDEX
        for e in range(width):
            val[oy + k * width + e] = val[oa + t * width + e]


def _take_bwd(i, oy, ny, p, P, off, a0, a1, need, val, grad):
    nrows = P[p]
    width = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    ot = off[a1[i]]
    if need[ia]:
        for k in range(ny // width if width > 0 else 0):
            t = int(val[ot + k])
            if t < 0:
                t += nrows
            for e in range(width):
                grad[oa + t * width + e] += grad[oy + k * width + e]


def _take_jvp(i, oy, ny, p, P, off, a0, a1, val, grad):
    nrows = P[p]
    width = P[p + 1]
    oa = off[a0[i]]
    ot = off[a1[i]]
    for k in range(ny // width if width > 0 else 0):
        t = int(val[ot + k])
        if t < 0:
            t += nrows
        if t < 0 or t >= nrows:
            return ERR_INDEX
        for e in range(width):
            grad[oy + k * width + e] = grad[oa + t * width + e]


@template
def _scattered(i, oy, ny, c, p, P, off, a0, u):
    """u[oy:oy + ny] = 0, then u[oy + P[p + j]] += u[oa + j] for a's elements: scatter's
    values forward, and its tangents in the tangent sweep. One run (c = 1) adds 0 + a, as
    the indexed loop does (-0.0 lands as +0.0 in both)."""
    ia = a0[i]
    oa = off[ia]
    for k in range(ny):
        u[oy + k] = 0.0
    if c == 1.0:
        s = oy + P[p]
        for j in range(off[ia + 1] - oa):
            u[s + j] = 0.0 + u[oa + j]
    else:
        for j in range(off[ia + 1] - oa):
            u[oy + P[p + j]] += u[oa + j]


def _scatter_fwd(i, oy, ny, c, p, P, off, a0, val):
    _scattered(i, oy, ny, c, p, P, off, a0, val)


def _scatter_bwd(i, oy, c, p, P, off, a0, need, grad):
    ia = a0[i]
    oa = off[ia]
    if need[ia]:
        if c == 1.0:
            s = oy + P[p]
            for j in range(off[ia + 1] - oa):
                grad[oa + j] += grad[s + j]
        else:
            for j in range(off[ia + 1] - oa):
                grad[oa + j] += grad[oy + P[p + j]]


def _scatter_jvp(i, oy, ny, c, p, P, off, a0, grad):
    _scattered(i, oy, ny, c, p, P, off, a0, grad)


# scatter for L samples side by side (a wide tape): element j of sample s at j * L + s, so
# position q of the output holds its L samples at oy + q * L. Each sample's adds are the
# one-sample loop's, in the same order (c = 1: one run, 0 + a; else y[P[p + j]] += a[j]).
def _scatter_lanes_fwd(i, oy, ny, c, p, P, off, a0, val, lanes):
    ia = a0[i]
    oa = off[ia]
    for k in range(ny):
        val[oy + k] = 0.0
    if c == 1.0:
        y = oy + P[p] * lanes
        for j in range(off[ia + 1] - oa):
            val[y + j] = 0.0 + val[oa + j]
    else:
        for j in range((off[ia + 1] - oa) // lanes):
            y = oy + P[p + j] * lanes
            b = oa + j * lanes
            for s in range(lanes):
                val[y + s] += val[b + s]


def _scatter_lanes_bwd(i, oy, c, p, P, off, a0, need, grad, lanes):
    ia = a0[i]
    oa = off[ia]
    if need[ia]:
        if c == 1.0:
            y = oy + P[p] * lanes
            for j in range(off[ia + 1] - oa):
                grad[oa + j] += grad[y + j]
        else:
            for j in range((off[ia + 1] - oa) // lanes):
                y = oy + P[p + j] * lanes
                b = oa + j * lanes
                for s in range(lanes):
                    grad[b + s] += grad[y + s]


def _take_add_fwd(i, oy, ny, p, P, off, a0, a1, val):
    nrows = P[p]
    width = P[p + 1]
    oa = off[a0[i]]
    ot = off[a1[i]]
    for k in range(ny):
        val[oy + k] = 0.0
    for k in range((off[a0[i] + 1] - oa) // width if width > 0 else 0):
        t = int(val[ot + k])
        if t < 0:
            t += nrows
        if t < 0 or t >= nrows:
            return ERR_INDEX
        for e in range(width):
            val[oy + t * width + e] += val[oa + k * width + e]


def _take_add_bwd(i, oy, p, P, off, a0, a1, need, val, grad):
    nrows = P[p]
    width = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    ot = off[a1[i]]
    if need[ia]:
        for k in range((off[ia + 1] - oa) // width if width > 0 else 0):
            t = int(val[ot + k])
            if t < 0:
                t += nrows
            for e in range(width):
                grad[oa + k * width + e] += grad[oy + t * width + e]


def _take_add_jvp(i, oy, ny, p, P, off, a0, a1, val, grad):
    nrows = P[p]
    width = P[p + 1]
    oa = off[a0[i]]
    ot = off[a1[i]]
    for k in range(ny):
        grad[oy + k] = 0.0
    for k in range((off[a0[i] + 1] - oa) // width if width > 0 else 0):
        t = int(val[ot + k])
        if t < 0:
            t += nrows
        if t < 0 or t >= nrows:
            return ERR_INDEX
        for e in range(width):
            grad[oy + t * width + e] += grad[oa + k * width + e]


# gather's and sum's lanes forms. gather's P holds positions of a tape of one sample: lane s
# of position q is at q * L + s. A repeated position's gradients are added in j order into
# each lane, as _gather_bwd adds them (into its running sum, which starts at the slot's value).
def _gather_lanes_fwd(oy, ny, c, p, P, val, lanes):
    for j in range(ny // lanes):
        q = (P[p] + j if c == 1.0 else (P[p] if c == 2.0 else P[p + j])) * lanes
        for s in range(lanes):
            val[oy + j * lanes + s] = val[q + s]


def _gather_lanes_bwd(oy, ny, c, p, P, grad, lanes):
    for j in range(ny // lanes):
        q = (P[p] + j if c == 1.0 else (P[p] if c == 2.0 else P[p + j])) * lanes
        for s in range(lanes):
            grad[q + s] += grad[oy + j * lanes + s]


# -- where in numpy's names (``Traced``), layout "tiles": cond, a and b are each the output's
# shape, a scalar or its trailing axes (a tile repeated over it, as the kernel reads them),
# y and g the output's shape. No cotangent for cond (a mask).
def _untile(np, v, shape):
    """A cotangent of the output's shape summed back to a tile of it."""
    if v.shape == tuple(shape):
        return v
    n = math.prod(shape)
    if n == v.size:                              # the same elements
        return np.reshape(v, shape)
    return np.reshape(np.sum(np.reshape(v, (-1, n)), axis=0), shape)


def _where_value(np, cond, a, b, c):
    # the tiles made full first, by a product with ones (exact, -0.0 too): autograd's where
    # does not sum a cotangent back to a broadcast operand, its multiply does
    ones = numpy.ones(numpy.broadcast_shapes(numpy.shape(cond), a.shape, b.shape))
    return np.where(cond, a * ones, b * ones)


def _where_vjp(np, cond, a, b, y, g, c, need=(False, True, True)):
    da = _untile(np, np.where(cond, g, 0.0), a.shape) if need[1] else None
    db = _untile(np, np.where(cond, 0.0, g), b.shape) if need[2] else None
    return None, da, db


def _where_tangent(np, cond, a, b, y, tcond, ta, tb, c):
    out = np.where(cond, 0.0 if ta is None else ta, 0.0 if tb is None else tb)
    return np.broadcast_to(out, y.shape)


# -- gather, scatter, take and take_add as traced ops (``OnTrace``): their rules read arena
# positions, and take's and take_add's are each other's rows, which have no numpy name. ``t``
# is the trace (burnumba/derive/traced.py: Trace), ``np`` burnumba.numpy. scatter, take and
# take_add append a node of their row (the tests make the adjoint rows so).
def scatter(t, a, positions, shape):
    """zeros(shape) with a's elements added at the flat ``positions`` (gather's adjoint)."""
    return t.append("scatter", shape, a, params=numpy.asarray(positions).reshape(-1))


def take(t, table, idx):
    """table[idx] for the integer node idx of the trace (the take row, whose index data was
    checked when the trace first met it)."""
    width = math.prod(table.shape[1:])
    shape = tuple(idx.shape) + tuple(table.shape[1:])
    return t.append("take", shape, table, idx, params=[table.shape[0], width])


def take_add(t, a, idx, nrows):
    """zeros((nrows,) + a.shape[1:]) with a's rows added at rows ``idx`` (take's adjoint);
    ``idx`` is integer data of the trace."""
    width = math.prod(a.shape[1:])
    shape = (int(nrows),) + tuple(a.shape[1:])
    return t.append("take_add", shape, a, idx, params=[int(nrows), width])


def _take_vjp(np, t, i, g, need=None):
    nrows, width = t.params(i)[:2]
    k = math.prod(t.shapes[t.a1[i]])
    gt = take_add(t, np.reshape(g, (k, width)), t.var(t.a1[i]), nrows)
    return [(t.a0[i], np.reshape(gt, t.shapes[t.a0[i]]))]


def _take_tangent(np, t, i, tangent):
    nrows, width = t.params(i)[:2]
    ta = np.reshape(tangent(t.a0[i]), (nrows, width))
    return np.reshape(take(t, ta, t.var(t.a1[i])), t.shapes[i])


def _take_add_vjp(np, t, i, g, need=None):
    nrows, width = t.params(i)[:2]
    gg = take(t, np.reshape(g, (nrows, width)), t.var(t.a1[i]))
    return [(t.a0[i], np.reshape(gg, t.shapes[t.a0[i]]))]


def _take_add_tangent(np, t, i, tangent):
    nrows, width = t.params(i)[:2]
    k = math.prod(t.shapes[t.a1[i]])
    ta = np.reshape(tangent(t.a0[i]), (k, width))
    return np.reshape(take_add(t, ta, t.var(t.a1[i]), nrows), t.shapes[i])


def _gathered_from(t, i):
    """Gather node i's positions, the node each falls in, and the nodes' offsets."""
    size = math.prod(t.shapes[i])
    positions = numpy.asarray(t.params(i)[:size])
    return positions, t.sources(positions), t.offsets()


def _gather_vjp(np, t, i, g, need=None):
    """Each source node gets the cotangent elements of the positions it owns, scattered."""
    positions, owner, off = _gathered_from(t, i)
    gpos = g.positions().reshape(-1)
    out = []
    for s in numpy.unique(owner):
        js = numpy.flatnonzero(owner == s)
        part = t.gather([g], gpos[js], (len(js),))
        out.append((int(s), scatter(t, part, positions[js] - off[s], t.shapes[s])))
    return out


def _gather_tangent(np, t, i, tangent):
    """The gather of the sources' tangents (a zero constant for a source without one)."""
    positions, owner, off = _gathered_from(t, i)
    picked = numpy.empty(len(positions), dtype=numpy.int64)
    used = []
    for s in numpy.unique(owner):
        ts = tangent(int(s))
        if ts is None:
            ts = t.const(numpy.zeros(t.shapes[s])) if t.shapes[s] else t.const(0.0)
        used.append(ts)
        js = numpy.flatnonzero(owner == s)
        picked[js] = ts.positions().reshape(-1)[positions[js] - off[s]]
    return t.gather(used, picked, t.shapes[i])


def _gather_batched(np, t, i, tangent, B, identity=()):
    """One gather of the sources' batched tangents: direction k's element j is read from
    row k of its source's tangent."""
    positions, owner, off = _gathered_from(t, i)
    picked = numpy.empty((B, len(positions)), dtype=numpy.int64)
    used = []
    for s in numpy.unique(owner):
        ts = tangent(int(s))
        if ts is None:
            ts = t.const(numpy.zeros((B,) + t.shapes[s]))
        used.append(ts)
        js = numpy.flatnonzero(owner == s)
        rows = ts.positions().reshape(B, -1)
        picked[:, js] = rows[:, positions[js] - off[s]]
    return t.gather(used, picked.reshape(-1), (B,) + t.shapes[i])


def _scatter_vjp(np, t, i, g, need=None):
    n = math.prod(t.shapes[t.a0[i]])
    positions = numpy.asarray(t.params(i)[:n])
    return [(t.a0[i], t.gather([g], g.positions().reshape(-1)[positions], t.shapes[t.a0[i]]))]


def _scatter_tangent(np, t, i, tangent):
    n = math.prod(t.shapes[t.a0[i]])
    return scatter(t, tangent(t.a0[i]), numpy.asarray(t.params(i)[:n]), t.shapes[i])


# -- the tape-file check of each row here whose operands no layout kind describes
# (``Op.check``, which burnumba/ir/tapefile.py runs on every node of a file before it can
# run): ``t`` is its checker (node, none, params, ids, tiles, want; size, off, P, pp).
def _where_check(t, i):
    """cond = the node P[p], a0 and a1: each tiles the node."""
    (c,) = t.params(i, 1)
    for k in (t.node(i, "P[pp] (the condition)", c), t.node(i, "a0", t.a0[i]),
              t.node(i, "a1", t.a1[i])):
        t.tiles(i, k)


def _gather_check(t, i):
    """P[p:p+ny] are positions in val, all before this node's own slice."""
    if t.a0[i] != -1:
        t.node(i, "a0", t.a0[i])
    t.none(i, "a1", t.a1[i])
    ny = t.size[i]
    if ny:
        p = t.pp[i]
        t.params(i, 1)
        t.want(i, p + ny <= len(t.P), f"its {ny} positions run past the end of P")
        pos = t.P[p:p + ny]
        t.want(i, pos.min() >= 0 and pos.max() < t.off[i],
               f"a gathered position lies outside 0 .. {t.off[i] - 1} (the values before it)")


def _take_check(adjoint):
    """take: y[k] = table[idx[k]] (rows of ``width``); take_add (its adjoint) adds rows of a0
    into an (nrows, width) node. The index values are checked by the kernel itself."""
    def rule(t, i):
        a, idx = t.node(i, "a0", t.a0[i]), t.node(i, "a1", t.a1[i])
        nrows, width = t.params(i, 2)
        t.want(i, nrows >= 0 and width >= 0, f"nrows, width = {nrows}, {width}")
        table, rows = (i, a) if adjoint else (a, i)
        t.want(i, t.size[table] == nrows * width and t.size[rows] == t.size[idx] * width,
               f"sizes (%{a}: {t.size[a]}, indices %{idx}: {t.size[idx]}, node {t.size[i]}) "
               f"do not fit {nrows} rows of {width}")
    return rule


def _scatter_check(t, i):
    """y = zeros, y[P[p + j]] += a[j]: every position inside the node."""
    a = t.node(i, "a0", t.a0[i])
    t.none(i, "a1", t.a1[i])
    na = t.size[a]
    if na:
        t.params(i, 1)
        p = t.pp[i]
        t.want(i, p + na <= len(t.P), f"its {na} positions run past the end of P")
        pos = t.P[p:p + na]
        t.want(i, pos.min() >= 0 and pos.max() < t.size[i],
               f"a scattered position lies outside the node's {t.size[i]} elements")


ROWS = (
    # -- where(cond, a, b): cond is the node P[p]. Each operand is as large as the output, a
    # scalar, or a tile repeated over it (a causal mask over a batch of heads): its index
    # wraps at its size.
    Op("where", 2, "block", doc="elementwise cond ? a : b; no gradient into cond",
       fwd=_where_fwd, bwd=_where_bwd,
       jvp=_where_jvp, layout="tiles", check=_where_check,
       traced=Traced(_where_value, _where_vjp, _where_tangent),
       sparsity=Sparsity("where", "linear"), opcode=35),

    # -- gather: y[j] = val[P[p + j]], absolute positions in the value buffer fixed at
    # trace time. One row covers indexing, slicing, transposes, broadcast_to, stack and
    # concatenate, and packing scalar nodes into a tensor. Its backward scatters (adds),
    # so repeated positions accumulate. Sources with need == 0 live in slices whose
    # gradient is never read, so adding into them is harmless.
    Op("gather", -1, "block", doc="y[j] = val[P[p + j]]",
       fwd=_gather_fwd, bwd=_gather_bwd,
       jvp=_gather_jvp, inline=True, tangent_reads="", check=_gather_check,
       on_trace=OnTrace(_gather_vjp, _gather_tangent, _gather_batched), appends=("scatter",),
       sparsity=Sparsity("gather", "linear"), opcode=36),
    # take rows: y[k, :] = a[idx[k], :] for a table a0 of P[p] rows of P[p+1] elements and
    # indices read at run time from the node a1 (data: new indices do not retrace).
    # Negative indices count from the end, as numpy; anything else outside raises.
    Op("take", 2, "block", doc="embedding lookup: rows of a0 picked by the values of a1",
       fwd=_take_fwd, bwd=_take_bwd,
       jvp=_take_jvp, check=_take_check(False),
       on_trace=OnTrace(_take_vjp, _take_tangent), appends=("take_add",),
       # the rows read are data (read at run time): each output element may read any of a0
       sparsity=Sparsity("dense_a0", "linear", exact=False), opcode=48),
    # -- the adjoints of gather and take, which traced (higher-order) derivatives emit.
    # scatter: y (ny elements) = 0, then y[P[p + j]] += a[j] for every element j of a0.
    Op("scatter", 1, "block", doc="y = zeros(ny); y[positions] += a (the adjoint of gather)",
       fwd=_scatter_fwd, bwd=_scatter_bwd, jvp=_scatter_jvp, tangent_reads="",
       check=_scatter_check, on_trace=OnTrace(_scatter_vjp, _scatter_tangent),
       sparsity=Sparsity("scatter", "linear"), opcode=49),
    # take_add: y (P[p] rows of P[p+1]) = 0, then y[idx[k], :] += a[k, :] (the adjoint of
    # take); idx is the integer node a1, negative indices count from the end
    Op("take_add", 2, "block", doc="y = zeros((rows, width)); y[idx] += a (the adjoint of take)",
       fwd=_take_add_fwd, bwd=_take_add_bwd, jvp=_take_add_jvp, check=_take_check(True),
       on_trace=OnTrace(_take_add_vjp, _take_add_tangent), appends=("take",),
       sparsity=Sparsity("dense_a0", "linear", exact=False), opcode=50),
    Op("gather_lanes", -1, "block", doc="gather for L samples side by side",
       fwd=_gather_lanes_fwd, bwd=_gather_lanes_bwd, lanes_of="gather", fits=_always_fits,
       sparsity=Sparsity("dense", "linear", exact=False), opcode=99),
    Op("scatter_lanes", 1, "block", doc="scatter for L samples side by side",
       fwd=_scatter_lanes_fwd, bwd=_scatter_lanes_bwd, lanes_of="scatter",
       fits=_always_fits, sparsity=Sparsity("dense", "linear", exact=False), opcode=130),
)
