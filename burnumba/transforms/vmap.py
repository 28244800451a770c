"""``bn.vmap``: one traced tape run for every sample of a batch, on every core.

``vmap(f, in_axes)`` traces ``f`` once on one sample (the batched arguments indexed at 0
along their axis). The kernel's batch mode then loops over the samples itself: it copies a
sample's input values into their slices of the tape, runs it, and copies the result out,
with no Python between samples. The samples are split into one chunk per thread; each
chunk runs on its own copy of the tape's values, all at once on OpenMP's threads with the
GIL released (``engine.run_all``; a pool of Python threads where the C extension has no
OpenMP), and writes its result rows straight into the array the call returns. The values
every sample shares (the parameters of per-sample gradients) are written once into the
call's memory; each chunk's kernel copies them into its own lanes. What goes where is
worked out once per signature and kept for the next call (``_CallPlan``).

Where the tape has a wide form (``_lanes.py``: map rows, and matmul, gather and sum where
their sweeps loop), a run holds up to 64 samples side by side, sample innermost, so
the interpreter visits a node once for all of them and its loops run over the samples: the
per-sample MLP's gradients at B = 1024 in 0.41 against 0.71 ms of kernel on one core. Each
sample still gets the bits a call on it alone gives.

Two kinds of function are mapped:

* ``bn.grad(f)`` / ``bn.value_and_grad(f)`` (the per-sample gradients of DP-SGD and
  influence functions, ``in_axes=(None, 0, 0)``): the batch runs the very tape and sweep a
  call of that function runs on one sample (MODE_BATCH_GRAD), so the results equal a Python
  loop of calls bit for bit, in float32 as in float64;
* any other function, ``bn.hessian(f)`` or ``bn.hvp`` included: it is traced with its
  outputs packed into one node (derivatives inside it are traced ops) and the batch
  evaluates that node per sample (MODE_BATCH). The results equal a loop of the mapped
  function traced the same way, and agree with a loop of direct calls to rounding.

Inside another transformation's trace there is no tape of one sample to run: ``f`` is traced
into that trace once per sample and the outputs are stacked (``_VMapped._unrolled``).
"""
import concurrent.futures
import functools
import math
import os

import numpy as np

from .._errors import (DataError, InputError, NestedTrace, ShapeError, UnsupportedOpError,
                      at_user_site)
from ..ir.lanes import lanes_for, widen
from .. import numpy as bnp
from .core import Cache, _positive, _trace
from ..tracing.concrete import all_hold, holds_rows
from ..tracing.plan import DATA, DIFF, ArgsMatch
from ..tracing.pytree import flatten, unflatten
from ..tracing.randomness import draw_rows
from ..tracing.signature import Signature
from ..ir.tape import State, check_integer_data
from ..tracing.tracer import Var
from ..kernels import engine, layout
from ..kernels.ops import OPCODE

MIN_PER_THREAD = 32          # samples below which a chunk is not worth a thread
_BY_COLUMN = 8               # a batched input of at most this many values per sample is
                             # copied into X column by column (numpy's strided copy of a
                             # (1024, 2) array into two columns of a (1024, 3) one: 7.3 us
                             # row by row, 2.6 us column by column)


def _axes(in_axes, nargs):
    if isinstance(in_axes, (int, type(None))):
        return (in_axes,) * nargs
    if not isinstance(in_axes, (tuple, list)):
        raise InputError(at_user_site(
            f"vmap: in_axes must be an int, None, or a tuple with one entry per argument, "
            f"got {type(in_axes).__name__}"))
    in_axes = tuple(in_axes)
    if len(in_axes) != nargs:
        raise InputError(at_user_site(
            f"vmap: in_axes has {len(in_axes)} entries but the function got {nargs} "
            "arguments: give one per argument (None for an argument that is not batched)"))
    return in_axes


def _leaf_axes(spec, tree, where):
    """The axis of each leaf of ``tree`` (flatten's order) from ``spec``, as JAX reads an
    in_axes entry: an int or None for the whole subtree, or a tuple, list or dict of the
    subtree's own structure, down to its leaves."""
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return [spec] * len(flatten(tree)[0])
    if isinstance(spec, dict) and type(tree) is dict:
        if sorted(spec) != sorted(tree):
            raise InputError(at_user_site(
                f"vmap: in_axes for {where} has the keys {sorted(spec)}, the argument "
                f"{sorted(tree)}: give an axis (or None) for every key"))
        return [a for key in sorted(tree) for a in _leaf_axes(spec[key], tree[key],
                                                               f"{where}[{key!r}]")]
    if isinstance(spec, (tuple, list)) and type(tree) in (tuple, list) and \
            len(spec) == len(tree):
        return [a for k, (sub, t) in enumerate(zip(spec, tree))
                for a in _leaf_axes(sub, t, f"{where}[{k}]")]
    raise InputError(at_user_site(
        f"vmap: in_axes for {where} is {spec!r}, which does not match the argument "
        f"({type(tree).__name__}): an in_axes entry is an int, None, or a tuple, list or "
        f"dict of the argument's own structure"))


