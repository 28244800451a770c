"""Forward mode and Jacobians: jvp, linearize, jacfwd, jacrev, jacobian, elementwise_grad.

Forward mode runs the kernel's tangent sweep (``MODE_JVP``): every row has a JVP rule in the
op table, and tangents live in the gradient region of a run's state while it runs. A
Jacobian takes one tangent sweep per input element (``jacfwd``, after one forward) or one
backward sweep per output element (``jacrev``, after one forward), on the same tape.

Each function here keeps its traced tapes per input signature, as ``grad`` does: the
one-shot ``jvp`` and ``linearize`` keep them per function (held weakly), so calling them in
a loop with the same function traces once.
"""
import functools
import math
import threading
import weakref

import numpy as np

from .captures import GONE
from .core import CACHE_SIZE, TapeCache, _norm_argnums, _positive, argnums_of, grad
from ..ir.checked import SWITCH
from .._errors import (GuardError, InputError, PytreeError, RandomSourceError, ShapeError,
                      UnsupportedOpError, at_user_site)
from .. import numpy as bnp
from ..derive.graph import builder_of, operands
from . import nested
from .outputs import Outputs, copied, flat_cotangent, split
from ..tracing.plan import ArgsMatch
from ..tracing.pytree import flatten, unflatten
from ..tracing.signature import regroup
from ..kernels import ROWS, layout, rules


