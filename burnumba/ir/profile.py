"""A tape's time, node by node: the stepped runs behind ``Tape.profile`` and ``bn.profile``.

The profiler runs the same compiled kernel as every call, one node per call: the stepped
modes that ``debug_nans`` uses (``MODE_STEP_FORWARD`` for the forward of node i,
``MODE_STEP_BACKWARD`` for its backward), each call timed with ``time.perf_counter_ns``.
Between the two sweeps it does what ``MODE_VALUE_AND_GRAD`` does inside the kernel (and
``checked_run`` in Python): zero the gradients below the output's slice, seed
d out / d out = 1. So the stepped run computes the normal run's values and gradients, bit
for bit, and the sum of the per-node times is the kernel's own sweep.

Times are medians over ``repeats`` runs. Each step's time has the cost of an empty step
subtracted (a step over no nodes, timed the same way: the Python call, the C caller, the
kernel's prologue), so a node's time is its own work. One unstepped call
(``MODE_VALUE_AND_GRAD`` or ``MODE_FORWARD``) is timed in every repeat too, with the same
overhead subtracted: ``measured_s``, to hold ``total_s`` against.

Nothing here is on the normal path: the kernels, the tapes and the transformed functions do
not know the profiler exists. Source lines come from a retrace that keeps them in the
tape's side table (``Tape.sites``, as under ``debug_nans``), switched on for that one trace
only (not through the process-wide debug_nans switch).
"""
import dataclasses
import re
import time

import numpy as np

from .checked import operands
from .._errors import InputError, OutputError
from ..tracing.signature import structure
from ..kernels import ROWS, layout

MODES = ("value_and_grad", "forward")
REPEATS = 10            # default: medians over this many runs
TOP = 10                # nodes printed
CALIBRATION = 31        # empty steps timed per repeat and direction



@dataclasses.dataclass(frozen=True)

class OpCost:
    """The nodes of one op, summed. Times in seconds; ``bytes`` is an estimate (see
    ``node_bytes``); ``share`` of the profile's ``total_s``."""
    op: str
    nodes: int
    forward_s: float
    backward_s: float
    bytes: int
    share: float

    @property
    def total_s(self):
        return self.forward_s + self.backward_s


@dataclasses.dataclass(frozen=True)
class NodeCost:
    """One node: its id on the tape (``%node``), op, shape, times in seconds, estimated
    bytes, share of the total and the user's source line that created it ('' if unknown)."""
    node: int
    op: str
    shape: tuple
    forward_s: float
    backward_s: float
    bytes: int
    share: float
    site: str

    @property
    def total_s(self):
        return self.forward_s + self.backward_s


ZERO_GRADS = "(zero grads)"      # the by-op row of the memset between the sweeps


