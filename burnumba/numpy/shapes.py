"""Shapes and data movement: reshape, ravel, transpose, swapaxes, expand_dims, squeeze,
broadcast_to; stack, concatenate, vstack, hstack, column_stack, split; flip, roll, repeat, tile,
moveaxis, rollaxis, atleast_*d, tril, triu, diag, diagonal, diff, pad.

A reshape is free (the node's slice with a new shape); everything else here is one gather row
of the elements' arena positions, computed with numpy at trace time.
"""
import operator

import numpy as np

from .._errors import ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements
from ..tracing.tracer import Var, broadcast_to as _expand, normalize_axis
from ._common import _NOVALUE, _builder, _lift


def _positions(x):
    """Absolute arena positions of x's elements, shaped like x."""
    return x.positions()


def _join(name, arrays, npfunc, **kwargs):
    """npfunc (stack, concatenate, vstack ...) applied to the arrays' positions: one gather."""
    b = _builder(arrays)
    if b is None:
        return npfunc(arrays, **kwargs)
    xs = [b.lift(x) for x in arrays]
    if not xs:
        raise ShapeError(at_user_site(f"{name}: need at least one array"))
    try:
        pos = npfunc([_positions(x) for x in xs], **kwargs)
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        where = f" along axis {kwargs['axis']}" if "axis" in kwargs else ""
        raise ShapeError(at_user_site(
            f"{name}: shapes {[x.shape for x in xs]}{where}: {e}")) from None
    return b.gather(xs, pos.reshape(-1), pos.shape)


@implements(np.stack)
def stack(arrays, axis=0):
    """numpy.stack; also packs a list of traced scalars into a traced 1-D array."""
    return _join("stack", list(arrays), np.stack, axis=axis)


@implements(np.concatenate)
def concatenate(arrays, axis=0):
    return _join("concatenate", list(arrays), np.concatenate, axis=axis)


def _stack_dtype(name, tup, npfunc, dtype, casting):
    if _builder(tup) is None:
        return npfunc(tup, dtype=dtype, casting=casting)
    if dtype is not None:
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., dtype={dtype!r}) on traced values: a tape computes in one float "
            f"dtype; drop dtype= (the traced inputs' dtype is used)"))
    return _join(name, list(tup), npfunc)


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.vstack: 1-D arrays become rows, then concatenate along axis 0 (one gather)."""
    return _stack_dtype("vstack", tup, np.vstack, dtype, casting)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    return _stack_dtype("hstack", tup, np.hstack, dtype, casting)


@implements(np.column_stack)
def column_stack(tup):
    """numpy.column_stack: 1-D arrays become columns of a 2-D array."""
    return _join("column_stack", list(tup), np.column_stack)


def _resolve_shape(x, shape):
    try:
        return np.empty(x.shape, dtype=np.bool_).reshape(shape).shape
    except ValueError:
        raise ShapeError(at_user_site(
            f"reshape: cannot reshape an array of shape {x.shape} (size {x.size}) into shape "
            f"{shape}")) from None


def _order(name, order):
    if order is None:               # numpy reads None as 'C' here (autograd's vjps pass it)
        return "C"
    if order not in ("C", "F"):
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., order={order!r}): a traced array has no memory layout of its own; "
            "use order='C' (row-major, the default) or order='F' (column-major)"))
    return order


@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Row-major reshape. Free: the node's slice is reused with a new shape. ``order='F'``
    reads and writes column-major (a transpose on each side)."""
    if shape is None:
        shape = newshape
    if _builder(a) is None:
        return np.reshape(a, shape, order=order)
    a = _lift(a)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(shape)
    if _order("reshape", order) == "F":
        out = a if a.ndim < 2 else transpose(a)
        out = out.reshaped(_resolve_shape(a, shape[::-1]))
        return out if out.ndim < 2 else transpose(out)
    return a.reshaped(_resolve_shape(a, shape))


@implements(np.ravel)
def ravel(a, order="C"):
    """numpy.ravel (free in row-major order; ``order='F'`` is a transpose first)."""
    if _builder(a) is None:
        return np.ravel(a, order)
    a = _lift(a)
    if _order("ravel", order) == "F" and a.ndim > 1:
        a = transpose(a)
    return a.reshaped((a.size,))


