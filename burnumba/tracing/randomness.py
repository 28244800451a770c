"""Random draws inside a traced function: recorded while tracing, drawn again on every call.

A draw such as ``np.random.randn(3)`` or ``rng.normal(size=3)`` is not a constant of the
function: the untraced program gets new numbers on every call. While a function is traced,
its draws are recorded as *recipes* (the source, the method, its static arguments) and each
becomes an input node of the tape (data, never differentiated). Tracing itself draws
nothing, so the user's generators are untouched by a trace; every run of the tape then
calls the recipes in order on the user's real generators, right before the kernel, and
writes the fresh arrays into their nodes (``draw_into``). A call therefore consumes each
generator exactly as the untraced program does: the same seed gives the same numbers as
plain numpy, call after call.

How draws are seen. The tracing thread holds a ``Recorder`` (a per-thread stack, so that a
trace inside a trace records into its own tape). For the duration of a trace:

* numpy's global RNG: the module functions ``numpy.random.randn`` etc. (bound methods of
  numpy's hidden ``RandomState``) are replaced once, when burnumba is imported, by wrappers
  that record when called by a thread that is tracing (its recorder stack, per thread) and
  call numpy's own method otherwise, so nothing is installed or undone per trace;
* a ``RandomState`` / ``Generator`` the function can reach (an argument, a closure cell, a
  default, a global its code names, an attribute of a bound method's ``self``) is replaced
  in place, for the trace, by a proxy that records for a tracing thread and delegates every
  attribute to the real generator for any other thread; names bound to a generator's
  methods (``from numpy.random import randn``) get a wrapper.

A replacement carries the list of the traces using it (``_users``): a trace that finds one
in place joins it, and the last to leave puts the original back. The state is in the places
themselves, none in this module. Where two traces race on a place (one puts the original
back while the other still draws through it), the late draws are not recorded, and the
state check below sees them: that trace is run again.

Never silent. The states of every generator the function can reach (numpy's global one,
Python's ``random`` module, the ones found in arguments, closures, defaults, globals and the
helpers they name) are read before the trace and compared after it. Recorded draws consume
nothing while tracing, so any change is a draw burnumba did not see (a generator reached
through a path it did not replace, ``np.random.mtrand._rand``, Python's ``random``), and its
number would be frozen into the tape: the trace raises ``RandomSourceError`` naming the
source and the fix. Raising was chosen over retracing on every call: a retrace per call
would give correct numbers but cost a trace (and maybe a compilation) per call, a silent
hundredfold slowdown, while the fix (use ``np.random.*`` or a generator the function names)
is one line. A change may also be another thread's draw during the trace (through
``np.random.*``, a proxy, or a tape's run): so a trace whose check fails is run again, up to
``ATTEMPTS`` times, and refused only when every attempt saw a change.
"""
import copy
import functools
import inspect
import operator
import random as stdlib_random
import sys
import threading
import types

import numpy as np

from .._errors import RandomSourceError, at_user_site
from .promote import rebind_local
from .tracer import Var

SOURCES = (np.random.RandomState, np.random.Generator)
DEPTH = 4              # helpers followed from the traced function (through globals, cells)
ATTEMPTS = 3           # traces tried while other threads draw from numpy's global RNG

# methods that are not draws of an array: refused under a trace (they would act on the real
# generator, once, at trace time)
_REFUSED = {"bytes": "it returns Python bytes, which a tape cannot hold"}
_NOT_DRAWS = frozenset(("get_state", "set_state", "seed", "spawn", "bit_generator",
                        "tomaxint", "__getstate__", "__setstate__", "__reduce__"))

# draws whose parameters may be traced: (standard draw on a Generator, on a RandomState),
# the parameter names in numpy's order and their defaults, and the formula numpy's C code
# applies to the standard variate (random_normal: loc + scale * z; random_uniform:
# low + (high - low) * u; exponential: scale * e; lognormal: exp(mean + sigma * z)), so that
# the values equal numpy's bit for bit and the parameters get their reparameterisation
# gradients
_REPARAM = {
    "normal": ("standard_normal", "standard_normal", ("loc", "scale"), (0.0, 1.0),
               lambda z, loc, scale: loc + scale * z),
    "uniform": ("random", "random_sample", ("low", "high"), (0.0, 1.0),
                lambda u, low, high: low + (high - low) * u),
    "exponential": ("standard_exponential", "standard_exponential", ("scale",), (1.0,),
                    lambda e, scale: scale * e),
    "lognormal": ("standard_normal", "standard_normal", ("mean", "sigma"), (0.0, 1.0),
                  lambda z, mean, sigma: np.exp(mean + sigma * z)),
}


