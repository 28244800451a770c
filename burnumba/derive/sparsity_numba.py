"""The compiled pattern pass of derive/sparsity.py: one loop over the tape that gives every
value element the set of differentiated inputs it may depend on, and collects the pairs of
inputs that meet in a nonlinear row (the Hessian's pattern).

Sets live in one growing arena: element ``e`` (a position of the value buffer) holds
``arena[start[e] : start[e] + count[e]]``, unsorted, without repeats. A set is never
changed once written, so elements share them: a copy, a gather, a broadcast scalar or an
operand with the only nonempty set point at the operand's set instead of copying it; a
union is written once per distinct result (one per output element of a map, one per line of
a softmax or a reduction, one for a whole dense block). Hessian pairs (i <= j) are appended
to a buffer, which is deduplicated (a counting sort) when it fills.

Imported by the first pattern (so ``import burnumba`` never loads numba); compiled once and
cached on disk in the cache folder (``kernels/numba_cache.py``). Every function takes arrays and
ints only.
"""
import numpy as np

from ..kernels.numba_cache import njit

# how a node's pattern is found (its row's ``kind`` code, derive/sparsity.py: KIND)
NONE, MAP, WHERE, GATHER, SCATTER, LISTED, INNER, MATMUL, REDUCE, WHOLE, PREFIX, DENSE, \
    DENSE_A0, TILES = range(14)
# which pairs a node adds to the Hessian's pattern (HESS)
LINEAR, BILINEAR, QUOTIENT, NONLINEAR, SQUARES = range(5)


@njit(nogil=True)
def _reserve(arena, top, extra):
    if top + extra <= arena.size:
        return arena
    grown = np.empty(max(2 * arena.size, top + extra), dtype=np.int64)
    _copy(grown, 0, arena, 0, top)
    return grown


@njit(nogil=True)
def _copy(dst, d, src, s, count):
    """dst[d:d+count] = src[s:s+count], as a loop: numba's slice assignment compiles its
    shape check's error message (string formatting), seconds of the first compile."""
    for t in range(count):
        dst[d + t] = src[s + t]


@njit(nogil=True)
def _add(arena, top, mark, stamp, s, c):
    """Append the set arena[s:s+c] to the union being written at ``top`` (room reserved)."""
    for t in range(s, s + c):
        j = arena[t]
        if mark[j] != stamp:
            mark[j] = stamp
            arena[top] = j
            top += 1
    return top


