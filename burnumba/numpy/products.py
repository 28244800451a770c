"""Products and contractions: inner, dot, matmul (``@``), outer, kron, cross, trace, einsum,
tensordot, vecdot, matvec, vecmat.

matmul is one row for the whole (batched) product. einsum and tensordot are compositions:
gathers (transposes, diagonals), sums, broadcasting multiplies and one matmul per pair of
operands.
"""
import builtins
import math

import numpy as np

from .._errors import InplaceError, ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements, implements_ufunc
from ..tracing.tracer import Var, broadcast_to as _expand, normalize_axis
from ._common import _builder, _float_only, _lift, _no_out, _options
from .elementwise import multiply
from .shapes import (_positions, broadcast_to, diagonal, expand_dims, moveaxis, ravel, reshape,
                     transpose)
from .reductions import _items, sum


def _scalar(v):
    return isinstance(v, (int, float, np.number)) or (isinstance(v, (Var, np.ndarray))
                                                       and v.ndim == 0)


@implements(np.inner)
def inner(a, b, bias=None):
    """Inner product of two 1-D arrays or two equally long lists of scalars, plus ``bias``.

    One fused node (BurTorch's neuron): ``sum_k a[k] * b[k] + bias``.

    >>> bnp.inner([w0, w1], [x0, x1], bias=b0)     # doctest: +SKIP
    """
    bld = _builder(a, b, bias)
    if bld is None:
        out = np.inner(a, b)
        return out if bias is None else out + bias
    if bias is None and (_scalar(a) or _scalar(b)):
        return a * b                            # numpy's inner with a scalar
    if bias is None and isinstance(a, (Var, np.ndarray)) and isinstance(b, (Var, np.ndarray)) \
            and (a.ndim > 1 or b.ndim > 1):
        # numpy's N-d inner: the sum over both last axes
        return tensordot(a, b, axes=([-1], [-1]))
    xs = [bld.lift(x) for x in _items(a)]
    ws = [bld.lift(w) for w in _items(b)]
    if len(xs) != len(ws) or any(x.shape != w.shape or x.ndim > 1 for x, w in zip(xs, ws)):
        raise ShapeError(at_user_site(
            f"inner: shapes {[x.shape for x in xs]} and {[w.shape for w in ws]} do not match; "
            "inner takes two 1-D arrays of the same length or two lists of scalars"))
    bias_node = -1
    need = any(bld.need[v.node] for v in xs + ws)
    if bias is not None:
        bv = bld.lift(bias)
        if bv.size != 1:
            raise ShapeError(at_user_site(f"inner: bias must be a scalar, got shape {bv.shape}"))
        bias_node = bv.node
        need = need or bld.need[bias_node]
    node = bld.add("inner", (), a0=bias_node,
                   params=[len(xs)] + [x.node for x in xs] + [w.node for w in ws], need=need)
    return Var(bld, node, ())


@implements(np.vdot)
def vdot(a, b):
    """numpy.vdot of real arrays: the dot product of the flattened operands."""
    if _builder(a, b) is None:
        return np.vdot(a, b)
    a, b = np.ravel(a), np.ravel(b)
    if np.size(a) != np.size(b):
        raise ShapeError(at_user_site(
            f"vdot: the operands have {np.size(a)} and {np.size(b)} elements (numpy's vdot "
            "needs equally many)"))
    return dot(a, b)


@implements(np.dot)
def dot(a, b, out=None):
    """numpy.dot: the fused inner product for two 1-D arrays, else matmul (b up to 2-D)."""
    bld = _builder(a, b)
    if bld is None:
        return np.dot(a, b, out)
    _no_out("dot", out)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 0 or w.ndim == 0:
        return multiply(x, w)
    if w.ndim > 2:
        raise UnsupportedOpError(at_user_site(
            f"dot with shapes {x.shape} and {w.shape}: numpy.dot of an array of more than 2 "
            "dimensions is a tensor contraction burnumba does not trace; use matmul / @"))
    return matmul(x, w)


