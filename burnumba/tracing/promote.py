"""A traced value written into a numpy array that the function itself holds (#30).

Simulation code preallocates with numpy and fills in place::

    state = np.array([1.0, 0.0])
    for _ in range(steps):
        state[1] += dt * force(state[0], k)        # k differentiated: a traced value

numpy cannot hold a traced value, and autograd and JAX refuse the line. But when the array
is a local variable of the user's function and nothing else refers to it (no other name,
no list, no view of it), replacing it by a traced copy is invisible to the program: every
later read of ``state`` goes through that one name. So at the store (numpy asks the traced
value for its number: ``Var.__float__`` / ``__array__``), the line is read from its
bytecode, the local is rebound to a traced copy of the array with the value written into
it (a functional update, whose gradient flows to ``v``), and numpy gets NaN to write into
the array it is dropping.

The line must have the form ``NAME[key] = value`` or ``NAME[key] op= value`` (an int key
with ``op=``: a slice's ``op=`` runs numpy's in-place operator on a view first, which is
refused) with NAME a local or closure variable of a float numpy array that owns its memory,
and the key made of names, constants, tuples, lists, slices, integer arithmetic of those and
subscripts of numpy arrays, lists and tuples (index arrays among the names: ``out[i, j] =
v``, ``out[mask] = v``, ``out[perm[k]] = v``).
Anything else (an attribute, a global, a list element, an array another name or a view
also refers to, a view of another array such as ``big[:4]`` or ``np.linspace``'s result,
an integer array) keeps the InplaceError that names the fix, so a program never computes
with a stale copy.

Rebinding a local from outside its frame is CPython's ``PyFrame_LocalsToFast`` (Python
3.11 and 3.12; from 3.13 on, ``frame.f_locals`` writes through, PEP 667). Reading the line
needs 3.11's bytecode (``COPY`` / ``SWAP`` around an augmented store); on other versions
the store is refused as before.
"""
import ctypes
import dis
import operator
import sys

import numpy as np

from .._errors import PACKAGE, InplaceError, at_user_site, user_frame
from .conversions import INTO_NUMPY, store_refused
from .subscripts import _MISSING, _expression, _load

_OK = sys.version_info >= (3, 11)      # the bytecode forms read here
_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
        "%": operator.mod}
_BINARY = {k: _OPS[sym] for k, (_, sym) in enumerate(getattr(dis, "_nb_ops", ()))
           if sym in _OPS}
_LOCAL = frozenset(("LOAD_FAST", "LOAD_DEREF"))
_INSTRUCTIONS = {}      # code -> (its instructions, offset -> index)


def _instructions(code):
    found = _INSTRUCTIONS.get(code)
    if found is None:
        ins = list(dis.get_instructions(code))
        found = (ins, {i.offset: k for k, i in enumerate(ins)})
        if len(_INSTRUCTIONS) > 1024:
            _INSTRUCTIONS.clear()
        _INSTRUCTIONS[code] = found
    return found


def _store_site(frame):
    """(the container's name, the first and last instruction index of the key) of the user's
    ``STORE_SUBSCR`` in ``frame``, or None when the line has another form."""
    ins, at = _instructions(frame.f_code)
    k = at.get(frame.f_lasti)
    if k is None or ins[k].opname != "STORE_SUBSCR":
        return None
    if k >= 3 and ins[k - 1].opname == "SWAP" and ins[k - 2].opname == "SWAP":
        # NAME[key] op= value: NAME, key, COPY 2, COPY 2, BINARY_SUBSCR, value, BINARY_OP,
        # SWAP 3, SWAP 2, STORE_SUBSCR
        j = k - 3
        while j >= 2 and not (ins[j].opname == "BINARY_SUBSCR" and
                              ins[j - 1].opname == ins[j - 2].opname == "COPY"):
            j -= 1
        if j < 2:
            return None
        end = j - 3
    else:
        end = k - 1                          # value, NAME, key, STORE_SUBSCR
    start = _expression(ins, end) if end >= 1 else None
    if start is None or start < 1:
        return None
    container = ins[start - 1]
    if container.opname not in _LOCAL or container.is_jump_target:
        return None
    return container.argval, ins[start:end + 1]


def _key(frame, code):
    """The key's value, run from its instructions (loads, tuples, slices, integer
    arithmetic), or _MISSING."""
    stack = []
    for i in code:
        name = i.opname
        if name == "LOAD_CONST" or (name in ("LOAD_FAST", "LOAD_DEREF", "LOAD_NAME") or
                                    name == "LOAD_GLOBAL" and not i.arg & 1):
            v = _load(frame, i)
            if v is _MISSING:
                return _MISSING
            stack.append(v)
        elif name == "BUILD_TUPLE":
            n = i.arg
            stack[len(stack) - n:] = [tuple(stack[len(stack) - n:])]
        elif name == "BUILD_LIST":                   # a list of indices: out[[0, 2]] = v
            n = i.arg
            stack[len(stack) - n:] = [list(stack[len(stack) - n:])]
        elif name == "BUILD_SLICE":
            n = i.arg
            stack[len(stack) - n:] = [slice(*stack[len(stack) - n:])]
        elif name == "BINARY_OP" and i.arg in _BINARY:
            b, a = stack.pop(), stack.pop()
            if not all(isinstance(x, (int, np.integer)) for x in (a, b)):
                return _MISSING
            stack.append(_BINARY[i.arg](a, b))
        elif name == "BINARY_SUBSCR" and isinstance(stack[-2], (np.ndarray, list, tuple)) \
                and isinstance(stack[-1], (int, np.integer, slice, tuple, np.ndarray)) \
                and not (isinstance(stack[-2], np.ndarray) and stack[-2].dtype == object):
            k, a = stack.pop(), stack.pop()          # perm[i], J[::-1]: no side effect
            try:
                stack.append(a[k])
            except (IndexError, TypeError, ValueError):
                return _MISSING
        elif name == "UNARY_NEGATIVE" and isinstance(stack[-1], (int, np.integer)):
            stack.append(-stack.pop())
        else:
            return _MISSING
    return stack[0] if len(stack) == 1 else _MISSING




