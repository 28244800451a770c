"""Trace caches shared by equal functions: ``bn.grad(lambda x: ...)(x)`` in a loop.

A lambda or a nested ``def`` written inside a loop or a function body is a new function
object on every pass, with the same code. Keyed by the function object, each would trace
again (0.5 ms for a small function, 95x the call; issue #32). Here the transformations
look the new function up by its code object and what it reads, and find the transformed
function made for an equal one before, tapes and fast paths included.

Two functions are equal here when they have the same code and globals dict, and every value
the code can read is the same: its closure cells' contents, its defaults, and the globals
and builtins its code (nested code included) names. A value is compared by its kind:

- numbers, strings, bytes, None, numpy scalars and dtypes: by type and value (0.0 and -0.0,
  1 and 1.0 and True are different values; a NaN matches only itself, the same object);
- modules, classes, builtin functions, ufuncs, numpy random generators: by identity (a draw
  is recorded as a recipe that draws from the generator on each run);
- numpy arrays: by shape, dtype and content, bit for bit (the tape holds a captured array's
  values as constants, so an array changed in place must not find a tape traced with its
  old values); the content is kept as bytes, or as a 16-byte blake2b digest above
  ``_BYTES_KEPT`` bytes;
- tuples, lists and dicts of such values, by their items; functions (helpers the code calls,
  functools.partial) as functions, recursively.

A function that reads anything else (an object of a user's class, a traced value, a bound
method, a function with a ``self`` in its closure) is not shared: it keeps its own cache, as
before. So a shared transformed function never computes with values other than the caller's.

How it is used (transforms/core.py): ``bn.grad(f)`` takes the entry most recently entered for
f's code (``Table.guess``, no comparison yet) and returns a new function over a *view* of
its state: the same tape cache, plans and runners, and f to trace. The view's first use
compares f with the entry's key (``_Transformed.first_call``): a value rebound or changed in
place since ``bn.grad(f)`` sends f to another entry whose key it has, or to a state of its
own, entered in the table. After each trace, before the tape is stored, the traced function
is compared again (``TapeCache.keep``): a function whose values changed since its first call
(a captured array changed in place) gets a cache of its own, so the shared cache only ever
holds tapes traced with the key's values.

The table is bounded (``SIZE`` entries, ``PER_CODE`` per code object, least recently used
out) and thread-safe: lookups read without a lock (one dict read, tuples replaced whole);
changes are made under one.
"""
import dis
import functools
import hashlib
import itertools
from math import copysign as _copysign   # bound once: math's attributes are read
# through a descriptor while any thread traces (transforms/math_calls.py)
import operator
import threading
import types

import numpy as np

SIZE = 64               # transformed functions kept in all
PER_CODE = 8            # per code object (a closure over a value that changes each pass)
_BYTES_KEPT = 1 << 16   # an array up to this size is kept as bytes, above as a digest
_MAX_LEAVES = 512       # values read by one function, nested ones included; more: not shared
_MAX_DEPTH = 6          # helpers calling helpers, containers in containers

CLOCK = itertools.count()          # recency stamps (next() is atomic under the GIL)
_is = operator.is_


class Unkeyable(Exception):
    """The function reads a value that cannot be compared safely: not shared."""


# numpy's functions (numpy >= 1.25: _ArrayFunctionDispatcher objects; before, plain
# functions, which _key's library rule below covers)
_NUMPY_FUNCTION = () if type(np.sum) is types.FunctionType else (type(np.sum),)
# compared by identity only
_IDENTITY = (types.ModuleType, type, np.ufunc, np.random.Generator, np.random.RandomState,
             np.random.BitGenerator) + _NUMPY_FUNCTION
# a function of these packages without a closure (a module's own def: its behaviour is its
# code and its module, which hold no state a program changes) is compared by identity, as
# a module is, not by the values its code reads: burnumba.scipy.stats.lognorm.logcdf reads
# more than _MAX_LEAVES through its helpers, and numpy's functions are not keyable, so a
# lambda calling one was traced again on every call (8 ms a call for lognorm's logcdf)
_LIBRARIES = frozenset({"burnumba", "numpy", "scipy"})
# compared by type and value (immutable)
_VALUES = (type(None), bool, int, str, bytes, type(Ellipsis), np.dtype)


