"""The Tape (a traced function as a struct of numpy arrays) and the State of one run of it.

A Tape is immutable data once traced: ``I`` holds the columns (op, operands, parameters,
offsets) and ``F0`` the immediates and the constants' values. Everything a run writes
(values, gradients, the kernel's control block) lives in a ``State``: each thread that runs
a tape gets a State of its own, so any number of threads may call one tape (or one
transformed function) at once and each gets exactly the serial result, in parallel when the
tape is large enough for the kernel to release the GIL.
"""
import math
import operator
import struct
import threading

import numpy as np

from .. import kernels
from . import tapefile
from .checked import SWITCH, checked_run
from .loops import Runner
from .profile import profile_tape
from .._errors import (DataError, GuardError, InputError, NestedTrace, OutputError,
                      RandomSourceError, UnsupportedOpError, at_user_site, nested_unsupported)
from ..tracing.loops import nest
from ..tracing.concrete import (COMPARISONS, EXACT, FIRST_COMPARISON, INTEGER, NAN,
                                REFLECTED, TRUTH, describe, holds, holds_rows)
from ..tracing.plan import float_entry
from ..tracing.pytree import unflatten
from ..tracing.randomness import draw_into, generator_states, put_back
from ..tracing.signature import Signature, explain_mismatch, ints_static_in, structure
from ..kernels import ROWS, layout

# The modes whose run computes every guard node's value (MODE_JVP_LEAN: the nodes its
# tangent sweep reads, the guards' among them, transforms/forward._tangent_reads): a tape's
# guards are checked after them
CHECKED_MODES = frozenset((layout.MODE_FORWARD, layout.MODE_VALUE_AND_GRAD, layout.MODE_VJP,
                           layout.MODE_JVP, layout.MODE_JVP_LEAN))
# Up to this many guards are checked one by one; more, with one numpy expression
FEW_GUARDS = 16

# Tapes with at least this many values release the GIL while their kernel runs (a few tens
# of ns per call); below, the call is too short for another thread to gain anything.
NOGIL_VALUES = 256
# A tape with Python decisions and at least this many values after its last guard node
# runs the nodes up to that one first and checks its guards before the rest and the reverse
# sweep (State.run): a run on another branch's arguments (an alternating branch, a batch
# index that picks another variant) then costs that prefix, not a whole forward and reverse
# sweep. Below it, the one extra kernel call (about 0.3 us) is not worth it.
SPLIT_VALUES = 16384
_SPLIT_MODES = frozenset((layout.MODE_VALUE_AND_GRAD, layout.MODE_VJP))


def check_integer_data(x, dtype):
    """Integer data written into a float tape must be exact there (below 2**24 in float32)."""
    if x.dtype.kind in "iu" and x.size:
        exact = 2 ** 24 if dtype == np.float32 else 2 ** 53      # integers a float holds
        big = max(int(x.max()), -int(x.min()))
        if big >= exact:
            raise InputError(f"integer data up to {big} does not fit exactly in this {dtype} "
                             f"tape; use indices below {exact}")


def bad_index(tape, val, node):
    """'index 7 is out of bounds for size 4; ...': the first index of a take node (whose
    operand a1 holds the index values) outside -rows .. rows - 1."""
    rows = int(tape.P[tape.pp[node]])
    k = int(tape.a1[node])
    idx = val[int(tape.off[k]):int(tape.off[k + 1])]
    bad = idx[(idx < -rows) | (idx >= rows) | np.isnan(idx)]
    found = f"index {bad[0]:.0f} is out of bounds for size {rows}; " if bad.size else ""
    return (f"{found}indices must lie in -{rows} .. {rows - 1} (the length of the indexed "
            "axis; negative indices count from the end, as numpy's)")


def user_op_error(tape, node, code):
    """The exception for an njit_call node (a user's numba op, bn.njit_op) that reported
    an error."""
    op = tape.user_ops[int(tape.P[tape.pp[node]])][0]
    site = f"\n  traced at {tape.sites[node]}" if tape.sites else ""
    if code == layout.ERR_USER_RAISED:
        return DataError(
            f"bn.njit_op {op.name!r} (node %{node}): the user's numba function raised an "
            "exception inside the compiled run, or its vjp returned a cotangent whose size is "
            "not its argument's (numba does not say which); call the op's functions on these "
            f"values outside burnumba to see it{site}")
    return UnsupportedOpError(
        f"bn.njit_op {op.name!r} (node %{node}): this sweep needs a rule the op was not "
        "given: a gradient needs vjp=, a jvp needs jvp= (op.defvjp / op.defjvp)" + site)


# The modes that only evaluate values: all a tape with a user's derivative rule may run
_FORWARD_MODES = frozenset((layout.MODE_FORWARD, layout.MODE_STEP_FORWARD, layout.MODE_BATCH))


def _forward_only(call):
    """The kernel's caller for a tape holding a user's derivative rule (tape.custom): its
    own derivative sweeps would differentiate the rule's body instead of using the rule, so
    only the value modes run (the transformations compute such a tape's derivatives as
    traced ops, transforms/custom.py; debug_nans checks those as values)."""
    def forward(mode):
        if mode not in _FORWARD_MODES:
            raise UnsupportedOpError(at_user_site(
                "this tape holds a custom derivative rule (bn.custom_vjp, bn.custom_jvp, "
                "burnumba.extend.primitive, bn.custom_root, bn.fixed_point), which the "
                "compiled kernel's own derivative sweeps do not know: differentiate it "
                "with bn.grad, value_and_grad, jvp, vjp, linearize, the Jacobians, hessian, "
                "hvp, vmap or njit_value_and_grad, which compute its derivatives as traced "
                "ops, as do a Tape's value_and_grad and profile when bn.trace made it "
                "(bn.Trainer does not yet)"))
        return call(mode)
    return forward


