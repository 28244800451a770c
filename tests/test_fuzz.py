"""Differential fuzz: random tensor programs, burnumba against HIPS autograd.

hypothesis draws a small *program*: 1-3 float input arrays (0-d to 3-d, 1-5 per axis) and
1-8 steps. Each step applies one op to values of a pool that starts with the inputs and
grows with every result. Every value that no later step consumes is an output, and the
loss is ``sum_k np.sum(out_k * w_k)`` with fixed random weights ``w_k``, so that
``value_and_grad`` applies; it differentiates every float input. A program is Python source,
one line per step, and the same source runs three ways:

* traced by burnumba on float64 inputs, and on the same inputs as float32;
* by autograd in long double, with ``np`` bound to autograd.numpy and ``bn`` to the
  references below.

Valid by construction, without ``assume``: each step is drawn against the shapes already
in the pool (it is computed eagerly with numpy as it is drawn). A binary op takes a partner
that broadcasts with its first operand (a pool value that broadcasts, a constant of a
broadcastable shape, a scalar, or the operand reversed); matmul slices its operands to a
common contraction length (and batch); concatenate, stack and layer_norm take partners of
matching shapes or constants made to fit. log, sqrt, reciprocal, x ** 2.5 and the bases of
powers read positive-ized operands (``x * x + 0.5``, ``abs(x) + 0.5``, ``sigmoid(x) + 0.5``,
``exp(x)``). A result beyond LIMIT in absolute value is multiplied by a power of 2 (exact
in both dtypes), so exp, powers and sums never overflow and float32 stays well-conditioned.
Half the input shapes are square, where a transpose keeps the shape, and ``view_chain``
steps compose two or three views in one expression (x.T.T, x[::-1].T[1:], ...).
``setitem`` steps write in place (``y[key] op= b`` into a copy, every index kind); autograd
refuses writes, so the reference builds the same update functionally (``_set_functional``).

Kinks: the ``kink`` steps apply relu, abs, maximum, minimum, where or a max / min reduction
to an input and a constant equal to it at some positions. Both are float32 numbers, so
their zeros and ties are exact in both dtypes. Grid inputs (multiples of 1/2) and the
partner ``x[::-1]`` (equal to x at the middle) bring more of them into the other steps.
burnumba's conventions there, as torch and JAX: relu'(0) = 0, abs'(0) = 0, maximum and
minimum give 1/2 to each side of a tie, and a max / min reduction splits the gradient
evenly among tied extrema. autograd 1.9 agrees, except that its ``maximum(x, 0.0)`` gives
1/2 at 0, so the reference relu is a ``where``; test_kinks_at_exact_values and
test_autograd_kink_conventions pin these.

Tolerances, elementwise: |ours - ref| <= rtol * |ref| + atol * scale + ROUNDING * u * sens
+ REFERENCE * u_ref * terms. The scale is the size of the terms: for the value, terms =
sum_k sum |out_k * w_k|; for the gradients, the largest gradient element of any input. u
is the dtype's unit roundoff and sens the result's measured sensitivity to rounding errors
(see reference()), which covers cancellation: a gradient that sums to nearly zero
(layer_norm over 2 elements, log_softmax of a broadcast scalar) would otherwise be a false
alarm. The reference runs in long double (u_ref), and its last term bounds the
reference's own error. float64 is compared at rtol 1e-9, atol 1e-12; float32 burnumba
against the same reference at rtol 2e-3, atol 2e-4 (inputs, constants and weights are
float32 numbers, so both runs see the same inputs).

On a mismatch, hypothesis shrinks the program, and the AssertionError's message is a
standalone script that reproduces it, with both results and where they differ.
BURNUMBA_FUZZ_GRAPHS=20000 runs more programs; BURNUMBA_HYPOTHESIS=thorough, new ones on
each run.
"""
import inspect
import math
import os
import re
import types
from collections import Counter
from typing import NamedTuple

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.extend import defvjp, primitive
from autograd.tracer import getval
from hypothesis import given, settings
from hypothesis import strategies as st

import burnumba as bn

# programs per run, each checked in float64 and in float32
N_GRAPHS = int(os.environ.get("BURNUMBA_FUZZ_GRAPHS", "1000"))
MAX_STEPS = 8
LIMIT = 4.0            # |values| stay below this (results beyond it are scaled by 2 ** -k)
MAX_SIZE = 240         # elements per value
MAX_NDIM = 4
STYLES = ("smooth", "grid", "mixed")
TOLERANCES = {"float64": (1e-9, 1e-12), "float32": (2e-3, 2e-4)}   # (rtol, atol)
EPS = 1e-6             # relative size of the stand-in's rounding errors (see reference)
ROUNDING_DRAWS = 4     # runs of the stand-in
ROUNDING = 64          # allowed rounding error, in units of u * sensitivity (see reference)
REFERENCE = 1000       # allowed error of the reference, in units of its u * terms

# Programs that ran and compared, per dtype, and programs that met an exact kink.
COUNTS = Counter()



# -- the references: autograd.numpy, and burnumba's extra functions written in it ----------

# The rounding stand-in (see reference()). When it is on (a generator here), ``_round(v)``
# multiplies v by 1 + EPS * N(0, 1), elementwise, and the gradient flowing back through it
# by that factor (the chain rule) and by another, independent one: an error of the backward
# pass's own arithmetic (it is what breaks the cancellation in layer_norm's gradient).
# ``exact=True`` leaves v alone and perturbs its gradient only.
_NOISE = {"rng": None}

# autograd.numpy functions whose results are rounded (the rest select or move values)
ROUNDED = {"exp", "log", "sqrt", "tanh", "sin", "cos", "square", "reciprocal", "add",
           "subtract", "multiply", "divide", "power", "sum", "mean", "var", "std", "matmul",
           "dot"}


@primitive
def _perturbed(v, forward, backward):
    return v * forward


defvjp(_perturbed, lambda ans, v, forward, backward: lambda g: g * (forward * backward))


def _round(v, exact=False):
    rng = _NOISE["rng"]
    if rng is None:
        return v
    forward, backward = 1.0 + EPS * rng.standard_normal((2,) + np.shape(v))
    return _perturbed(v, 1.0 if exact else forward, backward)