class _Caches:
    """Tape caches of one-shot transformations, per function (weakly held: they go when the
    function goes) and per kind of transformation."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_function = weakref.WeakKeyDictionary()

    def get(self, f, kind, make):
        try:
            return self.by_function[f][kind]           # a hit needs no lock (a dict read)
        except (KeyError, TypeError):
            pass
        try:
            with self.lock:
                per = self.by_function.setdefault(f, {})
                cache = per.get(kind)
                if cache is None:
                    cache = per[kind] = make()
                return cache
        except TypeError:                       # f cannot be weakly referenced: no reuse
            return make()


_CACHES = _Caches()


class _OutputsCache(TapeCache):
    """The tapes of an ``Outputs``, with the output structure of each (``trees``)."""

    def __init__(self, outputs, argnums, forward_mode):
        super().__init__(outputs, argnums, outputs.has_aux, need_scalar=False,
                         forward_mode=forward_mode)
        self.trees = weakref.WeakKeyDictionary()

    def traced(self, tape):
        self.trees[tape] = self.f.take()

    def detach(self):
        super().detach()
        plain = getattr(self, "plain", None)
        if plain is not None:
            plain.clear()              # in place: hvp's holders keep this dict


def _forward_cache(f, argnums, has_aux=False):
    cache = _OutputsCache(Outputs(f, has_aux), argnums, forward_mode=True)
    cache.plain = {}        # jvp's fast path: (tape, tree) by the plain arrays' shapes, dtypes
    return cache


def _jvp_cache(f, nprimals, has_aux):
    """The forward-mode tapes of f (jvp, linearize, hvp), kept per function."""
    return _CACHES.get(f, ("jvp", nprimals, has_aux),
                       lambda: _forward_cache(f, tuple(range(nprimals)), has_aux))


def _out(tape, tree, state, region):
    """The output's value (region "val") or tangent / gradient ("grad"), in the shape and
    structure it was traced with: a float for a scalar, else an array."""
    o = int(tape.off[tape.out])
    return _shaped(tape, tree, getattr(state, region)[o:int(tape.off[tape.out + 1])])


def _check_tangents(primals, tangents):
    """The flat tangent leaves, after checking that they match the primals."""
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise InputError(at_user_site(
            f"jvp: tangents must be a tuple with one entry per primal ({len(primals)}), got "
            f"{type(tangents).__name__} of length "
            f"{len(tangents) if hasattr(tangents, '__len__') else '?'}"))
    out = []
    for k, (p, t) in enumerate(zip(primals, tangents)):
        pl, pdef = flatten(p)
        tl, tdef = flatten(t)
        if pdef != tdef:
            raise PytreeError(at_user_site(
                f"jvp: tangent {k} has another structure than primal {k}"))
        for j, (x, dx) in enumerate(zip(pl, tl)):
            if np.shape(x) != np.shape(dx):
                raise ShapeError(at_user_site(
                    f"jvp: tangent {k} (leaf {j}) has shape {np.shape(dx)}, its primal "
                    f"{np.shape(x)}: a tangent has its primal's shape"))
            out.append(dx)
    return out


def _write_tangents(tape, state, tangents):
    """Tangents of the differentiated inputs, into their slots of the gradient region."""
    for (start, size, _, _), t in zip(tape.in_slots[:tape.n_diff], tangents):
        state.grad[start:start + size] = np.ravel(t)


def jvp(f, primals, tangents, has_aux=False, argnums=None):
    """``(f(*primals), J tangents)``, as ``jax.jvp``: the output and its directional
    derivative along ``tangents`` (one per primal, same structure and shapes), by the tangent
    sweep. The output is an array or scalar, or a tuple, list or dict of them (the tangent
    then has that structure too). With ``has_aux``, ``f`` returns ``(output, aux)`` and
    jvp ``(output, tangent, aux)``. With ``argnums`` (an int or a tuple of ints), only those
    primals are differentiated: ``tangents`` holds one tangent per argnum, in argnums'
    order, and the other primals are data (arrays, floats) or static (ints, strings), as
    for ``grad``.

    >>> import burnumba as bn, numpy as np
    >>> y, dy = bn.jvp(lambda x: np.sin(x) * x, (np.array([0.5, 1.0]),), (np.ones(2),))
    >>> y, dy = bn.jvp(lambda w, x: np.tanh(w * x), (0.5, np.ones(2)), (1.0,), argnums=0)
    """
    if argnums is None:
        return _jvp(f, primals, tangents, True, has_aux)
    return _jvp_argnums(f, primals, tangents, argnums, has_aux)


def _jvp_argnums(f, primals, tangents, argnums, has_aux):
    """jvp with respect to the primals ``argnums`` names, the others held fixed."""
    if not isinstance(primals, (tuple, list)):
        raise InputError(at_user_site(
            f"jvp: primals must be a tuple of the function's arguments, got "
            f"{type(primals).__name__}: write bn.jvp(f, (x, y), (v,), argnums=0)"))
    primals, n = tuple(primals), len(primals)
    nums = _positive(_norm_argnums(argnums)[0], n)
    if any(not 0 <= k < n for k in nums) or len(set(nums)) != len(nums):
        raise InputError(at_user_site(
            f"jvp: argnums {argnums} must name distinct primals among the {n} given"))
    flat = _check_tangents(tuple(primals[k] for k in nums), tangents)
    per, pos = {}, 0                    # each argnum's tangent leaves, then in input order
    for k in nums:
        m = len(flatten(primals[k])[0])
        per[k], pos = flat[pos:pos + m], pos + m
    order = tuple(sorted(nums))
    ordered = tuple(tangents[nums.index(k)] for k in order)
    if order == tuple(range(n)):                   # every primal: the usual path
        return _jvp(f, primals, ordered, True, has_aux)

    def of_argnums(*diff):            # f of those primals alone, the others closed over
        args = list(primals)
        for k, x in zip(order, diff):
            args[k] = x
        return f(*args)
    diff = tuple(primals[k] for k in order)
    builder = builder_of([x for p in primals for x in flatten(p)[0]])
    if builder is None:
        cache = _CACHES.get(f, ("jvp", n, has_aux, order),
                            lambda: _forward_cache(f, order, has_aux))
        tape, sig, _, builder = cache.tape_or_builder(primals, {})
    if builder is not None:                        # inside another trace: run in it
        outputs, aux = Outputs(of_argnums, has_aux), []
        out, tout = nested.jvp(builder, functools.partial(outputs.primary, aux=aux), diff,
                               ordered)
        tree = outputs.take()
        if tree is not None:
            out, tout = split(tree, out, bnp.reshape), split(tree, tout, bnp.reshape)
        return (out, tout) + ((aux[0],) if has_aux else ())
    if tape.custom:                 # a user's rule in it: by the plain jvp's path for that
        return _jvp(of_argnums, diff, ordered, True, has_aux)

    def run(tape):
        tree = cache.trees.get(tape)
        state = tape.state()
        state.write(sig.diff + sig.data)
        _write_tangents(tape, state, [t for k in order for t in per[k]])
        state.run(layout.MODE_JVP)
        out = (_out(tape, tree, state, "val"), _out(tape, tree, state, "grad"))
        return out + (tape.aux_values(state),) if has_aux else out
    return cache.guarded(tape, sig, cache.argnums, primals, {}, run)


def _jvp(f, primals, tangents, with_value, has_aux=False):
    """jvp; without the output's value (None) unless ``with_value`` (hvp needs only J v);
    with has_aux, the triple (value, tangent, aux)."""
    if not isinstance(primals, (tuple, list)):
        raise InputError(at_user_site(
            f"jvp: primals must be a tuple of the function's arguments, got "
            f"{type(primals).__name__}: write bn.jvp(f, (x,), (v,))"))
    primals = tuple(primals)
    cache = _jvp_cache(f, len(primals), has_aux)
    # plain float arrays of a signature already traced (a Newton or CG loop calls hvp and
    # jvp many times): their tape is run directly, without the checks and the signature
    # that the general path repeats on every call (8 of its 12 us at n = 10)
    key = _plain_key(primals, tangents)
    if cache.captures is not None:
        cache.fresh()                  # a value f reads was rebound: traced again
    found = cache.plain.get(key) if key is not None else None
    if found is not None and found[0].guards is not None:
        # a tape with Python decisions: its run checks them (state.run raises GuardError),
        # and a decision that went the other way takes the general path, which finds or
        # traces the variant of these arguments
        try:
            return _run_plain(found, primals, tangents, with_value, has_aux)
        except GuardError as e:
            if e.tape is not found[0]:
                raise
            found = None
    if found is None:
        tangents = _check_tangents(primals, tangents)
        tape, sig, _, builder = cache.tape_or_builder(primals, {})
        if builder is not None:                    # inside another trace: run in it
            aux = []                      # nested.jvp calls f once
            out, tout = nested.jvp(builder, functools.partial(cache.f.primary, aux=aux),
                                      primals, tangents)
            tree = cache.f.take()
            if tree is not None:
                out, tout = split(tree, out, bnp.reshape), split(tree, tout, bnp.reshape)
            return ((out if with_value else None), tout) + ((aux[0],) if has_aux else ())
        leaves = sig.diff + sig.data
        tree = cache.trees.get(tape)
        if tape.custom:                            # a user's rule in it: jvp as traced ops
            return _jvp_by_ops(f, tape, tree, primals, tangents, with_value, has_aux)
        plain = key is not None and len(cache.plain) < CACHE_SIZE
    else:
        return _run_plain(found, primals, tangents, with_value, has_aux)

    def run(tape):
        tree = cache.trees.get(tape)
        state = tape.state()
        state.write(leaves)
        _write_tangents(tape, state, tangents)
        state.run(layout.MODE_JVP)
        if plain and not tape.draws:   # the variant that ran (its decisions held) serves the
            cache.plain[key] = tape, tree     # next call of these shapes
        out = (_out(tape, tree, state, "val") if with_value else None,
               _out(tape, tree, state, "grad"))
        return out + (tape.aux_values(state),) if has_aux else out
    return cache.guarded(tape, sig, cache.argnums, primals, {}, run)


def _ops_cache(f, kind, nprimals, has_aux, make):
    """A TapeCache of ``make(Outputs(f, has_aux))``, kept per function: the derivative of a
    tape with a user's rule in it, traced as ops (transforms/custom.py) and run forward."""
    def new():
        return TapeCache(make(Outputs(f, has_aux)), tuple(range(nprimals)), has_aux,
                         need_scalar=False)
    return _CACHES.get(f, (kind, nprimals, has_aux), new)


