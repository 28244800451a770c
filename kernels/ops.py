"""The op table: every op burnumba can put on a tape is one row of ``ROWS``.

A row (``row.Op``) holds the op's name, its arity, its forward and backward rules, the
domain that the gradient tests sample from and its conventions at kinks. Everything else is
derived from this table: ``_gen.py`` writes the kernels' ``if op == ...`` branches from it,
``reference.py`` runs the same rules in plain Python, and the tracer looks rows up by name.

The rows live by kind: the elementwise ones in ``maps.py``, each family of block rows in a
``blocks_*.py`` module with its rules and the templates only it uses (``templates.py`` has
the shared ones), and their special-value cases in ``ieee_cases.py`` or, for a rule file that
keeps its rows' cases next to them, in its ``IEEE_CASES`` (test data; ``special_cases()``
gathers both). Each row declares its opcode (``opcode=``, fixed forever: tape files store
it); this module gathers the families' rows in opcode order and checks that the opcodes are
unique and run 0 .. n - 1.

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
cases, data kept out of the rows: in ``ieee_cases.py`` by row name, or in the rule file's
``IEEE_CASES`` (``Op.special`` reads them, ``special_cases()`` gathers them): values as
numpy's, gradients as JAX's, with the exceptions noted at the row (absolute at NaN and at 0, a
fully masked logsumexp lane, cummax's ties split step by step).
"""
from . import blocks_beta, blocks_gather, blocks_linalg, blocks_matmul, blocks_reduce
from . import blocks_scan, blocks_softmax, blocks_user, maps, maps_special
from .errors import KernelError
from .row import Op

# leaves: their slices are written by the caller (inputs) or at trace time (consts)
LEAVES = (
    Op("input", 0, "leaf", doc="an argument of the traced function", opcode=0),
    Op("const", 0, "leaf", doc="a value captured at trace time, stored once in the tape",
       opcode=1),
)

# The rule files, each a tuple ``ROWS`` of rows. A row declares its opcode where it is defined
# (``Op.opcode``): tape files store opcodes, so a row's opcode never changes, and a new row
# (in any family) takes the next free one, ``len(ROWS)``. Adding a row to a family's ``ROWS``
# is all it takes; a new family module is listed here.
FAMILIES = (maps, blocks_gather, blocks_reduce, blocks_softmax, blocks_matmul, blocks_scan,
            blocks_linalg, maps_special, blocks_beta, blocks_user)


def _in_opcode_order(families):
    """The rows of ``families`` (tuples of rows) sorted by opcode, which must be unique and
    run 0 .. n - 1 without a gap (a gap would leave an opcode no row has; a repeat, two
    meanings for one opcode in a tape file)."""
    rows = [row for family in families for row in family]
    free = len(rows) - 1              # the opcode a row added last takes
    by_code = {}
    for row in rows:
        if not isinstance(row.opcode, int) or row.opcode < 0:
            raise KernelError(f"the row {row.name!r} declares no opcode: give it the next "
                              f"free one, opcode={free}, where it is defined")
        if row.opcode in by_code:
            raise KernelError(f"the rows {by_code[row.opcode].name!r} and {row.name!r} both "
                              f"declare opcode {row.opcode}: the opcodes of existing rows never "
                              f"change (tape files store them); the new row takes {free}")
        by_code[row.opcode] = row
    if len({row.name for row in rows}) < len(rows):
        raise KernelError("two rows of the op table have one name")
    missing = sorted(set(range(len(rows))) - set(by_code))
    if missing:
        raise KernelError(f"no row declares opcode {missing[0]}: opcodes run 0 .. {free} "
                          f"without a gap, so the row {by_code[max(by_code)].name!r} takes "
                          f"{missing[0]}")
    return tuple(by_code[k] for k in range(len(rows)))


ROWS = _in_opcode_order((LEAVES,) + tuple(family.ROWS for family in FAMILIES))
ORDER = tuple(row.name for row in ROWS)                       # the names in opcode order

OPCODE = {row.name: row.opcode for row in ROWS}
BY_NAME = {row.name: row for row in ROWS}
LANES = {row.lanes_of: row for row in ROWS if row.lanes_of}   # a row's lanes form, by name


def special_cases():
    """Every row's IEEE special-value cases by name (``Op.special``): ``ieee_cases.CASES`` and
    the rule files' ``IEEE_CASES`` (a rule file may hold its rows' cases next to them, as
    data). A name in both places, or one that names no row of that file, is an error."""
    from . import ieee_cases                   # data only tests read: loaded when asked
    cases = dict(ieee_cases.CASES)
    for family in FAMILIES:
        own = {row.name for row in family.ROWS}
        for name, rows_cases in getattr(family, "IEEE_CASES", {}).items():
            if name not in own:
                raise KernelError(f"{family.__name__}.IEEE_CASES names {name!r}, not a row of "
                                  "that file")
            if name in cases:
                raise KernelError(f"the IEEE cases of {name!r} are both in ieee_cases.py and "
                                  f"in {family.__name__}.IEEE_CASES: keep one")
            cases[name] = rows_cases
    return cases
