"""Library functions called inside a traced function, as written (#30): scipy's, and numpy's
array constructors asked for a dtype.

``scipy.stats.norm.logpdf(x, mu, sigma)``, ``scipy.special.logsumexp(x)`` or
``scipy.linalg.solve_triangular(L, b)`` do Python-level work on their arguments (argument
checks, ``np.asarray``), which a traced value cannot go through. ``burnumba.scipy`` has
each of them under the same name, signature and defaults. So while a function is traced,
the places its code reads such a scipy object from (a global of the user's module, a
closure variable, an attribute of a module it names: ``st.norm``, ``sl.solve_triangular``)
hold a stand-in that calls burnumba.scipy's function when an argument is a traced value,
and scipy's otherwise. After the trace, every place holds scipy's object again.

``np.asarray(x, dtype=float)`` (the first line of many numpy functions, scipy's examples
among them) and ``np.array(parts, dtype=np.float64)`` are numpy's compiled functions, which
no protocol of a traced value reaches; with a dtype they ask every element for a number.
So during a trace numpy's ``asarray``, ``array``, ``asanyarray``, ``ascontiguousarray`` and
``fromiter`` (the module's attributes, and names a function binds to them: ``from numpy
import asarray``) are stand-ins. A call with a float dtype on traced values goes to
burnumba.numpy's asarray (the tape's float dtype; another float dtype warns); every other
call goes to numpy's own, with the same arguments: no dtype (``np.asarray(x)`` keeps its
documented result, an object array of traced scalars), an integer or object dtype, plain
values, and burnumba's own calls. The module itself stays numpy (``xp is np`` holds); a
thread that calls these functions meanwhile gets numpy's result through the stand-in.

The walk is the one ``captures.py`` makes of what ``f`` reads, through its helpers; a
function reached another way (a name the code computes, an object's attribute more than
one level down, a module imported inside ``f``) is not replaced, and keeps the error that
names its replacement.

Stand-ins of one place are shared by the traces in progress (a count per place, under a
lock), and another thread that calls the stand-in with plain values gets the library's own
result: the stand-in only chooses by the arguments' types.
"""
import contextlib
import functools
import itertools
import sys
import threading
import types

import numpy as np

from .. import numpy as _bnp
from .. import scipy as _ours
from ..tracing.tracer import Var
from .captures import _names, _own

_LOCK = threading.Lock()
_INSTALLED = {}          # (id(dict), name) -> [stand-in, original, count]
_MAX_PLACES = 256


def _traced(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Var) or (isinstance(a, (list, tuple)) and
                                  any(isinstance(v, Var) for v in a)):
            return True
    return False


_AREAS = ("special", "linalg", "signal", "integrate", "stats")


def _table():
    """id(scipy object) -> (the scipy object, ours), for the scipy modules imported so far
    (a module imported later joins the table then)."""
    return _table_of(tuple(a for a in _AREAS if f"scipy.{a}" in sys.modules))


@functools.lru_cache(maxsize=8)
def _table_of(areas):
    """scipy.special / linalg / signal / integrate's public functions that burnumba.scipy
    has, and scipy.stats's distributions (ours: the burnumba.scipy.stats module of the same
    name), of the scipy ``areas`` imported."""
    ours, table = _ours, {}
    for area in (a for a in areas if a != "stats"):
        theirs = sys.modules[f"scipy.{area}"]
        mine = getattr(ours, area)
        for name in getattr(mine, "__all__", ()):
            obj = getattr(theirs, name, None)
            if callable(obj) and not isinstance(obj, type) and callable(getattr(mine, name,
                                                                                 None)):
                table[id(obj)] = (obj, getattr(mine, name))
    stats = sys.modules.get("scipy.stats") if "stats" in areas else None
    if stats is not None:
        for name in ours.stats.__all__:
            obj = getattr(stats, name, None)
            if obj is not None:
                table[id(obj)] = (obj, getattr(ours.stats, name))
    return table


class _Distribution:
    """scipy.stats's distribution object during a trace: a method burnumba.scipy.stats has
    (logpdf, cdf, ...) called with a traced value is ours; everything else is scipy's."""

    def __init__(self, real, ours):
        self._real, self._ours = real, ours

    def __getattr__(self, name):
        attr = getattr(self._real, name)
        mine = getattr(self._ours, name, None)
        if mine is None or not callable(attr) or name.startswith("_"):
            return attr

        @functools.wraps(attr)
        def method(*args, **kwargs):
            return (mine if _traced(args, kwargs) else attr)(*args, **kwargs)
        return method

    def __call__(self, *args, **kwargs):          # norm(mu, sigma): a frozen distribution
        return _Frozen(self._real, self._ours, args, kwargs)

    def __repr__(self):
        return repr(self._real)