class Profile:
    """What ``bn.profile`` measured. ``print(p)`` shows the by-op table and the heaviest
    nodes; ``p.by_op()`` / ``p.by_node()`` give them as data.

    Attributes: ``total_s`` (the sum of the per-node times and the gradient zeroing: the
    stepped sweep), ``measured_s`` (one unstepped call, median; both without the call
    overhead), ``overhead_s`` (an empty step's cost, subtracted from every step and from
    the unstepped call), ``forward_s`` / ``backward_s`` (per node, numpy arrays of seconds),
    ``zero_s``, ``value`` and ``grads`` (of the stepped run, structured as ``bn.grad``'s),
    ``exact`` (the stepped run's value and gradients equal the unstepped run's bit for bit)
    ``tape``, ``steps`` (kernel calls per stepped run) and, per run, ``stepped_runs_s`` and
    ``measured_runs_s`` (the spread behind the medians).
    """

    def __init__(self, tape, mode, repeats, forward_s, backward_s, zero_s, overhead_s,
                 measured_s, value, grads, exact, name, steps, stepped_runs_s, measured_runs_s):
        self.tape, self.mode, self.repeats, self.name = tape, mode, repeats, name
        self.steps = steps
        self.stepped_runs_s, self.measured_runs_s = stepped_runs_s, measured_runs_s
        self.forward_s, self.backward_s = forward_s, backward_s
        self.zero_s, self.overhead_s, self.measured_s = zero_s, overhead_s, measured_s
        self.value, self.grads, self.exact = value, grads, exact
        self.total_s = float(forward_s.sum() + backward_s.sum() + zero_s)
        self.fwd_bytes, self.bwd_bytes = node_bytes(tape, mode)

    def _share(self, seconds):
        return seconds / self.total_s if self.total_s > 0 else 0.0

    def by_node(self, top=None):
        """The nodes that ran (leaves excluded), heaviest first: a list of ``NodeCost``;
        the first ``top`` only when given."""
        tape, sites = self.tape, self.tape.sites
        ran = [i for i in range(tape.n) if ROWS[tape.op[i]].kind != "leaf"]
        rows = [NodeCost(i, ROWS[tape.op[i]].name, tuple(tape.shapes[i]),
                         float(self.forward_s[i]), float(self.backward_s[i]),
                         int(self.fwd_bytes[i] + self.bwd_bytes[i]),
                         self._share(float(self.forward_s[i] + self.backward_s[i])),
                         (sites[i] or "") if sites else "")
                for i in ran]
        rows.sort(key=lambda r: (-r.total_s, r.node))
        return rows if top is None else rows[:top]

    def by_op(self):
        """Per op kind, heaviest first: a list of ``OpCost`` (with a row for the zeroing of
        the gradients between the sweeps, which the unstepped kernel does too)."""
        sums = {}
        for r in self.by_node():
            n, f, b, nbytes = sums.get(r.op, (0, 0.0, 0.0, 0))
            sums[r.op] = (n + 1, f + r.forward_s, b + r.backward_s, nbytes + r.bytes)
        rows = [OpCost(op, n, f, b, nbytes, self._share(f + b))
                for op, (n, f, b, nbytes) in sums.items()]
        if self.mode == "value_and_grad":
            zeroed = int(self.tape.off[self.tape.out]) * self.tape.dtype.itemsize
            rows.append(OpCost(ZERO_GRADS, 0, 0.0, self.zero_s, zeroed,
                               self._share(self.zero_s)))
        rows.sort(key=lambda r: (-r.total_s, r.op))
        return rows

    # -- printing ---------------------------------------------------------------------------
    def __str__(self, top=TOP):
        scale, unit = _unit(max(self.total_s, self.measured_s))
        tape = self.tape
        steps = self.steps
        sweep = "MODE_VALUE_AND_GRAD" if self.mode == "value_and_grad" else "MODE_FORWARD"
        out = [f"burnumba profile of {self.name}: {self.mode}, {tape.dtype}, {tape.n} nodes, "
               f"median of {self.repeats} runs",
               f"  stepped (sum of nodes) {self.total_s * scale:10.2f} {unit}   one kernel "
               f"call per node, {self.overhead_s * 1e9:.0f} ns of call overhead subtracted "
               "per call",
               f"  measured (unstepped)   {self.measured_s * scale:10.2f} {unit}   one "
               f"{sweep} call",
               "",
               f"  {'by op':<16}{'nodes':>6}{'forward ' + unit:>14}{'backward ' + unit:>14}"
               f"{'bytes':>11}{'GB/s':>8}{'share':>8}"]
        for r in self.by_op():
            gbs = r.bytes / r.total_s / 1e9 if r.total_s > 0 else 0.0
            out.append(f"  {r.op:<16}{r.nodes if r.nodes else '-':>6}"
                       f"{r.forward_s * scale:14.2f}{r.backward_s * scale:14.2f}"
                       f"{_bytes(r.bytes):>11}{gbs:8.1f}{r.share:8.1%}")
        nodes = self.by_node(top)
        out += ["", f"  {'top ' + str(len(nodes)) + ' nodes':<14}{'op':<16}{'shape':<16}"
                    f"{'forward ' + unit:>13}{'backward ' + unit:>14}{'share':>8}  source"]
        for r in nodes:
            out.append(f"  {'%' + str(r.node):<14}{r.op:<16}{_shape(r.shape):<16}"
                       f"{r.forward_s * scale:13.2f}{r.backward_s * scale:14.2f}"
                       f"{r.share:8.1%}  {_short(r.site)}")
        if steps and self.total_s / steps < 100e-9:
            out.append("  (most steps take under 100 ns, near the timer's jitter: these times "
                       "are indicative; the call overhead dominates a graph of scalars)")
        if not tape.sites:
            out.append("  (no source lines: this tape was traced without them; "
                       "bn.profile(f, *args) traces with them)")
        return "\n".join(out)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))

    def __repr__(self):
        return (f"<burnumba.Profile of {self.name}: {self.mode}, {self.tape.n} nodes, "
                f"stepped {self.total_s * 1e6:.1f} µs, measured {self.measured_s * 1e6:.1f} µs>")


def _unit(seconds):
    if seconds < 20e-6:
        return 1e9, "ns"
    if seconds < 20e-3:
        return 1e6, "µs"
    return 1e3, "ms"


def _bytes(n):
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _shape(shape):
    return "()" if not shape else "(" + ", ".join(str(d) for d in shape) + ")"


# the folders of a path to a Python file's line ('/a/b/nn.py:70' keeps 'nn.py:70')
_FOLDERS = re.compile(r"[^\s<]*[/\\](?=[^/\\\s]+\.py:\d)")


def _short(site, width=100):
    """A source line without its files' folders, cut to ``width``."""
    text = _FOLDERS.sub("", site)
    return text if len(text) <= width else text[:width - 3] + "..."


