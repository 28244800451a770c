"""The op table: every op burnumba can put on a tape is one row here.

A row holds the op's name, its arity, its forward and backward rules, the domain that the
gradient tests sample from and its conventions at kinks. Everything else is derived from
this table: ``_gen.py`` writes the ``if op == ...`` branches of the njit sweeps into
``sweep.py``, ``reference.py`` runs the same rules in plain Python, and the tracer looks
rows up by name.

Two kinds of row carry rules:

``map`` rows are elementwise. Their rules are small Python functions (a lambda in the row,
or a ``def`` next to it) whose argument names are the contract (``kernels/rules.py``):
``fwd`` is a scalar function of ``a`` (and ``b``) and the immediate ``c``; ``da`` / ``db``
are the contributions to the operands' gradients, functions of ``a``, ``b``, ``c``, the
output ``y`` and the upstream gradient ``g``. A rule takes only the names it uses
(``da=lambda b, g: g * b``); the generator reads its source and inlines it, and the tangent
is ``da`` / ``db`` with ``g`` bound to the operand's tangent. A ``None`` rule means the op
has no gradient with respect to that operand (comparisons).

A binary map broadcasts an operand that is a scalar or a tile of the output (its index
wraps at its size); the tracer expands other broadcasts with a gather.

``block`` rows' rules (``fwd``, ``bwd``, ``jvp``) are defs of statements over the locals
of a sweep branch, which they take as arguments by name (``rules.BLOCK_ARGS``): ``i``
(this node), ``oy`` / ``ny`` (offset and size of its slice of the value buffer), ``c`` (its
immediate), ``p`` (start of its integer parameters in ``P``), the tape columns ``a0``,
``a1``, ``off``, ``need`` and the buffers ``val``, ``grad`` and ``scratch`` (and ``lanes``,
the samples a wide tape holds side by side, for the lanes rows); the generator
pastes the body into the row's function. Statements several rules share are templates
(``@template`` defs, called as ``names = _template(args)``; the generator pastes them too).
A block's ``bwd`` must only add into operands whose ``need`` flag is set.

Rules may call the math functions listed in ``rules.MATH`` (``exp log sqrt tanh sin cos
fabs erf`` ...), which exist with the same meaning in numba and in plain Python. Blocks may
also call
``gemm(ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy)``, BLAS's product
``Y = op(A) @ op(B) + beta * Y`` on row-major slices of ``val`` / ``grad`` starting at
``oa`` / ``ob`` / ``oy`` (``op`` transposes when its flag is 1), when ``blas`` is true (a BLAS
was found; otherwise a block must loop), and ``gemv(ta, M, N, A, oa, lda, X, ox, beta, Y,
oy)``, ``Y = op(A) @ X + beta * Y`` for the M x N matrix A (unit strides); all three are
arguments of the rule. A block reports bad data by returning an error code
(``ERR_INDEX``, ``ERR_TARGET``): the kernels never raise, and the caller turns the code into
a burnumba error that names the node.

Axis rows see their operand as ``(outer, m, inner)`` = ``P[p:p+3]``: the reduced (or
normalised) axis has length ``m``; element ``(o, j, k)`` sits at ``(o * m + j) * inner + k``.

**IEEE conventions.** Each row's behaviour at NaN, +-inf and +-0 is fixed by its special-value
cases, data kept apart in ``ieee_cases.py`` by row name (``Op.special`` reads them): values as
numpy's, gradients as JAX's, with the exceptions noted at the row (absolute at NaN and at 0, a
fully masked logsumexp lane).
"""
# the functions the rules call (kernels/rules.py: MATH); floor, ceil, fmod, exp2, cbrt, rint
# and trunc are numpy's, whose results are floats (math.floor is an int) and which numba
# compiles
from math import (acos, acosh, asin, asinh, atan, atan2, atanh, copysign, cos,  # noqa: F401
                  cosh, erf, erfc, exp, expm1, fabs, hypot, log, log1p, log2, log10, sin, sinh,
                  sqrt, tan)

from numpy import cbrt, ceil, exp2, floor, fmod, rint, trunc  # noqa: F401
from typing import Callable, NamedTuple, Optional, Tuple

from ._prims import exp as vexp  # noqa: F401  (rules.BLOCK_MATH; compiled: kernels/_native)
from .layout import ERR_INDEX, ERR_TARGET  # noqa: F401  (the block rules' error codes)
from .rules import template

nan = float("nan")
inf = float("inf")


class Op(NamedTuple):
    name: str
    arity: int                       # 0 leaf, 1 unary, 2 binary; -1: operands listed in P
    kind: str                        # "leaf" | "map" | "block"
    fwd: Optional[Callable] = None   # the forward rule (kernels/rules.py)
    da: Optional[Callable] = None    # map rows: d/da contribution; block rows: unused
    db: Optional[Callable] = None
    bwd: Optional[Callable] = None   # block rows: the backward statements
    jvp: Optional[Callable] = None   # block rows: the tangent statements (tangents in grad)
    domain: Tuple[Tuple[float, float], ...] = ((-3.0, 3.0), (-3.0, 3.0))
    avoid: str = ""                  # where central differences are invalid (kinks, poles)
    kinks: Tuple[Tuple[float, ...], ...] = ()   # exact (a, [b,] da, [db]) at kinks
    doc: str = ""
    inline: bool = False             # block rows: written into the interpreter loop instead
                                     # of called (small rows common in scalar graphs)
    tangent_reads: Optional[str] = None  # block rows: the values their jvp reads (an hvp's
    # lean sweep computes only those): None, its own value and scratch and its operands'
    # (the safe default); "", none (it moves tangents); "cross", each operand's value when
    # the other operand has a tangent (a product: tY = tA B + A tB)
    lanes_of: Optional[str] = None   # a lanes row: it runs the nodes of row ``lanes_of`` for L
    # samples at once, sample innermost (bn.vmap's wide tapes, burnumba/_lanes.py); the tracer
    # never writes one, and it has no tangent rule
    fits: Optional[Callable] = None  # lanes rows: fits(params, need_a, need_b, blas), whether a
    # node of ``lanes_of`` with these integer parameters gives every sample the bits that its
    # own sweep gives (the same sums in the same order: not where that sweep calls BLAS)

    @property
    def special(self):
        """The row's IEEE special-value cases (``ieee_cases.CASES``, by name; () for none)."""
        from .ieee_cases import CASES          # data only tests read: loaded when asked
        return CASES.get(self.name, ())

    def linked(self, tensor_rows):
        """Whether a kernel calls this row's compiled functions: a block row unless it is
        written inline, a map row when some node of it is a tensor (``tensor_rows``, names);
        a map row used only on scalars runs inline, so its loops are neither compiled nor
        linked."""
        return ((self.kind == "block" and not self.inline)
                or (self.kind == "map" and self.name in tensor_rows))


_POS = ((0.2, 4.0),)          # strictly positive domain for log, sqrt, ...


# tanh through one exp, faster than libm's tanh (which is a call, so its loops never
# vectorize): tanh|a| = 2 / (1 + exp(-2|a|)) - 1, which never overflows and is within 5e-15
# relative for |a| >= 0.05; below that, the odd Taylor series to a^9 (truncation < 1e-15
# relative). With the map loops' own exp (kernels/_prims.py) LLVM turns the choice into a
# select and the loop vectorizes (65,536 doubles: 116 us, against 335 us through libm).
def _tanh(a):
    mag = fabs(a)
    sq = a * a
    small = mag * (1.0 + sq * (-1.0 / 3.0 + sq * (2.0 / 15.0 + sq * (
        -17.0 / 315.0 + sq * (62.0 / 2835.0)))))
    big = 2.0 / (1.0 + exp(-2.0 * mag)) - 1.0
    return copysign(big if mag >= 0.05 else small, a)


# sigmoid with one exp that never overflows: e = exp(-|a|), then 1 / (1 + e) for a >= 0 and
# e / (1 + e) below (exp(a) / (1 + exp(a)) there, without cancellation)
def _sigmoid(a):
    e = exp(-fabs(a))
    return (1.0 if a >= 0.0 else e) / (1.0 + e)