def _jvp_by_ops(f, tape, tree, primals, tangents, with_value, has_aux):
    """jvp of a function whose tape holds a user's rule: the value and tangent traced as
    ops (nested.jvp, which calls the rule) into one vector, run forward."""
    n = len(primals)

    def make(outputs):
        def value_and_tangent(*args):
            b = builder_of([x for a in args for x in flatten(a)[0]])
            aux = []
            out, tout = nested.jvp(b, functools.partial(outputs.primary, aux=aux), args[:n],
                                   args[n:])
            outputs.take()
            flat = bnp.concatenate([bnp.reshape(out, (-1,)), bnp.reshape(tout, (-1,))])
            return (flat, aux[0]) if has_aux else flat
        return value_and_tangent

    ops = _ops_cache(f, "jvp by ops", n, has_aux, make)
    args = tuple(primals) + tuple(np.asarray(t, dtype=tape.dtype) for t in tangents)
    otape, osig, argnums = ops.tape_for(args, {})

    def run(otape):                       # the variant whose decisions hold here
        state = otape.state()
        Y = otape.run_forward(osig.diff + osig.data, state)
        m = Y.size // 2
        out = (_shaped(tape, tree, Y[:m]) if with_value else None, _shaped(tape, tree, Y[m:]))
        return out + (otape.aux_values(state),) if has_aux else out
    return ops.guarded(otape, osig, argnums, args, {}, run)


def _vjp_by_ops(f, tape, primals, has_aux):
    """The pullback of a function whose tape holds a user's rule: its vjp traced as ops
    (nested.vjp, which calls the rule), run forward; the flat gradient of the primals."""
    n = len(primals)

    def make(outputs):
        def pulled(*args):
            b = builder_of([x for a in args for x in flatten(a)[0]])
            _, pull = nested.vjp(b, functools.partial(outputs.primary, aux=[]), args[:n])
            outputs.take()
            cts = [x for ct in pull(args[n]) for x in flatten(ct)[0]]
            flat = bnp.concatenate([bnp.reshape(c, (-1,)) for c in cts])
            return (flat, None) if has_aux else flat
        return pulled

    ops = _ops_cache(f, "vjp by ops", n, has_aux, make)

    def pull(seed, drawn=None):
        args = tuple(primals) + (np.asarray(seed, tape.dtype),)
        otape, osig, argnums = ops.tape_for(args, {})

        def run(otape):                   # the variant whose decisions hold here
            if drawn is None:
                return otape.run_forward(osig.diff + osig.data)
            # f's random draws, in f's order, are the pull-back tape's too: it runs on the
            # value's numbers (``drawn``), drawing none
            if [d.shape for d in otape.draws] != [d.shape for d in tape.draws]:
                raise RandomSourceError(at_user_site(
                    "vjp of a function with a custom derivative rule: its random draws "
                    "differ between two traces, so the pull-back cannot reuse the value's "
                    "numbers"))
            state = otape.state()
            state.write(osig.diff + osig.data, drawn)
            state.run(layout.MODE_FORWARD)
            return state.read(otape.out, otape.out_shape)
        return ops.guarded(otape, osig, argnums, args, {}, run)
    return pull


def _run_plain(found, primals, tangents, with_value, has_aux):
    """jvp of plain float arrays, by the (tape, tree) found for their shapes and dtypes."""
    tape, tree = found
    # each primal is its one leaf, written through views of this thread's state that are
    # prepared once (hvp of Rosenbrock, n = 1000: 16.9 -> 13.4 us)
    state = tape.state()
    into_x, into_t, value, tangent = _prepared(state, _PLAIN_VIEWS, _plain_views)
    for dst, x in zip(into_x, primals):
        dst[...] = x
    for dst, t in zip(into_t, tangents):
        dst[...] = t
    if with_value or has_aux:
        state.run(layout.MODE_JVP)
        out = (_shaped(tape, tree, value) if with_value else None, _shaped(tape, tree, tangent))
        return out + (tape.aux_values(state),) if has_aux else out
    state.run(_prepared(state, _LEAN_MODE, _lean_mode))
    return None, _shaped(tape, tree, tangent)


