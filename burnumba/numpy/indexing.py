"""Indexing: ``x[key]`` (``Var.__getitem__``), take and take_along_axis.

Constant keys (basic slicing, integers, integer and boolean arrays) are applied to the
elements' positions at trace time: one gather. Traced integer indices (integer data:
burnumba/tracing/integers.py, e.g. an int array argument or ``np.floor(x).astype(int)``) are
read when the tape runs, by the take row, with numpy's advanced-indexing rules.
"""
import builtins
import math

import numpy as np

from .._errors import ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements, implements_method
from ..tracing.integers import EXACT32 as _EXACT32
from ..tracing.integers import integer_data as _integer_data
from ..tracing.tracer import Var, is_boolean, normalize_axis
from ._common import _builder, _no_out
from .elementwise import add
from .shapes import _moved, _positions, broadcast_to, ravel, reshape, transpose

# numpy's functions this module calls on every node, bound once: while any thread traces,
# numpy's module hands out its attributes that have stand-ins through a descriptor
# (transforms/module_views.py), a cost on every read of np.<name>
_asarray = np.asarray


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take. Traced integer indices (an int array argument) are read when the tape
    runs, along any axis: ``a[(slice(None),) * axis + (indices,)]``."""
    if _builder(a, indices) is None:
        return np.take(a, indices, axis=axis, out=out, mode=mode)
    _no_out("take", out)
    b = _builder(a, indices)
    a = b.lift(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = normalize_axis(axis, a.ndim, "take")
    if mode != "raise":
        if isinstance(indices, Var):
            raise UnsupportedOpError(at_user_site(
                f"take(..., mode={mode!r}) with traced indices: only mode='raise' (numpy's "
                "default: negative indices count from the end, others raise) is traced"))
        indices = np.take(np.arange(a.shape[axis]), indices, mode=mode)
    return a[(slice(None),) * axis + (indices if isinstance(indices, Var) else
                                       _asarray(indices),)]


@implements_method("compress")
def _compress_method(a, condition, axis=None, out=None):
    return compress(condition, a, axis, out)


@implements(np.compress)
def compress(condition, a, axis=None, out=None):
    """numpy.compress: the slices along ``axis`` where ``condition`` is true (its first
    len(condition) only, as numpy's); a traced condition is decided (guards), as x[mask]."""
    if _builder(a, condition) is None:
        return np.compress(condition, a, axis, out)
    _no_out("compress", out)
    b = _builder(a, condition)
    a = b.lift(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis(axis, a.ndim, "compress")
    cond = _decided(condition, "np.compress") if isinstance(condition, Var) else \
        _asarray(condition, dtype=bool)
    if cond.ndim != 1 or cond.size > a.shape[axis]:
        raise ShapeError(at_user_site(
            f"compress: condition of shape {cond.shape} for an axis of length "
            f"{a.shape[axis]}: a 1-D condition at most that long (numpy's IndexError)"))
    return take(a, np.flatnonzero(cond), axis)


# -- positions of the true elements: a traced mask is decided (guards), its positions data
def _decided(a, what):
    """The truth of each element of ``a`` now (numpy bools), decided under guards."""
    b = _builder(a)
    a = b.lift(a)
    mask = a if is_boolean(a) else a != 0.0
    return mask._decided_mask(what)


@implements(np.nonzero)
def nonzero(a):
    """numpy.nonzero: the indices of the true (non-zero) elements, as integer data. Their
    number decides the result's shape, so the elements' truth is decided now and guarded
    (``Var._decided_mask``): a run where one of them changes traces again."""
    if _builder(a) is None:
        return np.nonzero(a)
    return np.nonzero(_decided(a, "np.nonzero"))


@implements(np.flatnonzero)
def flatnonzero(a):
    if _builder(a) is None:
        return np.flatnonzero(a)
    return np.flatnonzero(_decided(a, "np.flatnonzero"))


@implements(np.argwhere)
def argwhere(a):
    if _builder(a) is None:
        return np.argwhere(a)
    return np.argwhere(_decided(a, "np.argwhere"))


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: constant indices are one gather; traced integer indices (an int
    array argument) are numpy's own construction, ``arr[aranges with indices at axis]``."""
    if _builder(arr, indices) is None:
        return np.take_along_axis(arr, indices, axis)
    b = _builder(arr, indices)
    arr = b.lift(arr)
    if not isinstance(indices, Var):
        return _moved("take_along_axis", arr,
                      lambda p: np.take_along_axis(p, _asarray(indices), axis))
    if axis is None:
        if indices.ndim != 1:
            raise ShapeError(at_user_site(
                f"take_along_axis: with axis=None, indices must be 1-D, not {indices.ndim}-D"))
        return ravel(arr)[indices]
    if indices.ndim != arr.ndim:
        raise ShapeError(at_user_site(
            f"take_along_axis: indices ({indices.ndim}-D) and arr ({arr.ndim}-D) must have the "
            "same number of dimensions"))
    axis = normalize_axis(axis, arr.ndim, "take_along_axis")
    key = []
    for d, size in enumerate(arr.shape):
        if d == axis:
            key.append(indices)
        else:
            key.append(np.arange(size).reshape((1,) * d + (size,) + (1,) * (arr.ndim - d - 1)))
    return arr[tuple(key)]


def _index(x, key):
    """x[key], with numpy's rules. Constant keys (basic slicing, integers, integer and boolean
    arrays) are applied to the positions at trace time: one gather. A traced boolean mask is
    decided first (``Var._decided_mask``: guards). A key with traced integer arrays goes to
    ``_advanced``."""
    if type(key) is int and x._view is None and x.shape:
        return _row(x, key)
    parts = key if isinstance(key, tuple) else (key,)
    if any(is_boolean(k) for k in parts):
        parts = tuple(k._decided_mask("a boolean mask as an index") if is_boolean(k) else k
                      for k in parts)
        key = parts if isinstance(key, tuple) else parts[0]
    if any(isinstance(k, Var) for k in parts):
        return _advanced(x, parts)
    try:
        pos = _positions(x)[key]
    except IndexError as e:
        raise ShapeError(at_user_site(f"index {key!r} into shape {x.shape}: {e}")) from None
    if pos.shape == x.shape and np.array_equal(pos, _positions(x)):
        return x
    return x._b.gather([x], _asarray(pos).reshape(-1), np.shape(pos))


def _row(x, k):
    """x[k] for a Python int k (a scalar picked from a vector, the commonest index in scalar
    code): its positions without computing the whole array's."""
    n = x.shape[0]
    if not -n <= k < n:
        raise ShapeError(at_user_site(
            f"index {k} is out of bounds for axis 0 with size {n} (shape {x.shape})"))
    width = math.prod(x.shape[1:])
    start = x._b.off[x._node] + (k + n if k < 0 else k) * width
    shape = x.shape[1:]
    return x._b.gather([x], np.arange(start, start + width).reshape(shape), shape)


def _index_data(b, idx):
    """Check that a traced index is integer data (burnumba/tracing/integers.py): an int
    array argument outside argnums, elements moved from such arguments and integer constants
    (t[:2], t.T, np.stack([t, u]), t[i]), x.astype(int) / floor / ceil / trunc / rint of
    traced values, and (float64 tapes) sums, products and remainders of integer data."""
    if b.need[idx.node if idx._view is None else idx._view[2]] or \
            (idx._view is not None and idx._view[1]):
        raise UnsupportedOpError(at_user_site(
            "indexing with a differentiable traced value: indices must be integer data "
            "(an argument outside argnums), not something gradients flow through"))
    if _integer_data(b, idx):
        return idx
    if idx._view is None and b.input_kinds.get(idx.node) == "b":
        raise UnsupportedOpError(at_user_site(
            "indexing with a boolean mask argument: the result's shape would depend on the "
            "mask's values, which a tape cannot follow. Use bnp.where(mask, x, 0.0) or "
            "bn.masked_fill, or capture the mask as a constant array"))
    raise UnsupportedOpError(at_user_site(
        "traced indices must be integer data (numpy refuses float indices with "
        "IndexError): an int array argument, x.astype(int) or np.floor(x) of a traced x, "
        "and, on a float64 tape, sums, products and remainders of those. Pass the indices "
        "as an int array, or make them integers with .astype(int)"))


def _advanced(x, parts):
    """x[parts] where some entries are traced integer arrays: numpy's advanced indexing.

    Every advanced entry (traced arrays, constant integer or boolean arrays, and, as numpy
    does in their presence, integer scalars) indexes one axis of x; their shapes broadcast
    to B. One ``take`` row reads x at the flat index sum_j wrap(i_j) * stride_j over the
    indexed axes, computed at run time by existing rows (``_flat_index``): each traced i_j
    is wrapped, bounds-checked and scaled by a ``take`` of the constant table
    arange(n_j) * stride_j, so an index out of range raises DataError naming its axis's
    length; constant ones are checked and wrapped by numpy at trace time.

    When the advanced entries are adjacent in the key, numpy puts B in their place, and
    their axes are consecutive in x: x (its slices applied) is read as rows of an
    (outer * n, inner) view at o * n + flat, with no copy of x. Otherwise (and when outer * n
    would pass float32's exact integers) the indexed axes move to the front and merge (one
    gather at trace time), the take reads that merged axis, and B comes first.
    """
    b = x._b
    if x.ndim == 0:
        raise ShapeError(at_user_site("indexing a 0-d traced value with an array: too many "
                                      "indices for an array of dimension 0"))
    entries = []                 # ("adv", value) | ("slice", slice) | ("new", None) | ("ell", None)
    for k in parts:
        if isinstance(k, Var):
            entries.append(("adv", _index_data(b, k)))
        elif k is None:
            entries.append(("new", None))
        elif k is Ellipsis:
            if any(e[0] == "ell" for e in entries):
                raise ShapeError(at_user_site(
                    "an index can only have a single ellipsis ('...')"))
            entries.append(("ell", None))
        elif isinstance(k, slice):
            entries.append(("slice", k))
        elif isinstance(k, (bool, np.bool_)):
            raise UnsupportedOpError(at_user_site(
                "indexing with a boolean scalar next to traced indices is not supported: "
                "drop it, or use None to add an axis"))
        else:
            if _builder(k) is not None:
                raise UnsupportedOpError(at_user_site(
                    "a list of traced values as an index: pass the indices as one integer "
                    "array argument"))
            arr = _asarray(k)
            if arr.dtype.kind == "b":
                entries.extend(("adv", nz) for nz in np.nonzero(arr))   # numpy's rule
            elif arr.dtype.kind in "iu" or (arr.size == 0 and arr.dtype.kind == "f"):
                entries.append(("adv", arr.astype(np.int64)))
            else:
                raise ShapeError(at_user_site(
                    f"index {k!r}: only integers, slices, None, ..., and integer or boolean "
                    "arrays are valid indices"))
    used = builtins.sum(1 for kind, _ in entries if kind in ("adv", "slice"))
    if used > x.ndim:
        raise ShapeError(at_user_site(
            f"too many indices for an array of shape {x.shape}: {used} were indexed"))
    if not any(kind == "ell" for kind, _ in entries):
        entries.append(("ell", None))
    # the axis of x each entry indexes (an ellipsis stands for x.ndim - used slices)
    adv, rest, out = [], [], []     # (key position, axis, value); axes of rest; output pieces
    axis = 0
    for pos, (kind, v) in enumerate(entries):
        if kind == "adv":
            adv.append((pos, axis, v))
            axis += 1
        elif kind == "slice":
            rest.append(axis)
            out.append(("slice", v, axis, pos))
            axis += 1
        elif kind == "new":
            out.append(("new", None, None, pos))
        else:
            for _ in range(x.ndim - used):
                rest.append(axis)
                out.append(("slice", slice(None), axis, pos))
                axis += 1
    shapes = [v.shape for _, _, v in adv]
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(at_user_site(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes "
            f"{' '.join(str(s) for s in shapes)}")) from None
    axes = [a for _, a, _ in adv]
    sizes = [x.shape[a] for a in axes]
    n = math.prod(sizes)
    where = [pos for pos, _, _ in adv]
    adjacent = where[-1] - where[0] == len(where) - 1
    dims = [1 if kind == "new" else len(range(*s.indices(x.shape[a]))) for kind, s, a, _ in out]
    pre = tuple(d for d, (*_, pos) in zip(dims, out) if pos < where[0])
    post = tuple(dims[len(pre):])
    exact = _EXACT32 if b.dtype == np.float32 else 2 ** 53
    if adjacent:
        # the indexed axes are consecutive in x: read x (its slices applied) as (outer, n,
        # inner) and take rows o * n + flat of its (outer * n, inner) view, so that B lands
        # in place with no copy of x. An index outside its axis must not reach the next
        # block, so every traced index is checked by its own axis then.
        key = dict.fromkeys(axes, slice(None))
        key.update((a, s) for kind, s, a, _ in out if kind == "slice")
        if builtins.all(key[a].indices(x.shape[a]) == (0, x.shape[a], 1) for a in key):
            table = x                        # x[idx] of an embedding table: no gather
        else:
            table = x[tuple(key[a] for a in range(x.ndim))]
        outer = math.prod(table.shape[:axes[0]])
        inner = math.prod(table.shape[axes[-1] + 1:])
        if outer * n <= exact:
            flat = _flat_index(b, x, adv, sizes, checked=outer != 1)
            if outer != 1:
                blocks = (np.arange(outer, dtype=np.float64) * n).reshape(
                    (outer,) + (1,) * len(bshape))
                flat = add(flat, blocks)
            flat = broadcast_to(flat, ((outer,) if outer != 1 else ()) + bshape)
            y = _take_rows(reshape(table, (outer * n, inner)), flat)
            return reshape(y, pre + bshape + post)
    if n > exact:
        raise ShapeError(at_user_site(
            f"advanced index over axes {axes} of shape {x.shape}: its flat index runs up to "
            f"{n - 1:,}, beyond 2**24, which a float32 tape does not hold exactly; index in "
            "two steps (x[i][:, j]), or trace in float64"))
    # the table: indexed axes first and merged, slices applied to the rest (one gather)
    table = transpose(x, axes + rest)
    table = table[(slice(None),) * len(axes) + tuple(s for kind, s, *_ in out if kind == "slice")]
    table = reshape(table, (n,) + table.shape[len(axes):])
    y = _take_rows(table, broadcast_to(_flat_index(b, x, adv, sizes), bshape))
    # the new axes (None); B stays first (numpy's rule for separated advanced entries), or
    # moves to its place for adjacent ones read this way (a float32 index beyond 2**24)
    y = reshape(y, bshape + pre + post)
    if adjacent and pre and bshape:
        nb, first = len(bshape), len(pre)
        y = transpose(y, list(range(nb, nb + first)) + list(range(nb)) +
                      list(range(nb + first, y.ndim)))
    return y


def _flat_index(b, x, adv, sizes, checked=False):
    """sum_j wrap(i_j) * stride_j over the advanced entries (strides of the merged axes,
    row-major). A traced i_j is wrapped, checked and scaled by a take of the constant table
    arange(n_j) * stride_j; a constant one by numpy now. A single traced entry is returned
    as it is (the take that reads it checks it) unless ``checked``."""
    if len(adv) == 1 and isinstance(adv[0][2], Var) and not checked:
        return adv[0][2]
    strides = [math.prod(sizes[j + 1:]) for j in range(len(sizes))]
    const = np.zeros((), dtype=np.int64)
    traced = []
    for (_, a, v), size, stride in zip(adv, sizes, strides):
        if isinstance(v, Var):
            steps = b.const(np.arange(size, dtype=np.float64) * stride)
            traced.append(_take_rows(steps, v))
            continue
        bad = (v < -size) | (v >= size)
        if bad.any():
            raise ShapeError(at_user_site(
                f"index {int(v[bad].flat[0])} is out of bounds for axis {a} with size "
                f"{size} (indexing shape {x.shape})"))
        const = const + np.where(v < 0, v + size, v) * stride
    flat = traced[0]
    for t in traced[1:]:
        flat = add(flat, t)
    if const.ndim or const != 0:
        flat = add(flat, const.astype(np.float64))
    return flat


def _take_rows(x, idx):
    """x[idx] for traced integer indices: the take row (numpy's wrap of negative indices;
    an index out of range raises DataError when the tape runs)."""
    b = x._b
    if b.input_kinds.get(idx.node) is not None or b.need[idx.node]:
        _index_data(b, idx)
    if x.ndim == 0:
        raise ShapeError(at_user_site("take: cannot index a 0-d array"))
    width = int(np.prod(x.shape[1:], dtype=np.int64))
    shape = idx.shape + x.shape[1:]
    node = b.add("take", shape, x.node, idx.node, params=[x.shape[0], width],
                 need=b.need[x.node])
    return Var(b, node, shape)