@njit(nogil=True)
def _compact(keys, used, n):
    """Deduplicate keys[:used] (i * n + j) in linear time: a counting sort by i, then one
    pass per i with a mark per j; keys come back grouped by i. Returns the new count."""
    if used == 0:
        return 0
    head = np.zeros(n + 1, dtype=np.int64)
    for t in range(used):
        head[keys[t] // n + 1] += 1
    for i in range(n):
        head[i + 1] += head[i]
    fill = head[:n].copy()
    cols = np.empty(used, dtype=np.int64)
    for t in range(used):
        i = keys[t] // n
        cols[fill[i]] = keys[t] - i * n
        fill[i] += 1
    mark = np.full(n, -1, dtype=np.int64)
    k = 0
    for i in range(n):
        for t in range(head[i], head[i + 1]):
            j = cols[t]
            if mark[j] != i:
                mark[j] = i
                keys[k] = i * n + j
                k += 1
    return k


@njit(nogil=True)
def _pairs(keys, used, arena, sa, ca, sb, cb, n, same):
    """Append the pairs of set A x set B as keys min * n + max (``same``: B is A, the
    pairs i <= j only). Returns (keys, used)."""
    extra = ca * cb
    if used + extra > keys.size:
        used = _compact(keys, used, n)
        if used + extra > keys.size // 2:
            grown = np.empty(max(2 * keys.size, 2 * (used + extra)), dtype=np.int64)
            _copy(grown, 0, keys, 0, used)
            keys = grown
    for t in range(sa, sa + ca):
        i = arena[t]
        for r in range(sb, sb + cb):
            j = arena[r]
            if same and j < i:
                continue
            keys[used] = i * n + j if i <= j else j * n + i
            used += 1
    return keys, used


@njit(nogil=True)
def propagate(kind, hess, use_a, use_b, a0, a1, off, P, pp, imm, need, in_pos, n, out,
              hessian):
    """The pattern pass. Per node: ``kind`` and ``hess`` (codes above), ``use_a`` /
    ``use_b`` (whether a map row's operand has a derivative), its operands ``a0``, ``a1``,
    parameters at ``pp`` in ``P`` and immediate ``imm``; ``need`` (on a path to the output);
    ``off`` the value buffer's offsets; ``in_pos[k]`` the value position of differentiated
    input element k (``n`` of them); ``out`` the output node.

    Returns (indptr, indices) of the output's Jacobian pattern (its elements by the inputs),
    and the distinct keys i * n + j (i <= j) of the Hessian's pattern when ``hessian``."""
    # Counters start at np.int64(0), and _pairs gets these two flags instead of True and
    # False: numba compiles a callee once more for each literal constant passed at a call
    one_set, two_sets = np.bool_(True), np.bool_(False)
    total = off[off.size - 1]
    start = np.zeros(total, dtype=np.int64)
    count = np.zeros(total, dtype=np.int64)
    arena = np.empty(max(16, 4 * n), dtype=np.int64)
    top = np.int64(0)
    for k in range(n):
        arena[top] = k
        start[in_pos[k]] = top
        count[in_pos[k]] = 1
        top += 1
    mark = np.full(n, -1, dtype=np.int64)
    stamp = np.int64(0)
    keys = np.empty(max(16, 4 * n) if hessian else 0, dtype=np.int64)
    used = np.int64(0)
    for i in range(kind.size):
        k = kind[i]
        if k == NONE or not need[i]:
            continue
        oy = off[i]
        ny = off[i + 1] - oy
        h = hess[i] if hessian else LINEAR
        p = pp[i]
        if k == MAP or k == WHERE:
            # element e reads element e % size of each operand (itself, a scalar, a tile)
            na = off[a0[i] + 1] - off[a0[i]] if a0[i] >= 0 and (use_a[i] or k == WHERE) else 0
            nb = off[a1[i] + 1] - off[a1[i]] if a1[i] >= 0 and (use_b[i] or k == WHERE) else 0
            last_s, last_c = -1, -1
            for e in range(ny):
                sa = ca = sb = cb = np.int64(0)
                if na > 0:
                    q = off[a0[i]] + (e if na == ny else e % na)
                    sa, ca = start[q], count[q]
                if nb > 0:
                    q = off[a1[i]] + (e if nb == ny else e % nb)
                    sb, cb = start[q], count[q]
                if cb == 0 or (sa == sb and ca == cb):
                    start[oy + e], count[oy + e] = sa, ca
                elif ca == 0:
                    start[oy + e], count[oy + e] = sb, cb
                else:
                    arena = _reserve(arena, top, ca + cb)
                    stamp += 1
                    s0 = top
                    top = _add(arena, top, mark, stamp, sa, ca)
                    top = _add(arena, top, mark, stamp, sb, cb)
                    start[oy + e], count[oy + e] = s0, top - s0
                if h == BILINEAR or h == QUOTIENT:
                    if ca > 0 and cb > 0:
                        keys, used = _pairs(keys, used, arena, sa, ca, sb, cb, n, two_sets)
                    if h == QUOTIENT and cb > 0:
                        keys, used = _pairs(keys, used, arena, sb, cb, sb, cb, n, one_set)
                elif h == NONLINEAR and count[oy + e] > 0:
                    s, c = start[oy + e], count[oy + e]
                    if s != last_s or c != last_c:      # a set shared along a broadcast
                        keys, used = _pairs(keys, used, arena, s, c, s, c, n, one_set)
                        last_s, last_c = s, c
        elif k == TILES:
            # element e reads element e % size of the node P[p], a0 and a1 (the beta rows' a,
            # b, x: each itself, a scalar or a tile); their union, written per element
            for e in range(ny):
                stamp += 1
                s0 = top
                for q0 in (P[p], a0[i], a1[i]):
                    nq = off[q0 + 1] - off[q0]
                    q = off[q0] + (e if nq == ny else e % nq)
                    arena = _reserve(arena, top, count[q])
                    top = _add(arena, top, mark, stamp, start[q], count[q])
                start[oy + e], count[oy + e] = s0, top - s0
                if h == NONLINEAR and top > s0:
                    keys, used = _pairs(keys, used, arena, s0, top - s0, s0, top - s0, n, one_set)
        elif k == GATHER:
            c = imm[i]
            for e in range(ny):
                if c == 1.0:
                    q = P[p] + e
                elif c == 2.0:
                    q = P[p]
                else:
                    q = P[p + e]
                start[oy + e], count[oy + e] = start[q], count[q]
        elif k == SCATTER:
            oa = off[a0[i]]
            na = off[a0[i] + 1] - oa
            # y[to[t]] gathers a[t] (several t may meet one element): per output element,
            # the union of what lands there, written in two passes (count, then fill)
            hits = np.zeros(ny, dtype=np.int64)
            for t in range(na):
                hits[P[p] + t if imm[i] == 1.0 else P[p + t]] += 1
            extra = np.int64(0)
            for t in range(na):
                extra += count[oa + t]
            arena = _reserve(arena, top, extra)
            first = np.full(ny, -1, dtype=np.int64)
            for t in range(na):
                e = P[p] + t if imm[i] == 1.0 else P[p + t]
                if hits[e] == 1:
                    start[oy + e], count[oy + e] = start[oa + t], count[oa + t]
                elif first[e] < 0:
                    first[e] = t
            for e in range(ny):
                if hits[e] > 1:
                    stamp += 1
                    s0 = top
                    for t in range(first[e], na):
                        if (P[p] + t if imm[i] == 1.0 else P[p + t]) == e:
                            top = _add(arena, top, mark, stamp, start[oa + t], count[oa + t])
                    start[oy + e], count[oy + e] = s0, top - s0
        elif k == LISTED or k == INNER or k == DENSE or k == DENSE_A0:
            # one set, the union of every element of the operands, for every output element
            if k == LISTED:
                first_node, last_node = p + 1, p + 1 + P[p]
            elif k == INNER:
                first_node, last_node = p + 1, p + 1 + 2 * P[p]
            else:
                first_node, last_node = np.int64(0), np.int64(0)
            n0 = a0[i] if k != LISTED else -1          # the bias of inner, a dense row's
            n1 = a1[i] if k == DENSE else -1           # operands (take's a1: integers)
            extra = np.int64(0)
            for t in range(first_node, last_node):
                for q in range(off[P[t]], off[P[t] + 1]):
                    extra += count[q]
            for nd in (n0, n1):
                if nd >= 0:
                    for q in range(off[nd], off[nd + 1]):
                        extra += count[q]
            arena = _reserve(arena, top, extra)
            stamp += 1
            s0 = top
            for t in range(first_node, last_node):
                for q in range(off[P[t]], off[P[t] + 1]):
                    top = _add(arena, top, mark, stamp, start[q], count[q])
            for nd in (n0, n1):
                if nd >= 0:
                    for q in range(off[nd], off[nd + 1]):
                        top = _add(arena, top, mark, stamp, start[q], count[q])
            for e in range(ny):
                start[oy + e], count[oy + e] = s0, top - s0
            if h == SQUARES:
                for t in range(first_node, last_node):
                    for q in range(off[P[t]], off[P[t] + 1]):
                        keys, used = _pairs(keys, used, arena, start[q], count[q], start[q],
                                            count[q], n, one_set)
            elif h == BILINEAR:          # inner: x_k[e] w_k[e]
                m2 = P[p]
                for t in range(m2):
                    xa, wa = P[p + 1 + t], P[p + 1 + m2 + t]
                    sx, nx = off[xa], off[xa + 1] - off[xa]
                    sw, nw = off[wa], off[wa + 1] - off[wa]
                    for e in range(max(nx, nw)):
                        qx, qw = sx + e % nx, sw + e % nw
                        if count[qx] > 0 and count[qw] > 0:
                            keys, used = _pairs(keys, used, arena, start[qx], count[qx],
                                                start[qw], count[qw], n, two_sets)
            elif h == NONLINEAR and top > s0:
                keys, used = _pairs(keys, used, arena, s0, top - s0, s0, top - s0, n, one_set)
        elif k == MATMUL:
            nb_, M, K, N, sa_, sb_ = P[p], P[p + 1], P[p + 2], P[p + 3], P[p + 4], P[p + 5]
            oA, oB = off[a0[i]], off[a1[i]]
            for b in range(nb_):
                for ii in range(M):
                    for jj in range(N):
                        extra = np.int64(0)
                        for kk in range(K):
                            extra += count[oA + (b * sa_ * M + ii) * K + kk]
                            extra += count[oB + (b * sb_ * K + kk) * N + jj]
                        arena = _reserve(arena, top, extra)
                        stamp += 1
                        s0 = top
                        for kk in range(K):
                            qa = oA + (b * sa_ * M + ii) * K + kk
                            qb = oB + (b * sb_ * K + kk) * N + jj
                            top = _add(arena, top, mark, stamp, start[qa], count[qa])
                            top = _add(arena, top, mark, stamp, start[qb], count[qb])
                        e = (b * M + ii) * N + jj
                        start[oy + e], count[oy + e] = s0, top - s0
                if h == BILINEAR:
                    # A[b, i, k] B[b, k, j]: per k, the union over i times the union over j
                    for kk in range(K):
                        extra = np.int64(0)
                        for ii in range(M):
                            extra += count[oA + (b * sa_ * M + ii) * K + kk]
                        for jj in range(N):
                            extra += count[oB + (b * sb_ * K + kk) * N + jj]
                        arena = _reserve(arena, top, extra)
                        stamp += 1
                        s1 = top
                        for ii in range(M):
                            qa = oA + (b * sa_ * M + ii) * K + kk
                            top = _add(arena, top, mark, stamp, start[qa], count[qa])
                        stamp += 1
                        s2 = top
                        for jj in range(N):
                            qb = oB + (b * sb_ * K + kk) * N + jj
                            top = _add(arena, top, mark, stamp, start[qb], count[qb])
                        if s2 > s1 and top > s2:
                            keys, used = _pairs(keys, used, arena, s1, s2 - s1, s2, top - s2,
                                                n, two_sets)
        elif k == REDUCE or k == WHOLE or k == PREFIX:
            outer, m, inner = P[p], P[p + 1], P[p + 2]
            oa = off[a0[i]]
            for o in range(outer):
                for kk in range(inner):
                    if k == PREFIX:
                        # (o, j, k) reads (o, i, k) for i <= j: each set the last one and a[j]
                        ps, pc = np.int64(0), np.int64(0)
                        for j in range(m):
                            q = oa + (o * m + j) * inner + kk
                            e = (o * m + j) * inner + kk
                            cq = count[q]
                            if cq == 0 or (start[q] == ps and cq == pc):
                                pass
                            elif pc == 0:
                                ps, pc = start[q], cq
                            else:
                                arena = _reserve(arena, top, pc + cq)
                                stamp += 1
                                s0 = top
                                top = _add(arena, top, mark, stamp, ps, pc)
                                top = _add(arena, top, mark, stamp, start[q], cq)
                                ps, pc = s0, top - s0
                            start[oy + e], count[oy + e] = ps, pc
                        s0, c0 = ps, pc
                    else:
                        extra = np.int64(0)
                        for j in range(m):
                            extra += count[oa + (o * m + j) * inner + kk]
                        arena = _reserve(arena, top, extra)
                        stamp += 1
                        s0 = top
                        for j in range(m):
                            q = oa + (o * m + j) * inner + kk
                            top = _add(arena, top, mark, stamp, start[q], count[q])
                        c0 = top - s0
                        if k == REDUCE:
                            e = o * inner + kk
                            start[oy + e], count[oy + e] = s0, c0
                        else:
                            for j in range(m):
                                e = (o * m + j) * inner + kk
                                start[oy + e], count[oy + e] = s0, c0
                    if h == NONLINEAR and c0 > 0:   # the line's whole set with itself
                        keys, used = _pairs(keys, used, arena, s0, c0, s0, c0, n, one_set)
    # the output's rows
    oy = off[out]
    ny = off[out + 1] - oy
    indptr = np.zeros(ny + 1, dtype=np.int64)
    for e in range(ny):
        indptr[e + 1] = indptr[e] + count[oy + e]
    indices = np.empty(indptr[ny], dtype=np.int64)
    for e in range(ny):
        _copy(indices, indptr[e], arena, start[oy + e], count[oy + e])
    used = _compact(keys, used, n) if hessian else 0
    return indptr, indices, keys[:used].copy()