@implements_ufunc(np.matmul)
@implements(np.matmul)
def matmul(a, b):
    """numpy.matmul / ``@``, with batching and broadcasting of the leading dimensions.

    One row for the whole product: a batch of BLAS calls (numba's np.dot). A 2-D right
    operand folds the left operand's batch into its rows, so (B, T, C) @ (C, D) is one call.
    """
    bld = _builder(a, b)
    if bld is None:
        return np.matmul(a, b)
    x, w = bld.lift(a), bld.lift(b)
    if x.ndim == 0 or w.ndim == 0:
        raise ShapeError(at_user_site(
            f"matmul: shapes {x.shape} and {w.shape}: operands must have at least 1 "
            "dimension (use * for scalars)"))
    if x.ndim == 1 and w.ndim == 1:
        if x.shape != w.shape:
            raise ShapeError(at_user_site(f"matmul: shapes {x.shape} and {w.shape} do not match"))
        return inner(x, w)
    xs = x.shape if x.ndim > 1 else (1,) + x.shape
    ws = w.shape if w.ndim > 1 else w.shape + (1,)
    M, K = xs[-2:]
    K2, N = ws[-2:]
    if K != K2:
        raise ShapeError(at_user_site(
            f"matmul: shapes {x.shape} and {w.shape} do not align: {K} (dim {x.ndim - 1} of "
            f"the first) != {K2} (dim {builtins.max(0, w.ndim - 2)} of the second)"))
    bx, bw = xs[:-2], ws[:-2]
    xv, wv = reshape(x, xs), reshape(w, ws)
    if not bw:                         # (..., M, K) @ (K, N): fold the batch into the rows
        nb, rows, sa, sb = 1, int(np.prod(bx, dtype=np.int64)) * M, 1, 0
        batch = bx
    elif not bx:                       # (M, K) @ (..., K, N): reuse the left operand
        nb, rows, sa, sb = int(np.prod(bw, dtype=np.int64)), M, 0, 1
        batch = bw
    else:
        try:
            batch = np.broadcast_shapes(bx, bw)
        except ValueError:
            raise ShapeError(at_user_site(
                f"matmul: the batch dimensions of {x.shape} and {w.shape} do not "
                "broadcast")) from None
        xv = _expand(xv, batch + (M, K))
        wv = _expand(wv, batch + (K, N))
        nb, rows, sa, sb = int(np.prod(batch, dtype=np.int64)), M, 1, 1
    out_shape = tuple(batch) + (M, N)
    bld.largest_product = builtins.max(bld.largest_product, rows * K * N)
    need = bld.need[xv.node] or bld.need[wv.node]
    node = bld.add("matmul", out_shape, xv.node, wv.node,
                   params=[nb, rows, K, N, sa, sb], need=need)
    y = Var(bld, node, out_shape)
    if x.ndim == 1:
        y = reshape(y, out_shape[:-2] + (N,))
    if w.ndim == 1:
        y = reshape(y, y.shape[:-1])
    return y


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: the sum of the diagonal's gather."""
    if _builder(a) is None:
        return np.trace(a, offset, axis1, axis2, dtype, out)
    a = _lift(a)
    _options("trace", a._b, dtype, out)
    d = diagonal(a, offset, axis1, axis2)
    if d.shape[-1] == 0:                       # an empty diagonal sums to 0, as numpy's
        return broadcast_to(a._b.const(0.0), d.shape[:-1])
    return sum(d, axis=-1)


@implements(np.outer)
def outer(a, b, out=None):
    """numpy.outer: ravel(a)[:, None] * ravel(b)[None, :] (one broadcasting multiply)."""
    bld = _builder(a, b)
    if bld is None:
        return np.outer(a, b, out)
    if out is not None:
        raise InplaceError(at_user_site(
            "numpy.outer(..., out=...) writes in place, which is not traceable: use the "
            "returned value instead"))
    x, w = ravel(bld.lift(a)), ravel(bld.lift(b))
    return multiply(reshape(x, (x.size, 1)), reshape(w, (1, w.size)))


@implements(np.kron)
def kron(a, b):
    """numpy.kron: a reshaped to (a0, 1, a1, 1, ...) times b reshaped to (1, b0, 1, b1, ...),
    merged pairwise: out[i0*b0 + j0, ...] = a[i0, ...] * b[j0, ...]."""
    bld = _builder(a, b)
    if bld is None:
        return np.kron(a, b)
    x, w = bld.lift(a), bld.lift(b)
    nd = builtins.max(x.ndim, w.ndim)
    xs = (1,) * (nd - x.ndim) + x.shape
    ws = (1,) * (nd - w.ndim) + w.shape
    y = multiply(reshape(x, tuple(d for s in xs for d in (s, 1))),
                 reshape(w, tuple(d for s in ws for d in (1, s))))
    return reshape(y, tuple(p * q for p, q in zip(xs, ws)))


