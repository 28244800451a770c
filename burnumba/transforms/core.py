"""grad, value_and_grad, vjp and trace: trace once per input signature, then run the
compiled kernel."""
import collections
import contextlib
import functools
import gc
import os
import sys
import threading
import types
import warnings
import weakref

import numpy as np

from ..ir.checked import SWITCH
from .._errors import (GuardError, InputError, NestedTrace, OutputError, VariantWarning,
                      at_user_site, nested_unsupported)
from ..tracing.plan import DATA as _DATA, DIFF as _DIFF, ByOpsPlan, CallPlan, scalar_by_ops
from ..tracing.pytree import flatten, unflatten
from ..tracing.signature import Signature, is_data, structure, tape_dtype
from ..ir import tapefile
from ..ir.tape import Tape
from ..tracing.tracer import CONST, Builder, Var
from ..tracing import randomness
from ..derive.sweeps import eliminate_dead
from . import custom, library_calls, nested, shared
from .captures import GONE, snapshot
from .outputs import as_output, stacked

_refcount, _weakcount = sys.getrefcount, weakref.getweakrefcount
CACHE_SIZE = 64          # tapes a transformed function keeps by default (least recently used go)
VARIANT_LIMIT = 8        # variants (branch combinations) kept per signature; more warn once


def _user_level():
    """The stacklevel of warnings.warn that names the first caller outside burnumba."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level


def _norm_argnums(argnums):
    if isinstance(argnums, int):
        return (argnums,), True
    argnums = tuple(argnums)
    if not argnums or not all(isinstance(k, int) for k in argnums):
        raise InputError("argnums must be an int or a non-empty tuple of ints")
    return argnums, False


def _norm_static(static_argnums, argnums):
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if not all(isinstance(k, int) for k in static):
        raise InputError("static_argnums must be an int or a tuple of ints")
    both = set(static) & set(argnums)
    if both:
        raise InputError(f"argument {min(both)} is in both argnums and static_argnums: a "
                         "differentiated argument cannot be static")
    return static


def _positive(nums, nargs):
    return tuple(k + nargs if k < 0 else k for k in nums)


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector paused while a function is traced and its tape
    built. A trace makes one Python object per traced value and keeps them all until it
    ends, so the collector's passes over the growing heap find nothing to free (the values
    form no cycles): 10 % of the time to trace a 10^5-node graph (bench/report_interp.py).
    The pause lasts until the builder and its values are freed: resumed while they were
    alive, the collector's first pass walked them all (26-36 ms, 0.2-0.3 us a node, for that
    graph, against about 1 ms now). It is resumed unless it was off already (the user's
    choice, or another thread's trace in progress)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _trace(f, args, kwargs, argnums, has_aux, sig, need_scalar, single=False, static=(),
           forward_mode=False, loops=False):
    """The Tape of ``f`` on arguments of signature ``sig``, the collector paused until the
    trace's objects are gone (``_traced`` returns the tape only)."""
    with _collector_paused(), library_calls.redirected(f):
        # random draws are recorded as recipes that every run draws again (randomness.py);
        # scipy's functions that f reads are burnumba.scipy's on traced values
        return randomness.traced(f, args, kwargs, lambda rec, args, kwargs: _traced(
            f, args, kwargs, argnums, has_aux, sig, need_scalar, single, static,
            forward_mode, rec, loops))