# -- the estimate of bytes touched ----------------------------------------------------------
def _reads(tape, i):
    """Elements node i's forward reads: [(node, elements)] of its operands (integer data
    included: it lives in the float value buffer too)."""
    row = ROWS[tape.op[i]]
    p = int(tape.pp[i])
    size = tape.off[1:] - tape.off[:-1]
    if row.name in ("sum", "sumsq"):
        nodes = [int(k) for k in tape.P[p + 1:p + 1 + tape.P[p]]]
    elif row.name == "inner":
        nodes = [int(k) for k in tape.P[p + 1:p + 1 + 2 * tape.P[p]]]
        nodes += [int(tape.a0[i])] if tape.a0[i] >= 0 else []
    elif row.name == "gather":                  # the gathered elements only
        return [(-1, int(size[i]))]
    elif row.layout == "tiles":                 # where, the beta rows: P[p], a0, a1
        nodes = [int(tape.P[p]), int(tape.a0[i]), int(tape.a1[i])]
    else:
        nodes = [int(k) for k in (tape.a0[i], tape.a1[i]) if k >= 0]
    return [(k, int(size[k])) for k in nodes]


def node_bytes(tape, mode):
    """Per node, (forward bytes, backward bytes): an estimate of the memory a node touches,
    from its and its operands' sizes times the itemsize. Forward: read the operands, write
    the output. Backward (nodes a gradient flows through): read the output's gradient, read
    the operands' values, read and write the gradients of the operands that need one."""
    n, item = tape.n, tape.dtype.itemsize
    size = tape.off[1:] - tape.off[:-1]
    fwd, bwd = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for i in range(n):
        if ROWS[tape.op[i]].kind == "leaf":
            continue
        reads = _reads(tape, i)
        fwd[i] = item * (int(size[i]) + sum(m for _, m in reads))
        if mode == "value_and_grad" and tape.need[i] and i <= tape.out:
            if ROWS[tape.op[i]].name == "gather":
                grads = int(size[i])
            else:
                grads = sum(int(size[k]) for k in operands(tape, i) if tape.need[k])
            bwd[i] = item * (int(size[i]) + sum(m for _, m in reads) + 2 * grads)
    return fwd, bwd



# -- running ----------------------------------------------------------------------------------
def _timed(call, C, mode, ranges, out, state):
    """Step ``mode`` over each (node, lo, hi) of ``ranges``, writing each call's time in ns
    to ``out[node]`` (the empty steps of the calibration write out[0], out[1], ...)."""
    clock = time.perf_counter_ns
    lo_slot, hi_slot = layout.C_LO, layout.C_HI
    for node, lo, hi in ranges:
        C[lo_slot] = lo
        C[hi_slot] = hi
        t0 = clock()
        value = call(mode)
        t1 = clock()
        out[node] = t1 - t0
        if value != value and C[layout.C_ERR]:
            state.raise_error()


