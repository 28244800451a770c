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
from ..tracing.loops import run_forward, slices

SF, SB = layout.MODE_STEP_FORWARD, layout.MODE_STEP_BACKWARD
RUNS = frozenset((layout.MODE_FORWARD, layout.MODE_VALUE_AND_GRAD, layout.MODE_VJP))


class _Failed(Exception):
    """A sweep reported bad data (C_ERR set): the run stops and returns NaN."""


class _Kept:
    """What one loop's forward kept for its reverse sweep: the steps run, and either every
    step's values of nodes lo .. hi - 1 (``every`` 0) or the carry in (nodes lo ..
    body_lo - 1) of every ``every``-th step."""

    __slots__ = ("steps", "every", "rows", "width")

    def __init__(self, width):
        self.steps, self.every, self.rows, self.width = 0, 0, None, width

    def reset(self, every, guess, val_dtype):
        self.every = every
        count = guess if every == 0 else (guess + every - 1) // every if guess else 0
        if self.rows is None or self.rows.shape[0] < count:
            self.rows = np.empty((max(count, 1), self.width), dtype=val_dtype)

    def row(self, j):
        """Row j, grown by doubling (while_loop's trip count is not known in advance)."""
        if j >= self.rows.shape[0]:
            grown = np.empty((2 * self.rows.shape[0], self.width), dtype=self.rows.dtype)
            grown[:self.rows.shape[0]] = self.rows
            self.rows = grown
        return self.rows[j]


class Runner:
    """``call(mode)`` for a tape with loops, on one State's arrays: a drop-in for the
    kernel's caller (returns the output's first value, or NaN with C[C_ERR] set)."""

    def __init__(self, tape, call, F, C, val, grad):
        self.tape, self.raw, self.C, self.val, self.grad = tape, call, C, val, grad
        self.off = tape.off
        self.top = tape.loop_tree
        self.kept, self.every = {}, {}
        self.slices = {}
        for loop in _all(self.top):
            cin_lo = int(self.off[loop.lo])
            self.kept[loop] = (_Kept(int(self.off[loop.hi]) - cin_lo),
                               _Kept(int(self.off[loop.body_lo]) - cin_lo))
            self.slices[loop] = slices(loop, self.off)
        self.n, self.out = tape.n, tape.out
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
        val, grad, off = self.val, self.grad, self.off
        oo = int(off[self.out])
        try:
            self._forward(0, self.n, self.top)
            if mode == layout.MODE_FORWARD:
                return float(val[oo])
            if mode == layout.MODE_VJP:
                seed = grad[oo:int(off[self.out + 1])].copy()
                grad[:] = 0.0
                grad[oo:oo + seed.size] = seed
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
            self._loop_forward(loop)
            a = loop.end
        self._step(SF, a, b)

    def _backward(self, a, b, loops):
        for loop in reversed(loops):
            if loop.end > b:
                continue
            self._step(SB, loop.end, b)
            self._loop_backward(loop)
            b = loop.body_lo
        self._step(SB, a, b)

    def _body(self, loop, mode=SF):
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

    def _loop_forward(self, loop):
        val, off = self.val, self.off
        full, carry = self.kept[loop]
        lo, hi, mid = int(off[loop.lo]), int(off[loop.hi]), int(off[loop.body_lo])
        guess = loop.steps(val, off)
        every = loop.every(guess or 0)
        self.every[loop] = every
        kept = full if every == 0 else carry
        kept.reset(every, guess or 16, val.dtype)
        region, preamble = val[lo:hi], val[lo:mid]
        if every == 0 and guess is not None:
            rows = full.rows

            def keep(k):
                rows[k] = region
        elif every == 0:
            def keep(k):
                full.row(k)[:] = region
        else:
            def keep(k):
                if k % every == 0:
                    carry.row(k // every)[:] = preamble
        kept.steps = run_forward(loop, val, off, self._body(loop), keep)

    def _loop_backward(self, loop):
        val, grad, off = self.val, self.grad, self.off
        full, carry = self.kept[loop]
        (ci, cj), (co, _), (ri, rj), ys = self.slices[loop]
        lo, hi, mid = int(off[loop.lo]), int(off[loop.hi]), int(off[loop.body_lo])
        every = self.every[loop]
        steps = (carry if every else full).steps
        forward, backward = self._body(loop), self._body(loop, SB)
        g = grad[ri:rj].copy()                    # the final carry's cotangent
        yg = [(grad[y:y + size], grad[s:s + size * steps].reshape(-1, size).copy())
              for y, size, s in ys if size]
        size_c = cj - ci
        region, region_grad, preamble = val[lo:hi], grad[lo:hi], val[lo:mid]
        cin, cout, cin_grad, cout_grad = (val[ci:cj], val[co:co + size_c], grad[ci:cj],
                                          grad[co:co + size_c])
        nested = bool(loop.children)
        counter = int(off[loop.counter]) if loop.counter >= 0 else -1
        first = loop.first(val, off) if counter >= 0 else 0
        step_lo, step_hi = loop.step_lo, loop.hi

        def back(k):
            region_grad[:] = 0.0
            cout_grad[:] = g
            for y, rows in yg:
                y[:] = rows[k]
            backward(step_lo, step_hi)
            g[:] = cin_grad

        if every == 0:
            rows = full.rows
            for k in range(steps - 1, -1, -1):
                region[:] = rows[k]
                if nested:                        # the inner loops' kept values, again
                    forward(step_lo, step_hi)
                back(k)
        else:
            # recompute each segment of ``every`` steps from its kept carry, keeping every
            # step's values of the segment, then sweep the segment backward
            seg = full
            seg.reset(0, every, val.dtype)
            rows = seg.rows
            for s in range((steps - 1) // every * every if steps else -1, -1, -every):
                e = min(s + every, steps)
                preamble[:] = carry.rows[s // every]
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


def _all(loops):
    for loop in loops:
        yield loop
        yield from _all(loop.children)