def _global_rng():
    """numpy's hidden global RandomState (np.random.seed reseeds this very object)."""
    return np.random.mtrand._rand


# -- sources: where a recipe finds its generator at call time -----------------------------

class Source:
    """A generator as the function reaches it: ``get()`` finds it again on each call (a
    closure cell or a global rebound to a new generator is followed, as the untraced
    program follows it); ``label`` names it in messages."""

    def __init__(self, get, label):
        self.get, self.label = get, label


def _real(x):
    return object.__getattribute__(x, "_real") if type(x) is Proxy else x


GLOBAL = Source(_global_rng, "numpy's global random generator (np.random.*)")


# -- the per-thread recorder --------------------------------------------------------------

class _PerThread(threading.local):
    """Per thread: the stack of recorders of its open traces (empty until it traces; a
    class default, so that a thread that never traced reads it without an exception: the
    wrappers of numpy.random ask on every call)."""

    stack = ()


_local = _PerThread()


def current():
    stack = _local.stack
    return stack[-1] if stack else None


def _importing(rec):
    """Whether a draw during the trace ``rec`` comes from a module being imported by the
    traced function (scipy.stats makes a generator at its first import): that module's own
    state, not the function's draw, so numpy's call. Only the frames above the trace's own
    entry are looked at, so a trace started by a module's top-level code still records."""
    frame = sys._getframe(2)
    while frame is not None and frame is not rec.entry:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


class Draw:
    """One recipe: ``getattr(source.get(), method)(*args, **kwargs)`` written into the
    values ``start .. start + size`` of a run (shape ``shape``)."""

    __slots__ = ("source", "method", "args", "kwargs", "start", "size", "shape")

    def __init__(self, source, method, args, kwargs, start, size, shape):
        self.source, self.method, self.args, self.kwargs = source, method, args, kwargs
        self.start, self.size, self.shape = start, size, shape

    def __call__(self):
        x = getattr(_real(self.source.get()), self.method)(*self.args, **self.kwargs)
        if np.shape(x) != self.shape:
            raise RandomSourceError(
                f"{self.source.label}.{self.method}: drew shape {np.shape(x)}, traced with "
                f"{self.shape}")
        return x


def draw_into(val, draws):
    """Run the recipes in order on the user's generators; write each array into its node."""
    for d in draws:
        x = d()
        if d.shape:
            val[d.start:d.start + d.size] = np.ravel(x)
        else:
            val[d.start] = x


def generator_states(draws):
    """The states of the generators the recipes ``draws`` pull from, each once: a run whose
    decisions fail is thrown away (its arguments take another variant, or a new trace),
    and ``put_back`` leaves the generators as that run found them, so that a call consumes
    them once, as the untraced program does, however many runs it took."""
    seen, out = set(), []
    for d in draws:
        g = _real(d.source.get())
        if id(g) not in seen:
            seen.add(id(g))
            out.append((g, g.bit_generator.state if isinstance(g, np.random.Generator)
                        else g.get_state()))
    return out


def put_back(states):
    for g, state in states:
        if isinstance(g, np.random.Generator):
            g.bit_generator.state = state
        else:
            g.set_state(state)


def draw_rows(draws, count, dtype):
    """``count`` samples' draws as rows (the order of a Python loop over the samples: all of
    sample 0's recipes, then sample 1's, ...): shape (count, total size)."""
    total = sum(d.size for d in draws)
    out = np.empty((count, total), dtype)
    for i in range(count):
        at = 0
        for d in draws:
            out[i, at:at + d.size] = np.ravel(d())
            at += d.size
    return out