@functools.lru_cache(maxsize=1024)
def _global_names(code):
    """The global names ``code`` and the code nested in it (comprehensions, inner lambdas)
    load, in order of first use."""
    names = {}
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"):
                names.setdefault(ins.argval, None)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return tuple(names)


def same_atom(a, b):
    """Whether ``a`` (now) equals ``b`` (kept) as a value of _VALUES, float, complex, a numpy
    scalar or a builtin function; not identical objects (the caller tried that)."""
    t = type(a)
    if t is not type(b):
        return False
    if t is float:                             # NaN != NaN: a retrace, never a wrong tape
        return a == b and _copysign(1.0, a) == _copysign(1.0, b)
    if t is complex:
        return same_atom(a.real, b.real) and same_atom(a.imag, b.imag)
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if t is types.BuiltinFunctionType:         # a bound builtin: the same method of the same
        return a.__self__ is b.__self__ and a.__name__ == b.__name__        # object
    if isinstance(a, _IDENTITY):
        return False
    return a == b


class _Leaves:
    """Values read, kept as they were: ``values`` (strong references, for the identity fast
    path) and ``deep``: (position, key) of those whose content must be compared each time
    (arrays, containers, functions)."""

    __slots__ = ("values", "deep", "deep_at")

    def __init__(self, values, depth, count):
        self.values = values
        deep = []
        for i, v in enumerate(values):
            k = _key(v, depth, count)
            if k is not None:
                deep.append((i, k))
        self.deep = tuple(deep)
        self.deep_at = frozenset(i for i, _ in deep)

    def same(self, now):
        values = self.values
        if len(now) != len(values):
            return False
        if not all(map(_is, now, values)):
            deep = self.deep_at
            for i, (a, b) in enumerate(zip(now, values)):
                if a is not b and i not in deep and not same_atom(a, b):
                    return False
        for i, k in self.deep:
            if not k.same(now[i]):
                return False
        return True


def _key(v, depth, count):
    """The key of a value whose content is compared (None: an atom, compared by same_atom).
    Raises Unkeyable."""
    count[0] += 1
    if count[0] > _MAX_LEAVES or depth > _MAX_DEPTH:
        raise Unkeyable("too many values")
    t = type(v)
    if t is float or t is complex or isinstance(v, _VALUES) or isinstance(v, np.generic) \
            or isinstance(v, _IDENTITY):
        return None
    if t is types.BuiltinFunctionType:
        owner = v.__self__
        if owner is None or isinstance(owner, _IDENTITY):
            return None
        raise Unkeyable("a builtin method of an object")
    if t is np.ndarray:
        return _Array(v)
    if t is tuple or t is list:
        return _Sequence(v, depth, count)
    if t is dict:
        return _Dict(v, depth, count)
    if t is types.FunctionType:
        if v.__closure__ is None and v.__module__ and \
                v.__module__.partition(".")[0] in _LIBRARIES:
            return None                     # a library's own function: by identity
        if count[1] is not None and v.__code__ in count[1]:
            return _Recursive(v)
        return Function(v, depth + 1, count)
    if t is functools.partial:
        return _Partial(v, depth, count)
    raise Unkeyable(t.__name__)


class _Array:
    """An array's shape, dtype and content (bytes, or a digest of them)."""

    __slots__ = ("shape", "dtype", "data", "digest")

    def __init__(self, a):
        if a.dtype.kind not in "biuf":
            raise Unkeyable(f"an array of dtype {a.dtype}")
        self.shape, self.dtype = a.shape, a.dtype
        self.digest = a.nbytes > _BYTES_KEPT
        self.data = self._content(a)

    def _content(self, a):
        if self.digest:
            return hashlib.blake2b(np.ascontiguousarray(a).data, digest_size=16).digest()
        return a.tobytes()

    def same(self, a):
        return (type(a) is np.ndarray and a.shape == self.shape and a.dtype == self.dtype
                and self._content(a) == self.data)