class State:
    """One run's memory for a tape: ``F`` (immediates, values, gradients), ``C`` (the
    kernel's control block) and a caller of the tape's kernel on them. Not shared between
    threads: a Tape keeps one per thread, a Trainer owns one."""

    __slots__ = ("tape", "F", "C", "call", "val", "grad", "inputs", "views", "mem", "guard",
                 "unguarded", "split", "holds")

    def __init__(self, tape):
        self.tape = tape
        self.F = tape.F0.copy()
        self.C = kernels.engine.control_block(tape.dtype, tape.largest_product,
                                              tape.user_table)
        cols = layout.views(tape.I, self.F)
        self.val, self.grad = cols["val"], cols["grad"]
        self.call = tape.kernel.caller(tape.I, self.F, self.C, nogil=tape.nogil)
        # each input leaf's slice of val: a shaped view, or None for a scalar (set by item)
        self.inputs = [(start, self.val[start:start + size].reshape(shape) if shape else None)
                       for start, size, shape, _ in tape.in_slots]
        self.views = {}                 # per call plan: its gradient views into this state
        self.mem = None                 # a memoryview of F, for the scalar fast path
        self.guard = tape.blas_guard    # pins BLAS threads around the call, or None
        if tape.guards is not None:     # the guards' values are read through it
            self.mem = memoryview(self.F)
        # True for the first run of a tape just traced at these arguments: its branches are
        # the ones numpy decided, kept even where the kernel's value differs by an ulp
        self.unguarded = False
        # the node below which a run's decisions are checked first (SPLIT_VALUES), or 0
        self.split = tape.guard_split
        if tape.loops:                  # run step by step over the loops' node ranges
            self.call = Runner(tape, self.call, self.F, self.C, self.val, self.grad)
            self.split = 0
        if tape.custom:
            self.call = _forward_only(self.call)
            self.split = 0
        self.holds = None if tape.guards is None else self._guard_check()

    def _guard_check(self):
        """``holds()``: whether every guard holds for the values of the last run. The C
        caller checks them in one loop (40 ns); otherwise they are read here (0.3 us)."""
        tape, call = self.tape, self.call
        check = getattr(call, "guards_hold", None) if kernels.engine.has_guards_hold() else None
        if check is not None:           # the extension's caller (not a loop's or ctypes')
            call.set_guards(tape.n + tape.guard_pos, tape.guard_kinds, tape.guard_values,
                            tape.dtype == np.float32)
            return check
        read, expect, mem = tape.guard_read, tape.guard_expect, self.mem
        return lambda: read(mem) == expect

    def write(self, leaves):
        """Copy input leaves into their slices; scalars by item."""
        val, dtype = self.val, self.tape.dtype
        for (start, dst), x in zip(self.inputs, leaves):
            if dst is None:
                val[start] = x
                continue
            dst[...] = x
            if x.dtype.kind in "iu":                     # integer data: exact in the tape?
                check_integer_data(x, dtype)

    def draw(self):
        """The tape's random draws, drawn again from the user's generators (none for most
        tapes; ``DrawingState.write`` calls it)."""

    def run(self, mode):
        """Run the kernel; raise the error a node reported (its value is then NaN)."""
        if SWITCH.on:
            value = checked_run(self, mode)
            if self.tape.guards is not None and mode in CHECKED_MODES and not self.unguarded:
                self.check_guards()
            return value
        if self.split and mode in _SPLIT_MODES and not self.unguarded:
            return self._run_split(mode)
        value = self._call(mode)
        tape = self.tape
        if tape.guards is not None and mode in CHECKED_MODES and not self.unguarded and \
                not self.holds():
            self.check_guards()
        if value != value and self.C[layout.C_ERR]:
            self.raise_error()
        return value

    def _call(self, mode):
        if self.guard is None:
            return self.call(mode)
        with self.guard:
            return self.call(mode)

    def _run_split(self, mode):
        """``run`` of a gradient mode on a tape whose decisions come early (``split``): the
        nodes below ``split`` forward, the guards checked, then the rest of the forward
        sweep and the reverse sweep from there (layout.C_FROM): the same values as one run."""
        C = self.C
        C[layout.C_LO], C[layout.C_HI] = 0, self.split
        value = self._call(layout.MODE_STEP_FORWARD)
        if not self.holds():
            self.check_guards()
        if value != value and C[layout.C_ERR]:
            self.raise_error()
        C[layout.C_FROM] = self.split
        try:
            value = self._call(mode)
        finally:
            C[layout.C_FROM] = 0
        if value != value and C[layout.C_ERR]:
            self.raise_error()
        return value

    def check_guards(self):
        """Raise GuardError when a decision the tape was traced with does not hold for this
        run's values."""
        k = self.failed_guard()
        if k >= 0:
            raise self.tape.guard_error(k)

    def failed_guard(self):
        """The index of the first decision the tape was traced with that does not hold for
        this run's values (the run's error cleared), or -1. After a data error (an index out
        of range: perhaps the wrong branch's doing), only the guards on the nodes computed
        before it are read."""
        below = int(self.C[layout.C_NODE]) if self.C[layout.C_ERR] else None
        k = self.tape.failed_guard(self.val, below)
        if k >= 0:
            self.C[layout.C_ERR] = 0
        return k

    def raise_error(self):
        code, node = int(self.C[layout.C_ERR]), int(self.C[layout.C_NODE])
        self.C[layout.C_ERR] = 0
        tape = self.tape
        row = ROWS[tape.op[node]]
        shapes = [tape.shapes[k] for k in (tape.a0[node], tape.a1[node]) if k >= 0]
        p = int(tape.pp[node])
        if code in (layout.ERR_USER_RULE, layout.ERR_USER_RAISED):
            raise user_op_error(tape, node, code)
        hint = {layout.ERR_INDEX: bad_index(tape, self.val, node) if p >= 0 else "",
                layout.ERR_TARGET: f"targets must be class indices in 0 .. {tape.P[p + 1] - 1}"
                                   if p >= 0 else ""}
        raise DataError(
            f"{row.name} (node %{node}, operand shapes {shapes}): "
            f"{layout.ERRORS.get(code, f'error {code}')}; {hint.get(code, '')}".rstrip("; ")
            + (f"\n  traced at {tape.sites[node]}" if tape.sites else ""))

    def read(self, node, shape):
        off = self.tape.off
        o = int(off[node])
        return self.val[o:int(off[node + 1])].reshape(shape).copy() if shape \
            else np.float64(self.val[o])


