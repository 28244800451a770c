"""The signature of a call: which leaves are differentiated, data or static, the cache key
of a trace, and the errors that explain a mismatch. Shared by the API and the Tape."""
import numpy as np

from .._errors import InputError, NestedTrace, ShapeError
from .plan import DATA as _DATA, DIFF as _DIFF, STATIC as _STATIC, is_int_data
from .pytree import check_same, describe, flatten, unflatten
from .tracer import Var


def _nested(x, where):
    """A traced value passed to a transformed function inside another one's trace: the
    transformation runs in that trace instead (see transforms/nested.py)."""
    raise NestedTrace(x._b)


def diff_leaf(x, where):
    """Signature of a differentiated leaf; rejects what cannot be differentiated."""
    t = type(x)
    if t is float:
        return float
    if t is np.ndarray and x.dtype.kind == "f":         # the common case, kept short
        return (x.shape, x.dtype)
    if isinstance(x, (np.ndarray, np.generic)):
        kind = x.dtype.kind
        if kind == "f":
            return (x.shape, x.dtype)
        what = {"i": "an integer", "u": "an unsigned integer", "b": "a boolean",
                "c": "a complex"}.get(kind, f"a {x.dtype}")
        raise InputError(
            f"{where} is {what} array of dtype {x.dtype}: gradients need float inputs. "
            f"Pass it as x.astype(float), or leave it out of argnums")
    if isinstance(x, bool) or isinstance(x, int):
        raise InputError(
            f"{where} is the Python int {x!r}: gradients need float inputs. Pass {float(x)!r} "
            "instead, or leave it out of argnums")
    if isinstance(x, complex):
        raise InputError(f"{where} is complex: burnumba differentiates real functions only")
    if isinstance(x, float):                      # float subclasses
        return float
    if isinstance(x, Var):
        _nested(x, where)
    raise InputError(
        f"{where} has type {t.__name__}, which cannot be differentiated: pass floats, numpy "
        "float arrays, or tuples / lists / dicts / namedtuples / dataclasses of them")


def is_data(x):
    """Whether a non-differentiated leaf is a tape input (new values do not retrace): numpy
    data, Python floats and small Python ints. Anything else (bools, big ints, strings,
    None) is static: part of the cache key."""
    return type(x) is float or is_int_data(x) or \
        isinstance(x, (np.ndarray, np.generic, float)) and not isinstance(x, bool)


def other_leaf(x, where, static=False, ints_static=False):
    """Signature of a non-differentiated leaf: numpy data and Python floats are tape inputs,
    the rest (and everything in a static argument) is static; Python ints too, with
    ``ints_static`` (a function whose guards on them alone kept failing: transforms/core.py)."""
    if isinstance(x, Var):
        _nested(x, where)
    if type(x) is float and not static:
        return _DATA, float
    if not static and not ints_static and is_int_data(x):
        return _DATA, int
    if isinstance(x, (np.ndarray, np.generic)) and not static:
        if x.dtype.kind not in "biuf":
            raise InputError(f"{where} has dtype {x.dtype}: only real numpy data can be traced")
        return _DATA, (x.shape, x.dtype)
    if isinstance(x, float) and not static:          # float subclasses
        return _DATA, float
    try:
        hash(x)
    except TypeError:
        raise InputError(
            f"{where} of type {type(x).__name__} is neither numpy data nor hashable: burnumba "
            "keys its trace cache on the values of static arguments"
            + (" (static_argnums names it)" if static else "")) from None
    return _STATIC, (type(x), x)


class _Where:
    """'argument k (leaf j of {...})' for error messages, built only when one is raised."""

    __slots__ = ("k", "j", "treedef")

    def __init__(self, k, j, treedef):
        self.k, self.j, self.treedef = k, j, treedef

    def __str__(self):
        leaf = f" (leaf {self.j} of {describe(self.treedef)})" if self.treedef is not None else ""
        return f"argument {self.k}{leaf}"

    __format__ = lambda self, spec: format(str(self), spec)   # noqa: E731