@implements(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross of 3-vectors: a1*b2 - a2*b1, ... in numpy's order of operations."""
    bld = _builder(a, b)
    if bld is None:
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = moveaxis(bld.lift(a), axisa, -1)
    w = moveaxis(bld.lift(b), axisb, -1)
    if x.shape[-1] != 3 or w.shape[-1] != 3:
        raise UnsupportedOpError(at_user_site(
            f"cross: vectors of length {x.shape[-1]} and {w.shape[-1]}: burnumba traces the "
            "cross product of 3-vectors only (numpy deprecates 2-vectors); for 2-vectors "
            "write a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]"))
    i, j = np.array([1, 2, 0]), np.array([2, 0, 1])
    c = x[..., i] * w[..., j] - x[..., j] * w[..., i]
    return moveaxis(c, -1, axisc)


def _einsum_labels(term, ndim, ell, name):
    """The labels of one operand's subscripts: letters as themselves, the dimensions of
    ``...`` as the integers ell - n .. ell - 1 (right-aligned, as numpy broadcasts them)."""
    if term.count("...") > 1 or term.replace("...", "").count(".") or not all(
            ch.isalpha() for ch in term.replace("...", "")):
        raise ShapeError(at_user_site(f"{name}: invalid subscripts {term!r}"))
    if "..." not in term:
        if len(term) != ndim:
            raise ShapeError(at_user_site(
                f"{name}: subscripts {term!r} name {len(term)} dimensions, the operand has "
                f"{ndim}"))
        return list(term)
    left, right = term.split("...")
    n = ndim - len(left) - len(right)
    if n < 0:
        raise ShapeError(at_user_site(
            f"{name}: subscripts {term!r} name more dimensions than the operand's {ndim}"))
    return list(left) + list(range(ell - n, ell)) + list(right)


def _einsum_parse(subscripts, shapes):
    """(labels of each operand, labels of the output) of numpy's subscripts string."""
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(at_user_site(
            f"einsum: {len(terms)} operand subscripts in {subscripts!r} for {len(shapes)} "
            "operands"))
    ell = builtins.max([len(sh) - len(t.replace("...", "")) for t, sh in zip(terms, shapes)
                        if "..." in t] or [0])
    ins = [_einsum_labels(t, len(sh), ell, "einsum") for t, sh in zip(terms, shapes)]
    letters = [x for labels in ins for x in labels if isinstance(x, str)]
    if arrow:
        out = _einsum_labels(rhs, len(rhs.replace("...", "")) + (ell if "..." in rhs else 0),
                             ell, "einsum")
        if len(set(out)) != len(out) or any(x not in letters for x in out if isinstance(x, str)):
            raise ShapeError(at_user_site(
                f"einsum: output subscripts {rhs!r} repeat a label or name one no operand has"))
    else:
        out = list(range(ell)) + sorted(x for x in set(letters) if letters.count(x) == 1)
    return ins, out


def _diagonals(x, labels):
    """x with each repeated label of its own reduced to the diagonal (a gather)."""
    pos = _positions(x)
    labels = list(labels)
    while len(set(labels)) < len(labels):
        lab = next(v for v in labels if labels.count(v) > 1)
        i = labels.index(lab)
        j = labels.index(lab, i + 1)
        if pos.shape[i] != pos.shape[j]:
            raise ShapeError(at_user_site(
                f"einsum: label {lab!r} is repeated in one operand with dimensions "
                f"{pos.shape[i]} and {pos.shape[j]}"))
        pos = np.diagonal(pos, axis1=i, axis2=j)          # the diagonal's axis goes last
        labels = [v for k, v in enumerate(labels) if k not in (i, j)] + [lab]
    if pos.shape == x.shape and np.array_equal(pos, _positions(x)):
        return x, labels
    return x._b.gather([x], pos.reshape(-1), pos.shape), labels


def _sum_labels(x, labels, keep):
    """Sum x over its labels that are not in ``keep``."""
    axes = tuple(k for k, v in enumerate(labels) if v not in keep)
    if not axes:
        return x, labels
    return sum(x, axis=axes), [v for v in labels if v in keep]


def _contract(x, lx, w, lw, later):
    """The product of two labelled operands summed over their shared labels that no later
    operand (nor the output) has: one broadcasting multiply when nothing is summed, else one
    matmul of (batch, free of x, summed) @ (batch, summed, free of w)."""
    common = [v for v in lx if v in lw]
    batch = [v for v in common if v in later]
    summed = [v for v in common if v not in later]
    fx = [v for v in lx if v not in common]
    fw = [v for v in lw if v not in common]
    dx = dict(zip(lx, x.shape))
    dw = dict(zip(lw, w.shape))
    xt = transpose(x, [lx.index(v) for v in batch + fx + summed])
    wt = transpose(w, [lw.index(v) for v in batch + summed + fw])
    if not summed:
        xs = tuple(dx[v] for v in batch + fx) + (1,) * len(fw)
        ws = tuple(dw[v] for v in batch) + (1,) * len(fx) + tuple(dw[v] for v in fw)
        return multiply(reshape(xt, xs), reshape(wt, ws)), batch + fx + fw
    size = {v: builtins.max(dx[v], dw[v]) for v in common}
    for v in common:
        if dx[v] != dw[v] and 1 not in (dx[v], dw[v]):
            raise ShapeError(at_user_site(
                f"einsum: label {v!r} has dimensions {dx[v]} and {dw[v]}, which do not "
                "broadcast"))
    nb = math.prod(size[v] for v in batch)
    m = math.prod(dx[v] for v in fx)
    n = math.prod(dw[v] for v in fw)
    k = math.prod(size[v] for v in summed)
    xt = _expand(xt, tuple(size[v] for v in batch) + tuple(dx[v] for v in fx)
                 + tuple(size[v] for v in summed))
    wt = _expand(wt, tuple(size[v] for v in batch + summed) + tuple(dw[v] for v in fw))
    lead = (nb,) if batch else ()
    y = matmul(reshape(xt, lead + (m, k)), reshape(wt, lead + (k, n)))
    shape = tuple(size[v] for v in batch) + tuple(dx[v] for v in fx) + tuple(dw[v] for v in fw)
    return reshape(y, shape), batch + fx + fw


def _einsum_sublists(args):
    """numpy's interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2]) as a subscripts string."""
    args = list(args)
    out = args.pop() if len(args) % 2 else None
    ops, subs = args[0::2], args[1::2]
    letter = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub):
        return "".join("..." if v is Ellipsis else letter[int(v)] for v in sub)
    text = ",".join(term(sub) for sub in subs)
    return (text if out is None else text + "->" + term(out)), ops


