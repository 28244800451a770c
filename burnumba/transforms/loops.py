"""Structured loops: ``bn.fori_loop``, ``bn.scan``, ``bn.while_loop`` (JAX's signatures).

On plain numbers they are the Python loops they describe. Under ``bn.grad`` and
``bn.value_and_grad`` (and ``bn.Trainer``, built on them) the body is traced **once**, as a
range of the tape's nodes (tracing/loops.py), and the tape's run steps through it
(ir/loops.py): the tape and the trace time are those of one step, whatever the trip count,
and the trip count may be a traced integer (data, read when the tape runs: no guard, no
variant per count). The reverse sweep needs each step's values: they are kept (memory
O(steps x body)), or with ``checkpoint=k`` only the carry every k steps, the steps between
recomputed during the reverse sweep (memory O(steps / k x carry + k x body), one more
forward sweep); ``checkpoint=True`` takes k = ceil(sqrt(steps)).

Everywhere else the loop is **unrolled** at trace time (the body traced once per step, the
loop as written in Python), which every transformation handles: ``jvp``, ``linearize``,
``vjp``, the Jacobians, ``hessian``, ``hvp``, ``vmap``, nested transformations (whose
derivatives are traced as ops, derive/), ``njit_value_and_grad``, ``bn.trace`` (so its tapes
can be saved), ``debug_nans``, and ``unroll=True``. An unrolled ``while_loop`` is a Python
``while`` on a traced condition: one variant per trip count (guards). The body is also
unrolled when its trace makes a Python decision on a traced value (a guard), draws random
numbers, or holds a custom derivative rule: one traced step would not stand for the others.
"""
import numpy as np

from .. import numpy as bnp
from .._errors import InputError, PytreeError, ShapeError, at_user_site
from ..derive.graph import builder_of, copy, var
from ..kernels import OPCODE
from ..tracing import randomness
from ..tracing.loops import Loop, owned
from ..tracing.pytree import describe, flatten, unflatten
from ..tracing.tracer import Var

_INPUT = OPCODE["input"]


def fori_loop(lower, upper, body_fun, init_val, *, checkpoint=None, unroll=False):
    """``body_fun(i, val)`` for i in lower .. upper - 1, from ``init_val``, as
    ``jax.lax.fori_loop``; ``val`` is any pytree of arrays and numbers, of the same structure
    and shapes on every step. ``lower`` / ``upper`` are ints, or traced ints (data).

    >>> import burnumba as bn, numpy as np
    >>> def f(x):
    ...     return np.sum(bn.fori_loop(0, 100, lambda i, y: y - 0.01 * y ** 3, x))
    >>> bool(np.all(np.isfinite(bn.grad(f)(np.array([0.5, 1.0])))))
    True
    """
    for name, bound in (("lower", lower), ("upper", upper)):
        if not (isinstance(bound, (int, np.integer)) and not isinstance(bound, bool)
                or isinstance(bound, Var) and bound.shape == ()):
            raise InputError(at_user_site(
                f"fori_loop: {name} must be an int (or a traced integer scalar), got "
                f"{type(bound).__name__} {bound!r}"))
    every = _checkpoint(checkpoint, "fori_loop")
    leaves, treedef = flatten(init_val)
    b = _structured_builder([lower, upper] + leaves, unroll)
    if b is not None:
        done = _trace_loop(b, "fori_loop", "fori", leaves, treedef,
                           lambda i, c, x: body_fun(i, c), lower=lower, upper=upper,
                           checkpoint=every)
        if done is not None:
            return done[0]
    val = init_val
    for i in range(lower, upper):              # a traced bound: a guard (__index__)
        val = body_fun(i, val)
        _check_carry("fori_loop", "body_fun", treedef, leaves, val)
    return val


