"""The batched matrix product (loops for small products, BLAS's gemm and gemv for larger
ones) and its lanes form for bn.vmap's wide tapes.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
import numpy

from .row import OnTrace, Op, Sparsity, Traced
from .rules import template
from .templates import _eight_sums, _four_sums


@template
def _matmul(i, p, P, a0, a1, off):
    """matmul's sizes and operands; the rules then loop ``for bt in range(nb):``."""
    nb = P[p]
    M = P[p + 1]
    K = P[p + 2]
    N = P[p + 3]
    ia = a0[i]
    ib = a1[i]
    oa = off[ia]
    ob = off[ib]
    return nb, M, K, N, ia, ib, oa, ob


@template
def _batch(bt, p, P, oa, ob, oy, M, K, N):
    """The start of batch bt's A_b, B_b and Y_b (sa / sb = 0 reuse one operand)."""
    xa = oa + bt * P[p + 4] * M * K
    xb = ob + bt * P[p + 5] * K * N
    xy = oy + bt * M * N
    return xa, xb, xy


def _matmul_fwd(i, oy, p, P, off, a0, a1, val, blas, gemm, gemv):
    nb, M, K, N, ia, ib, oa, ob = _matmul(i, p, P, a0, a1, off)
    for bt in range(nb):
        xa, xb, xy = _batch(bt, p, P, oa, ob, oy, M, K, N)
        # B small enough for L1 (attention's per-head products): four columns of a row of Y
        # at a time, summed in registers over k, in k order as the loop below (_four_sums;
        # the 384 products of 8x8 by 8x4 in 29 against 101 us). From 32 columns the loop
        # below, which vectorizes along a row, is faster (1x64 by 64x64: 0.39 against 0.96
        # us), with the same sums in the same order.
        small = M * K * N <= 512 or not blas or (M <= 4 and K * N <= 4096)
        if small and K * N <= 4096 and N < 32:
            # two rows at a time (_eight_sums), the last of an odd M alone
            n4 = N - N % 4
            for r in range(0, M, 2):
                arow = xa + r * K
                if r + 1 < M:
                    arow2 = arow + K
                    for n in range(0, n4, 4):
                        bcol = xb + n
                        s0, s1, s2, s3, t0, t1, t2, t3 = _eight_sums(K, val, arow, arow2, 1,
                                                                     val, bcol, N, 1)
                        q = xy + r * N + n
                        val[q] = s0
                        val[q + 1] = s1
                        val[q + 2] = s2
                        val[q + 3] = s3
                        val[q + N] = t0
                        val[q + N + 1] = t1
                        val[q + N + 2] = t2
                        val[q + N + 3] = t3
                else:
                    for n in range(0, n4, 4):
                        bcol = xb + n
                        s0, s1, s2, s3 = _four_sums(K, val, arow, 1, val, bcol, N, 1)
                        q = xy + r * N + n
                        val[q] = s0
                        val[q + 1] = s1
                        val[q + 2] = s2
                        val[q + 3] = s3
                for rr in range(r, min(r + 2, M)):
                    for n in range(n4, N):
                        acc = 0.0
                        for k in range(K):
                            acc += val[xa + rr * K + k] * val[xb + k * N + n]
                        val[xy + rr * N + n] = acc
        # small, or no BLAS: B is read once, row by row, in unit strides
        elif small:
            for r in range(M):
                for n in range(N):
                    val[xy + r * N + n] = 0.0
                for k in range(K):
                    av = val[xa + r * K + k]
                    for n in range(N):
                        val[xy + r * N + n] += av * val[xb + k * N + n]
        # up to 4 rows: one gemv each, y_r = B^T a_r (one thread, 1 x 1024 x 1024 float32:
        # 60 us, against 105 us for the loop above and 462 us for sgemm with M = 1)
        elif M <= 4:
            for r in range(M):
                gemv(1, K, N, val, xb, N, val, xa + r * K, 0.0, val, xy + r * N)
        else:
            gemm(0, 0, M, N, K, val, xa, K, val, xb, N, 0.0, val, xy, N)