@implements(np.einsum)
def einsum(*operands, out=None, optimize=False, **kwargs):
    """numpy.einsum: explicit (``->``) and implicit outputs, ``...``, repeated labels in one
    operand (diagonals), labels summed within one operand, size-1 dimensions broadcast, any
    number of operands contracted left to right (each pair by one matmul). ``optimize`` is
    accepted and ignored.

    >>> np.einsum("bij,bjk->bik", A, B)                                  # doctest: +SKIP
    """
    if _builder(*operands) is None:
        return np.einsum(*operands, out=out, optimize=optimize, **kwargs)
    _no_out("einsum", out)
    for key, value in kwargs.items():
        if key == "dtype" and value is not None:
            b = _builder(*operands)
            _float_only("einsum", value, b)
        elif key not in ("dtype", "order", "casting"):
            raise UnsupportedOpError(at_user_site(
                f"einsum: keyword {key}= is not supported on traced values; drop it"))
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], list(operands[1:])
    else:
        subscripts, ops = _einsum_sublists(operands)
    b = _builder(*ops)
    xs = [b.lift(x) for x in ops]
    ins, out_labels = _einsum_parse(subscripts, [x.shape for x in xs])
    sizes = {}
    for x, labels in zip(xs, ins):
        for v, d in zip(labels, x.shape):
            if d != 1 and sizes.get(v, 1) not in (1, d):
                raise ShapeError(at_user_site(
                    f"einsum: label {v if isinstance(v, str) else '...'!r} has dimensions "
                    f"{sizes[v]} and {d} in {subscripts!r}, which do not broadcast"))
            sizes[v] = builtins.max(sizes.get(v, 1), d)
    items = []
    for k, (x, labels) in enumerate(zip(xs, ins)):
        x, labels = _diagonals(x, labels)
        elsewhere = set(out_labels).union(*(ins[q] for q in range(len(xs)) if q != k))
        items.append(_sum_labels(x, labels, elsewhere))
    y, ly = items[0]
    for k in range(1, len(items)):
        later = set(out_labels).union(*(items[q][1] for q in range(k + 1, len(items))))
        y, ly = _sum_labels(y, ly, later | set(items[k][1]))
        w, lw = _sum_labels(*items[k], later | set(ly))
        y, ly = _contract(y, ly, w, lw, later)
    y, ly = _sum_labels(y, ly, set(out_labels))
    y = transpose(y, [ly.index(v) for v in out_labels]) if ly else y
    want = tuple(sizes[v] for v in out_labels)
    return y if y.shape == want else _expand(y, want)


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    """numpy.tensordot: the summed axes moved together (gathers), then one matmul."""
    bld = _builder(a, b)
    if bld is None:
        return np.tensordot(a, b, axes)
    x, w = bld.lift(a), bld.lift(b)
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > builtins.min(x.ndim, w.ndim):
            raise ShapeError(at_user_site(
                f"tensordot: axes={axes} for shapes {x.shape} and {w.shape}"))
        ax, aw = list(range(x.ndim - axes, x.ndim)), list(range(axes))
    else:
        try:
            ax, aw = axes
        except (TypeError, ValueError):
            raise ShapeError(at_user_site(
                f"tensordot: axes={axes!r} is neither an int nor a pair of sequences")) from None
        ax = [ax] if isinstance(ax, (int, np.integer)) else list(ax)
        aw = [aw] if isinstance(aw, (int, np.integer)) else list(aw)
        ax = [normalize_axis(int(v), x.ndim, "tensordot") for v in ax]
        aw = [normalize_axis(int(v), w.ndim, "tensordot") for v in aw]
    if len(ax) != len(aw) or any(x.shape[i] != w.shape[j] for i, j in zip(ax, aw)):
        raise ShapeError(at_user_site(
            f"tensordot: shape-mismatch for sum: axes {ax} of {x.shape} and {aw} of {w.shape}"))
    fx = [i for i in range(x.ndim) if i not in ax]
    fw = [j for j in range(w.ndim) if j not in aw]
    k = math.prod(x.shape[i] for i in ax)
    xt = reshape(transpose(x, fx + ax), (math.prod(x.shape[i] for i in fx), k))
    wt = reshape(transpose(w, aw + fw), (k, math.prod(w.shape[j] for j in fw)))
    shape = tuple(x.shape[i] for i in fx) + tuple(w.shape[j] for j in fw)
    return reshape(matmul(xt, wt), shape)