@implements(np.expand_dims)
def expand_dims(a, axis):
    if _builder(a) is None:
        return np.expand_dims(a, axis)
    a = _lift(a)
    return reshape(a, np.expand_dims(np.empty(a.shape, dtype=np.bool_), axis).shape)


@implements(np.squeeze)
def squeeze(a, axis=None):
    if _builder(a) is None:
        return np.squeeze(a, axis)
    a = _lift(a)
    try:
        shape = np.squeeze(np.empty(a.shape, dtype=np.bool_), axis).shape
    except ValueError as e:
        raise ShapeError(at_user_site(f"squeeze: shape {a.shape}, axis {axis}: {e}")) from None
    return reshape(a, shape)


@implements(np.transpose)
def transpose(a, axes=None):
    if _builder(a) is None:
        return np.transpose(a, axes)
    a = _lift(a)
    try:
        pos = np.transpose(_positions(a), axes)
    except ValueError as e:
        raise ShapeError(at_user_site(f"transpose: shape {a.shape}, axes {axes}: {e}")) from None
    if np.array_equal(pos.reshape(-1), _positions(a).reshape(-1)):
        return reshape(a, pos.shape)           # the same elements in the same order
    return a._b.gather([a], pos.reshape(-1), pos.shape)


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    if _builder(a) is None:
        return np.swapaxes(a, axis1, axis2)
    a = _lift(a)
    axes = list(range(a.ndim))
    i, j = (normalize_axis(ax, a.ndim, "swapaxes") for ax in (axis1, axis2))
    axes[i], axes[j] = axes[j], axes[i]
    return transpose(a, tuple(axes))


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    """numpy.split: a list of slices (gather nodes)."""
    if isinstance(indices_or_sections, Var):
        # traced sections or split points decide shapes: their values, each a guard
        sections = indices_or_sections
        indices_or_sections = (operator.index(sections) if sections.ndim == 0 else
                               [operator.index(k) for k in sections])
    if _builder(ary) is None:
        return np.split(ary, indices_or_sections, axis=axis)
    ary = _lift(ary)
    axis = normalize_axis(axis, ary.ndim, "split")
    try:
        parts = np.split(np.arange(ary.shape[axis]), indices_or_sections)
    except ValueError as e:
        raise ShapeError(at_user_site(f"split: shape {ary.shape} along axis {axis}: {e}")) \
            from None
    lead = (slice(None),) * axis
    return [ary[lead + (slice(int(p[0]), int(p[-1]) + 1),)] if len(p) else
            ary[lead + (slice(0, 0),)] for p in parts]


# -- data movement: numpy's function applied to the positions -------------------------------
#
# A function that only moves, repeats or drops elements (flip, roll, tile, diagonal ...) is
# numpy's own function applied to the positions array at trace time: one gather row, whose
# adjoint scatter-adds (repeated elements collect every copy's gradient). Functions that also
# write zeros or constants (tril, diag of a vector, pad) point those elements at scalar
# constant nodes.

def _moved(name, a, f):
    """The gather of ``f(positions of a)``; ``a`` itself when f leaves it in place."""
    a = _lift(a)
    here = _positions(a)
    try:
        pos = np.asarray(f(here))
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        raise ShapeError(at_user_site(f"{name}: shape {a.shape}: {e}")) from None
    if pos.size == a.size and np.array_equal(pos.reshape(-1), here.reshape(-1)):
        return a if pos.shape == a.shape else reshape(a, pos.shape)
    return a._b.gather([a], pos.reshape(-1), pos.shape)


def _filled(name, a, f, fill=0.0):
    """The gather of ``f(positions of a + 1)``, whose 0s read the constant ``fill``: positions
    are >= 0, so a 0 left by numpy's zero fill (tril, diag) marks an element to write."""
    a = _lift(a)
    b = a._b
    z = b.const(fill)
    try:
        pos = np.asarray(f(_positions(a) + 1))
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        raise ShapeError(at_user_site(f"{name}: shape {a.shape}: {e}")) from None
    pos = np.where(pos == 0, int(z.positions()), pos - 1)
    return b.gather([a, z], pos.reshape(-1), pos.shape)