def _matmul_bwd(i, oy, p, P, off, a0, a1, need, val, grad, blas, gemm, gemv):
    nb, M, K, N, ia, ib, oa, ob = _matmul(i, p, P, a0, a1, off)
    need_a = need[ia]
    need_b = need[ib]
    for bt in range(nb):
        xa, xb, xy = _batch(bt, p, P, oa, ob, oy, M, K, N)
        loops = M * K * N <= 512 or not blas
        if need_a and loops:
            # dA four columns at a time, each a sum over n in registers, added once (1x16 by
            # 16x16: 61 against 103 ns for one sum at a time, which does not vectorize)
            # two rows at a time (_eight_sums), the last of an odd M alone
            k4 = K - K % 4
            for r in range(0, M, 2):
                gyrow = xy + r * N
                if r + 1 < M:
                    gyrow2 = gyrow + N
                    for k in range(0, k4, 4):
                        brow = xb + k * N
                        s0, s1, s2, s3, t0, t1, t2, t3 = _eight_sums(N, grad, gyrow, gyrow2, 1,
                                                                     val, brow, 1, N)
                        q = xa + r * K + k
                        grad[q] += s0
                        grad[q + 1] += s1
                        grad[q + 2] += s2
                        grad[q + 3] += s3
                        grad[q + K] += t0
                        grad[q + K + 1] += t1
                        grad[q + K + 2] += t2
                        grad[q + K + 3] += t3
                else:
                    for k in range(0, k4, 4):
                        brow = xb + k * N
                        s0, s1, s2, s3 = _four_sums(N, grad, gyrow, 1, val, brow, 1, N)
                        q = xa + r * K + k
                        grad[q] += s0
                        grad[q + 1] += s1
                        grad[q + 2] += s2
                        grad[q + 3] += s3
                for rr in range(r, min(r + 2, M)):
                    for k in range(k4, K):
                        acc = 0.0
                        for n in range(N):
                            acc += grad[xy + rr * N + n] * val[xb + k * N + n]
                        grad[xa + rr * K + k] += acc
        if need_b and loops and M >= 4 and K * N <= 4096:
            # several rows, B in L1 (attention's per-head products): dB four columns at a
            # time, each summed in registers over the rows (the 384 products of 8x8 by 8x4:
            # 63 against 85 us, with dA above); with fewer rows, the rank-1 updates below
            # two rows of dB (k, k + 1) at a time (_eight_sums), the last of an odd K alone
            n4 = N - N % 4
            for k in range(0, K, 2):
                acol = xa + k
                if k + 1 < K:
                    acol2 = acol + 1
                    for n in range(0, n4, 4):
                        gycol = xy + n
                        s0, s1, s2, s3, t0, t1, t2, t3 = _eight_sums(M, val, acol, acol2, K,
                                                                     grad, gycol, N, 1)
                        q = xb + k * N + n
                        grad[q] += s0
                        grad[q + 1] += s1
                        grad[q + 2] += s2
                        grad[q + 3] += s3
                        grad[q + N] += t0
                        grad[q + N + 1] += t1
                        grad[q + N + 2] += t2
                        grad[q + N + 3] += t3
                else:
                    for n in range(0, n4, 4):
                        gycol = xy + n
                        s0, s1, s2, s3 = _four_sums(M, val, acol, K, grad, gycol, N, 1)
                        q = xb + k * N + n
                        grad[q] += s0
                        grad[q + 1] += s1
                        grad[q + 2] += s2
                        grad[q + 3] += s3
                for kk in range(k, min(k + 2, K)):
                    for n in range(n4, N):
                        acc = 0.0
                        for r in range(M):
                            acc += val[xa + r * K + kk] * grad[xy + r * N + n]
                        grad[xb + kk * N + n] += acc
            continue
        if need_a and not loops and M <= 4:
            # a vector times B^T: one gemv per row, dA_r += B dY_r (one thread, 1 x 1024 x
            # 1024 float32: 76 us, against 300 us for K dot products in loops, which do not
            # vectorize, and 789 us for sgemm with M = 1)
            for r in range(M):
                gemv(0, K, N, val, xb, N, grad, xy + r * N, 1.0, grad, xa + r * K)
        elif need_a and not loops:
            gemm(0, 1, M, K, N, grad, xy, N, val, xb, N, 1.0, grad, xa, K)
        # dB as M rank-1 updates added in place: for small products, and for at most 4 rows,
        # where it beats BLAS with K = 1 (0.10 against 0.59 ms at 1024 x 1024)
        if need_b and (loops or M <= 4):
            for r in range(M):
                for k in range(K):
                    av = val[xa + r * K + k]
                    for n in range(N):
                        grad[xb + k * N + n] += av * grad[xy + r * N + n]
        elif need_b:
            gemm(1, 0, K, N, M, val, xa, K, grad, xy, N, 1.0, grad, xb, N)