class _Frozen:
    """``norm(mu, sigma)`` during a trace: its methods are ours, with the parameters
    appended as scipy's frozen methods pass them (``logpdf(x, mu, sigma)``), when a value or
    a parameter is traced; scipy's frozen distribution otherwise (made when first needed,
    so that traced parameters never reach scipy's argument parsing)."""

    def __init__(self, real, ours, args, kwargs):
        self._real, self._ours, self._args, self._kwargs = real, ours, args, kwargs
        self._theirs = None

    def _scipy(self):
        if self._theirs is None:
            self._theirs = self._real(*self._args, **self._kwargs)
        return self._theirs

    def __getattr__(self, name):
        mine = getattr(self._ours, name, None)
        if mine is None or name.startswith("_") or not callable(mine):
            return getattr(self._scipy(), name)
        args, kwargs = self._args, self._kwargs

        def method(*a, **k):
            if _traced(a + args, {**k, **kwargs}):
                return mine(*a, *args, **{**kwargs, **k})
            return getattr(self._scipy(), name)(*a, **k)
        return method


def _stand_in(real, ours):
    if getattr(ours, "_burnumba_original", None) is real:
        return ours                          # one of numpy's constructors
    if isinstance(ours, types.ModuleType):
        return _Distribution(real, ours)

    @functools.wraps(real)
    def call(*args, **kwargs):
        return (ours if _traced(args, kwargs) else real)(*args, **kwargs)
    return call


# -- numpy's constructors with a dtype ------------------------------------------------------
_CONSTRUCTORS = ("asarray", "array", "asanyarray", "ascontiguousarray")


def _holds_traced(a, depth=0):
    """Whether ``a`` is a traced value or a (nested) list, tuple or object array of them."""
    if isinstance(a, Var):
        return True
    if depth < 8 and isinstance(a, (list, tuple)):
        return any(_holds_traced(x, depth + 1) for x in a)
    if isinstance(a, np.ndarray) and a.dtype == object and a.size:
        return any(isinstance(x, Var) for x in a.flat)
    return False


def _float_kind(dtype):
    """Whether ``dtype`` is a float dtype (an object, integer or boolean one stays numpy's:
    an object array of traced values, integer data decided by a guard)."""
    try:
        return np.dtype(dtype).kind == "f"
    except TypeError:
        return False


def _constructor(name):
    """numpy's ``name`` while a function is traced: a dtype-given call on traced values is
    burnumba.numpy's asarray (the values, stacked into one traced array), any other numpy's."""
    real = getattr(np, name)

    @functools.wraps(real)
    def call(a, dtype=None, *args, **kwargs):
        # burnumba's own calls (which build from numbers, and call burnumba.numpy for traced
        # values) go straight through: a look at a caller's module, not at a list's items
        if dtype is not None and (type(a) is not np.ndarray or a.dtype == object) and \
                not sys._getframe(1).f_globals.get("__name__", "").startswith("burnumba.") \
                and _float_kind(dtype) and _holds_traced(a):
            if isinstance(a, np.ndarray):            # numpy's object array of traced values
                a = a.tolist()
            return _bnp.asarray(a, dtype=dtype)
        return real(a, dtype, *args, **kwargs)
    call._burnumba_original = real
    return call


def _numpy_stand_ins():
    """id(numpy constructor) -> (the constructor, its stand-in)."""
    return {id(real): (real, stand_in) for real, stand_in in _numpy_constructors()}


def _numpy_constructors():
    """(numpy's function, its stand-in) for each of _CONSTRUCTORS."""
    return _NUMPY_CONSTRUCTORS


def _fromiter():
    """numpy's fromiter while a function is traced: an iterable yielding traced values, of
    a float dtype, is burnumba.numpy's asarray of its items; any other numpy's own (fed the
    items when it was read here)."""
    real = np.fromiter

    @functools.wraps(real)
    def call(iterable, dtype, count=-1, **kwargs):
        if sys._getframe(1).f_globals.get("__name__", "").startswith("burnumba.") or \
                not _float_kind(dtype):
            return real(iterable, dtype, count, **kwargs)
        items = list(iterable) if count < 0 else list(itertools.islice(iterable, count))
        if _holds_traced(items):
            if len(items) < count:
                raise ValueError(f"iterator too short: Expected {count} but iterator had "
                                 f"only {len(items)} items.")
            return _bnp.asarray(items, dtype=dtype)
        return real(items, dtype, count, **kwargs)
    call._burnumba_original = real
    return call