class _RefNumpy:
    """autograd.numpy, with the functions whose gradients autograd lacks (take, broadcast_to
    with new leading axes, where with broadcasting) written through ones it has, and the
    rounding stand-in applied to the results of the ROUNDED functions."""

    def __getattr__(self, name):
        f = getattr(anp, name)
        if name not in ROUNDED:
            return f
        return lambda *args, **kwargs: _round(f(*args, **kwargs))

    @staticmethod
    def take(a, indices, axis=None):
        if axis is None:
            return anp.ravel(a)[indices]
        return a[(slice(None),) * (axis % anp.ndim(a)) + (np.asarray(indices),)]

    @staticmethod
    def broadcast_to(a, shape):
        return a + np.zeros(shape)

    @staticmethod
    def where(condition, x, y):
        zeros = np.zeros(np.broadcast_shapes(*(np.shape(v) for v in (condition, x, y))))
        return anp.where(condition, x + zeros, y + zeros)


rnp = _RefNumpy()


# burnumba's own functions, written in it (arithmetic through rnp's functions, which the
# rounding stand-in sees, rather than through operators). The fused ones start with
# ``_round(x, exact=True)``: burnumba's fused backward rounds the gradient it hands to x,
# after the projection (g - mean(g) ...) that makes the reference's own sum to zero exactly.

def _relu(x):
    # relu'(0) = 0, as torch, JAX and burnumba; autograd's maximum(x, 0.0) would give 1/2.
    return anp.where(x > 0.0, x, 0.0)


def _sigmoid(x):
    return rnp.reciprocal(rnp.add(1.0, rnp.exp(-x)))


def _shift(x, axis):
    """The max-shift of the stable softmax family, as a constant (its gradient is zero; as
    in burnumba and jax.nn, it is not differentiated. Through max, the gradient of
    softmax(broadcast_to(x, n)) would be an exact zero in the reference, where burnumba's
    fused rows round, and the rounding stand-in could not see it)."""
    return np.max(getval(x), axis=axis, keepdims=True)


def _logsumexp(x, axis=-1, keepdims=False):
    x = _round(x, exact=True)
    m = _shift(x, axis)
    s = rnp.sum(rnp.exp(rnp.subtract(x, m)), axis=axis, keepdims=True)
    r = rnp.add(rnp.log(s), m)
    if keepdims:
        return r
    return anp.reshape(r, ()) if axis is None else anp.squeeze(r, axis=axis)


def _softmax(x, axis=-1):
    x = _round(x, exact=True)
    e = rnp.exp(rnp.subtract(x, _shift(x, axis)))
    return rnp.divide(e, rnp.sum(e, axis=axis, keepdims=True))


def _log_softmax(x, axis=-1):
    x = _round(x, exact=True)
    return rnp.subtract(x, _logsumexp(x, axis=axis, keepdims=True))


def _layer_norm(x, weight=None, bias=None, eps=1e-5):
    x = _round(x, exact=True)
    d = rnp.subtract(x, rnp.mean(x, axis=-1, keepdims=True))
    var = rnp.mean(rnp.square(d), axis=-1, keepdims=True)
    y = rnp.divide(d, rnp.sqrt(rnp.add(var, eps)))
    if weight is not None:
        y = rnp.multiply(y, weight)
    if bias is not None:
        y = rnp.add(y, bias)
    return y


REF_BN = types.SimpleNamespace(relu=_relu, sigmoid=_sigmoid, logsumexp=_logsumexp,
                               softmax=_softmax, log_softmax=_log_softmax,
                               layer_norm=_layer_norm)


# -- programs ----------------------------------------------------------------------------------

def _values(rng, shape, style):
    """Float32 numbers (so that both dtypes see the same inputs), held in float64."""
    if style == "grid":                  # multiples of 1/2: exact zeros and ties
        return rng.integers(-4, 5, size=shape) / 2.0
    x = np.asarray(rng.uniform(-2.0, 2.0, size=shape).astype(np.float32), dtype=np.float64)
    if style == "mixed":                 # smooth, with a few exact zeros and halves
        pick = rng.random(size=shape) < 0.3
        x = np.where(pick, rng.integers(-2, 3, size=shape) / 2.0, x)
    return np.asarray(x, dtype=np.float64)


def _literal(a, dtype=None):
    """``np.array(...)`` source that rebuilds ``a`` exactly (Python float reprs round-trip)."""
    text = repr(np.asarray(a).tolist())
    return f"np.array({text}, dtype=np.{dtype})" if dtype else f"np.array({text})"


# In-place updates: a step ``v = _set(a, key, b, op)`` writes into a copy of a, in place
# (burnumba traces the write; the eager run is numpy's); autograd refuses writes, so its
# reference is the same update built functionally: numpy applies the assignment to the
# elements' positions (its own rules for repeated indices, masks and steps) and the result
# gathers from a and the written values.

def _set(a, key, b, op):
    y = a.copy()
    if op == "=":
        y[key] = b
    elif op == "+=":
        y[key] += b
    elif op == "-=":
        y[key] -= b
    else:
        y[key] *= b
    return y


def _set_functional(a, key, b, op):
    shape = np.shape(a)
    size = math.prod(shape)
    target = np.zeros(shape)[key].shape
    if op != "=":
        current = a[key]
        b = {"+=": current + b, "-=": current - b, "*=": current * b}[op]
    b = b + np.zeros(target)
    positions = np.arange(size).reshape(shape)
    positions[key] = size + np.arange(math.prod(target)).reshape(target)
    both = anp.concatenate([anp.ravel(a), anp.ravel(b)])
    return anp.reshape(both[positions.reshape(-1)], shape)


class Program:
    """The inputs, captured constants, body lines and weighted outputs of one program."""

    def __init__(self):
        self.inputs = {}       # name -> float64 array of float32 numbers; differentiated
        self.indices = {}      # name -> int64 array; data, not differentiated
        self.consts = {}       # name -> float64 array, captured by the function
        self.lines = []        # one line per step
        self.results = []      # the names each line assigns
        self.rounded = set()   # results of arithmetic (not views or selections): rounded
        self.loss = ""         # the return expression
        self.terms = 0.0       # sum_k sum |out_k * w_k|, the scale of the value
        self.kinks = 0         # steps that met an exact kink (zero or tie)

    def __repr__(self):
        return self.source()

    def source(self, rounding=False):
        """``def f(...)``; with ``rounding``, every result passes through ``_round``."""
        params = ", ".join(list(self.inputs) + list(self.indices))
        body = ""
        for line, names in zip(self.lines, self.results):
            body += f"    {line}\n"
            if rounding:
                body += "".join(f"    {k} = _round({k}, exact={k not in self.rounded})\n"
                                for k in names)
        return f"def f({params}):\n{body}    return {self.loss}\n"

    def function(self, np_module, bn_module, rounding=False):
        """The program as a function with ``np`` and ``bn`` bound to the given modules."""
        scope = {"np": np_module, "bn": bn_module, "_round": _round, **self.consts,
                 "_set": _set if np_module is np else _set_functional}
        exec(self.source(rounding), scope)          # noqa: S102  (a program is source)
        return scope["f"]

    def arguments(self, dtype):
        return ([x.astype(dtype) for x in self.inputs.values()]
                + list(self.indices.values()))

    def script(self, dtype):
        """A standalone script: the program on the concrete inputs of a run in ``dtype``."""
        lines = ["import numpy as np", "import burnumba as bn", "",
                 inspect.getsource(_set), ""]
        lines += [f"{k} = {_literal(v, dtype)}" for k, v in self.inputs.items()]
        lines += [f"{k} = {_literal(v)}" for k, v in self.indices.items()]
        source = self.source()
        lines += [f"{k} = {_literal(v)}" for k, v in self.consts.items()
                  if re.search(rf"\b{k}\b", source)]
        argnums = tuple(range(len(self.inputs)))
        args = ", ".join(list(self.inputs) + list(self.indices))
        lines += ["", "", source, "",
                  f"value, grads = bn.value_and_grad(f, argnums={argnums})({args})",
                  "print(value)", "print(grads)"]
        return "\n".join(lines)


