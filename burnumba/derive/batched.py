"""Many tangents at once: the forward sweep with a leading batch axis.

A batched tangent of node i has shape (B,) + shape(i): B directions pushed forward together,
so that a matrix product of tangents is one matrix-matrix product (the Hessian's columns in one
pass instead of d). Rows without a batched rule fall back to one rule per direction.
"""
import functools
import math

import numpy as np

from .. import numpy as bnp
from ..kernels import ROWS
from ..tracing.tracer import Var, broadcast_to
from .graph import offsets, operands, params, sources, var
from .maps import map_env, operand_shape, rule
from . import traced
from .sweeps import node_jvp


def _batched_map(b, i, tangent, B):
    row = ROWS[b.op[i]]
    out_shape = b.shapes[i]
    total = None
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        t = tangent(node)
        if getattr(row, slot) is None or t is None:
            continue
        shape = operand_shape(b, node, out_shape)
        lead = (1,) * (len(out_shape) - len(shape))      # align with the output's axes
        _, ev = map_env(b, i, bnp.reshape(t, (B,) + lead + shape))
        term = rule(row, slot, ev)
        total = term if total is None else total + term
    return total


def _batched_gather(b, i, tangent, B, identity=()):
    """One gather of the sources' batched tangents: direction k's element j is read from
    row k of its source's tangent."""
    size = math.prod(b.shapes[i])
    positions = np.asarray(params(b, i)[:size])
    owner = sources(b, positions)
    off = offsets(b)
    picked = np.empty((B, size), dtype=np.int64)
    used = []
    for s in np.unique(owner):
        t = tangent(int(s))
        if t is None:
            t = b.const(np.zeros((B,) + b.shapes[s]))
        used.append(t)
        js = np.flatnonzero(owner == s)
        rows = t.positions().reshape(B, -1)
        picked[:, js] = rows[:, positions[js] - off[s]]
    return b.gather(used, picked.reshape(-1), (B,) + b.shapes[i])


def _transposed(b, v):
    """The matrix v transposed, as a view. Where v is a gather node made from a view (the
    x^T of a backward), the view reads that gather's own sources: (x^T)^T is x, no copy."""
    through = b.viewed.get(v.node) if v._view is None else None
    if through is None:
        return bnp.transpose(v, (1, 0))
    pos = np.asarray(through).reshape(v.shape).T
    srcs = [var(b, int(s)) for s in np.unique(sources(b, pos.reshape(-1)))]
    return b.gather(srcs, pos, pos.shape)


def _batched_matmul(b, i, tangent, B, identity=()):
    """tY = tA @ B + A @ tB for B directions. With one left matrix, A @ tB is computed as
    A @ [tB_1 ... tB_B] (the directions side by side): one matrix-matrix product. (The
    matmul row's other rules are in kernels/blocks_matmul.py; this one reads how the trace
    holds the operands: which tangents are unit vectors, which matrix is a transposed view.)"""
    (shape_a, shape_b), _, _ = ROWS[b.op[i]].node_shapes(params(b, i))
    A, Bm = bnp.reshape(var(b, b.a0[i]), shape_a), bnp.reshape(var(b, b.a1[i]), shape_b)
    M, K, N = params(b, i)[1:4]
    ta, tb = tangent(b.a0[i]), tangent(b.a1[i])
    out = None
    if ta is not None:
        out = bnp.matmul(bnp.reshape(ta, (B,) + A.shape), Bm)
    if tb is not None:
        tb4 = bnp.reshape(tb, (B,) + Bm.shape)
        if b.a1[i] in identity and A.shape[0] == 1 and Bm.shape == (1, K, 1) and B == K:
            # the directions are the unit vectors: A @ e_k is A's column k, so the product
            # is A transposed (the Jacobian of X @ w with respect to w, not a K-fold product)
            # (shaped as the other term, (B, 1, M, 1), so that the two add elementwise)
            term = bnp.reshape(bnp.transpose(bnp.reshape(A, (M, K)), (1, 0)), (K, 1, M, 1))
        elif A.shape[0] == 1 and N == 1 and Bm.shape[0] == 1:
            # A @ t_k for every direction k, as rows: T (B, K) @ A^T, one product (A is
            # often x^T from the backward of x @ w: then A^T is x itself, no transpose)
            At = _transposed(b, bnp.reshape(A, (M, K)))
            term = bnp.reshape(bnp.matmul(bnp.reshape(tb4, (B, K)), At), (B, 1, M, 1))
        elif A.shape[0] == 1:
            T = bnp.reshape(bnp.transpose(tb4, (2, 0, 1, 3)), (K, B * Bm.shape[0] * N))
            Y = bnp.matmul(bnp.reshape(A, (M, K)), T)                # (M, B * nbB * N)
            term = bnp.transpose(bnp.reshape(Y, (M, B, Bm.shape[0], N)), (1, 2, 0, 3))
        else:
            term = bnp.matmul(A, tb4)
        out = term if out is None else out + term
    return out


# the batched rules of the rows without traced rules, and those of the rows with them
BATCHED = {"gather": _batched_gather, "matmul": _batched_matmul,
           **traced.BATCHED}


