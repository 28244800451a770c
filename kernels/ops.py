"""The op table: every op burnumba can put on a tape is one row here.

A row holds the op's name, its arity, its forward and backward rules, the domain that the
gradient tests sample from and its conventions at kinks. Everything else is derived from
this table: ``_gen.py`` writes the ``if op == ...`` branches of the njit sweeps into
``sweep.py``, ``reference.py`` runs the same rules in plain Python, and the tracer looks
rows up by name.

Two kinds of row carry rules:

``map`` rows are elementwise. ``fwd`` is a scalar expression in ``a`` (and ``b``) and the
immediate ``c``; ``da`` / ``db`` are the contributions to the operands' gradients, in terms
of ``a``, ``b``, the output ``y``, the upstream gradient ``g`` and ``c``; ``pre`` may bind a
value both rules share (numba has no assignment expressions). A ``None``
rule means the op has no gradient with respect to that operand (comparisons).

A binary map broadcasts an operand that is a scalar or a tile of the output (its index
wraps at its size); the tracer expands other broadcasts with a gather.

``block`` rows are statements with the locals of a sweep branch in scope:
``i`` (this node), ``oy`` / ``ny`` (offset and size of its slice of the value buffer),
``c`` (its immediate), ``p`` (start of its integer parameters in ``P``), the tape columns
``a0``, ``a1``, ``off``, ``need`` and the buffers ``val`` and ``grad``.
A block's ``bwd`` must only add into operands whose ``need`` flag is set.

Formulas may call ``exp log sqrt tanh sin cos fabs erf`` (from ``math``), which exist with the
same meaning in numba and in plain Python. Blocks may also call
``gemm(ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy)``, BLAS's product
``Y = op(A) @ op(B) + beta * Y`` on row-major slices of ``val`` / ``grad`` starting at
``oa`` / ``ob`` / ``oy`` (``op`` transposes when its flag is 1), when ``blas`` is true (a BLAS
was found; otherwise a block must loop). A block reports bad data by returning an error code
(``ERR_INDEX``, ``ERR_TARGET``): the kernels never raise, and the caller turns the code into
a burnumba error that names the node.

Axis rows see their operand as ``(outer, m, inner)`` = ``P[p:p+3]``: the reduced (or
normalised) axis has length ``m``; element ``(o, j, k)`` sits at ``(o * m + j) * inner + k``.
"""
import textwrap
from typing import NamedTuple, Optional, Tuple


class Op(NamedTuple):
    name: str
    arity: int                       # 0 leaf, 1 unary, 2 binary; -1: operands listed in P
    kind: str                        # "leaf" | "map" | "block"
    fwd: str = ""
    da: Optional[str] = None         # map rows: d/da contribution; block rows: unused
    db: Optional[str] = None
    bwd: str = ""                    # block rows: the backward statements
    pre: str = ""                    # map rows: a statement run before da / db, per element
    domain: Tuple[Tuple[float, float], ...] = ((-3.0, 3.0), (-3.0, 3.0))
    avoid: str = ""                  # where central differences are invalid (kinks, poles)
    kinks: Tuple[Tuple[float, ...], ...] = ()   # exact (a, [b,] da, [db]) at kinks
    doc: str = ""


_POS = ((0.2, 4.0),)          # strictly positive domain for log, sqrt, ...

# sqrt(2 / pi) and 3 * 0.044715, for the tanh form of gelu; 1 / sqrt(2) and 1 / sqrt(2 pi)
_GELU_U = "0.7978845608028654 * (a + 0.044715 * a * a * a)"

def _per(loop, body):
    """``loop`` (a for-line) around the statements ``body``."""
    return f"{loop}\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


# Row statistics that a backward recomputes rather than stores: layer norm's mean and
# 1 / std of row o (the last axis, m long), and cross-entropy's row max and sum of exp.
_LN_STATS = """
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
"""
_CE_ROW = """
b0 = oa + r * ncls
t = int(val[ot + r])
if t < 0 or t >= ncls:
    return ERR_TARGET
mx = val[b0]
for j in range(1, ncls):
    mx = max(mx, val[b0 + j])
s = 0.0
for j in range(ncls):
    s += exp(val[b0 + j] - mx)
"""

