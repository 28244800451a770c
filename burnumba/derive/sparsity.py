"""Sparsity patterns read off a tape: which inputs each value depends on (the Jacobian's
pattern) and which pairs of inputs interact nonlinearly (the Hessian's).

Each node gets a boolean matrix ``D`` (its elements x the differentiated input elements):
``D[e, j]`` is true when element ``e`` may depend on input ``j``. The tape is read once,
in order (tape order is execution order), and every row kind has a rule:

* exact: input, const, the map rows (an element reads the same element of each operand, or
  the one a scalar or a tile repeats; an operand with no derivative rule, as a comparison's,
  adds nothing), where, gather (positions fixed at trace time), scatter, sum, sumsq, inner,
  the axis reductions (sum_axis, max_axis, logsumexp), softmax / log_softmax (the whole
  axis), the scans (cumsum, cumprod, logcumsumexp: the prefix), matmul (row i of A and
  column j of B), argsort (integers: no derivative);
* conservative: take and take_add (the rows read are data, so every row may be), and every
  other block (cross_entropy, layer_norm, causal_softmax, the linear algebra rows, the
  wide vmap rows): each output element depends on every operand element.

The Hessian's pattern is the union, over the nonlinear rows, of the nonlinear interactions
of their operands (Walther's rule): ``D_a^T D_b`` for a row bilinear in ``a`` and ``b``
(multiply, matmul, inner) and ``D^T D`` over its operands' union for any other nonlinear row;
linear rows (add, subtract, negative, gather, sum, ...) add nothing. Both patterns hold every
nonzero of the true matrices at every point (they may hold more).

One compiled loop over the tape (``sparsity_numba.py``): a node's rule is chosen by the
code its row has in ``KIND`` / ``HESS`` below (a map row's by its ``da`` / ``db`` and its
name). A 1000-variable chained Rosenbrock written as a scalar loop (about 7000 nodes) has
its Hessian pattern in milliseconds.
"""
import functools
import math

import numpy as np
import scipy.sparse as sp

from ..kernels import ROWS

# exact dependence rules and nonlinearity classes, by row name
_LINEAR_MAPS = frozenset(("add", "subtract", "negative", "positive"))
_BILINEAR_MAPS = frozenset(("multiply",))
_LINEAR_BLOCKS = frozenset(("gather", "scatter", "sum", "sum_axis", "cumsum", "take",
                            "take_add", "where", "gather_lanes", "sum_lanes"))
_NO_DERIVATIVE = frozenset(("argsort",))
_AXIS_WHOLE = frozenset(("softmax", "log_softmax"))
_AXIS_PREFIX = frozenset(("cumsum", "cumprod", "logcumsumexp"))
_AXIS_REDUCE = frozenset(("sum_axis", "max_axis", "logsumexp"))
EXACT = frozenset({"input", "const", "where", "gather", "scatter", "sum", "sumsq", "inner",
                   "matmul"} | _NO_DERIVATIVE | _AXIS_WHOLE | _AXIS_PREFIX | _AXIS_REDUCE
                  | {r.name for r in ROWS if r.kind == "map"})


# block rows: (how the pattern is found, which Hessian pairs the row adds), as codes of
# sparsity_numba.py; a block row not named here is dense and nonlinear (conservative)
_BLOCKS = {
    "where": ("WHERE", "LINEAR"), "gather": ("GATHER", "LINEAR"),
    "scatter": ("SCATTER", "LINEAR"), "sum": ("LISTED", "LINEAR"),
    "sumsq": ("LISTED", "SQUARES"), "inner": ("INNER", "BILINEAR"),
    "matmul": ("MATMUL", "BILINEAR"), "sum_axis": ("REDUCE", "LINEAR"),
    "max_axis": ("REDUCE", "NONLINEAR"), "logsumexp": ("REDUCE", "NONLINEAR"),
    "softmax": ("WHOLE", "NONLINEAR"), "log_softmax": ("WHOLE", "NONLINEAR"),
    "cumsum": ("PREFIX", "LINEAR"), "cumprod": ("PREFIX", "NONLINEAR"),
    "logcumsumexp": ("PREFIX", "NONLINEAR"), "argsort": ("NONE", "LINEAR"),
    "take": ("DENSE_A0", "LINEAR"), "take_add": ("DENSE_A0", "LINEAR"),
    "gather_lanes": ("DENSE", "LINEAR"), "sum_lanes": ("DENSE", "LINEAR"),
}


@functools.lru_cache(maxsize=None)
def _tables():
    """Per opcode: (kind, hess, use_a, use_b) as int64 arrays, for the compiled pass."""
    from . import sparsity_numba as sn          # numba: only when a pattern is asked for
    kind, hess, use_a, use_b = [], [], [], []
    for row in ROWS:
        a = b = 0
        if row.kind == "map":
            k = "MAP"
            a = int(row.da is not None)
            b = int(row.arity == 2 and row.db is not None)
            h = ("LINEAR" if row.name in _LINEAR_MAPS else "BILINEAR"
                 if row.name in _BILINEAR_MAPS else "QUOTIENT" if row.name == "divide"
                 else "NONLINEAR")
        elif row.kind == "block":
            k, h = _BLOCKS.get(row.name, ("DENSE", "NONLINEAR"))
        else:
            k, h = "NONE", "LINEAR"              # inputs are set first; constants: nothing
        kind.append(getattr(sn, k))
        hess.append(getattr(sn, h))
        use_a.append(a)
        use_b.append(b)
    return tuple(np.asarray(t, dtype=np.int64) for t in (kind, hess, use_a, use_b))


def _run(tape, hessian):
    """(Jacobian pattern of the output, Hessian keys i * n + j, i <= j) of a tape."""
    from .sparsity_numba import propagate
    kind, hess, use_a, use_b = _tables()
    op = np.asarray(tape.op, dtype=np.int64)
    n = tape.n_diff_elems
    in_pos = np.concatenate([np.arange(start, start + size, dtype=np.int64)
                             for start, size, _, _ in tape.in_slots[:tape.n_diff]]
                            or [np.zeros(0, dtype=np.int64)])
    i64 = functools.partial(np.asarray, dtype=np.int64)
    indptr, indices, keys = propagate(
        kind[op], hess[op], use_a[op], use_b[op], i64(tape.a0), i64(tape.a1), i64(tape.off),
        i64(tape.P), i64(tape.pp), np.asarray(tape.imm, dtype=np.float64),
        i64(tape.need), in_pos, n, int(tape.out), bool(hessian))
    ny = indptr.size - 1
    jac = sp.csr_matrix((np.ones(indices.size, dtype=np.int32), indices, indptr),
                        shape=(ny, n))
    jac.sort_indices()
    return jac, keys


def jacobian_pattern(tape):
    """The Jacobian's pattern of a tape's output (flattened) by its differentiated inputs
    (flattened, in argument order): a CSR matrix of ones, (output size x inputs)."""
    return _run(tape, False)[0]


def hessian_pattern(tape):
    """The Hessian's pattern of a tape's scalar output: a symmetric CSR matrix of ones
    (inputs x inputs), the diagonal included where it may be nonzero."""
    _, keys = _run(tape, True)
    n = tape.n_diff_elems
    i, j = np.divmod(keys, max(n, 1))
    off = i != j
    rows = np.concatenate([i, j[off]])
    cols = np.concatenate([j, i[off]])
    h = sp.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(n, n))
    h.sort_indices()
    return h


def exact_rows():
    """The names of the rows whose patterns are exact (the rest are conservative)."""
    return sorted(EXACT)


def density(pattern):
    return pattern.nnz / max(1, math.prod(pattern.shape))