class DrawingState(State):
    """The State of a tape with random draws (tracing/randomness.py): every write of the
    inputs draws the tape's recipes again, in order, from the user's generators. Tapes
    without draws get a plain State, so their runs pay nothing for this."""

    # the generators' states before this run's draws, for a tape with decisions: a run whose
    # guard fails puts them back (its draws were for a branch these arguments do not take)
    __slots__ = ("before",)

    def write(self, leaves, drawn=None):
        """The inputs, and new draws; or ``drawn``, the draws of an earlier run kept by
        ``drawn()`` (a vjp's pull-back reruns the forward on the numbers its value used)."""
        State.write(self, leaves)
        if drawn is None:
            self.draw()
        else:
            self.before = None             # (no draws taken: nothing to put back)
            for d, x in zip(self.tape.draws, drawn):
                self.val[d.start:d.start + d.size] = x

    def draw(self):
        if self.tape.guards is not None:
            self.before = generator_states(self.tape.draws)
        draw_into(self.val, self.tape.draws)

    def failed_guard(self):
        k = State.failed_guard(self)
        before = getattr(self, "before", None)
        if k >= 0 and before is not None:
            put_back(before)
            self.before = None
        return k

    def drawn(self):
        """A copy of this run's draws."""
        return [self.val[d.start:d.start + d.size].copy() for d in self.tape.draws]