def _traced(f, args, kwargs, argnums, has_aux, sig, need_scalar, single, static,
            forward_mode, rec, loops=False):
    b = Builder(tape_dtype(sig.diff + sig.data), record_sites=SWITCH.on)
    # bn.fori_loop / scan / while_loop trace their body once (a structured loop) where the
    # tape's run can step through it: grad and value_and_grad, not under debug_nans
    b.loops_ok = loops and not SWITCH.on and not forward_mode
    rec.builder = b
    b.given = {}                           # the inputs' values, for Python's decisions
    in_slots = []

    def new_input(x, need):
        shape = np.shape(x)
        v = b.input(shape, need, "i" if type(x) is int else
                    getattr(x, "dtype", np.dtype(float)).kind)
        b.given[v.node] = x
        in_slots.append((b.off[v.node], v.size, shape, isinstance(x, float)
                         and not isinstance(x, np.floating)))
        return v

    diff_vars = iter([new_input(x, True) for x in sig.diff])
    data_vars = iter([new_input(x, False) for x in sig.data])
    traced_args = []
    for k, a in enumerate(args):
        leaves, treedef = flatten(a)
        kinds = sig.kinds[k]
        new = [next(diff_vars) if kd == _DIFF else next(data_vars) if kd == _DATA else x
               for kd, x in zip(kinds, leaves)]
        traced_args.append(unflatten(treedef, new))
    traced_kwargs = {}
    for name in sorted(kwargs):
        leaves, treedef = flatten(kwargs[name])
        new = [next(data_vars) if is_data(x) else x for x in leaves]
        traced_kwargs[name] = unflatten(treedef, new)

    try:
        result = f(*traced_args, **traced_kwargs)
    except NestedTrace as nested:
        # ``outer * inner``: the outer value met this trace's, and named this trace as the
        # one in progress; the transformation must run in the other one
        if nested.builder is b and getattr(nested, "other", None) is not None:
            raise NestedTrace(nested.other) from None
        raise
    except ValueError:
        # numpy's "setting an array element with a sequence" in place of the InplaceError a
        # traced scalar raised for out[i] = v into a numpy array (conversions.store_refused)
        if getattr(b, "store_error", None) is not None:
            raise b.store_error from None
        raise
    if has_aux:
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise OutputError(
                "has_aux=True: the function must return a pair (output, aux), got "
                f"{type(result).__name__}")
        result, aux_tree = result
        aux_leaves, aux_def = flatten(aux_tree)
        aux_leaves = [stacked(b, v) for v in aux_leaves]
        aux_items = [(v.node, v.shape) if isinstance(v, Var) else ("const", v)
                     for v in aux_leaves]
        aux = (aux_def, aux_items)
    else:
        aux = None
    out = as_output(b, result, need_scalar)
    out_node = out.node                    # a pending view becomes a node here
    if (b.derived or b.guards) and not b.loops:
        # derivatives traced as ops: drop what is unread; the values only Python decisions
        # read: kept, not differentiated
        roots = [out_node] + ([node for node, _ in aux[1] if node != "const"] if aux else [])
        eliminate_dead(b, roots, b.guards.node if b.guards else (),
                       drop=True if b.derived else b.folded)
        # a comparison a guard took over, last (`if loss == loss`): gone, not a constant
        while b.n - 1 in b.folded and b.op[-1] == CONST and b.n - 1 not in b.consts:
            b.drop_last()
    b.live = False
    b.subscripts = None                    # tracing/subscripts.py: frees the user's frames
    tape = Tape(b, sig.key, len(sig.diff), in_slots, out_node, out.shape, aux,
                argnums=argnums, single=single, static=static, forward_mode=forward_mode,
                draws=tuple(rec.draws))
    # a user's derivative rule is in it: its kernel's sweeps would differentiate the rule's
    # body instead, so its derivatives are traced as ops (transforms/custom.py)
    tape.custom = bool(b.custom)
    return tape


def _ints_decide(failure, sig):
    """Whether only Python int inputs decide the guard that failed (``failure``, a GuardError
    of a tape traced at ``sig``): the inputs its node reads, through every operand, are
    Python ints and nothing else. Then keying those ints by value (``Signature``'s
    ints_static) replaces a variant per value, tried one after another, by one dict lookup;
    it changes no result, only which tape a call finds."""
    tape = failure.tape
    if tape.loops or tape.custom:
        return False
    leaves = sig.diff + sig.data
    n_in = len(leaves)
    seen, stack, ints = set(), [int(tape.guard_nodes[failure.index])], False
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        if i < n_in:
            if type(leaves[i]) is not int:
                return False
            ints = True
            continue
        stack.extend(tapefile.operands(tape, i))
    return ints


class _Deferred:
    """A view's captures, taken at its second call (``Cache.fresh``)."""

    __slots__ = ()

    def same(self):
        return False


_DEFERRED = _Deferred()


