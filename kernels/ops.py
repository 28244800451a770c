"""The op table: every op burnumba can put on a tape is one row of ``ROWS``.

A row (``row.Op``) holds the op's name, its arity, its forward and backward rules, the
domain that the gradient tests sample from and its conventions at kinks. Everything else is
derived from this table: ``_gen.py`` writes the kernels' ``if op == ...`` branches from it,
``reference.py`` runs the same rules in plain Python, and the tracer looks rows up by name.

The rows live by kind: the elementwise ones in ``maps.py``, each family of block rows in a
``blocks_*.py`` module with its rules and the templates only it uses (``templates.py`` has
the shared ones), and their special-value cases in ``ieee_cases.py``. This module puts them
in opcode order.

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
from . import blocks_gather, blocks_linalg, blocks_matmul, blocks_reduce, blocks_scan
from . import blocks_softmax, maps, maps_special
from .row import Op

# leaves: their slices are written by the caller (inputs) or at trace time (consts)
LEAVES = (
    Op("input", 0, "leaf", doc="an argument of the traced function"),
    Op("const", 0, "leaf", doc="a value captured at trace time, stored once in the tape"),
)

# The opcodes: a row's opcode is its place here. Tape files store opcodes, so rows are only
# ever appended (the lanes rows, bn.vmap's wide tapes, came last: the opcodes above stayed
# as they were).
ORDER = (
    "input", "const", "add", "subtract", "multiply", "divide", "negative", "square", "cube",
    "powi", "pow_c", "power", "exp", "log", "sqrt", "reciprocal", "rsqrt", "tanh", "sigmoid",
    "gelu_tanh", "gelu_erf", "sin", "cos", "erf", "stop_gradient", "relu", "absolute", "maximum",
    "minimum", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "where",
    "gather", "sum", "sumsq", "inner", "sum_axis", "max_axis", "softmax", "causal_softmax",
    "log_softmax", "logsumexp", "layer_norm", "cross_entropy", "take", "scatter", "take_add",
    "matmul", "sign", "sinh", "cosh", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot",
    "exp2", "expm1", "log1p", "log2", "log10", "logaddexp", "logaddexp2", "fmax", "fmin", "floor",
    "ceil", "remainder", "cumsum", "cumprod", "argsort", "arcsinh", "arccosh", "arctanh", "cbrt",
    "copysign", "fmod", "heaviside", "rint", "trunc", "floor_divide", "isnan", "isinf", "isfinite",
    "signbit", "logical_not", "logical_and", "logical_or", "logical_xor", "solve", "slogdet",
    "cholesky", "eigh", "matmul_lanes", "gather_lanes", "sum_lanes", "logcumsumexp",
    # scipy.special's rows (maps_special.py, issue #31)
    "gammaln", "polygamma", "erfc", "erfinv", "ndtri", "log_ndtr", "i0", "i1",
    "j0", "j1", "y0", "y1", "gammainc", "gammaincc", "jn", "yn",
)

_DEFINED = {row.name: row for family in (LEAVES, maps.ROWS, blocks_gather.ROWS,
                                          blocks_reduce.ROWS, blocks_softmax.ROWS,
                                          blocks_matmul.ROWS, blocks_scan.ROWS,
                                          blocks_linalg.ROWS, maps_special.ROWS)
            for row in family}
assert sorted(_DEFINED) == sorted(ORDER), "every row has one opcode, every opcode one row"
ROWS = tuple(_DEFINED[name] for name in ORDER)

OPCODE = {row.name: code for code, row in enumerate(ROWS)}
BY_NAME = {row.name: row for row in ROWS}
LANES = {row.lanes_of: row for row in ROWS if row.lanes_of}   # a row's lanes form, by name
