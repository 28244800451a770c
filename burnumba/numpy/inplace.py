"""In-place updates on traced arrays: ``x[key] = v``, ``x += v``, ``np.copyto``, ``out=``,
``np.put`` / ``np.place`` / ``np.putmask`` / ``np.fill_diagonal``, ``x.fill`` / ``x.sort()``.

A tape is immutable, so a write is recorded as a functional update: the array's new value is
one gather of arena positions, those of the old value where it is kept and those of the
written values where numpy writes. Which element goes where is decided by numpy itself: the
same in-place operation (``P[key] = V``, ``np.put(P, ind, V)`` ...) is applied at trace time
to the array ``P`` of the target's element positions, with ``V`` the written values'
positions, so broadcasting, negative and repeated indices (the last write wins), masks and
steps follow numpy exactly. The gradient follows: an overwritten element's gradient is 0, a
written value gets the gradient of every element it was written to. ``x[i] += v`` is Python's
``x[i] = x[i] + v``; with repeated indices numpy adds once, and so does this.

The Python object is updated in place (its node becomes the new value), so every name bound
to it sees the write. numpy's views share memory with their base: a basic index (``x[1:3]``,
``x[0]`` of a matrix), ``reshape``, ``x.T``, ``swapaxes``, ``squeeze``, ``expand_dims``,
``flip`` ... of a traced array is recorded (``_Family``); at the first write, each is
resolved to a ``_Memory`` (the positions of the shared elements, a numpy array; each view
holds a numpy view of it made by the same numpy function, or, where numpy copies, a memory
of its own), so that a write through any of them updates all of them, as in numpy.
"""
import bisect
import inspect
import math
import weakref

import numpy as np

from .._errors import InplaceError, ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import (FUNCTIONS, LIKE, METHODS, OUT_ARGUMENT, VIEWS, implements,
                                implements_method)
from ..tracing.tracer import Var, is_boolean, is_mask
from ._common import _builder
from .elementwise import maximum, where
from .indexing import _index, _index_data, _take_rows
from .reductions import max as _max
from .shapes import broadcast_to, reshape
from .statistics import sort

_INTEGERS = (int, np.integer)


class _Family:
    """The arrays recorded as numpy views of one base, and of views of it, in the order they
    were made. Nothing is computed until the first write into one of them (most traces never
    write): then each is resolved to its ``_Memory``, and later views are resolved at once."""

    __slots__ = ("records", "resolved")

    def __init__(self):
        self.records, self.resolved = [], False


class _Memory:
    """The elements that arrays share: ``positions`` (int64, the shape of the array that owns
    them) says where each element's current value lies in the arena; ``members`` holds
    (weak reference, _View) of every array that views it (its owner too)."""

    __slots__ = ("positions", "members", "need")

    def __init__(self, positions, need):
        self.positions, self.members, self.need = positions, [], need


class _View:
    """An array's record: made from ``parent``'s by numpy's function ``make`` (None: the
    family's base), its value at that moment (``snapshot``: a copy owns memory holding it)
    and, once resolved, its ``memory`` and ``index``: a numpy view of the memory's positions,
    made by numpy's own function, so that it is a view exactly where numpy's result is."""

    __slots__ = ("family", "parent", "make", "snapshot", "readonly", "memory", "index")

    def __init__(self, family, parent, make, value, readonly):
        self.family, self.parent, self.make, self.readonly = family, parent, make, readonly
        self.snapshot = (value._b, value._node, value._view, value.shape)
        self.memory = self.index = None


def _need(v):
    return v._view[1] if v._view is not None else bool(v._b.need[v._node])


def _place(x):
    """x's _View, or None when no view of x was taken (Var.__getattr__ answers None for the
    unset slot)."""
    return x._alias


def _own(record):
    """A memory of the record's own, holding its value when it was made."""
    b, node, view, shape = record.snapshot
    if view is not None:
        positions, need = np.array(view[0], dtype=np.int64).reshape(shape), view[1]
    else:
        positions = b.off[node] + np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
        need = bool(b.need[node])
    record.memory, record.index = _Memory(positions, need), positions