class _Sequence:
    __slots__ = ("type", "items")

    def __init__(self, v, depth, count):
        self.type = type(v)
        self.items = _Leaves(tuple(v), depth + 1, count)

    def same(self, v):
        return type(v) is self.type and self.items.same(v)


class _Dict:
    __slots__ = ("keys", "items")

    def __init__(self, v, depth, count):
        self.keys = tuple(v)
        for k in self.keys:
            if _key(k, depth + 1, count) is not None:
                raise Unkeyable("a dict key")
        self.items = _Leaves(tuple(v.values()), depth + 1, count)

    def same(self, v):
        if type(v) is not dict or len(v) != len(self.keys):
            return False
        keys = tuple(v)
        if keys != self.keys or not all(type(a) is type(b) for a, b in zip(keys, self.keys)):
            return False
        return self.items.same(tuple(v.values()))


class _Partial:
    __slots__ = ("func", "args", "kwargs")

    def __init__(self, v, depth, count):
        self.func = _Leaves((v.func,), depth + 1, count)
        self.args = _Sequence(v.args, depth, count)
        self.kwargs = _Dict(v.keywords, depth, count)

    def same(self, v):
        return (type(v) is functools.partial and self.func.same((v.func,))
                and self.args.same(v.args) and self.kwargs.same(v.keywords))


class _Recursive:
    """A function that calls itself (or a caller of it, higher in the key): its own key is
    being compared already; the same code and globals are checked here."""

    __slots__ = ("code", "globals")

    def __init__(self, f):
        self.code, self.globals = f.__code__, f.__globals__

    def same(self, f):
        return (type(f) is types.FunctionType and f.__code__ is self.code
                and f.__globals__ is self.globals)


def _read(f, names, builtin):
    """The values ``f`` reads: its globals by ``names``, its builtins by ``builtin`` (names
    that are no globals), closure cells, defaults, keyword defaults. Raises Unkeyable (an
    empty cell)."""
    g = f.__globals__
    values = list(map(g.get, names, _MISSINGS)) if names else []
    if builtin:
        for name in builtin:
            if name in g:                  # a global now shadows the builtin
                values.append(g[name])
            else:
                values.append(f.__builtins__.get(name, _MISSING))
    cells = f.__closure__
    if cells is not None:
        try:
            values += [c.cell_contents for c in cells]
        except ValueError:                 # a cell not yet filled
            raise Unkeyable("an empty closure cell") from None
    values.append(f.__defaults__)
    kw = f.__kwdefaults__
    values.append(kw if kw is None else tuple(sorted(kw.items())))
    return values


_MISSING = object()
_MISSINGS = itertools.repeat(_MISSING)


class Function:
    """The key of a function: its code, its globals dict, and the values it reads (its
    attributes are not read by its code, and are not part of the key)."""

    __slots__ = ("code", "globals", "names", "builtin", "leaves")

    def __init__(self, f, depth=0, count=None):
        if count is None:
            count = [0, set()]
        self.code, self.globals = f.__code__, f.__globals__
        names = _global_names(self.code)
        self.names = tuple(n for n in names if n in self.globals)
        self.builtin = tuple(n for n in names if n not in self.globals)
        count[1].add(self.code)
        try:
            self.leaves = _Leaves(tuple(_read(f, self.names, self.builtin)), depth, count)
        finally:
            count[1].discard(self.code)

    def same(self, f):
        """Whether ``f`` is this function now: the same code and globals, the same values
        read (``_read``, inlined: this runs once per function made)."""
        if type(f) is not _FUNCTION or f.__code__ is not self.code:
            return False
        g = f.__globals__
        if g is not self.globals:
            return False
        names = self.names
        now = [g.get(names[0], _MISSING)] if len(names) == 1 else \
            list(map(g.get, names, _MISSINGS))
        if self.builtin:
            for name in self.builtin:
                now.append(g[name] if name in g else f.__builtins__.get(name, _MISSING))
        cells = f.__closure__
        if cells is not None:
            try:
                now += [c.cell_contents for c in cells]
            except ValueError:
                return False
        now.append(f.__defaults__)
        kw = f.__kwdefaults__
        now.append(kw if kw is None else tuple(sorted(kw.items())))
        leaves = self.leaves
        values = leaves.values
        if not leaves.deep and len(now) == len(values) and all(map(_is, now, values)):
            return True                     # the common case: every value the same object
        return leaves.same(now)