def _matmul_jvp(i, oy, p, P, off, a0, a1, need, val, grad, blas, gemm):
    nb, M, K, N, ia, ib, oa, ob = _matmul(i, p, P, a0, a1, off)
    need_a = need[ia]
    need_b = need[ib]
    for bt in range(nb):
        xa, xb, xy = _batch(bt, p, P, oa, ob, oy, M, K, N)
        # tY = tA @ B + A @ tB; an operand without a gradient has no tangent
        if M * K * N <= 512 or not blas:
            for r in range(M):
                for n in range(N):
                    acc = 0.0
                    for k in range(K):
                        if need_a:
                            acc += grad[xa + r * K + k] * val[xb + k * N + n]
                        if need_b:
                            acc += val[xa + r * K + k] * grad[xb + k * N + n]
                    grad[xy + r * N + n] = acc
        else:
            if need_a:
                gemm(0, 0, M, N, K, grad, xa, K, val, xb, N, 0.0, grad, xy, N)
            if need_b:
                gemm(0, 0, M, N, K, val, xa, K, grad, xb, N, 1.0 if need_a else 0.0, grad, xy, N)


# -- lanes forms (bn.vmap's wide tapes). A wide tape holds L samples side by side: element j
# of a node's slice for sample s sits at j * L + s (offsets scaled by L), so an elementwise
# row runs unchanged over L times the elements, and a block row needs a form whose innermost
# loops run over the samples. A lanes form takes every sum in the order, and in the precision,
# that its row's own sweep takes it, so each sample gets the bits a call on it alone gives: a
# sum the row keeps in a local (float64, whatever the tape's dtype) is kept in float64 here
# (_add_lane_sums); a sum the row adds into a slot of the tape is added into that slot. In a
# float64 tape (bit 1 of matmul_lanes' immediate c, burnumba/ir/lanes.py) a slot holds what a
# local holds, so sums run in slots, L at a time, and the loops over lanes vectorize (the
# MLP's 16 x 16 product: 0.2 against 1.0 ns a multiply-add in locals). Where an operand is
# the same in every lane (bit 2 of c: B is a leaf shared by the samples, a weight), its
# element is read once, in lane 0, and four terms are added per pass over the lanes
# (_add_uniform_sums: 0.06 ns a multiply-add). ``lanes`` is L (the run's C_LANES); scratch
# holds L sums.
@template
def _add_lane_sums(T, u, ua, us, w, wa, ws, out, q, L, c, scratch):
    """out[q + e] += (sum over t < T of u[ua + t us + e] w[wa + t ws + e]) for the L lanes e,
    each sum started at 0.0 and taken in t order in float64, as matmul's own sweep keeps it
    (_four_sums and the loops' acc): in scratch slots, the lanes side by side, where c = 1 (a
    float64 tape: a slot holds what a local holds); else in locals, four lanes at a time."""
    if c == 1.0:
        for e in range(L):
            scratch[e] = 0.0
        for t in range(T):
            tu = ua + t * us
            tw = wa + t * ws
            for e in range(L):
                scratch[e] += u[tu + e] * w[tw + e]
        for e in range(L):
            out[q + e] += scratch[e]
    else:
        L4 = L - L % 4
        for e in range(0, L4, 4):
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            for t in range(T):
                tu = ua + t * us + e
                tw = wa + t * ws + e
                s0 += u[tu] * w[tw]
                s1 += u[tu + 1] * w[tw + 1]
                s2 += u[tu + 2] * w[tw + 2]
                s3 += u[tu + 3] * w[tw + 3]
            out[q + e] += s0
            out[q + e + 1] += s1
            out[q + e + 2] += s2
            out[q + e + 3] += s3
        for e in range(L4, L):
            s0 = 0.0
            for t in range(T):
                s0 += u[ua + t * us + e] * w[wa + t * ws + e]
            out[q + e] += s0
    return q