def _resolve(record):
    """Its memory and index: the parent's memory when numpy's ``make`` of the parent's index
    is a view of it, else a memory of its own (numpy made a copy)."""
    if record.memory is not None:
        return
    parent = record.parent
    if parent is None:
        _own(record)
        return
    _resolve(parent)
    try:
        index = record.make(parent.index)
    except (ValueError, IndexError, TypeError):
        index = None
    if isinstance(index, np.ndarray) and np.may_share_memory(index, parent.memory.positions):
        record.memory, record.index = parent.memory, index
    else:
        _own(record)


def _resolve_family(family):
    for ref, record in family.records:
        _resolve(record)
        record.memory.members.append((ref, record))
    family.resolved = True


def _join(base, y, make, readonly=False):
    """Record y as made from base by numpy's function ``make`` (applied to base's index
    array, it tells whether numpy's result is a view)."""
    if not isinstance(y, Var) or y is base or not isinstance(base, Var):
        return
    parent = _place(base)
    if parent is None:
        family = _Family()
        parent = base._alias = _View(family, None, None, base, False)
        family.records.append((weakref.ref(base), parent))
    family = parent.family
    record = _View(family, parent, make, y, readonly or parent.readonly)
    if family.resolved:
        _resolve(record)
        if record.memory is not parent.memory:
            return                              # numpy makes a copy here: not a view
        record.memory.members.append((weakref.ref(y), record))
    else:
        family.records.append((weakref.ref(y), record))
    y._alias = record


@implements_method("__view__")
def _view(base, result, func, args, kwargs, readonly):
    """A numpy function that returns a view (``dispatch.VIEWS``): record it."""
    if isinstance(result, (list, tuple)):       # np.split: a list of views
        if func is not np.split:
            return                              # atleast_1d(a, b): several bases
        for k, part in enumerate(result):
            _join(base, part, lambda R, k=k: func(R, *args, **kwargs)[k], readonly)
        return
    _join(base, result, lambda R: func(R, *args, **kwargs), readonly)


def _basic(key):
    """Whether numpy's x[key] is a view: only ints, slices, None and ... in the key."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice,) + _INTEGERS)
               and not isinstance(k, (bool, np.bool_)) for k in parts)


@implements_method("__getitem__")
def getitem(x, key):
    """x[key] (``indexing._index``); a basic index of an array is a view, as in numpy (one
    that picks a single element is a scalar, a copy)."""
    y = _index(x, key)
    if y is x or (not y.shape and (isinstance(key, _INTEGERS) or isinstance(key, tuple) and
                                   all(isinstance(k, _INTEGERS) for k in key))):
        return y
    if _basic(key):
        _join(x, y, lambda R: R[key])
    return y


# -- the write ---------------------------------------------------------------------------

def _owner(b, position):
    return bisect.bisect_right(b.off, position) - 1


def _point(v, positions, need):
    """Make v hold the values at ``positions`` (a pending gather, made into a node when
    read)."""
    flat = positions.reshape(-1)
    v._node = None
    v._view = (positions.reshape(v.shape), need, _owner(v._b, int(flat[0])) if flat.size
               else v._b.const(0.0)._node)


def _values(b, v):
    """The written value v as a traced value of b (numbers and numpy arrays: constants)."""
    return b.lift(v)


def _write(x, name, values, update):
    """x rewritten in place: ``update(P, *positions of values)`` is numpy's own in-place
    operation on P, the positions of x's elements. Every view of x's memory follows."""
    if not isinstance(x, Var):
        raise InplaceError(at_user_site(
            f"{name}: writing traced values into a numpy array is not traceable: make the "
            "destination a traced array, e.g. out = np.zeros_like(x) or np.zeros(shape, "
            "like=x) (x any traced value), or build the result with np.stack / np.array"))
    b = x._b
    vs = [_values(b, v) for v in values]
    written = [np.array(v.positions(), dtype=np.int64) for v in vs]
    need = _need(x) or any(_need(v) for v in vs)
    place = _place(x)
    if place is not None and place.readonly:
        raise InplaceError(at_user_site(
            f"{name}: this array is a read-only view (numpy's diagonal and broadcast_to "
            "return read-only views, and numpy refuses this write too): write into a copy, "
            "y = x.copy()"))
    if place is not None and not place.family.resolved:
        _resolve_family(place.family)
    try:
        if place is None:
            positions = np.array(x.positions(), dtype=np.int64)
            update(positions, *written)
            if x.size:
                _point(x, positions, need)
            return x
        update(place.index, *written)
    except (ValueError, IndexError, TypeError) as e:
        raise ShapeError(at_user_site(f"{name} into shape {x.shape}: {e}")) from None
    memory = place.memory
    memory.need = memory.need or need
    alive = []
    for ref, record in memory.members:
        v = ref()
        if v is None:
            continue
        alive.append((ref, record))
        if v.size:
            _point(v, np.array(record.index), memory.need)
    memory.members = alive
    return x


@implements_method("__setitem__")
def setitem(x, key, value):
    """x[key] = value, with numpy's rules (the last write wins at a repeated index)."""
    parts = key if isinstance(key, tuple) else (key,)
    traced = [k for k in parts if isinstance(k, Var)]
    if traced:
        return _traced_key(x, parts, traced, value)
    if _builder(*(k for k in parts if isinstance(k, (list, tuple)))) is not None:
        raise UnsupportedOpError(at_user_site(
            "x[...] = v with a list of traced values as the index: indices must be integer "
            "data (an int array argument) or constants"))

    def update(P, V):
        P[key] = V
    return _write(x, "x[...] = v", [value], update)


