"""Opcodes: each row declares its own where it is defined (``Op.opcode``, kernels/row.py) and
kernels/ops.py gathers the families' rows in opcode order. Tape files store opcodes, so the
opcode of every row that existed when this file was written is pinned here: a tape file
written then still reads (and runs) with this op table."""
import pytest

from burnumba.ir import tapefile
from burnumba.kernels import OPCODE, ROWS, ops
from burnumba.kernels.errors import KernelError

# name -> opcode (its place here) of the 118 rows of 2026-12-05 (commit 0858dab)
PINNED = (
    "input", "const", "add", "subtract", "multiply", "divide", "negative", "square", "cube",
    "powi", "pow_c", "power", "exp", "log", "sqrt", "reciprocal", "rsqrt", "tanh", "sigmoid",
    "gelu_tanh", "gelu_erf", "sin", "cos", "erf", "stop_gradient", "relu", "absolute",
    "maximum", "minimum", "greater", "greater_equal", "less", "less_equal", "equal",
    "not_equal", "where", "gather", "sum", "sumsq", "inner", "sum_axis", "max_axis", "softmax",
    "causal_softmax", "log_softmax", "logsumexp", "layer_norm", "cross_entropy", "take",
    "scatter", "take_add", "matmul", "sign", "sinh", "cosh", "tan", "arcsin", "arccos",
    "arctan", "arctan2", "hypot", "exp2", "expm1", "log1p", "log2", "log10", "logaddexp",
    "logaddexp2", "fmax", "fmin", "floor", "ceil", "remainder", "cumsum", "cumprod", "argsort",
    "arcsinh", "arccosh", "arctanh", "cbrt", "copysign", "fmod", "heaviside", "rint", "trunc",
    "floor_divide", "isnan", "isinf", "isfinite", "signbit", "logical_not", "logical_and",
    "logical_or", "logical_xor", "solve", "slogdet", "cholesky", "eigh", "matmul_lanes",
    "gather_lanes", "sum_lanes", "logcumsumexp", "gammaln", "polygamma", "erfc", "erfinv",
    "ndtri", "log_ndtr", "i0", "i1", "j0", "j1", "y0", "y1", "gammainc", "gammaincc", "jn",
    "yn",
)
# the rows added since, each with the opcode it declared (118 on): cummax and cummin
# (commit 7e31679), the incomplete beta rows (issue #31, kernels/blocks_beta.py), a user's
# numba op (bn.njit_op, kernels/blocks_user.py), the incomplete gamma inverses, gammainc's
# derivative in a, betainc's in a and b, sum_axis's and scatter's lanes forms (bn.vmap's wide
# tapes), Owen's T (kernels/special_owens.py), the Bessel functions of real order
# (kernels/special_bessel_real.py)
PINNED_SINCE = ("cummax", "cummin", "betainc", "betaincc", "betainc_dx", "njit_call",
                "gammaincinv", "gammainccinv", "gammainc_da", "betainc_da", "betainc_db",
                "sum_axis_lanes", "scatter_lanes", "owens_t", "jv", "yv", "iv", "ive", "kv",
                "kve")
# the tape-file digest of that table (burnumba/ir/tapefile.py: _digest, the rows' name,
# arity and kind per opcode): the meta of a tape file written with it
PINNED_DIGEST = "3e5584419268703a"


def test_every_pinned_row_keeps_its_opcode():
    assert len(PINNED) == 118 and len(set(PINNED)) == 118
    for code, name in enumerate(PINNED):
        assert OPCODE[name] == code, name
        assert ROWS[code].name == name and ROWS[code].opcode == code
    # rows added since come after, in the order of their opcodes
    assert [r.opcode for r in ROWS] == list(range(len(ROWS)))
    assert ops.ORDER == tuple(r.name for r in ROWS)


def test_every_row_added_since_keeps_its_opcode():
    for code, name in enumerate(PINNED_SINCE, start=len(PINNED)):
        assert OPCODE[name] == code, name
        assert ROWS[code].name == name


def test_a_tape_file_of_the_pinned_table_still_reads():
    """Its digest is a prefix of this table's, so a file written with it may use all of its
    118 rows (and none added since)."""
    assert tapefile._digest(ROWS[:len(PINNED)]) == PINNED_DIGEST
    assert tapefile.table_rows(PINNED_DIGEST) == len(PINNED)


def test_opcodes_must_be_declared_unique_and_without_a_gap():
    """ops.py refuses a table whose opcodes are missing, repeated or leave a gap, with an
    error that names the rows and the next free opcode."""
    rows = list(ROWS)
    n = len(rows)
    new = rows[2]._replace(name="newrow", opcode=None)
    with pytest.raises(KernelError, match=f"'newrow' declares no opcode.*opcode={n}"):
        ops._in_opcode_order((tuple(rows), (new,)))
    with pytest.raises(KernelError, match=f"'add' and 'newrow' both declare opcode 2.*{n}"):
        ops._in_opcode_order((tuple(rows), (new._replace(opcode=2),)))
    with pytest.raises(KernelError, match=f"no row declares opcode {n}.*'newrow' takes {n}"):
        ops._in_opcode_order((tuple(rows), (new._replace(opcode=n + 1),)))
    with pytest.raises(KernelError, match="one name"):
        ops._in_opcode_order((tuple(rows), (rows[2]._replace(opcode=n),)))
    # a new row with the next free opcode joins at the end, whatever its family
    table = ops._in_opcode_order(((new._replace(opcode=n),), tuple(rows)))
    assert [r.name for r in table] == [r.name for r in rows] + ["newrow"]
