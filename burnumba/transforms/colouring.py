"""Greedy colourings for compressed derivatives, in the style of ColPack.

Columns j and k of a Jacobian J may share a colour when no row has a nonzero in both
(distance-1 colouring of the column intersection graph ``J^T J``). Then ``J S``, with ``S``
the (n x colours) seed matrix whose column c sums the unit vectors of colour c, holds every
nonzero of J once: ``J[i, j] = (J S)[i, colour[j]]`` (direct recovery). Rows are coloured the
same way on ``J J^T`` for ``W^T J``. A Hessian is coloured as the Jacobian of its gradient
(distance-2 in its adjacency graph), which also recovers directly; a star colouring, which
uses its symmetry, may need fewer colours and is not done here.
"""
import numpy as np
import scipy.sparse as sp


def greedy(conflicts):
    """Colours 0.. of the vertices of a symmetric conflict graph (CSR, self loops ignored),
    largest degree first (Welsh-Powell), each vertex the smallest colour none of its
    neighbours has. Returns (colours, count)."""
    g = sp.csr_matrix(conflicts)
    n = g.shape[0]
    indptr, indices = g.indptr, g.indices
    degree = np.diff(indptr)
    order = np.argsort(-degree, kind="stable")
    colour = np.full(n, -1, dtype=np.int64)
    mark = np.full(int(degree.max()) + 2 if n else 1, -1, dtype=np.int64)
    for v in order.tolist():
        nb = indices[indptr[v]:indptr[v + 1]]
        used = colour[nb]
        used = used[used >= 0]
        mark[used] = v
        c = 0
        while mark[c] == v:
            c += 1
        colour[v] = c
    return colour, int(colour.max()) + 1 if n else 0


def _ones(pattern):
    """The pattern's structure as int32 ones (a product of ones counts, never cancels)."""
    p = sp.csr_matrix(pattern)
    p.eliminate_zeros()
    return sp.csr_matrix((np.ones(p.nnz, dtype=np.int32), p.indices, p.indptr), shape=p.shape)


def column_colouring(pattern):
    """Colours of J's columns such that no row has two nonzeros of one colour."""
    p = _ones(pattern)
    return greedy((p.T @ p).tocsr())


def row_colouring(pattern):
    """Colours of J's rows such that no column has two nonzeros of one colour."""
    p = _ones(pattern)
    return greedy((p @ p.T).tocsr())


def is_valid(pattern, colour, by="column"):
    """Whether a colouring recovers J directly: no row (columns) or column (rows) holds two
    nonzeros of one colour."""
    p = _ones(pattern)
    if by != "column":
        p = sp.csr_matrix(p.T)
    for i in range(p.shape[0]):
        c = colour[p.indices[p.indptr[i]:p.indptr[i + 1]]]
        if np.unique(c).size != c.size:
            return False
    return True