@template
def _add_uniform_sums(T, u, ua, us, w, wa, ws, out, q, L, scratch):
    """_add_lane_sums in float64 slots where w is the same in every lane: w's element read
    once (lane 0), up to four terms added per pass over the lanes, left to right, so each
    lane's sum takes its terms in t order from 0.0 as _add_lane_sums does. The first pass
    takes the 1 to 4 first terms, the others four each."""
    R = (T - 1) % 4 + 1
    if T == 0:
        for e in range(L):
            scratch[e] = 0.0
    elif R == 1:
        w0 = w[wa]
        for e in range(L):
            scratch[e] = 0.0 + u[ua + e] * w0
    elif R == 2:
        w0 = w[wa]
        w1 = w[wa + ws]
        for e in range(L):
            scratch[e] = 0.0 + u[ua + e] * w0 + u[ua + us + e] * w1
    elif R == 3:
        w0 = w[wa]
        w1 = w[wa + ws]
        w2 = w[wa + 2 * ws]
        for e in range(L):
            scratch[e] = 0.0 + u[ua + e] * w0 + u[ua + us + e] * w1 + u[ua + 2 * us + e] * w2
    else:
        w0 = w[wa]
        w1 = w[wa + ws]
        w2 = w[wa + 2 * ws]
        w3 = w[wa + 3 * ws]
        for e in range(L):
            scratch[e] = (0.0 + u[ua + e] * w0 + u[ua + us + e] * w1
                          + u[ua + 2 * us + e] * w2 + u[ua + 3 * us + e] * w3)
    for t in range(R, T, 4):
        tu = ua + t * us
        w0 = w[wa + t * ws]
        w1 = w[wa + (t + 1) * ws]
        w2 = w[wa + (t + 2) * ws]
        w3 = w[wa + (t + 3) * ws]
        for e in range(L):
            scratch[e] = (scratch[e] + u[tu + e] * w0 + u[tu + us + e] * w1
                          + u[tu + 2 * us + e] * w2 + u[tu + 3 * us + e] * w3)
    for e in range(L):
        out[q + e] += scratch[e]
    return q


def _matmul_lanes_fits(params, need_a, need_b, blas):
    """Whether matmul's own sweeps loop (rather than call BLAS) on a node of these sizes."""
    nb, M, K, N = params[:4]
    fwd_loops = M * K * N <= 512 or not blas or (M <= 4 and K * N <= 4096)
    loops = M * K * N <= 512 or not blas
    return fwd_loops and (loops or not need_a) and (loops or not need_b or M <= 4)


def _matmul_lanes_fwd(i, oy, p, c, P, off, a0, a1, val, scratch, lanes):
    nb, M, K, N, ia, ib, oa, ob = _matmul(i, p, P, a0, a1, off)
    L = lanes
    NL = N * L
    f64 = 1.0 if c == 1.0 or c == 3.0 else 0.0     # c: 1 float64 slots, + 2 B uniform
    for bt in range(nb):
        xa = oa + bt * P[p + 4] * M * K * L
        xb = ob + bt * P[p + 5] * K * N * L
        xy = oy + bt * M * N * L
        for r in range(M):
            for n in range(N):
                q = xy + (r * N + n) * L
                qa = xa + r * K * L
                qb = xb + n * L
                for s in range(L):
                    val[q + s] = 0.0
                if K * N <= 4096 and N < 32 and c == 3.0:
                    q = _add_uniform_sums(K, val, qa, L, val, qb, NL, val, q, L, scratch)
                elif K * N <= 4096 and N < 32:       # _matmul_fwd's sums in float64
                    q = _add_lane_sums(K, val, qa, L, val, qb, NL, val, q, L, f64, scratch)
                else:                                # its sums added into Y
                    for k in range(K):
                        for s in range(L):
                            val[q + s] += val[qa + k * L + s] * val[qb + k * N * L + s]