def _no_traced(name, **args):
    for arg, v in args.items():
        if _builder(v) is not None:
            raise UnsupportedOpError(at_user_site(
                f"{name}: a traced `{arg}` is not supported (it would decide the result's "
                f"shape or layout at run time); pass `{arg}` as a constant (a Python number "
                "or numpy array, e.g. through static_argnums)"))


@implements(np.flip)
def flip(m, axis=None):
    """numpy.flip: one gather of the reversed positions."""
    if _builder(m) is None:
        return np.flip(m, axis)
    m = _lift(m)
    return _moved("flip", m, lambda p: np.flip(p, axis))


def _flip_whole(npfunc):
    """numpy.fliplr / numpy.flipud: numpy's own function on the positions (its check of the
    dimensions included), one gather."""
    name = npfunc.__name__

    @implements(npfunc)
    def flipped(m):
        if _builder(m) is None:
            return npfunc(m)
        return _moved(name, _lift(m), npfunc)
    flipped.__name__ = flipped.__qualname__ = name
    flipped.__doc__ = f"numpy.{name}: {npfunc.__doc__.strip().splitlines()[0]}"
    return flipped


fliplr, flipud = _flip_whole(np.fliplr), _flip_whole(np.flipud)


@implements(np.roll)
def roll(a, shift, axis=None):
    if _builder(a) is None:
        return np.roll(a, shift, axis)
    a = _lift(a)
    _no_traced("roll", shift=shift)
    return _moved("roll", a, lambda p: np.roll(p, shift, axis))


@implements(np.repeat)
def repeat(a, repeats, axis=None):
    """numpy.repeat; the gradient of each element sums over its copies."""
    if _builder(a, repeats) is None:
        return np.repeat(a, repeats, axis)
    _no_traced("repeat", repeats=repeats)
    return _moved("repeat", a, lambda p: np.repeat(p, repeats, axis))


@implements(np.tile)
def tile(A, reps):
    if _builder(A, reps) is None:
        return np.tile(A, reps)
    _no_traced("tile", reps=reps)
    return _moved("tile", A, lambda p: np.tile(p, reps))


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    if _builder(a) is None:
        return np.moveaxis(a, source, destination)
    a = _lift(a)
    return _moved("moveaxis", a, lambda p: np.moveaxis(p, source, destination))


@implements(np.rollaxis)
def rollaxis(a, axis, start=0):
    if _builder(a) is None:
        return np.rollaxis(a, axis, start)
    a = _lift(a)
    return _moved("rollaxis", a, lambda p: np.rollaxis(p, axis, start))


def _atleast(name, npfunc, arys):
    out = [npfunc(x) if _builder(x) is None else _moved(name, x, npfunc) for x in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_1d)
def atleast_1d(*arys):
    return _atleast("atleast_1d", np.atleast_1d, arys)


@implements(np.atleast_2d)
def atleast_2d(*arys):
    return _atleast("atleast_2d", np.atleast_2d, arys)


@implements(np.atleast_3d)
def atleast_3d(*arys):
    return _atleast("atleast_3d", np.atleast_3d, arys)


def _filled_by(npfunc, doc):
    """numpy.tril / triu / diagflat: numpy's own function on the positions picks the
    elements; the others read the constant 0 (so inf and NaN there give 0, as numpy's, and
    no gradient)."""
    name = npfunc.__name__

    @implements(npfunc)
    def filled(m, k=0):
        if _builder(m) is None:
            return npfunc(m, k)
        return _filled(name, _lift(m), lambda p: npfunc(p, k))
    filled.__name__ = filled.__qualname__ = name
    filled.__doc__ = f"numpy.{name}: {doc}"
    return filled


tril = _filled_by(np.tril, "the elements above the k-th diagonal read the constant 0 (so inf "
                  "and NaN there give 0, as numpy's, and no gradient).")
triu = _filled_by(np.triu, "the elements below the k-th diagonal read the constant 0.")
diagflat = _filled_by(np.diagflat, "the flattened input as the k-th diagonal of a square "
                      "matrix (zeros elsewhere).")