def scan(f, init, xs=None, length=None, *, checkpoint=None, unroll=False):
    """``(carry, ys)``: ``carry, y = f(carry, x)`` for each x along the leading axis of the
    leaves of ``xs``, ys the y's stacked, as ``jax.lax.scan``. ``xs`` may be None with
    ``length`` given (f gets None).

    >>> import burnumba as bn, numpy as np
    >>> def f(w):                                        # a scalar RNN over 50 inputs
    ...     def step(c, x):
    ...         c = np.tanh(w * c + x)
    ...         return c, c * c
    ...     c, ys = bn.scan(step, 0.0, np.linspace(0.0, 1.0, 50))
    ...     return c + np.sum(ys)
    >>> vg = bn.value_and_grad(f)
    >>> value, g = vg(0.5)
    >>> len(next(iter(vg.tapes.values()))) < 50         # one step's nodes, not 50 steps'
    True
    """
    every = _checkpoint(checkpoint, "scan")
    x_leaves, x_def = flatten(xs) if xs is not None else ([], None)
    lengths = {int(_shape(x)[0]) for x in x_leaves if len(_shape(x)) >= 1}
    if any(_shape(x) == () for x in x_leaves):
        raise ShapeError(at_user_site("scan: every leaf of xs needs a leading axis to scan "
                                      "over; a scalar has none"))
    if length is not None:
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise InputError(at_user_site(f"scan: length must be a non-negative int, got "
                                          f"{length!r}"))
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ShapeError(at_user_site(
            "scan: " + ("give xs or length" if not lengths else
                        f"the leading axes of xs (and length) differ: {sorted(lengths)}")))
    n = lengths.pop()
    leaves, treedef = flatten(init)
    b = _structured_builder(leaves + x_leaves, unroll)
    if b is not None and n > 0:
        done = _trace_loop(b, "scan", "scan", leaves, treedef, lambda i, c, x: f(c, x),
                           xs=(x_leaves, x_def),
                           length=n, checkpoint=every)
        if done is not None:
            return done
    carry, ys = init, []
    for k in range(n):
        x = None if xs is None else unflatten(x_def, [x[k] for x in x_leaves])
        out = f(carry, x)
        carry, y = _pair(out)
        _check_carry("scan", "f", treedef, leaves, carry)
        ys.append(y)
    if not ys:
        raise ShapeError(at_user_site("scan: zero steps give no ys to stack (their shape "
                                      "is unknown): scan at least one step"))
    y_leaves, y_def = zip(*[flatten(y) for y in ys])
    return carry, unflatten(y_def[0], [np.stack([ls[j] for ls in y_leaves])
                                       for j in range(len(y_leaves[0]))])


def while_loop(cond_fun, body_fun, init_val, *, checkpoint=None, unroll=False):
    """``val = body_fun(val)`` while ``cond_fun(val)``, from ``init_val``, as
    ``jax.lax.while_loop``, and reverse-differentiable (the trip count is known once the
    forward sweep has run): under bn.grad the body is traced once and the loop runs until
    the condition fails, on every call, with no guard.

    >>> import burnumba as bn
    >>> def sqrt(a):                                     # Newton's method
    ...     x = bn.while_loop(lambda x: abs(x * x - a) > 1e-12 * a,
    ...                       lambda x: x - (x * x - a) / (2.0 * x), a)
    ...     return x
    >>> round(bn.grad(sqrt)(2.0), 12)
    0.353553390593
    """
    every = _checkpoint(checkpoint, "while_loop")
    leaves, treedef = flatten(init_val)
    b = _structured_builder(leaves, unroll)
    if b is not None:
        done = _trace_loop(b, "while_loop", "while", leaves, treedef,
                           lambda i, c, x: body_fun(c), cond_fun=cond_fun, checkpoint=every)
        if done is not None:
            return done[0]
    val = init_val
    while cond_fun(val):                       # traced: a guard per test
        val = body_fun(val)
        _check_carry("while_loop", "body_fun", treedef, leaves, val)
    return val


# -- the structured form ----------------------------------------------------------------------
def _structured_builder(leaves, unroll):
    """The trace to put a structured loop in, or None (plain numbers, ``unroll``, or a
    trace whose run cannot step through loops)."""
    b = builder_of(leaves)
    if b is None:              # no traced argument: the body may close over traced values
        rec = randomness.current()
        b = rec.builder if rec is not None else None
        b = b if b is not None and b.live else None
    if b is None or unroll or not b.loops_ok:
        return None
    return b


