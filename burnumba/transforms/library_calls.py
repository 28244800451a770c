"""Library functions called inside a traced function, as written (#30): scipy's, and numpy's
that convert their arguments first (numpy_calls.py).

``scipy.stats.norm.logpdf(x, mu, sigma)``, ``scipy.special.logsumexp(x)`` or
``scipy.linalg.solve_triangular(L, b)`` do Python-level work on their arguments (argument
checks, ``np.asarray``), which a traced value cannot go through. ``burnumba.scipy`` has
each of them under the same name, signature and defaults. So while a function is traced,
the places its code reads such a scipy object from (a global of the user's module, a
closure variable) hold a stand-in that calls burnumba.scipy's function when an argument is
a traced value, and scipy's otherwise; a scipy module it names (``st.norm``,
``sl.solve_triangular``) gives the stand-ins to the tracing thread's own code only, by its
class (module_views.py), and its own objects to everyone else. After the trace, every place
holds scipy's object again.

numpy's own functions that convert their arguments before any protocol of a traced value is
asked (``np.asarray(x, dtype=float)``, ``np.sum([a, b])``) have stand-ins of their own
(``numpy_calls.py``), and so have math's functions (``math_calls.py``): for every trace,
numpy's and math's module classes are places too, and so are the globals and cells that
hold one of those functions by name (``from math import exp``, ``from numpy import
asarray``) or a ``np.vectorize`` object.

The walk is the one ``captures.py`` makes of what ``f`` reads, through its helpers; a scipy
function reached another way (a name the code computes, an object's attribute more than
one level down, a module imported inside ``f``) is not replaced, and keeps the error that
names its replacement.

Stand-ins of one place are shared by the traces in progress (a count per place, under a
lock), and another thread that calls the stand-in with plain values gets the library's own
result: the stand-in only chooses by the arguments' types.
"""
import contextlib
import functools
import sys
import threading
import types

import numpy as np

from .. import scipy as _ours
from ..tracing.tracer import Var
from . import math_calls, numpy_calls
from .captures import _names, _own
from .module_views import during

_LOCK = threading.Lock()
_INSTALLED = {}          # (id(dict, cell or module), name) -> [stand-in, original, count]
_MAX_PLACES = 256


def _holds(v):
    """Whether ``v`` is a traced value or a list or tuple holding one."""
    return isinstance(v, Var) or (isinstance(v, (list, tuple)) and
                                  any(isinstance(x, Var) for x in v))


def _traced(args, kwargs):
    """Whether a call reads traced values: an argument holds one, or is a Python function
    whose closure variables or defaults do (``odeint(lambda y, t: -k * y, y0, t)`` with k
    traced: scipy's solver would call it and ask its results for numbers)."""
    for a in (*args, *kwargs.values()):
        if _holds(a):
            return True
        if isinstance(a, types.FunctionType):
            for cell in a.__closure__ or ():
                try:
                    if _holds(cell.cell_contents):
                        return True
                except ValueError:                # a cell not yet filled
                    continue
            if any(_holds(d) for d in a.__defaults__ or ()):
                return True
    return False


_AREAS = ("special", "linalg", "signal", "integrate", "stats")


def _areas():
    return tuple(a for a in _AREAS if f"scipy.{a}" in sys.modules)


def _table():
    """id(scipy object) -> (the scipy object, ours), for the scipy modules imported so far
    (a module imported later joins the table then)."""
    return _table_of(_areas())


@functools.lru_cache(maxsize=32)
def _scipy_during(module, areas):
    """The class of scipy ``module`` while a thread traces: each replaced object it holds
    is its stand-in for the tracing thread's own code (module_views.py)."""
    table = _table_of(areas)
    return during(module, {name: _stand_in(*table[id(v)]) for name, v in
                           list(module.__dict__.items()) if id(v) in table
                           and table[id(v)][0] is v})


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


def _bound():
    """id(function) -> (numpy's or math's function, its stand-in), for each stand-in that
    numpy_calls.py and math_calls.py give through the module: the same stand-in for a name
    bound to the function before the trace (``from math import exp``)."""
    out = {}
    for table in (numpy_calls._TABLE, math_calls._TABLE):
        for names in table.values():
            for ours in names.values():
                real = getattr(ours, "_burnumba_original", None)
                if real is not None:
                    out[id(real)] = (real, ours)
    return out


_BOUND = _bound()


def _stand_in(real, ours):
    if getattr(ours, "_burnumba_original", None) is real:
        return ours        # made for it already: numpy's or math's (_BOUND), a np.vectorize's
    if isinstance(ours, type):
        return ours                          # numpy's module class (numpy_calls.py)
    if isinstance(ours, types.ModuleType):
        return _Distribution(real, ours)

    @functools.wraps(real)
    def call(*args, **kwargs):
        return (ours if _traced(args, kwargs) else real)(*args, **kwargs)
    return call


def _places(f):
    """The places ``f`` (through its helpers) reads a replaced scipy object from, as
    (where, name, scipy's object, ours): a global (the dict), a closure cell; a scipy
    module it names an attribute of (the module, "__class__"); the globals and cells that
    hold a np.vectorize object, or a numpy or math function with a stand-in (``from math
    import exp``: _BOUND); and numpy's and math's module classes (their places())."""
    table, found, seen, swapped, classes, named = None, [], set(), set(), [], []

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
        """A scipy module one of whose attributes the code names is a replaced object: its
        class (module_views.py), and the same for its submodules the code names
        (scipy.signal.convolve)."""
        for attr in attrs:
            a = module.__dict__.get(attr)
            if a is None:
                continue
            if scipy_object(a) is not None and id(module) not in swapped:
                swapped.add(id(module))
                classes.append((module, "__class__", types.ModuleType,
                                _scipy_during(module, _areas())))
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
        if _own(code):
            # burnumba's own wrapper (a Jacobian's function of f): the user's functions it
            # holds in its closure
            for cell in g.__closure__ or ():
                try:
                    inner = cell.cell_contents
                except ValueError:
                    continue
                if callable(inner) and not isinstance(inner, type):
                    walk(inner, depth + 1)
            return
        if (g.__module__ or "").startswith(("numpy", "scipy")):
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
            if scipy_object(v) is not None:
                found.append((where, name, v))
            elif type(v) is np.vectorize:       # @np.vectorize on a function of the module
                named.append((where, name, v, numpy_calls.vectorized(v)))
            elif id(v) in _BOUND and _BOUND[id(v)][0] is v:    # from math import exp
                named.append((where, name, v, _BOUND[id(v)][1]))
            elif isinstance(v, types.ModuleType) and v.__name__.startswith("scipy"):
                module_places(v, attrs, 0)      # st.norm, scipy.linalg.solve_triangular
            elif isinstance(v, (types.FunctionType, types.MethodType, functools.partial)):
                walk(v, depth + 1)
    walk(f, 0)
    return [(where, name, v, scipy_object(v)[1]) for where, name, v in found] + classes + \
        named + numpy_calls.places() + math_calls.places()


def _get(where, name):
    if type(where) is dict:
        return where[name]
    if isinstance(where, types.CellType):
        return where.cell_contents
    return type(where)                       # a module's class (numpy_calls.places)


def _set(where, name, value):
    if type(where) is dict:
        where[name] = value
    elif isinstance(where, types.CellType):
        where.cell_contents = value
    else:
        where.__class__ = value


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