class _Gen:
    """Draws one program step by step, evaluating each step eagerly with numpy to know the
    shapes and values it builds on."""

    def __init__(self, draw, seed):
        self.draw = draw
        self.rng = np.random.default_rng(seed)
        self.prog = Program()
        self.env = {"np": np, "bn": bn, "_set": _set}   # name -> numpy value, eagerly
        self.pool = []                       # names of the values steps may use
        self.used = set()
        self.n = Counter()

    # drawing
    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flag(self):
        return self.draw(st.booleans())

    def fresh(self, prefix):
        name = f"{prefix}{self.n[prefix]}"
        self.n[prefix] += 1
        return name

    # the pool
    def shape(self, name):
        return np.shape(self.value(name))

    def value(self, expr):
        return eval(expr, self.env)

    def candidates(self, ok=lambda shape: True):
        return [v for v in self.pool if ok(self.shape(v))]

    def pick(self, ok=lambda shape: True):
        return self.choice(self.candidates(ok))

    def add_input(self, shape, style):
        name = self.fresh("x")
        self.prog.inputs[name] = self.env[name] = _values(self.rng, shape, style)
        self.pool.append(name)

    def add_indices(self, rows, shape):
        name = self.fresh("i")
        self.prog.indices[name] = self.env[name] = self.rng.integers(0, rows, size=shape)
        return name

    def const(self, shape, style="smooth", value=None):
        name = self.fresh("c")
        value = _values(self.rng, shape, style) if value is None else value
        self.prog.consts[name] = self.env[name] = value
        return name

    def tie(self, x):
        """A constant equal to the array x at some positions (one at least), else on the
        grid: ties with x, and zeros of x minus it."""
        same = self.rng.random(np.shape(x)) < 0.5
        same.reshape(-1)[self.rng.integers(np.size(x))] = True
        other = _values(self.rng, np.shape(x), "grid")
        return self.const(np.shape(x), value=np.where(same, x, other))

    def emit(self, expr, uses, n_out=1, exact=False):
        """Append ``names = expr`` to the program, unless its result is too large.
        ``exact``: the result moves or selects its operands' elements (views, joins,
        maximum, relu, ...), so the rounding stand-in leaves it alone."""
        names = [self.fresh("v") for _ in range(n_out)]
        line = f"{', '.join(names)} = {expr}"
        exec(line, self.env)                        # noqa: S102  (eagerly, in numpy)
        outs = [np.asarray(self.env[k]) for k in names]
        if any(o.size > MAX_SIZE or o.ndim > MAX_NDIM for o in outs):
            return False
        assert all(np.all(np.isfinite(o)) for o in outs), f"generator bug: {line}"
        top = max(float(np.max(np.abs(o))) for o in outs)
        if n_out == 1 and top > LIMIT:     # 2 ** -k: exact, in float32 as in float64
            scale = 2.0 ** -math.ceil(math.log2(top / LIMIT))
            line = f"{names[0]} = ({expr}) * {scale!r}"
            exec(line, self.env)                    # noqa: S102
        self.prog.lines.append(line)
        self.prog.results.append(names)
        if not exact:
            self.prog.rounded.update(names)
        self.used.update(uses)
        self.pool.extend(names)
        return True

    def finish(self):
        """The loss: every value that no step consumed, weighted by a fixed random array."""
        terms = []
        for name in self.pool:
            if name in self.used:
                continue
            w = self.const(self.shape(name))
            terms.append(f"np.sum({name} * {w})")
            self.prog.terms += float(np.sum(np.abs(self.value(name) * self.env[w])))
        self.prog.loss = " + ".join(terms)
        return self.prog


def _broadcastable(a, b):
    try:
        shape = np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return len(shape) <= MAX_NDIM and math.prod(shape) <= MAX_SIZE


def _partner_shape(g, shape):
    """A shape that broadcasts with ``shape``: some axes set to 1, size-1 axes widened,
    leading axes dropped or one added."""
    dims = []
    for d in shape:
        r = g.integer(0, 3)
        dims.append(1 if r == 2 else g.integer(2, 3) if r == 3 and d == 1 else d)
    lead = g.integer(-len(dims), 1)
    if lead < 0:
        dims = dims[-lead:]
    elif lead == 1 and len(dims) < MAX_NDIM:
        dims = [g.integer(1, 3)] + dims
    return tuple(dims)


def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def _ndim_at_least(k):
    return lambda shape: len(shape) >= k


# -- the steps: one function per kind of op ------------------------------------------------------

# ``{x}`` is the operand; ``{p}`` the operand made positive (and at least e ** -LIMIT).
UNARY = {
    "tanh": "np.tanh({x})", "exp": "np.exp({x})", "log": "np.log({p})",
    "sqrt": "np.sqrt({p})", "sin": "np.sin({x})", "cos": "np.cos({x})",
    "abs": "np.abs({x})", "abs_op": "abs({x})", "relu": "bn.relu({x})",
    "sigmoid": "bn.sigmoid({x})", "square": "np.square({x})", "square_op": "{x} ** 2",
    "cube": "{x} ** 3", "powi": "{x} ** 4", "pow_2_5": "{p} ** 2.5",
    "reciprocal": "np.reciprocal({p})", "reciprocal_neg": "1.0 / -{p}", "negative": "-{x}",
}
POSITIVE = ("({x} * {x} + 0.5)", "(np.abs({x}) + 0.5)", "(bn.sigmoid({x}) + 0.5)",
            "np.exp({x})")
