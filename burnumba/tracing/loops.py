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
                 "checkpoint", "children")

    def __init__(self, kind, name, lo, body_lo, step_lo, hi, end, cin, counter, cond, cout,
                 ycopy, res, ys, lower=(-1, 0), upper=(-1, 0), length=0, checkpoint=0):
        self.kind, self.name = kind, name
        self.lo, self.body_lo, self.step_lo, self.hi, self.end = lo, body_lo, step_lo, hi, end
        self.cin, self.counter, self.cond = tuple(cin), counter, cond
        self.cout, self.ycopy, self.res, self.ys = tuple(cout), tuple(ycopy), tuple(res), tuple(ys)
        self.lower, self.upper, self.length = lower, upper, length
        self.checkpoint = checkpoint
        self.children = ()          # the loops nested directly in this one's body

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


class Bound:
    """A loop's places in one arena (``val``; ``grad`` too for a run's reverse sweep): the
    positions and the views the runner copies between steps, made once."""

    def __init__(self, loop, val, off, grad=None):
        self.loop = loop
        self.val = val

        def span(nodes):
            return (int(off[nodes[0]]), int(off[nodes[-1] + 1])) if nodes else (0, 0)
        (ci, cj), (co, _), (ri, rj) = span(loop.cin), span(loop.cout), span(loop.res)
        lo, mid, hi = int(off[loop.lo]), int(off[loop.body_lo]), int(off[loop.hi])
        self.cin, self.cout, self.res = val[ci:cj], val[co:co + (cj - ci)], val[ri:rj]
        self.region, self.preamble = val[lo:hi], val[lo:mid]
        self.width, self.carry_width = hi - lo, mid - lo
        # (a step output's view, the rows of the stacked outputs' views), for scan
        ys = [(int(off[y]), int(off[y + 1]) - int(off[y]), int(off[s]))
              for y, s in zip(loop.ycopy, loop.ys)]
        self.ys = [(val[y:y + size], val[s:s + loop.length * size].reshape(-1, size))
                   for y, size, s in ys if size]
        self.counter = int(off[loop.counter]) if loop.counter >= 0 else -1
        self.cond = int(off[loop.cond]) if loop.cond >= 0 else -1
        self.lower = (int(off[loop.lower[0]]) if loop.lower[0] >= 0 else None, loop.lower[1])
        self.upper = (int(off[loop.upper[0]]) if loop.upper[0] >= 0 else None, loop.upper[1])
        if grad is not None:
            self.cin_grad, self.cout_grad = grad[ci:cj], grad[co:co + (cj - ci)]
            self.res_grad, self.region_grad = grad[ri:rj], grad[lo:hi]
            self.ys_grad = [(grad[y:y + size], grad[s:s + loop.length * size].reshape(-1, size))
                            for y, size, s in ys if size]

    def first(self):
        """The counter's first value: fori_loop's lower bound, else 0."""
        pos, value = self.lower
        return int(self.val[pos]) if pos is not None else int(value)

    def steps(self):
        """The trip count for the arena's values (None for while_loop: until cond fails)."""
        loop = self.loop
        if loop.kind == "while":
            return None
        if loop.kind == "scan":
            return loop.length
        pos, value = self.upper
        upper = int(self.val[pos]) if pos is not None else int(value)
        return max(0, upper - self.first())


def run_forward(bound, run, kept=None):
    """Run a loop on its bound arena: ``run(a, b)`` evaluates nodes a .. b - 1 (the caller
    has evaluated the carry in, nodes lo .. body_lo - 1); ``kept(k)`` is called after step
    k's body, before its carry moves on. Returns the number of steps run."""
    loop, val = bound.loop, bound.val
    cin, cout, ys, counter, cond = bound.cin, bound.cout, bound.ys, bound.counter, bound.cond
    n = bound.steps()
    if counter >= 0:
        val[counter] = bound.first()
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
    bound.res[:] = cin
    return k


def owned(loop):
    """The input nodes the loop's runner writes (counter, final carry, stacked outputs)."""
    return ((loop.counter,) if loop.counter >= 0 else ()) + loop.res + loop.ys