def _prepared(state, key, make):
    """``state.views[key]``, made by ``make(tape, state)`` on first use (per thread)."""
    got = state.views.get(key)
    if got is None:
        got = state.views[key] = make(state.tape, state)
    return got


_PLAIN_VIEWS = object()        # the key of the plain path's views in a State's ``views``
_LEAN_MODE = object()          # and of the mode that sweeps tangents without the value


def _lean_mode(tape, state):
    """MODE_JVP_LEAN for a tape whose tangent sweep leaves some values unread, with the
    state's control block widened to hold the nodes to evaluate; else MODE_JVP."""
    read = _tangent_reads(tape)
    if read is None:
        return layout.MODE_JVP
    C = np.zeros(layout.CSIZE + tape.n, np.int64)
    C[:layout.CSIZE] = state.C[:layout.CSIZE]
    C[layout.CSIZE:] = read
    state.C = C
    state.call = tape.kernel.caller(tape.I, state.F, C, nogil=tape.nogil)
    if state.holds is not None:                  # the guards, on the new caller
        state.holds = state._guard_check()
    return layout.MODE_JVP_LEAN


def _tangent_reads(tape):
    """Per node, 1 when a tangent sweep reads its value, directly or through the forward of
    a value it reads; else 0. A map row's derivative rule reads the values it takes (a, b,
    y) for an operand with a tangent; a block row's jvp, what its ``tangent_reads`` says
    (kernels/ops.py: by default its own value and scratch, so its forward runs, and its
    operands'). An hvp's tape (the gradient's: a forward and its reverse sweep, traced as
    ops) reads few: the reverse half is linear in the upstream gradient, and in Rosenbrock's
    9 of 21 values went unread. None when every value is read."""
    from types import SimpleNamespace
    n, op, a0, a1, need = tape.n, tape.op, tape.a0, tape.a1, tape.need
    arrays = SimpleNamespace(op=op, a0=a0, a1=a1, pp=tape.pp, params=tape.P,
                             off=np.asarray(tape.off, np.int64), shapes=tape.shapes)
    read = np.zeros(n, np.int64)
    for j in range(n):
        row = ROWS[op[j]]
        if not need[j] or row.kind == "leaf":
            continue
        if row.kind != "map":
            if row.tangent_reads == "cross":
                read[a1[j]] |= need[a0[j]] != 0
                read[a0[j]] |= need[a1[j]] != 0
            elif row.tangent_reads != "":        # None: the safe default
                read[j] = 1
            continue
        for slot, operand in (("da", a0[j]), ("db", a1[j])):
            fn = getattr(row, slot)
            if fn is None or operand < 0 or not need[operand]:
                continue
            params = rules.read(fn, row.name, slot, row.arity).params
            for name, node in (("a", a0[j]), ("b", a1[j]), ("y", j)):
                if name in params:
                    read[node] = 1
    if tape.guards is not None:          # the decisions' values, which every run checks
        read[tape.guards[0]] = 1
    # the values those values are computed from (tape order is execution order)
    for j in range(n - 1, -1, -1):
        if read[j] and ROWS[op[j]].kind != "leaf":
            read[operands(arrays, j)] = 1
    computed = [ROWS[o].kind != "leaf" for o in op]
    return None if all(read[computed]) else read


def _plain_views(tape, state):
    """(each differentiated input's slice of the values, of the tangents; the output's slice
    of the values, of the tangents), shaped as traced (flat for a tree of outputs)."""
    slots = tape.in_slots[:tape.n_diff]
    o, e = int(tape.off[tape.out]), int(tape.off[tape.out + 1])
    out_shape = tape.out_shape or (1,)
    return ([state.val[start:start + size].reshape(shape) for start, size, shape, _ in slots],
            [state.grad[start:start + size].reshape(shape) for start, size, shape, _ in slots],
            state.val[o:e].reshape(out_shape), state.grad[o:e].reshape(out_shape))


def _shaped(tape, tree, data):
    """The output's slice as _out gives it: a float for a scalar output, else a copy."""
    if tree is None:
        if tape.out_shape == ():
            return float(data[0])
        return data.copy() if data.shape == tape.out_shape else data.reshape(tape.out_shape).copy()
    return split(tree, data, copied)


def _plain_key(primals, tangents):
    """``((shape, dtype) per primal)`` when every primal is a float ndarray with an ndarray
    tangent of its shape (and debug_nans is off); else None: the general path."""
    if SWITCH.on or type(tangents) not in (tuple, list) or len(tangents) != len(primals):
        return None
    key = ()
    for x, t in zip(primals, tangents):
        if type(x) is not np.ndarray or type(t) is not np.ndarray or t.shape != x.shape:
            return None
        dtype = x.dtype
        if dtype.kind != "f":
            return None
        key += ((x.shape, dtype),)
    return key