BINARY = {
    "add": "{a} + {b}", "np.add": "np.add({a}, {b})", "subtract": "{a} - {b}",
    "multiply": "{a} * {b}", "divide": "{a} / ({b} * {b} + 0.5)",
    "np.divide": "np.divide({a}, np.exp({b}))",
    "maximum": "np.maximum({a}, {b})", "minimum": "np.minimum({a}, {b})",
    "power": "({a} * {a} + 0.5) ** {b}", "np.power": "np.power(np.abs({a}) + 0.5, {b})",
    "where": "np.where({a} > {b}, {a}, {b})", "where_le": "np.where({a} <= {b}, -{b}, {a})",
    "where_3": "np.where({a} < 0.5, {b}, {a} * 2.0)",
}
SCALARS = ("0.0", "0.5", "-1.5", "2.0")
EXACT = ("maximum", "minimum", "where", "where_le", "where_3")     # select, do not round


def op_unary(g):
    a = g.pick()
    name = g.choice(UNARY)
    p = g.choice(POSITIVE).format(x=a)
    if name in ("relu", "abs", "abs_op") and np.any(g.value(a) == 0.0):
        g.prog.kinks += 1
    g.emit(UNARY[name].format(x=a, p=p), [a],
           exact=name in ("relu", "abs", "abs_op", "negative"))


# ``{a}`` an input, ``{t}`` a constant equal to it at some positions: both hold float32
# numbers, so the ties, and the zeros of their difference, are exact in both dtypes.
# ``{axes}`` is 0 and the last axis of the stack (0 alone for a 0-d input): ties across
# several axes of one reduction.
KINKS = ("bn.relu({a} - {t})", "np.abs({t} - {a})", "np.maximum({a}, {t})",
         "np.minimum({t}, {a})", "np.where({a} >= {t}, {a}, -{t})",
         "np.max(np.stack([{a}, {t}]), axis=0)", "np.min(np.stack([{t}, {a}, {t}]), axis=0)",
         "np.max(np.stack([{a}, {t}]), axis={axes})", "np.min(np.stack([{t}, {a}]), axis={axes})",
         "np.maximum({a}, 0.0) - bn.relu({t})")


def op_kink(g):
    """relu, abs, maximum, minimum, where or a max / min reduction exactly at kinks."""
    a = g.choice(list(g.prog.inputs))
    t = g.tie(g.env[a])
    axes = (0, -1) if np.ndim(g.env[a]) else 0
    g.prog.kinks += 1
    g.emit(g.choice(KINKS).format(a=a, t=t, axes=axes), [a], exact=True)


def _partner(g, a):
    """Something that broadcasts with ``a``: (source text, names it uses)."""
    shape = g.shape(a)
    kinds = ["pool", "const", "scalar"] + (["reversed"] if shape else [])
    kind = g.choice(kinds)
    if kind == "pool":
        b = g.pick(lambda s: _broadcastable(s, shape))
        return b, [b]
    if kind == "const":
        return g.const(_partner_shape(g, shape), g.choice(STYLES)), []
    if kind == "scalar":
        return g.choice(SCALARS), []
    return f"{a}[::-1]", [a]                  # ties at the middle of axis 0


def op_binary(g):
    a = g.pick()
    b, uses = _partner(g, a)
    name = g.choice(BINARY)
    if name in ("maximum", "minimum") and np.any(g.value(a) == g.value(b)):
        g.prog.kinks += 1
    uses = [a] + uses
    if g.flag():                              # the partner first: 1.5 - x, 2.0 ** x ...
        a, b = b, a
    g.emit(BINARY[name].format(a=a, b=b), uses, exact=name in EXACT)


def _slice_text(n, g):
    step = g.choice([1, 2, -1, -2, 3])
    start = g.integer(-n, n - 1) if g.flag() else None
    stop = g.integer(-n, n) if g.flag() else None
    if not range(n)[slice(start, stop, step)]:
        return ":"
    text = f"{'' if start is None else start}:{'' if stop is None else stop}"
    return text + ("" if step == 1 else f":{step}")


def op_slice(g):
    """Basic indexing: slices with steps (negative too), integers, and ``...``."""
    a = g.pick(_ndim_at_least(1))
    parts = []
    for n in g.shape(a):
        kind = g.choice(["all", "slice", "int"])
        if kind == "slice":
            parts.append(_slice_text(n, g))
        elif kind == "int":
            parts.append(str(g.integer(-n, n - 1)))
        else:
            parts.append(":")
    if parts[0] == ":" and g.flag():
        k = next((j for j, t in enumerate(parts) if t != ":"), len(parts))
        parts = ["..."] + parts[k:]
    g.emit(f"{a}[{', '.join(parts)}]", [a], exact=True)


