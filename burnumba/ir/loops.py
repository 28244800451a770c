"""The run of a tape holding structured loops (``bn.fori_loop``, ``bn.scan``,
``bn.while_loop``; their layout: ``tracing/loops.py``).

The compiled kernel knows nothing of loops: a loop's body is a node range, and this driver
runs the tape as stepped sweeps over node ranges (``MODE_STEP_FORWARD`` /
``MODE_STEP_BACKWARD``), the body's range once per step, with the copies between steps
done on slices of the value arena. It stands in for the kernel's caller (``State.call``),
so every path that runs a tape through its State runs loops.

Reverse mode. Forward, each step's values of the loop's nodes (``val[off[lo]:off[hi]]``)
are kept, or with ``checkpoint=k`` only the carry every k steps. Backward, step by step from
the last: the step's values are put back (or recomputed from the nearest kept carry, k
steps at a time), the loop's gradients are zeroed, the carry out's gradient is seeded with
the carry's cotangent (from the nodes after the loop for the last step, from the next
step's carry in otherwise) and the step's outputs' with their rows of ``ys``'s gradient,
and the body's range is swept backward. The closed-over values' gradients (nodes before the
loop) accumulate over the steps, as the sum over the steps' uses should. The carry in's
gradient after step 0 flows to the initial values through the gathers that made it.
"""
import numpy as np

from .._errors import UnsupportedOpError, at_user_site
from ..kernels import layout
from ..tracing.loops import Bound, run_forward

SF, SB = layout.MODE_STEP_FORWARD, layout.MODE_STEP_BACKWARD
RUNS = frozenset((layout.MODE_FORWARD, layout.MODE_VALUE_AND_GRAD, layout.MODE_VJP))


class _Failed(Exception):
    """A sweep reported bad data (C_ERR set): the run stops and returns NaN."""


class _Kept:
    """Rows kept by a loop's forward for its reverse sweep, grown by doubling (while_loop's
    trip count is not known in advance): every step's values of nodes lo .. hi - 1, or the
    carry in (nodes lo .. body_lo - 1) of every k-th step."""

    __slots__ = ("rows",)

    def __init__(self, width, dtype):
        self.rows = np.empty((1, width), dtype=dtype)

    def fit(self, count):
        if count > self.rows.shape[0]:
            self.rows = np.empty((count, self.rows.shape[1]), dtype=self.rows.dtype)
        return self.rows

    def grow(self):
        grown = np.empty((2 * self.rows.shape[0], self.rows.shape[1]), dtype=self.rows.dtype)
        grown[:self.rows.shape[0]] = self.rows
        self.rows = grown
        return grown