def _whole_copy(b, i):
    """The node that gather node i copies whole and in order, or None."""
    size = math.prod(b.shapes[i])
    src = b.a0[i]
    start = b.off[src]
    if b.off[src + 1] - start != size:
        return None
    p = np.asarray(params(b, i)[:size])
    return src if size and p[0] == start and np.array_equal(p, start + np.arange(size)) \
        else None


class _Scaled:
    """A batched tangent kept as ``base * coef``: base has the node's shape with the leading
    axis of B directions, coef is unbatched (a float, or a traced value that broadcasts over
    the node's shape the way a map row's operand does). A map row's tangent rule is linear in
    the tangent (g * f'(a), g / b, -g, g if c else 0, ...), so applied to a scaled tangent it
    scales the coefficient alone: rule(base * c) = base * rule(c), one op over a node's
    values instead of over B of them. A chain of such rows (the logistic loss's exp, log and
    divides under a Hessian) costs one batched multiply, made where a row needs the batched
    tangent itself (``formed``). Mathematically the same tangent; the rounding differs from
    applying each rule to the batched tangent (the factors are multiplied in another order)."""
    __slots__ = ("base", "coef")

    def __init__(self, base, coef):
        self.base, self.coef = base, coef


def formed(b, t, node):
    """Node ``node``'s batched tangent as a traced value (None without one); a scaled one
    is multiplied out once and kept."""
    ty = t.get(node)
    if not isinstance(ty, _Scaled):
        return ty
    formed = ty.base if type(ty.coef) is float and ty.coef == 1.0 else ty.base * ty.coef
    t[node] = formed
    return formed


def _scaled_map(b, i, t, B):
    """Map row i's batched tangent as a ``_Scaled`` one, or None where it cannot be: an
    operand whose tangent is broadcast over the output, or two operands' tangents on
    different bases."""
    row = ROWS[b.op[i]]
    out_shape = b.shapes[i]
    n = math.prod(out_shape)
    base, coef = None, None
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        tk = t.get(node)
        if getattr(row, slot) is None or tk is None:
            continue
        if math.prod(b.shapes[node]) != n:
            return None
        kb, kc = (tk.base, tk.coef) if isinstance(tk, _Scaled) else (tk, 1.0)
        kb = bnp.reshape(kb, (B,) + out_shape)
        if base is None:
            base = kb
        elif kb.node != base.node:
            return None
        if isinstance(kc, Var) and kc.size != math.prod(b.shapes[node]):
            kc = broadcast_to(kc, b.shapes[node])
        _, ev = map_env(b, i, kc, node)
        term = rule(row, slot, ev)
        coef = term if coef is None else coef + term
    if base is None:
        return None
    return _Scaled(base, coef if isinstance(coef, Var) else float(coef))


def forward_batched(b, start, tangents, B, identity=()):
    """As ``forward``, for tangents with a leading axis of B directions; ``identity``: the
    nodes whose tangents are the B unit vectors (a rule may use that). A tangent of the
    result may be a ``_Scaled`` one: read them with ``formed``."""
    b.derived = True
    t = dict(tangents)
    get = functools.partial(formed, b, t)
    identity = set(identity)
    for i in range(start, b.n):
        row = ROWS[b.op[i]]
        if i in t or row.kind == "leaf" or (row.kind == "map" and row.da is None
                                            and row.db is None):
            continue
        if not any(t.get(k) is not None for k in operands(b, i)):
            continue
        if i in b.custom:                       # a user's rule: one direction at a time
            cols = [b.lift(node_jvp(b, i, lambda n: None if get(n) is None else get(n)[k]))
                    for k in range(B)]
            t[i] = bnp.stack([c if c.shape == b.shapes[i] else broadcast_to(c, b.shapes[i])
                              for c in cols])
            continue
        if row.name == "gather" and _whole_copy(b, i) in t:
            src = _whole_copy(b, i)               # a copy of a node: the same tangent
            t[i] = t[src]
            if src in identity:
                identity.add(i)
            continue
        if row.kind == "map":
            scaled = _scaled_map(b, i, t, B)
            if scaled is not None:
                t[i] = scaled
                continue
            ty = _batched_map(b, i, get, B)
        elif row.name in BATCHED:
            ty = BATCHED[row.name](b, i, get, B, identity)
        else:                                   # one direction at a time
            cols = []
            for k in range(B):
                col = node_jvp(b, i, lambda n: None if get(n) is None else t[n][k])
                col = b.lift(col)
                cols.append(col if col.shape == b.shapes[i] else
                            broadcast_to(col, b.shapes[i]))
            ty = bnp.stack(cols)
        if ty is None:
            continue
        ty = b.lift(ty)
        shape = (B,) + b.shapes[i]
        if ty.shape != shape:
            ty = bnp.reshape(ty, shape) if ty.size == math.prod(shape) else \
                broadcast_to(bnp.reshape(ty, (B,) + (1,) * len(b.shapes[i])), shape) \
                if ty.size == B else broadcast_to(ty, shape)
        t[i] = ty
    return t