def _cell_inside(frame, name, out):
    """Whether the closure variable ``name`` belongs to a frame of the traced program: the
    store's frame or one of its callers up to burnumba's own (the trace's entry). A cell of
    a function that made the traced one (``buf`` in ``make()``'s scope) lives on after the
    trace, where a traced value must never be left."""
    f = frame
    while f is not None and not f.f_code.co_filename.startswith(PACKAGE):
        if name in f.f_code.co_cellvars and f.f_locals.get(name, _MISSING) is out:
            return True
        f = f.f_back
    return False


def _view_held(key, ndim):
    """Whether numpy's assignment ``out[key] = value`` holds a view of ``out`` while it
    converts the value: always, but for an advanced index of arrays alone (integer or
    boolean, or lists of them) that reaches every axis (``out[i, j]`` of a matrix,
    ``out[mask]`` of the mask's shape), which leaves no subspace to view."""
    parts = key if type(key) is tuple else (key,)
    covered = 0
    for p in parts:
        if isinstance(p, list):
            p = np.asarray(p)
        if not isinstance(p, np.ndarray) or p.dtype.kind not in "iub":
            return True
        covered += p.ndim if p.dtype.kind == "b" else 1
    return covered != ndim


def _mentions(key, v):
    """Whether the traced value ``v`` is (part of) the key: numpy converts a traced index
    too, and that conversion must not be taken for the value's."""
    if key is v:
        return True
    if isinstance(key, tuple):
        return any(_mentions(k, v) for k in key)
    if isinstance(key, slice):
        return any(k is v for k in (key.start, key.stop, key.step))
    return False


def _set_local(frame, name, value):
    if sys.version_info >= (3, 13):
        frame.f_locals[name] = value          # PEP 667: writes through
        return
    frame.f_locals[name] = value
    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))


def promote(v, depth, extra=0):
    """For ``out[key] = v`` (or ``op=``) in the user's frame, ``depth`` frames up, with
    ``out`` a float numpy array held by that one local name only: rebind the name to a
    traced copy of ``out`` with ``v`` written at ``key``, and return True (numpy then writes
    NaN into the array it is dropping). False: the store is refused as before. ``extra``:
    references numpy's own assignment path holds on the array (a view for a slice)."""
    if not _OK:
        return False
    frame = sys._getframe(depth + 1)
    site = _store_site(frame)
    if site is None:
        return False
    name, key_code = site
    key = _key(frame, key_code)
    if key is _MISSING or _mentions(key, v):     # numpy asked the key, not the value
        return False
    out = frame.f_locals.get(name, _MISSING)
    if type(out) is not np.ndarray or out.dtype.kind != "f" or out.base is not None:
        return False                      # a view writes through to another array
    if extra and not _view_held(key, out.ndim):
        extra = 0
    # the references: the local (or its cell), the dict f_locals made, the store's stack
    # slot, the name here and getrefcount's argument (plus numpy's view for a slice): any
    # other (a second name, a list, a view of the array) would see the old array
    if sys.getrefcount(out) != 5 + extra:
        return False
    if name not in frame.f_code.co_varnames and not _cell_inside(frame, name, out):
        return False
    b = v._b
    traced = b.lift(out.astype(b.dtype))
    traced[key] = v
    _set_local(frame, name, traced)
    return True


def stored_scalar(v):
    """``float(v)`` for numpy's ``out[i] = v``: NaN for the array the local name dropped
    (``promote``), else the InplaceError with the fix."""
    if promote(v, 2):
        return float("nan")
    raise store_refused(v._b)


def stored_array(v):
    """``v.__array__()`` for numpy's ``out[key] = v``: NaN for the array the local name
    dropped (``promote``; numpy's slice view holds one more reference), else the error."""
    if promote(v, 2, extra=1):
        return np.full(v.shape, np.nan)
    raise InplaceError(at_user_site(INTO_NUMPY))


def rebind_local(out, traced):
    """Rebind the user's one local name that holds the numpy array ``out`` (the innermost
    frame outside burnumba, where ``rng.shuffle(out)`` was called) to ``traced``. False when
    no local, or more than one name, or anything else (a list, a view) refers to it."""
    if not _OK:
        return False
    frame = user_frame()
    if frame is None:
        return False
    if out.base is not None:            # a view: the shuffle would reach another array
        return False
    names = [k for k, v in frame.f_locals.items() if v is out]
    if len(names) != 1 or names[0] not in frame.f_code.co_varnames:
        return False
    # the local, the f_locals dict, the user's call (its stack slot, the argument tuple
    # passed down to the recorder), the recorder's name for it, this function's argument,
    # getrefcount's: one more is another holder (a name, a list, a view)
    if sys.getrefcount(out) != _SHUFFLE_REFS:
        return False
    _set_local(frame, names[0], traced)
    return True


_SHUFFLE_REFS = 7
