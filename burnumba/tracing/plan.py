"""The call path for arguments shaped exactly like the ones a tape was traced with.

Training loops call a transformed function again and again with new arrays of the same
shapes. Rebuilding the full signature (flatten, treedefs, a hashable key) and splitting the
gradient leaf by leaf costs tens of microseconds in Python, more than the njit kernel of a
small model. A plan checks each leaf against what was traced while extracting it, and
builds the gradient pytree from slices fixed in advance. Any mismatch returns None, and
the caller takes the general path, which retraces or finds another tape.
"""
import struct

import numpy as np

from ..kernels import layout
from .pytree import ArgLeaves, unflatten

FORWARD, ERR = layout.MODE_FORWARD, layout.C_ERR

# Python ints below 2**24 in magnitude are data (exact in a float32 tape as in a float64
# one); larger ones stay static, part of the cache key, as before
INT_DATA = 2 ** 24


def is_int_data(x):
    """Whether x is a Python int (not a bool, not a subclass) that is a tape input: where the
    function turns it into a shape, an index, a range or a branch, a guard covers it."""
    return type(x) is int and -INT_DATA < x < INT_DATA

DIFF, DATA, STATIC = 0, 1, 2


class ArgsMatch:
    """``match(args)``: the leaves of ``args`` in tape-input order (differentiated, then
    data) if they fit the signature ``sig`` (its structure, each leaf's type, shape and
    dtype, the static values), else None. Each leaf is checked as it is taken. Plain numpy
    arrays and Python floats only: anything else (a numpy scalar, a subclass) does not match,
    and the caller takes the general path."""

    def __init__(self, sig):
        nargs = len(sig.treedefs)
        expect = []
        for part, kinds in zip(sig.key[:nargs], sig.kinds):
            leaf_sigs = (float,) if part is float else part[1]     # a float: DIFF or DATA
            for kind, s in zip(kinds, leaf_sigs):
                expect.append((kind, s))
        self.expect = expect
        self.leaves_of = ArgLeaves(sig.treedefs)
        # the leaves come in the tape's input order already (differentiated ones first, no
        # static one): match returns them as they are
        kinds = [kind for kind, _ in expect]
        self.in_order = STATIC not in kinds and kinds == sorted(kinds)
        # one argument that is one array (a solver's x): its (shape, dtype), checked first
        self.one = expect[0][1] if (nargs == 1 and sig.treedefs[0] is None and kinds == [DIFF]
                                    and isinstance(expect[0][1], tuple)) else None

    def __call__(self, args):
        one = self.one
        if one is not None and len(args) == 1:
            x = args[0]
            if type(x) is np.ndarray and x.shape == one[0] and x.dtype is one[1]:
                return [x]
        leaves = self.leaves_of(args)
        if leaves is None:
            return None
        if self.in_order:
            for x, (_, s) in zip(leaves, self.expect):
                if s is float:
                    if type(x) is not float:
                        return None
                elif s is int:
                    if not is_int_data(x):
                        return None
                elif type(x) is not np.ndarray or x.shape != s[0] or (
                        x.dtype is not s[1] and x.dtype != s[1]):
                    return None
            return leaves
        diff, data = [], []
        for x, (kind, s) in zip(leaves, self.expect):
            if kind == STATIC:
                if type(x) is not s[0] or x != s[1]:
                    return None
                continue
            if s is float:
                if type(x) is not float:
                    return None
            elif s is int:
                if not is_int_data(x):
                    return None
            elif type(x) is not np.ndarray or x.shape != s[0] or (
                    x.dtype is not s[1] and x.dtype != s[1]):    # builtin dtypes: identity
                return None
            (diff if kind == DIFF else data).append(x)
        return diff + data