def _has_var(a):
    """Whether an argument of a draw is traced, or a list or tuple holding a traced value."""
    if isinstance(a, (list, tuple)):
        return any(_has_var(x) for x in a)
    return isinstance(a, Var)


class Recorder:
    """The draws of one trace, in call order. ``builder`` is set by the tracer once made."""

    def __init__(self):
        self.builder = None
        self.draws = []
        self.entry = None                  # the trace's entry frame (_importing)
        # per generator reached, a copy drawn in call order: its numbers are those the
        # trace's first run will draw from the real one, the values a Python decision after
        # a draw reads while tracing (the real generator stays untouched)
        self.twins = {}

    def _twin(self, real):
        pair = self.twins.get(id(real))
        if pair is None:
            pair = self.twins[id(real)] = (real, copy.deepcopy(real))
        return pair[1]

    def record(self, source, method, args, kwargs):
        """The traced value of ``source.method(*args, **kwargs)``: a data input node."""
        call = f"{method}() on {source.label}"
        if method in _REFUSED:
            raise RandomSourceError(at_user_site(
                f"{call} inside a traced function: {_REFUSED[method]}"))
        if method == "shuffle":
            return self._shuffle(source, args, kwargs, call)
        if any(_has_var(a) for a in list(args) + list(kwargs.values())):
            return self._reparam(source, method, args, kwargs, call)
        real = _real(source.get())
        try:                                     # on the twin: the stream is untouched
            x = getattr(self._twin(real), method)(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise RandomSourceError(at_user_site(f"{call}: {e}")) from None
        x = np.asarray(x)
        if x.dtype.kind not in "biuf":
            raise RandomSourceError(at_user_site(
                f"{call} gives {x.dtype} values, which a tape cannot hold: draw numbers"))
        return self._input(source, method, args, kwargs, x.shape, x.dtype.kind, x)

    def _input(self, source, method, args, kwargs, shape, kind, value):
        b = self.builder
        v = b.input(shape, False, kind)
        if b.given is not None:              # what a decision reads while tracing
            b.given[v.node] = value
        self.draws.append(Draw(source, method, tuple(args), dict(kwargs), b.off[v.node],
                               v.size, tuple(shape)))
        return v

    def _shuffle(self, source, args, kwargs, call):
        """``rng.shuffle(x)``: x permuted along its first axis by ``rng.permutation(len(x))``,
        a draw that consumes the stream as the shuffle does (numpy's permutation of an int
        shuffles arange(n) with the same swaps), so the order is numpy's. A traced x is
        updated in place (a functional update); a numpy array that the user's local name
        alone holds is replaced by its traced permutation (``promote.rebind_local``), as a write
        into it would be. Anything else is refused: the shuffle would happen once, at trace
        time, and every call would repeat its order."""
        fix = "use x = x[rng.permutation(len(x))], which is replayed on every call"
        if len(args) + len(kwargs) != 1 or (kwargs and "x" not in kwargs):
            raise RandomSourceError(at_user_site(
                f"{call} with an axis or more arguments inside a traced function: {fix}"))
        x = args[0] if args else kwargs["x"]
        if not isinstance(x, (Var, np.ndarray)) or np.ndim(x) == 0:
            raise RandomSourceError(at_user_site(
                f"{call} of a {type(x).__name__} inside a traced function: {fix}"))
        n = len(x)
        real = _real(source.get())
        perm = self._input(source, "permutation", (n,), {}, (n,), "i",
                           self._twin(real).permutation(n))
        if isinstance(x, Var):
            x[...] = x[perm]
            return None
        if not rebind_local(x, self.builder.lift(x)[perm]):
            raise RandomSourceError(at_user_site(
                f"{call} of a numpy array that is not one local variable's alone (another "
                f"name, a list or a view also holds it) inside a traced function: {fix}"))
        return None

    def _choice(self, source, args, kwargs, call):
        """``choice(a, size, replace=True, p)`` with traced probabilities (a policy's action):
        numpy's own algorithm, ``cdf = p.cumsum(); cdf /= cdf[-1]``, one uniform draw per
        sample (``random`` / ``random_sample``: the same stream consumption), and the index
        ``cdf.searchsorted(u, side='right')``, counted as the number of cdf entries <= u:
        integer data of the tape, read at run time (it indexes traced arrays without a
        guard; a Python decision on it is one). The draw carries no gradient (the score
        function, log p[a], does). numpy's checks on p are guards."""
        names = ("a", "size", "replace", "p", "axis", "shuffle")
        given = dict(zip(names, args))
        for name, v in kwargs.items():
            if name not in names or name in given:
                raise RandomSourceError(at_user_site(f"{call}: unexpected argument {name!r}"))
            given[name] = v
        a, size, p = given.get("a"), given.get("size"), given.get("p")
        if isinstance(p, (list, tuple)) and _has_var(p):      # p=[p0, p1, p2]
            p = np.stack([self.builder.lift(v) for v in p])
        if _has_var(a) or _has_var(size) or not isinstance(p, Var) or any(
                _has_var(given.get(k)) for k in ("replace", "axis", "shuffle")):
            raise RandomSourceError(at_user_site(
                f"{call} with a traced parameter: only the probabilities p may be traced "
                "(a traced population, size or option would decide the result's shape)"))
        if not given.get("replace", True) or given.get("axis", 0) != 0:
            raise RandomSourceError(at_user_site(
                f"{call} with traced p and replace=False or axis != 0: numpy's algorithm "
                "there is not traced. Draw with replace=True, or choose with constant p"))
        population = int(a) if isinstance(a, (int, np.integer)) else len(a)
        if p.ndim != 1 or p.size != population:
            raise RandomSourceError(at_user_site(
                f"{call}: p must be 1-dimensional with one entry per choice ({population}), "
                f"not of shape {p.shape} (numpy's ValueError)"))
        p = self.builder.map("stop_gradient", p)
        atol = max(np.sqrt(np.finfo(np.float64).eps), np.sqrt(np.finfo(self.builder.dtype).eps))
        if bool(np.any(p < 0)):
            raise RandomSourceError(at_user_site(f"{call}: probabilities are not "
                                                 "non-negative (numpy's ValueError)"))
        if bool(abs(np.sum(p) - 1.0) > atol):
            raise RandomSourceError(at_user_site(f"{call}: probabilities do not sum to 1 "
                                                 "(numpy's ValueError)"))
        cdf = np.cumsum(p)
        cdf = cdf / cdf[-1]
        shape = () if size is None else \
            (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        real = _real(source.get())
        uniform = "random" if isinstance(real, np.random.Generator) else "random_sample"
        drawn = {"size": shape if size is not None else None}
        u = self._input(source, uniform, (), drawn, shape, "f",
                        getattr(self._twin(real), uniform)(**drawn))
        idx = np.sum(cdf <= np.expand_dims(u, -1), axis=-1)
        self.builder.input_kinds[idx.node] = "i"       # numpy's int64 index
        if isinstance(a, (int, np.integer)):
            return idx
        return self.builder.lift(np.asarray(a))[idx]

    def _reparam(self, source, method, args, kwargs, call):
        """A draw with traced parameters: the standard variate, drawn with the same stream
        consumption, and numpy's formula applied as traced ops."""
        if method == "choice":
            return self._choice(source, args, kwargs, call)
        spec = _REPARAM.get(method)
        if spec is None:
            raise RandomSourceError(at_user_site(
                f"{call} with a traced parameter: only normal, uniform, exponential, "
                f"lognormal and choice's p take traced parameters (burnumba draws the "
                f"standard variate and applies numpy's formula). Draw with constant "
                f"parameters, or write the transform yourself, e.g. loc + scale * "
                f"rng.standard_normal(size)"))
        on_generator, on_legacy, names, defaults, formula = spec
        params = dict(zip(names, defaults))
        size = None
        for k, a in enumerate(args):
            if k < len(names):
                params[names[k]] = a
            elif k == len(names):
                size = a
            else:
                raise RandomSourceError(at_user_site(f"{call}: too many arguments"))
        for name, a in kwargs.items():
            if name == "size":
                size = a
            elif name in params:
                params[name] = a
            else:
                raise RandomSourceError(at_user_site(
                    f"{call} with a traced parameter: unexpected keyword {name!r}"))
        shapes = [np.shape(p) for p in params.values()]
        try:
            shape = np.broadcast_shapes(*shapes)
            if size is not None:
                size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
                if np.broadcast_shapes(shape, size) != size:
                    raise ValueError(f"parameters of shapes {shapes} do not fit size {size}")
                shape = size
        except ValueError as e:
            raise RandomSourceError(at_user_site(f"{call}: {e}")) from None
        real = _real(source.get())
        standard = on_generator if isinstance(real, np.random.Generator) else on_legacy
        size = {"size": shape if shape else None}
        z = self._input(source, standard, (), size, shape, "f",
                        getattr(self._twin(real), standard)(**size))
        return formula(z, *params.values())


# -- proxies and wrappers -----------------------------------------------------------------

class Proxy:
    """A generator seen through a trace: a tracing thread's draws are recorded, everything
    else (other threads, non-draw attributes) goes to the real generator."""

    __slots__ = ("_real", "_source", "_users")

    def __init__(self, real, source):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_users", [])      # the traces it stands in a place for

    def __getattr__(self, name):
        real = object.__getattribute__(self, "_real")
        rec = current()
        if rec is None or name in _NOT_DRAWS or name.startswith("_"):
            return getattr(real, name)
        attr = getattr(real, name)
        if not callable(attr):
            return attr
        source = object.__getattribute__(self, "_source")
        return lambda *args, **kwargs: rec.record(source, name, args, kwargs)

    def __repr__(self):
        return repr(object.__getattribute__(self, "_real"))


def _wrapper(source, method, original):
    """What stands for a generator's bound method (``np.random.randn``, or a name bound to
    ``rng.normal``) during a trace."""
    local = _local

    @functools.wraps(original)
    def draw(*args, **kwargs):
        stack = local.stack
        if not stack or _importing(stack[-1]):    # not tracing, or a module's import
            return original(*args, **kwargs)
        return stack[-1].record(source, method, args, kwargs)
    draw._burnumba_original = original
    draw._users = []               # the traces it stands in a place for
    return draw


def _unseeded_guard(default_rng):
    """np.random.default_rng during a trace: a generator made inside the function with a
    seed gives the same numbers on every call, and so does its tape; one made without a seed
    (fresh entropy on every call) cannot be replayed."""
    original = getattr(default_rng, "_burnumba_original", default_rng)

    @functools.wraps(original)
    def default_rng(seed=None):
        rec = current()
        if seed is None and rec is not None and not _importing(rec):
            raise RandomSourceError(at_user_site(
                "np.random.default_rng() without a seed inside a traced function: it would "
                "give new numbers on every call, which a tape cannot replay. Make the "
                "generator once, outside the function, and capture it or pass it as an "
                "argument (its draws are then fresh on every call)"))
        return original(seed)
    default_rng._burnumba_original = original
    return default_rng


def _replacement_of(now, value):
    """``now`` if it is a trace's replacement (a Proxy or a wrapper) standing for ``value``
    (a generator or a bound draw method), else None."""
    if type(now) is Proxy:
        return now if object.__getattribute__(now, "_real") is value else None
    original = getattr(now, "_burnumba_original", None)
    if original is not None and (original is value or original == value):
        return now
    return None


def _install(get, set_, value, make, user):
    """Stand a replacement for ``value`` in a place for the trace ``user``: join the one in
    place (another trace's), or put a new one (``make()``) there. Returns it."""
    joined = _replacement_of(get(), value)
    if joined is None:
        joined = make()
        set_(joined)
    joined._users.append(user)
    return joined


def _uninstall(get, set_, value, replacement, user):
    """``user``'s trace leaves ``replacement``; the last one puts ``value`` back. Returns
    whether the traced code rebound the place to another generator (its draws were not
    seen)."""
    users = replacement._users
    users.remove(user)
    now = get()
    if now is replacement:
        if not users:
            set_(value)
        return False
    return _replacement_of(now, value) is None and now is not value and (
        isinstance(now, SOURCES) or _is_bound_draw(now))


_NP_NAMES = tuple(name for name in dir(np.random)
                  if getattr(getattr(np.random, name), "__self__", None) is _global_rng()
                  and name not in _NOT_DRAWS)


# numpy.random's functions and what stands for them during a trace, made once
_NP_ORIGINALS = {name: getattr(np.random, name) for name in _NP_NAMES + ("default_rng",)}
_NP_WRAPPERS = {name: _wrapper(GLOBAL, name, f) for name, f in _NP_ORIGINALS.items()
                if name != "default_rng"}
_NP_WRAPPERS["default_rng"] = _unseeded_guard(np.random.default_rng)
# installed once, for the process: each wrapper records only for a thread that is tracing
# (a place that holds one, ``randn = np.random.randn``, needs no replacement of its own)
for _name, _f in _NP_WRAPPERS.items():
    _f._burnumba_numpy = True
    setattr(np.random, _name, _f)
del _name, _f


def _is_bound_draw(x):
    owner = getattr(x, "__self__", None)
    return isinstance(owner, SOURCES) and getattr(x, "__name__", "") not in _NOT_DRAWS


# -- what a function can reach -------------------------------------------------------------

def _owner_of(get):
    """The generator of the bound method a place holds (through its wrapper)."""
    value = get()
    return getattr(value, "_burnumba_original", value).__self__


def _code_names(code):
    """The global names a code object and the functions defined in it read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _unwrap(f):
    while True:
        if isinstance(f, functools.partial):
            f = f.func
        elif hasattr(f, "__wrapped__"):
            f = f.__wrapped__
        else:
            return f


class _Places:
    """The places a traced function reads a generator or a generator's method from (each
    gets a proxy or a wrapper for the trace), and every generator found (for the state
    check): from ``f``, its closure cells, defaults and the globals its code names; from
    there, the functions and bound methods found (``DEPTH`` levels deep), the attributes
    the code names of the objects and modules found, and a bound method's ``self``."""

    def __init__(self, f, args, kwargs):
        self.places = []            # (key, label, get, set, value)
        self.keys = set()
        self.reached = {}           # id -> (generator, label)
        self._seen = set()
        self._walk(_unwrap(f), 0)
        leaves = list(args) + list(kwargs.values())
        while leaves:
            x = leaves.pop()
            if isinstance(x, (list, tuple)):
                leaves.extend(x)
            elif isinstance(x, dict):
                leaves.extend(x.values())
            elif isinstance(x, SOURCES):
                self.reached.setdefault(id(x), (x, "a generator passed as an argument"))

    def _place(self, key, label, get, set_, value):
        # another thread's trace may hold this place already: its proxy or wrapper stands
        # for the same generator, and the place's count keeps it there for this trace too
        value = _real(value)
        if isinstance(value, types.FunctionType):
            if getattr(value, "_burnumba_numpy", False):      # numpy.random's own wrapper
                self.reached.setdefault(id(_global_rng()), (_global_rng(), label))
                return
            value = getattr(value, "_burnumba_original", value)
        if isinstance(value, SOURCES):
            self.reached.setdefault(id(value), (value, label))
        elif _is_bound_draw(value):
            self.reached.setdefault(id(value.__self__), (value.__self__, label))
        else:
            return
        if key not in self.keys:
            self.keys.add(key)
            self.places.append((key, label, get, set_, value))

    def _attr(self, owner, name, label, depth):
        """``owner.name``: a place if it holds a generator; followed if a function or a
        method. Looked up without running any property or ``__getattr__`` (the walk must
        have no effect of its own)."""
        attrs = getattr(owner, "__dict__", None)
        if isinstance(attrs, dict) and name in attrs:
            value = attrs[name]
            self._place(("attr", id(owner), name), label,
                        functools.partial(getattr, owner, name),
                        functools.partial(setattr, owner, name), value)
            self._follow(value, depth)
            return
        try:
            value = inspect.getattr_static(owner, name)
        except AttributeError:
            return
        if isinstance(value, types.FunctionType) and not isinstance(owner, type):
            self._walk(types.MethodType(value, owner), depth + 1)    # owner.method

    def _follow(self, value, depth, names=()):
        """A value the code reads: a function or bound method is walked; of an object or a
        module, the attributes the code names are looked at. burnumba's own wrappers (a
        transformation's closures, partials and objects around the user's function) are
        gone through whole, at no cost in depth."""
        if isinstance(value, functools.partial):
            for v in (value.func,) + value.args + tuple(value.keywords.values()):
                self._follow(v, depth - 1)
        elif isinstance(value, (types.FunctionType, types.MethodType)):
            self._walk(value, depth + (0 if _ours(value) else 1))
        elif isinstance(value, (list, tuple, dict)):
            # a generator in a dict or list (CONFIG["rng"], gens[0]): a place, found again by
            # its key on each call; in a tuple (not replaceable): checked, so that its draws
            # are refused rather than silently frozen
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in list(items)[:64]:
                if type(value) in (dict, list):
                    self._place(("item", id(value), k), f"[{k!r}]",
                                functools.partial(operator.getitem, value, k),
                                functools.partial(operator.setitem, value, k), v)
                elif isinstance(v, SOURCES):
                    self.reached.setdefault(id(v), (v, "a generator held in a tuple"))
        elif _ours(type(value)) and id(value) not in self._seen:
            self._seen.add(id(value))
            for v in list(getattr(value, "__dict__", {}).values()):
                self._follow(v, depth - 1)
        elif isinstance(value, (np.ndarray, np.generic, int, float, str, bytes, type)) or \
                value is np or value is np.random or value is None:
            return
        elif names and id(value) not in self._seen:
            self._seen.add(id(value))
            label = getattr(value, "__name__", type(value).__name__)
            for attr in names:
                self._attr(value, attr, f"{label}.{attr}", depth + 1)
            # every generator among its attributes is checked, even one the code reaches by
            # a name it computes (getattr(module, name)): refused if drawn, never frozen
            attrs = getattr(value, "__dict__", None)
            if isinstance(attrs, dict):
                for attr, v in list(attrs.items()):
                    if isinstance(v, SOURCES):
                        self.reached.setdefault(id(v), (v, f"{label}.{attr}"))

    def _walk(self, f, depth):
        if id(f) in self._seen or depth > DEPTH:
            return
        self._seen.add(id(f))
        if isinstance(f, types.MethodType):
            owner = f.__self__
            for name, value in list(getattr(owner, "__dict__", {}).items()):
                self._place(("attr", id(owner), name), f"self.{name}",
                            functools.partial(getattr, owner, name),
                            functools.partial(setattr, owner, name), value)
                self._follow(value, depth)         # self.f: a wrapped function
            f = f.__func__
        code = getattr(f, "__code__", None)
        if code is None:             # a callable object: its __call__
            call = getattr(type(f), "__call__", None)
            if call is not None and not isinstance(f, type) and hasattr(call, "__code__"):
                self._walk(types.MethodType(call, f), depth)
            return
        names = _code_names(code)
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:       # a cell not yet filled
                continue
            self._place(("cell", id(cell)), f"the closure variable {name!r}",
                        functools.partial(getattr, cell, "cell_contents"),
                        functools.partial(setattr, cell, "cell_contents"), value)
            self._follow(value, depth, names)
        for k, value in enumerate(f.__defaults__ or ()):
            self._place(("default", id(f), k), f"default argument {k} of {f.__name__}",
                        functools.partial(lambda f, k: f.__defaults__[k], f, k),
                        functools.partial(_set_default, f, k), value)
        if _ours(f):
            # burnumba's own function: the user's function it wraps is in its cells (above),
            # and its globals are burnumba's modules, which hold no generator (walking them
            # cost a vmap trace 1.9 ms: linecache, os, sys, the tracer's helpers)
            return
        g = f.__globals__
        for name in names:
            if name not in g:
                continue
            value = g[name]
            self._place(("global", id(g), name), f"the global {name!r} of {f.__module__}",
                        functools.partial(g.__getitem__, name),
                        functools.partial(g.__setitem__, name), value)
            self._follow(value, depth, names)


def _ours(f):
    """Whether ``f`` (a function, method or class) is burnumba's own."""
    return (getattr(getattr(f, "__func__", f), "__module__", None) or "").startswith(
        "burnumba.")


def _set_default(f, k, value):
    d = list(f.__defaults__)
    d[k] = value
    f.__defaults__ = tuple(d)


def _state(gen):
    """A generator's state, comparable with == (read before and after a trace)."""
    if isinstance(gen, np.random.RandomState):
        return _frozen(gen.get_state(legacy=False))
    if isinstance(gen, np.random.Generator):
        return _frozen(gen.bit_generator.state)
    return gen.getstate()


def _frozen(state):
    if isinstance(state, dict):
        return tuple((k, _frozen(v)) for k, v in state.items())
    if isinstance(state, np.ndarray):
        return state.dtype.str, state.tobytes()
    return state


# -- the trace ----------------------------------------------------------------------------

def traced(f, args, kwargs, run):
    """``run(recorder, args)``: trace ``f`` with its draws recorded (the recorder's
    ``draws``, for the tape) and its generators checked; ``args`` with every generator leaf
    replaced by its proxy. A generator whose state changed during the trace was drawn from
    unseen, by the function or by another thread meanwhile: the trace is run again, and
    refused when every one of ``ATTEMPTS`` attempts saw a change."""
    for attempt in range(ATTEMPTS):
        changed, result = _attempt(f, args, kwargs, run)
        if changed is None:
            return result
    gen, label = changed
    fix = ("use numpy's generators instead (np.random.* or a np.random.Generator), "
           "which burnumba replays on every call"
           if gen is stdlib_random._inst or isinstance(gen, stdlib_random.Random) else
           "call it as np.random.<name>(...) or through a generator the function names "
           "(an argument, a closure variable, a global, self.<attr>), which burnumba "
           "records; `from numpy.random import randn` in a helper module and "
           "np.random.mtrand._rand are not seen")
    raise RandomSourceError(at_user_site(
        f"{label} was drawn from while the function was traced, by a call burnumba did "
        f"not record: its numbers would be frozen into the tape and repeated on every "
        f"call. Fix: {fix}. (Seen in each of {ATTEMPTS} traces: if other threads keep "
        "drawing from it meanwhile, trace the function (call it once) before starting "
        "them, or give each thread a np.random.default_rng() of its own)"))


def _attempt(f, args, kwargs, run):
    places = _Places(f, args, kwargs)
    gens = [(_global_rng(), GLOBAL.label), (stdlib_random._inst,
            "Python's random module (random.random, random.gauss, ...)")]
    gens += [v for v in places.reached.values() if v[0] is not _global_rng()]
    before = [_state(g) for g, _ in gens]
    rec = Recorder()
    installed = []                          # (get, set, original, replacement)
    stack = _local.__dict__.setdefault("stack", [])
    rebound = []
    try:
        for key, label, get, set_, value in places.places:
            source = Source(get, label)
            if isinstance(value, SOURCES):
                make = functools.partial(Proxy, value, source)
            else:
                source = Source(functools.partial(_owner_of, get), label)
                make = functools.partial(_wrapper, source, value.__name__, value)
            installed.append((get, set_, value, _install(get, set_, value, make, rec), label))
        traced_args = _proxied(args, "an argument")
        traced_kwargs = {k: _proxied(v, f"keyword argument {k!r}") for k, v in kwargs.items()}
        rec.entry = sys._getframe()
        stack.append(rec)
        try:
            result = run(rec, traced_args, traced_kwargs)
        finally:
            stack.pop()
    finally:
        for get, set_, value, replacement, label in installed:
            if _uninstall(get, set_, value, replacement, rec):
                rebound.append(label)
    if rebound:
        raise RandomSourceError(at_user_site(
            f"the traced function rebound {rebound[0]} to another random generator while it "
            "was traced, so its draws were not recorded: make the generator outside the "
            "function and pass it as an argument"))
    for (gen, label), old in zip(gens, before):
        if _state(gen) != old:
            return (gen, label), None
    return None, result


def _proxied(x, label):
    """``x`` with each generator leaf replaced by a proxy whose source is that very object
    (a generator argument is part of the signature by identity, so the tape only ever runs
    with it)."""
    if isinstance(x, SOURCES):
        return Proxy(x, Source(functools.partial(lambda g: g, x),
                               "a generator passed as " + label))
    if type(x) in (list, tuple):
        return type(x)(_proxied(v, label) for v in x)
    if type(x) is dict:
        return {k: _proxied(v, label) for k, v in x.items()}
    return x
