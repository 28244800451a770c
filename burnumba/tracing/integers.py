"""Integer data in a float tape: which traced values hold integers, exactly.

A tape computes in one float dtype, so integer arrays (indices) live in it as floats. A
traced value may index an array (a ``take`` row, which reads its indices at run time and
raises DataError for one out of range) only when it is integer data: an integer array
argument, an integer constant, elements moved from those (a gather), rows of an integer
table, or a row whose value is an integer whatever its operands (``floor``, ``ceil``,
``trunc``, ``rint``: ``x.astype(int)`` is ``trunc`` with no gradient), their negatives,
absolute values, maxima, minima and fmod, and, on a float64 tape, sums (elementwise,
reductions, cumsum), products, remainders and floor quotients of integer data and the
reductions of masks (``np.sum(x > 0)``: numpy's int; a mask itself indexes as a mask),
which stay exact while below 2**53 (past that, an index is out of any array's bounds
anyway). A float32 tape rounds above 2**24, so sums and
products of its indices are not integer data.
"""
import numpy as np

from ..kernels import ROWS

# The largest integer that float32 holds exactly: a flat index computed on a float32 tape
# must stay below it.
EXACT32 = 2 ** 24
# rows whose value is an integer (or NaN / inf, which the take row refuses at run time)
INTEGER_VALUED = frozenset({"floor", "ceil", "trunc", "rint"})
# rows whose value is a mask (0 or 1): numpy's booleans, which index as masks, not as
# integers, but whose sums are numpy's ints (np.sum(cdf <= u))
MASKS = frozenset({"greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
                   "logical_and", "logical_or", "logical_xor", "logical_not", "isnan",
                   "isinf", "isfinite", "signbit"})
# rows that map integers to integers exactly in any float dtype (no rounding: the result is
# one of the operands, or its sign changed, or fmod's exact remainder)
INTEGER_EXACT = frozenset({"negative", "absolute", "maximum", "minimum", "fmod",
                           "stop_gradient"})
# rows that map integers to integers exactly while the result stays below 2**53 (float64)
INTEGER_CLOSED = frozenset({"add", "subtract", "multiply", "square", "remainder",
                            "floor_divide"})
# the reductions that do, on float64, when their immediate is 1 or -1 (a sum, not a mean);
# "sum" reads its listed operands, the others their first
INTEGER_SUMS = frozenset({"sum", "sum_axis", "cumsum"})


def integer_data(b, v):
    """Whether the traced value ``v`` (of builder ``b``) holds integer data, exact in the
    tape's dtype."""
    if v._view is not None:
        return integer_positions(b, v._view[0])
    return integer_node(b, v._node)


def integer_positions(b, positions):
    """Whether every node owning one of the arena ``positions`` holds integer data."""
    owners = np.unique(np.searchsorted(np.asarray(b.off), np.ravel(positions), "right") - 1)
    return all(integer_node(b, int(k)) for k in owners)


def integer_node(b, node, _seen=None):
    """Whether node ``node`` of builder ``b`` holds integer data."""
    kind = b.input_kinds.get(node)
    if kind is not None:
        return kind in ("i", "u")
    name = ROWS[b.op[node]].name
    if name == "const":
        v = b.consts[node]
        exact = EXACT32 if b.dtype == np.float32 else 2 ** 53
        return bool(np.all((v == np.floor(v)) & (np.abs(v) <= exact)))
    if name == "gather":
        start = b.pp[node]
        return integer_positions(b, b.params[start:start + b.off[node + 1] - b.off[node]])
    if name == "take":                           # rows of an integer table
        return integer_node(b, b.a0[node])
    if name in INTEGER_VALUED:
        return True
    if name in INTEGER_SUMS and b.dtype == np.float64:
        if name != "cumsum" and abs(b.imm[node]) != 1.0:
            return False
        start = b.pp[node]
        operands = b.params[start + 1:start + 1 + b.params[start]] if name == "sum" else \
            (b.a0[node],)
        seen = set() if _seen is None else _seen
        return all(ROWS[b.op[int(k)]].name in MASKS or integer_node(b, int(k), seen)
                   for k in operands)
    if name in INTEGER_EXACT or (name in INTEGER_CLOSED and b.dtype == np.float64):
        seen = set() if _seen is None else _seen     # a shared operand is checked once
        if node in seen:
            return True
        seen.add(node)
        operands = (b.a0[node],) if ROWS[b.op[node]].arity == 1 else (b.a0[node], b.a1[node])
        return all(integer_node(b, int(k), seen) for k in operands)
    return False
