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

Plain Python with scipy.sparse, one step per node: fast for vectorised programs (a few dozen
nodes of 10^5 elements), about 50 us a node for scalar graphs.
"""
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


def _binary(m):
    """m as a CSR matrix of ones (duplicates summed, zeros dropped)."""
    m = sp.csr_matrix(m)
    m.sum_duplicates()
    m.eliminate_zeros()
    m.data = np.ones(m.data.size, dtype=np.int32)
    return m


def _select(rows, size):
    """The (len(rows) x size) matrix that picks rows: S @ D is D[rows]."""
    k = len(rows)
    return sp.csr_matrix((np.ones(k, dtype=np.int32), (np.arange(k), rows)), shape=(k, size))


def _aggregate(out_idx, in_idx, n_out, n_in):
    """R with R[out_idx[t], in_idx[t]] = 1: R @ D ors the rows of D into the outputs."""
    return sp.csr_matrix((np.ones(len(out_idx), dtype=np.int32), (out_idx, in_idx)),
                         shape=(n_out, n_in))


class _Reader:
    """The tape's columns, and the pattern found so far per node."""

    def __init__(self, tape):
        self.tape = tape
        self.off = np.asarray(tape.off, dtype=np.int64)
        self.P = np.asarray(tape.P, dtype=np.int64)
        self.D = [None] * len(tape.op)
        self.n = tape.n_diff_elems

    def size(self, node):
        return int(self.off[node + 1] - self.off[node])

    def dep(self, node):
        d = self.D[node]
        return d if d is not None else sp.csr_matrix((self.size(node), self.n), dtype=np.int32)

    def at_positions(self, pos):
        """The rows of the value buffer's positions ``pos`` (any nodes)."""
        owner = np.searchsorted(self.off, pos, side="right") - 1
        order = np.argsort(owner, kind="stable")
        parts = []
        for node in np.unique(owner):
            local = pos[owner == node] - self.off[node]
            parts.append(self.dep(int(node))[local])
        stacked = sp.vstack(parts, format="csr") if parts else \
            sp.csr_matrix((0, self.n), dtype=np.int32)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        return stacked[inverse]

    def params(self, i, count):
        p = int(self.tape.pp[i])
        return self.P[p:p + count]


def _operand_rows(r, node, ny):
    """An operand's rows as the map kernels read them: element e of the output reads element
    e % size (the operand itself, a scalar, or a repeated tile)."""
    d = r.dep(node)
    size = d.shape[0]
    return d if size == ny else d[np.arange(ny) % size]


def _axis_groups(outer, m, inner):
    """(o, j, k) flat index as outer x m x inner, and (o, k) of each."""
    o, j, k = np.meshgrid(np.arange(outer), np.arange(m), np.arange(inner), indexing="ij")
    return (o * m + j) * inner + k, o * inner + k, j