class Cache:
    """What every transformation keeps per function: a bounded map from a key (an input
    signature, with whatever else picks the traced form) to the traced form used last, at
    most ``cache_size`` keys (the least recently used are dropped, with their variants), and
    each key's variants (forms traced on different branches: at most VARIANT_LIMIT, most
    recently used first). Threads may use it at once: it is updated under one lock.
    ``dropped`` hears of each form that leaves."""

    def __init__(self, cache_size=CACHE_SIZE):
        if not (isinstance(cache_size, int) and cache_size >= 1):
            raise InputError(f"cache_size must be a positive int, got {cache_size!r}")
        self.cache_size = cache_size
        self.tapes = collections.OrderedDict()     # key -> the variant used last
        self.variants = {}         # key -> its variants, most recently used first (when > 1)
        self.lock = threading.Lock()

    def lookup(self, key):
        """The form kept under ``key`` (now the most recently used), or None."""
        found = self.tapes.get(key)
        if found is not None and len(self.tapes) > 1:
            with self.lock:
                if key in self.tapes:
                    self.tapes.move_to_end(key)
        return found

    def keep(self, key, new, added=None):
        """``new`` kept under ``key``, unless another thread's form came first: the one kept
        is returned (``added(it)`` runs under the lock)."""
        with self.lock:
            kept = self.tapes.setdefault(key, new)
            self._bound()
            if added is not None:
                added(kept)
        return kept

    def add_variant(self, key, variant, use):
        """``variant`` first of ``key``'s variants, ``use`` the form kept under ``key``: the
        oldest variant beyond VARIANT_LIMIT is dropped. Called under the lock."""
        variants = self.variants.setdefault(key, [])
        variants.insert(0, variant)
        while len(variants) > VARIANT_LIMIT:
            self.dropped(variants.pop())
        self.tapes[key] = use
        self.tapes.move_to_end(key)
        self._bound()

    def _bound(self):
        """The least recently used keys beyond ``cache_size`` dropped (under the lock)."""
        while len(self.tapes) > self.cache_size:
            old_key, old = self.tapes.popitem(last=False)
            for dropped in self.variants.pop(old_key, [old]):
                self.dropped(dropped)

    def dropped(self, tape):
        """A traced form left the cache (under the lock)."""

    # what f read from outside its arguments when it was traced last (transforms/captures.py:
    # None, nothing), and how many times a rebound value dropped the traced forms
    captures = None
    recaptured = 0

    def capture(self):
        """After a trace of ``self.f``: the places it read values from, checked by
        ``fresh`` on each call."""
        self.captures = snapshot(self.f)

    def fresh(self):
        """Whether every value ``f`` read from its globals, closure or objects'
        attributes when traced is still the object there; if not, the traced forms are
        dropped (their constants are the old values), and the call traces again."""
        caps = self.captures
        if caps is _DEFERRED:
            # a view's second call (a lambda made again on each call is called once): f still
            # reads the values its shared entry is keyed on, then its own places are taken
            entry = self.shared
            if entry is None or entry.key.same(self.f):
                self.capture()
                return True
            label = "a value that the function reads"
        else:
            label = caps.changed()
            if label is None:
                return True
        self.captures = None
        self.forget()
        self.recaptured += 1
        if self.recaptured == VARIANT_LIMIT:
            name = getattr(self.f, "__name__", "the function")
            warnings.warn(
                f"{name} has been traced again {VARIANT_LIMIT} times because a value it reads "
                f"from outside its arguments was rebound between calls (last: {label}). Each "
                "new value is traced again, so the results stay right, at tracing's speed. "
                "Pass the value as an argument instead: a float or an array argument is "
                "data of the tape, and new values do not retrace", VariantWarning,
                stacklevel=_user_level())
        return False

    def forget(self):
        """Drop every traced form (under no lock: the caches are replaced whole)."""
        self.tapes = collections.OrderedDict()
        self.variants = {}