def vjp(f, *primals, has_aux=False):
    """Return ``(f(*primals), vjp_fun)``, as ``jax.vjp``.

    ``vjp_fun(cotangent)`` returns the tuple of ``cotangent . df/dprimal`` for every primal,
    each shaped like its primal. The output may be any shape, or a tuple, list or dict of
    arrays; the cotangent has its shape and structure. With ``has_aux``, ``f`` returns
    ``(output, aux)`` and vjp ``(output, vjp_fun, aux)``. ``f`` is traced once per
    signature (its tapes are kept per function, as jvp's), so a loop of vjp calls runs the
    tape without tracing again.

    >>> import burnumba as bn, numpy as np
    >>> y, pull = bn.vjp(lambda x: np.sin(x) * 2.0, np.array([0.1, 0.2]))
    >>> pull(np.ones(2)).__len__()
    1
    """
    argnums = tuple(range(len(primals)))
    cache = _CACHES.get(f, ("vjp", len(primals), has_aux),
                        lambda: _OutputsCache(Outputs(f, has_aux), argnums, False))
    tape, sig, _, builder = cache.tape_or_builder(primals, {})
    if builder is not None:                        # inside another trace: run in it
        aux = []                                   # nested.vjp calls f once
        out, pull = nested.vjp(builder, functools.partial(cache.f.primary, aux=aux),
                                  primals)
        tree = cache.f.take()
        if tree is not None:
            out = split(tree, out, bnp.reshape)
            pull = functools.partial(lambda pull, ct: pull(flat_cotangent(tree, ct)), pull)
        return (out, pull) + ((aux[0],) if has_aux else ())
    leaves = sig.diff + sig.data
    # the variant whose decisions hold at these primals: the pullback runs that one
    value = cache.guarded(tape, sig, argnums, primals, {},
                          lambda t: (t, t.run_forward(leaves)))
    tape, value = value
    tree = cache.trees.get(tape)
    aux = tape.aux_values(tape.state()) if has_aux else None
    # the pull-back runs on this call's random draws (the ones the value used), drawing none
    drawn = tape.state().drawn() if tape.draws else None
    by_ops = _vjp_by_ops(f, tape, primals, has_aux) if tape.custom else None
    if tree is not None:
        value = split(tree, value, copied)
    out_shape = tape.out_shape

    def vjp_fun(cotangent):
        if tree is not None:
            cotangent = flat_cotangent(tree, cotangent)
        seed = np.asarray(cotangent, dtype=np.float64)
        if seed.shape != out_shape:
            raise ShapeError(f"vjp: the cotangent has shape {seed.shape}, but the output has "
                             f"shape {out_shape}")
        # the forward runs again with this call's leaves: another vjp of the same tape on
        # this thread may have run in between
        grads = tape.split_grads(tape.run_vjp(leaves, seed, drawn) if by_ops is None
                                 else by_ops(seed, drawn))
        out, pos = [], 0
        for k in argnums:
            n = len(sig.kinds[k])
            out.append(unflatten(sig.treedefs[k], grads[pos:pos + n]))
            pos += n
        return tuple(out)

    return (value, vjp_fun, aux) if has_aux else (value, vjp_fun)


def linearize(f, *primals, has_aux=False):
    """``(f(*primals), f_jvp)``, as ``jax.linearize``: ``f_jvp(*tangents)`` is the Jacobian-
    vector product at ``primals``, which reuses the forward values: each call is one tangent
    sweep. ``f_jvp`` may be called from several threads (each computes the forward once).
    With ``has_aux``, ``f`` returns ``(output, aux)`` and linearize ``(output, f_jvp, aux)``.
    Inside another transformation's trace, each ``f_jvp`` call traces a jvp into it.

    >>> import burnumba as bn, numpy as np
    >>> y, f_jvp = bn.linearize(lambda x: np.exp(x) * x, np.array([0.0, 1.0]))
    >>> f_jvp(np.array([1.0, 0.0]))
    array([1., 0.])
    """
    cache = _jvp_cache(f, len(primals), has_aux)
    tape, sig, _, builder = cache.tape_or_builder(primals, {})
    if builder is not None:
        # inside another trace: the value is f traced there, and each f_jvp call emits a jvp
        # into that trace (the forward's nodes again: correct, without their reuse)
        out = cache.f(*primals)                    # checks has_aux's pair, flattens
        value, aux = out if has_aux else (out, None)
        tree = cache.f.take()
        if tree is not None:
            value = split(tree, value, bnp.reshape)

        def traced_jvp(*tangents):
            return _jvp(f, primals, tangents, False, has_aux)[1]
        return (value, traced_jvp, aux) if has_aux else (value, traced_jvp)
    leaves = sig.diff + sig.data
    if tape.custom:                 # a user's rule in it: each f_jvp call a jvp by ops
        tape, value = cache.guarded(tape, sig, cache.argnums, primals, {},
                                    lambda t: (t, t.run_forward(leaves)))
        tree = cache.trees.get(tape)
        value = split(tree, value, copied) if tree is not None else value
        aux = tape.aux_values(tape.state())

        def by_ops(*tangents):
            return _jvp(f, primals, tangents, False, has_aux)[1]
        return (value, by_ops, aux) if has_aux else (value, by_ops)
    local = threading.local()
    # the variant whose decisions hold at these primals (its forward checks its guards)
    tape = cache.guarded(tape, sig, cache.argnums, primals, {},
                         lambda t: (t, t.run_forward(leaves))[0])

    def forward_state():
        state = getattr(local, "state", None)
        if state is None:
            state = local.state = tape.new_state()
            state.write(leaves)
            state.run(layout.MODE_FORWARD)
        return state

    tree = cache.trees.get(tape)
    value = _out(tape, tree, forward_state(), "val")
    aux = tape.aux_values(forward_state())

    def f_jvp(*tangents):
        flat = _check_tangents(primals, tangents)
        state = forward_state()
        _write_tangents(tape, state, flat)
        state.run(layout.MODE_TANGENT)
        return _out(tape, tree, state, "grad")

    return (value, f_jvp, aux) if has_aux else (value, f_jvp)


