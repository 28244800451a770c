"""The compiled side of transforms/colouring.py: greedy colourings of a graph given as CSR
arrays (``indptr``, ``indices``; self loops are ignored), and the symmetric recovery of a
star colouring. Every function takes arrays and ints only.

Imported by the first colouring (so ``import burnumba`` never loads numba); compiled once
and cached on disk in the cache folder (``kernels/numba_cache.py``).

Orders (ColPack's names): natural; largest-first (by degree, descending); smallest-last
(repeatedly remove a vertex of smallest degree in what remains, colour in reverse removal
order); incidence-degree (next, a vertex with the most already-ordered neighbours); and
DSATUR (next, an uncoloured vertex whose neighbours hold the most distinct colours,
ordered while colouring).
"""
import numpy as np

from ..kernels.numba_cache import njit


@njit(nogil=True)
def degrees(indptr, indices, n):
    """Each vertex's number of neighbours other than itself."""
    deg = np.zeros(n, dtype=np.int64)
    for v in range(n):
        d = 0
        for t in range(indptr[v], indptr[v + 1]):
            if indices[t] != v:
                d += 1
        deg[v] = d
    return deg


@njit(nogil=True)
def greedy(indptr, indices, order, n):
    """Distance-1 colouring in ``order``: each vertex the smallest colour (0, 1, ...) none
    of its neighbours has."""
    colour = np.full(n, -1, dtype=np.int64)
    mark = np.full(n + 1, -1, dtype=np.int64)
    for k in range(n):
        v = order[k]
        for t in range(indptr[v], indptr[v + 1]):
            w = indices[t]
            if w != v and colour[w] >= 0:
                mark[colour[w]] = v
        c = 0
        while mark[c] == v:
            c += 1
        colour[v] = c
    return colour


@njit(nogil=True)
def largest_first(indptr, indices, n):
    deg = degrees(indptr, indices, n)
    return np.argsort(-deg, kind="mergesort")


@njit(nogil=True)
def _bucket_insert(head, nxt, prv, b, v):
    nxt[v] = head[b]
    prv[v] = -1
    if head[b] >= 0:
        prv[head[b]] = v
    head[b] = v


@njit(nogil=True)
def _bucket_remove(head, nxt, prv, b, v):
    if prv[v] >= 0:
        nxt[prv[v]] = nxt[v]
    else:
        head[b] = nxt[v]
    if nxt[v] >= 0:
        prv[nxt[v]] = prv[v]