class TapeCache(Cache):
    """A bounded cache of a function's tapes, one per input signature (``Cache``). Threads
    may use it at once: tapes keep one run state per thread. ``need_scalar``: the output
    must be a scalar (grad); ``forward_mode``: the tapes' kernels have the tangent sweep."""

    def __init__(self, f, argnums, has_aux=False, cache_size=CACHE_SIZE, static_argnums=(),
                 need_scalar=True, forward_mode=False):
        self.f = f
        self.argnums, self.single = _norm_argnums(argnums)
        self.static = _norm_static(static_argnums, self.argnums)
        self.has_aux = has_aux
        super().__init__(cache_size)
        self.need_scalar = need_scalar
        self.forward_mode = forward_mode
        self.traces = {}           # key -> how many times it was traced (when > 1)
        self.loops = False         # True: structured loops may be traced (grad, value_and_grad)
        self.warned = set()        # keys whose variants warned (VariantWarning), once each
        # Python ints keyed by value, not data: set once guards that only Python ints decide
        # kept failing (``_ints_decide``)
        self.ints_static = False

    # the entry of transforms/shared.py whose tapes these are (shared with equal functions),
    # and whether f is still to be compared with it (a view's, until its first use)
    shared = None
    pending = False

    def detach(self):
        """A cache of this function's own, empty: its values are no longer the ones the
        shared tapes were traced with (transforms/shared.py)."""
        self.shared = None
        self.tapes = collections.OrderedDict()
        self.variants, self.traces, self.warned = {}, {}, set()
        self.lock = threading.Lock()

    def forget(self):
        """Drop every tape: a value f reads was rebound (``fresh``). A shared cache's
        entry goes too: its key holds the old values."""
        entry = self.shared
        if entry is not None and entry.value is self:
            entry.table.remove(entry)
        self.detach()

    def keep_shared(self):
        """After a trace of ``self.f``, before its tape is stored: a shared cache takes the
        tape only when ``f`` read the values the cache is keyed on (an array captured by f
        may have changed in place since it was keyed); else f's cache becomes its own."""
        entry = self.shared
        if entry is not None and not entry.key.same(self.f):
            if entry.value is self:
                entry.table.remove(entry)
            self.detach()

    def key(self, sig):
        # under debug_nans, a tape with source lines is kept beside the plain one
        return sig.key + ("debug_nans",) if SWITCH.on else sig.key

    def tape_for(self, args, kwargs):
        """(tape, signature, argnums) for these arguments, tracing on a cache miss. Of a
        signature's variants (tapes traced on different branches), the one used last."""
        if self.pending:
            self.first_call()
        elif self.captures is not None:
            self.fresh()
        argnums, static = _positive(self.argnums, len(args)), _positive(self.static, len(args))
        sig = Signature(args, kwargs, argnums, static, self.ints_static)
        key = self.key(sig)
        tape = self.lookup(key)
        if tape is not None:
            return tape, sig, argnums
        tape = _trace(self.f, args, kwargs, argnums, self.has_aux, sig, self.need_scalar,
                      self.single, static, self.forward_mode, self.loops)
        self.capture()
        if self.shared is not None:
            self.keep_shared()
        self.traced(tape)
        tape = self.keep(key, tape, lambda kept: self.added(kept, args, kwargs, argnums))
        return tape, sig, argnums

    def guarded(self, tape, sig, argnums, args, kwargs, run, failed=None):
        """``run(tape)``; when one of the tape's guards fails (a decision went the other way
        at these arguments), ``run`` on the signature's other variants, most recently used
        first, and when none holds, on a new trace at these arguments (a new variant). The
        new trace's run keeps the branches numpy took while tracing, even where the kernel's
        value differs by an ulp at a branch's boundary: a retrace never loops. ``failed``: the
        GuardError a fast path already got from ``tape`` at these arguments (not run again)."""
        if failed is not None and failed.tape is tape:
            failure = failed
        else:
            try:
                return run(tape)
            except GuardError as e:
                if e.tape is not tape:
                    raise
                failure = e
        key = self.key(sig)
        with self.lock:
            others = [t for t in self.variants.get(key, ()) if t is not tape]
        for other in others:
            try:
                result = run(other)
            except GuardError as e:
                if e.tape is not other:
                    raise
                continue
            self._use(key, other)
            return result
        new = _trace(self.f, args, kwargs, argnums, self.has_aux, sig, self.need_scalar,
                     self.single, _positive(self.static, len(args)), self.forward_mode,
                     self.loops)
        self.capture()
        if self.shared is not None:
            self.keep_shared()           # a cache of its own now: the new variant alone
        self.traced(new)
        self._add_variant(key, tape, new, failure, sig)
        state = new.state()
        state.unguarded = True
        try:
            return run(new)
        finally:
            state.unguarded = False

    def _use(self, key, tape):
        """``tape`` becomes its signature's most recently used variant."""
        with self.lock:
            variants = self.variants.get(key)
            if variants is None or tape not in variants:
                return
            variants.remove(tape)
            variants.insert(0, tape)
            self.tapes[key] = tape
            self.tapes.move_to_end(key)
            self.promoted(tape)

    def _add_variant(self, key, failed, new, failure, sig=None):
        with self.lock:
            self.variants.setdefault(key, [failed] if key in self.tapes else [])
            self.traces[key] = self.traces.get(key, 1) + 1
            self.add_variant(key, new, new)
            self.promoted(new)
            warn = self.traces[key] > VARIANT_LIMIT and key not in self.warned
            if warn:
                self.warned.add(key)
                ints = sig is not None and not self.ints_static and _ints_decide(failure, sig)
                if ints:
                    self.ints_static = True
        if warn:
            site = failure.tape.guards[3][failure.index]
            name = getattr(self.f, '__name__', 'the function')
            head = (f"{name} has been traced {self.traces[key]} times for one signature, "
                    "because a Python decision on a traced value keeps changing"
                    + (f" (at {site})" if site else ""))
            if ints:
                warnings.warn(
                    head + ", and only Python int arguments decide it (an index of a numpy "
                    f"array, a range, a shape). From now on {name}'s Python int arguments "
                    "are keyed by value, as static_argnums would make them: each value is "
                    f"traced once and {self.cache_size} signatures are kept (cache_size=), "
                    "so a few values replay at full speed", VariantWarning,
                    stacklevel=_user_level())
                return
            warnings.warn(
                head + ". It stays correct (each new branch "
                f"is traced again; {VARIANT_LIMIT} variants are kept), at tracing's speed. "
                "Write the choice as data (bnp.where, bnp.maximum, bnp.clip), make the "
                "deciding argument static (static_argnums), or take the value out of the "
                "decision with bn.stop_gradient only if it really is constant",
                VariantWarning, stacklevel=_user_level())

    def promoted(self, tape):
        """``tape`` is now its signature's variant in use (under the lock)."""

    def tape_or_builder(self, args, kwargs):
        """``(tape, sig, argnums, None)``; or ``(None, None, None, builder)`` when the
        arguments are another trace's values (the caller then runs in that trace, outside
        this except, so that its errors chain nothing)."""
        try:
            return (*self.tape_for(args, kwargs), None)
        except NestedTrace as nested:
            builder = nested.builder
        return None, None, None, builder

    def traced(self, tape):
        """This thread has just traced ``tape`` (before any other thread can see it)."""

    def added(self, tape, args, kwargs, argnums):
        """A tape entered the cache (under the lock)."""

    def trace(self, *args, **kwargs):
        """The Tape this function runs for these arguments: of a signature's variants, one
        whose Python decisions hold at them (traced now if none does)."""
        tape, sig, argnums = self.tape_for(args, kwargs)
        if tape.guards is None:
            return tape

        def run(t):
            t.run_forward(sig.diff + sig.data, t.state())
            return t
        return self.guarded(tape, sig, argnums, args, kwargs, run)