# gelu's tanh form: a * sigmoid(2u), u = sqrt(2 / pi) (a + 0.044715 a^3); its derivative
# sg + 2 a sg (1 - sg) u', u' = sqrt(2 / pi) (1 + 3 * 0.044715 a^2)
def _gelu_tanh(a):
    return a / (1.0 + exp(-2.0 * 0.7978845608028654 * (a + 0.044715 * a * a * a)))


def _gelu_tanh_da(a, y, g):
    # sg = y / a, the forward's output over its input, so the backward runs no exp and its
    # loop vectorizes. Near 0, where y = a sg may underflow, sg = 1/2 + u/2 instead (exact
    # in double for |a| < 1e-8: the next term, u^3 / 6, is below 1e-24). Both branches are
    # guarded, so a traced second derivative never differentiates 0 / 0
    big = fabs(a) >= 1e-8
    sg = (y if big else 0.5 + 0.3989422804014327 * a) / (a if big else 1.0)
    return g * (sg + 2.0 * a * sg * (1.0 - sg) * 0.7978845608028654 * (1.0 + 0.134145 * a * a))


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
    for o in range(outer):
        for k in range(inner):
            acc = 0.0
            for j in range(m):
                acc += val[oa + (o * m + j) * inner + k]
            val[oy + o * inner + k] = c * acc


def _sum_axis_bwd(i, oy, c, p, P, off, a0, need, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    if need[ia]:
        for o in range(outer):
            for k in range(inner):
                gk = c * grad[oy + o * inner + k]
                for j in range(m):
                    grad[oa + (o * m + j) * inner + k] += gk


def _sum_axis_jvp(i, oy, c, p, P, off, a0, grad):
    outer, m, inner, ia, oa = _axis(i, p, P, a0, off)
    for o in range(outer):
        for k in range(inner):
            acc = 0.0
            for j in range(m):
                acc += grad[oa + (o * m + j) * inner + k]
            grad[oy + o * inner + k] = c * acc


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
                # g / ties to each maximum; a NaN lane has no element equal to its NaN maximum,
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
            # the tangent of the maxima, averaged (JAX's balanced rule); a NaN lane: 0 / 0
            grad[oy + o * inner + k] = acc / ties


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
            if y >= -1.7976931348623157e308:        # a lane of -inf (fully masked) stays 0
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
    return oy


def _scatter_fwd(i, oy, ny, c, p, P, off, a0, val):
    oy = _scattered(i, oy, ny, c, p, P, off, a0, val)


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
    oy = _scattered(i, oy, ny, c, p, P, off, a0, grad)


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
# float64 tape (bit 1 of matmul_lanes' immediate c, burnumba/_lanes.py) a slot holds what a
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


def _always_fits(params, need_a, need_b, blas):
    """A row whose sweeps loop whatever the node's sizes."""
    return True


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

# logaddexp and logaddexp2 (numpy's npy_logaddexp / npy_logaddexp2, step for step)
def _logaddexp(a, b):
    d = a - b
    return a + 0.6931471805599453 if a == b else (
        a + log1p(exp(-d)) if d > 0.0 else (b + log1p(exp(d)) if d <= 0.0 else d))


def _logaddexp_da(a, b, y, g):
    return g * (exp(a - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if a > b else (0.0 if a < b else nan))))


def _logaddexp_db(a, b, y, g):
    return g * (exp(b - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if b > a else (0.0 if b < a else nan))))


def _logaddexp2(a, b):
    d = a - b
    return a + 1.0 if a == b else (
        a + 1.4426950408889634 * log1p(exp2(-d)) if d > 0.0 else (
            b + 1.4426950408889634 * log1p(exp2(d)) if d <= 0.0 else d))


def _logaddexp2_da(a, b, y, g):
    return g * (exp2(a - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if a > b else (0.0 if a < b else nan))))


def _logaddexp2_db(a, b, y, g):
    return g * (exp2(b - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if b > a else (0.0 if b < a else nan))))


# remainder and its d/db: minus the quotient q that numpy's remainder used, y = a - q b.
# t = trunc(a / b) is fmod's quotient; fmod's result m (the sign of a, or 0, or NaN) was
# moved by b (q = t - 1) when it was not 0 and its sign differs from b's: then y != 0 and a,
# b differ in sign, or y is NaN. That is JAX's rule (trunc and its correction) written with
# y instead of a second fmod, so that traced derivatives need no fmod row.
def _remainder(a, b):
    m = fmod(a, b)
    return m if b == 0.0 else (
        (m + b if (b < 0.0) != (m < 0.0) else m) if m != 0.0 else copysign(0.0, b))


def _remainder_db(a, b, y, g):
    q = a / b
    t = floor(q) if q >= 0.0 else ceil(q)
    return -g * (t - (1.0 if y != y or (y != 0.0 and (a < 0.0) != (b < 0.0)) else 0.0))


# -- more ufuncs (#11): fmod's d/db and floor_divide, as numpy's npy_divmod step for step.
# fmod(a, b) = a - t b with t = trunc(a / b): d/db = -t, which JAX writes -sign(q) floor(|q|)
def _fmod_db(a, b, g):
    q = a / b
    t = floor(q) if q >= 0.0 else ceil(q)
    return -g * t


# numpy's floor_divide: b = 0 gives a / b (+-inf, or NaN for 0 / 0); otherwise the quotient
# of a - fmod(a, b), moved down by 1 where fmod's sign differs from b's, floored and snapped
# to the nearest integer (1 // 0.1 is 9.0, not floor(1 / 0.1) = 10.0); a zero quotient takes
# the sign of a / b
def _floor_divide(a, b):
    m = fmod(a, b)
    d0 = (a - m) / b
    d = d0 - 1.0 if m != 0.0 and (b < 0.0) != (m < 0.0) else d0
    f = floor(d)
    return a / b if b == 0.0 else (
        (f + 1.0 if d - f > 0.5 else f) if d != 0.0 else copysign(0.0, a / b))


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
        # y / a, so exact where a lane holds zeros (one zero: the product of the others at
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
                grad[oy + q] = grad[oy + q - inner] * val[oa + q] + val[oy + q - inner] * grad[oa + q]


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
            # heapsort of the lane's indices in place (no work space): a max-heap in the
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


# -- linalg: the factorizations are plain loops. The kernels are compiled ahead of time and
# loaded without numba, so numba's np.linalg (LAPACK through scipy's function pointers, taken
# when numba is imported) is not available inside a row. These are the textbook algorithms,
# O(n^3) per matrix without blocking: right for the small matrices people differentiate
# (n up to a few dozen), not a LAPACK replacement. Each row keeps its work space at the end
# of its own value slice (after the result), so that no other buffer is needed; the tracer
# hands out a view of the result part only.
@template
def _lu(xa, w, n, val):
    """LU with partial pivoting of the n x n matrix at xa into the work space at w: P A = L U,
    L unit lower and U upper stored together, the row order P at w + n * n (as floats: row
    r of P A is row P[r] of A). sing: 0, or 1 at a zero pivot (exactly singular), or 2 when
    an entry is not finite; odd: the parity of the row swaps."""
    wp = w + n * n
    sing = 0
    odd = 0
    for e in range(n * n):
        val[w + e] = val[xa + e]
        if not fabs(val[xa + e]) < inf:
            sing = 2
    for r in range(n):
        val[wp + r] = r
    for k0 in range(n if sing == 0 else 0):
        piv = k0
        big = fabs(val[w + k0 * n + k0])
        for r in range(k0 + 1, n):
            if fabs(val[w + r * n + k0]) > big:
                big = fabs(val[w + r * n + k0])
                piv = r
        if piv != k0:
            odd = 1 - odd
            for e in range(n):
                sw = val[w + k0 * n + e]
                val[w + k0 * n + e] = val[w + piv * n + e]
                val[w + piv * n + e] = sw
            sw = val[wp + k0]
            val[wp + k0] = val[wp + piv]
            val[wp + piv] = sw
        if big == 0.0:
            sing = 1
        else:
            d = val[w + k0 * n + k0]
            for r in range(k0 + 1, n):
                f = val[w + r * n + k0] / d
                val[w + r * n + k0] = f
                for e in range(k0 + 1, n):
                    val[w + r * n + e] -= f * val[w + k0 * n + e]
    return sing, odd