def _trace_loop(b, name, kind, leaves, treedef, body, *, cond_fun=None, lower=None,
                upper=None, xs=None, length=0, checkpoint=0):
    """Trace one step of the loop into ``b`` (layout: tracing/loops.py) and register it.
    Returns (final carry,) or (final carry, ys), or None when the body's trace cannot stand
    for every step (a guard, a random draw, a custom rule): the caller then unrolls (the
    step traced here is left as dead nodes, run but read by nothing)."""
    init = [b.lift(x) for x in leaves]
    bounds = [b.lift(x) for x in (lower, upper)] if kind == "fori" else []
    x_leaves = [b.lift(x) for x in xs[0]] if xs is not None else []
    lo = b.n
    cin = []
    for v in init:
        node = copy(v)
        b.need[node] = 1        # later steps may carry a gradient that step 0 does not
        cin.append(node)
    counter = -1
    if kind != "while":
        counter = b.add("input", ())
        b.input_kinds[counter] = "i"
        b.loop_owned.add(counter)
    carry = unflatten(treedef, [var(b, c) for c in cin])
    marks = (len(b.guards) if b.guards else 0, len(b.custom))
    body_lo = b.n
    cond = -1
    if kind == "while":
        c = b.lift(cond_fun(carry))
        if c.shape != ():
            raise ShapeError(at_user_site(
                f"while_loop: cond_fun must return a scalar (a bool), got shape {c.shape}"))
        cond = c.node
    step_lo = b.n
    i = var(b, counter) if counter >= 0 else None
    x = None
    if xs is not None and xs[0]:
        x = unflatten(xs[1], [bnp.take(v, i, axis=0) for v in x_leaves])
    out = body(i, carry, x)
    if kind == "scan":
        out, y = _pair(out)
    _check_carry(name, "f" if kind == "scan" else "body_fun", treedef, leaves, out)
    cout = [copy(b.lift(v)) for v in flatten(out)[0]]
    y_leaves, y_def = flatten(y) if kind == "scan" else ([], None)
    ycopy = [copy(b.lift(v)) for v in y_leaves]
    hi = b.n
    # one traced step stands for every step only if it decided nothing on traced values,
    # drew no random numbers (input nodes in the body that no inner loop owns) and holds no
    # custom rule
    drew = any(b.op[j] == _INPUT and j not in b.loop_owned for j in range(step_lo, hi))
    if ((len(b.guards) if b.guards else 0) != marks[0] or len(b.custom) != marks[1]
            or b.evaluator is not None and b.evaluator.done > lo or drew
            or not b.loops_ok):
        rec = randomness.current()
        if rec is not None and rec.builder is b:     # the dead step's draws are not drawn
            start = b.off[lo]
            rec.draws[:] = [d for d in rec.draws if d.start < start]
        return None
    res = [b.add("input", b.shapes[c], need=1) for c in cin]
    ys = [b.add("input", (length,) + b.shapes[c], need=1) for c in ycopy]
    loop = Loop(kind, name, lo, body_lo, step_lo, hi, b.n, cin, counter, cond, cout, ycopy,
                res, ys, lower=_bound(bounds[0]) if bounds else (-1, 0),
                upper=_bound(bounds[1]) if bounds else (-1, 0), length=length,
                checkpoint=checkpoint)
    b.loops.append(loop)
    b.loops.sort(key=lambda L: L.lo)
    b.loop_starts[lo] = loop
    b.loop_owned.update(owned(loop))
    # a gather made in the body is not shared with the nodes after the loop: the reverse
    # sweep zeroes the body's gradients between steps
    for key in [k for k, (_, node) in b._gathers.items() if node >= lo]:
        del b._gathers[key]
    final = unflatten(treedef, [var(b, r) for r in res])
    if kind == "scan":
        return final, unflatten(y_def, [var(b, s) for s in ys])
    return (final,)


def _bound(v):
    """(node, value) of a loop bound: a constant's value, or a traced integer's node."""
    if v._view is None and v.node in v._b.consts:
        return (-1, int(v._b.consts[v.node][0]))
    return (v.node, 0)


def _checkpoint(checkpoint, name):
    """0 (keep every step), -1 (every ceil(sqrt(steps)) steps) or k (every k steps)."""
    if checkpoint is None or checkpoint is False:
        return 0
    if checkpoint is True:
        return -1
    if isinstance(checkpoint, (int, np.integer)) and checkpoint >= 1:
        return int(checkpoint)
    raise InputError(at_user_site(
        f"{name}: checkpoint must be None, True (every sqrt(steps) steps) or an int k >= 1 "
        f"(keep the carry every k steps), got {checkpoint!r}"))


def _pair(out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise PytreeError(at_user_site(
            f"scan: f must return a pair (carry, y), got {type(out).__name__}"))
    return out[0], out[1]


def _check_carry(name, fun, treedef, leaves, out):
    """The carry a step returns has the initial value's structure, shapes and dtype kinds."""
    out_leaves, out_def = flatten(out)
    if out_def != treedef:
        raise PytreeError(at_user_site(
            f"{name}: {fun} returned a carry of structure {describe(out_def)}, but the initial "
            f"value has {describe(treedef)}: the carry keeps its structure on every step"))
    for j, (a, o) in enumerate(zip(leaves, out_leaves)):
        if _shape(a) != _shape(o):
            raise ShapeError(at_user_site(
                f"{name}: {fun} changed the shape of the carry's leaf {j} from "
                f"{_shape(a)} to {_shape(o)}: the carry keeps its shapes on every step "
                "(broadcast or reshape the initial value)"))
        if not isinstance(a, Var) and not isinstance(o, Var):
            ka, ko = np.result_type(a).kind, np.result_type(o).kind
            if ka != ko and not (ka in "iu" and ko in "iu"):
                raise InputError(at_user_site(
                    f"{name}: {fun} changed the dtype of the carry's leaf {j} from "
                    f"{np.result_type(a)} to {np.result_type(o)}: give the initial value "
                    "the dtype the body returns (e.g. 0.0 rather than 0)"))


def _shape(x):
    return x.shape if isinstance(x, Var) else np.shape(x)