class CallPlan:
    def __init__(self, tape, sig, argnums, single, with_value, has_aux):
        self.tape = tape
        self.match = ArgsMatch(sig)   # (leaves in tape-input order) if args fit, else None
        # the gradient: per argnum in argnums order, (treedef, [leaf slots]); a run state
        # turns the slots into shaped windows on its grad buffer once (``views``), which
        # every call copies out
        slots = list(range(tape.n_diff))
        by_position, pos = {}, 0
        for k in sorted(set(argnums)):
            n = len(sig.kinds[k])
            by_position[k] = (sig.treedefs[k], slots[pos:pos + n])
            pos += n
        self.outputs = [by_position[k] for k in argnums]
        self.single = single
        self.with_value = with_value
        self.has_aux = has_aux
        # grad(f)(x) of an array x (a leaf argument: one slot): the result is one copy, no
        # pytree to build
        self.one_array = (single and not has_aux and self.outputs[0][0] is None
                          and tape.in_slots[self.outputs[0][1][0]][2] != ())

    def views(self, state):
        """Per output argnum, (treedef, [(view, scalar, py)]): windows on this state's
        gradient buffer."""
        grad = state.grad
        slots = [(grad[start:start + size].reshape(shape), shape == (), py)
                 for start, size, shape, py in self.tape.in_slots[:self.tape.n_diff]]
        views = [(treedef, [slots[j] for j in leaves]) for treedef, leaves in self.outputs]
        state.views[self] = views
        return views

    def run(self, leaves):
        tape = self.tape
        state = tape.state()
        value = tape.run_value_and_grad(leaves, copy=False, state=state)
        return self.result(state, value, state.views.get(self) or self.views(state))

    def result(self, state, value, outputs):
        """The call's return: the gradients read from their views (``outputs``: per
        argument, its treedef and (view, scalar, Python float) slots), with the value and
        aux as the transformation returns them."""
        if self.one_array:                           # one argument, one array: its copy
            grads = outputs[0][1][0][0].copy()
            return (value, grads) if self.with_value else grads
        grads = []
        for treedef, slots in outputs:
            parts = [view.copy() if not scalar else (float(view) if py else view[()])
                     for view, scalar, py in slots]
            grads.append(parts[0] if treedef is None else unflatten(treedef, parts))
        grads = grads[0] if self.single else tuple(grads)
        if self.has_aux:
            aux = self.tape.aux_values(state)
            return ((value, aux), grads) if self.with_value else (grads, aux)
        return (value, grads) if self.with_value else grads


class ByOpsPlan(CallPlan):
    """The call plan of a tape that computes a value and its gradient as traced ops (the
    by-ops tape of a function with a user's derivative rule, transforms/custom.py): its
    output is one vector, the value then each differentiated leaf's gradient in tape-input
    order, so a call writes the leaves, runs the tape forward (its guards checked) and cuts
    the gradient out of the output node's slice, without building the signature again."""

    def views(self, state):
        tape = self.tape
        at = int(tape.off[tape.out])
        val = state.val
        slots = [(val[at + 1 + start:at + 1 + start + size].reshape(shape), shape == (), py)
                 for start, size, shape, py in tape.in_slots[:tape.n_diff]]
        views = (at, [(treedef, [slots[j] for j in leaves]) for treedef, leaves in self.outputs])
        state.views[self] = views
        return views

    def run(self, leaves):
        tape = self.tape
        state = tape.state()
        state.write(leaves)
        state.run(FORWARD)
        at, outputs = state.views.get(self) or self.views(state)
        value = float(state.val[at])                 # as the kernel's value_and_grad gives it
        return self.result(state, value, outputs)


def float_entry(run, n):
    """A scalar runner's entry (``run.entry``) in Python: None unless ``args`` is a tuple of
    ``n`` Python floats (the caller's general path takes it then), else ``run(args)``. The C
    extension's ``Fast`` does the same in one call."""
    def entry(args):
        if len(args) != n:
            return None
        for a in args:
            if type(a) is not float:
                return None
        return run(args)
    return entry


def scalar_by_ops(tape, order, with_value, single):
    """The scalar fast path of a by-ops tape (``ByOpsPlan``'s) when every argument is a
    differentiated Python float: one ``struct`` call writes them into the run's F, the
    kernel runs forward (its guards checked: a failed one raises GuardError) and one reads
    the output node's value and gradients back as Python floats. ``order[j]`` is the argument
    position of the j-th entry of argnums."""
    nd = tape.n_diff
    itemsize = tape.dtype.itemsize
    code = "d" if tape.dtype == np.float64 else "f"
    pack_into = struct.Struct(f"{nd}{code}").pack_into
    unpack_from = struct.Struct(f"{nd + 1}{code}").unpack_from
    at_in = itemsize * tape.n                        # F = imm[n] | val | grad
    at_out = itemsize * (tape.n + int(tape.off[tape.out]))
    identity = not single and list(order) == list(range(nd))
    first = order[0]

    guarded = tape.guards is not None
    local = tape._local

    def run(args):
        try:
            state = local.state
        except AttributeError:
            state = tape.state()
        mem = state.mem
        if mem is None:
            mem = state.mem = memoryview(state.F)
        pack_into(mem, at_in, *args)
        if state.guard is None:                      # State.run, inlined
            value = state.call(FORWARD)
            if guarded and not state.unguarded and not state.holds():
                state.check_guards()
            if value != value and state.C[ERR]:
                state.raise_error()
        else:
            state.run(FORWARD)
        out = unpack_from(mem, at_out)
        value, g = out[0], out[1:]
        if not identity:
            g = g[first] if single else tuple([g[k] for k in order])
        return (value, g) if with_value else g
    run.entry = float_entry(run, nd)
    return run