@implements_ufunc(np.vecdot, keywords=("axis",))
def vecdot(x1, x2, axis=-1):
    """numpy.vecdot of real vectors: sum(x1 * x2) over ``axis``, the other axes broadcast."""
    if _builder(x1, x2) is None:
        return np.vecdot(x1, x2, axis=axis)
    b = _builder(x1, x2)
    x1, x2 = b.lift(x1), b.lift(x2)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != x2.shape[axis]:
        raise ShapeError(at_user_site(
            f"vecdot: shapes {x1.shape} and {x2.shape} have different lengths along axis "
            f"{axis}"))
    return sum(moveaxis(x1, axis, -1) * moveaxis(x2, axis, -1), axis=-1)


@implements_ufunc(np.matvec)
def matvec(x1, x2):
    """numpy.matvec: (..., m, n) matrices times (..., n) vectors, as one matmul."""
    if _builder(x1, x2) is None:
        return np.matvec(x1, x2)
    b = _builder(x1, x2)
    x1, x2 = b.lift(x1), b.lift(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ShapeError(at_user_site(f"matvec: shapes {x1.shape} and {x2.shape}: a matrix "
                                      "and a vector are needed"))
    return matmul(x1, expand_dims(x2, -1))[..., 0]


@implements_ufunc(np.vecmat)
def vecmat(x1, x2):
    """numpy.vecmat of real vectors: (..., n) vectors times (..., n, m) matrices."""
    if _builder(x1, x2) is None:
        return np.vecmat(x1, x2)
    b = _builder(x1, x2)
    x1, x2 = b.lift(x1), b.lift(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ShapeError(at_user_site(f"vecmat: shapes {x1.shape} and {x2.shape}: a vector "
                                      "and a matrix are needed"))
    return matmul(expand_dims(x1, -2), x2)[..., 0, :]