def _slots(sig, batched_leaves):
    """Per tape input slot (the order of ``sig.diff + sig.data``): whether it is a batched
    leaf, and which one ((argument, leaf) or None)."""
    diff, data = [], []
    for k, kinds in enumerate(sig.kinds):
        for j, kind in enumerate(kinds):
            where = (k, j) if (k, j) in batched_leaves else None
            if kind == DIFF:
                diff.append(where)
            elif kind == DATA:
                data.append(where)
    return diff + data


class _Program:
    """What a call on ``program`` (the tape of one sample, or its wide form) writes into a
    chunk's memory before the kernel runs, worked out once per program: the spans of F0 a
    run starts from (the immediates and the constants' values: every other value is an input,
    or the sweep's), the shared leaves' slots in runs of adjacent ones, and the control
    blocks of the last batch size."""

    def __init__(self, traced, program):
        self.program = program
        self.lanes = getattr(program, "lanes", 1)
        self.base = program.F0.size
        n = int(program.I[0])
        cols = layout.views(program.I, program.F0)
        off = cols["off"]
        spans = [[0, n]]
        for i in np.flatnonzero(cols["op"] == OPCODE["const"]):
            lo, hi = n + int(off[i]), n + int(off[i + 1])
            if spans[-1][1] == lo:
                spans[-1][1] = hi
            else:
                spans.append([lo, hi])
        self.preset = [(lo, hi) for lo, hi in spans if hi > lo]
        runs = []                                      # [start, count, [shared slot, ...]]
        for s in traced.shared:
            start, count = traced.tape.in_slots[s][:2]
            if runs and runs[-1][0] + runs[-1][1] == start:
                runs[-1][1] += count
                runs[-1][2].append(s)
            else:
                runs.append([start, count, [s]])
        self.shared_runs = [(start, count, tuple(slots)) for start, count, slots in runs]
        self.nshared = sum(count for _, count, _ in runs)
        self.controls = None           # ((size, chunks), the chunks' control blocks)


class _Run:
    """One call's memory, in one array: each chunk's state (the program's immediates,
    values, gradients and scratch) side by side, then the samples' input rows (X), the
    values every sample shares (S: each chunk's kernel copies them into its lanes) and the
    result rows (Y). Chunk k runs on ``F[k * base:]``, its control block pointing at its rows
    of X and Y, so every chunk writes its results straight into the one Y that the call
    returns (per-thread buffers copied out moved another 2.8 MB per call for the per-sample
    MLP gradients at B = 1024, 62 us). A result owns its array: later calls never write it.
    The program is the tape itself, or its wide form (``_lanes``): ``lanes`` samples at a
    time."""

    def __init__(self, traced, prog, size, chunks):
        self.traced, self.prog, self.size, self.chunks = traced, prog, size, chunks
        program = prog.program
        self.program, self.lanes, self.base = program, prog.lanes, prog.base
        self.nin = nin = sum(count for _, count in traced.segments)
        width = traced.nout + traced.checks.size
        self.F = np.empty(chunks * prog.base + size * (nin + width) + prog.nshared,
                          dtype=program.dtype)
        # a chunk starts from the program's immediates and constants; its other values are
        # written before or by the sweep, and a batch run zeroes every gradient it reads
        for k in range(chunks):
            at = k * prog.base
            for lo, hi in prog.preset:
                self.F[at + lo:at + hi] = program.F0[lo:hi]
        start = chunks * prog.base
        self.X = self.F[start:start + size * nin].reshape(size, nin)
        self.S = self.F[start + size * nin:start + size * nin + prog.nshared]
        # a wide run writes the results value by value, its samples side by side (Y's rows
        # are values: a contiguous copy of each value's lanes); the result leaves are views
        # of it either way
        self.feature_major = self.lanes > 1
        Y = self.F[start + size * nin + prog.nshared:]
        self.Y = (Y.reshape(width, size).T if self.feature_major
                  else Y.reshape(size, width))

    def val(self, k):
        """Chunk k's value buffer."""
        return layout.views(self.program.I, self.F[k * self.base:(k + 1) * self.base])["val"]

    def controls(self, bounds):
        """The chunks' control blocks (chunk k: samples bounds[k] .. bounds[k + 1] - 1),
        offsets relative to its F: copies of the ones the program keeps for this size."""
        key = (self.size, self.chunks)
        kept = self.prog.controls
        if kept is None or kept[0] != key:
            kept = self.prog.controls = (key, [self._control(k, bounds[k], bounds[k + 1])
                                               for k in range(self.chunks)])
        return [C.copy() for C in kept[1]]

    def _control(self, k, lo, hi):
        traced, prog = self.traced, self.prog
        tape = traced.tape
        C = np.concatenate([engine.control_block(tape.dtype, tape.largest_product,
                                                 tape.user_table),
                            np.asarray(traced.segments, np.int64).reshape(-1),
                            np.asarray([(start, count) for start, count, _ in prog.shared_runs],
                                       np.int64).reshape(-1),
                            traced.checks])
        rows = (self.chunks - k) * self.base           # from chunk k's F to X
        C[layout.C_BATCH] = hi - lo
        C[layout.C_BATCH_IN] = self.nin
        C[layout.C_BATCH_SEGS] = len(traced.segments)
        C[layout.C_BATCH_X] = rows + lo * self.nin
        C[layout.C_BATCH_S] = rows + self.size * self.nin
        C[layout.C_BATCH_SSEGS] = len(prog.shared_runs)
        C[layout.C_BATCH_Y] = rows + self.size * self.nin + prog.nshared + (
            lo if self.feature_major else lo * (traced.nout + traced.checks.size))
        C[layout.C_BATCH_YK] = self.size if self.feature_major else 1
        C[layout.C_BATCH_G] = traced.nout - 1
        C[layout.C_BATCH_CHECKS] = traced.checks.size
        C[layout.C_LANES] = self.lanes
        return C