def _blocks(J, tree, out_shape, in_shapes, reshape):
    """J (output elements x differentiated input elements) cut into blocks: one list per
    output leaf (one leaf, of ``out_shape``, when ``tree`` is None), holding per input leaf
    the block shaped output leaf shape + input leaf shape."""
    rows, r = [], 0
    for shape in ([out_shape] if tree is None else tree[1]):
        m, c, blocks = math.prod(shape), 0, []
        for ishape in in_shapes:
            size = math.prod(ishape)
            blocks.append(reshape(J[r:r + m, c:c + size], tuple(shape) + tuple(ishape)))
            c += size
        rows.append(blocks)
        r += m
    return rows


def _per_output(tree, parts):
    """The per-output results in the output's structure (as jax: outputs outside, argnums
    inside), or the one output's."""
    return parts[0] if tree is None else unflatten(tree[0], parts)


def _jacobian_parts(tape, tree, sig, argnums, single, J):
    """Split J into one Jacobian per output leaf and argnum, each shaped output leaf shape +
    argument leaf shape, in the arguments' and the output's pytrees."""
    def reshape(block, shape):
        block = block.reshape(shape)
        return float(block) if block.shape == () else block
    shapes = [shape for _, _, shape, _ in tape.in_slots[:tape.n_diff]]
    return _per_output(tree, [regroup(leaves, sig, argnums, single) for leaves in
                              _blocks(J, tree, tape.out_shape, shapes, reshape)])


def _by_tangents(tape, state):
    """J by one tangent sweep per input element (the forward runs once)."""
    n_in = tape.n_diff_elems
    o, e = int(tape.off[tape.out]), int(tape.off[tape.out + 1])
    J = np.empty((e - o, n_in), dtype=tape.dtype)
    for k in range(n_in):
        state.grad[:n_in] = 0.0
        state.grad[k] = 1.0
        state.run(layout.MODE_JVP if k == 0 else layout.MODE_TANGENT)
        J[:, k] = state.grad[o:e]
    return J


def _by_cotangents(tape, state):
    """J by one backward sweep per output element (the forward runs once)."""
    n_in = tape.n_diff_elems
    o, e = int(tape.off[tape.out]), int(tape.off[tape.out + 1])
    J = np.empty((e - o, n_in), dtype=tape.dtype)
    state.run(layout.MODE_FORWARD)
    state.C[layout.C_LO], state.C[layout.C_HI] = 0, tape.out + 1
    for r in range(e - o):
        state.grad[:e] = 0.0
        state.grad[o + r] = 1.0
        state.run(layout.MODE_STEP_BACKWARD)
        J[r] = state.grad[:n_in]
    return J


# jacfwd pushes every input direction forward at once (one traced tape whose tangents carry
# a batch axis, so matrix-vector products become matrix-matrix products) when there are at
# most BATCH_DIRECTIONS of them and the batched tangents hold at most BATCH_VALUES values
# (32 MB in float64); beyond, one tangent sweep per direction in constant memory.
BATCH_DIRECTIONS = 512
BATCH_VALUES = 1 << 22


def _tangent_values(tape):
    """The values of the nodes that carry a tangent (those an input reaches)."""
    sizes = np.diff(np.asarray(tape.off, dtype=np.int64))
    return int(sizes[np.asarray(tape.need, dtype=bool)].sum())