# where's three operands (cond is the node P[p]) with their sizes, and a wrapping counter
# each: an operand is as large as the output, a scalar, or a tile repeated over it.
_WHERE = """
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
"""

# The largest element of lane (o, k) along the axis, for the stable softmax family.
_MAX_ALONG = """
mx = val[oa + o * m * inner + k]
for j in range(1, m):
    mx = max(mx, val[oa + (o * m + j) * inner + k])
"""

# matmul's sizes and operands, and the start of batch bt's A_b, B_b and Y_b; the rules loop
# ``for bt in range(nb):`` after it.
_MATMUL = """
nb = P[p]
M = P[p + 1]
K = P[p + 2]
N = P[p + 3]
ia = a0[i]
ib = a1[i]
oa = off[ia]
ob = off[ib]
"""
_BATCH = """
xa = oa + bt * P[p + 4] * M * K
xb = ob + bt * P[p + 5] * K * N
xy = oy + bt * M * N
"""

# The loops over the (outer, m, inner) view of an axis row's operand.
_AXIS = """
outer = P[p]
m = P[p + 1]
inner = P[p + 2]
ia = a0[i]
oa = off[ia]
"""

ROWS = (
    # -- leaves: their slices are written by the caller (inputs) or at trace time (consts)
    Op("input", 0, "leaf", doc="an argument of the traced function"),
    Op("const", 0, "leaf", doc="a value captured at trace time, stored once in the tape"),

    # -- arithmetic
    Op("add", 2, "map", "a + b", da="g", db="g"),
    Op("subtract", 2, "map", "a - b", da="g", db="-g"),
    Op("multiply", 2, "map", "a * b", da="g * b", db="g * a"),
    Op("divide", 2, "map", "a / b", da="g / b", db="-g * y / b",
       avoid="abs(b) < 0.3"),
    Op("negative", 1, "map", "-a", da="-g"),

    # -- powers. The tracer picks the row: x**2 -> square, x**3 -> cube, other integer
    # exponents -> powi (pow with an integral exponent: negative bases too), real exponents -> pow_c, x**y -> power.
    Op("square", 1, "map", "a * a", da="2.0 * a * g"),
    Op("cube", 1, "map", "a * a * a", da="3.0 * a * a * g"),
    Op("powi", 1, "map", "a ** c", da="c * a ** (c - 1.0) * g",
       domain=((0.3, 3.0),), doc="a ** c for an integer c != 0 stored as the immediate"),
    Op("pow_c", 1, "map", "a ** c", da="c * a ** (c - 1.0) * g", domain=_POS,
       doc="a ** c for a real constant c; a > 0"),
    Op("power", 2, "map", "a ** b", da="b * a ** (b - 1.0) * g", db="y * log(a) * g",
       domain=((0.2, 3.0), (-2.0, 2.0)), doc="a ** b with both traced; a > 0"),

    # -- transcendental
    Op("exp", 1, "map", "exp(a)", da="g * y"),
    Op("log", 1, "map", "log(a)", da="g / a", domain=_POS),
    Op("sqrt", 1, "map", "sqrt(a)", da="0.5 * g / y", domain=_POS),
    Op("reciprocal", 1, "map", "1.0 / a", da="-g * y * y", avoid="abs(a) < 0.3"),
    Op("rsqrt", 1, "map", "1.0 / sqrt(a)", da="-0.5 * g * y * y * y", domain=_POS),
    # tanh through one exp, 3.5x faster than libm's tanh in numba (0.34 against 1.23 ms for
    # 65,536 values): tanh|a| = 2 / (1 + exp(-2|a|)) - 1, which never overflows and is within
    # 5e-15 relative for |a| >= 0.05; below that, the odd Taylor series to a^9 (truncation
    # < 1e-15 relative).
    Op("tanh", 1, "map",
       "copysign(2.0 / (1.0 + exp(-2.0 * fabs(a))) - 1.0, a) if fabs(a) >= 0.05 else "
       "a * (1.0 + a * a * (-1.0 / 3.0 + a * a * (2.0 / 15.0 + a * a * (-17.0 / 315.0"
       " + a * a * (62.0 / 2835.0)))))",
       da="g * (1.0 - y * y)"),
    # sigmoid written so that exp never overflows
    Op("sigmoid", 1, "map", "1.0 / (1.0 + exp(-a)) if a >= 0.0 else exp(a) / (1.0 + exp(a))",
       da="g * y * (1.0 - y)"),
    # gelu: the tanh form (GPT-2's, jax.nn.gelu's default), through 0.5 (1 + tanh(u)) =
    # sigmoid(2u), which needs one exp instead of a tanh (2.5x faster in numba), and the
    # exact erf form
    Op("gelu_tanh", 1, "map", f"a / (1.0 + exp(-2.0 * {_GELU_U}))",
       pre=f"sg = 1.0 / (1.0 + exp(-2.0 * {_GELU_U}))",
       da="g * (sg + 2.0 * a * sg * (1.0 - sg) * 0.7978845608028654 * (1.0 + 0.134145 * a * a))"),
    Op("gelu_erf", 1, "map", "0.5 * a * (1.0 + erf(a * 0.7071067811865476))",
       da="g * (0.5 * (1.0 + erf(a * 0.7071067811865476))"
          " + a * 0.3989422804014327 * exp(-0.5 * a * a))"),
    Op("sin", 1, "map", "sin(a)", da="g * cos(a)"),
    Op("cos", 1, "map", "cos(a)", da="-g * sin(a)"),

    # -- piecewise. Conventions at kinks follow torch and JAX: relu'(0) = 0, abs'(0) = 0,
    # and maximum / minimum split the gradient evenly at a tie.
    Op("relu", 1, "map", "a if a > 0.0 else 0.0", da="g if a > 0.0 else 0.0",
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0),)),
    Op("absolute", 1, "map", "fabs(a)", da="g if a > 0.0 else (-g if a < 0.0 else 0.0)",
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0),)),
    Op("maximum", 2, "map", "a if a >= b else b",
       da="g if a > b else (0.5 * g if a == b else 0.0)",
       db="g if b > a else (0.5 * g if a == b else 0.0)",
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.5, 0.5), (-0.7, -0.7, 0.5, 0.5))),
    Op("minimum", 2, "map", "a if a <= b else b",
       da="g if a < b else (0.5 * g if a == b else 0.0)",
       db="g if b < a else (0.5 * g if a == b else 0.0)",
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.5, 0.5), (-0.7, -0.7, 0.5, 0.5))),

    # -- comparisons give 0.0 / 1.0 masks and carry no gradient
    Op("greater", 2, "map", "1.0 if a > b else 0.0"),
    Op("greater_equal", 2, "map", "1.0 if a >= b else 0.0"),
    Op("less", 2, "map", "1.0 if a < b else 0.0"),
    Op("less_equal", 2, "map", "1.0 if a <= b else 0.0"),
    Op("equal", 2, "map", "1.0 if a == b else 0.0"),
    Op("not_equal", 2, "map", "1.0 if a != b else 0.0"),

    # -- where(cond, a, b): cond is the node P[p]. Each operand is as large as the output, a
    # scalar, or a tile repeated over it (a causal mask over a batch of heads): its index
    # wraps at its size.
    Op("where", 2, "block", doc="elementwise cond ? a : b; no gradient into cond",
       fwd=_WHERE + """
for j in range(ny):
    val[oy + j] = val[oa + ka] if val[oc + kc] != 0.0 else val[ob + kb]
    kc = kc + 1 if kc + 1 < nc else 0
    ka = ka + 1 if ka + 1 < na else 0
    kb = kb + 1 if kb + 1 < nb else 0
""", bwd=_WHERE + """
for j in range(ny):
    if val[oc + kc] != 0.0:
        if need[ia]:
            grad[oa + ka] += grad[oy + j]
    elif need[ib]:
        grad[ob + kb] += grad[oy + j]
    kc = kc + 1 if kc + 1 < nc else 0
    ka = ka + 1 if ka + 1 < na else 0
    kb = kb + 1 if kb + 1 < nb else 0
"""),

    # -- gather: y[j] = val[P[p + j]], absolute positions in the value buffer fixed at
    # trace time. One row covers indexing, slicing, transposes, broadcast_to, stack and
    # concatenate, and packing scalar nodes into a tensor. Its backward scatters (adds),
    # so repeated positions accumulate. Sources with need == 0 live in slices whose
    # gradient is never read, so adding into them is harmless.
    Op("gather", -1, "block", doc="y[j] = val[P[p + j]]",
       fwd="""
for j in range(ny):
    val[oy + j] = val[P[p + j]]
""", bwd="""
for j in range(ny):
    grad[P[p + j]] += grad[oy + j]
"""),

    # -- fused n-ary reductions over a list of nodes P[p+1 : p+1+m], m = P[p]; each node may
    # be a scalar or a tensor. sum is scaled by c: c = 1 for sum, 1 / count for mean.
    Op("sum", -1, "block", doc="c * (sum of every element of the listed nodes)",
       fwd="""
acc = 0.0
for k in range(P[p]):
    ik = P[p + 1 + k]
    for e in range(off[ik], off[ik + 1]):
        acc += val[e]
val[oy] = c * acc
""", bwd="""
gc = c * grad[oy]
for k in range(P[p]):
    ik = P[p + 1 + k]
    if need[ik]:
        for e in range(off[ik], off[ik + 1]):
            grad[e] += gc
"""),
    Op("sumsq", -1, "block", doc="c * (sum of squares of every element of the listed nodes)",
       fwd="""
acc = 0.0
for k in range(P[p]):
    ik = P[p + 1 + k]
    for e in range(off[ik], off[ik + 1]):
        acc += val[e] * val[e]
val[oy] = c * acc
""", bwd="""
gc = 2.0 * c * grad[oy]
for k in range(P[p]):
    ik = P[p + 1 + k]
    if need[ik]:
        for e in range(off[ik], off[ik + 1]):
            grad[e] += gc * val[e]
"""),
    # inner product of two equally shaped lists of nodes, x = P[p+1 : p+1+m] and
    # w = P[p+1+m : p+1+2m], plus an optional bias node a0[i] (-1 for none): BurTorch's
    # fused neuron. The same node may appear in both lists (x . x).
    Op("inner", -1, "block", doc="sum_k x_k . w_k (+ bias)",
       fwd="""
m = P[p]
acc = val[off[a0[i]]] if a0[i] >= 0 else 0.0
for k in range(m):
    ox = off[P[p + 1 + k]]
    ow = off[P[p + 1 + m + k]]
    for e in range(off[P[p + 1 + k] + 1] - ox):
        acc += val[ox + e] * val[ow + e]
val[oy] = acc
""", bwd="""
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
"""),

    # -- tensor rows ---------------------------------------------------------------------
    # sum over one axis, scaled by c (c = 1 / m for mean)
    Op("sum_axis", 1, "block", doc="y[o, k] = c * sum_j a[o, j, k]", fwd=_AXIS + """
for o in range(outer):
    for k in range(inner):
        acc = 0.0
        for j in range(m):
            acc += val[oa + (o * m + j) * inner + k]
        val[oy + o * inner + k] = c * acc
""", bwd=_AXIS + """
if need[ia]:
    for o in range(outer):
        for k in range(inner):
            gk = c * grad[oy + o * inner + k]
            for j in range(m):
                grad[oa + (o * m + j) * inner + k] += gk
"""),
    # max over one axis (c = 1), or min (c = -1: y = -max(-a)). NaN propagates, as numpy.
    # The gradient is split evenly among tied maxima, as jax and autograd do.
    Op("max_axis", 1, "block", doc="y[o, k] = c * max_j (c * a[o, j, k])", fwd=_AXIS + """
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
""", bwd=_AXIS + """
if need[ia]:
    for o in range(outer):
        for k in range(inner):
            y = val[oy + o * inner + k]
            ties = 0
            for j in range(m):
                if val[oa + (o * m + j) * inner + k] == y:
                    ties += 1
            if ties > 0:
                share = grad[oy + o * inner + k] / ties
                for j in range(m):
                    if val[oa + (o * m + j) * inner + k] == y:
                        grad[oa + (o * m + j) * inner + k] += share
"""),
    # softmax along one axis, stable: exp(a - max) / sum; the backward reuses y
    Op("softmax", 1, "block", doc="y = exp(a - max) / sum(exp(a - max)) along the axis",
       fwd=_AXIS + _per("for o in range(outer):", _per("for k in range(inner):", _MAX_ALONG + """
s = 0.0
for j in range(m):
    e = exp(val[oa + (o * m + j) * inner + k] - mx)
    val[oy + (o * m + j) * inner + k] = e
    s += e
for j in range(m):
    val[oy + (o * m + j) * inner + k] /= s
""")), bwd=_AXIS + """
if need[ia]:
    for o in range(outer):
        for k in range(inner):
            dot = 0.0
            for j in range(m):
                q = (o * m + j) * inner + k
                dot += grad[oy + q] * val[oy + q]
            for j in range(m):
                q = (o * m + j) * inner + k
                grad[oa + q] += val[oy + q] * (grad[oy + q] - dot)
"""),
    # attention's scale, causal mask and softmax in one row: x is (..., T, T), row t of each
    # (T, T) block keeps columns j <= t, y = softmax(c * x) over those and 0 beyond, c > 0.
    # The masked half is never exponentiated. dx_j = c * y_j * (g_j - sum_k g_k y_k), j <= t.
    Op("causal_softmax", 1, "block", doc="softmax(c * a) over j <= t in each (T, T) block",
       fwd=_AXIS + _per("for o in range(outer):", """
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
"""), bwd=_AXIS + """
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
"""),
    Op("log_softmax", 1, "block", doc="y = a - logsumexp(a) along the axis", fwd=_AXIS + _per("for o in range(outer):", _per("for k in range(inner):", _MAX_ALONG + """
s = 0.0
for j in range(m):
    s += exp(val[oa + (o * m + j) * inner + k] - mx)
lse = mx + log(s)
for j in range(m):
    val[oy + (o * m + j) * inner + k] = val[oa + (o * m + j) * inner + k] - lse
""")), bwd=_AXIS + """
if need[ia]:
    for o in range(outer):
        for k in range(inner):
            gs = 0.0
            for j in range(m):
                gs += grad[oy + (o * m + j) * inner + k]
            for j in range(m):
                q = (o * m + j) * inner + k
                grad[oa + q] += grad[oy + q] - exp(val[oy + q]) * gs
"""),
    # logsumexp over one axis (the output drops the axis); -inf when every input is -inf
    Op("logsumexp", 1, "block", doc="y[o, k] = log sum_j exp(a[o, j, k])", fwd=_AXIS + _per("for o in range(outer):", _per("for k in range(inner):", _MAX_ALONG + """
if mx < -1.7976931348623157e308:       # every input is -inf
    val[oy + o * inner + k] = mx
else:
    s = 0.0
    for j in range(m):
        s += exp(val[oa + (o * m + j) * inner + k] - mx)
    val[oy + o * inner + k] = mx + log(s)
""")), bwd=_AXIS + """
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
"""),
    # layer norm over the last axis (inner = 1), c = eps: y = (a - mean) / sqrt(var + eps).
    # Backward: da = rs * (g - mean(g) - y * mean(g * y)), rs = 1 / sqrt(var + eps).
    Op("layer_norm", 1, "block", doc="(a - mean) / sqrt(var + eps) over the last axis",
       fwd=_AXIS + _per("for o in range(outer):", _LN_STATS + """
for j in range(m):
    val[oy + o * m + j] = (val[b0 + j] - mu) * rs
"""), bwd=_AXIS + _per("for o in range(outer if need[ia] else 0):", _LN_STATS + """
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
""")),
    # cross entropy of logits a0 (rows x classes = P[p], P[p+1]) with integer targets in the
    # node a1, fused: c * sum_r (logsumexp(l_r) - l_r[t_r]), c = 1 / rows for the mean.
    # Backward: c * g * (softmax(l_r) - onehot(t_r)).
    Op("cross_entropy", 2, "block", doc="mean_r -log softmax(logits_r)[target_r]", fwd="""
rows = P[p]
ncls = P[p + 1]
oa = off[a0[i]]
ot = off[a1[i]]
loss = 0.0
""" + _per("for r in range(rows):", _CE_ROW + """
loss += mx + log(s) - val[b0 + t]
""") + """
val[oy] = c * loss
""", bwd="""
rows = P[p]
ncls = P[p + 1]
ia = a0[i]
oa = off[ia]
ot = off[a1[i]]
gc = c * grad[oy]
""" + _per("for r in range(rows if need[ia] else 0):", _CE_ROW + """
for j in range(ncls):
    grad[b0 + j] += gc * exp(val[b0 + j] - mx) / s
grad[b0 + t] -= gc
""")),
    # take rows: y[k, :] = a[idx[k], :] for a table a0 of P[p] rows of P[p+1] elements and
    # indices read at run time from the node a1 (data: new indices do not retrace).
    # Negative indices count from the end, as numpy; anything else outside raises.
    Op("take", 2, "block", doc="embedding lookup: rows of a0 picked by the values of a1",
       fwd="""
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
""", bwd="""
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
"""),
    # batched matmul: nb products Y_b = A_b @ B_b of (M, K) @ (K, N), P[p:p+6] = nb, M, K,
    # N, sa, sb; sa / sb = 0 reuse one operand for every b. Products of up to 512
    # multiply-adds (attention's per-head products) run as loops, which beat a BLAS call at
    # that size (8x4x8 x 384 heads: 49 us against 132 us); larger ones call BLAS's gemm.
    # Backward: dA_b += G_b @ B_b^T and dB_b += A_b^T @ G_b, which gemm adds in place
    # (beta = 1), reading the transposes where they lie.
    Op("matmul", 2, "block", doc="Y_b = A_b @ B_b, b < nb", fwd=_MATMUL + _per("for bt in range(nb):", _BATCH + textwrap.dedent("""
    if M * K * N <= 512 or not blas:
        for r in range(M):
            for n in range(N):
                val[xy + r * N + n] = 0.0
            for k in range(K):
                av = val[xa + r * K + k]
                for n in range(N):
                    val[xy + r * N + n] += av * val[xb + k * N + n]
    else:
        gemm(0, 0, M, N, K, val, xa, K, val, xb, N, 0.0, val, xy, N)
""")), bwd=_MATMUL + "need_a = need[ia]\nneed_b = need[ib]\n" + _per("for bt in range(nb):", _BATCH + textwrap.dedent("""
    loops = M * K * N <= 512 or not blas
    if need_a and loops:
        for r in range(M):
            for k in range(K):
                acc = 0.0
                for n in range(N):
                    acc += grad[xy + r * N + n] * val[xb + k * N + n]
                grad[xa + r * K + k] += acc
    elif need_a:
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
"""))),
)

OPCODE = {row.name: code for code, row in enumerate(ROWS)}
BY_NAME = {row.name: row for row in ROWS}