def op_fancy(g):
    """Indexing with a constant integer array (repeats and negative indices included)."""
    a = g.pick(_ndim_at_least(1))
    shape = g.shape(a)
    axis = g.integer(0, len(shape) - 1)
    n = shape[axis]
    idx = [g.integer(-n, n - 1) for _ in range(g.integer(1, 4))]
    if g.flag() and len(idx) % 2 == 0:
        idx = [idx[:len(idx) // 2], idx[len(idx) // 2:]]
    if g.flag():
        g.emit(f"np.take({a}, np.array({idx}), axis={axis})", [a], exact=True)
    else:
        g.emit(f"{a}[{':, ' * axis}np.array({idx})]", [a], exact=True)


def op_transpose(g):
    a = g.pick(_ndim_at_least(1))
    nd = len(g.shape(a))
    perm = tuple(g.draw(st.permutations(range(nd))))
    # the last four compose two views in one step (a transposed view transposed back)
    form = g.choice(["np.transpose({a}, {perm})", "{a}.T", "np.transpose({a})",
                     "{a}.transpose({perm})", "np.swapaxes({a}, {i}, {j})",
                     "np.transpose({a}.T)", "np.transpose({a}.T, {perm})",
                     "np.swapaxes({a}[::-1], {i}, {j}).T", "{a}.T[..., ::2].transpose({perm})"])
    i, j = g.integer(-nd, nd - 1), g.integer(-nd, nd - 1)
    g.emit(form.format(a=a, perm=perm, i=i, j=j), [a], exact=True)


# views that compose, each with the shapes it applies to
CHAIN = {
    "{x}.T": lambda s: True,
    "np.transpose({x}, {perm})": lambda s: True,
    "{x}[::-1]": lambda s: len(s) >= 1,
    "{x}[1:]": lambda s: len(s) >= 1 and s[0] >= 2,
    "{x}[..., ::-2]": lambda s: len(s) >= 1,
    "np.swapaxes({x}, 0, -1)": lambda s: len(s) >= 1,
    "np.expand_dims({x}, -1)": lambda s: len(s) < MAX_NDIM,
    "np.squeeze({x})": lambda s: True,
    "{x}.reshape(-1)": lambda s: True,
}


def op_view_chain(g):
    """Two or three views of views in one expression (x.T.T, x[::-1].T[1:], ...): burnumba
    composes their arena positions without making nodes, until a consumer needs one."""
    a = g.pick()
    expr = a
    for _ in range(g.integer(2, 3)):
        shape = np.shape(g.value(expr))
        form = g.choice([f for f, ok in CHAIN.items() if ok(shape)])
        perm = tuple(g.draw(st.permutations(range(len(shape)))))
        expr = form.format(x=expr, perm=perm)
    g.emit(expr, [a], exact=True)


def op_reshape(g):
    a = g.pick()
    size = int(np.prod(g.shape(a)))
    nd = g.integer(0 if size == 1 else 1, 3)
    dims = [1] * nd
    for f in _prime_factors(size):
        dims[g.integer(0, nd - 1)] *= f
    if nd and g.flag():
        dims[g.integer(0, nd - 1)] = -1
    form = g.choice(["np.reshape({a}, {s})", "{a}.reshape({s})", "np.ravel({a})",
                     "{a}.ravel()"])
    g.emit(form.format(a=a, s=tuple(dims)), [a], exact=True)


def op_expand_dims(g):
    a = g.pick(lambda s: len(s) < MAX_NDIM)
    nd = len(g.shape(a))
    g.emit(f"np.expand_dims({a}, {g.integer(-nd - 1, nd)})", [a], exact=True)


def op_squeeze(g):
    a = g.pick()
    shape = g.shape(a)
    ones = [k for k, d in enumerate(shape) if d == 1]
    if ones and g.flag():
        k = g.choice(ones)
        g.emit(f"np.squeeze({a}, axis={k - len(shape) if g.flag() else k})", [a], exact=True)
    else:
        g.emit(f"np.squeeze({a})", [a], exact=True)


def op_broadcast_to(g):
    a = g.pick()
    shape = g.shape(a)
    target = [g.integer(2, 3) if d == 1 and g.flag() else d for d in shape]
    if len(target) < MAX_NDIM and (g.flag() or tuple(target) == shape):
        target = [g.integer(1, 3)] + target
    g.emit(f"np.broadcast_to({a}, {tuple(target)})", [a], exact=True)


def op_stack(g):
    a = g.pick()
    shape = g.shape(a)
    items = [a]
    for _ in range(g.integer(1, 2)):
        items.append(g.const(shape) if g.flag() else g.pick(lambda s: s == shape))
    nd = len(shape)
    g.emit(f"np.stack([{', '.join(items)}], axis={g.integer(-nd - 1, nd)})",
           [v for v in items if v in g.pool], exact=True)


def op_concatenate(g):
    a = g.pick(_ndim_at_least(1))
    shape = g.shape(a)
    nd = len(shape)
    axis = g.integer(0, nd - 1)

    def fits(s):
        return len(s) == nd and all(s[k] == shape[k] for k in range(nd) if k != axis)

    items = [a]
    for _ in range(g.integer(1, 2)):
        if g.flag():
            wide = shape[:axis] + (g.integer(1, 3),) + shape[axis + 1:]
            items.append(g.const(wide))
        else:
            items.append(g.pick(fits))
    ax = axis - nd if g.flag() else axis
    g.emit(f"np.concatenate([{', '.join(items)}], axis={ax})", [v for v in items if v in g.pool],
           exact=True)


def op_split(g):
    a = g.pick(lambda s: max(s, default=0) >= 2)
    shape = g.shape(a)
    axis = g.choice([k for k, d in enumerate(shape) if d >= 2])
    n = shape[axis]
    sections = [d for d in range(2, n + 1) if n % d == 0]
    if g.flag():
        k = g.choice(sections)
        parts, arg = k, k
    else:
        cuts = sorted({g.integer(1, n - 1) for _ in range(g.integer(1, 2))})
        parts, arg = len(cuts) + 1, cuts
    ax = axis - len(shape) if g.flag() else axis
    g.emit(f"np.split({a}, {arg}, axis={ax})", [a], n_out=parts, exact=True)


def _axis_arg(g, nd):
    """None, an int or a tuple of axes (negative ones too), for a reduction over nd axes."""
    kind = g.choice(["none", "int", "tuple"]) if nd else "none"
    if kind == "none":
        return None
    if kind == "int":
        return g.integer(-nd, nd - 1)
    axes = g.draw(st.permutations(range(nd)))[:g.integer(1, nd)]
    return tuple(k - nd if g.flag() else k for k in axes)


def _reduced_count(shape, axis):
    if axis is None:
        return int(np.prod(shape))
    axes = (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[k] for k in axes]))


def _has_ties(v, axis, sign):
    """Whether some group reduced by max (sign 1) or min (sign -1) has tied extrema."""
    v = sign * np.asarray(v)
    top = np.max(v, axis=axis, keepdims=True)
    return bool(np.any(np.sum(v == top, axis=axis) > 1))


def op_reduce(g):
    a = g.pick()
    shape = g.shape(a)
    fn = g.choice(["sum", "mean", "max", "min", "var", "std"])
    axis = _axis_arg(g, len(shape))
    keepdims = g.flag()
    count = _reduced_count(shape, axis)
    operand = a
    if fn in ("max", "min") and _has_ties(g.value(a), axis, 1 if fn == "max" else -1):
        g.prog.kinks += 1
    if fn == "std":
        if count < 2:
            fn = "var"
        else:      # std of a constant group has an infinite derivative (grid inputs make
            operand = f"({a} + {g.const(shape)})"    # them): a random constant breaks it up
    args = [operand]
    if axis is not None:
        args.append(f"axis={axis!r}")
    if keepdims:
        args.append("keepdims=True")
    if fn in ("var", "std") and count >= 2 and g.flag():
        args.append("ddof=1")
    if fn in ("sum", "mean") and g.flag():
        g.emit(f"{operand}.{fn}({', '.join(args[1:])})", [a])
        return
    if fn in ("max", "min") and g.flag():
        fn = "a" + fn
    g.emit(f"np.{fn}({', '.join(args)})", [a], exact=fn in ("max", "min", "amax", "amin"))