class _Transformed(TapeCache):
    """The state behind what grad / value_and_grad return: the tape cache, and the call plan
    of each tape (the fast paths)."""

    def __init__(self, f, argnums, has_aux, with_value, cache_size=CACHE_SIZE,
                 static_argnums=()):
        super().__init__(f, argnums, has_aux, cache_size, static_argnums)
        self.loops = True          # its runs step through structured loops (ir/loops.py)
        self.with_value = with_value
        self.plans = {}            # tape -> its CallPlan
        self.fast = None           # (nargs, runner, tape) once every argument is a traced float
        self.fast_argnums = None
        self.runners = {}          # tape -> its scalar runner (variants switch without rebuilding)
        self.plan = None           # the CallPlan of the tape used last
        self.ops = None            # tapes with custom rules: their gradients as traced ops

    def trace(self, *args, **kwargs):
        """The Tape this function runs for these arguments; for a function with a user's
        rule, with its value-and-gradient tape (``by_ops``), which this function runs. Of a
        signature's variants, one whose Python decisions hold at these arguments."""
        tape = super().trace(*args, **kwargs)
        if tape.custom and tape.by_ops is None and tape.out_shape == ():
            self._ops_cache()
            tape.by_ops = self.ops.trace(*args, **kwargs)
        return tape

    def _ops_runner(self, tape, argnums):
        """The scalar fast path of a by-ops tape (every argument a differentiated float)."""
        runner = self.runners.get(tape)
        if runner is None:
            runner = self.runners[tape] = scalar_by_ops(tape, argnums, self.with_value,
                                                        self.single)
        return runner

    def _ops_cache(self):
        if self.ops is None:
            ops = _OpsCache(self, custom.value_and_grads(self.f, self.argnums, self.has_aux),
                            self.argnums, self.has_aux, self.cache_size, self.static,
                            need_scalar=False)
            with self.lock:
                if self.ops is None:
                    self.ops = ops

    def view(self, f):
        """This state for ``f``, a function that may equal ``self.f`` (transforms/shared.py):
        the same tape cache, plans and runners (the same objects), its fast paths as they
        are now, and ``f`` to trace; the first use checks that f is equal (``first_call``).
        The cache of a user's derivative rules is f's own."""
        view = object.__new__(_Transformed)
        attrs = self.__dict__.copy()
        attrs["f"], attrs["ops"], attrs["pending"], attrs["captures"] = f, None, True, None
        view.__dict__ = attrs
        return view

    def lend(self, f, entry):
        """The function bn.grad(f) returns when this state is ``entry``'s (shared) and ``f``
        may equal its function: over a new view of this state, or over the view made for an
        earlier function when nothing holds that one or its function any more (a lambda
        made again on each call drops both at once): its view is reset to this state for
        ``f``, as a new one. (The reference counts are those of a wrapper and a view that
        only this code holds: the local names, the closure, the wrapper's attributes.)"""
        spares = entry.spares
        try:
            wrapper, view, refs = spares.pop()
        except IndexError:
            pass
        else:
            if (_refcount(wrapper) == 2 and _refcount(view) == refs
                    and _weakcount(wrapper) == 1 and not _weakcount(view) and not f.__dict__):
                attrs = view.__dict__
                moved = attrs["tapes"] is not self.tapes        # detached, or another entry's
                if not moved and not entry.key.leaves.deep and \
                        shared.made_again(attrs["f"], f):
                    # the same code over the same globals, closure cells and defaults: the
                    # spare's function is this one in all but identity, so the wrapper over
                    # it is the function bn.grad(f) returns, as it was left (its fast paths
                    # and its captures stay valid: they read the same cells and dict). Not
                    # when the key compares a value by content (an array, a list, a helper):
                    # one changed in place since is seen by that comparison only
                    spares.append((wrapper, view, refs))
                    return wrapper
                weak = attrs["wrapper"]
                attrs.update(self.__dict__)
                attrs["f"], attrs["ops"], attrs["pending"], attrs["wrapper"] = \
                    f, None, True, weak
                attrs["captures"] = None
                wrapper.__wrapped__ = f
                if moved:
                    view._rewrap()
                spares.append((wrapper, view, refs))
                return wrapper
        view = self.view(f)
        wrapper = view.function()
        refs = sys.getrefcount(view)
        spares.append((wrapper, view, refs))
        return wrapper

    def detach(self):
        super().detach()
        self.plans, self.runners = {}, {}
        self.fast = self.plan = self.ops = None
        self._rewrap()

    def _rewrap(self):
        wrapper = self.wrapper()
        if wrapper is not None:
            wrapper.tapes, wrapper.variants, wrapper.plans = \
                self.tapes, self.variants, self.plans

    def first_call(self):
        """The first use of a view: ``f`` reads the values its shared cache is keyed on (none
        changed since bn.grad(f), nothing was rebound), or this becomes a view of the entry
        that f's values key, or a state of f's own, entered in the table."""
        self.pending = False
        entry = self.shared
        if entry.key.same(self.f):
            entry.used = next(shared.CLOCK)
            self.captures = _DEFERRED
            return
        found = entry.table.find(self.f, entry.params)
        if found is not None:
            f, wrapper = self.f, self.wrapper
            self.__dict__.update(found.__dict__)
            self.f, self.ops, self.pending, self.wrapper = f, None, False, wrapper
            self.captures = _DEFERRED
            self._rewrap()
            return
        self.detach()
        self.captures = None
        entry.table.add(self.f, entry.params, self, _share)

    def function(self):
        """A plain closure (cheaper to call than an object's __call__) over this state; a
        view (``pending``) checks its function at the first call (transforms/shared.py)."""
        state = self

        def transformed(*args, **kwargs):
            if state.pending:
                state.first_call()
            else:
                caps = state.captures            # f's globals, closure, attributes as traced?
                if caps is not None:
                    try:
                        if not caps.same():
                            state.fresh()
                    except GONE:
                        state.fresh()
            if SWITCH.on:                # debug_nans: traced again, with source lines
                return state.call(args, kwargs)
            fast = state.fast
            if fast is not None and not kwargs:
                try:
                    out = fast[1](args)         # None unless every argument is a float
                except GuardError as e:         # another branch: the other variants, or a
                    return state.call(args, kwargs, e)                  # new trace
                if out is not None:
                    return out
            plan = state.plan
            if plan is not None and not kwargs:
                leaves = plan.match(args)
                if leaves is not None:
                    try:
                        return plan.run(leaves)
                    except GuardError as e:
                        return state.switch_plan(args, leaves, e)
            return state.call(args, kwargs)

        f = self.f
        if type(f) is types.FunctionType:        # functools.update_wrapper's, at a third
            transformed.__module__, transformed.__name__ = f.__module__, f.__name__
            transformed.__qualname__, transformed.__doc__ = f.__qualname__, f.__doc__
            attrs = dict(f.__dict__) if f.__dict__ else {}
            attrs["__wrapped__"] = f
        else:
            functools.update_wrapper(transformed, f)
            attrs = transformed.__dict__
        attrs["tapes"] = self.tapes              # per signature: the variant used last
        attrs["variants"] = self.variants        # per signature: all its variants (> 1)
        attrs["trace"] = self.trace
        attrs["plans"] = self.plans
        attrs["_transformed"] = self             # what bn.vmap runs per sample
        transformed.__dict__ = attrs
        self.wrapper = weakref.ref(transformed)
        return transformed

    def dropped(self, old):
        self.plans.pop(old, None)
        self.runners.pop(old, None)
        if self.plan is not None and self.plan.tape is old:
            self.plan = None
        if self.fast is not None and self.fast[2] is old:
            self.fast = None

    def added(self, tape, args, kwargs, argnums):
        if (not kwargs and not self.has_aux and not SWITCH.on and not tape.custom
                and not tape.draws
                and sorted(argnums) == list(range(len(args)))
                and all(type(a) is float for a in args)):
            self.fast_argnums = argnums
            self.fast = (len(args), self._runner(tape).entry, tape)

    def _runner(self, tape):
        runner = self.runners.get(tape)
        if runner is None:
            runner = self.runners[tape] = tape.scalar_runner(
                self.fast_argnums, self.with_value, self.single, switch=self.switch)
        return runner

    def switch(self, args, tape, k):
        """The scalar fast path's guard ``k`` failed on ``tape``: the signature's other
        variants, most recently used first, each tried by its runner without an exception
        (a switch between two variants costs about two plain calls); when none holds, the
        general path, which traces a new variant.

        The runner may be another function's (a shared cache's, transforms/shared.py: this
        state made it, another function's call runs it): the variants tried are this state's
        only while the runner is still in its cache, and the general path is the calling
        function's own (the GuardError raised here reaches the caller's call, which traces
        with its own function)."""
        if self.runners.get(tape) is None:   # this state's cache is another one now
            raise tape.guard_error(k)
        key = tape.key                   # the fast path is off under debug_nans: sig.key
        for other in tuple(self.variants.get(key, ())):   # a copy (one step under the GIL)
            if other is tape:
                continue
            runner = self.runners.get(other) or self._runner(other)
            result = runner.attempt(args)
            if result is not None:
                # the fast path follows it (one atomic store, no lock): the variants' order
                # (which the cap drops first) and the general path's choice follow the
                # general path's own calls
                fast = self.fast
                if fast is not None:
                    self.fast = (fast[0], runner.entry, other)
                return result
        raise tape.guard_error(k)

    def switch_plan(self, args, leaves, failed):
        """A call plan's run failed a guard: the signature's other variants' plans (those
        made already), most recently used first, on the same leaves; when none holds, the
        general path, which traces a new variant."""
        tape = failed.tape
        variants = self.variants.get(tape.key, ())
        if self.ops is not None and tape not in variants:      # a by-ops tape's plan
            variants = self.ops.variants.get(tape.key, ())
        for other in tuple(variants):
            plan = self.plans.get(other)
            if other is tape or plan is None:
                continue
            try:
                result = plan.run(leaves)
            except GuardError as e:
                if e.tape is not other:
                    raise
                continue
            self.plan = plan
            return result
        return self.call(args, {}, failed)

    def promoted(self, tape):
        # the scalar fast path follows the variant in use (a tape with a rule never has
        # one: its by-ops tapes' is set by by_ops)
        if self.fast is not None and self.fast[2] is not tape and not tape.custom \
                and tape.n_diff == self.fast[0] == len(tape.in_slots):
            self.fast = (self.fast[0], self._runner(tape).entry, tape)

    def call(self, args, kwargs, failed=None):
        """The general path; ``failed``: the GuardError a fast path got at these arguments."""
        tape, sig, argnums, builder = self.tape_or_builder(args, kwargs)
        if builder is not None:                    # inside another trace: run in it
            argnums = _positive(self.argnums, len(args))
            return nested.value_and_grad(builder, self.f, args, kwargs, argnums,
                                         self.single, self.has_aux, self.with_value)
        if tape.custom:
            return self.by_ops(args, kwargs, sig, argnums, failed)
        return self.guarded(tape, sig, argnums, args, kwargs,
                            lambda t: self._run(t, sig, argnums, kwargs), failed)

    def _run(self, tape, sig, argnums, kwargs):
        if not kwargs:
            plan = self.plans.get(tape)
            if plan is None:
                plan = CallPlan(tape, sig, argnums, self.single, self.with_value,
                                self.has_aux)
                with self.lock:
                    if tape in self.tapes.values() or any(
                            tape in v for v in self.variants.values()):
                        plan = self.plans.setdefault(tape, plan)
            if not SWITCH.on:
                self.plan = plan
        state = tape.state()
        value, flat = tape.run_value_and_grad(sig.diff + sig.data, state=state)
        grads = structure(tape, flat, sig, argnums, self.single)
        if self.has_aux:
            aux = tape.aux_values(state)
            return ((value, aux), grads) if self.with_value else (grads, aux)
        return (value, grads) if self.with_value else grads

    def by_ops(self, args, kwargs, sig, argnums, failed=None):
        """The call when f's tape holds a user's derivative rule: the value and gradients
        traced as ops into a second tape (custom.value_and_grads), run forward. Its plan
        (ByOpsPlan) becomes the fast path, as a plain tape's CallPlan does."""
        self._ops_cache()
        self.ops.ints_static = self.ints_static       # the same signature as ``sig``
        tape = self.ops.tape_for(args, kwargs)[0]

        def run(tape):
            if not kwargs:
                plan = self.plans.get(tape)
                if plan is None:
                    plan = ByOpsPlan(tape, sig, argnums, self.single, self.with_value,
                                     self.has_aux)
                    with self.lock:
                        if tape in self.ops.tapes.values() or any(
                                tape in v for v in self.ops.variants.values()):
                            plan = self.plans.setdefault(tape, plan)
                if not SWITCH.on:
                    self.plan = plan
                    if (not self.has_aux and not tape.draws
                            and sorted(argnums) == list(range(len(args)))
                            and all(type(a) is float for a in args)):
                        self.fast = (len(args), self._ops_runner(tape, argnums).entry, tape)
                return plan.run(sig.diff + sig.data)
            state = tape.state()
            flat = tape.run_forward(sig.diff + sig.data, state)
            value = float(flat[0])                     # as the kernel returns it
            grads = structure(tape, flat[1:], sig, argnums, self.single)
            if self.has_aux:
                aux = tape.aux_values(state)
                return ((value, aux), grads) if self.with_value else (grads, aux)
            return (value, grads) if self.with_value else grads
        return self.ops.guarded(tape, sig, argnums, args, kwargs, run, failed)