@template
def _lu_solve(w, n, z, k, val):
    """Solve L U X = R in place, R (n x k, row-major, already in the row order P) at z."""
    for j in range(k):
        for r in range(n):
            s = val[z + r * k + j]
            for e in range(r):
                s -= val[w + r * n + e] * val[z + e * k + j]
            val[z + r * k + j] = s
        for r in range(n - 1, -1, -1):
            s = val[z + r * k + j]
            for e in range(r + 1, n):
                s -= val[w + r * n + e] * val[z + e * k + j]
            val[z + r * k + j] = s / val[w + r * n + r]
    return z


@template
def _lu_solve_t(w, n, z, k, val):
    """Solve (L U)^T V = R in place (R, n x k, at z). A^T Z = R is then Z[P[q]] = V[q]:
    A^T = U^T L^T P."""
    for j in range(k):
        for r in range(n):
            s = val[z + r * k + j]
            for e in range(r):
                s -= val[w + e * n + r] * val[z + e * k + j]
            val[z + r * k + j] = s / val[w + r * n + r]
        for r in range(n - 1, -1, -1):
            s = val[z + r * k + j]
            for e in range(r + 1, n):
                s -= val[w + e * n + r] * val[z + e * k + j]
            val[z + r * k + j] = s
    return z


@template
def _solve(i, p, P, a0, a1, off, oy):
    """solve's sizes: nb systems A (n, n) X = B (n, k); the work space after X holds LU
    (n * n), the row order (n) and a right-hand side (n * k)."""
    nb = P[p]
    n = P[p + 1]
    k = P[p + 2]
    ia = a0[i]
    ib = a1[i]
    oa = off[ia]
    ob = off[ib]
    w = oy + nb * n * k
    wp = w + n * n
    z = wp + n
    return nb, n, k, ia, ib, oa, ob, w, wp, z