class Signature:
    """Walks the arguments once: the cache key, and the leaves in tape-input order."""

    __slots__ = ("key", "diff", "data", "treedefs", "kinds")

    def __init__(self, args, kwargs, argnums, static=(), ints_static=False):
        key = []
        diff, data, treedefs, kinds = [], [], [], []
        nargs = len(args)
        for k in argnums:
            if not -nargs <= k < nargs:
                raise InputError(f"argnums names argument {k}, but the function got {nargs}")
        for k in static:
            if not -nargs <= k < nargs:
                raise InputError(f"static_argnums names argument {k}, but the function got "
                                 f"{nargs}")
        for k, a in enumerate(args):
            is_diff = k in argnums
            if type(a) is float and is_diff:           # the common scalar case, kept short
                key.append(float)
                diff.append(a)
                treedefs.append(None)
                kinds.append((_DIFF,))
                continue
            leaves, treedef = flatten(a)
            treedefs.append(treedef)
            sig, kind = [], []
            for j, x in enumerate(leaves):
                where = _Where(k, j, treedef)
                if is_diff:
                    sig.append(diff_leaf(x, where))
                    diff.append(x)
                    kind.append(_DIFF)
                else:
                    lk, s = other_leaf(x, where, k in static, ints_static)
                    sig.append(s)
                    kind.append(lk)
                    if lk == _DATA:
                        data.append(x)
            key.append((treedef, tuple(sig)))
            kinds.append(tuple(kind))
        if kwargs:
            for name in sorted(kwargs):
                leaves, treedef = flatten(kwargs[name])
                sig = []
                for x in leaves:
                    lk, s = other_leaf(x, f"keyword argument {name!r}")
                    sig.append(s)
                    if lk == _DATA:
                        data.append(x)
                key.append((name, treedef, tuple(sig)))
        self.key = tuple(key)
        self.diff = diff
        self.data = data
        self.treedefs = treedefs
        self.kinds = kinds


def ints_static_in(key, static):
    """Whether the signature ``key`` was taken with Python ints static (``Signature``'s
    ``ints_static``): a positional leaf outside ``static`` keyed by its int value."""
    return any(type(s) is tuple and len(s) == 2 and s[0] is int and is_int_data(s[1])
               for k, part in enumerate(key)
               if type(part) is tuple and len(part) == 2 and k not in static
               for s in part[1])


def tape_dtype(leaves):
    """float32 when every float array among the inputs is float32, else float64.
    Python floats and integer data adapt to the tape (as JAX's weak types)."""
    kinds = {x.dtype for x in leaves
             if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f"}
    return np.float32 if kinds == {np.dtype(np.float32)} else np.float64


def structure(tape, flat, sig, argnums, single):
    """The flat gradient, split per leaf and rebuilt into the structure of each argnum."""
    leaves = tape.split_grads(flat)
    if len(argnums) == 1 and sig.treedefs[argnums[0]] is None:
        return leaves[0] if single else (leaves[0],)
    return regroup(leaves, sig, argnums, single)


def regroup(leaves, sig, argnums, single):
    """Per-leaf results (one per differentiated input leaf, in order of argument position,
    whatever the order of argnums) rebuilt into each argnum's structure, in argnums' order."""
    by_position, pos = {}, 0
    for k in sorted(set(argnums)):
        n = len(sig.kinds[k])
        by_position[k] = unflatten(sig.treedefs[k], leaves[pos:pos + n])
        pos += n
    out = tuple(by_position[k] for k in argnums)
    return out[0] if single else out


def explain_mismatch(tape, sig):
    """Raise the error that says how these arguments differ from the traced ones."""
    if len(sig.key) != len(tape.key):
        raise InputError(f"the tape was traced with {len(tape.key)} arguments, got "
                         f"{len(sig.key)}")
    for k, (old, new) in enumerate(zip(tape.key, sig.key)):
        if old == new:
            continue
        old_def = None if old is float else old[-2]
        new_def = None if new is float else new[-2]
        check_same(old_def, new_def, f"argument {k}")
        raise ShapeError(
            f"argument {k}: the tape was traced for shapes / dtypes / static values {old}, "
            f"got {new}. Trace again with bn.trace, or use bn.grad, which retraces")
    raise InputError("these arguments do not match the traced ones")


