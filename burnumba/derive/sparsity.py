"""Sparsity patterns read off a tape: which inputs each value depends on (the Jacobian's
pattern) and which pairs of inputs interact nonlinearly (the Hessian's).

Each value element gets the set of differentiated input elements it may depend on. The tape
is read once, in order (tape order is execution order), and every row has a rule:

* a map row: an element reads the same element of each operand, or the one a scalar or a
  tile repeats; an operand with no derivative rule (a comparison's) adds nothing. Its
  Hessian pairs: none for add, subtract, negative, positive; a x b for multiply; a x b and
  b x b for divide; every pair of the element's set for the rest;
* a block row: its ``Sparsity`` (``kernels/row.py``), a field of the row in its rule file
  (``kernels/blocks_*.py``); a block row without one (the linear algebra rows,
  causal_softmax, layer_norm, cross_entropy) is dense and nonlinear. This module holds no
  rule of its own for any block row.

Exact (``EXACT``: the pattern is the union over points of the true one): input, const, the
map rows, where, gather (positions fixed at trace time), scatter, sum, sumsq, inner, the
axis reductions (sum_axis, max_axis, logsumexp), softmax / log_softmax (the whole axis),
the scans (cumsum, cumprod, logcumsumexp: the prefix), matmul (row i of A and column j of
B), argsort (integers: no derivative), the incomplete beta rows (their a, b and x
elements). Conservative: take and take_add (the rows read are
data, so every row may be), and every other block (cross_entropy, layer_norm,
causal_softmax, the linear algebra rows, the wide vmap rows): each output element depends on
every operand element. (Exact is per row: a Hessian pair from Walther's rule may still be
zero, as max's second derivative.)

The Hessian's pattern is the union, over the nonlinear rows, of the nonlinear interactions
of their operands (Walther's rule). Both patterns hold every nonzero of the true matrices
at every point (they may hold more).

One compiled loop over the tape (``sparsity_numba.py``), each node's rule an integer code
per opcode: a 1000-variable chained Rosenbrock written as a scalar loop (about 7000 nodes)
has its Hessian pattern in about 10 ms (the pass in Python per node took 1.5 s).
"""
import functools
import math

import numpy as np
import scipy.sparse as sp

from ..kernels import ROWS

# the map rows' Hessian classes, by name (the rest are nonlinear)
_LINEAR_MAPS = frozenset(("add", "subtract", "negative", "positive"))
_BILINEAR_MAPS = frozenset(("multiply",))

def rule(row):
    """(deps, hessian, exact) of a row (see ``kernels/row.py: Sparsity``)."""
    if row.kind == "map":
        return ("map", "linear" if row.name in _LINEAR_MAPS else "bilinear"
                if row.name in _BILINEAR_MAPS else "quotient" if row.name == "divide"
                else "nonlinear", True)
    if row.kind != "block":
        return ("none", "linear", True)        # inputs are set first; constants: nothing
    if row.sparsity is not None:
        return tuple(row.sparsity)
    return ("dense", "nonlinear", False)       # Sparsity's conservative default


EXACT = frozenset(r.name for r in ROWS if rule(r)[2])


@functools.lru_cache(maxsize=None)
def _tables():
    """Per opcode: (kind, hess, use_a, use_b) as int64 arrays, for the compiled pass."""
    from . import sparsity_numba as sn          # numba: only when a pattern is asked for
    kind, hess, use_a, use_b = [], [], [], []
    for row in ROWS:
        deps, h, _ = rule(row)
        kind.append(getattr(sn, deps.upper()))
        hess.append(getattr(sn, h.upper()))
        use_a.append(int(row.kind == "map" and row.da is not None))
        use_b.append(int(row.kind == "map" and row.arity == 2 and row.db is not None))
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