class _ChunkState:
    """What ``State.raise_error`` reads, for a chunk that reported bad data."""

    def __init__(self, tape, C, val):
        self.tape, self.C, self.val = tape, C, val


class _Traced:
    """A tape of one sample: which of its input slots are batched (the X row's segments),
    how many values a sample's result row holds, and how to unpack it. A tape with Python
    decisions (guards) has its guard nodes' values written after them (``checks``: the
    nodes; layout.C_BATCH_CHECKS), so that one run both computes every sample's result and
    tells which samples' decisions hold for this branch."""

    def __init__(self, tape, sig, slot_of, mode, nout, unpack):
        self.tape, self.sig, self.mode, self.nout, self.unpack = tape, sig, mode, nout, unpack
        self.checks = (np.asarray(tape.guard_nodes, np.int64) if tape.guards is not None
                       else np.zeros(0, np.int64))
        slots = tape.in_slots
        self.batched = sorted((slots[s][0], slots[s][1], where)
                              for s, where in enumerate(slot_of) if where is not None)
        # random draws (tracing/randomness.py) are per-sample inputs too: input nodes made
        # after the arguments' ones, so their columns are the last of X, in recipe order
        self.batched += [(d.start, d.size, ("draw", i)) for i, d in enumerate(tape.draws)]
        self.segments = [(start, size) for start, size, _ in self.batched]
        self.shared = [s for s, where in enumerate(slot_of) if where is None]
        # the kernel against the tape's rows, checked once: each call binds new memory
        tape.kernel.caller(tape.I, tape.F0.copy(), engine.control_block(tape.dtype))
        self.own = _Program(self, tape)
        self.wide = {}                     # lanes -> the _Program of the wide form, or None

    def program(self, size):
        """What a call on ``size`` samples runs (a ``_Program``): the tape's wide form
        (``_lanes.lanes_for`` samples side by side), or the tape itself where it has none
        (or one sample)."""
        lanes = lanes_for(self.tape, size)
        if lanes == 1:
            return self.own
        if lanes not in self.wide:
            wide = widen(self.tape, lanes,
                         frozenset(self.tape.in_slots[s][:2] for s in self.shared))
            if wide is not None:            # the kernel against the wide rows, checked once
                wide.kernel.caller(wide.I, wide.F0.copy(), engine.control_block(wide.dtype))
                wide = _Program(self, wide)
            self.wide.setdefault(lanes, wide)
        return self.wide[lanes] or self.own