# made when burnumba is imported, before any trace could have put a stand-in in numpy
_NUMPY_CONSTRUCTORS = tuple((getattr(np, name), _constructor(name)) for name in _CONSTRUCTORS
                            ) + ((np.fromiter, _fromiter()),)


def _numpy_places():
    """numpy's module attributes of its constructors, as places (always replaced: a
    function may reach numpy by any name, or import it inside)."""
    module = np.__dict__
    return [(module, real.__name__, real, stand_in) for real, stand_in in
            _numpy_constructors() if module.get(real.__name__) is real]


def _places(f):
    """(dict, name) places that ``f`` (through its helpers) reads a replaced scipy object
    from: a global, a module's attribute it names; and closure cells, as (cell, None)."""
    table, found, seen = None, [], set()
    numpy_objects, stand_ins = _numpy_stand_ins(), {}

    def scipy_object(v):
        nonlocal table
        module = getattr(v, "__module__", None) or type(v).__module__ or ""
        if not module.startswith("scipy"):
            return None
        if table is None:
            table = _table()
        hit = table.get(id(v))
        return hit if hit is not None and hit[0] is v else None

    def module_places(module, attrs, depth):
        """The attributes the code names of a scipy module (and of its submodules the code
        names: scipy.signal.convolve)."""
        for attr in attrs:
            a = module.__dict__.get(attr)
            if a is None:
                continue
            if scipy_object(a) is not None:
                found.append((module.__dict__, attr, a))
            elif isinstance(a, types.ModuleType) and a.__name__.startswith("scipy.") \
                    and depth < 3 and id(a) not in seen:
                seen.add(id(a))
                module_places(a, attrs, depth + 1)

    def walk(g, depth):
        if depth > 6 or id(g) in seen or len(found) > _MAX_PLACES:
            return
        seen.add(id(g))
        if isinstance(g, functools.partial):
            return walk(g.func, depth)
        if isinstance(g, types.MethodType):
            return walk(g.__func__, depth)
        if not isinstance(g, types.FunctionType):
            wrapped = getattr(g, "__wrapped__", None)
            call = getattr(type(g), "__call__", None)
            if wrapped is not None:
                walk(wrapped, depth)
            if isinstance(call, types.FunctionType) and not _own(call.__code__):
                walk(call, depth + 1)
            return
        if getattr(g, "__wrapped__", None) is not None:
            walk(g.__wrapped__, depth)
        code = g.__code__
        if _own(code) or (g.__module__ or "").startswith(("numpy", "scipy")):
            return
        loads, attrs = _names(code)
        glob = g.__globals__
        values = [(glob, n, glob[n]) for n in loads if n in glob]
        for name, cell in zip(code.co_freevars, g.__closure__ or ()):
            try:
                values.append((cell, name, cell.cell_contents))
            except ValueError:
                continue
        for where, name, v in values:
            hit = numpy_objects.get(id(v))
            if hit is not None and hit[0] is v:
                found.append((where, name, v))
                stand_ins[id(v)] = hit[1]
            elif scipy_object(v) is not None:
                found.append((where, name, v))
            elif isinstance(v, types.ModuleType) and v.__name__.startswith("scipy"):
                module_places(v, attrs, 0)      # st.norm, scipy.linalg.solve_triangular
            elif isinstance(v, (types.FunctionType, types.MethodType, functools.partial)):
                walk(v, depth + 1)
    walk(f, 0)
    return [(where, name, v, stand_ins[id(v)] if id(v) in stand_ins else scipy_object(v)[1])
            for where, name, v in found] + _numpy_places()


def _get(where, name):
    return where[name] if type(where) is dict else where.cell_contents


def _set(where, name, value):
    if type(where) is dict:
        where[name] = value
    else:
        where.cell_contents = value


@contextlib.contextmanager
def redirected(f):
    """While the body runs (a trace of ``f``), each place ``f`` reads a scipy function or
    distribution from holds its stand-in; the originals go back after it, whatever happens."""
    try:
        places = _places(f)
    except Exception:                  # an object whose attributes misbehave: no redirection
        places = []
    if not places:
        yield
        return
    mine = []
    with _LOCK:
        for where, name, real, ours in places:
            key = (id(where), name)
            entry = _INSTALLED.get(key)
            if entry is None:
                if _get(where, name) is not real:
                    continue
                entry = _INSTALLED[key] = [_stand_in(real, ours), real, 0]
                _set(where, name, entry[0])
            entry[2] += 1
            mine.append((key, where, name))
    try:
        yield
    finally:
        with _LOCK:
            for key, where, name in mine:
                entry = _INSTALLED[key]
                entry[2] -= 1
                if entry[2] == 0:
                    del _INSTALLED[key]
                    if _get(where, name) is entry[0]:
                        _set(where, name, entry[1])