_FUNCTION = types.FunctionType


def made_again(old, new):
    """Whether plain function ``new`` is ``old`` made again in the same scope: the same code
    over the same globals dict, the same closure cells (the objects, so a later rebinding in
    that scope reaches both), the same default objects, and no attributes of its own. Then
    calling either runs the same program on the same state; only their identities differ."""
    if new.__code__ is not old.__code__ or new.__globals__ is not old.__globals__:
        return False
    a, b = old.__closure__, new.__closure__
    if a is not b and (a is None or b is None or not all(map(_is, a, b))):
        return False
    a, b = old.__defaults__, new.__defaults__
    if a is not b and (a is None or b is None or not all(map(_is, a, b))):
        return False
    a, b = old.__kwdefaults__, new.__kwdefaults__
    return (a is b or (a is not None and b is not None and a.keys() == b.keys()
                       and all(a[k] is b[k] for k in a))) and not new.__dict__


class Entry:
    """One shared transformed function: ``value`` (what the transformation returns), made
    for ``f`` with ``params``; ``key`` compares other functions with ``f``."""

    __slots__ = ("table", "f", "params", "key", "value", "used", "spares")

    def __init__(self, table, f, params, key, value):
        self.table, self.f, self.params, self.key, self.value = table, f, params, key, value
        self.used = next(CLOCK)
        self.spares = []        # (wrapper, view, refs) the value lent, for the next one

    def touch(self):
        self.used = next(CLOCK)


class Table:
    """Shared transformed functions, by code object (``SIZE`` in all, ``PER_CODE`` per code,
    least recently used out)."""

    def __init__(self, size=SIZE, per_code=PER_CODE):
        self.size, self.per_code = size, per_code
        self.by_code = {}          # id(code) -> tuple of entries (the code kept in each key)
        self.count = 0
        self.lock = threading.Lock()

    def guess(self, f, params):
        """The entry most recently entered for ``f``'s code with ``params``, not compared
        with ``f`` (the caller compares at the function's first use), or None."""
        entries = self.by_code.get(id(f.__code__))
        if entries is not None:
            code = f.__code__
            for e in entries:
                if e.params == params and e.key.code is code:
                    return e
        return None

    def find(self, f, params):
        """The value shared for a function equal to ``f`` made with ``params``, or None."""
        entries = self.by_code.get(id(f.__code__))
        if entries is not None:
            for e in entries:
                if e.params == params and e.key.same(f):
                    e.touch()
                    return e.value
        return None

    def add(self, f, params, value, share):
        """Enter ``value``, made for ``f`` with ``params``, unless f reads a value that
        cannot be compared (then it stays f's own). ``share(value, entry)`` is called
        before the entry can be found (the value then checks its traces against the
        entry's key)."""
        if type(f) is not types.FunctionType:
            return
        try:
            key = Function(f)
        except Unkeyable:
            return
        entry = Entry(self, f, params, key, value)
        share(value, entry)
        with self.lock:
            code = id(f.__code__)
            entries = self.by_code.get(code, ())
            if len(entries) >= self.per_code:
                old = min(entries, key=lambda e: e.used)
                entries = tuple(e for e in entries if e is not old)
                self.count -= 1
            self.by_code[code] = (entry,) + entries
            self.count += 1
            while self.count > self.size:
                self._drop_oldest()

    def _drop_oldest(self):
        code, old = min(((c, e) for c, es in self.by_code.items() for e in es),
                        key=lambda ce: ce[1].used)
        self._remove(code, old)

    def _remove(self, code, entry):
        entries = tuple(e for e in self.by_code.get(code, ()) if e is not entry)
        if len(entries) == len(self.by_code.get(code, ())):
            return
        self.count -= 1
        if entries:
            self.by_code[code] = entries
        else:
            del self.by_code[code]

    def remove(self, entry):
        with self.lock:
            self._remove(id(entry.f.__code__), entry)

    def clear(self):
        with self.lock:
            self.by_code.clear()
            self.count = 0

    def __len__(self):
        return self.count


TABLE = Table()