@njit(nogil=True)
def smallest_last(indptr, indices, n):
    """Remove a vertex of least degree in the remaining graph, n times; the order is the
    reverse of the removals (Matula and Beck): at most max-core + 1 colours."""
    deg = degrees(indptr, indices, n)
    top = 0
    for v in range(n):
        top = max(top, deg[v])
    head = np.full(top + 1, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    for v in range(n - 1, -1, -1):
        _bucket_insert(head, nxt, prv, deg[v], v)
    removed = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    low = 0
    for k in range(n - 1, -1, -1):
        while head[low] < 0:
            low += 1
        v = head[low]
        _bucket_remove(head, nxt, prv, low, v)
        removed[v] = True
        order[k] = v
        for t in range(indptr[v], indptr[v + 1]):
            u = indices[t]
            if u != v and not removed[u]:
                _bucket_remove(head, nxt, prv, deg[u], u)
                deg[u] -= 1
                _bucket_insert(head, nxt, prv, deg[u], u)
        low = max(low - 1, 0)
    return order


@njit(nogil=True)
def incidence_degree(indptr, indices, n):
    """Next, a vertex with the most neighbours already in the order."""
    deg = degrees(indptr, indices, n)
    top = 0
    for v in range(n):
        top = max(top, deg[v])
    head = np.full(top + 1, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    inc = np.zeros(n, dtype=np.int64)
    for v in range(n - 1, -1, -1):
        _bucket_insert(head, nxt, prv, np.int64(0), v)
    done = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    high = 0
    for k in range(n):
        while head[high] < 0:
            high -= 1
        v = head[high]
        _bucket_remove(head, nxt, prv, high, v)
        done[v] = True
        order[k] = v
        for t in range(indptr[v], indptr[v + 1]):
            u = indices[t]
            if u != v and not done[u]:
                _bucket_remove(head, nxt, prv, inc[u], u)
                inc[u] += 1
                _bucket_insert(head, nxt, prv, inc[u], u)
                high = max(high, inc[u])
    return order


@njit(nogil=True)
def dsatur(indptr, indices, n):
    """DSATUR (Brelaz): colour next an uncoloured vertex whose neighbours hold the most
    distinct colours (first found among equals), the smallest colour it can take."""
    deg = degrees(indptr, indices, n)
    top = 0
    for v in range(n):
        top = max(top, deg[v])
    head = np.full(top + 2, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    sat = np.zeros(n, dtype=np.int64)
    # start from a vertex of largest degree, as Brelaz: it goes first in bucket 0
    order0 = np.argsort(deg, kind="mergesort")
    for k in range(n):
        _bucket_insert(head, nxt, prv, np.int64(0), order0[k])
    colour = np.full(n, -1, dtype=np.int64)
    mark = np.full(n + 1, -1, dtype=np.int64)
    high = 0
    for _ in range(n):
        while head[high] < 0:
            high -= 1
        v = head[high]
        _bucket_remove(head, nxt, prv, high, v)
        for t in range(indptr[v], indptr[v + 1]):
            w = indices[t]
            if w != v and colour[w] >= 0:
                mark[colour[w]] = v
        c = 0
        while mark[c] == v:
            c += 1
        colour[v] = c
        for t in range(indptr[v], indptr[v + 1]):
            u = indices[t]
            if u == v or colour[u] >= 0:
                continue
            seen = False                 # does u already see colour c (besides v)?
            for s in range(indptr[u], indptr[u + 1]):
                w = indices[s]
                if w != v and w != u and colour[w] == c:
                    seen = True
                    break
            if not seen:
                _bucket_remove(head, nxt, prv, sat[u], u)
                sat[u] += 1
                _bucket_insert(head, nxt, prv, sat[u], u)
                high = max(high, sat[u])
    return colour


@njit(nogil=True)
def star(indptr, indices, order, n):
    """Greedy star colouring in ``order``: distance-1, and no path on four vertices takes
    only two colours, so every two-coloured subgraph is a star (Gebremedhin, Manne and
    Pothen 2005). Colouring v, a colour is forbidden when it would close such a path:
    v at an end (v-w-x-y: c(x) is forbidden when x has a neighbour y != w of w's colour), or
    v second (a-v-b-y with c(a) = c(b): the colours of b's other neighbours y)."""
    colour = np.full(n, -1, dtype=np.int64)
    forbid = np.full(n + 1, -1, dtype=np.int64)
    seen = np.full(n + 1, -1, dtype=np.int64)
    twice = np.full(n + 1, -1, dtype=np.int64)
    for k in range(n):
        v = order[k]
        for t in range(indptr[v], indptr[v + 1]):
            w = indices[t]
            if w == v or colour[w] < 0:
                continue
            cw = colour[w]
            forbid[cw] = v
            if seen[cw] == v:
                twice[cw] = v
            seen[cw] = v
        for t in range(indptr[v], indptr[v + 1]):
            w = indices[t]
            if w == v or colour[w] < 0:
                continue
            cw = colour[w]
            shared = twice[cw] == v          # another neighbour of v has w's colour
            for s in range(indptr[w], indptr[w + 1]):
                x = indices[s]
                if x == w or x == v or colour[x] < 0:
                    continue
                cx = colour[x]
                if shared:
                    forbid[cx] = v
                    continue
                if forbid[cx] == v:
                    continue
                for r in range(indptr[x], indptr[x + 1]):
                    y = indices[r]
                    if y != w and y != x and colour[y] == cw:
                        forbid[cx] = v
                        break
        c = 0
        while forbid[c] == v:
            c += 1
        colour[v] = c
    return colour


@njit(nogil=True)
def star_recovery(indptr, indices, colour, n):
    """Per nonzero (i, j) of a symmetric pattern (CSR order), the flat index into the
    compressed (colours x n) matrix C = (H S)^T holding H[i, j]: C[c(j), i] when j is the
    only neighbour of i of its colour, else C[c(i), j] (then i is the only neighbour of j of
    its colour: a star colouring guarantees one of the two)."""
    nnz = indptr[n]
    take = np.empty(nnz, dtype=np.int64)
    count = np.zeros(n + 1, dtype=np.int64)
    stamp = np.full(n + 1, -1, dtype=np.int64)
    for i in range(n):
        for t in range(indptr[i], indptr[i + 1]):      # colours among i's neighbours
            j = indices[t]
            if j != i:
                c = colour[j]
                if stamp[c] != i:
                    stamp[c] = i
                    count[c] = 0
                count[c] += 1
        for t in range(indptr[i], indptr[i + 1]):
            j = indices[t]
            if j == i or count[colour[j]] == 1:
                take[t] = colour[j] * n + i
            else:
                take[t] = colour[i] * n + j         # = H[j, i], i unique for j
    return take


@njit(nogil=True)
def is_star(indptr, indices, colour, n):
    """Whether ``colour`` is a star colouring: distance-1, and no path w-v-x-y (any four
    distinct vertices) is two-coloured."""
    for v in range(n):
        for t in range(indptr[v], indptr[v + 1]):
            x = indices[t]
            if x == v:
                continue
            if colour[x] == colour[v]:
                return False
            for s in range(indptr[v], indptr[v + 1]):
                w = indices[s]
                if w == v or w == x or colour[w] != colour[x]:
                    continue
                for r in range(indptr[x], indptr[x + 1]):       # path w-v-x-y
                    y = indices[r]
                    if y != x and y != v and y != w and colour[y] == colour[v]:
                        return False
    return True


@njit(nogil=True)
def distinct_per_row(indptr, indices, colour, n):
    """Whether no row of a CSR pattern holds two entries of one colour (columns coloured)."""
    stamp = np.full(n + 1, -1, dtype=np.int64)
    rows = indptr.size - 1
    for i in range(rows):
        for t in range(indptr[i], indptr[i + 1]):
            c = colour[indices[t]]
            if stamp[c] == i:
                return False
            stamp[c] = i
    return True


# the entry points the colouring module calls: one compiled function per task, so that a
# process loads few objects from numba's cache on its first colouring (each load costs
# about 0.1 s); ``use[k]`` says whether order k of ORDER_CODES is tried
@njit(nogil=True)
def best_greedy(indptr, indices, n, use, lower, dsatur_limit):
    """The fewest-colour distance-1 colouring over the orders ``use`` asks for (natural,
    largest-first, smallest-last, incidence-degree, DSATUR), stopping at ``lower`` colours;
    DSATUR only where its work (the sum of squared degrees) is at most ``dsatur_limit``."""
    best = np.zeros(n, dtype=np.int64)
    best_count = n + 1
    work = 0
    for v in range(n):
        d = indptr[v + 1] - indptr[v]
        work += d * d
    for k in range(5):
        if not use[k] or best_count <= lower:
            continue
        if k == 4:
            if work > dsatur_limit:
                continue
            colour = dsatur(indptr, indices, n)
        else:
            if k == 0:
                order = np.arange(n)
            elif k == 1:
                order = largest_first(indptr, indices, n)
            elif k == 2:
                order = smallest_last(indptr, indices, n)
            else:
                order = incidence_degree(indptr, indices, n)
            colour = greedy(indptr, indices, order, n)
        count = 0
        for v in range(n):
            count = max(count, colour[v] + 1)
        if count < best_count:
            best, best_count = colour, count
    return best


@njit(nogil=True)
def best_star(indptr, indices, n, use):
    """The fewest-colour star colouring over the orders ``use`` asks for (natural,
    largest-first, smallest-last, incidence-degree)."""
    best = np.zeros(n, dtype=np.int64)
    best_count = n + 1
    for k in range(4):
        if not use[k]:
            continue
        if k == 0:
            order = np.arange(n)
        elif k == 1:
            order = largest_first(indptr, indices, n)
        elif k == 2:
            order = smallest_last(indptr, indices, n)
        else:
            order = incidence_degree(indptr, indices, n)
        colour = star(indptr, indices, order, n)
        count = 0
        for v in range(n):
            count = max(count, colour[v] + 1)
        if count < best_count:
            best, best_count = colour, count
    return best