def _traced_key(x, parts, traced, value):
    """x[mask] = v with a traced mask (computed from traced values, or a boolean array
    argument; one key, over x's leading axes): np.where(mask, v, x) when v is one value per
    selected element's trailing block (a scalar, or broadcast to x.shape[mask.ndim:]).
    x[idx] = v with one traced integer array: ``_scatter_rows``."""
    mask = traced[0]
    b = x._b
    boolean = is_mask(mask) or (mask._view is None and b.input_kinds.get(mask.node) == "b")
    if len(parts) == 1 and not boolean:
        return _scatter_rows(x, mask, value)
    if len(parts) != 1 and all(is_boolean(k) for k in traced):
        return _decided_key(x, parts, value)
    if len(parts) != 1:
        raise InplaceError(at_user_site(
            "x[...] = v with traced indices next to other index entries: only x[idx] = v "
            "(one traced integer array, along the first axis) or x[mask] = v is traced; "
            "move the axis first (np.moveaxis) or pass the indices as a constant"))
    v = _values(b, value)
    k = mask.ndim
    if mask.shape != x.shape[:k]:
        raise ShapeError(at_user_site(
            f"x[mask] = v: the boolean mask of shape {mask.shape} does not match the array's "
            f"shape {x.shape} (numpy: boolean index did not match)"))
    trail = x.shape[k:]
    try:
        fits = np.broadcast_shapes((1,) + trail, v.shape) == (1,) + trail
    except ValueError:
        fits = False
    if not fits:             # v has one value per selected element: the mask decides
        return _decided_key(x, parts, value)
    v = reshape(v, v.shape[v.ndim - len(trail):] if trail else ()) if v.ndim > len(trail) \
        else v
    new = where(reshape(mask, mask.shape + (1,) * len(trail)), v, x)

    def update(P, V):
        P[...] = V
    return _write(x, "x[mask] = v", [new], update)


def _decided_key(x, parts, value):
    """x[key] = value where the key's traced masks decide how many elements are written
    (v has one value per selected element): the masks are decided now, under guards
    (``Var._decided_mask``: a run where one differs traces again), and the write is at
    constant positions."""
    key = tuple(k._decided_mask("x[mask] = v, v one value per selected element")
                if is_boolean(k) else k for k in parts)
    return setitem(x, key if len(key) > 1 else key[0], value)