def _matmul_lanes_bwd(i, oy, p, c, P, off, a0, a1, need, val, grad, scratch, blas, lanes):
    nb, M, K, N, ia, ib, oa, ob = _matmul(i, p, P, a0, a1, off)
    L = lanes
    KL = K * L
    NL = N * L
    need_a = need[ia]
    need_b = need[ib]
    f64 = 1.0 if c == 1.0 or c == 3.0 else 0.0
    for bt in range(nb):
        xa = oa + bt * P[p + 4] * M * K * L
        xb = ob + bt * P[p + 5] * K * N * L
        xy = oy + bt * M * N * L
        if need_a:
            # dA[r, k] += (sum over n of dY[r, n] B[k, n]), as _matmul_bwd
            for r in range(M):
                for k in range(K):
                    q = xa + (r * K + k) * L
                    qy = xy + r * N * L
                    qb = xb + k * N * L
                    if c == 3.0:
                        q = _add_uniform_sums(N, grad, qy, L, val, qb, L, grad, q, L, scratch)
                    else:
                        q = _add_lane_sums(N, grad, qy, L, val, qb, L, grad, q, L, f64,
                                           scratch)
        if need_b and (M * K * N <= 512 or not blas) and M >= 4 and K * N <= 4096:
            # dB[k, n] += (sum over r of A[r, k] dY[r, n])
            for k in range(K):
                for n in range(N):
                    q = xb + (k * N + n) * L
                    qa = xa + k * L
                    qy = xy + n * L
                    q = _add_lane_sums(M, val, qa, KL, grad, qy, NL, grad, q, L, f64, scratch)
        elif need_b:
            # dB as M rank-1 updates added into it, row by row
            for r in range(M):
                for k in range(K):
                    qa = xa + (r * K + k) * L
                    for n in range(N):
                        qy = xy + (r * N + n) * L
                        qb = xb + (k * N + n) * L
                        for s in range(L):
                            grad[qb + s] += val[qa + s] * grad[qy + s]


# -- the shape rule (layout "matrices") and the rules in numpy's names (``Traced``): A is
# (nb or 1, M, K), B (nb or 1, K, N) (an operand with stride flag 0 is one matrix that every
# product reuses), Y and G (nb, M, N). The product's reference and its derivative as traced
# ops (its batched rule, which reads how the trace holds its operands, is an ``OnTrace``).
def _matmul_shapes(nb, M, K, N, sa, sb):
    if min(nb, M, K, N) < 0 or sa not in (0, 1) or sb not in (0, 1):
        return None
    return ((nb if sa else 1, M, K), (nb if sb else 1, K, N)), (nb, M, N), 0


def _matmul_value(np, A, B, c):
    return np.matmul(A, B)


def _matmul_vjp(np, A, B, Y, G, c, need=(True, True)):
    # dA = G B^T, dB = A^T G; an operand shared by the nb products gets the sum of their
    # gradients (of one: itself)
    dA = dB = None
    if need[0]:
        dA = np.matmul(G, np.swapaxes(B, 1, 2))
        dA = dA if A.shape[0] == G.shape[0] else np.sum(dA, axis=0, keepdims=True)
    if need[1]:
        dB = np.matmul(np.swapaxes(A, 1, 2), G)
        dB = dB if B.shape[0] == G.shape[0] else np.sum(dB, axis=0, keepdims=True)
    return dA, dB


def _matmul_tangent(np, A, B, Y, tA, tB, c):
    out = None                                         # tA @ B + A @ tB
    if tA is not None:
        out = np.matmul(tA, B)
    if tB is not None:
        term = np.matmul(A, tB)
        out = term if out is None else out + term
    return out


# -- the batched rule on the trace (``OnTrace``): it reads how the trace holds the operands
# (which tangents are unit vectors, which matrix is a transposed view). ``t`` is the trace
# (burnumba/derive/traced.py: Trace), ``np`` burnumba.numpy.
def _transposed(np, t, v):
    """The matrix v transposed, as a view. Where v is a gather node made from a view (the
    x^T of a backward), the view reads that gather's own sources: (x^T)^T is x, no copy."""
    through = t.viewed(v)
    if through is None:
        return np.transpose(v, (1, 0))
    pos = numpy.asarray(through).reshape(v.shape).T
    srcs = [t.var(int(s)) for s in numpy.unique(t.sources(pos.reshape(-1)))]
    return t.gather(srcs, pos, pos.shape)


