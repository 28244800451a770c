"""The op table: every op burnumba can put on a tape is one row here.

A row holds the op's name, its arity, its forward and backward rules, the domain that the
gradient tests sample from and its conventions at kinks. Everything else is derived from
this table: ``_gen.py`` writes the ``if op == ...`` branches of the njit sweeps into
``sweep.py``, ``reference.py`` runs the same rules in plain Python, and the tracer looks
rows up by name.

Two kinds of row carry rules:

``map`` rows are elementwise. ``fwd`` is a scalar expression in ``a`` (and ``b``) and the
immediate ``c``; ``da`` / ``db`` are the contributions to the operands' gradients, in terms
of ``a``, ``b``, the output ``y``, the upstream gradient ``g`` and ``c``. A binary map
broadcasts an operand of size 1 against the other (a scalar against a tensor). A ``None``
rule means the op has no gradient with respect to that operand (comparisons).

``block`` rows are statements with the locals of a sweep branch in scope:
``i`` (this node), ``oy`` / ``ny`` (offset and size of its slice of the value buffer),
``c`` (its immediate), ``p`` (start of its integer parameters in ``P``), the tape columns
``a0``, ``a1``, ``off``, ``need`` and the buffers ``val`` and ``grad``.
A block's ``bwd`` must only add into operands whose ``need`` flag is set.

Formulas may call ``exp log sqrt tanh sin cos fabs`` (from ``math``), which exist with the
same meaning in numba and in plain Python.
"""
from typing import NamedTuple, Optional, Tuple


class Op(NamedTuple):
    name: str
    arity: int                       # 0 leaf, 1 unary, 2 binary; -1: operands listed in P
    kind: str                        # "leaf" | "map" | "block"
    fwd: str = ""
    da: Optional[str] = None         # map rows: d/da contribution; block rows: unused
    db: Optional[str] = None
    bwd: str = ""                    # block rows: the backward statements
    domain: Tuple[Tuple[float, float], ...] = ((-3.0, 3.0), (-3.0, 3.0))
    avoid: str = ""                  # where central differences are invalid (kinks, poles)
    kinks: Tuple[Tuple[float, ...], ...] = ()   # exact (a, [b,] da, [db]) at kinks
    doc: str = ""


_POS = ((0.2, 4.0),)          # strictly positive domain for log, sqrt, ...

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
    # exponents -> powi (repeated multiplication), real exponents -> pow_c, x**y -> power.
    Op("square", 1, "map", "a * a", da="2.0 * a * g"),
    Op("cube", 1, "map", "a * a * a", da="3.0 * a * a * g"),
    Op("powi", 1, "map", "a ** int(c)", da="c * a ** (int(c) - 1) * g",
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
    Op("tanh", 1, "map", "tanh(a)", da="g * (1.0 - y * y)"),
    # sigmoid written so that exp never overflows
    Op("sigmoid", 1, "map", "1.0 / (1.0 + exp(-a)) if a >= 0.0 else exp(a) / (1.0 + exp(a))",
       da="g * y * (1.0 - y)"),
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

    # -- where(cond, a, b): cond is the node P[p]; each operand may have size 1.
    Op("where", 2, "block", doc="elementwise cond ? a : b; no gradient into cond",
       fwd="""
ic = P[p]
oc = off[ic]
sc = 1 if off[ic + 1] - oc == ny else 0
oa = off[a0[i]]
sa = 1 if off[a0[i] + 1] - oa == ny else 0
ob = off[a1[i]]
sb = 1 if off[a1[i] + 1] - ob == ny else 0
for j in range(ny):
    val[oy + j] = val[oa + j * sa] if val[oc + j * sc] != 0.0 else val[ob + j * sb]
""", bwd="""
ic = P[p]
oc = off[ic]
sc = 1 if off[ic + 1] - oc == ny else 0
ia = a0[i]
oa = off[ia]
sa = 1 if off[ia + 1] - oa == ny else 0
ib = a1[i]
ob = off[ib]
sb = 1 if off[ib + 1] - ob == ny else 0
for j in range(ny):
    if val[oc + j * sc] != 0.0:
        if need[ia]:
            grad[oa + j * sa] += grad[oy + j]
    elif need[ib]:
        grad[ob + j * sb] += grad[oy + j]
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
)

OPCODE = {row.name: code for code, row in enumerate(ROWS)}
BY_NAME = {row.name: row for row in ROWS}