class Tape:
    """A traced function. ``op, a0, a1, pp, need, off, P`` are read-only numpy views into the
    packed int32 array ``I``; ``imm`` and the constants are in ``F0``. Node ``i`` owns
    ``val[off[i]:off[i+1]]`` and the same slice of ``grad``. The inputs are the first nodes,
    differentiated leaves first, so their values and gradients are the first elements of
    ``val`` / ``grad``. ``val`` and ``grad`` show the calling thread's last run.
    """

    custom = False       # True: a user's derivative rule is in it (only run forward)
    # a tape with a rule and a scalar output, traced by bn.trace: its value and gradient
    # traced as ops (transforms/custom.value_and_grads), run forward by value_and_grad,
    # profile, save and pickle
    by_ops = None
    # True: this tape is such a value-and-gradient tape: its output is the value, then the
    # differentiated leaves' gradients in input order (a by_ops tape, or one loaded)
    grads_in_output = False
    loops = loop_tree = ()    # structured loops: bn.fori_loop, scan, while_loop (ir/loops.py)
    user_ops = ()             # the users' numba ops its njit_call nodes call, by slot
    user_table = None         # and their callbacks' addresses (an int64 array), or None

    def __init__(self, builder, key, n_diff, in_slots, out, out_shape, aux, argnums=(0,),
                 single=True, static=(), forward_mode=False, draws=()):
        b = builder
        ints, F0 = kernels.pack(b.op, b.a0, b.a1, b.pp, b.need, b.off, b.params, b.imm,
                                out, scratch=b.scratch, dtype=b.dtype)
        cols = kernels.views(ints, F0)
        nodes, patterns = tapefile.position_patterns(cols)
        cols["imm"][nodes] = patterns
        val = cols["val"]
        for node, values in b.consts.items():
            val[b.off[node]:b.off[node + 1]] = values
        ints.flags.writeable = False
        F0.flags.writeable = False
        self._setup(ints, F0, key=key, argnums=argnums, static=static, single=single,
                    shapes=b.shapes, sites=b.sites, n_diff=n_diff, in_slots=in_slots, out=out,
                    out_shape=out_shape, aux=aux, forward_mode=forward_mode,
                    largest_product=b.largest_product, guards=guard_arrays(b.guards))
        # the random draws' recipes (tracing/randomness.py): each run draws them again
        self.draws = draws
        # structured loops (tracing/loops.py): a State runs them step by step (ir/loops.py)
        self.loops = tuple(b.loops)
        # the users' numba ops (transforms/njit_op.py): the callbacks' addresses, three per
        # slot, which the run's control block points at, and the callbacks, kept alive here
        self.user_ops = tuple(b.user_ops)
        if self.user_ops:
            made = [op.callbacks(shapes, out_shape, self.dtype)
                    for op, shapes, out_shape in self.user_ops]
            self.user_callbacks = [callbacks for callbacks, _ in made]
            self.user_table = np.array([a for _, addresses in made for a in addresses],
                                       np.int64)
            self.user_table.flags.writeable = False
        self.loop_tree = nest(self.loops)

    @classmethod
    def from_arrays(cls, ints, F0, meta):
        """A Tape from its read-only arrays ``I`` (here ``ints``) and ``F0`` and its metadata,
        without tracing. Only for arrays that ``tapefile.validate`` checked (``bn.load_tape``
        and unpickling do): the kernels trust every index in them."""
        tape = cls.__new__(cls)
        tape._setup(ints, F0, **{k: meta[k] for k in tapefile.META},
                    guards=meta.get("guards"))
        tape.grads_in_output = bool(meta.get("by_ops", False))
        return tape

    def _setup(self, ints, F0, key, argnums, static, single, shapes, sites, n_diff, in_slots,
               out, out_shape, aux, forward_mode, largest_product, guards=None):
        self.draws = ()                      # set by __init__ for a traced tape with draws
        self.key = key
        self.argnums = argnums
        self.static = static                 # the argument positions traced as static
        # Python ints keyed by value (a function whose guards on them kept failing)
        self.ints_static = ints_static_in(key, static)
        self.single = single
        self.n = int(ints[0])
        self.dtype = F0.dtype
        self.I, self.F0 = ints, F0                  # I: the packed tape (layout.py)
        cols = kernels.views(ints, F0)
        for name in layout.COLUMNS + ("off", "P"):
            setattr(self, name, cols[name])
        self.imm = cols["imm"]
        self.shapes = shapes
        self.sites = sites                   # per node, the user's source line (or None)
        self.n_diff = n_diff                 # how many input leaves are differentiated
        self.in_slots = in_slots             # per input leaf: (start, size, shape, is_py_float)
        self.n_diff_elems = sum(s[1] for s in in_slots[:n_diff])
        self.out = out                       # output node
        self.out_shape = out_shape
        self.aux = aux                       # (treedef, [(node, shape) or ("const", value)])
        self.nogil = int(self.off[-1]) >= NOGIL_VALUES
        # large products run with the BLAS pinned to one thread (engine.BlasThreads)
        self.largest_product = largest_product       # M * K * N of the largest matmul
        self.blas_guard = kernels.engine.blas_threads() \
            if largest_product > kernels.engine.THREADED_PRODUCT else None
        self.ops, self.tensor_ops = kernels.engine.tape_rows(self.I)
        self.forward_mode = forward_mode     # its kernel has the tangent sweep
        self.kernel = kernels.kernel(self.ops, self.tensor_ops, self.dtype, jvp=forward_mode)
        self._local = threading.local()
        # the Python decisions made while tracing (tracing/concrete.py): None, or
        # (nodes, kinds, values, sites), read-only arrays and a tuple of source lines
        self.guards = guards
        if guards is not None:
            nodes, kinds, values, _ = guards
            self.guard_pos = self.off[nodes].astype(np.int64)
            self.guard_nodes, self.guard_kinds, self.guard_values = nodes, kinds, values
            self._guard_items = list(zip(self.guard_pos.tolist(), kinds.tolist(),
                                         values.tolist(), nodes.tolist()))
            self.guard_read, self.guard_expect = _guard_reader(self, nodes, values)
            end = int(nodes.max()) + 1 if nodes.size else 0
            self.guard_split = end if int(self.off[-1] - self.off[end]) >= SPLIT_VALUES else 0
        else:
            self.guard_read = self.guard_expect = None
            self.guard_split = 0

    # -- guards ---------------------------------------------------------------------------
    def failed_guard(self, val, below=None):
        """The index of the first guard that does not hold for the values ``val``, or -1;
        only the guards on nodes below ``below`` when it is given. A truth guard compares
        (x != 0) with its outcome (NaN is true, as in Python), an integer guard trunc(x),
        an exact guard x itself (NaN matches NaN)."""
        items = self._guard_items
        if len(items) <= FEW_GUARDS:
            for k, (p, kind, want, node) in enumerate(items):
                if not holds(val[p], kind, want) and (below is None or node < below):
                    return k
            return -1
        bad = ~holds_rows(val[self.guard_pos][:, None], self.guard_kinds[:, None],
                          self.guard_values[:, None])
        if below is not None:
            bad &= self.guard_nodes < below
        return int(np.argmax(bad)) if bad.any() else -1

    def guard_error(self, k):
        """The GuardError of guard ``k``: the decision, its source line, the fix."""
        site = self.guards[3][k]
        decision, outcome = describe(self.guard_kinds[k], float(self.guard_values[k]))
        return GuardError(
            f"a Python decision this tape was traced with went the other way: "
            f"{decision} of a traced value x (node %{int(self.guard_nodes[k])}; "
            f"it was {outcome} when traced)" + (f"\n  at {site}" if site else "") + "\n"
            "A tape holds only the branch it traced. Call the function through bn.grad / "
            "bn.value_and_grad / bn.jvp / bn.vmap, which trace the new branch (a variant), or "
            "write the choice as data (bnp.where, bnp.maximum), or make the deciding argument "
            "static (static_argnums)", tape=self, index=k)

    # -- tapes as data: pickle, files (see _tapefile) ----------------------------------------
    def __reduce__(self):
        """Pickled as its arrays and metadata (never the traced function, the kernel or the
        per-thread states); unpickling validates them and finds the kernel in the cache."""
        tape = self._file_tape("pickled")
        self._refuse_draws("pickled (or sent to another process)")
        arrays, meta = tapefile.tape_state(tape)
        return from_pickle, (tapefile.compact(arrays), meta)

    def save(self, file):
        """Write this tape to ``file`` (a path or a binary file object) as a ``.npz`` archive
        without pickle: its arrays and its metadata as JSON. ``bn.load_tape`` reads it back,
        in any process, without the function.

        >>> tape = bn.trace(lambda a: a * a, 3.0)                     # doctest: +SKIP
        >>> tape.save("square.npz"); bn.load_tape("square.npz")(4.0)  # doctest: +SKIP
        16.0

        A tape holding a custom derivative rule is written as its value-and-gradient tape
        (``by_ops``: the rule's derivative traced as ops), format 3: the loaded tape's call
        and value_and_grad give the same numbers, its gradient the rule's.
        """
        tape = self._file_tape("saved")
        self._refuse_draws("saved to a file")
        tapefile.save_tape(tape, file)

    def _file_tape(self, what):
        """The tape whose arrays a file or a pickle holds: this one, or for a tape with a
        user's derivative rule (Python code, not part of the arrays, which alone would
        differentiate the rule's body), its value-and-gradient tape."""
        if self.user_ops:
            raise UnsupportedOpError(at_user_site(
                f"a tape calling a user's numba op (bn.njit_op "
                f"{', '.join(repr(op.name) for op, _, _ in self.user_ops)}) cannot be {what}: "
                "the op's callbacks are machine code of this process. Trace the function again "
                "where it runs (send the function, not the tape)"))
        if self.loops:
            raise UnsupportedOpError(at_user_site(
                f"a tape holding a structured loop (bn.fori_loop, bn.scan, bn.while_loop) "
                f"cannot be {what}: its loop is run by Python between the kernel's sweeps. "
                "Trace the function with bn.trace (which unrolls the loop into the tape), or "
                "pass unroll=True to the loop"))
        if self.grads_in_output or not self.custom:
            return self
        return self._by_ops(f"be {what}")

    def _by_ops(self, what):
        """The value-and-gradient tape of a tape with a rule, or the error naming the fix."""
        if self.by_ops is None:
            scalar = self.out_shape == ()
            raise UnsupportedOpError(at_user_site(
                f"a tape holding a custom derivative rule (bn.custom_vjp, custom_jvp, "
                f"extend.primitive, custom_root, fixed_point) cannot {what} by itself: the "
                "rule is Python code, not part of the tape's arrays, so it goes as its value "
                "and gradient traced as ops, "
                + ("which bn.trace(f, *args) and bn.grad(f).trace(*args) make (this tape "
                   "was traced without it, by another transformation): trace f with "
                   "bn.trace(f, *args), or differentiate it with bn.value_and_grad(f)"
                   if scalar else
                   f"which needs a scalar output (this one has shape {self.out_shape}): trace "
                   "a scalar function of it (a loss) with bn.trace, or use bn.vjp / "
                   "bn.jacobian on the function")))
        return self.by_ops

    def without_draws(self):
        """This tape without its random draws' recipes (the same arrays), for a process
        that gets the draws from elsewhere and writes them into their nodes itself (Dask's
        workers, from the driver)."""
        tape = Tape.__new__(Tape)
        tape.__dict__.update(self.__dict__)
        tape.draws = ()
        tape._local = threading.local()
        return tape

    def _refuse_draws(self, what):
        """A tape with random draws holds its recipes' sources: the user's generators (and
        numpy's global one), found again on every call. They cannot go with the tape to
        another process or file, and a copy that drew from a copy of the generator would
        repeat or fork the user's stream, so such a tape is refused there."""
        if self.draws:
            labels = sorted({d.source.label for d in self.draws})
            raise RandomSourceError(at_user_site(
                f"this tape cannot be {what}: it draws random numbers on every run from "
                f"{', '.join(labels)}, which stay in this process. Run it here, or pass the "
                "noise in as an argument (draw it outside the function) to get a tape that "
                "can travel"))

    # -- run states -----------------------------------------------------------------------
    def state(self):
        """This thread's State (made on its first run)."""
        try:
            return self._local.state
        except AttributeError:
            s = self._local.state = (DrawingState if self.draws else State)(self)
            return s

    def new_state(self):
        """A State of one's own (a Trainer's), not this thread's."""
        return (DrawingState if self.draws else State)(self)

    @property
    def val(self):
        return self.state().val

    @property
    def grad(self):
        """This thread's gradient region. It may be written: the next tangent sweep then
        zeroes the need-0 nodes' slices again (layout.C_CLEAN)."""
        state = self.state()
        state.C[layout.C_CLEAN] = 0
        return state.grad

    # -- running --------------------------------------------------------------------------
    def aux_values(self, state):
        if self.aux is None:
            return None
        treedef, items = self.aux
        return unflatten(treedef, [state.read(*it) if it[0] != "const" else it[1]
                                   for it in items])

    def run_value_and_grad(self, leaves, copy=True, state=None):
        """leaves: the input leaves in slot order. Returns (value, a copy of the flat
        gradient of the differentiated inputs), or only the value when not ``copy``."""
        state = state or self.state()
        if self.grads_in_output and copy:        # the gradient is in the output, by ops
            flat = self.run_forward(leaves, state)
            return float(flat[0]), flat[1:].copy()
        state.write(leaves)
        value = state.run(layout.MODE_VALUE_AND_GRAD)
        return (value, state.grad[:self.n_diff_elems].copy()) if copy else value

    def run_vjp(self, leaves, seed, drawn=None):
        """Forward, then pull the cotangent ``seed`` (the output's shape) back. Returns a
        copy of the flat gradient of the differentiated inputs. ``drawn``: the random draws
        to run on (``DrawingState.drawn``), instead of new ones."""
        state = self.state()
        if drawn is None:
            state.write(leaves)
        else:
            state.write(leaves, drawn)
        o = int(self.off[self.out])
        state.grad[o:int(self.off[self.out + 1])] = np.ravel(seed)
        state.run(layout.MODE_VJP)
        return state.grad[:self.n_diff_elems].copy()

    def run_forward(self, leaves, state=None):
        state = state or self.state()
        state.write(leaves)
        state.run(layout.MODE_FORWARD)
        return state.read(self.out, self.out_shape)

    def split_grads(self, flat):
        """Per differentiated leaf, in the tape's dtype: a Python float for a Python float, a
        numpy scalar for a numpy scalar, and an array of the leaf's shape for an array."""
        out = []
        for start, size, shape, py in self.in_slots[:self.n_diff]:
            if shape == ():
                out.append(float(flat[start]) if py else flat[start])
            else:
                out.append(flat[start:start + size].reshape(shape))
        return out

    def scalar_runner(self, order, with_value, single, switch=None):
        """A call path for the case where every argument is a differentiated Python float.

        The inputs are the first nodes: the compiled caller (``_bncall``) writes them, runs
        the kernel, checks the guards and reads the gradients back as Python floats in one C
        call. Without the extension, one ``struct`` call writes them into F and one reads the
        gradients, through a memoryview of this thread's F taken once per state. ``order[j]``
        is the argument position of the j-th entry of argnums.

        When a guard fails, ``run(args)`` returns ``switch(args, tape, k)`` (k: the failed
        guard) when ``switch`` is given, else raises GuardError; ``run.attempt(args)``
        returns None instead (a variant tried without an exception: TapeCache's switch).
        ``run.entry(args)`` is what a transformed function calls: None unless ``args`` is
        ``nd`` Python floats, else ``run(args)``; with the extension, in one C call that runs
        this thread's caller itself and leaves to ``run`` only what is not the plain case.
        """
        local = self._local
        nd = self.n_diff
        itemsize = self.dtype.itemsize
        at_grad = self.n + int(self.off[-1])            # F = imm[n] | val | grad, in items
        VG, ERR = layout.MODE_VALUE_AND_GRAD, layout.C_ERR
        identity = not single and list(order) == list(range(nd))
        first = order[0]
        guarded = self.guards is not None
        native = self.kernel.address is not None and kernels.engine.has_scalar_calls() \
            and not self.loops
        # the guards checked by the C call after its run (one loop over a few floats), or,
        # with an extension built before it could, here by reading their values
        in_c = guarded and native and kernels.engine.has_guard_checks()
        read, expect = (None, None) if in_c or not guarded else (self.guard_read,
                                                                  self.guard_expect)
        fmt = struct.Struct(f"{nd}{'d' if self.dtype == np.float64 else 'f'}")
        pack_into, unpack_from = fmt.pack_into, fmt.unpack_from

        def scalar_state():
            try:
                return local.scalar
            except AttributeError:
                pass
            s = self.state()
            if native and s.guard is None:
                s.call.set_scalars(nd, self.n, at_grad, self.dtype == np.float32)
                if in_c:
                    s.call.set_guards(self.n + self.guard_pos, self.guard_kinds,
                                      self.guard_values)
                if in_c or not guarded:
                    local.caller = s.call         # the C entry's (run.entry) from now on
            if s.mem is None:
                s.mem = memoryview(s.F)
            local.scalar = s
            return s

        def slow(s, args):
            """Through struct and State.run: without the extension, with BLAS pinning, or
            under debug_nans."""
            pack_into(s.mem, itemsize * self.n, *args)
            return s.run(VG), unpack_from(s.mem, itemsize * at_grad)

        def failed(s, value, g):
            """After the fast check failed (``g``: the C check's failed guard, or the
            gradients read by the Python check): the failed guard's index, or -1 when the run
            stands (a new trace's first run, or the failed guard lies after a data error,
            which the caller raises; a data error makes the value NaN)."""
            if s.unguarded:
                return -1
            return g if type(g) is int and value == value else s.failed_guard()

        def make(on_failure):
            """The runner; ``on_failure(args, k)`` gives the call's result when guard k
            fails."""
            def run(args):
                try:
                    s = local.scalar
                except AttributeError:
                    s = scalar_state()
                if native and s.guard is None and not SWITCH.on:
                    value, g = s.call.value_and_grad(args)
                    if type(g) is int or (read is not None and read(s.mem) != expect):
                        k = failed(s, value, g)
                        if k >= 0:
                            return on_failure(args, k)
                        g = unpack_from(s.mem, itemsize * at_grad)
                else:
                    try:
                        value, g = slow(s, args)
                    except GuardError as e:
                        if e.tape is not self:
                            raise
                        return on_failure(args, e.index)
                if value != value and s.C[ERR]:
                    s.raise_error()
                if not identity:
                    g = g[first] if single else tuple([g[k] for k in order])
                return (value, g) if with_value else g
            return run

        def refuse(args, k):
            raise self.guard_error(k)

        run = make(refuse if switch is None else lambda args, k: switch(args, self, k))
        attempt = make(lambda args, k: None)
        run.attempt = attempt
        entry = None
        if native and (in_c or not guarded) and (identity or (single and nd == 1)):
            entry = kernels.engine.fast_entry(local, run, nd, with_value, single)
        run.entry = entry or float_entry(run, nd)
        return run

    # -- public calls, with the arguments checked against the traced signature --------------
    def _leaves(self, args, kwargs):
        try:
            sig = Signature(args, kwargs, self.argnums, self.static, self.ints_static)
        except NestedTrace:
            raise nested_unsupported("a Tape's call") from None
        if sig.key != self.key:
            explain_mismatch(self, sig)
        return sig, sig.diff + sig.data

    def __call__(self, *args, **kwargs):
        """The output for these arguments (same structure, shapes and dtypes as traced)."""
        _, leaves = self._leaves(args, kwargs)
        if self.grads_in_output:                  # the value, then the gradients
            return self.run_forward(leaves)[0]
        return self.run_forward(leaves)

    def value_and_grad(self, *args, **kwargs):
        """``(value, grad)`` for these arguments, for the argnums the tape was traced with."""
        sig, leaves = self._leaves(args, kwargs)
        if self.out_shape != () and not self.grads_in_output:
            raise OutputError(at_user_site(
                f"value_and_grad needs a scalar output; this tape's output has shape "
                f"{self.out_shape}: use bn.vjp"))
        if self.custom or self.grads_in_output:  # the gradient as traced ops, run forward
            flat = (self if self.grads_in_output else self._by_ops("run value_and_grad")
                    ).run_forward(leaves)
            return float(flat[0]), structure(self, flat[1:], sig, self.argnums, self.single)
        value, flat = self.run_value_and_grad(leaves)
        return value, structure(self, flat, sig, self.argnums, self.single)

    def profile(self, *args, mode="value_and_grad", repeats=10):
        """Time this tape node by node on these arguments: see ``bn.profile`` (which also
        traces with source lines).

        >>> tape = bn.trace(lambda a, b: a * b + a, 2.0, 3.0, argnums=(0, 1))
        >>> print(tape.profile(2.0, 3.0))                            # doctest: +SKIP
        """

        return profile_tape(self, args, mode=mode, repeats=repeats)

    # -- inspection -----------------------------------------------------------------------
    def to_dot(self, values=False, grads=False, max_nodes=200):
        """The tape as Graphviz DOT text: a box per node with its op and shape (inputs,
        constants and the output marked), an edge per operand; with the calling thread's
        last values and gradients when asked. Above ``max_nodes``, the first and last nodes
        are drawn and the rest summarised in one box.

        >>> tape = bn.trace(lambda a, b: a * b + a, 2.0, 3.0, argnums=(0, 1))
        >>> tape.value_and_grad(2.0, 3.0)
        (8.0, (4.0, 2.0))
        >>> dot = tape.to_dot(values=True, grads=True)  # render: dot -Tsvg tape.dot
        """
        return tapefile.to_dot(self, values, grads, max_nodes)

    def __len__(self):
        return self.n

    @property
    def nbytes(self):
        """Bytes of the tape's arrays and of one run's values and gradients."""
        return self.I.nbytes + self.F0.nbytes

    @property
    def bytes_per_node(self):
        return self.nbytes / max(self.n, 1)

    def row(self, i, val=None):
        """One node as text: ``%i = name(%a0, %a1) shape``."""
        val = self.val if val is None else val
        r = ROWS[self.op[i]]
        args = []
        if r.kind == "map" or r.layout == "tiles":
            args = [f"%{self.a0[i]}"] + ([f"%{self.a1[i]}"] if self.a1[i] >= 0 else [])
            if r.layout == "tiles":             # where's condition, the beta rows' a
                args.insert(0, f"%{self.P[self.pp[i]]}")
        elif r.name in ("sum", "sumsq", "inner"):
            p = self.pp[i]
            m = self.P[p]
            ids = self.P[p + 1:p + 1 + (2 * m if r.name == "inner" else m)]
            args = [f"%{k}" for k in ids[:8]] + (["..."] if len(ids) > 8 else [])
            if r.name == "inner" and self.a0[i] >= 0:
                args.append(f"bias=%{self.a0[i]}")
        elif r.name == "gather":
            args = [f"%{self.a0[i]}, ..."]
        elif self.a0[i] >= 0:
            args = [f"%{self.a0[i]}"] + ([f"%{self.a1[i]}"] if self.a1[i] >= 0 else [])
        if r.name in ("powi", "pow_c") or (r.name == "sum" and self.imm[i] != 1.0):
            args.append(f"c={self.imm[i]:g}")
        shape = self.shapes[i]
        o, e = int(self.off[i]), int(self.off[i + 1])
        shown = np.array2string(val[o:min(e, o + 4)], precision=6, separator=", ")
        if e - o > 4:
            shown = shown[:-1] + ", ...]"
        need = " " if self.need[i] else "·"
        return f"{need} %{i:<4d} = {r.name}({', '.join(args)})  {list(shape)}  val={shown}"

    def __str__(self, limit=60):
        val = self.val
        lines = [f"Tape: {self.n} nodes, {self.off[-1]} {self.dtype} values, {self.nbytes} "
                 f"bytes ({self.bytes_per_node:.1f} B/node); output %{self.out}"]
        idx = range(self.n) if self.n <= limit else \
            list(range(limit // 2)) + [None] + list(range(self.n - limit // 2, self.n))
        for i in idx:
            lines.append("  ..." if i is None else "  " + self.row(i, val))
        lines.append("  (· = no gradient flows through this node)")
        return "\n".join(lines)

    def __repr__(self):
        return f"<burnumba.Tape: {self.n} nodes, {self.nbytes} bytes, output %{self.out}>"


def _guard_reader(tape, nodes, values):
    """(read, expected): ``read(memoryview of F)`` gives the guard nodes' values as one tuple
    of Python floats (one struct call, the gaps skipped as pad bytes), and ``expected`` is
    that tuple at the traced arguments: the values numpy computed while tracing, where a
    truth guard on a mask row (a comparison: exactly 0 or 1) reads its outcome. Equal, every
    guard holds; else the exact check (Tape.failed_guard) decides, so this is only a fast
    path for the common case. A tape with NaN or comparison guards (on a value that changes
    from call to call) reads each guard's outcome instead: ``_outcome_reader``."""
    kinds = tape.guard_kinds.tolist()
    at_pos = {}
    for k, p in enumerate(tape.guard_pos.tolist()):
        at_pos.setdefault(p, []).append(k)
    itemsize = tape.dtype.itemsize
    code = "d" if tape.dtype == np.float64 else "f"
    fmt, at, expect = "=", 0, []          # F = imm[n] | val | grad, in items
    for p in sorted(at_pos):
        fmt += f"{(tape.n + p - at) * itemsize}x{code}"
        at = tape.n + p + 1
        ks = at_pos[p]
        exact = [k for k in ks if kinds[k] == EXACT]
        # one guard: its own value; several: an exact one's (equal to it, each of the others
        # holds as it did when traced); several, none exact: NaN, never equal (exact check)
        want = values[ks[0]] if len(ks) == 1 else values[exact[0]] if exact else np.nan
        expect.append(float(want))
    unpack = struct.Struct(fmt).unpack_from
    if all(kind in (TRUTH, EXACT, INTEGER) for kind in kinds):
        return unpack, tuple(expect)
    return _outcome_reader(unpack, sorted(at_pos), tape.guard_pos.tolist(), kinds,
                           values.tolist())


def _outcome_reader(unpack, positions, guard_pos, kinds, values):
    """The fast path's (read, expected) for a tape with NaN or comparison guards: read gives
    one outcome per guard, (x > c) as True or False, an exact or truth guard's value as it
    is, so that a run whose decisions all went as traced reads ``expected``."""
    tests, expect = [], []
    for kind, want in zip(kinds, values):
        if kind >= FIRST_COMPARISON:
            c = kind - FIRST_COMPARISON
            # x OP want, as a bound method of the constant: want OP' x
            tests.append(getattr(float(want), REFLECTED[c % len(COMPARISONS)]))
            expect.append(c < len(COMPARISONS))
        elif kind == NAN:
            tests.append(math.isnan)
            expect.append(bool(want))
        else:
            tests.append(float)
            expect.append(float(want))
    index = [positions.index(p) for p in guard_pos]
    pick = operator.itemgetter(*index) if len(index) > 1 else None
    one = index[0]
    call = operator.call

    def read(mem):
        got = unpack(mem)
        return tuple(map(call, tests, pick(got) if pick else (got[one],)))
    return read, tuple(expect)



def guard_arrays(guards):
    """A builder's Guards as the tape keeps them: read-only (nodes int64, kinds int8, values
    float64) and a tuple of source lines; None for a trace without decisions."""
    if not guards:
        return None
    arrays = (np.array(guards.node, np.int64), np.array(guards.kind, np.int8),
              np.array(guards.value, np.float64))
    for a in arrays:
        a.flags.writeable = False
    return arrays + (tuple(guards.sites),)


def from_pickle(arrays, meta):
    """What ``pickle.loads`` calls for a Tape (``Tape.__reduce__``)."""
    return Tape.from_arrays(*tapefile.checked_state(arrays, meta))


def load_tape(file):
    """The Tape saved in ``file`` (a path or a binary file object) by ``Tape.save``, checked
    before it can run (no pickle is read). Raises TapeFormatError naming the file and what is
    wrong with it.

    >>> tape = bn.trace(lambda a, b: a * b + a, 2.0, 3.0, argnums=(0, 1))  # doctest: +SKIP
    >>> tape.save("f.npz"); bn.load_tape("f.npz").value_and_grad(2.0, 3.0)  # doctest: +SKIP
    (8.0, (4.0, 2.0))
    """
    return Tape.from_arrays(*tapefile.read_tape(file))