def _jacobian(f, argnums, how, has_aux):
    if how not in ("fwd", "rev", "auto"):
        raise InputError(f"jacobian: mode must be 'fwd', 'rev' or 'auto', got {how!r}")
    outputs = Outputs(f, has_aux)
    cache = _OutputsCache(outputs, argnums, forward_mode=how != "rev")

    def matrix(*args):
        """J as one traced (m, n) matrix: every direction pushed forward at once."""
        b = builder_of([x for a in args for x in flatten(a)[0]])
        return nested.jacobian_matrix(b, outputs.primary, args,
                                         _positive(cache.argnums, len(args)), "fwd")[0]
    batched = TapeCache(matrix, argnums, need_scalar=False)
    # per tape, decided once: (forward?, its batched tape or None); both tapes are keyed by
    # the same signature, so this call's leaves are the batched tape's inputs too
    plans = weakref.WeakKeyDictionary()

    def plan(tape, args, kwargs):
        m = int(np.prod(tape.out_shape, dtype=np.int64))
        forward = how == "fwd" or (how == "auto" and tape.n_diff_elems <= m)
        btape = None
        if tape.custom:             # a user's rule in it: the Jacobian as traced ops
            if kwargs:
                raise InputError(at_user_site(
                    "jacobian: a function with a custom derivative rule takes its "
                    "arguments by position here"))
            btape = batched.tape_for(args, kwargs)[0]
        elif forward and not kwargs and tape.n_diff_elems <= BATCH_DIRECTIONS and \
                tape.n_diff_elems * _tangent_values(tape) <= BATCH_VALUES:
            try:
                btape = batched.tape_for(args, kwargs)[0]
            except UnsupportedOpError:
                # the derivative as traced ops refused an operand (gammainc_da's or
                # betainc_da's a: the batched tape's inputs are differentiable, so a second
                # derivative in it looks possible): the tangent sweeps of f's own tape, whose
                # compiled rows give every first derivative, one direction at a time
                btape = None
        plans[tape] = forward, btape
        return forward, btape

    # the last batched call: (its ArgsMatch, tape, signature, argnums, batched tape). Arguments
    # that match it (a Newton loop's new iterate) skip the signature and the cache lookup
    last = [None]

    @functools.wraps(f)
    def jacobian_fn(*args, **kwargs):
        hit = last[0]
        if hit is not None and not kwargs and not SWITCH.on:
            leaves = hit[0](args)
            if leaves is not None:
                _, tape, sig, resolved, btape = hit
                try:
                    J = btape.run_forward(leaves)
                except GuardError as e:
                    # one of f's decisions went the other way (the batched tape was traced
                    # through f, so it holds f's decisions, the same as the tape's): the
                    # general path below finds or traces the variant of these arguments
                    if e.tape is not btape:
                        raise
                else:
                    return _jacobian_parts(tape, cache.trees.get(tape), sig, resolved,
                                           cache.single, J)
        tape, sig, resolved, builder = cache.tape_or_builder(args, kwargs)
        if builder is not None:                    # inside another trace: run in it
            aux = []                      # jacobian_matrix calls f once
            J, out_shape, shapes, groups = nested.jacobian_matrix(
                builder, functools.partial(outputs.primary, aux=aux), args,
                _positive(cache.argnums, len(args)), how)
            tree = outputs.take()
            J = _per_output(tree, [nested.into_layout(parts, groups, cache.single) for parts
                                   in _blocks(J, tree, out_shape, shapes, bnp.reshape)])
            return (J, aux[0]) if has_aux else J
        return cache.guarded(tape, sig, resolved, args, kwargs,
                             lambda t: run(t, sig, resolved, args, kwargs))

    def run(tape, sig, resolved, args, kwargs):
        forward, btape = plans.get(tape) or plan(tape, args, kwargs)
        state = None
        leaves = sig.diff + sig.data
        if btape is not None:
            if btape.guards is None and tape.guards is None:
                J = btape.run_forward(leaves)
                if not has_aux and not kwargs and not SWITCH.on:
                    last[0] = (ArgsMatch(sig), tape, sig, resolved, btape)
            else:
                # Python decisions: the tape's own guards first (its branch decides the
                # output's structure), then the batched tape's variant for these arguments
                tape.run_forward(leaves)
                ran = []
                J = batched.guarded(btape, sig, resolved, args, kwargs,
                                    lambda t: (ran.append(t), t.run_forward(leaves))[1])
                if not has_aux and not kwargs and not SWITCH.on:
                    last[0] = (ArgsMatch(sig), tape, sig, resolved, ran[-1])
        else:
            state = tape.state()
            state.write(leaves)
            J = (_by_tangents if forward else _by_cotangents)(tape, state)
        J = _jacobian_parts(tape, cache.trees.get(tape), sig, resolved, cache.single, J)
        if not has_aux:
            return J
        if state is None:                     # the aux values need the tape's forward
            state = tape.state()
            state.write(leaves)
            state.run(layout.MODE_FORWARD)
        return J, tape.aux_values(state)

    jacobian_fn.tapes = cache.tapes
    jacobian_fn.batched_tapes = batched.tapes
    return jacobian_fn


def jacfwd(f, argnums=0, has_aux=False):
    """The Jacobian of ``f`` with respect to the arguments ``argnums``, column by column in
    forward mode (one tangent sweep per input element), as ``jax.jacfwd``. Its shape is the
    output's shape followed by the argument's. Several argnums give a tuple of Jacobians; a
    tuple, list or dict of outputs gives one entry per output, each holding the Jacobians
    by the argnums (JAX's nesting: outputs outside, arguments inside). With ``has_aux``,
    ``f`` returns ``(output, aux)`` and the result is ``(jacobian, aux)``, as in JAX.

    >>> import burnumba as bn, numpy as np
    >>> bn.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    return _jacobian(f, argnums, "fwd", has_aux)


def jacrev(f, argnums=0, has_aux=False):
    """The Jacobian of ``f``, row by row in reverse mode (one backward sweep per output
    element), as ``jax.jacrev``."""
    return _jacobian(f, argnums, "rev", has_aux)


def jacobian(f, argnums=0, has_aux=False, *, argnum=None):
    """The Jacobian of ``f``, in forward mode when the differentiated inputs have at most as
    many elements as the output (fewer sweeps), else in reverse mode: the choice JAX's users
    are taught to make between jacfwd and jacrev. ``argnum`` is autograd's name for
    ``argnums``."""
    return _jacobian(f, argnums_of(argnums, argnum), "auto", has_aux)


def elementwise_grad(f, argnums=0, *, argnum=None):
    """The gradient of ``sum(f(x))``, as ``autograd.elementwise_grad``: for an ``f`` that
    acts elementwise, the derivative of each output element with respect to its input.

    >>> import burnumba as bn, numpy as np
    >>> bn.elementwise_grad(np.tanh)(np.array([0.0, 1.0]))     # 1 - tanh(x) ** 2
    array([1.        , 0.41997434])
    """

    @functools.wraps(f)
    def summed(*args, **kwargs):
        return bnp.sum(f(*args, **kwargs))
    return grad(summed, argnums=argnums_of(argnums, argnum))


def hessian(f, argnums=0, has_aux=False, *, argnum=None):
    """The Hessian of scalar ``f``: ``jacfwd(jacrev(f))``, as ``jax.hessian``. The gradient
    is traced once, as traced ops (its backward sweep becomes part of the tape); each column
    of the Hessian is then one tangent sweep over that tape. Its shape is the argument's
    shape twice. With several argnums it is JAX's nested tuple of blocks: ``H[i][j]`` is
    the derivative of the gradient by argument i with respect to argument j. With
    ``has_aux``, ``f`` returns ``(value, aux)`` and the result is ``(hessian, aux)``.

    >>> import burnumba as bn, numpy as np
    >>> bn.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    argnums = argnums_of(argnums, argnum)
    return jacfwd(jacrev(f, argnums, has_aux), argnums, has_aux)