def _node_pattern(r, i, hess):
    """D of node i; appends its nonlinear interactions to ``hess`` (a list) when not None."""
    tape = r.tape
    row = ROWS[tape.op[i]]
    name = row.name
    ny = r.size(i)
    a0, a1 = int(tape.a0[i]), int(tape.a1[i])
    if row.kind == "map":
        ops = [(node, slot) for node, slot in ((a0, "da"), (a1, "db"))[:row.arity]
               if node >= 0 and getattr(row, slot) is not None]
        parts = [_operand_rows(r, node, ny) for node, _ in ops]
        d = _binary(sum(parts[1:], parts[0])) if parts else None
        if hess is not None and parts and name not in _LINEAR_MAPS:
            if name in _BILINEAR_MAPS and len(parts) == 2:
                hess.append(parts[0].T @ parts[1])
            elif name == "divide" and len(parts) == 2 and ops[0][1] == "da":
                hess.append(parts[0].T @ parts[1])      # a / b: cross, and b with itself
                hess.append(parts[1].T @ parts[1])
            else:
                hess.append(d.T @ d)
        return d
    if name in ("input", "const"):
        return None                                     # set by the caller for inputs
    if name in _NO_DERIVATIVE:
        return None
    if name == "gather":
        c = float(tape.imm[i])
        p = int(tape.pp[i])
        if c == 1.0:
            pos = np.arange(ny) + r.P[p]
        elif c == 2.0:
            pos = np.full(ny, r.P[p])
        else:
            pos = r.P[p:p + ny]
        return r.at_positions(pos)
    if name == "where":
        d = _binary(_operand_rows(r, a0, ny) + _operand_rows(r, a1, ny))
        return d
    if name == "scatter":
        na = r.size(a0)
        p = int(tape.pp[i])
        if float(tape.imm[i]) == 1.0:
            to = np.arange(na) + r.P[p]
        else:
            to = r.P[p:p + na]
        return _binary(_aggregate(to, np.arange(na), ny, na) @ r.dep(a0))
    if name in ("sum", "sumsq"):
        nodes = r.params(i, 1 + int(r.P[int(tape.pp[i])]))[1:]
        parts = [r.dep(int(k)) for k in nodes]
        if hess is not None and name == "sumsq":
            hess.extend(part.T @ part for part in parts)
        rows = [_binary(part.sum(axis=0)) for part in parts]
        return _binary(sum(rows[1:], rows[0]))
    if name == "inner":
        m = int(r.P[int(tape.pp[i])])
        ks = r.params(i, 1 + 2 * m)[1:]
        xs, ws = [r.dep(int(k)) for k in ks[:m]], [r.dep(int(k)) for k in ks[m:]]
        if hess is not None:
            hess.extend(x.T @ w for x, w in zip(xs, ws))
        parts = [_binary(x.sum(axis=0)) for x in xs + ws]
        if a0 >= 0:
            parts.append(r.dep(a0))
        return _binary(sum(parts[1:], parts[0]))
    if name == "matmul":
        nb, M, K, N, sa, sb = (int(v) for v in r.params(i, 6))
        bt, ii, jj, kk = np.meshgrid(np.arange(nb), np.arange(M), np.arange(N), np.arange(K),
                                     indexing="ij")
        out = ((bt * M + ii) * N + jj).ravel()
        ia = ((bt * sa * M + ii) * K + kk).ravel()
        ib = ((bt * sb * K + kk) * N + jj).ravel()
        DA, DB = r.dep(a0), r.dep(a1)
        d = _binary(_aggregate(out, ia, ny, DA.shape[0]) @ DA
                    + _aggregate(out, ib, ny, DB.shape[0]) @ DB)
        if hess is not None:
            # pairs A[b, i, k] x B[b, k, j]: per (b, k), the union over i times the union over j
            b2, i2, k2 = np.meshgrid(np.arange(nb), np.arange(M), np.arange(K), indexing="ij")
            RA = _aggregate((b2 * K + k2).ravel(), ((b2 * sa * M + i2) * K + k2).ravel(),
                            nb * K, DA.shape[0])
            b3, k3, j3 = np.meshgrid(np.arange(nb), np.arange(K), np.arange(N), indexing="ij")
            RB = _aggregate((b3 * K + k3).ravel(), ((b3 * sb * K + k3) * N + j3).ravel(),
                            nb * K, DB.shape[0])
            hess.append((RA @ DA).T @ (RB @ DB))
        return d
    if name in _AXIS_REDUCE | _AXIS_WHOLE | _AXIS_PREFIX:
        outer, m, inner = (int(v) for v in r.params(i, 3))
        flat, group, j = _axis_groups(outer, m, inner)
        DA = r.dep(a0)
        if name in _AXIS_REDUCE:
            d = _binary(_aggregate(group.ravel(), flat.ravel(), outer * inner, DA.shape[0]) @ DA)
        elif name in _AXIS_WHOLE:
            R = _aggregate(group.ravel(), flat.ravel(), outer * inner, DA.shape[0])
            d = _binary(R.T @ (R @ DA))
        else:                       # prefix: (o, j, k) reads (o, i, k) for i <= j
            src, dst = [], []
            for jj in range(m):
                for i2 in range(jj + 1):
                    dst.append(flat[:, jj, :].ravel())
                    src.append(flat[:, i2, :].ravel())
            d = _binary(_aggregate(np.concatenate(dst), np.concatenate(src), ny,
                                   DA.shape[0]) @ DA)
        if hess is not None and name not in ("sum_axis", "cumsum"):
            hess.append(d.T @ d)
        return d
    # conservative: every output element depends on every operand element (take / take_add
    # read data-dependent rows; the rest are dense blocks)
    nodes = [k for k in (a0, a1) if k >= 0]
    if name in ("take", "take_add"):
        nodes = [a0]                     # the indices (a1) are integers: no derivative
    rows = [_binary(r.dep(k).sum(axis=0)) for k in nodes]
    if not rows:
        return None
    union = _binary(sum(rows[1:], rows[0]))
    d = _binary(sp.vstack([union] * ny)) if ny > 1 else union
    if hess is not None and name not in _LINEAR_BLOCKS:
        hess.append(union.T @ union)
    return d


def _run(tape, hessian):
    r = _Reader(tape)
    pos = 0
    for start, size, _, _ in tape.in_slots[:tape.n_diff]:
        node = int(np.searchsorted(r.off, start, side="right") - 1)
        cols = np.arange(pos, pos + size)
        r.D[node] = sp.csr_matrix((np.ones(size, dtype=np.int32), (np.arange(size), cols)),
                                  shape=(size, r.n))
        pos += size
    hess = [] if hessian else None
    for i in range(len(tape.op)):
        if r.D[i] is not None or not tape.need[i]:
            continue
        r.D[i] = _node_pattern(r, i, hess)
    return r, hess


def jacobian_pattern(tape):
    """The Jacobian's pattern of a tape's output (flattened) by its differentiated inputs
    (flattened, in argument order): a CSR matrix of ones, (output size x inputs)."""
    r, _ = _run(tape, False)
    return r.dep(int(tape.out))


def hessian_pattern(tape):
    """The Hessian's pattern of a tape's scalar output: a symmetric CSR matrix of ones
    (inputs x inputs), the diagonal included where it may be nonzero."""
    r, hess = _run(tape, True)
    n = r.n
    if not hess:
        return sp.csr_matrix((n, n), dtype=np.int32)
    h = _binary(sum(hess[1:], hess[0]))
    return _binary(h + h.T)


def exact_rows():
    """The names of the rows whose patterns are exact (the rest are conservative)."""
    return sorted(EXACT)


def density(pattern):
    return pattern.nnz / max(1, math.prod(pattern.shape))