def _scatter_rows(x, idx, value):
    """x[idx] = v with traced integer indices (an int array argument) along the first axis,
    numpy's rules: negative indices wrap, an index out of range raises (DataError, when the
    tape runs: the take row checks it) and at a repeated index the last write wins. Made of
    existing rows: E[i, j] = (wrap(idx_i) == j); the last writer of row j is
    max_i where(E[i, j], i, -1); written rows read that v row (a take, so that no 0 * inf
    of another row reaches them), the others keep x's. O(k n) work for k indices into n rows;
    ``x[idx] += v`` is Python's x[idx] = x[idx] + v: at a repeated index it adds once."""
    b = x._b
    _index_data(b, idx)
    n, k = x.shape[0], idx.size
    if k * n > _SCATTER_LIMIT:
        raise InplaceError(at_user_site(
            f"x[idx] = v with {k} traced indices into {n} rows: that is traced as a "
            f"{k} x {n} comparison, too large; pass the indices as a constant, or build "
            "the result with np.concatenate / np.where"))
    rows = reshape(_take_rows(b.const(np.arange(n, dtype=np.float64)), reshape(idx, (k,))),
                   (k, 1))
    hits = rows == np.arange(n, dtype=np.float64)                       # E, (k, n)
    last = _max(where(hits, np.arange(k, dtype=np.float64)[:, None], -1.0), axis=0)
    rest = x.shape[1:]
    v = reshape(broadcast_to(b.lift(value), idx.shape + rest), (k,) + rest)
    written = _take_rows(v, maximum(last, 0.0))                         # (n,) + rest
    keep = reshape(last >= 0.0, (n,) + (1,) * len(rest))
    new = where(keep, written, x)

    def update(P, V):
        P[...] = V
    return _write(x, "x[idx] = v", [new], update)


_SCATTER_LIMIT = 1 << 22          # elements of the comparison E of _scatter_rows


@implements_method("__at__")
def ufunc_at(ufunc, a, indices, values=None):
    """np.add.at(a, indices, b) and np.subtract.at: unbuffered, so a repeated index adds
    every time (numpy's rule), a functional update a + scatter-add of b. Constant indices
    are applied to the positions by numpy (the scatter row); a traced integer array (an int
    array argument) indexes the first axis (the take_add row, after a take that wraps
    negative indices and checks the range)."""
    name = f"numpy.{ufunc.__name__}.at"
    if ufunc not in (np.add, np.subtract) or values is None:
        raise UnsupportedOpError(at_user_site(
            f"{name} is not supported on traced values: np.add.at and np.subtract.at are "
            "(a scatter-add); for others write x[idx] = f(x[idx], v), which numpy buffers"))
    if not isinstance(a, Var):
        raise InplaceError(at_user_site(
            f"{name} into a numpy array with traced values is not traceable: make the "
            "array traced, e.g. np.zeros_like(x) (x any traced value)"))
    b = a._b
    parts = indices if isinstance(indices, tuple) else (indices,)
    if any(isinstance(k, Var) for k in parts):
        if len(parts) != 1:
            raise InplaceError(at_user_site(
                f"{name} with traced indices next to other index entries: only one traced "
                "integer array (along the first axis) is traced"))
        idx = parts[0]
        _index_data(b, idx)
        n, k, rest = a.shape[0], idx.size, a.shape[1:]
        rows = _take_rows(b.const(np.arange(n, dtype=np.float64)), reshape(idx, (k,)))
        v = reshape(broadcast_to(b.lift(values), idx.shape + rest), (k,) + rest)
        node = b.add("take_add", a.shape, v.node, rows.node, params=[n, math.prod(rest)],
                     need=b.need[v.node])
    else:
        try:
            targets = np.arange(a.size).reshape(a.shape)[indices]
        except IndexError as e:
            raise ShapeError(at_user_site(f"{name}: index into shape {a.shape}: {e}")) from None
        v = broadcast_to(b.lift(values), np.shape(targets))
        node = b.add("scatter", a.shape, v.node, params=np.reshape(targets, -1),
                     need=b.need[v.node])
    added = Var(b, node, a.shape)
    new = a + added if ufunc is np.add else a - added

    def update(P, V):
        P[...] = V
    _write(a, name, [new], update)


@implements_method("put")
def put_method(x, indices, values, mode="raise"):
    """x.put(indices, values): np.put(x, indices, values), a functional update of x."""
    FUNCTIONS[np.put](x, indices, values, mode)


@implements_method("sort")
def sort_method(x, axis=-1, kind=None, order=None):
    """x.sort(): in place, as a functional update x[...] = np.sort(x, axis)."""
    if order is not None:
        raise UnsupportedOpError(at_user_site(
            "ndarray.sort(order=...): traced arrays have no fields to order by"))
    x[...] = FUNCTIONS[np.sort](x, axis)


@implements_method("inplace")
def inplace(x, result):
    """x op= v on a traced array: numpy's in-place operators write the result into x (whose
    shape cannot change) and return x."""
    def update(P, V):
        P[...] = V
    return _write(x, "in-place operator", [result], update)