def _contraction(shape):
    return shape[0] if len(shape) == 1 else shape[-2]


def op_matmul(g):
    """``@`` with 1-d, 2-d and batched 3-d operands, sliced to a common contraction length
    (and batch, when two batches differ and neither is 1)."""
    a = g.pick(lambda s: 1 <= len(s) <= 3)
    sa = g.shape(a)
    if g.flag():
        b = g.pick(lambda s: 1 <= len(s) <= 3)
        sb = g.shape(b)
    else:
        nd = g.integer(1, 3)
        batch = sa[0] if len(sa) == 3 and g.flag() else g.integer(1, 3)
        sb = ((sa[-1],), (sa[-1], g.integer(1, 4)), (batch, sa[-1], g.integer(1, 4)))[nd - 1]
        b = g.const(sb)
    k = min(sa[-1], _contraction(sb))
    key_a, key_b = [":"] * len(sa), [":"] * len(sb)
    if sa[-1] > k:
        key_a[-1] = f":{k}"
    if _contraction(sb) > k:
        key_b[0 if len(sb) == 1 else -2] = f":{k}"
    if len(sa) == 3 and len(sb) == 3 and sa[0] != sb[0] and 1 not in (sa[0], sb[0]):
        key_a[0] = key_b[0] = f":{min(sa[0], sb[0])}"
    xa = a if set(key_a) == {":"} else f"{a}[{', '.join(key_a)}]"
    xb = b if set(key_b) == {":"} else f"{b}[{', '.join(key_b)}]"
    forms = ["{a} @ {b}", "np.matmul({a}, {b})"] + (["np.dot({a}, {b})"] if len(sb) <= 2 else [])
    g.emit(g.choice(forms).format(a=xa, b=xb), [a, b])


def op_softmax(g):
    a = g.pick()
    nd = len(g.shape(a))
    fn = g.choice(["softmax", "log_softmax", "logsumexp"] if nd else ["logsumexp"])
    args = [a]
    if nd and g.flag():
        args.append(f"axis={g.integer(-nd, nd - 1)}")
    elif fn == "logsumexp" and (not nd or g.flag()):
        args.append("axis=None")
    if fn == "logsumexp" and g.flag():
        args.append("keepdims=True")
    g.emit(f"bn.{fn}({', '.join(args)})", [a])


def op_layer_norm(g):
    a = g.pick(_ndim_at_least(1))
    width = g.shape(a)[-1:]
    args, uses = [a], [a]
    for _ in ("weight", "bias"):
        kind = g.choice(["pool", "const", "none"])
        ok = g.candidates(lambda s: s == width)
        if kind == "pool" and ok:
            args.append(g.choice(ok))
            uses.append(args[-1])
        elif kind == "none":
            args.append("None")
        else:
            args.append(g.const(width))
    if g.flag():
        args.append("eps=1e-3")
    g.emit(f"bn.layer_norm({', '.join(args)})", uses)


def op_embedding(g):
    """``table[idx]`` with idx an integer array argument (traced data, not differentiated)."""
    table = g.pick(_ndim_at_least(1))
    rows = g.shape(table)[0]
    shape = (g.integer(1, 4),) if g.flag() else (g.integer(1, 3), g.integer(1, 3))
    idx = g.add_indices(rows, shape)
    form = g.choice(["{t}[{i}]", "np.take({t}, {i}, axis=0)"])
    g.emit(form.format(t=table, i=idx), [table])


def op_setitem(g):
    """An in-place update of a copy: ``y[key] op= b`` with a basic, integer-array (repeats
    included) or mask key, b a value, constant or scalar that broadcasts to y[key]."""
    a = g.pick(_ndim_at_least(1))
    shape = g.shape(a)
    kind = g.choice(["basic", "fancy", "mask"])
    if kind == "basic":
        parts = []
        for n in shape:
            form = g.choice(["all", "slice", "int"])
            if form == "int":
                parts.append(str(g.integer(-n, n - 1)))
            else:
                step = g.choice([1, 2, -1, -2, 3]) if form == "slice" else 1
                start = g.integer(-n, n - 1) if form == "slice" and g.flag() else None
                parts.append(f"slice({start}, None, {step})")
        key = f"({', '.join(parts)},)"
    elif kind == "fancy":
        n = shape[0]
        key = f"np.array({[g.integer(-n, n - 1) for _ in range(g.integer(1, 4))]})"
    else:
        mask = g.rng.random(shape[:g.integer(1, len(shape))]) < 0.5
        key = f"{g.const(mask.shape, value=mask.astype(np.float64))} > 0.5"
    target = np.zeros(shape)[g.value(key)].shape
    choices = ["scalar", "const"] + (["pool"] if g.candidates(
        lambda s: _broadcastable(s, target) and np.broadcast_shapes(s, target) == target)
        else [])
    source = g.choice(choices)
    uses = [a]
    if source == "scalar":
        b = g.choice(SCALARS)
    elif source == "const":
        b = g.const(target[g.integer(0, len(target)):] if target else (), g.choice(STYLES))
    else:
        b = g.pick(lambda s: _broadcastable(s, target)
                   and np.broadcast_shapes(s, target) == target)
        uses.append(b)
    op = g.choice(["=", "+=", "-=", "*="])
    g.emit(f"_set({a}, {key}, {b}, {op!r})", uses, exact=op == "=")


# kind -> (step, whether the pool allows it)
def _any(ok):
    return lambda g: bool(g.candidates(ok))


STEPS = {
    "binary": (op_binary, lambda g: True),
    "unary": (op_unary, lambda g: True),
    "kink": (op_kink, lambda g: True),
    "slice": (op_slice, _any(_ndim_at_least(1))),
    "fancy": (op_fancy, _any(_ndim_at_least(1))),
    "setitem": (op_setitem, _any(_ndim_at_least(1))),
    "transpose": (op_transpose, _any(_ndim_at_least(1))),
    "view_chain": (op_view_chain, lambda g: True),
    "reshape": (op_reshape, lambda g: True),
    "expand_dims": (op_expand_dims, _any(lambda s: len(s) < MAX_NDIM)),
    "squeeze": (op_squeeze, lambda g: True),
    "broadcast_to": (op_broadcast_to, lambda g: True),
    "stack": (op_stack, lambda g: True),
    "concatenate": (op_concatenate, _any(_ndim_at_least(1))),
    "split": (op_split, _any(lambda s: max(s, default=0) >= 2)),
    "reduce": (op_reduce, lambda g: True),
    "matmul": (op_matmul, _any(lambda s: 1 <= len(s) <= 3)),
    "softmax": (op_softmax, lambda g: True),
    "layer_norm": (op_layer_norm, _any(_ndim_at_least(1))),
    "embedding": (op_embedding, _any(_ndim_at_least(1))),
}