class _OpsCache(TapeCache):
    """The by-ops tapes of a function with a user's rule (their gradients as traced ops),
    whose plans the function's own state keeps: a tape dropped here drops its plan there."""

    def __init__(self, owner, f, *args, **kwargs):
        super().__init__(f, *args, **kwargs)
        self.owner = owner

    def traced(self, tape):
        tape.grads_in_output = True              # its output: the value, then the gradients

    def dropped(self, tape):
        self.owner.dropped(tape)


def argnums_of(argnums, argnum, default=0):
    """``argnums``, or autograd's keyword ``argnum`` for it (only one of the two): a program
    written for autograd passes ``argnum=``."""
    if argnum is None:
        return argnums
    if argnums is not None and argnums != default:
        raise InputError(at_user_site(
            "argnums and argnum (autograd's name for it) were both given: pass one"))
    return tuple(argnum) if isinstance(argnum, list) else argnum


def value_and_grad(f, argnums=0, has_aux=False, cache_size=CACHE_SIZE, static_argnums=(), *,
                   argnum=None):
    """Return a function computing ``(f(*args), grad)``, as ``jax.value_and_grad``.

    ``f`` is traced once per input signature: pytree structure, shapes and dtypes, and the
    values of static arguments. Arrays and Python floats outside ``argnums`` are inputs of
    the tape, so new values do not retrace (as under ``jax.jit``); ints, bools, strings and
    the arguments named in ``static_argnums`` are static. ``cache_size`` bounds the tapes
    kept (least recently used first out).

    >>> import burnumba as bn, numpy as np
    >>> vg = bn.value_and_grad(lambda a, b: (a * b + np.tanh(a)) ** 2, argnums=(0, 1))
    >>> value, (da, db) = vg(0.5, -1.5)

    ``argnum`` is autograd's name for ``argnums``.
    """
    if argnum is not None:
        argnums = argnums_of(argnums, argnum)
    return _transform(f, True, argnums, has_aux, cache_size, static_argnums)