def _matmul_batched(np, t, i, tangent, B, identity=()):
    """tY = tA @ B + A @ tB for B directions. With one left matrix, A @ tB is computed as
    A @ [tB_1 ... tB_B] (the directions side by side): one matrix-matrix product."""
    (shape_a, shape_b), _, _ = t.node_shapes(i)
    A, Bm = np.reshape(t.var(t.a0[i]), shape_a), np.reshape(t.var(t.a1[i]), shape_b)
    M, K, N = t.params(i)[1:4]
    ta, tb = tangent(t.a0[i]), tangent(t.a1[i])
    out = None
    if ta is not None:
        out = np.matmul(np.reshape(ta, (B,) + A.shape), Bm)
    if tb is not None:
        tb4 = np.reshape(tb, (B,) + Bm.shape)
        if t.a1[i] in identity and A.shape[0] == 1 and Bm.shape == (1, K, 1) and B == K:
            # the directions are the unit vectors: A @ e_k is A's column k, so the product
            # is A transposed (the Jacobian of X @ w with respect to w, not a K-fold product)
            # (shaped as the other term, (B, 1, M, 1), so that the two add elementwise)
            term = np.reshape(np.transpose(np.reshape(A, (M, K)), (1, 0)), (K, 1, M, 1))
        elif A.shape[0] == 1 and N == 1 and Bm.shape[0] == 1:
            # A @ t_k for every direction k, as rows: T (B, K) @ A^T, one product (A is
            # often x^T from the backward of x @ w: then A^T is x itself, no transpose)
            At = _transposed(np, t, np.reshape(A, (M, K)))
            term = np.reshape(np.matmul(np.reshape(tb4, (B, K)), At), (B, 1, M, 1))
        elif A.shape[0] == 1:
            T = np.reshape(np.transpose(tb4, (2, 0, 1, 3)), (K, B * Bm.shape[0] * N))
            Y = np.matmul(np.reshape(A, (M, K)), T)                # (M, B * nbB * N)
            term = np.transpose(np.reshape(Y, (M, B, Bm.shape[0], N)), (1, 2, 0, 3))
        else:
            term = np.matmul(A, tb4)
        out = term if out is None else out + term
    return out


ROWS = (
    # batched matmul: nb products Y_b = A_b @ B_b of (M, K) @ (K, N), P[p:p+6] = nb, M, K,
    # N, sa, sb; sa / sb = 0 reuse one operand for every b. Products of up to 512
    # multiply-adds (attention's per-head products) run as loops, which beat a BLAS call at
    # that size (8x4x8 x 384 heads: 49 us against 132 us); larger ones call BLAS's gemm.
    # Backward: dA_b += G_b @ B_b^T and dB_b += A_b^T @ G_b, which gemm adds in place
    # (beta = 1), reading the transposes where they lie.
    Op("matmul", 2, "block", doc="Y_b = A_b @ B_b, b < nb", fwd=_matmul_fwd, bwd=_matmul_bwd,
       jvp=_matmul_jvp, tangent_reads="cross", layout="matrices", shapes=_matmul_shapes,
       traced=Traced(_matmul_value, _matmul_vjp, _matmul_tangent),
       on_trace=OnTrace(batched=_matmul_batched), sparsity=Sparsity("matmul", "bilinear"),
       opcode=51),
    # the lanes form (bn.vmap's wide tapes; see _matmul_lanes_fwd). Its tests are vmap's:
    # every sample's bits against a loop.
    Op("matmul_lanes", 2, "block", doc="matmul for L samples side by side, sample "
       "innermost; c = 1: float64 slots hold its sums, + 2: B is the same in every lane. "
       "P = nb, M, K, N, sa, sb", fwd=_matmul_lanes_fwd, bwd=_matmul_lanes_bwd,
       lanes_of="matmul", fits=_matmul_lanes_fits, opcode=98),
)