def _shape(g):
    """0 to 3 axes of 1 to 5; half the time all equal (square), where a transpose keeps
    the shape and an axis mixed up gives wrong values rather than a shape error."""
    nd = g.integer(0, 3)
    if g.flag():
        return (g.integer(1, 5),) * nd
    return tuple(g.integer(1, 5) for _ in range(nd))


@st.composite
def programs(draw):
    """A program. Each step draws its constants from a generator of its own, so that when
    hypothesis shrinks a failing program by dropping a step, the others keep theirs."""
    seeds = st.integers(0, 2 ** 32 - 1)
    g = _Gen(draw, draw(seeds))
    first = _shape(g)
    for k in range(g.integer(1, 3)):
        shape = first if k == 0 else _partner_shape(g, first) if g.flag() else _shape(g)
        g.add_input(shape, g.choice(STYLES))
    weights = g.rng
    for _ in range(g.integer(1, MAX_STEPS)):
        g.rng = np.random.default_rng(draw(seeds))
        kind = g.choice([k for k, (_, allowed) in STEPS.items() if allowed(g)])
        STEPS[kind][0](g)
    g.rng = weights
    return g.finish()


# -- running and comparing -----------------------------------------------------------------------

def run_burnumba(prog, dtype):
    f = prog.function(np, bn)
    argnums = tuple(range(len(prog.inputs)))
    value, grads = bn.value_and_grad(f, argnums=argnums)(*prog.arguments(dtype))
    return float(value), list(grads)


def run_autograd(prog, rounding=False):
    """The reference, computed in long double (80-bit on x86-64, float64 elsewhere): in a
    cancellation, autograd's float64 composition of mean, var, sqrt ... can be further
    from the truth than burnumba's fused float64 rows (layer_norm of a layer_norm)."""
    f = prog.function(rnp, REF_BN, rounding)
    argnums = tuple(range(len(prog.inputs)))
    value, grads = autograd.value_and_grad(f, argnum=argnums)(*prog.arguments(np.longdouble))
    return float(value), [np.asarray(g, dtype=np.float64) for g in grads]


class Reference(NamedTuple):
    value: float
    grads: list
    value_sensitivity: float      # how far the value moves per unit of EPS (see reference)
    grad_sensitivity: list        # how far each input's gradient moves (its largest element)


def reference(prog):
    """autograd's value and gradients, with their sensitivity to rounding.

    A run in a dtype with unit roundoff u makes relative errors of about u in the result
    of every arithmetic operation, forward and backward, and they propagate. The reference
    is run again with a stand-in for them: each arithmetic result (of a step, or inside the
    references of the fused ops) is multiplied by 1 + EPS * N(0, 1), elementwise, and the
    gradient flowing back through it by another such factor. How far the results move,
    per unit of EPS, is their sensitivity: large relative to the result where the result is
    a cancellation (the gradients of layer_norm and log_softmax sum to zero; x - y with y
    close to x), exactly where a fixed rtol would raise false alarms. It is kept per input
    (the largest over the elements of its gradient), because a cancellation couples the
    elements (a row of layer_norm shares its error). Exact operations (views, maximum,
    where, ...) are not perturbed, so exact ties stay ties. A near-tie (two values equal in
    exact arithmetic but computed by different roundings, like the layer_norm of two rows
    that are permutations of each other, then a min over them) is a kink that burnumba and
    the reference may meet on different sides; each draw flips it with probability 1/2,
    and a flip shows as a large sensitivity, so ROUNDING_DRAWS = 4 miss it 1 time in 16.
    """
    value, grads = run_autograd(prog)
    dv, dg = 0.0, [0.0] * len(grads)
    _NOISE["rng"] = np.random.default_rng(len(prog.lines))
    try:
        for _ in range(ROUNDING_DRAWS):
            v, gs = run_autograd(prog, rounding=True)
            dv = max(dv, abs(v - value) / EPS)
            dg = [max(d, float(np.max(np.abs(g - r))) / EPS) for d, g, r in zip(dg, gs, grads)]
    finally:
        _NOISE["rng"] = None
    return Reference(value, grads, dv, dg)


def _differences(name, ours, ref, allowed):
    """Lines describing the elements of ``ours`` farther than ``allowed`` from ``ref``."""
    ours64 = np.asarray(ours, dtype=np.float64)
    bad = ~(np.abs(ours64 - ref) <= allowed)
    allowed = np.broadcast_to(allowed, np.shape(ref))
    lines = []
    for j in np.argwhere(bad)[:8]:
        j = tuple(int(t) for t in j)
        lines.append(f"  {name}[{j}]: burnumba {ours64[j]!r}, autograd {ref[j]!r}, "
                     f"allowed {allowed[j]:.3g}")
    return lines


def tolerance(dtype, ref, scale, sensitivity, terms):
    """rtol * |ref| + atol * scale, plus burnumba's rounding error (ROUNDING * u *
    sensitivity) and the reference's: autograd composes layer_norm from mean, var and
    sqrt, whose gradients can cancel to 1e-12 of the terms (layer_norm of a layer_norm
    over 2 elements) where burnumba's fused row stays exact to 1e-22. REFERENCE * u_ref *
    terms bounds that: even in long double, it is far below float64's tolerances unless
    the result itself is a cancellation."""
    rtol, atol = TOLERANCES[dtype]
    u, u_ref = np.finfo(dtype).eps / 2, np.finfo(np.longdouble).eps / 2
    return (rtol * np.abs(ref) + atol * scale + ROUNDING * u * sensitivity
            + REFERENCE * u_ref * terms)


def compare(prog, dtype, ours, ref):
    """Raise an AssertionError with a reproducer when burnumba and autograd differ."""
    value, grads = ours
    value_scale = max(prog.terms, abs(ref.value))
    grad_scale = max(float(np.max(np.abs(r))) for r in ref.grads)
    problems = _differences("value", np.array(value), np.array(ref.value),
                            tolerance(dtype, ref.value, value_scale, ref.value_sensitivity,
                                      prog.terms))
    for k, (name, gk, rk, sk) in enumerate(zip(prog.inputs, grads, ref.grads,
                                                ref.grad_sensitivity)):
        if np.shape(gk) != np.shape(rk):
            problems.append(f"  grads[{k}] (d/d{name}) has shape {np.shape(gk)}, "
                            f"expected {np.shape(rk)}")
        elif np.asarray(gk).dtype != np.dtype(dtype):
            problems.append(f"  grads[{k}] (d/d{name}) is {np.asarray(gk).dtype}, "
                            f"expected {dtype}")
        else:
            problems += _differences(f"grads[{k}]", gk, rk,
                                     tolerance(dtype, rk, grad_scale, sk, prog.terms))
    if problems:
        raise AssertionError(
            f"burnumba ({dtype}) and the autograd reference differ:\n" + "\n".join(problems)
            + f"\n\nburnumba: value {value!r}\ngrads {grads!r}"
            + f"\nautograd: value {ref.value!r}\ngrads {ref.grads!r}"
            + f"\n\n# reproducer ({dtype})\n{prog.script(dtype)}\n")