def grad(f, argnums=0, has_aux=False, cache_size=CACHE_SIZE, static_argnums=(), *,
         argnum=None):
    """Return a function computing the gradient of scalar ``f``, as ``jax.grad``; the
    arguments are as for ``value_and_grad`` (``argnum``, autograd's name, too).

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda x: np.sum(np.sin(x) ** 2))(np.linspace(0.0, 1.0, 5)).shape
    (5,)
    """
    if argnum is not None:
        argnums = argnums_of(argnums, argnum)
    return _transform(f, False, argnums, has_aux, cache_size, static_argnums)


def _transform(f, with_value, argnums, has_aux, cache_size, static_argnums):
    """The function grad / value_and_grad return. Its tape cache is shared with the functions
    transformed before that have the same code and read the same values (transforms/shared.py:
    a lambda made again on each pass of a loop traces once): a view of the state of the
    entry most recently used for the code, compared with ``f`` at its first use."""
    if type(argnums) is list:
        argnums = tuple(argnums)
    if type(static_argnums) is list:
        static_argnums = tuple(static_argnums)
    params = (with_value, argnums, has_aux, cache_size, static_argnums)
    if type(f) is types.FunctionType:
        entry = shared.TABLE.guess(f, params)
        if entry is not None:
            return entry.value.lend(f, entry)
    state = _Transformed(f, argnums, has_aux, with_value, cache_size, static_argnums)
    shared.TABLE.add(f, params, state, _share)
    return state.function()