class _LoopRun:
    """One loop on one State's arrays: its bound views, its sweeps over the body, what it
    kept; all made once per State."""

    def __init__(self, runner, loop):
        self.loop = loop
        self.b = Bound(loop, runner.val, runner.off, runner.grad)
        self.full = _Kept(self.b.width, runner.val.dtype)           # every step's values
        self.carry = _Kept(self.b.carry_width, runner.val.dtype)    # every k-th carry
        self.forward, self.backward = runner.sweep(loop, SF), runner.sweep(loop, SB)
        self.steps = self.every = 0

    def run_forward(self):
        b, loop = self.b, self.loop
        guess = b.steps()
        # while_loop's count is known only at its end: the sqrt policy takes the last run's
        every = self.every = loop.every(guess if guess is not None else self.steps)
        region, preamble = b.region, b.preamble
        if every == 0:
            kept = self.full
            rows = kept.fit(guess if guess is not None else 16)

            def keep(k):
                nonlocal rows
                if k >= rows.shape[0]:
                    rows = kept.grow()
                rows[k] = region
        else:
            kept = self.carry
            rows = kept.fit(-(-guess // every) if guess is not None else 16)

            def keep(k):
                nonlocal rows
                if k % every == 0:
                    if k // every >= rows.shape[0]:
                        rows = kept.grow()
                    rows[k // every] = preamble
        self.steps = run_forward(b, self.forward, keep)

    def run_backward(self):
        b, loop, steps, every = self.b, self.loop, self.steps, self.every
        forward, backward = self.forward, self.backward
        val = b.val
        g = b.res_grad.copy()                     # the final carry's cotangent
        yg = [(y, rows[:steps].copy()) for y, rows in b.ys_grad]
        region, region_grad, preamble = b.region, b.region_grad, b.preamble
        cin, cout, cin_grad, cout_grad = b.cin, b.cout, b.cin_grad, b.cout_grad
        nested = bool(loop.children)
        counter = b.counter
        first = b.first() if counter >= 0 else 0
        step_lo, step_hi = loop.step_lo, loop.hi

        def back(k):
            region_grad[:] = 0.0
            cout_grad[:] = g
            for y, rows in yg:
                y[:] = rows[k]
            backward(step_lo, step_hi)
            g[:] = cin_grad

        if every == 0:
            rows = self.full.rows
            for k in range(steps - 1, -1, -1):
                region[:] = rows[k]
                if nested:                        # the inner loops' kept values, again
                    forward(step_lo, step_hi)
                back(k)
        else:
            # recompute each segment of ``every`` steps from its kept carry, keeping every
            # step's values of the segment, then sweep the segment backward
            rows, carries = self.full.fit(every), self.carry.rows
            for s in range((steps - 1) // every * every if steps else -1, -1, -every):
                e = min(s + every, steps)
                preamble[:] = carries[s // every]
                for k in range(s, e):
                    if counter >= 0:
                        val[counter] = first + k
                    forward(step_lo, step_hi)
                    rows[k - s] = region
                    cin[:] = cout
                for k in range(e - 1, s - 1, -1):
                    region[:] = rows[k - s]
                    if nested:
                        forward(step_lo, step_hi)
                    back(k)
        region_grad[:] = 0.0
        cin_grad[:] = g                           # on to the initial values' gathers


class Runner:
    """``call(mode)`` for a tape with loops, on one State's arrays: a drop-in for the
    kernel's caller (returns the output's first value, or NaN with C[C_ERR] set)."""

    def __init__(self, tape, call, F, C, val, grad):
        self.tape, self.raw, self.C, self.val, self.grad = tape, call, C, val, grad
        self.off = tape.off
        self.top = tape.loop_tree
        self.runs = {}
        for loop in _all(self.top):
            self.runs[loop] = _LoopRun(self, loop)
        self.n, self.out = tape.n, tape.out
        self.oo, self.oe = int(self.off[self.out]), int(self.off[self.out + 1])
        # the reverse sweep starts at the output's node, or after the loop it lies in
        stop = self.out + 1
        for loop in _all(self.top):
            if loop.lo <= self.out < loop.end:
                stop = max(stop, loop.end)
        self.stop = stop

    def __call__(self, mode):
        if mode not in RUNS:
            raise UnsupportedOpError(at_user_site(
                "this tape holds a structured loop (bn.fori_loop, bn.scan, bn.while_loop) run "
                "step by step, which this transformation's run does not do (mode "
                f"{mode}): burnumba traces loops so only under bn.grad, bn.value_and_grad and "
                "bn.Trainer; pass unroll=True to the loop to trace it step by step"))
        val, grad, oo = self.val, self.grad, self.oo
        try:
            self._forward(0, self.n, self.top)
            if mode == layout.MODE_FORWARD:
                return float(val[oo])
            if mode == layout.MODE_VJP:
                seed = grad[oo:self.oe].copy()
                grad[:] = 0.0
                grad[oo:self.oe] = seed
            else:
                grad[:] = 0.0
                grad[oo] = 1.0
            self._backward(0, self.stop, self.top)
        except _Failed:
            return np.nan
        return float(val[oo])

    # -- the sweeps over node ranges, loops run by their steps -------------------------------
    def _step(self, mode, a, b):
        if a >= b:
            return
        C = self.C
        C[layout.C_LO] = a
        C[layout.C_HI] = b
        value = self.raw(mode)
        if value != value and C[layout.C_ERR]:
            raise _Failed

    def _forward(self, a, b, loops):
        for loop in loops:
            if loop.lo >= b:
                break
            self._step(SF, a, loop.body_lo)
            self.runs[loop].run_forward()
            a = loop.end
        self._step(SF, a, b)

    def _backward(self, a, b, loops):
        for loop in reversed(loops):
            if loop.end > b:
                continue
            self._step(SB, loop.end, b)
            self.runs[loop].run_backward()
            b = loop.body_lo
        self._step(SB, a, b)

    def sweep(self, loop, mode):
        """A sweep over a range of a loop's body (its own loops run by their steps)."""
        if loop.children:
            if mode == SF:
                return lambda a, b: self._forward(
                    a, b, [c for c in loop.children if a <= c.lo < b])
            return lambda a, b: self._backward(
                a, b, [c for c in loop.children if a <= c.lo < b])
        C, raw, ERR = self.C, self.raw, layout.C_ERR
        LO, HI = layout.C_LO, layout.C_HI

        def run(a, b):                            # _step, inlined: once per step
            C[LO] = a
            C[HI] = b
            value = raw(mode)
            if value != value and C[ERR]:
                raise _Failed
        return run


def _all(loops):
    for loop in loops:
        yield loop
        yield from _all(loop.children)