@implements_method("__out__")
def write_out(name, result, out, where_, ufunc):
    """A result written into an ``out=`` array: numpy's ufuncs broadcast the result into it
    (``where=`` keeps out's old elements where it is False); other functions need out to
    have the result's shape exactly."""
    if isinstance(out, tuple):
        results = result if isinstance(result, tuple) else (result,)
        if len(out) != len(results):
            raise ShapeError(at_user_site(
                f"{name}: out= has {len(out)} arrays for {len(results)} outputs"))
        for o, r in zip(out, results):
            if o is not None:
                write_out(name, r, o, where_, ufunc)
        return out[0] if len(out) == 1 else out
    shape = np.shape(result) if not isinstance(result, Var) else result.shape
    oshape = out.shape if isinstance(out, Var) else np.shape(out)
    if not ufunc and shape != oshape:
        raise ShapeError(at_user_site(
            f"{name}(..., out=...): out has shape {oshape}, the result {shape} (numpy "
            "needs them equal)"))
    if not isinstance(out, Var):
        if not isinstance(result, Var):
            np.copyto(out, result, where=where_)
            return out
        raise InplaceError(at_user_site(
            f"{name}(..., out=array) with a numpy array as out: a traced result cannot be "
            "written into a numpy array. Use the returned value, or make out traced, e.g. "
            "out = np.zeros_like(x) (x any traced value)"))
    if where_ is not True:
        result = where(where_, result, out)
    return inplace(out, result)


# -- numpy's in-place functions -----------------------------------------------------------

@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    """numpy.copyto: dst[...] = src where ``where`` (broadcast)."""
    if not isinstance(dst, Var):
        raise InplaceError(at_user_site(
            "numpy.copyto of a traced value into a numpy array is not traceable "
            "(np.full_like(array, traced_fill) does that: use bnp.full_like or "
            "bnp.broadcast_to(fill, shape)); make the destination traced, e.g. "
            "np.zeros_like(x) with x a traced value"))
    if isinstance(where, Var):
        return _traced_where(dst, src, where)

    def update(P, V):
        np.copyto(P, V, where=where)
    _write(dst, "numpy.copyto", [src], update)


def _traced_where(dst, src, mask):
    new = FUNCTIONS[np.where](mask, src, dst)

    def update(P, V):
        P[...] = V
    _write(dst, "numpy.copyto", [new], update)


def _constant_indices(name, *args):
    if _builder(*args) is not None:
        raise InplaceError(at_user_site(
            f"{name} with traced indices or mask: they must be constants (numpy arrays) "
            "known while tracing; for a mask computed from traced values, use "
            "x = np.where(mask, v, x)"))


@implements(np.put)
def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v (v repeated as needed), as numpy."""
    _constant_indices("numpy.put", ind)

    def update(P, V):
        np.put(P, ind, V, mode=mode)
    _write(a, "numpy.put", [v], update)


@implements(np.place)
def place(arr, mask, vals):
    """numpy.place: arr[mask] = vals, vals repeated as needed."""
    _constant_indices("numpy.place", mask)

    def update(P, V):
        np.place(P, mask, V.reshape(-1))
    _write(arr, "numpy.place", [vals], update)


@implements(np.putmask)
def putmask(a, mask, values):
    """numpy.putmask: a[mask] = values[mask position], values repeated as needed."""
    _constant_indices("numpy.putmask", mask)

    def update(P, V):
        np.putmask(P, mask, V)
    _write(a, "numpy.putmask", [values], update)


@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    """numpy.bincount with traced weights (or counts of traced integer data): a scatter-add
    (np.add.at) into zeros. The length, max(x) + 1, decides the shape: for traced x it is a
    decision (a guard), numpy's value now."""
    b = _builder(x, weights)
    if b is None:
        return np.bincount(x, weights, minlength)
    if isinstance(x, Var):
        _index_data(b, x)
        top = int(_max(x)) if x.size else -1           # int() of integer data: a guard
        if x.size and int(_max(-x)) > 0:                # a negative entry (a guard too)
            raise ShapeError(at_user_site(
                "bincount: x must be a 1-D array of non-negative integers (numpy)"))
    else:
        x = np.asarray(x)
        if x.dtype.kind not in "iu" or x.ndim != 1 or (x.size and x.min() < 0):
            raise ShapeError(at_user_site(
                "bincount: x must be a 1-D array of non-negative integers (numpy)"))
        top = int(x.max()) if x.size else -1
    if x.ndim != 1:
        raise ShapeError(at_user_site(f"bincount: x must be 1-D, not of shape {x.shape}"))
    out = b.const(np.zeros(max(int(minlength), top + 1)))
    np.add.at(out, x, 1.0 if weights is None else weights)
    return out