@settings(max_examples=N_GRAPHS)
@given(programs())
def check_program(prog):
    ref = reference(prog)
    for dtype in ("float64", "float32"):
        try:
            ours = run_burnumba(prog, np.dtype(dtype))
        except Exception as e:
            raise AssertionError(f"burnumba ({dtype}) raised {type(e).__name__}: {e}\n\n"
                                 f"# reproducer ({dtype})\n{prog.script(dtype)}\n") from e
        compare(prog, dtype, ours, ref)
        COUNTS[dtype] += 1
    COUNTS["kinks"] += prog.kinks > 0


@pytest.mark.slow
def test_random_programs_match_autograd():
    COUNTS.clear()
    check_program()
    print(f"\nfuzz: {COUNTS['float64']} programs in float64, {COUNTS['float32']} in float32, "
          f"{COUNTS['kinks']} with an exact kink")
    assert COUNTS["float64"] >= N_GRAPHS and COUNTS["float32"] >= N_GRAPHS


# -- kinks, and the bugs this fuzz found, with explicit expectations ---------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kinks_at_exact_values(dtype):
    """The conventions the fuzz's references encode, at exact kinks and beside them."""
    x = np.array([-1.5, 0.0, 0.75, 0.0], dtype=dtype)
    y = np.array([-1.5, 0.25, 0.75, -0.5], dtype=dtype)
    grad = bn.grad
    # relu'(0) = 0 and abs'(0) = 0, as torch and JAX
    np.testing.assert_array_equal(grad(lambda x: np.sum(bn.relu(x)))(x), [0, 0, 1, 0])
    np.testing.assert_array_equal(grad(lambda x: np.sum(np.abs(x)))(x), [-1, 0, 1, 0])
    # maximum / minimum: 1/2 to each side of a tie (here x == y at 0 and 2)
    gx, gy = grad(lambda x, y: np.sum(np.maximum(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0, 0.5, 1])
    np.testing.assert_array_equal(gy, [0.5, 1, 0.5, 0])
    gx, gy = grad(lambda x, y: np.sum(np.minimum(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 1, 0.5, 0])
    np.testing.assert_array_equal(gy, [0.5, 0, 0.5, 1])
    # a max / min reduction splits the gradient evenly among its tied extrema
    m = np.array([[0.5, 2.0, 2.0], [-1.0, -1.0, 0.0]], dtype=dtype)
    np.testing.assert_array_equal(grad(lambda m: np.sum(np.max(m, axis=1)))(m),
                                  [[0, 0.5, 0.5], [0, 0, 1]])
    np.testing.assert_array_equal(grad(lambda m: np.sum(np.min(m, axis=-1)))(m),
                                  [[1, 0, 0], [0.5, 0.5, 0]])


def test_autograd_kink_conventions():
    """Why the reference relu is a where: autograd's maximum(x, 0.0) splits the tie at 0.
    Its abs and its maximum, minimum and max reduction agree with burnumba's conventions."""
    x = np.array([-1.5, 0.0, 0.75])
    np.testing.assert_array_equal(autograd.grad(lambda x: anp.sum(anp.maximum(x, 0.0)))(x),
                                  [0, 0.5, 1])
    np.testing.assert_array_equal(autograd.grad(lambda x: anp.sum(_relu(x)))(x), [0, 0, 1])
    np.testing.assert_array_equal(autograd.grad(lambda x: anp.sum(anp.abs(x)))(x), [-1, 0, 1])
    ga, gb = autograd.grad(lambda a, b: anp.sum(anp.maximum(a, b)), argnum=(0, 1))(x, x[::-1])
    np.testing.assert_array_equal(ga, [0, 0.5, 1])
    np.testing.assert_array_equal(gb, [1, 0.5, 0])
    ga, gb = autograd.grad(lambda a, b: anp.sum(anp.minimum(a, b)), argnum=(0, 1))(x, x[::-1])
    np.testing.assert_array_equal(ga, [1, 0.5, 0])
    np.testing.assert_array_equal(gb, [0, 0.5, 1])
    m = np.array([[1.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(autograd.grad(lambda m: anp.max(m, axis=(0, 1)))(m),
                               [[1 / 3, 1 / 3], [1 / 3, 0]], rtol=1e-15)


@pytest.mark.parametrize("fn, axis", [(np.max, (0, 1)), (np.min, (1, 0)), (np.max, (-1, 0))])
def test_max_over_a_tuple_of_axes_splits_ties_evenly(fn, axis):
    """Found by this fuzz (fixed in add5999): a tuple of axes was reduced one axis at a
    time, so three tied maxima got 1/4, 1/4, 1/2 instead of 1/3 each."""
    m = np.array([[1.0, 1.0], [1.0, 0.0]])
    if fn is np.min:
        m = -m
    g = bn.grad(lambda m: np.sum(fn(m, axis=axis)))(m)
    np.testing.assert_allclose(g, [[1 / 3, 1 / 3], [1 / 3, 0]], rtol=1e-15)


@pytest.mark.parametrize("f, shape", [
    (lambda x: x.T.T, (2, 2)),
    (lambda x: np.swapaxes(np.swapaxes(x, 0, 1), 1, 0), (3, 3)),
    (lambda x: np.transpose(x.T), (2, 1, 2)),
], ids=["T.T", "swapaxes-twice", "transpose-T-3d"])
def test_transpose_of_a_transposed_view(f, shape):
    """Found by this fuzz (fixed in add5999): transpose returned its operand unchanged
    when the transposed positions were contiguous and the shape kept, so x.T.T was x.T."""
    x = np.arange(float(np.prod(shape))).reshape(shape)
    y, pull = bn.vjp(f, x)
    np.testing.assert_array_equal(y, x)
    w = np.arange(x.size, dtype=float).reshape(shape) + 1.0
    (gx,) = pull(w)
    np.testing.assert_array_equal(gx, w)