@implements(np.diag)
def diag(v, k=0):
    """numpy.diag: a 1-D array becomes the k-th diagonal of a square matrix (zeros
    elsewhere); a 2-D array gives its k-th diagonal."""
    if _builder(v) is None:
        return np.diag(v, k)
    v = _lift(v)
    if v.ndim == 1:
        return _filled("diag", v, lambda p: np.diag(p, k))
    return _moved("diag", v, lambda p: np.diag(p, k))


@implements(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal (a gather; the diagonal's axis comes last, as numpy's)."""
    if _builder(a) is None:
        return np.diagonal(a, offset, axis1, axis2)
    a = _lift(a)
    return _moved("diagonal", a, lambda p: np.diagonal(p, offset, axis1, axis2))


@implements(np.diff)
def diff(a, n=1, axis=-1, prepend=_NOVALUE, append=_NOVALUE):
    """numpy.diff: n times ``a[1:] - a[:-1]`` along ``axis`` (two gathers and a subtract)."""
    if _builder(a, None if prepend is _NOVALUE else prepend,
                None if append is _NOVALUE else append) is None:
        kw = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not _NOVALUE}
        return np.diff(a, n, axis, **kw)
    if n < 0:
        raise ShapeError(at_user_site(f"diff: order must be non-negative but got {n}"))
    b = _builder(a, prepend, append)
    a = b.lift(a)
    if a.ndim == 0:
        raise ShapeError(at_user_site("diff requires input that is at least one dimensional"))
    axis = normalize_axis(axis, a.ndim, "diff")
    parts = []
    for extra in (prepend, a, append):
        if extra is a:
            parts.append(a)
        elif extra is not _NOVALUE:
            e = b.lift(extra)
            if e.ndim == 0:
                e = broadcast_to(e, a.shape[:axis] + (1,) + a.shape[axis + 1:])
            parts.append(e)
    if len(parts) > 1:
        a = concatenate(parts, axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        a = a[lead + (slice(1, None),)] - a[lead + (slice(None, -1),)]
    return a


_PAD_MOVES = ("edge", "reflect", "symmetric", "wrap")


@implements(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad. mode="constant" (with constant_values) points the border at scalar constant
    nodes; "edge", "reflect", "symmetric" and "wrap" only move elements: one gather."""
    if _builder(array) is None:
        return np.pad(array, pad_width, mode, **kwargs)
    array = _lift(array)
    _no_traced("pad", pad_width=pad_width, **kwargs)
    if mode in _PAD_MOVES:
        return _moved("pad", array, lambda p: np.pad(p, pad_width, mode, **kwargs))
    if mode != "constant":
        raise UnsupportedOpError(at_user_site(
            f"pad: mode={mode!r} is not supported on traced values (it computes the border "
            f"from the values); use mode='constant' or one of {', '.join(_PAD_MOVES)}, or "
            "build the border with bnp.concatenate"))
    b = array._b
    try:
        inside = np.pad(np.ones(array.shape, dtype=bool), pad_width, "constant",
                        constant_values=False)
        fills = np.pad(np.zeros(array.shape), pad_width, "constant", **kwargs)
    except (ValueError, TypeError) as e:
        raise ShapeError(at_user_site(f"pad: shape {array.shape}: {e}")) from None
    pos = np.zeros(inside.shape, dtype=np.int64)
    pos[inside] = _positions(array).reshape(-1)
    consts = {}
    for v in np.unique(fills[~inside]):
        consts[float(v)] = b.const(float(v))
        pos[~inside & (fills == v)] = int(consts[float(v)].positions())
    return b.gather([array, *consts.values()], pos.reshape(-1), pos.shape)


# np.shape / np.ndim / np.size of a traced value: its metadata, no node
implements(np.shape)(lambda a: a.shape)
implements(np.ndim)(lambda a: a.ndim)
implements(np.size)(lambda a, axis=None: a.size if axis is None else a.shape[axis])
# the index arrays of a shape (plain integer data: only the traced array's shape is read)
implements(np.tril_indices_from)(lambda arr, k=0: np.tril_indices(
    arr.shape[-2], k, arr.shape[-1]))
implements(np.triu_indices_from)(lambda arr, k=0: np.triu_indices(
    arr.shape[-2], k, arr.shape[-1]))
implements(np.diag_indices_from)(lambda arr: np.diag_indices_from(np.empty(arr.shape, bool)))


@implements(np.broadcast_to)
def broadcast_to(array, shape):
    if _builder(array) is None:
        return np.broadcast_to(array, shape)
    array = _lift(array)
    return _expand(array, (shape,) if isinstance(shape, int) else tuple(shape))


# -- more of numpy's data movement, the same way: numpy's function on the positions ----------
@implements(np.append)
def append(arr, values, axis=None):
    """numpy.append: one gather of np.append of the positions (axis=None ravels both)."""
    return _join("append", [arr, values], lambda p, axis: np.append(p[0], p[1], axis),
                 axis=axis)


@implements(np.insert)
def insert(arr, obj, values, axis=None):
    """numpy.insert at constant positions ``obj``; ``values`` broadcast as numpy's (each
    copy of a value adds its gradient back to it)."""
    _no_traced("insert", obj=obj)
    return _join("insert", [arr, values],
                 lambda p, axis: np.insert(p[0], obj, p[1], axis), axis=axis)


@implements(np.delete)
def delete(arr, obj, axis=None):
    """numpy.delete at constant positions ``obj``: the gather of what is kept."""
    if _builder(arr) is None:
        return np.delete(arr, obj, axis)
    _no_traced("delete", obj=obj)
    return _moved("delete", arr, lambda p: np.delete(p, obj, axis))


@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    """numpy.array_split: as split, the sections' sizes differing by at most one."""
    if _builder(ary) is None:
        return np.array_split(ary, indices_or_sections, axis=axis)
    _no_traced("array_split", indices_or_sections=indices_or_sections)
    ary = _lift(ary)
    try:
        pieces = np.array_split(_positions(ary), indices_or_sections, axis=axis)
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        raise ShapeError(at_user_site(f"array_split: shape {ary.shape}: {e}")) from None
    return [ary._b.gather([ary], p.reshape(-1), p.shape) for p in pieces]


@implements(np.dstack)
def dstack(tup):
    return _join("dstack", list(tup), lambda p: np.dstack(p))


@implements(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    if _builder(m) is None:
        return np.rot90(m, k, axes)
    return _moved("rot90", m, lambda p: np.rot90(p, k, axes))


@implements(np.resize)
def resize(a, new_shape):
    """numpy.resize: the elements repeated in order to fill ``new_shape`` (each copy's
    gradient adds back to its element)."""
    if _builder(a) is None:
        return np.resize(a, new_shape)
    _no_traced("resize", new_shape=new_shape)
    return _moved("resize", a, lambda p: np.resize(p, new_shape))


@implements(np.block)
def block(arrays):
    """numpy.block of nested lists of traced and constant arrays: np.block of their
    positions, one gather."""
    b = _builder(arrays)
    if b is None:
        return np.block(arrays)
    xs = []

    def positions(a):
        if isinstance(a, list):
            return [positions(e) for e in a]
        x = b.lift(a)
        xs.append(x)
        return _positions(x)
    try:
        pos = np.block(positions(arrays))
    except ValueError as e:
        raise ShapeError(at_user_site(f"block: {e}")) from None
    return b.gather(xs, pos.reshape(-1), pos.shape)


@implements(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """numpy.ediff1d: the differences of the raveled array, with ``to_begin`` and ``to_end``
    (traced or constant) around them."""
    if _builder(ary, to_end, to_begin) is None:
        return np.ediff1d(ary, to_end, to_begin)
    b = _builder(ary, to_end, to_begin)
    flat = ravel(b.lift(ary))
    parts = [flat[1:] - flat[:-1]]
    if to_begin is not None:
        parts.insert(0, ravel(b.lift(to_begin)))
    if to_end is not None:
        parts.append(ravel(b.lift(to_end)))
    return concatenate(parts) if len(parts) > 1 else parts[0]