@implements(np.fill_diagonal)
def fill_diagonal(a, val, wrap=False):
    """numpy.fill_diagonal: the main diagonal set to val (repeated as needed)."""
    def update(P, V):
        np.fill_diagonal(P, V, wrap=wrap)
    _write(a, "numpy.fill_diagonal", [val], update)


@implements(np.copy)
def copy(a, order="K", subok=False):
    """numpy.copy: a new array object with a's value (later writes to either stay apart)."""
    if not isinstance(a, Var):
        return _builder(a).lift(a)
    return a.copy()


def _created(name, npfunc, fill):
    def f(shape, dtype=None, order="C", *, like=None, **kwargs):
        if not isinstance(like, Var) or (dtype is not None and np.dtype(dtype).kind != "f"):
            return npfunc(shape, dtype=dtype, order=order, **kwargs)
        return like._b.const(np.full(shape, fill, dtype=np.float64))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"numpy.{name}(shape, like=x) with x a traced value: a traced array (a "
                 "constant) that in-place writes can fill")
    return f


zeros = implements(np.zeros)(_created("zeros", np.zeros, 0.0))
ones = implements(np.ones)(_created("ones", np.ones, 1.0))
empty = implements(np.empty)(_created("empty", np.empty, 0.0))      # zeros: values defined


@implements(np.full)
def full(shape, fill_value, dtype=None, order="C", *, like=None, **kwargs):
    """numpy.full with a traced fill value or like=x: a traced array."""
    b = _builder(fill_value, like)
    if b is None or (dtype is not None and np.dtype(dtype).kind != "f"):
        return np.full(shape, fill_value, dtype=dtype, order=order, **kwargs)
    shape = (shape,) if isinstance(shape, _INTEGERS) else tuple(shape)
    return broadcast_to(b.lift(fill_value), shape)


LIKE.update((np.zeros, np.ones, np.empty, np.full))

# np.sort is differentiable; x.sort() sorts in place (Var.sort writes sort's result)
assert FUNCTIONS[np.sort] is sort

# numpy's functions whose result is a view of their first argument (True: read-only)
VIEWS.update(dict.fromkeys(
    (np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.rollaxis, np.squeeze,
     np.expand_dims, np.flip, np.fliplr, np.flipud, np.atleast_1d, np.atleast_2d,
     np.atleast_3d, np.split),
    False))
VIEWS.update(dict.fromkeys((np.diagonal, np.broadcast_to), True))


def _out_positions():
    """numpy functions with an ``out`` argument: its position in the implementation's
    signature (a large number when it can only be given by keyword, after ``*operands``)."""
    found = {}
    for func, impl in FUNCTIONS.items():
        try:
            params = list(inspect.signature(impl).parameters.values())
        except (TypeError, ValueError):
            continue
        for k, p in enumerate(params):
            if p.name == "out":
                positional = all(q.kind is q.POSITIONAL_OR_KEYWORD for q in params[:k + 1])
                found[func] = k if positional else _KEYWORD_ONLY
    return found


_KEYWORD_ONLY = 1 << 30


OUT_ARGUMENT.update(_out_positions())
assert METHODS["__getitem__"] is getitem


class _Flat:
    """x.flat of a traced array: numpy's flat iterator, read as x.ravel() and written in
    place through numpy's own flatiter on the positions (views and order as numpy)."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __getitem__(self, key):
        return FUNCTIONS[np.ravel](self.base)[key]

    def __setitem__(self, key, value):
        def update(P, V):
            P.flat[key] = V
        _write(self.base, "x.flat[...] = v", [value], update)

    def __iter__(self):
        return iter(FUNCTIONS[np.ravel](self.base))

    def __len__(self):
        return self.base.size


@implements_method("flat")
def flat(x):
    return _Flat(x)


@implements(np.result_type)
def result_type(*arrays_and_dtypes):
    """numpy.result_type: a traced value counts as an array of the tape's dtype."""
    return np.result_type(*(a.dtype if isinstance(a, Var) else a for a in arrays_and_dtypes))
