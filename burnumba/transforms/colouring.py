"""Greedy colourings for compressed derivatives, in the style of ColPack.

Columns j and k of a Jacobian J may share a colour when no row has a nonzero in both
(distance-1 colouring of the column intersection graph ``J^T J``). Then ``J S``, with ``S``
the (n x colours) seed matrix whose column c sums the unit vectors of colour c, holds every
nonzero of J once: ``J[i, j] = (J S)[i, colour[j]]`` (direct recovery). Rows are coloured the
same way on ``J J^T`` for ``W^T J``.

Each graph is coloured greedily in several vertex orders (natural, largest-first,
smallest-last, incidence-degree, and DSATUR's dynamic one) and the fewest colours win: on a
2-D five-point stencil's Jacobian, 5 colours (largest-first alone: 7).

A Hessian H is symmetric, so a *star* colouring of its adjacency graph suffices
(distance-1, and no path on four vertices in two colours): every nonzero H[i, j] is then
read from ``H S`` at (i, colour[j]) when j is the only neighbour of i of its colour, else at
(j, colour[i]) (symmetric recovery). It needs at most as many colours as colouring H's
columns directly (distance-2), often fewer; ``hessian_colouring`` takes whichever is smaller.

The loops are compiled (``colouring_numba.py``, imported on the first colouring); building
the conflict graphs is scipy.sparse's product.
"""
import numpy as np
import scipy.sparse as sp

ORDERS = ("natural", "largest_first", "smallest_last", "incidence_degree", "dsatur")

# DSATUR's saturation update reads each neighbour's neighbours: skip it on graphs where
# that costs more than this many steps (dense rows)
_DSATUR_WORK = 5 * 10 ** 7


def _ones(pattern):
    """The pattern's structure as int32 ones (a product of ones counts, never cancels)."""
    p = sp.csr_matrix(pattern)
    p.eliminate_zeros()
    return sp.csr_matrix((np.ones(p.nnz, dtype=np.int32), p.indices, p.indptr), shape=p.shape)


def _arrays(graph):
    g = sp.csr_matrix(graph)
    return g.indptr.astype(np.int64), g.indices.astype(np.int64), g.shape[0]


def _numba():
    from . import colouring_numba        # numba: only when a colouring is asked for
    return colouring_numba


def _use(orders, names=ORDERS):
    unknown = set(orders) - set(names)
    if unknown:
        raise ValueError(f"unknown colouring orders {sorted(unknown)}; the orders: {names}")
    return np.array([name in orders for name in names], dtype=np.bool_)


def greedy(conflicts, orders=ORDERS, lower=0):
    """Colours 0.. of the vertices of a symmetric conflict graph (CSR, self loops ignored):
    the greedy colouring (each vertex the smallest colour none of its neighbours has) in each
    of ``orders``, the one with the fewest colours; the search stops at a colouring of
    ``lower`` colours (a known lower bound: no order can do better). Returns (colours,
    count)."""
    indptr, indices, n = _arrays(conflicts)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    colour = _numba().best_greedy(indptr, indices, n, _use(orders), lower, _DSATUR_WORK)
    return colour, int(colour.max()) + 1


def column_colouring(pattern, orders=ORDERS):
    """Colours of J's columns such that no row has two nonzeros of one colour (at least
    the most nonzeros a row holds: the search stops there)."""
    p = _ones(pattern)
    return greedy((p.T @ p).tocsr(), orders, int(np.diff(p.indptr).max(initial=0)))


def row_colouring(pattern, orders=ORDERS):
    """Colours of J's rows such that no column has two nonzeros of one colour (at least
    the most nonzeros a column holds)."""
    p = _ones(pattern)
    return greedy((p @ p.T).tocsr(), orders, int(p.getnnz(axis=0).max(initial=0)))


def star_colouring(pattern, orders=ORDERS[:4]):
    """A star colouring of a symmetric pattern's adjacency graph (the diagonal ignored), the
    fewest colours over ``orders`` (DSATUR's is not one). Returns (colours, count)."""
    indptr, indices, n = _arrays(_ones(pattern))
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    colour = _numba().best_star(indptr, indices, n, _use(orders, ORDERS[:4]))
    return colour, int(colour.max()) + 1


def hessian_colouring(pattern):
    """(colours, count, kind) for a symmetric pattern: a star colouring ("star", symmetric
    recovery) or a distance-2 one ("direct"), whichever has fewer colours (star on ties)."""
    s = star_colouring(pattern)
    d = column_colouring(pattern)
    return (s + ("star",)) if s[1] <= d[1] else (d + ("direct",))


def star_recovery(pattern, colour):
    """Per nonzero of the symmetric CSR ``pattern`` (its order), the flat index into the
    compressed (colours x n) matrix ``(H S)^T`` that holds it (see the module's text)."""
    p = sp.csr_matrix(pattern)
    return _numba().star_recovery(p.indptr.astype(np.int64), p.indices.astype(np.int64),
                                  np.asarray(colour, dtype=np.int64), p.shape[0])


def is_valid(pattern, colour, by="column"):
    """Whether a colouring recovers J directly: no row (columns) or column (rows) holds two
    nonzeros of one colour."""
    p = _ones(pattern)
    if by != "column":
        p = sp.csr_matrix(p.T)
    colour = np.asarray(colour, dtype=np.int64)
    return bool(_numba().distinct_per_row(p.indptr.astype(np.int64), p.indices.astype(np.int64),
                                          colour, int(colour.max(initial=0)) + 1))


def is_star(pattern, colour):
    """Whether ``colour`` is a star colouring of a symmetric pattern's adjacency graph."""
    indptr, indices, n = _arrays(_ones(pattern))
    return bool(_numba().is_star(indptr, indices, np.asarray(colour, dtype=np.int64), n))