def hvp(f, x=None, v=None):
    """The Hessian of scalar ``f`` at ``x`` times ``v``, without forming the Hessian: the
    tangent sweep, along ``v``, of the traced gradient (forward over reverse, as the JAX
    cookbook's ``jvp(grad(f), (x,), (v,))``). ``x`` and ``v`` have the same structure and
    shapes. The gradient's tape is traced once per function and signature.

    ``bn.hvp(f)`` is the curried form, ``(x, v) -> H v``, as autograd's ``hessian_vector_
    product(f)``: it holds ``f``, so an inline lambda is traced once, not on every call
    (a new lambda per ``bn.hvp(lambda ..., x, v)`` call is a new function to trace).

    >>> import burnumba as bn, numpy as np
    >>> bn.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    array([6., 0.])
    >>> hv = bn.hvp(lambda x: np.sum(x ** 3))
    >>> hv(np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    array([ 0., 12.])
    """
    if x is None and v is None:
        holder = _CACHES.get(f, "hvp", lambda: _Holder(grad(f)))

        @functools.wraps(f)
        def curried(x, v):
            return _hvp(holder, x, v)
        return curried
    if x is None or v is None:
        raise InputError(at_user_site(
            "hvp: give both x and v (bn.hvp(f, x, v)), or neither for the curried form "
            "bn.hvp(f)(x, v)"))
    return _hvp(_CACHES.get(f, "hvp", lambda: _Holder(grad(f))), x, v)


def _hvp(holder, x, v):
    """H v by the holder's gradient (the function's entry in _CACHES)."""
    # plain float arrays of a signature already traced (Newton-CG calls hvp in a loop):
    # straight to the jvp's tape, without the general path's second cache lookup and its
    # key (about 1 us of Rosenbrock's 8 us at n = 1000)
    plain = holder.plain
    if plain is None:          # the jvp cache of the gradient, as _jvp finds it (not made
        gradient = holder.value          # in the holder's constructor: _CACHES holds its lock)
        holder.cache = _jvp_cache(gradient, 1, False)
        plain = holder.plain = holder.cache.plain
    caps = holder.cache.captures
    if caps is not None:               # a value f reads was rebound: traced again
        try:
            if not caps.same():
                holder.cache.fresh()
        except GONE:
            holder.cache.fresh()
    if type(x) is np.ndarray and type(v) is np.ndarray and v.shape == x.shape and not SWITCH.on:
        found = plain.get(((x.shape, x.dtype),))
        if found is not None:
            state = found[0].state()
            run = state.views.get(_HVP_RUN)
            if run is None:
                run = state.views[_HVP_RUN] = _hvp_run(found, state)
            if found[0].guards is None:
                return run(x, v)
            try:
                return run(x, v)
            except GuardError as e:      # a decision went the other way: the general path
                if e.tape is not found[0]:
                    raise
    return _jvp(holder.value, (x,), (v,), False)[1]


_HVP_RUN = object()            # the key of hvp's prepared run in a State's ``views``


def _hvp_run(found, state):
    """hvp's run of its jvp tape on this thread's state: _run_plain without the value,
    its views and mode bound once (the Python around the kernel: 3.3 -> 2.4 us)."""
    tape, tree = found
    if tree is not None or state.guard is not None or tape.out_shape == ():
        return lambda x, v: _run_plain(found, (x,), (v,), False, False)[1]
    (into_x,), (into_t,), _, tangent = _prepared(state, _PLAIN_VIEWS, _plain_views)
    mode = _prepared(state, _LEAN_MODE, _lean_mode)          # may give the state a new C
    call, C = state.call, state.C
    holds = state.holds

    def run(x, v):
        into_x[...] = x
        into_t[...] = v
        value = call(mode)
        if holds is not None and not holds() and not state.unguarded:
            state.check_guards()          # GuardError: _jvp's general path takes over
        if value != value and C[layout.C_ERR]:
            state.raise_error()
        return tangent.copy()
    return run


class _Holder:
    """hvp's cache entry: the gradient of f (weakly referenceable, as a cache entry must
    be), and the (tape, tree) of its jvp by plain argument (its jvp cache's ``plain``)."""

    def __init__(self, gradient):
        self.value = gradient
        self.cache = self.plain = None