def _share(state, entry):
    state.shared = entry


def trace(f, *args, argnums=0, static_argnums=(), **kwargs):
    """Trace ``f`` on these arguments and return its ``Tape`` for inspection.

    >>> import burnumba as bn
    >>> print(bn.trace(lambda a, b: (a + b) * b, 1.0, 2.0, argnums=(0, 1)))  # doctest: +SKIP
    """
    argnums_t, single = _norm_argnums(argnums)
    argnums_t = _positive(argnums_t, len(args))
    static = _positive(_norm_static(static_argnums, argnums_t), len(args))
    tape, sig = trace_once("bn.trace", f, args, kwargs, argnums_t, static, single=single)
    if tape.custom and tape.out_shape == ():
        # a user's rule in it: its value and gradient traced as ops, for value_and_grad,
        # profile, save and pickle (Tape.by_ops)
        tape.by_ops = by_ops_tape("bn.trace", f, args, kwargs, argnums_t, static, single)
    for t in (tape, tape.by_ops):
        if t is None:
            continue
        state = t.state()
        state.unguarded = True             # the branches numpy took while tracing
        try:
            t.run_forward(sig.diff + sig.data, state=state)
        finally:
            state.unguarded = False
    return tape


def by_ops_tape(name, f, args, kwargs, argnums, static, single):
    """The value-and-gradient tape of ``f`` (a scalar function with a user's rule), traced
    once: its output is the value, then the gradients (custom.value_and_grads)."""
    ops, _ = trace_once(name, custom.value_and_grads(f, argnums, False), args, kwargs,
                        argnums, static, single=single)
    ops.grads_in_output = True
    return ops


def trace_once(name, f, args, kwargs, argnums, static=(), need_scalar=False, single=False):
    """(tape, signature) of ``f`` on these arguments, traced once and cached nowhere: the
    path of the transformations that hand out a tape or a handle (bn.trace, njit_value_and_
    grad, bn.profile). Called on traced values it raises, naming the transformation
    ``name``: such a one-off has no nested form."""
    try:
        sig = Signature(args, kwargs, argnums, static)
    except NestedTrace:
        raise nested_unsupported(name) from None
    return _trace(f, args, kwargs, argnums, False, sig, need_scalar, single, static), sig