def _solve_fwd(i, oy, p, P, off, a0, a1, val):
    nb, n, k, ia, ib, oa, ob, w, wp, z = _solve(i, p, P, a0, a1, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        xb = ob + bt * n * k
        xy = oy + bt * n * k
        for r in range(n):
            q = int(val[wp + r])
            for j in range(k):
                val[z + r * k + j] = val[xb + q * k + j]
        if sing == 0:
            z = _lu_solve(w, n, z, k, val)
        for e in range(n * k):
            val[xy + e] = nan if sing else val[z + e]


def _solve_bwd(i, oy, p, P, off, a0, a1, need, val, grad):
    # dB = A^-T G, dA = -dB X^T
    nb, n, k, ia, ib, oa, ob, w, wp, z = _solve(i, p, P, a0, a1, off, oy)
    for bt in range(nb if need[ia] or need[ib] else 0):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        xb = ob + bt * n * k
        xy = oy + bt * n * k
        for e in range(n * k):
            val[z + e] = grad[xy + e]
        if sing == 0:
            z = _lu_solve_t(w, n, z, k, val)
        for q in range(n):
            r = int(val[wp + q])
            for j in range(k):
                dz = nan if sing else val[z + q * k + j]
                if need[ib]:
                    grad[xb + r * k + j] += dz
                if need[ia]:
                    for e in range(n):
                        grad[xa + r * n + e] -= dz * val[xy + e * k + j]


def _solve_jvp(i, oy, p, P, off, a0, a1, need, val, grad):
    # tX = A^-1 (tB - tA X)
    nb, n, k, ia, ib, oa, ob, w, wp, z = _solve(i, p, P, a0, a1, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        xb = ob + bt * n * k
        xy = oy + bt * n * k
        for r in range(n):
            q = int(val[wp + r])
            for j in range(k):
                s = grad[xb + q * k + j] if need[ib] else 0.0
                if need[ia]:
                    for e in range(n):
                        s -= grad[xa + q * n + e] * val[xy + e * k + j]
                val[z + r * k + j] = s
        if sing == 0:
            z = _lu_solve(w, n, z, k, val)
        for e in range(n * k):
            grad[xy + e] = nan if sing else val[z + e]


@template
def _square(i, p, P, a0, off, oy):
    """A unary linalg row's sizes: nb matrices (n, n) at oa; its work space starts at w,
    which the caller sets past the result."""
    nb = P[p]
    n = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    w = oy
    return nb, n, ia, oa, w


def _slogdet_fwd(i, oy, p, P, off, a0, val):
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + 2 * nb
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        sg = -1.0 if odd else 1.0
        la = 0.0
        for r in range(n if sing == 0 else 0):
            d = val[w + r * n + r]
            if d < 0.0:
                sg = -sg
            la += log(fabs(d))
        val[oy + 2 * bt] = sg if sing == 0 else (0.0 if sing == 1 else nan)
        val[oy + 2 * bt + 1] = la if sing == 0 else (-inf if sing == 1 else nan)


def _slogdet_bwd(i, oy, p, P, off, a0, need, val, grad):
    # d log|det A| = A^-T; the sign is piecewise constant (gradient 0). A^-T is built a
    # column at a time, A^T z = e_c. A singular matrix gets NaN even at a zero upstream
    # gradient: det = sign * exp(log|det|) passes 0 there, and its true gradient (the
    # cofactors) is not 0.
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + 2 * nb
    wp = w + n * n
    z = wp + n
    k = 1
    for bt in range(nb if need[ia] else 0):
        gl = grad[oy + 2 * bt + 1]
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        for cc in range(n):
            for r in range(n):
                val[z + r] = 1.0 if r == cc else 0.0
            if sing == 0:
                z = _lu_solve_t(w, n, z, k, val)
            for q in range(n):
                r = int(val[wp + q])
                grad[xa + r * n + cc] += nan if sing else gl * val[z + q]


def _slogdet_jvp(i, oy, p, P, off, a0, val, grad):
    # t log|det A| = tr(A^-1 tA) = sum(A^-T * tA); the sign's tangent is 0
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + 2 * nb
    wp = w + n * n
    z = wp + n
    k = 1
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        acc = 0.0
        for cc in range(n):
            for r in range(n):
                val[z + r] = 1.0 if r == cc else 0.0
            if sing == 0:
                z = _lu_solve_t(w, n, z, k, val)
            for q in range(n):
                acc += grad[xa + int(val[wp + q]) * n + cc] * val[z + q]
        grad[oy + 2 * bt] = 0.0
        grad[oy + 2 * bt + 1] = nan if sing else acc


def _cholesky_fwd(i, oy, p, P, off, a0, val):
    # Cholesky-Banachiewicz on A's lower triangle (numpy reads only that); a pivot that is
    # not positive (or NaN) makes the whole matrix NaN, where numpy raises LinAlgError
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        xy = oy + bt * n * n
        bad = 0
        for r in range(n):
            for cc in range(n):
                if cc > r:
                    val[xy + r * n + cc] = 0.0
                else:
                    s = val[xa + r * n + cc]
                    for e in range(cc):
                        s -= val[xy + r * n + e] * val[xy + cc * n + e]
                    if cc < r:
                        val[xy + r * n + cc] = s / val[xy + cc * n + cc]
                    elif s > 0.0 and s < inf:
                        val[xy + r * n + r] = sqrt(s)
                    else:
                        bad = 1
                        val[xy + r * n + r] = 1.0
        for e in range(n * n if bad else 0):
            val[xy + e] = nan


def _cholesky_bwd(i, oy, p, P, off, a0, need, val, grad):
    # Murray (arXiv:1602.07527), as HIPS autograd: S = L^-T Phi(L^T G) L^-1, Phi the lower
    # triangle with its diagonal halved; A gets the symmetric part (S + S^T) / 2
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + nb * n * n
    for bt in range(nb if need[ia] else 0):
        xa = oa + bt * n * n
        xy = oy + bt * n * n
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(r, n if cc <= r else 0):
                    s += val[xy + e * n + r] * grad[xy + e * n + cc]
                val[w + r * n + cc] = 0.5 * s if cc == r else s
        for r in range(n):
            # row r times L^-1: x L = row, by back substitution
            for cc in range(n - 1, -1, -1):
                s = val[w + r * n + cc]
                for e in range(cc + 1, n):
                    s -= val[w + r * n + e] * val[xy + e * n + cc]
                val[w + r * n + cc] = s / val[xy + cc * n + cc]
        for cc in range(n):
            # L^-T times column cc: L^T x = column, by back substitution
            for r in range(n - 1, -1, -1):
                s = val[w + r * n + cc]
                for e in range(r + 1, n):
                    s -= val[xy + e * n + r] * val[w + e * n + cc]
                val[w + r * n + cc] = s / val[xy + r * n + r]
        for r in range(n):
            for cc in range(n):
                grad[xa + r * n + cc] += 0.5 * (val[w + r * n + cc] + val[w + cc * n + r])


def _cholesky_jvp(i, oy, p, P, off, a0, val, grad):
    # tL = L Phi(L^-1 sym(tA) L^-T), sym(t) = (t + t^T) / 2: the tangent map whose adjoint
    # is the backward above
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + nb * n * n
    for bt in range(nb):
        xa = oa + bt * n * n
        xy = oy + bt * n * n
        for cc in range(n):
            # L^-1 sym(tA), column by column: forward substitution
            for r in range(n):
                s = 0.5 * (grad[xa + r * n + cc] + grad[xa + cc * n + r])
                for e in range(r):
                    s -= val[xy + r * n + e] * val[w + e * n + cc]
                val[w + r * n + cc] = s / val[xy + r * n + r]
        for r in range(n):
            # times L^-T: row x solves L x^T = row^T, forward substitution along the row
            for cc in range(n):
                s = val[w + r * n + cc]
                for e in range(cc):
                    s -= val[xy + cc * n + e] * val[w + r * n + e]
                val[w + r * n + cc] = s / val[xy + cc * n + cc]
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(cc, r + 1):
                    s += val[xy + r * n + e] * val[w + e * n + cc] * (0.5 if e == cc else 1.0)
                grad[xy + r * n + cc] = s


@template
def _eigh(i, p, P, a0, off, oy):
    """eigh's sizes: nb matrices (n, n); the output is, per matrix, the n eigenvalues then
    the (n, n) eigenvectors (columns); two (n, n) work matrices follow at w and w2."""
    nb = P[p]
    n = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    w = oy + nb * (n + n * n)
    w2 = w + n * n
    return nb, n, ia, oa, w, w2


def _eigh_fwd(i, oy, c, p, P, off, a0, val):
    # cyclic Jacobi on the symmetric matrix of A's lower triangle (numpy's UPLO='L'; the
    # front end transposes for 'U'): rotations in each plane (r, q) until the off-diagonal
    # sum of squares is at most c times the diagonal's (c = eps^2 of the dtype), at most 60
    # sweeps. Eigenvalues ascending, as numpy; each eigenvector is normalised so that its
    # entry of largest magnitude is positive (LAPACK's signs are arbitrary).
    nb, n, ia, oa, w, w2 = _eigh(i, p, P, a0, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        xw = oy + bt * (n + n * n)
        xu = xw + n
        bad = 0
        for r in range(n):
            for cc in range(n):
                v = val[xa + r * n + cc] if cc <= r else val[xa + cc * n + r]
                if not fabs(v) < inf:
                    bad = 1
                val[w + r * n + cc] = v
                val[xu + r * n + cc] = 1.0 if r == cc else 0.0
        for sweep in range(60 if bad == 0 else 0):
            od = 0.0
            dg = 0.0
            for r in range(n):
                for cc in range(n):
                    v = val[w + r * n + cc]
                    if r == cc:
                        dg += v * v
                    else:
                        od += v * v
            if od <= c * dg:
                break
            for r in range(n - 1):
                for q in range(r + 1, n):
                    apq = val[w + r * n + q]
                    if apq != 0.0:
                        th = (val[w + q * n + q] - val[w + r * n + r]) / (2.0 * apq)
                        t = 1.0 / (fabs(th) + sqrt(th * th + 1.0))
                        if th < 0.0:
                            t = -t
                        cs = 1.0 / sqrt(t * t + 1.0)
                        sn = t * cs
                        for e in range(n):
                            x1 = val[w + e * n + r]
                            x2 = val[w + e * n + q]
                            val[w + e * n + r] = cs * x1 - sn * x2
                            val[w + e * n + q] = sn * x1 + cs * x2
                        for e in range(n):
                            x1 = val[w + r * n + e]
                            x2 = val[w + q * n + e]
                            val[w + r * n + e] = cs * x1 - sn * x2
                            val[w + q * n + e] = sn * x1 + cs * x2
                        for e in range(n):
                            x1 = val[xu + e * n + r]
                            x2 = val[xu + e * n + q]
                            val[xu + e * n + r] = cs * x1 - sn * x2
                            val[xu + e * n + q] = sn * x1 + cs * x2
                        val[w + r * n + q] = 0.0
                        val[w + q * n + r] = 0.0
        for r in range(n):
            val[xw + r] = val[w + r * n + r]
        for r in range(n):
            m = r
            for q in range(r + 1, n):
                if val[xw + q] < val[xw + m]:
                    m = q
            if m != r:
                sw = val[xw + r]
                val[xw + r] = val[xw + m]
                val[xw + m] = sw
                for e in range(n):
                    sw = val[xu + e * n + r]
                    val[xu + e * n + r] = val[xu + e * n + m]
                    val[xu + e * n + m] = sw
        for cc in range(n):
            m = 0
            for r in range(1, n):
                if fabs(val[xu + r * n + cc]) > fabs(val[xu + m * n + cc]):
                    m = r
            if val[xu + m * n + cc] < 0.0:
                for r in range(n):
                    val[xu + r * n + cc] = -val[xu + r * n + cc]
        for e in range(n + n * n if bad else 0):
            val[xw + e] = nan


def _eigh_bwd(i, oy, p, P, off, a0, need, val, grad):
    # HIPS autograd's rule: T = U (diag(gw) + F o (U^T gU)) U^T, F[r, q] = 1 / (w[q] - w[r])
    # off the diagonal, the eigenvector term only when gU is not all zero (so a function
    # of the eigenvalues alone has a gradient at repeated eigenvalues), and a zero entry of
    # U^T gU stays 0 (two repeated eigenvalues whose vectors get no gradient, as svd's null
    # space, give no NaN); otherwise repeated eigenvalues give inf / NaN, as autograd. A's
    # lower triangle was read, so it gets T's diagonal and T[r, q] + T[q, r] below it
    nb, n, ia, oa, w, w2 = _eigh(i, p, P, a0, off, oy)
    for bt in range(nb if need[ia] else 0):
        xa = oa + bt * n * n
        xw = oy + bt * (n + n * n)
        xu = xw + n
        vecs = 0
        for e in range(n * n):
            if grad[xu + e] != 0.0:
                vecs = 1
        for r in range(n):
            for cc in range(n):
                s = 0.0
                if r == cc:
                    s = grad[xw + r]
                elif vecs:
                    for e in range(n):
                        s += val[xu + e * n + r] * grad[xu + e * n + cc]
                    if s != 0.0:
                        s = s / (val[xw + cc] - val[xw + r])
                val[w + r * n + cc] = s
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    s += val[xu + r * n + e] * val[w + e * n + cc]
                val[w2 + r * n + cc] = s
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    s += val[w2 + r * n + e] * val[xu + cc * n + e]
                val[w + r * n + cc] = s
        for r in range(n):
            for cc in range(r + 1):
                grad[xa + r * n + cc] += val[w + r * n + r] if r == cc else (
                    val[w + r * n + cc] + val[w + cc * n + r])


def _eigh_jvp(i, oy, p, P, off, a0, val, grad):
    # M = U^T tS U, tS the symmetric tangent of A's lower triangle: tw = diag(M),
    # tU = U (F o M) with F as in the backward, 0 on the diagonal and between equal
    # eigenvalues (any rotation inside their eigenspace is a valid tangent: this one
    # leaves it still, so that svd's null space, a repeated 0, has finite tangents)
    nb, n, ia, oa, w, w2 = _eigh(i, p, P, a0, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        xw = oy + bt * (n + n * n)
        xu = xw + n
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    ts = grad[xa + r * n + e] if e <= r else grad[xa + e * n + r]
                    s += ts * val[xu + e * n + cc]
                val[w2 + r * n + cc] = s
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    s += val[xu + e * n + r] * val[w2 + e * n + cc]
                val[w + r * n + cc] = s
        for r in range(n):
            grad[xw + r] = val[w + r * n + r]
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    if val[xw + cc] != val[xw + e]:
                        s += val[xu + r * n + e] * val[w + e * n + cc] / (
                            val[xw + cc] - val[xw + e])
                grad[xu + r * n + cc] = s


ROWS = (
    # -- leaves: their slices are written by the caller (inputs) or at trace time (consts)
    Op("input", 0, "leaf", doc="an argument of the traced function"),
    Op("const", 0, "leaf", doc="a value captured at trace time, stored once in the tape"),

    # -- arithmetic
    Op("add", 2, "map", lambda a, b: a + b, da=lambda g: g, db=lambda g: g),
    Op("subtract", 2, "map", lambda a, b: a - b, da=lambda g: g, db=lambda g: -g),
    Op("multiply", 2, "map", lambda a, b: a * b, da=lambda b, g: g * b, db=lambda a, g: g * a),
    Op("divide", 2, "map", lambda a, b: a / b,
       da=lambda b, g: g / b, db=lambda b, y, g: -g * y / b,
       avoid="abs(b) < 0.3"),
    Op("negative", 1, "map", lambda a: -a, da=lambda g: -g),

    # -- powers. The tracer picks the row: x**2 -> square, x**3 -> cube, other integer
    # exponents -> powi (pow with an integral exponent: negative bases too), real exponents -> pow_c, x**y -> power.
    Op("square", 1, "map", lambda a: a * a, da=lambda a, g: 2.0 * a * g),
    Op("cube", 1, "map", lambda a: a * a * a, da=lambda a, g: 3.0 * a * a * g),
    Op("powi", 1, "map", lambda a, c: a ** c, da=lambda a, c, g: c * a ** (c - 1.0) * g,
       domain=((0.3, 3.0),), doc="a ** c for an integer c != 0 stored as the immediate"),
    Op("pow_c", 1, "map", lambda a, c: a ** c,
       da=lambda a, c, g: c * a ** (c - 1.0) * g, domain=_POS,
       doc="a ** c for a real constant c; a > 0"),
    # d/db a ** b = y log a; at a = 0 the log factor is taken as 0 (JAX's _replace_zero), so
    # the true derivative 0 comes out instead of 0 * -inf = NaN
    Op("power", 2, "map", lambda a, b: a ** b, da=lambda a, b, g: b * a ** (b - 1.0) * g,
       db=lambda a, y, g: g * ((log(a) if a != 0.0 else 0.0) * y),
       domain=((0.2, 3.0), (-2.0, 2.0)), doc="a ** b with both traced; a > 0"),

    # -- transcendental
    Op("exp", 1, "map", lambda a: exp(a), da=lambda y, g: g * y),
    Op("log", 1, "map", lambda a: log(a), da=lambda a, g: g / a, domain=_POS),
    Op("sqrt", 1, "map", lambda a: sqrt(a), da=lambda y, g: 0.5 * g / y, domain=_POS),
    Op("reciprocal", 1, "map", lambda a: 1.0 / a, da=lambda y, g: -g * y * y,
       avoid="abs(a) < 0.3"),
    # -0.5 y / a rather than -0.5 y^3: at a = -0.0, y = -inf and the derivative is -inf (JAX)
    Op("rsqrt", 1, "map", lambda a: 1.0 / sqrt(a),
       da=lambda a, y, g: g * (-0.5 * (y / a)), domain=_POS),
    # tanh through one exp (_tanh)
    Op("tanh", 1, "map", _tanh,
       da=lambda y, g: g * (1.0 - y * y)),
    Op("sigmoid", 1, "map", _sigmoid,
       da=lambda y, g: g * y * (1.0 - y)),
    # gelu: the tanh form (GPT-2's, jax.nn.gelu's default), through 0.5 (1 + tanh(u)) =
    # sigmoid(2u), which needs one exp instead of a tanh (2.5x faster in numba), and the
    # exact erf form
    Op("gelu_tanh", 1, "map", _gelu_tanh, da=_gelu_tanh_da),
    # 1 + erf(a / sqrt 2) written erfc(-a / sqrt 2): no cancellation for a < -6 (JAX's form)
    Op("gelu_erf", 1, "map", lambda a: 0.5 * a * erfc(a * -0.7071067811865476),
       da=lambda a, g: g * (0.5 * erfc(a * -0.7071067811865476)
                            + a * 0.3989422804014327 * exp(-0.5 * a * a))),
    Op("sin", 1, "map", lambda a: sin(a), da=lambda a, g: g * cos(a)),
    Op("cos", 1, "map", lambda a: cos(a), da=lambda a, g: -g * sin(a)),

    # erf, which the traced derivatives of gelu_erf need (erfc z = 1 - erf z there)
    Op("erf", 1, "map", lambda a: erf(a), da=lambda a, g: g * 1.1283791670955126 * exp(-a * a)),
    # stop_gradient(a) = a with no derivative: a constant for every transformation, as
    # jax.lax.stop_gradient
    Op("stop_gradient", 1, "map", lambda a: a,
       doc="the value of a, seen as a constant by grad, jvp and the rest"),

    # -- piecewise. Conventions at kinks: relu'(0) = 0 (torch, JAX); abs'(0) = 0 (torch,
    # autograd; JAX gives 1); maximum / minimum split the gradient evenly at a tie (JAX). At
    # NaN: relu and maximum / minimum give NaN values (numpy) and gradient 0 (JAX);
    # abs'(NaN) is NaN, as autograd (JAX gives -1, torch 0): a NaN is shown, not hidden.
    Op("relu", 1, "map", lambda a: a if a > 0.0 or a != a else 0.0,
       da=lambda a, g: g if a > 0.0 else 0.0,
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0),)),
    Op("absolute", 1, "map", lambda a: fabs(a),
       da=lambda a, g: g if a > 0.0 else (-g if a < 0.0 else (0.0 if a == 0.0 else a)),
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0),)),
    Op("maximum", 2, "map", lambda a, b: a if a > b or a != a else b,
       da=lambda a, b, g: g if a > b else (0.5 * g if a == b else 0.0),
       db=lambda a, b, g: g if b > a else (0.5 * g if a == b else 0.0),
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.5, 0.5), (-0.7, -0.7, 0.5, 0.5))),
    Op("minimum", 2, "map", lambda a, b: a if a < b or a != a else b,
       da=lambda a, b, g: g if a < b else (0.5 * g if a == b else 0.0),
       db=lambda a, b, g: g if b < a else (0.5 * g if a == b else 0.0),
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.5, 0.5), (-0.7, -0.7, 0.5, 0.5))),

    # -- comparisons give 0.0 / 1.0 masks and carry no gradient
    Op("greater", 2, "map", lambda a, b: 1.0 if a > b else 0.0),
    Op("greater_equal", 2, "map", lambda a, b: 1.0 if a >= b else 0.0),
    Op("less", 2, "map", lambda a, b: 1.0 if a < b else 0.0),
    Op("less_equal", 2, "map", lambda a, b: 1.0 if a <= b else 0.0),
    Op("equal", 2, "map", lambda a, b: 1.0 if a == b else 0.0),
    Op("not_equal", 2, "map", lambda a, b: 1.0 if a != b else 0.0),

    # -- where(cond, a, b): cond is the node P[p]. Each operand is as large as the output, a
    # scalar, or a tile repeated over it (a causal mask over a batch of heads): its index
    # wraps at its size.
    Op("where", 2, "block", doc="elementwise cond ? a : b; no gradient into cond",
       fwd=_where_fwd, bwd=_where_bwd,
       jvp=_where_jvp),

    # -- gather: y[j] = val[P[p + j]], absolute positions in the value buffer fixed at
    # trace time. One row covers indexing, slicing, transposes, broadcast_to, stack and
    # concatenate, and packing scalar nodes into a tensor. Its backward scatters (adds),
    # so repeated positions accumulate. Sources with need == 0 live in slices whose
    # gradient is never read, so adding into them is harmless.
    Op("gather", -1, "block", doc="y[j] = val[P[p + j]]",
       fwd=_gather_fwd, bwd=_gather_bwd,
       jvp=_gather_jvp, inline=True, tangent_reads=""),

    # -- fused n-ary reductions over a list of nodes P[p+1 : p+1+m], m = P[p]; each node may
    # be a scalar or a tensor. sum is scaled by c: c = 1 for sum, 1 / count for mean.
    Op("sum", -1, "block", doc="c * (sum of every element of the listed nodes)",
       fwd=_sum_fwd, bwd=_sum_bwd,
       jvp=_sum_jvp, inline=True),
    Op("sumsq", -1, "block", doc="c * (sum of squares of every element of the listed nodes)",
       fwd=_sumsq_fwd, bwd=_sumsq_bwd,
       jvp=_sumsq_jvp),
    # inner product of two equally shaped lists of nodes, x = P[p+1 : p+1+m] and
    # w = P[p+1+m : p+1+2m], plus an optional bias node a0[i] (-1 for none): BurTorch's
    # fused neuron. The same node may appear in both lists (x . x).
    Op("inner", -1, "block", doc="sum_k x_k . w_k (+ bias)",
       fwd=_inner_fwd, bwd=_inner_bwd,
       jvp=_inner_jvp),

    # -- tensor rows ---------------------------------------------------------------------
    # sum over one axis, scaled by c (c = 1 / m for mean)
    Op("sum_axis", 1, "block", doc="y[o, k] = c * sum_j a[o, j, k]", fwd=_sum_axis_fwd, bwd=_sum_axis_bwd,
       jvp=_sum_axis_jvp),
    # max over one axis (c = 1), or min (c = -1: y = -max(-a)). NaN propagates, as numpy.
    # The gradient is split evenly among tied maxima, as jax and autograd do.
    Op("max_axis", 1, "block", doc="y[o, k] = c * max_j (c * a[o, j, k])", fwd=_max_axis_fwd, bwd=_max_axis_bwd,
       jvp=_max_axis_jvp),
    # softmax along one axis, stable: exp(a - max) / sum; the backward reuses y
    Op("softmax", 1, "block", doc="y = exp(a - max) / sum(exp(a - max)) along the axis",
       fwd=_softmax_fwd, bwd=_softmax_bwd,
       jvp=_softmax_jvp, inline=True),
    # attention's scale, causal mask and softmax in one row: x is (..., T, T), row t of each
    # (T, T) block keeps columns j <= t, y = softmax(c * x) over those and 0 beyond, c > 0.
    # The masked half is never exponentiated. dx_j = c * y_j * (g_j - sum_k g_k y_k), j <= t.
    Op("causal_softmax", 1, "block", doc="softmax(c * a) over j <= t in each (T, T) block",
       fwd=_causal_softmax_fwd, bwd=_causal_softmax_bwd,
       jvp=_causal_softmax_jvp),
    Op("log_softmax", 1, "block", doc="y = a - logsumexp(a) along the axis", fwd=_log_softmax_fwd, bwd=_log_softmax_bwd,
       jvp=_log_softmax_jvp),
    # logsumexp over one axis (the output drops the axis), shifted by the lane's maximum when
    # it is finite (JAX's jax.nn.logsumexp): an +inf input gives +inf, a lane of -inf gives
    # -inf (log 0), NaN propagates. The gradient is exp(a - y); a lane of -inf (fully masked)
    # passes none (JAX and torch give NaN there).
    Op("logsumexp", 1, "block", doc="y[o, k] = log sum_j exp(a[o, j, k])", fwd=_logsumexp_fwd, bwd=_logsumexp_bwd,
       jvp=_logsumexp_jvp),
    # layer norm over the last axis (inner = 1), c = eps: y = (a - mean) / sqrt(var + eps).
    # Backward: da = rs * (g - mean(g) - y * mean(g * y)), rs = 1 / sqrt(var + eps).
    Op("layer_norm", 1, "block", doc="(a - mean) / sqrt(var + eps) over the last axis",
       fwd=_layer_norm_fwd, bwd=_layer_norm_bwd,
       jvp=_layer_norm_jvp),
    # cross entropy of logits a0 (rows x classes = P[p], P[p+1]) with integer targets in the
    # node a1, fused: c * sum_r (logsumexp(l_r) - l_r[t_r]), c = 1 / rows for the mean.
    # Backward: c * g * (softmax(l_r) - onehot(t_r)).
    Op("cross_entropy", 2, "block", doc="mean_r -log softmax(logits_r)[target_r]", fwd=_cross_entropy_fwd, bwd=_cross_entropy_bwd,
       jvp=_cross_entropy_jvp),
    # take rows: y[k, :] = a[idx[k], :] for a table a0 of P[p] rows of P[p+1] elements and
    # indices read at run time from the node a1 (data: new indices do not retrace).
    # Negative indices count from the end, as numpy; anything else outside raises.
    Op("take", 2, "block", doc="embedding lookup: rows of a0 picked by the values of a1",
       fwd=_take_fwd, bwd=_take_bwd,
       jvp=_take_jvp),
    # -- the adjoints of gather and take, which traced (higher-order) derivatives emit.
    # scatter: y (ny elements) = 0, then y[P[p + j]] += a[j] for every element j of a0.
    Op("scatter", 1, "block", doc="y = zeros(ny); y[positions] += a (the adjoint of gather)",
       fwd=_scatter_fwd, bwd=_scatter_bwd, jvp=_scatter_jvp, tangent_reads=""),
    # take_add: y (P[p] rows of P[p+1]) = 0, then y[idx[k], :] += a[k, :] (the adjoint of
    # take); idx is the integer node a1, negative indices count from the end
    Op("take_add", 2, "block", doc="y = zeros((rows, width)); y[idx] += a (the adjoint of take)",
       fwd=_take_add_fwd, bwd=_take_add_bwd, jvp=_take_add_jvp),

    # batched matmul: nb products Y_b = A_b @ B_b of (M, K) @ (K, N), P[p:p+6] = nb, M, K,
    # N, sa, sb; sa / sb = 0 reuse one operand for every b. Products of up to 512
    # multiply-adds (attention's per-head products) run as loops, which beat a BLAS call at
    # that size (8x4x8 x 384 heads: 49 us against 132 us); larger ones call BLAS's gemm.
    # Backward: dA_b += G_b @ B_b^T and dB_b += A_b^T @ G_b, which gemm adds in place
    # (beta = 1), reading the transposes where they lie.
    Op("matmul", 2, "block", doc="Y_b = A_b @ B_b, b < nb", fwd=_matmul_fwd, bwd=_matmul_bwd,
       jvp=_matmul_jvp, tangent_reads="cross"),
    # -- more numpy ufuncs (issue #11). Appended, so that the opcodes of the rows above (and
    # the kernels of programs that do not use these) stay as they were.
    # sign, floor and ceil are flat almost everywhere and jump at 0 / the integers: they have
    # no gradient rule, so their gradient is 0 everywhere, at the jumps too (JAX's and
    # HIPS autograd's convention: both treat them as constants), and at NaN (JAX: 0).
    Op("sign", 1, "map", lambda a: 1.0 if a > 0.0 else (-1.0 if a < 0.0 else (0.0 if a == 0.0 else a)),
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0), (-0.0, 0.0)),
       doc="-1, 0 or 1 (NaN for NaN; +0.0 for -0.0, as numpy); gradient 0"),
    Op("sinh", 1, "map", lambda a: sinh(a), da=lambda a, g: g * cosh(a)),
    Op("cosh", 1, "map", lambda a: cosh(a), da=lambda a, g: g * sinh(a)),
    # tan' = 1 + tan^2, from the output
    Op("tan", 1, "map", lambda a: tan(a), da=lambda y, g: g * (1.0 + y * y),
       domain=((-1.2, 1.2),)),
    # arcsin' = 1 / sqrt(1 - a^2): +inf at +-1 (JAX), NaN outside [-1, 1]
    Op("arcsin", 1, "map", lambda a: asin(a), da=lambda a, g: g / sqrt(1.0 - a * a),
       domain=((-0.9, 0.9),)),
    Op("arccos", 1, "map", lambda a: acos(a), da=lambda a, g: -g / sqrt(1.0 - a * a),
       domain=((-0.9, 0.9),)),
    Op("arctan", 1, "map", lambda a: atan(a), da=lambda a, g: g / (1.0 + a * a)),
    # arctan2(a, b), the angle of (b, a): d/da = b / r^2, d/db = -a / r^2 (NaN at the
    # origin, as JAX). The angle jumps by 2 pi across a = 0 for b < 0: avoided in tests.
    Op("arctan2", 2, "map", lambda a, b: atan2(a, b),
       da=lambda a, b, g: g * b / (a * a + b * b), db=lambda a, b, g: -g * a / (a * a + b * b),
       avoid="abs(a) < 0.3 and b < 0.3"),
    # hypot' = a / y, as JAX also where an operand is infinite (NaN: inf / inf, and JAX's
    # NaN for the finite one) and at the origin, where the gradient is split evenly (0.5,
    # JAX's maximum / minimum rule inside its hypot)
    Op("hypot", 2, "map", lambda a, b: hypot(a, b),
       da=lambda a, y, g: g * ((a / y if y < inf else nan) if y != 0.0 else 0.5),
       db=lambda b, y, g: g * ((b / y if y < inf else nan) if y != 0.0 else 0.5),
       avoid="abs(a) + abs(b) < 0.3", kinks=((0.0, 0.0, 0.5, 0.5),)),
    Op("exp2", 1, "map", lambda a: exp2(a), da=lambda y, g: g * y * 0.6931471805599453),
    # expm1' = y + 1; log1p' = 1 / (1 + a)
    Op("expm1", 1, "map", lambda a: expm1(a), da=lambda y, g: g * (y + 1.0)),
    Op("log1p", 1, "map", lambda a: log1p(a), da=lambda a, g: g / (1.0 + a),
       domain=((-0.8, 3.0),)),
    # log2' = 1 / (a ln 2), log10' = 1 / (a ln 10)
    Op("log2", 1, "map", lambda a: log2(a), da=lambda a, g: g / (a * 0.6931471805599453),
       domain=_POS),
    Op("log10", 1, "map", lambda a: log10(a), da=lambda a, g: g / (a * 2.302585092994046),
       domain=_POS),
    # logaddexp as numpy's npy_logaddexp (so values agree bit for bit): a + log 2 at a tie
    # (exact for equal infinities), else the larger plus log1p(exp(-|a - b|)); NaN
    # propagates. The gradients are the softmax weights exp(a - y), exp(b - y), and at
    # infinite y their limits: 1 to the larger operand and 0 to the other, 1/2 each at a
    # tie (so logaddexp(-inf, -inf) = -inf with gradients 0.5, 0.5, finite). JAX differs
    # there: its _replace_inf gives NaN at (-inf, -inf), (1, 1) at (inf, inf) and exp(b)
    # (not 0) to a finite b beside a = +inf.
    Op("logaddexp", 2, "map", _logaddexp, da=_logaddexp_da, db=_logaddexp_db),
    # the same in base 2 (numpy's npy_logaddexp2: a + 1 at a tie, log2(1 + 2^-|d|) through
    # log1p); gradients 2^(a - y), 2^(b - y)
    Op("logaddexp2", 2, "map", _logaddexp2, da=_logaddexp2_da, db=_logaddexp2_db),
    # fmax / fmin ignore a NaN operand (numpy's semantics; maximum / minimum propagate it):
    # the result is the other operand, which gets the gradient. A tie goes to b, value and
    # gradient, as numpy's array loops (fmax(0.0, -0.0) is -0.0; its scalar path returns a)
    # and JAX's where(a > b | isnan(b), a, b); NaN with NaN is NaN with gradient to a (JAX).
    Op("fmax", 2, "map", lambda a, b: a if a > b or b != b else b,
       da=lambda a, b, g: g if a > b or b != b else 0.0,
       db=lambda a, b, g: 0.0 if a > b or b != b else g,
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.0, 1.0), (-0.7, -0.7, 0.0, 1.0))),
    Op("fmin", 2, "map", lambda a, b: a if a < b or b != b else b,
       da=lambda a, b, g: g if a < b or b != b else 0.0,
       db=lambda a, b, g: 0.0 if a < b or b != b else g,
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.0, 1.0), (-0.7, -0.7, 0.0, 1.0))),
    Op("floor", 1, "map", lambda a: floor(a), avoid="abs(a - round(a)) < 1e-3",
       kinks=((2.0, 0.0), (-1.0, 0.0), (0.0, 0.0)), doc="floor(a); gradient 0"),
    Op("ceil", 1, "map", lambda a: ceil(a), avoid="abs(a - round(a)) < 1e-3",
       kinks=((2.0, 0.0), (-1.0, 0.0), (0.0, 0.0)), doc="ceil(a); gradient 0"),
    # remainder (numpy's %, the sign of b) as numpy's npy_divmod: m = fmod(a, b), moved
    # into b's sign by adding b; an exact multiple gives +-0 with b's sign; b = 0 gives NaN.
    # d/da = 1 (JAX and autograd: at the jumps too); d/db = -(the quotient), which JAX
    # writes -(trunc(a / b) - 1 when its fmod was moved); autograd -floor(a / b), the same
    # but where a / b rounds: remainder(1.5, -inf) = -inf has quotient -1, d/db = 1.
    Op("remainder", 2, "map", _remainder, da=lambda g: g, db=_remainder_db,
       domain=((-3.0, 3.0), (-2.0, 2.0)),
       avoid="abs(b) < 0.5 or abs(a / b - round(a / b)) < 1e-3",
       kinks=((4.0, 2.0, 1.0, -2.0), (-4.0, 2.0, 1.0, 2.0), (3.0, -1.5, 1.0, 2.0))),

    # -- reductions and scans (#11) --
    # cumsum and cumprod along one axis (np.cumsum / np.cumprod; np.prod is cumprod's last
    # slice, so its gradient is the product of the other elements, exact at zeros: one zero
    # gets the product of the others, the rest 0; two zeros: all 0). Backward: the reversed
    # cumulative sum; for cumprod, y_{j-1} * (g_j + a_{j+1} (g_{j+1} + ...)), no division.
    Op("cumsum", 1, "block", doc="y[o, j, k] = sum_{i <= j} a[o, i, k]",
       fwd=_cumsum_fwd, bwd=_cumsum_bwd, jvp=_cumsum_jvp),
    Op("cumprod", 1, "block", doc="y[o, j, k] = prod_{i <= j} a[o, i, k]",
       fwd=_cumprod_fwd, bwd=_cumprod_bwd, jvp=_cumprod_jvp),
    # argsort along one axis, as numpy's stable sort: NaN last, equal values (-0.0 and 0.0
    # too) in their original order. Integer data (need 0, no gradient); with c = 1 it gives
    # positions in the flat operand, which a take row reads: np.sort(x) is take(x, argsort),
    # so the permutation is computed at run time and the gradient scatters through it.
    Op("argsort", 1, "block", doc="y[o, :, k] = the stable order of a[o, :, k] (integers)",
       fwd=_argsort_fwd, bwd=_argsort_bwd, jvp=_argsort_jvp),
    # -- more ufuncs (#11) --
    # the inverse hyperbolic functions (libm's, as numpy's); derivatives as JAX writes them:
    # asinh' = 1 / sqrt(a^2 + 1), acosh' = 1 / sqrt(a^2 - 1) (NaN below 1, inf at 1),
    # atanh' = 1 / (1 + a) * 1 / (1 - a) (inf at +-1, NaN outside [-1, 1])
    Op("arcsinh", 1, "map", lambda a: asinh(a), da=lambda a, g: g / sqrt(a * a + 1.0)),
    Op("arccosh", 1, "map", lambda a: acosh(a), da=lambda a, g: g / sqrt(a * a - 1.0),
       domain=((1.2, 4.0),)),
    Op("arctanh", 1, "map", lambda a: atanh(a),
       da=lambda a, g: 1.0 / (1.0 + a) * (g / (1.0 - a)), domain=((-0.9, 0.9),)),
    # cbrt' = 1 / (3 y^2), from the output (JAX): inf at 0
    Op("cbrt", 1, "map", lambda a: cbrt(a), da=lambda y, g: g * (0.3333333333333333 / (y * y)),
       avoid="abs(a) < 0.05"),
    # copysign(a, b) = |a| with b's sign bit: d/da = +-1, + where a and the result agree in
    # sign (a >= 0 counts +, as JAX's where(signbit(b), -abs(a), abs(a)) with abs'(0) = 1);
    # NaN for a NaN a, as absolute (JAX: -1 there); d/db = 0 (no rule)
    Op("copysign", 2, "map", lambda a, b: copysign(a, b),
       da=lambda a, b, g: g * (copysign(1.0, b) if a >= 0.0 else (
           -copysign(1.0, b) if a < 0.0 else a)),
       avoid="abs(a) < 1e-3 or abs(b) < 1e-3",
       kinks=((0.0, 1.5, 1.0, 0.0), (0.0, -1.5, -1.0, 0.0), (-0.0, -1.5, -1.0, 0.0))),
    # fmod (C's remainder, the sign of a): d/da = 1, d/db = -trunc(a / b) (JAX)
    Op("fmod", 2, "map", lambda a, b: fmod(a, b), da=lambda g: g, db=_fmod_db,
       domain=((-3.0, 3.0), (-2.0, 2.0)),
       avoid="abs(b) < 0.5 or abs(a / b - round(a / b)) < 1e-3",
       kinks=((4.0, 2.0, 1.0, -2.0), (-4.0, 2.0, 1.0, 2.0), (3.0, -1.5, 1.0, 2.0))),
    # heaviside(a, b): 0 below 0, 1 above, b at a = +-0, NaN for a NaN a (numpy). d/da = 0;
    # d/db = 1 where the output is b (a == 0), as JAX's where(a < 0, 0, where(a > 0, 1, b))
    # (JAX also passes 1 at a NaN a, whose output numpy makes NaN: 0 here)
    Op("heaviside", 2, "map",
       lambda a, b: 0.0 if a < 0.0 else (1.0 if a > 0.0 else (b if a == 0.0 else a)),
       db=lambda a, g: g if a == 0.0 else 0.0,
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.5, 0.0, 1.0), (-0.0, 2.0, 0.0, 1.0))),
    # rint (round half to even, as numpy) and trunc are flat with jumps: gradient 0, as
    # floor and ceil (JAX: round and trunc have zero derivatives)
    Op("rint", 1, "map", lambda a: rint(a), avoid="abs(a - round(a)) > 0.499",
       kinks=((0.5, 0.0), (1.5, 0.0), (-2.5, 0.0)), doc="rint(a); gradient 0"),
    Op("trunc", 1, "map", lambda a: trunc(a), avoid="abs(a - round(a)) < 1e-3",
       kinks=((2.0, 0.0), (-1.0, 0.0), (0.0, 0.0)), doc="trunc(a); gradient 0"),
    # floor_divide (numpy's //): gradient 0 for both operands (JAX)
    Op("floor_divide", 2, "map", _floor_divide, domain=((-3.0, 3.0), (-2.0, 2.0)),
       avoid="abs(b) < 0.5 or abs(a / b - round(a / b)) < 1e-3",
       kinks=((4.0, 2.0, 0.0, 0.0), (-4.0, 2.0, 0.0, 0.0)),
       doc="floor(a / b) as numpy's floor_divide; gradient 0"),
    # predicates: 0.0 / 1.0 masks without gradient, as the comparisons; a nonzero operand
    # (NaN too) is true for the logical ones, as numpy's
    Op("isnan", 1, "map", lambda a: 1.0 if a != a else 0.0),
    Op("isinf", 1, "map", lambda a: 1.0 if fabs(a) == inf else 0.0),
    Op("isfinite", 1, "map", lambda a: 1.0 if fabs(a) < inf else 0.0),
    Op("signbit", 1, "map", lambda a: 1.0 if copysign(1.0, a) < 0.0 else 0.0),
    Op("logical_not", 1, "map", lambda a: 1.0 if a == 0.0 else 0.0),
    Op("logical_and", 2, "map", lambda a, b: 1.0 if a != 0.0 and b != 0.0 else 0.0),
    Op("logical_or", 2, "map", lambda a, b: 1.0 if a != 0.0 or b != 0.0 else 0.0),
    Op("logical_xor", 2, "map", lambda a, b: 1.0 if (a != 0.0) != (b != 0.0) else 0.0),

    # -- linalg: numpy.linalg's factorizations on stacks of (n, n) matrices, as loops (see
    # the rules above); a singular or non-finite input gives NaN where numpy raises
    # LinAlgError (debug_nans names the node). The result is followed by the row's work
    # space in its value slice; the front end (burnumba/_linalg.py) views the result.
    Op("solve", 2, "block", doc="X = A^-1 B for nb systems (n, n) (n, k); LU with partial "
       "pivoting. P = nb, n, k. Singular or non-finite A: X is NaN",
       fwd=_solve_fwd, bwd=_solve_bwd, jvp=_solve_jvp),
    Op("slogdet", 1, "block", doc="(sign, log|det A|) of nb matrices (n, n), by LU; "
       "singular: (0, -inf) as numpy, with a NaN gradient; non-finite: NaN. P = nb, n",
       fwd=_slogdet_fwd, bwd=_slogdet_bwd, jvp=_slogdet_jvp),
    Op("cholesky", 1, "block", doc="the lower Cholesky factor of nb matrices (n, n) (their "
       "lower triangle read); not positive definite: NaN. P = nb, n",
       fwd=_cholesky_fwd, bwd=_cholesky_bwd, jvp=_cholesky_jvp),
    Op("eigh", 1, "block", doc="eigenvalues (ascending) and eigenvectors of nb symmetric "
       "matrices (n, n) (their lower triangle read), cyclic Jacobi; c = eps^2 of the "
       "dtype. P = nb, n",
       fwd=_eigh_fwd, bwd=_eigh_bwd, jvp=_eigh_jvp),
    # -- lanes rows (bn.vmap's wide tapes; see _matmul_lanes_fwd). Appended: the opcodes
    # above stay as they were. Their tests are vmap's: every sample's bits against a loop.
    Op("matmul_lanes", 2, "block", doc="matmul for L samples side by side, sample "
       "innermost; c = 1: float64 slots hold its sums, + 2: B is the same in every lane. "
       "P = nb, M, K, N, sa, sb", fwd=_matmul_lanes_fwd, bwd=_matmul_lanes_bwd,
       lanes_of="matmul", fits=_matmul_lanes_fits),
    Op("gather_lanes", -1, "block", doc="gather for L samples side by side",
       fwd=_gather_lanes_fwd, bwd=_gather_lanes_bwd, lanes_of="gather", fits=_always_fits),
    Op("sum_lanes", -1, "block", doc="sum for L samples side by side",
       fwd=_sum_lanes_fwd, bwd=_sum_lanes_bwd, lanes_of="sum", fits=_always_fits),
)

OPCODE = {row.name: code for code, row in enumerate(ROWS)}
BY_NAME = {row.name: row for row in ROWS}
LANES = {row.lanes_of: row for row in ROWS if row.lanes_of}   # a row's lanes form, by name