class _CallPlan:
    """A call's work, worked out once for arguments of its structure, shapes and dtypes:
    where each leaf goes (a batched one into its columns of X, a shared one into S), the
    program, the chunks. A vmapped function keeps the plan of its last call; a call whose
    arguments match it (``match``: ``_plan.ArgsMatch`` of the whole arguments' signature,
    as bn.grad's plans check theirs) skips the signature, the trace lookup and the
    splitting. With the column copies in ``run``, the per-sample MLP's call spent 52-62 us
    outside its kernel in a loop, against 100-145 us before. Anything else takes the general
    path, which makes a new plan. ``full``: the signature of the whole arguments (batched
    leaves with their batch axis), whose leaves in tape-input order ``run`` takes."""

    def __init__(self, traced, full, per_arg, size, threads, out_axes):
        self.traced, self.size, self.out_axes = traced, size, out_axes
        self.match = ArgsMatch(full)
        tape = traced.tape
        column = {}                           # (argument, leaf) -> its first column of X
        col = 0
        for _, count, where in traced.batched:
            column[where] = (col, count)
            col += count
        self.prog = prog = traced.program(size)
        at_of, at = {}, 0                     # shared slot -> its place in S
        for _, _, slots in prog.shared_runs:
            for s in slots:
                at_of[s] = at
                at += tape.in_slots[s][1]
        self.x_parts, self.s_parts, self.integers = [], [], []
        for s, (x, where) in enumerate(zip(full.diff + full.data, _slots(full, column))):
            if type(x) is not float and type(x) is not int and x.dtype.kind in "iu":
                self.integers.append(s)         # (a Python int is data below 2**24: exact)
            if where is not None:
                k, j = where
                self.x_parts.append((s, per_arg[k][3][j] % x.ndim, *column[where]))
            else:
                count = tape.in_slots[s][1]
                self.s_parts.append((s, slice(at_of[s], at_of[s] + count),
                                     type(x) in (float, int)))
        lanes = prog.lanes
        blocks = -(-size // lanes)
        self.chunks = chunks = max(1, min(threads, size // MIN_PER_THREAD, blocks))
        # whole blocks of lanes per chunk
        self.bounds = [min(size, lanes * (blocks * k // chunks)) for k in range(chunks + 1)]

    def run(self, mapped, leaves):
        return self.run_checked(mapped, leaves)[0]

    def run_checked(self, mapped, leaves):
        """(the outputs, and per sample whether the tape's Python decisions hold for it: all
        True for a tape without any)."""
        traced, prog, size = self.traced, self.prog, self.size
        dtype = traced.tape.dtype
        for i in self.integers:
            check_integer_data(leaves[i], dtype)
        run = _Run(traced, prog, size, self.chunks)
        X, S = run.X, run.S
        for i, ax, col, count in self.x_parts:
            x = (np.moveaxis(leaves[i], ax, 0) if ax else leaves[i]).reshape(size, count)
            if count <= _BY_COLUMN:
                for j in range(count):
                    X[:, col + j] = x[:, j]
            else:
                X[:, col:col + count] = x
        for i, where, scalar in self.s_parts:
            S[where] = leaves[i] if scalar else leaves[i].ravel()
        draws = traced.tape.draws
        if draws:         # each sample's draws, in the order of a Python loop over them
            X[:, X.shape[1] - sum(d.size for d in draws):] = draw_rows(draws, size, dtype)
        controls = run.controls(self.bounds)
        program = prog.program
        callers = [program.kernel.caller(program.I, run.F[k * run.base:], C, nogil=True,
                                         rows_checked=True)
                   for k, C in enumerate(controls)]
        values = mapped._run_chunks(run, callers)
        for k, value in enumerate(values):
            if value != value:
                mapped._raise_chunk_error(run, k, controls[k])
        out = traced.unpack(run.Y)
        if self.out_axes:
            leaves, treedef = flatten(out)
            out = unflatten(treedef, [np.moveaxis(x, 0, self.out_axes) for x in leaves])
        if not traced.checks.size:
            return out, np.ones(size, bool)
        tape = traced.tape
        values = run.Y[:, traced.nout:]
        if all_hold(values, tape.guard_kinds, tape.guard_values):
            return out, np.ones(size, bool)
        return out, holds_rows(values, tape.guard_kinds, tape.guard_values)


class _Variant:
    """One branch of a function with Python decisions, under vmap: ``traced`` (its
    ``_Traced``: its result rows end with its decisions' values) and ``decisions`` (the
    ``_Traced`` of the function with the values Python decided on as its output), which
    finds the branch's samples without running the branch on the others, for a branch
    that reports bad data on them."""

    def __init__(self, traced, decisions):
        self.traced, self.decisions = traced, decisions


class _VMapped(Cache):
    """A vmapped function's state: on the core's ``Cache`` (bounded, under its lock), per
    (batched leaves, a sample's signature) the ``_Traced`` form of one sample; per
    ("grouped", batched leaves, signature) of a function with Python decisions, its variants
    (``_Variant``: a branch), newest first; and the ``_CallPlan`` of the last call (its fast
    path)."""

    def __init__(self, f, in_axes, out_axes, threads):
        super().__init__()
        self.f = f
        self.transformed = getattr(f, "_transformed", None)   # bn.grad / value_and_grad
        if self.transformed is not None and self.transformed.has_aux:
            self.transformed = None                # traced as any function instead
        self.in_axes = in_axes
        if not isinstance(out_axes, int):
            raise InputError(at_user_site(
                f"vmap: out_axes must be an int (the axis of the outputs that indexes the "
                f"samples), got {out_axes!r}"))
        self.out_axes = out_axes
        self.threads = threads or os.cpu_count() or 1
        self.pool = None                 # (pid, executor): chunks on a pool of its threads
        self.plan = None                 # the _CallPlan of the last call (its fast path)
        # a function with Python decisions whose last call's samples all took one branch:
        # (its _Variant, the _CallPlan of the branch), the fast path of calls whose
        # arguments match and whose samples all take that branch again
        self.grouped_plan = None

    def dropped(self, gone):
        if self.plan is not None and self.plan.traced is gone:
            self.plan = None
        grouped = self.grouped_plan
        if grouped is not None and (grouped[0] is gone or grouped[0].traced is gone):
            self.grouped_plan = None

    def _leaves(self, args):
        """Per argument (itself, its leaves, their structure, each leaf's batch axis or None;
        the leaves None for an argument shared by every sample), the batch size, and whether
        a batched argument holds a traced leaf, checked: batched leaves are arrays (numpy's
        or, inside a trace, traced ones) with one batch size between them."""
        axes = _axes(self.in_axes, len(args))
        size, per_arg, has_traced = None, [], False
        for k, (a, spec) in enumerate(zip(args, axes)):
            if spec is None:                  # shared by every sample: passed as it is
                per_arg.append((a, None, None, None))
                continue
            leaves, treedef = flatten(a)
            leaf_axes = _leaf_axes(spec, a, f"argument {k}")
            for x, ax in zip(leaves, leaf_axes):
                has_traced = has_traced or isinstance(x, Var)
                if ax is None:
                    continue
                if not isinstance(x, (np.ndarray, Var)):
                    raise InputError(at_user_site(
                        f"vmap: argument {k} is batched (in_axes {ax}) but holds a "
                        f"{type(x).__name__}: batched leaves are numpy arrays; use None in "
                        "in_axes for an argument shared by every sample"))
                if not -len(x.shape) <= ax < len(x.shape):
                    raise ShapeError(at_user_site(
                        f"vmap: in_axes {ax} is out of range for argument {k} of shape "
                        f"{x.shape}"))
                n = x.shape[ax]
                if size is None:
                    size = n
                elif n != size:
                    raise ShapeError(at_user_site(
                        f"vmap: argument {k} has {n} samples along axis {ax}, an earlier "
                        f"one {size}: every batched argument has the same batch size"))
                if size == 0:
                    raise ShapeError(at_user_site("vmap: the batch is empty"))
            per_arg.append((a, leaves, treedef, leaf_axes))
        if size is None:
            raise InputError(at_user_site("vmap: no argument is batched (every in_axes is "
                                          "None): call the function itself"))
        return per_arg, size, has_traced

    @staticmethod
    def _split(per_arg):
        """(the batched leaves moved to axis 0, by (argument, leaf); one sample's
        arguments, the batched leaves indexed at 0)."""
        batched, sample = {}, []
        for k, (a, leaves, treedef, leaf_axes) in enumerate(per_arg):
            if leaves is None:
                sample.append(a)
                continue
            first = []
            for j, (x, ax) in enumerate(zip(leaves, leaf_axes)):
                if ax is not None:
                    x = batched[(k, j)] = np.moveaxis(x, ax, 0) if ax % x.ndim else x
                    x = x[0]
                first.append(x)
            sample.append(unflatten(treedef, first))
        return batched, sample

    def _unrolled(self, per_arg, size):
        """vmap inside another transformation's trace (a traced argument, or ``f`` closing
        over a traced value): ``f`` is traced into the trace in progress once per sample
        and the outputs are stacked at out_axes, so derivatives flow through every sample
        (the tape grows with the batch; the samples run one after another in it)."""
        return self._sample_by_sample(per_arg, size, bnp.stack)

    def _grouped(self, args, per_arg, size, batched):
        """A function that makes Python decisions on traced values (its tape has guards):
        the samples grouped by the branches they take, each group run batched by the tape
        of its branch (a variant; bn.grad's own variants for ``bn.grad(f)``), so that every
        sample gets exactly the result a run of its own branch gives. A variant runs on the
        samples not yet placed and writes, after each one's result, the values its Python
        decisions read (``_Traced.checks``); the samples whose decisions hold keep that
        result, the others take the next variant, traced at the first of them when none is
        known. A sample never gets another sample's branch. Where a branch reports bad data
        on samples that take another one (an index out of range there), the variant's
        decisions alone find its group first; where a sample's own branch does, sample by
        sample."""
        batched_leaves = frozenset(batched)
        key = ("grouped", batched_leaves, Signature(self._sample(per_arg, 0), {}, ()).key)
        remaining, parts = np.arange(size), []
        try:
            self.lookup(key)                     # now the most recently used
            with self.lock:
                known = list(self.variants.get(key, ()))
            for variant in known:
                if not remaining.size:
                    break
                remaining = self._group(per_arg, remaining, variant, parts, False)
            while remaining.size:
                variant = self._variant(self._sample(per_arg, int(remaining[0])),
                                        batched_leaves)
                with self.lock:
                    self.add_variant(key, variant, variant.traced)
                remaining = self._group(per_arg, remaining, variant, parts, True)
        except DataError:
            return self._per_sample(per_arg, size)
        treedef = parts[0][2]
        if len(parts) == 1:                  # every sample took one branch: its output as is
            variant, plan = parts[0][3]
            if plan is not None:
                self.grouped_plan = (variant, plan)
            return self._moved(unflatten(treedef, parts[0][1]))
        if any(p[2] != treedef for p in parts):
            raise UnsupportedOpError(at_user_site(
                "vmap: the function returned outputs of another structure for another "
                "sample"))
        outs = []
        for j in range(len(parts[0][1])):
            first = np.asarray(parts[0][1][j])
            out = np.empty((size,) + first.shape[1:], first.dtype)
            for where, leaves, *_ in parts:
                out[where] = leaves[j]
            outs.append(np.moveaxis(out, 0, self.out_axes) if self.out_axes else out)
        return unflatten(treedef, outs)

    def _group(self, per_arg, where, variant, parts, first):
        """Run ``variant`` on the samples ``where``, and keep its results for those whose
        decisions hold for it (the first one too when ``first``: the variant was traced on
        it, and keeps the branches numpy took there): append (those samples, the output
        leaves, the output structure, (variant, the _CallPlan when it ran on every sample
        and kept them all, else None)) to ``parts``; return the other samples. When the
        branch reports bad data, its decisions alone pick its samples first, and only those
        run it."""
        try:
            (out, ok), plan = self._run_on(variant.traced, per_arg, where)
        except DataError:
            decisions = variant.decisions
            (values, _), _ = self._run_on(decisions, per_arg, where)
            tape = decisions.tape
            ok = holds_rows(values, tape.guard_kinds, tape.guard_values)
            if first:
                ok[0] = True
            if ok.any():
                (out, _), _ = self._run_on(variant.traced, per_arg, where[ok])
                parts.append((where[ok], *flatten(out), (variant, None)))
            return where[~ok]
        if first:
            ok[0] = True
        if ok.all():
            parts.append((where, *flatten(out), (variant, plan)))
        elif ok.any():
            leaves, treedef = flatten(out)
            parts.append((where[ok], [np.asarray(x)[ok] for x in leaves], treedef,
                          (variant, None)))
        return where[~ok]

    def _run_on(self, traced, per_arg, where):
        """``traced`` run batched on the samples ``where``: ((its results, samples first,
        and per sample whether its decisions hold), its _CallPlan when ``where`` is every
        sample, else None)."""
        everything = where.size and where[-1] == self._batch_size(per_arg) - 1 == where.size - 1
        args = [a for a, *_ in per_arg] if everything else self._taken(per_arg, where)
        per_arg, size, _ = self._leaves(args)
        full = self._full(args, traced.mode == layout.MODE_BATCH_GRAD)
        plan = _CallPlan(traced, full, per_arg, size, self.threads, 0)
        return plan.run_checked(self, full.diff + full.data), plan if everything else None

    def _moved(self, out):
        """Outputs with the samples' axis at ``out_axes`` (they come samples first)."""
        if not self.out_axes:
            return out
        leaves, treedef = flatten(out)
        return unflatten(treedef, [np.moveaxis(np.asarray(x), 0, self.out_axes)
                                   for x in leaves])

    @staticmethod
    def _batch_size(per_arg):
        for a, leaves, treedef, leaf_axes in per_arg:
            for x, ax in zip(leaves or (), leaf_axes or ()):
                if ax is not None:
                    return x.shape[ax]

    @staticmethod
    def _taken(per_arg, where):
        return [a if leaves is None else
                unflatten(treedef, [x if ax is None else np.take(x, where, axis=ax)
                                    for x, ax in zip(leaves, leaf_axes)])
                for a, leaves, treedef, leaf_axes in per_arg]

    def _variant(self, sample, batched_leaves):
        """The ``_Variant`` of the branch this sample takes."""
        sig = Signature(sample, {}, ())
        tr = self.transformed
        if tr is not None:              # bn.grad's variant for it (traced if it has none)
            tape, tsig, argnums = tr.tape_for(sample, {})
            leaves = tsig.diff + tsig.data
            tape = tr.guarded(tape, tsig, argnums, sample, {},
                              lambda t: (t, t.run_forward(leaves))[0])
            traced = (self._trace_outputs(sample, batched_leaves, sig) if tape.loops else
                      self._trace_gradient(sample, batched_leaves, (tape, tsig, argnums)))
        else:
            traced = self._trace_outputs(sample, batched_leaves, sig)
        f = tr.f if tr is not None else self.f

        def decisions(*args):
            f(*args)
            b = next(x._b for a in args for x in flatten(a)[0] if isinstance(x, Var))
            return bnp.concatenate([bnp.reshape(Var(b, node, b.shapes[node]), (1,))
                                    for node in b.guards.node])
        return _Variant(traced, self._trace_outputs(sample, batched_leaves, sig, decisions))

    @staticmethod
    def _sample(per_arg, i):
        """The arguments of sample ``i``."""
        return [a if leaves is None else
                unflatten(treedef, [x if ax is None else
                                    x[(slice(None),) * (ax % len(x.shape)) + (i,)]
                                    for x, ax in zip(leaves, leaf_axes)])
                for a, leaves, treedef, leaf_axes in per_arg]

    def _full(self, args, gradient=True):
        """The signature of the whole arguments (batched leaves with their batch axis), as
        a gradient's tape orders them (bn.grad's argnums) unless not ``gradient``."""
        if self.transformed is None or not gradient:
            return Signature(args, {}, ())
        return Signature(args, {}, _positive(self.transformed.argnums, len(args)),
                         _positive(self.transformed.static, len(args)),
                         getattr(self.transformed, "ints_static", False))

    def _per_sample(self, per_arg, size):
        """A function that makes Python decisions on traced values (its tape has guards):
        each sample is a call of ``f`` on its own, so that every sample takes its own
        branch (the variants of its signature; bn.grad's own cache for ``bn.grad(f)``), and
        the results are stacked at out_axes. A sample never gets another sample's branch."""
        return self._sample_by_sample(
            per_arg, size, lambda xs, axis: np.stack([np.asarray(x) for x in xs], axis=axis))

    def _one_branch(self, grouped, args):
        """The outputs when ``args`` match the grouped plan's and every sample's decisions
        hold for its variant (then all take its branch, as _grouped would find), else None."""
        ran = grouped[1]
        leaves = ran.match(args)
        if leaves is None:
            return None
        try:
            out, ok = ran.run_checked(self, leaves)
        except DataError:       # bad data on a sample's other branch: the general path's
            return None
        return self._moved(out) if ok.all() else None

    def _sample_by_sample(self, per_arg, size, stack):
        """``f`` called on each sample in turn, its outputs stacked at out_axes by ``stack``
        (traced values: bnp.stack; numbers: np.stack)."""
        outs = [flatten(self.f(*self._sample(per_arg, i))) for i in range(size)]
        treedef = outs[0][1]
        if any(o[1] != treedef for o in outs):
            raise UnsupportedOpError(at_user_site(
                "vmap: the function returned outputs of another structure for another "
                "sample"))
        return unflatten(treedef, [stack([o[0][j] for o in outs], axis=self.out_axes)
                                   for j in range(len(outs[0][0]))])

    def _trace(self, sample, batched_leaves):
        """The traced form of f on one sample, once per signature."""
        if self.transformed is not None:          # the gradient's tape orders the leaves
            tape, sig, _ = self.transformed.tape_for(sample, {})
            # a user's rule in it, or a structured loop (run step by step, not by the batch
            # mode): the gradient as traced ops, the loop unrolled
            if tape.custom or tape.loops:
                sig = Signature(sample, {}, ())
                key = ("custom", batched_leaves, sig.key)
                found = self.lookup(key)
                if found is None:
                    found = self.keep(key, self._trace_outputs(sample, batched_leaves, sig))
                return found
        else:
            sig = Signature(sample, {}, ())
        key = (batched_leaves, sig.key)
        found = self.lookup(key)
        if found is None:
            found = self.keep(key, self._trace_gradient(sample, batched_leaves)
                              if self.transformed is not None
                              else self._trace_outputs(sample, batched_leaves, sig))
        return found

    def _trace_gradient(self, sample, batched_leaves, found=None):
        """bn.grad / value_and_grad of f: the tape that a call on one sample runs (or
        ``found``: (tape, signature, argnums), a variant of it); a result row is the value
        and the gradients of the differentiated leaves."""
        tr = self.transformed
        tape, sig, argnums = found or tr.tape_for(sample, {})
        n_diff, single, with_value = tape.n_diff, tr.single, tr.with_value
        # each gradient leaf: its columns of a result row, its shape; per differentiated
        # argument (in position order): its structure and its leaves' range
        parts = [(slice(1 + start, 1 + start + size), tuple(shape))
                 for start, size, shape, _ in tape.in_slots[:n_diff]]
        groups, pos = [], 0
        for k in sorted(set(argnums)):
            n = len(sig.kinds[k])
            groups.append((k, sig.treedefs[k], pos, pos + n))
            pos += n

        def unpack(Y):
            B = Y.shape[0]
            leaves = [Y[:, columns].reshape((B,) + shape) for columns, shape in parts]
            by_position = {k: leaves[lo] if treedef is None
                           else unflatten(treedef, leaves[lo:hi])
                           for k, treedef, lo, hi in groups}
            grads = by_position[argnums[0]] if single else tuple(by_position[k]
                                                                  for k in argnums)
            return (Y[:, 0].copy(), grads) if with_value else grads

        return _Traced(tape, sig, _slots(sig, batched_leaves), layout.MODE_BATCH_GRAD,
                       1 + tape.n_diff_elems, unpack)

    def _trace_outputs(self, sample, batched_leaves, sig, f=None):
        """Any f (``self.f``, or ``f``): traced with its output leaves packed into one flat
        node (``sig``: the sample's signature, which ``_trace`` made)."""
        info = {}
        f = f or self.f

        def packed(*args):
            leaves, treedef = flatten(f(*args))
            b = next((x._b for x in leaves if isinstance(x, Var)), None)
            if b is None:
                raise UnsupportedOpError(at_user_site(
                    "vmap: the function's output does not depend on its arguments"))
            vars_ = [b.lift(x) for x in leaves]
            info["def"], info["shapes"] = treedef, [v.shape for v in vars_]
            return bnp.concatenate([bnp.reshape(v, (v.size,)) for v in vars_])

        tape = _trace(packed, sample, {}, (), False, sig, False)
        out_def, shapes = info["def"], info["shapes"]

        def unpack(Y):
            outs, pos = [], 0
            for shape in shapes:
                n = math.prod(shape)
                outs.append(Y[:, pos:pos + n].reshape((Y.shape[0],) + tuple(shape)))
                pos += n
            return unflatten(out_def, outs)

        return _Traced(tape, sig, _slots(sig, batched_leaves), layout.MODE_BATCH,
                       sum(math.prod(s) for s in shapes), unpack)

    @staticmethod
    def _raise_chunk_error(run, k, C):
        """A chunk whose kernel returned NaN with C[C_ERR] set: its node's bad data, raised
        as in a plain run."""
        if C[layout.C_ERR]:
            State.raise_error(_ChunkState(run.traced.tape, C, run.val(k)))

    def _run_chunks(self, run, callers):
        """Every chunk's kernel, at once: on OpenMP's threads (``engine.run_all``), or else on
        this thread and a pool's. Returns their first values."""
        mode = run.traced.mode
        if len(callers) == 1:
            return [callers[0](mode)]
        values = engine.run_all(tuple(callers), mode)
        if values is not None:
            return values
        # the pool and the process that made it: a child forked after the parent made it has
        # its queue but not its threads (a submit there would wait forever), so it makes its own
        pool = self.pool
        if pool is None or pool[0] != os.getpid():
            with self.lock:
                pool = self.pool
                if pool is None or pool[0] != os.getpid():
                    pool = self.pool = (os.getpid(), concurrent.futures.ThreadPoolExecutor(
                        self.threads - 1, thread_name_prefix="burnumba-vmap"))
        # the first chunk runs on the calling thread, the others on the pool's
        others = [pool[1].submit(call, mode) for call in callers[1:]]
        try:
            first = callers[0](mode)
        finally:
            concurrent.futures.wait(others)      # no chunk outlives the call
        return [first] + [future.result() for future in others]

    snapped = False                  # captures taken since the last trace (Cache.capture)

    def forget(self):
        super().forget()
        self.plan = self.grouped_plan = None
        self.snapped = False

    def __call__(self, *args):
        if self.captures is not None:
            self.fresh()                 # a value f reads was rebound: traced again
        plan = self.plan
        if plan is not None:
            leaves = plan.match(args)
            if leaves is not None:
                return plan.run(self, leaves)
        grouped = self.grouped_plan
        if grouped is not None:
            out = self._one_branch(grouped, args)
            if out is not None:
                return out
        per_arg, size, has_traced = self._leaves(args)
        if has_traced:                              # a traced batched argument
            return self._unrolled(per_arg, size)
        batched, sample = self._split(per_arg)
        try:
            traced = self._trace(sample, frozenset(batched))
        except NestedTrace:          # f closes over a value of a trace in progress: unrolled
            traced = None            # below, outside the except (f's errors chain nothing)
        if traced is None:
            return self._unrolled(per_arg, size)
        if not self.snapped:
            self.capture()
            self.snapped = True
        if traced.tape.guards is not None:
            if traced.tape.draws or traced.tape.custom:
                # draws in a Python loop's order; a user's rule: as its own calls do
                return self._per_sample(per_arg, size)
            return self._grouped(args, per_arg, size, batched)
        full = self._full(args, traced.mode == layout.MODE_BATCH_GRAD)
        plan = _CallPlan(traced, full, per_arg, size, self.threads, self.out_axes)
        self.plan = plan
        return plan.run(self, full.diff + full.data)


def vmap(f, in_axes=0, out_axes=0, threads=None):
    """Map ``f`` over a batch axis, as ``jax.vmap``: ``in_axes`` (an int, None, or one per
    argument, each also a pytree of its argument's structure) says which axis of each
    argument indexes the samples (None: shared by every sample); the outputs get that axis
    at ``out_axes``. ``f`` is traced once on one sample and run for all of them by the
    compiled kernel, on ``threads`` threads (default: every core); inside another
    transformation's trace it is traced into that trace once per sample instead.
    ``bn.vmap(bn.grad(loss), in_axes=(None, 0, 0))`` gives per-sample gradients equal, bit
    for bit, to a loop of ``bn.grad(loss)`` calls.

    >>> import burnumba as bn, numpy as np
    >>> loss = lambda w, x, y: (np.tanh(x @ w) - y) ** 2
    >>> per_sample = bn.vmap(bn.grad(loss), in_axes=(None, 0, 0))
    >>> per_sample(np.ones(2), np.ones((8, 2)), np.zeros(8)).shape
    (8, 2)
    """
    mapped = _VMapped(f, in_axes, out_axes, threads)

    @functools.wraps(f)
    def vmapped(*args, **kwargs):
        if kwargs:
            raise InputError(at_user_site("vmap: pass the arguments positionally"))
        return mapped(*args)

    vmapped.traced = mapped.tapes
    return vmapped