def _check_options(mode, repeats):
    if mode not in MODES:
        raise InputError(f"bn.profile: mode={mode!r}; use one of {', '.join(MODES)}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise InputError(f"bn.profile: repeats={repeats!r}; use a positive int (the runs "
                         f"each node's median is taken over, e.g. {REPEATS})")


# the mode a profile of a tape with a user's rule reports: its value-and-gradient tape's
# forward sweep, whose nodes hold the derivative too
BY_OPS = "value_and_grad (by ops: the derivative traced as forward nodes)"


def run_profile(tape, sig, argnums, single, mode, repeats, name):
    """Profile ``tape`` on the leaves of ``sig``, in a run state of its own."""
    _check_options(mode, repeats)
    if mode == "value_and_grad" and (tape.custom or tape.grads_in_output):
        # a user's rule in it: the value and gradient traced as ops, profiled forward (the
        # derivative's nodes are forward steps of that tape)
        ops = tape if tape.grads_in_output else tape._by_ops("be profiled")
        profile = run_profile(ops, sig, argnums, single, "forward", repeats, name)
        flat = profile.value
        profile.value = float(flat[0])
        profile.grads = structure(tape, flat[1:], sig, argnums, single)
        profile.mode = BY_OPS
        return profile
    if mode == "value_and_grad" and tape.out_shape != ():
        raise OutputError(f"bn.profile: mode='value_and_grad' needs a scalar output; this "
                          f"tape's output has shape {tape.out_shape}: use mode='forward'")
    state = tape.new_state()
    state.write(sig.diff + sig.data)
    guard = tape.blas_guard
    if guard is None:
        return _measure(tape, state, sig, argnums, single, mode, repeats, name)
    with guard:                        # the BLAS threads a normal run of this tape gets
        return _measure(tape, state, sig, argnums, single, mode, repeats, name)


def _measure(tape, state, sig, argnums, single, mode, repeats, name):
    n, out = tape.n, tape.out
    C, call, grad, val = state.C, state.call, state.grad, state.val
    off = tape.off
    oo, ng = int(off[out]), tape.n_diff_elems
    grads_flow = mode == "value_and_grad"
    whole = layout.MODE_VALUE_AND_GRAD if grads_flow else layout.MODE_FORWARD
    step_fwd, step_bwd = layout.MODE_STEP_FORWARD, layout.MODE_STEP_BACKWARD
    # the nodes stepped, in the kernel's order; leaves have no work in either sweep
    forward = [(i, i, i + 1) for i in range(n) if ROWS[tape.op[i]].kind != "leaf"]
    backward = [(i, i, i + 1) for i in range(out, -1, -1)
                if tape.need[i] and ROWS[tape.op[i]].kind != "leaf"] if grads_flow else []
    empty = [(k, 0, 0) for k in range(CALIBRATION)]
    clock = time.perf_counter_ns

    fwd_ns = np.zeros((repeats, n), np.int64)
    bwd_ns = np.zeros((repeats, n), np.int64)
    whole_ns = np.zeros(repeats, np.int64)
    zero_ns = np.zeros(repeats, np.int64)
    empty_ns = np.zeros((repeats, 2, CALIBRATION), np.int64)
    memset_ns = np.zeros(repeats, np.int64)

    def stepped(r):
        _timed(call, C, step_fwd, forward, fwd_ns[r], state)
        if not grads_flow:
            return
        # MODE_VALUE_AND_GRAD between its sweeps: the gradients below the output's slice
        # zeroed, d out / d out = 1 (the output is a scalar)
        t0 = clock()
        grad[:oo] = 0.0
        grad[oo] = 1.0
        zero_ns[r] = clock() - t0
        t0 = clock()                   # the same two statements with nothing to zero
        grad[:0] = 0.0
        grad[oo] = 1.0
        memset_ns[r] = clock() - t0
        _timed(call, C, step_bwd, backward, bwd_ns[r], state)

    def unstepped():
        t0 = clock()
        value = call(whole)
        t = clock() - t0
        if value != value and C[layout.C_ERR]:
            state.raise_error()
        return t

    # warm up both paths (caches, page faults, the branch predictor); keep the normal run's
    # results to compare the stepped run's with
    unstepped()
    reference = (val[off[out]:off[out + 1]].copy(), grad[:ng].copy())
    stepped(0)
    for r in range(repeats):           # interleaved, so that a change of load hits both
        _timed(call, C, step_fwd, empty, empty_ns[r, 0], state)
        # (a forward profile steps no backward: a tape with a user's rule refuses that mode)
        _timed(call, C, step_bwd if grads_flow else step_fwd, empty, empty_ns[r, 1], state)
        whole_ns[r] = unstepped()
        stepped(r)

    overhead = float(np.median(empty_ns))
    fwd = np.maximum(np.median(fwd_ns, axis=0) - overhead, 0.0)
    bwd = np.maximum(np.median(bwd_ns, axis=0) - overhead, 0.0)
    ran = np.zeros(n, bool)                 # nodes without a step have no time
    ran[[i for i, _, _ in forward]] = True
    fwd[~ran] = 0.0
    ran[:] = False
    ran[[i for i, _, _ in backward]] = True
    bwd[~ran] = 0.0
    zero = max(float(np.median(zero_ns) - np.median(memset_ns)), 0.0) if grads_flow else 0.0
    measured = max(float(np.median(whole_ns)) - overhead, 0.0)

    result = (val[off[out]:off[out + 1]].copy(), grad[:ng].copy())
    exact = np.array_equal(result[0], reference[0], equal_nan=True) and (
        not grads_flow or np.array_equal(result[1], reference[1], equal_nan=True))
    if grads_flow:
        value = float(result[0][0])
        grads = structure(tape, result[1], sig, argnums, single)
    else:
        value = state.read(out, tape.out_shape)
        grads = None
    # per run: the stepped sweep's total and the unstepped call, overheads out (the spread)
    steps = len(forward) + len(backward)
    stepped_runs = fwd_ns.sum(1) + bwd_ns.sum(1) + zero_ns - memset_ns - steps * overhead
    return Profile(tape, mode, repeats, fwd * 1e-9, bwd * 1e-9, zero * 1e-9,
                   overhead * 1e-9, measured * 1e-9, value, grads, exact, name, steps,
                   stepped_runs * 1e-9, (whole_ns - overhead) * 1e-9)



def profile_tape(tape, args, mode="value_and_grad", repeats=REPEATS):
    """``Tape.profile``: profile a traced tape on arguments like the traced ones."""
    sig, _ = tape._leaves(args, {})
    return run_profile(tape, sig, tape.argnums, tape.single, mode, repeats, "a tape")

