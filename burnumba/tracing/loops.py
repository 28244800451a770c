"""A structured loop in a trace (``bn.fori_loop``, ``bn.scan``, ``bn.while_loop``): the
body traced once, its nodes run once per step.

A loop is a contiguous range of the builder's nodes, ``lo .. end - 1``, laid out so that
one step is one stepped sweep of the kernel over a node range (``MODE_STEP_FORWARD`` /
``MODE_STEP_BACKWARD``) and everything between steps is a copy of a slice of the value
arena::

    lo       cin_0 .. cin_m-1        the carry in: gathers of the initial values (step 0),
             counter                 the step's index (an input node the runner writes)
    body_lo  cond nodes .. cond      (while_loop) the condition on the carry in
    step_lo  body nodes              the body on the carry in (and, for scan, on xs[counter])
             cout_0 .. cout_m-1      the carry out: gathers of the body's results
             ycopy_0 .. ycopy_p-1    (scan) the step's outputs: gathers of them
    hi       res_0 .. res_m-1        the final carry (input nodes the runner writes)
             ys_0 .. ys_p-1          (scan) the stacked outputs (input nodes, runner-written)
    end

Between steps the runner copies the carry out onto the carry in (one slice: the cin and
cout nodes are laid out alike and contiguously), adds 1 to the counter and copies the
step's outputs into row k of ``ys``. After the last step the carry in (which then holds the
final carry) is copied into ``res``. The nodes after the loop read ``res`` and ``ys`` only.

This module holds the layout and the forward semantics, which the trace's evaluator
(``concrete.Evaluator``, for Python decisions after a loop) and the run driver
(``ir/loops.py``, forward and reverse sweeps) share.
"""
import math


class Loop:
    """One structured loop of a trace, by its node indices (see the module's docstring).

    ``lower`` / ``upper``: (node, value) of fori_loop's bounds, node -1 for a constant
    ``value``; ``length``: scan's step count; while_loop has neither (``cond`` >= 0).
    ``checkpoint``: 0 keeps every step's values for the reverse sweep; k >= 1 keeps the
    carry every k steps and recomputes the steps between during the reverse sweep; -1 picks
    k = ceil(sqrt(steps)) on each run."""

    __slots__ = ("kind", "name", "lo", "body_lo", "step_lo", "hi", "end", "cin", "counter",
                 "cond", "cout", "ycopy", "res", "ys", "lower", "upper", "length",
                 "checkpoint", "children", "site")

    def __init__(self, kind, name, lo, body_lo, step_lo, hi, end, cin, counter, cond, cout,
                 ycopy, res, ys, lower=(-1, 0), upper=(-1, 0), length=0, checkpoint=0,
                 site=None):
        self.kind, self.name, self.site = kind, name, site
        self.lo, self.body_lo, self.step_lo, self.hi, self.end = lo, body_lo, step_lo, hi, end
        self.cin, self.counter, self.cond = tuple(cin), counter, cond
        self.cout, self.ycopy, self.res, self.ys = tuple(cout), tuple(ycopy), tuple(res), tuple(ys)
        self.lower, self.upper, self.length = lower, upper, length
        self.checkpoint = checkpoint
        self.children = ()          # the loops nested directly in this one's body

    def first(self, val, off):
        """The counter's first value: fori_loop's lower bound, else 0."""
        node, value = self.lower
        return int(val[off[node]]) if node >= 0 else int(value)

    def steps(self, val, off):
        """The trip count for the values ``val`` (None for while_loop: until cond fails)."""
        if self.kind == "while":
            return None
        if self.kind == "scan":
            return self.length
        node, value = self.upper
        upper = int(val[off[node]]) if node >= 0 else int(value)
        return max(0, upper - self.first(val, off))

    def every(self, steps):
        """How many steps apart the carry is kept (0: every step's values are kept)."""
        if self.checkpoint == -1:
            return max(1, math.ceil(math.sqrt(max(steps, 1))))
        return self.checkpoint


def nest(loops):
    """The loops not inside another one, each with its ``children`` set (the loops directly
    inside its body); ``loops`` in the order of their first node."""
    top, stack = [], []
    for loop in loops:
        while stack and loop.lo >= stack[-1].end:
            stack.pop()
        if stack:
            stack[-1].children += (loop,)
        else:
            top.append(loop)
        stack.append(loop)
    return tuple(top)


def slices(loop, off):
    """(cin, cout, res) as (start, stop) slices of val, and the step outputs' (ycopy start,
    size, ys start) triples: the runner's copies, in arena positions."""
    cin = (int(off[loop.cin[0]]), int(off[loop.cin[-1] + 1])) if loop.cin else (0, 0)
    cout = (int(off[loop.cout[0]]), int(off[loop.cout[-1] + 1])) if loop.cout else (0, 0)
    res = (int(off[loop.res[0]]), int(off[loop.res[-1] + 1])) if loop.res else (0, 0)
    ys = [(int(off[y]), int(off[y + 1]) - int(off[y]), int(off[s]))
          for y, s in zip(loop.ycopy, loop.ys)]
    return cin, cout, res, ys


def run_forward(loop, val, off, run, kept=None):
    """Run ``loop`` on the arena ``val``: ``run(a, b)`` evaluates nodes a .. b - 1 (the
    caller has evaluated the carry in, nodes lo .. body_lo - 1); ``kept(k)`` is called
    after step k's body, before its carry moves on. Returns the number of steps run."""
    (ci, cj), (co, _), (ri, rj), ys = slices(loop, off)
    cin, cout = val[ci:cj], val[co:co + (cj - ci)]        # views, made once
    ys = [(val[y:y + size], val[s:s + loop.length * size].reshape(-1, size))
          for y, size, s in ys if size]
    n = loop.steps(val, off)
    counter = int(off[loop.counter]) if loop.counter >= 0 else -1
    if counter >= 0:
        val[counter] = loop.first(val, off)
    cond = int(off[loop.cond]) if loop.cond >= 0 else -1
    body_lo, step_lo, hi = loop.body_lo, loop.step_lo, loop.hi
    k = 0
    while True:
        if cond >= 0:
            run(body_lo, step_lo)
            if val[cond] == 0:                   # NaN is true, as in Python
                break
        elif k >= n:
            break
        run(step_lo, hi)
        if kept is not None:
            kept(k)
        for y, rows in ys:
            rows[k] = y
        cin[:] = cout
        if counter >= 0:
            val[counter] += 1
        k += 1
    val[ri:rj] = cin
    return k


def owned(loop):
    """The input nodes the loop's runner writes (counter, final carry, stacked outputs)."""
    return ((loop.counter,) if loop.counter >= 0 else ()) + loop.res + loop.ys

