"""``bn.debug_nans``: find the first node whose value or gradient is not finite.

Off, it costs one flag test per call. On, tapes are traced again with the user's source line
of every node kept in a side table (``Tape.sites``, never in the kernels' arrays), and each
run steps through the tape one node at a time: after a node's forward, its value is checked;
after a node's backward, the gradients it added into its operands are. The first non-finite
number raises ``NonFiniteError`` (a FloatingPointError) naming the node, its op, its operand
shapes, the direction (forward or backward) and the line that created it.
"""
import numpy as np

from .._errors import NonFiniteError
from ..kernels import ROWS, layout


class _Switch:
    """The process-wide switch (a debugging aid: one flag, read once per call)."""

    __slots__ = ("on",)

    def __init__(self):
        self.on = False


SWITCH = _Switch()


class debug_nans:
    """Raise ``FloatingPointError`` at the first node whose value or gradient becomes NaN or
    infinite, naming the op, its operand shapes and your source line.

    As a global switch: ``bn.debug_nans(True)`` ... ``bn.debug_nans(False)``. As a context:
    ``with bn.debug_nans(): loss, g = vg(params, x)`` (restores the previous setting). It is
    process-wide. Runs become much slower (one kernel call per node), so use it to debug.
    """

    def __init__(self, enable=True):
        self.previous = SWITCH.on
        SWITCH.on = bool(enable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        SWITCH.on = self.previous
        return False


def operands(tape, i):
    """The nodes whose gradients node i's backward adds into (its differentiable operands)."""
    row = ROWS[tape.op[i]]
    p = int(tape.pp[i])
    if row.name in ("sum", "sumsq"):
        return [int(k) for k in tape.P[p + 1:p + 1 + tape.P[p]]]
    if row.name == "inner":
        m = int(tape.P[p])
        nodes = [int(k) for k in tape.P[p + 1:p + 1 + 2 * m]]
        return nodes + ([int(tape.a0[i])] if tape.a0[i] >= 0 else [])
    if row.name == "gather":
        positions = tape.P[p:p + int(tape.off[i + 1] - tape.off[i])]
        return sorted({int(k) for k in np.searchsorted(tape.off, positions, "right") - 1})
    if row.name in ("cross_entropy", "take"):      # the second operand is integer data
        return [int(tape.a0[i])]
    return [int(k) for k in (tape.a0[i], tape.a1[i]) if k >= 0]


def _node(tape, i):
    """'%i = op' with its operand shapes, for a message."""
    shapes = [tuple(tape.shapes[k]) for k in operands(tape, i)]
    return f"node %{i} = {ROWS[tape.op[i]].name} (operand shapes {shapes})"


def _site(tape, i):
    if tape.sites:
        return f"\n  node %{i} was created at {tape.sites[i]}"
    return ("\n  (no source line: this tape was traced before debug_nans was on; call the "
            "transformed function with it on to trace one with source lines)")


def _first_bad(x):
    bad = np.flatnonzero(~np.isfinite(x))
    return None if bad.size == 0 else (int(bad[0]), float(x[bad[0]]))


def checked_run(state, mode):
    """``State.run(mode)`` node by node, checking every value and gradient."""
    tape, C, call = state.tape, state.C, state.call
    off, val, grad = tape.off, state.val, state.grad
    n, out = tape.n, tape.out

    def step(kind, lo, hi):
        C[layout.C_LO], C[layout.C_HI] = lo, hi
        value = call(kind)
        if value != value and C[layout.C_ERR]:
            state.raise_error()

    for i in range(n):
        if ROWS[tape.op[i]].kind != "leaf":
            step(layout.MODE_STEP_FORWARD, i, i + 1)
        bad = _first_bad(val[off[i]:off[i + 1]])
        if bad is not None:
            what = {"input": "input", "const": "captured constant"}.get(
                ROWS[tape.op[i]].name, "forward value")
            raise NonFiniteError(
                f"debug_nans: the {what} of {_node(tape, i)} is {bad[1]} at flat index "
                f"{bad[0]}" + _site(tape, i))
    value = float(val[off[out]])
    if mode in (layout.MODE_FORWARD, layout.MODE_STEP_FORWARD):
        return value
    if mode in (layout.MODE_JVP, layout.MODE_TANGENT):
        call(layout.MODE_TANGENT)          # the values are checked; then the output tangent
        bad = _first_bad(grad[off[out]:off[out + 1]])
        if bad is not None:
            raise NonFiniteError(f"debug_nans: the tangent of the output {_node(tape, out)} "
                                 f"is {bad[1]} at flat index {bad[0]}" + _site(tape, out))
        return value
    grad[:off[out]] = 0.0
    if mode == layout.MODE_VALUE_AND_GRAD:
        grad[off[out]] = 1.0
    bad = _first_bad(grad[off[out]:off[out + 1]])
    if bad is not None:
        raise NonFiniteError(f"debug_nans: the cotangent of the output is {bad[1]}")
    for i in range(out, -1, -1):
        if not tape.need[i] or ROWS[tape.op[i]].kind == "leaf":
            continue
        step(layout.MODE_STEP_BACKWARD, i, i + 1)
        for k in operands(tape, i):
            if not tape.need[k]:
                continue
            bad = _first_bad(grad[off[k]:off[k + 1]])
            if bad is not None:
                raise NonFiniteError(
                    f"debug_nans: the backward of {_node(tape, i)} made the gradient of its "
                    f"operand %{k} ({ROWS[tape.op[k]].name}) {bad[1]} at flat index {bad[0]}"
                    + _site(tape, i))
    return value
