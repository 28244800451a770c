"""Derivatives as traced ops: what lets transformations compose (``bn.grad(bn.grad(f))``).

A transformation called on concrete numbers traces its function and runs the compiled
kernel. Called on traced values (inside another transformation's trace), it cannot run
anything yet: it runs the function on those values, which appends its nodes to the same
trace, and then appends the derivative of those nodes, node by node, as more traced ops.
The outer transformation then compiles and differentiates the whole, derivative included, so
they nest to any depth and every result is exact.

Each row's derivative here is written with traced ops:

* map rows: the row's own derivative rules (``da`` / ``db`` in the op table, Python
  functions whose source kernels/rules.py reads), evaluated on traced values (``x if c
  else y`` becomes ``where``); a broadcast operand's cotangent is summed back to its shape.
  The tangent rule is the same expression with the upstream gradient replaced by the
  operand's tangent;
* block rows: ``BLOCK[name] = (vjp, jvp)`` below, one pair per block row of the table (a
  test requires it), each the adjoint or the tangent map of the row's formula. gather and
  take have their adjoints as rows of their own (scatter, take_add).

Each argument a transformation differentiates is first copied into a node of its own, so a
value that the function also reaches through a closure is not mistaken for the argument
(JAX's "perturbation confusion").
"""
import ast
import functools
import math

import numpy as np

from ..numpy import linalg as _linalg
from .._errors import LeakedTracerError, UnsupportedOpError, at_user_site
from ..trace.tracer import Var, broadcast_to
from ..kernels import OPCODE, ROWS, rules


class NestedTrace(Exception):
    """Raised while reading a call's signature when an argument is a traced value: the
    transformation then runs symbolically in that trace."""

    def __init__(self, builder):
        super().__init__("a transformation was called on traced values")
        self.builder = builder


def builder_of(leaves):
    """The one live trace the traced leaves belong to."""
    builders = {x._b for x in leaves if isinstance(x, Var)}
    if len(builders) > 1 or not all(b.live for b in builders):
        raise LeakedTracerError(at_user_site(
            "a transformation got traced values from two different traces (one leaked out "
            "of an earlier bn.grad / bn.trace): pass the values in as arguments"))
    return builders.pop() if builders else None


# -- nodes of a trace ----------------------------------------------------------------------
def var(b, i):
    return Var(b, i, b.shapes[i])


def params(b, i):
    """Node i's integer parameters (a view: no copy of the rest of the list)."""
    p = b.pp[i]
    return _Params(b.params, p) if p >= 0 else []


class _Params:
    """``b.params[p:]`` without copying it: indexed and sliced relative to p."""

    __slots__ = ("items", "p")

    def __init__(self, items, p):
        self.items, self.p = items, p

    def __getitem__(self, k):
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self.items) - self.p)
            return self.items[self.p + start:self.p + stop:step]
        return self.items[self.p + k]


def copy(x):
    """A node of its own holding x's value (a gather of its positions): the stand-in for a
    differentiated argument."""
    b = x._b
    view = b.gather([x], x.positions().reshape(-1), x.shape)._view
    return b.materialize(view, x.shape, copy=True)


def _offsets(b):
    return np.asarray(b.off, dtype=np.int64)


def sources(b, positions):
    """The nodes that arena positions fall in, and each position's node."""
    owner = np.searchsorted(_offsets(b), np.asarray(positions), "right") - 1
    return owner


def operands(b, i):
    """The nodes node i's value depends on (differentiably or not)."""
    row = ROWS[b.op[i]]
    p = params(b, i)
    if row.name in ("sum", "sumsq"):
        return list(p[1:1 + p[0]])
    if row.name == "inner":
        m = p[0]
        return list(p[1:1 + 2 * m]) + ([b.a0[i]] if b.a0[i] >= 0 else [])
    if row.name == "gather":
        size = math.prod(b.shapes[i])
        return sorted({int(k) for k in sources(b, p[:size])})
    if row.name == "where":
        return [p[0], b.a0[i], b.a1[i]]
    return [k for k in (b.a0[i], b.a1[i]) if k >= 0]


# -- evaluating a map row's derivative expression on traced values ---------------------------
def _erfc(z):
    from ..numpy import erf
    return 1.0 - erf(z)


# the rules' math functions (math's names, kernels.rules.MATH) that are numpy's under
# another name (copysign, fmod, cbrt, rint and trunc are rows of their own name)
_NUMPY_NAME = {"fabs": "absolute", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
               "atan2": "arctan2", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh"}


def _math():
    from .. import numpy as bnp
    out = {m: getattr(bnp, _NUMPY_NAME.get(m, m)) for m in rules.MATH
           if hasattr(bnp, _NUMPY_NAME.get(m, m))}
    out["erfc"] = _erfc
    return out


_CONSTANTS = {"inf": math.inf, "nan": math.nan}


@functools.lru_cache(maxsize=None)
def _parsed(code, mode):
    return ast.parse(code, mode=mode)


def _truth(x):
    return x if isinstance(x, Var) else float(bool(x))


class _Evaluator:
    """Evaluates a rule's expression on traced values: arithmetic and comparisons as the
    values do them, ``x if c else y`` as ``where``, ``and`` / ``or`` / ``not`` on 0/1 masks,
    and the math functions as traced ops."""

    def __init__(self, env):
        self.env = env
        self.math = _math()

    def run(self, statements):
        for st in _parsed(statements, "exec").body:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name)):
                raise UnsupportedOpError(f"a rule statement that is not `name = value`: "
                                         f"{ast.unparse(st)}")
            self.env[st.targets[0].id] = self.eval(st.value)

    def __call__(self, expr):
        return self.eval(_parsed(expr, "eval").body)

    def eval(self, n):
        from .. import numpy as bnp
        if isinstance(n, ast.Constant):
            return float(n.value)
        if isinstance(n, ast.Name):
            return self.env[n.id] if n.id in self.env else _CONSTANTS[n.id]
        if isinstance(n, ast.BinOp):
            a, b = self.eval(n.left), self.eval(n.right)
            if isinstance(n.op, (ast.Mult, ast.Div)) and type(b) is float and b == 1.0:
                return a                   # x * 1 and x / 1 are x, bit for bit: no node
            if isinstance(n.op, ast.Mult) and type(a) is float and a == 1.0:
                return b
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: a / b, ast.Pow: lambda: a ** b}
            return ops[type(n.op)]()
        if isinstance(n, ast.UnaryOp):
            a = self.eval(n.operand)
            if isinstance(n.op, ast.USub):
                return -a
            if isinstance(n.op, ast.Not):
                return 1.0 - _truth(a)
            return a
        if isinstance(n, ast.Compare):
            assert len(n.ops) == 1, ast.unparse(n)
            a, b = self.eval(n.left), self.eval(n.comparators[0])
            cmp = {ast.Gt: np.greater, ast.GtE: np.greater_equal, ast.Lt: np.less,
                   ast.LtE: np.less_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}
            fn = cmp[type(n.ops[0])]
            if isinstance(a, Var) or isinstance(b, Var):
                return fn(a, b)
            return float(fn(a, b))
        if isinstance(n, ast.BoolOp):
            values = [_truth(self.eval(v)) for v in n.values]
            out = values[0]
            for v in values[1:]:
                out = bnp.maximum(out, v) if isinstance(n.op, ast.Or) else out * v
            return out
        if isinstance(n, ast.IfExp):
            c = self.eval(n.test)
            if not isinstance(c, Var):
                return self.eval(n.body) if c else self.eval(n.orelse)
            return bnp.where(c, self.eval(n.body), self.eval(n.orelse))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            fn = self.math.get(n.func.id)
            if fn is None:
                raise UnsupportedOpError(f"no traced form of {n.func.id}() in a rule")
            return fn(*[self.eval(a) for a in n.args])
        raise UnsupportedOpError(f"a rule expression burnumba cannot trace: {ast.unparse(n)}")


def operand_shape(b, node, out_shape):
    """The shape under which a map row's kernel reads its operand ``node``: the output's
    shape when the sizes agree (whatever the node's own shape, e.g. (n, 1) against (n,)),
    a scalar, or the output's trailing axes for a tile repeated in row-major order. Rules
    evaluated on traced values must broadcast the way the kernel does."""
    size, n = math.prod(b.shapes[node]), math.prod(out_shape)
    if size == n:
        return tuple(out_shape)
    if size == 1:
        return ()
    for j in range(len(out_shape)):
        if math.prod(out_shape[j:]) == size:
            return tuple(out_shape[j:])
    raise AssertionError(f"map operand of size {size} under an output of shape {out_shape}")


def _as_operand(b, v, node, out_shape):
    shape = operand_shape(b, node, out_shape)
    if not isinstance(v, Var) or v.shape == shape:
        return v
    return _bnp().reshape(v, shape)


def _map_env(b, i, g, g_node=None):
    """The names a map row's rules use, as traced values shaped the way the kernel reads
    them; ``g`` is the output's cotangent, or (forward) the tangent of operand g_node."""
    row = ROWS[b.op[i]]
    out = b.shapes[i]
    if g_node is not None:
        g = _as_operand(b, g, g_node, out)
    env = {"a": _as_operand(b, var(b, b.a0[i]), b.a0[i], out), "c": float(b.imm[i]),
           "y": var(b, i), "g": g}
    if row.arity == 2:
        env["b"] = _as_operand(b, var(b, b.a1[i]), b.a1[i], out)
    return row, _Evaluator(env)


def _rule(row, slot, ev):
    """A map row's rule (kernels/rules.py: its statements and expression, read from the
    row's Python function) evaluated on traced values."""
    r = rules.read(getattr(row, slot), row.name, slot, row.arity)
    if r.statements:
        ev.run("\n".join(r.statements))
    return ev(r.expr)


def unbroadcast(v, shape):
    """A cotangent of the output's shape, summed back to an operand's: the same shape, a
    scalar, or a tile repeated in row-major order over the output."""
    from .. import numpy as bnp
    if not isinstance(v, Var):
        v = float(v)
        return v if shape == () else np.full(shape, v)
    if v.shape == tuple(shape):
        return v
    n = math.prod(shape)
    if n == v.size:                          # the same elements, e.g. (n,) and (n, 1)
        return bnp.reshape(v, shape)
    total = bnp.sum(bnp.reshape(v, (-1, n)), axis=0)
    return bnp.reshape(total, shape)


def _map_vjp(b, i, g, need=None):
    row, ev = _map_env(b, i, g)
    out = []
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        if getattr(row, slot) is not None and (need is None or need(node)):
            out.append((node, unbroadcast(_rule(row, slot, ev), b.shapes[node])))
    return out


def _map_jvp(b, i, tangent):
    out = None
    row = ROWS[b.op[i]]
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        t = tangent(node)
        if getattr(row, slot) is None or t is None:
            continue
        _, ev = _map_env(b, i, t, node)
        term = _rule(row, slot, ev)
        out = term if out is None else out + term
    return out


# -- block rows -----------------------------------------------------------------------------
def _bnp():
    from .. import numpy as bnp
    return bnp


def _axis3(b, i, node, keep=False):
    """(outer, m, inner) of an axis row, and node's value seen that way (keep: the output
    of a reduction, seen as (outer, 1, inner))."""
    outer, m, inner = params(b, i)[:3]
    shape = (outer, 1, inner) if keep else (outer, m, inner)
    return (outer, m, inner), _bnp().reshape(var(b, node) if isinstance(node, int) else node,
                                             shape)


def _as3(v, shape):
    return _bnp().reshape(v, shape)


def _reduce_vjp(b, i, g, need=None):
    (o, m, n), _ = _axis3(b, i, b.a0[i])
    c = float(b.imm[i])
    g3 = _as3(g, (o, 1, n))
    return [(b.a0[i], _bnp().reshape(broadcast_to(c * g3, (o, m, n)), b.shapes[b.a0[i]]))]


def _reduce_jvp(b, i, tangent):
    t = tangent(b.a0[i])
    (o, m, n), t3 = _axis3(b, i, t)
    return _bnp().reshape(float(b.imm[i]) * _bnp().sum(t3, axis=1), b.shapes[i])


def _max_mask(b, i):
    bnp = _bnp()
    (o, m, n), x3 = _axis3(b, i, b.a0[i])
    _, y3 = _axis3(b, i, i, keep=True)
    mask = bnp.equal(x3, y3)
    return mask, bnp.sum(mask, axis=1, keepdims=True), (o, m, n)


def _max_vjp(b, i, g, need=None):
    mask, ties, (o, m, n) = _max_mask(b, i)
    g3 = _as3(g, (o, 1, n))
    return [(b.a0[i], _bnp().reshape(g3 * mask / ties, b.shapes[b.a0[i]]))]


def _max_jvp(b, i, tangent):
    bnp = _bnp()
    mask, ties, (o, m, n) = _max_mask(b, i)
    t3 = _as3(tangent(b.a0[i]), (o, m, n))
    return bnp.reshape(bnp.sum(t3 * mask, axis=1, keepdims=True) / ties, b.shapes[i])


def _lanes(b, i):
    (o, m, n), _ = _axis3(b, i, b.a0[i])
    return (o, m, n)


def _softmax_vjp(b, i, g, need=None):
    bnp = _bnp()
    s = _lanes(b, i)
    y, g3 = _as3(var(b, i), s), _as3(g, s)
    dx = y * (g3 - bnp.sum(g3 * y, axis=1, keepdims=True))
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _softmax_jvp(b, i, tangent):
    bnp = _bnp()
    s = _lanes(b, i)
    y, t = _as3(var(b, i), s), _as3(tangent(b.a0[i]), s)
    return bnp.reshape(y * (t - bnp.sum(y * t, axis=1, keepdims=True)), b.shapes[i])


def _causal_vjp(b, i, g, need=None):
    # y is 0 beyond the diagonal, so the sums run over the visible part only
    bnp = _bnp()
    s, c = _lanes(b, i), float(b.imm[i])
    y, g3 = _as3(var(b, i), s), _as3(g, s)
    dx = c * y * (g3 - bnp.sum(g3 * y, axis=1, keepdims=True))
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _causal_jvp(b, i, tangent):
    bnp = _bnp()
    s, c = _lanes(b, i), float(b.imm[i])
    y, t = _as3(var(b, i), s), _as3(tangent(b.a0[i]), s)
    return bnp.reshape(c * y * (t - bnp.sum(y * t, axis=1, keepdims=True)), b.shapes[i])


def _log_softmax_vjp(b, i, g, need=None):
    bnp = _bnp()
    s = _lanes(b, i)
    y, g3 = _as3(var(b, i), s), _as3(g, s)
    dx = g3 - bnp.exp(y) * bnp.sum(g3, axis=1, keepdims=True)
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _log_softmax_jvp(b, i, tangent):
    bnp = _bnp()
    s = _lanes(b, i)
    y, t = _as3(var(b, i), s), _as3(tangent(b.a0[i]), s)
    return bnp.reshape(t - bnp.sum(bnp.exp(y) * t, axis=1, keepdims=True), b.shapes[i])


def _lse_weights(b, i):
    """exp(x - y) along the lane, 0 in a lane of -inf (which passes no gradient)."""
    bnp = _bnp()
    (o, m, n), x3 = _axis3(b, i, b.a0[i])
    _, y3 = _axis3(b, i, i, keep=True)
    return bnp.where(y3 >= -np.inf, bnp.exp(x3 - bnp.where(y3 > -np.inf, y3, 0.0)), 0.0), \
        (o, m, n), y3


def _logsumexp_vjp(b, i, g, need=None):
    w, (o, m, n), y3 = _lse_weights(b, i)
    g3 = _as3(g, (o, 1, n))
    w = _bnp().where(y3 > -np.inf, w, 0.0)
    return [(b.a0[i], _bnp().reshape(g3 * w, b.shapes[b.a0[i]]))]


def _logsumexp_jvp(b, i, tangent):
    bnp = _bnp()
    w, (o, m, n), y3 = _lse_weights(b, i)
    w = bnp.where(y3 > -np.inf, w, 0.0)
    t3 = _as3(tangent(b.a0[i]), (o, m, n))
    return bnp.reshape(bnp.sum(w * t3, axis=1), b.shapes[i])


def _layer_norm_parts(b, i):
    """rs = 1 / sqrt(var + eps) per lane, recomputed from x, and y, as (outer, m)."""
    bnp = _bnp()
    (o, m, _), x3 = _axis3(b, i, b.a0[i])
    x = bnp.reshape(x3, (o, m))
    d = x - bnp.mean(x, axis=1, keepdims=True)
    rs = 1.0 / bnp.sqrt(bnp.mean(d * d, axis=1, keepdims=True) + float(b.imm[i]))
    return rs, bnp.reshape(var(b, i), (o, m)), (o, m)


def _layer_norm_vjp(b, i, g, need=None):
    bnp = _bnp()
    rs, y, s = _layer_norm_parts(b, i)
    g2 = bnp.reshape(g, s)
    dx = rs * (g2 - bnp.mean(g2, axis=1, keepdims=True)
               - y * bnp.mean(g2 * y, axis=1, keepdims=True))
    return [(b.a0[i], bnp.reshape(dx, b.shapes[b.a0[i]]))]


def _layer_norm_jvp(b, i, tangent):
    bnp = _bnp()
    rs, y, s = _layer_norm_parts(b, i)
    t = bnp.reshape(tangent(b.a0[i]), s)
    ty = rs * (t - bnp.mean(t, axis=1, keepdims=True) - y * bnp.mean(t * y, axis=1,
                                                                      keepdims=True))
    return bnp.reshape(ty, b.shapes[i])


def _ce_parts(b, i):
    """softmax(logits) - onehot(targets), as (rows, classes)."""
    bnp = _bnp()
    rows, ncls = params(b, i)[:2]
    logits = bnp.reshape(var(b, b.a0[i]), (rows, ncls))
    targets = bnp.reshape(var(b, b.a1[i]), (rows, 1))
    onehot = bnp.equal(targets, np.arange(ncls, dtype=float))
    from ..numpy.functional import softmax
    return softmax(logits) - onehot


def _ce_vjp(b, i, g, need=None):
    d = _ce_parts(b, i)
    return [(b.a0[i], _bnp().reshape(float(b.imm[i]) * g * d, b.shapes[b.a0[i]]))]


def _ce_jvp(b, i, tangent):
    bnp = _bnp()
    rows, ncls = params(b, i)[:2]
    t = bnp.reshape(tangent(b.a0[i]), (rows, ncls))
    return float(b.imm[i]) * bnp.sum(_ce_parts(b, i) * t)


def _take_vjp(b, i, g, need=None):
    nrows, width = params(b, i)[:2]
    k = math.prod(b.shapes[b.a1[i]])
    gt = take_add(_bnp().reshape(g, (k, width)), var(b, b.a1[i]), nrows)
    return [(b.a0[i], _bnp().reshape(gt, b.shapes[b.a0[i]]))]


def _take_jvp(b, i, tangent):
    nrows, width = params(b, i)[:2]
    t = _bnp().reshape(tangent(b.a0[i]), (nrows, width))
    return _bnp().reshape(take(t, var(b, b.a1[i])), b.shapes[i])


def _take_add_vjp(b, i, g, need=None):
    nrows, width = params(b, i)[:2]
    gg = take(_bnp().reshape(g, (nrows, width)), var(b, b.a1[i]))
    return [(b.a0[i], _bnp().reshape(gg, b.shapes[b.a0[i]]))]


def _take_add_jvp(b, i, tangent):
    nrows, width = params(b, i)[:2]
    k = math.prod(b.shapes[b.a1[i]])
    t = _bnp().reshape(tangent(b.a0[i]), (k, width))
    return _bnp().reshape(take_add(t, var(b, b.a1[i]), nrows), b.shapes[i])


def _gather_vjp(b, i, g, need=None):
    """Each source node gets the cotangent elements of the positions it owns, scattered."""
    size = math.prod(b.shapes[i])
    positions = np.asarray(params(b, i)[:size])
    owner = sources(b, positions)
    gpos = g.positions().reshape(-1)
    off = _offsets(b)
    out = []
    for s in np.unique(owner):
        js = np.flatnonzero(owner == s)
        part = b.gather([g], gpos[js], (len(js),))
        out.append((int(s), scatter(part, positions[js] - off[s], b.shapes[s])))
    return out


def _gather_jvp(b, i, tangent):
    """The gather of the sources' tangents (a zero constant for a source without one)."""
    size = math.prod(b.shapes[i])
    positions = np.asarray(params(b, i)[:size])
    owner = sources(b, positions)
    off = _offsets(b)
    picked = np.empty(size, dtype=np.int64)
    used = []
    for s in np.unique(owner):
        t = tangent(int(s))
        if t is None:
            t = b.const(np.zeros(b.shapes[s])) if b.shapes[s] else b.const(0.0)
        used.append(t)
        js = np.flatnonzero(owner == s)
        picked[js] = t.positions().reshape(-1)[positions[js] - off[s]]
    return b.gather(used, picked, b.shapes[i])


def _scatter_vjp(b, i, g, need=None):
    n = math.prod(b.shapes[b.a0[i]])
    positions = np.asarray(params(b, i)[:n])
    return [(b.a0[i], b.gather([g], g.positions().reshape(-1)[positions], b.shapes[b.a0[i]]))]


def _scatter_jvp(b, i, tangent):
    n = math.prod(b.shapes[b.a0[i]])
    return scatter(tangent(b.a0[i]), np.asarray(params(b, i)[:n]), b.shapes[i])


def _where_vjp(b, i, g, need=None):
    bnp = _bnp()
    c = params(b, i)[0]
    cond = _as_operand(b, var(b, c), c, b.shapes[i])
    need = need or (lambda k: True)
    out = []
    if need(b.a0[i]):
        out.append((b.a0[i], unbroadcast(bnp.where(cond, g, 0.0), b.shapes[b.a0[i]])))
    if need(b.a1[i]):
        out.append((b.a1[i], unbroadcast(bnp.where(cond, 0.0, g), b.shapes[b.a1[i]])))
    return out


def _where_jvp(b, i, tangent):
    # the operands are read as the kernel reads them (full, scalar or a trailing tile)
    out_shape = b.shapes[i]
    ta, tb = ((None if t is None else _as_operand(b, t, k, out_shape))
              for t, k in ((tangent(b.a0[i]), b.a0[i]), (tangent(b.a1[i]), b.a1[i])))
    cond = params(b, i)[0]
    out = _bnp().where(_as_operand(b, var(b, cond), cond, out_shape),
                       0.0 if ta is None else ta, 0.0 if tb is None else tb)
    return broadcast_to(b.lift(out), out_shape)


def _listed(b, i):
    p = params(b, i)
    return [int(k) for k in p[1:1 + p[0]]]


def _sum_vjp(b, i, g, need=None):
    c = float(b.imm[i])
    return [(k, broadcast_to(b.lift(c * g), b.shapes[k])) for k in _listed(b, i)]


def _sum_jvp(b, i, tangent):
    bnp = _bnp()
    terms = [bnp.sum(tangent(k)) for k in _listed(b, i) if tangent(k) is not None]
    return float(b.imm[i]) * bnp.sum(terms)


def _sumsq_vjp(b, i, g, need=None):
    c = float(b.imm[i])
    return [(k, 2.0 * c * g * var(b, k)) for k in _listed(b, i)]


def _sumsq_jvp(b, i, tangent):
    bnp = _bnp()
    terms = [bnp.sum(var(b, k) * tangent(k)) for k in _listed(b, i)
             if tangent(k) is not None]
    return 2.0 * float(b.imm[i]) * bnp.sum(terms)


def _inner_parts(b, i):
    p = params(b, i)
    m = p[0]
    return [int(k) for k in p[1:1 + m]], [int(k) for k in p[1 + m:1 + 2 * m]]


def _inner_vjp(b, i, g, need=None):
    xs, ws = _inner_parts(b, i)
    need = need or (lambda k: True)
    out = [(x, g * var(b, w)) for x, w in zip(xs, ws) if need(x)]
    out += [(w, g * var(b, x)) for x, w in zip(xs, ws) if need(w)]
    if b.a0[i] >= 0 and need(b.a0[i]):
        out.append((b.a0[i], g))
    return out


def _inner_jvp(b, i, tangent):
    bnp = _bnp()
    xs, ws = _inner_parts(b, i)
    terms = []
    for x, w in zip(xs, ws):
        if tangent(x) is not None:
            terms.append(bnp.sum(tangent(x) * var(b, w)))
        if tangent(w) is not None:
            terms.append(bnp.sum(var(b, x) * tangent(w)))
    if b.a0[i] >= 0 and tangent(b.a0[i]) is not None:
        terms.append(tangent(b.a0[i]))
    return bnp.sum(terms)


def _matmul_views(b, i):
    nb, M, K, N, sa, sb = params(b, i)[:6]
    bnp = _bnp()
    A = bnp.reshape(var(b, b.a0[i]), (nb if sa else 1, M, K))
    B = bnp.reshape(var(b, b.a1[i]), (nb if sb else 1, K, N))
    return A, B, (nb, M, K, N, sa, sb)


def _matmul_vjp(b, i, g, need=None):
    bnp = _bnp()
    A, B, (nb, M, K, N, sa, sb) = _matmul_views(b, i)
    need = need or (lambda k: True)
    G = bnp.reshape(g, (nb, M, N))
    out = []
    # an operand shared by the nb products gets the sum of their gradients (of one: itself)
    if need(b.a0[i]):
        dA = bnp.matmul(G, bnp.swapaxes(B, 1, 2))
        out.append((b.a0[i], bnp.reshape(dA if sa or nb == 1 else bnp.sum(dA, axis=0),
                                         b.shapes[b.a0[i]])))
    if need(b.a1[i]):
        dB = bnp.matmul(bnp.swapaxes(A, 1, 2), G)
        out.append((b.a1[i], bnp.reshape(dB if sb or nb == 1 else bnp.sum(dB, axis=0),
                                         b.shapes[b.a1[i]])))
    return out


def _matmul_jvp(b, i, tangent):
    bnp = _bnp()
    A, B, (nb, M, K, N, sa, sb) = _matmul_views(b, i)
    ta, tb = tangent(b.a0[i]), tangent(b.a1[i])
    out = None
    if ta is not None:
        out = bnp.matmul(bnp.reshape(ta, A.shape), B)
    if tb is not None:
        term = bnp.matmul(A, bnp.reshape(tb, B.shape))
        out = term if out is None else out + term
    return bnp.reshape(out, b.shapes[i])


# -- reductions and scans (#11) -----------------------------------------------------------------
def _scan(name, x, axis):
    """The cumsum / cumprod row of x along ``axis``, as a traced op."""
    return x._b.axis(name, x._b.lift(x), axis, x.shape)


def _cumsum_vjp(b, i, g, need=None):
    bnp = _bnp()
    s = _lanes(b, i)
    rev = _scan("cumsum", bnp.flip(_as3(g, s), axis=1), 1)     # sum_{k >= j} g_k
    return [(b.a0[i], bnp.reshape(bnp.flip(rev, axis=1), b.shapes[b.a0[i]]))]


def _cumsum_jvp(b, i, tangent):
    t = _as3(tangent(b.a0[i]), _lanes(b, i))
    return _bnp().reshape(_scan("cumsum", t, 1), b.shapes[i])


def _cumprod_weights(b, i):
    """W[o, j, k, n] = d y[o, k, n] / d a[o, j, n] = prod_{i <= k, i != j} a_i for k >= j, else
    0: the cumulative products with a_j replaced by 1 (m lanes of m, exact at zeros)."""
    bnp = _bnp()
    (o, m, n), x3 = _axis3(b, i, b.a0[i])
    eye = np.eye(m, dtype=bool).reshape(1, m, m, 1)
    others = _scan("cumprod", bnp.where(eye, 1.0, bnp.reshape(x3, (o, 1, m, n))), 2)
    return bnp.where(np.triu(np.ones((m, m), dtype=bool)).reshape(1, m, m, 1), others, 0.0)


def _cumprod_vjp(b, i, g, need=None):
    bnp = _bnp()
    (o, m, n) = _lanes(b, i)
    da = bnp.sum(_cumprod_weights(b, i) * bnp.reshape(g, (o, 1, m, n)), axis=2)
    return [(b.a0[i], bnp.reshape(da, b.shapes[b.a0[i]]))]


def _cumprod_jvp(b, i, tangent):
    bnp = _bnp()
    (o, m, n) = _lanes(b, i)
    t = bnp.reshape(tangent(b.a0[i]), (o, m, 1, n))
    return bnp.reshape(bnp.sum(_cumprod_weights(b, i) * t, axis=1), b.shapes[i])


def _argsort_vjp(b, i, g, need=None):
    return []                                   # integer data: no cotangent


def _argsort_jvp(b, i, tangent):
    return None


BLOCK = {
    "where": (_where_vjp, _where_jvp), "gather": (_gather_vjp, _gather_jvp),
    "sum": (_sum_vjp, _sum_jvp), "sumsq": (_sumsq_vjp, _sumsq_jvp),
    "inner": (_inner_vjp, _inner_jvp), "sum_axis": (_reduce_vjp, _reduce_jvp),
    "max_axis": (_max_vjp, _max_jvp), "softmax": (_softmax_vjp, _softmax_jvp),
    "causal_softmax": (_causal_vjp, _causal_jvp),
    "log_softmax": (_log_softmax_vjp, _log_softmax_jvp),
    "logsumexp": (_logsumexp_vjp, _logsumexp_jvp),
    "layer_norm": (_layer_norm_vjp, _layer_norm_jvp), "cross_entropy": (_ce_vjp, _ce_jvp),
    "take": (_take_vjp, _take_jvp), "scatter": (_scatter_vjp, _scatter_jvp),
    "take_add": (_take_add_vjp, _take_add_jvp), "matmul": (_matmul_vjp, _matmul_jvp),
    "cumsum": (_cumsum_vjp, _cumsum_jvp), "cumprod": (_cumprod_vjp, _cumprod_jvp),
    "argsort": (_argsort_vjp, _argsort_jvp),
    **_linalg.BLOCK,
}


# -- the adjoint rows, as traced ops -----------------------------------------------------------
def scatter(a, positions, shape):
    """zeros(shape) with a's elements added at the flat ``positions`` (gather's adjoint)."""
    b = a._b
    a = b.lift(a)
    shape = tuple(shape)
    node = b.add("scatter", shape, a.node, params=np.asarray(positions).reshape(-1),
                 need=b.need[a.node])
    return Var(b, node, shape)


def take(table, idx):
    """table[idx] for the integer node idx of the trace (the take row, whose index data was
    checked when the trace first met it)."""
    b = table._b
    width = math.prod(table.shape[1:])
    shape = tuple(idx.shape) + tuple(table.shape[1:])
    node = b.add("take", shape, table.node, idx.node, params=[table.shape[0], width],
                 need=b.need[table.node])
    return Var(b, node, shape)


def take_add(a, idx, nrows):
    """zeros((nrows,) + a.shape[1:]) with a's rows added at rows ``idx`` (take's adjoint);
    ``idx`` is integer data of the trace."""
    b = a._b if isinstance(a, Var) else idx._b
    a, idx = b.lift(a), b.lift(idx)
    width = math.prod(a.shape[1:])
    shape = (int(nrows),) + tuple(a.shape[1:])
    node = b.add("take_add", shape, a.node, idx.node, params=[int(nrows), width],
                 need=b.need[a.node])
    return Var(b, node, shape)


# -- the sweeps ---------------------------------------------------------------------------------
def node_vjp(b, i, g, need=None):
    """[(operand node, cotangent)] of node i for the cotangent g of its output; with
    ``need`` (a predicate on nodes), the rows with several operands skip the cotangents of
    operands it rejects, so no dead nodes are traced for them."""
    row = ROWS[b.op[i]]
    if row.kind == "map":
        return _map_vjp(b, i, g, need)
    return BLOCK[row.name][0](b, i, g, need)


def node_jvp(b, i, tangent):
    """The tangent of node i's output, or None when no operand has one."""
    row = ROWS[b.op[i]]
    if not any(tangent(k) is not None for k in operands(b, i)):
        return None
    if row.kind == "map":
        return _map_jvp(b, i, tangent)
    return BLOCK[row.name][1](b, i, tangent)


def _reaches(b, start, seeds):
    """The nodes from ``start`` on that depend on a node in ``seeds``."""
    dep = set(seeds)
    for i in range(start, b.n):
        if any(k in dep for k in operands(b, i)):
            dep.add(i)
    return dep


def eliminate_dead(b, roots):
    """Make every node that no root depends on a constant, which the sweeps skip: a trace
    with derivatives in it (``b.derived``) computes values its output never reads (the
    loss value under a traced gradient, the gradient under a Hessian). The node keeps its
    slice of the arena and its index (no renumbering: gathers address the arena). Tape
    order is execution order, so one backward pass finds the live nodes. Returns how many
    nodes were eliminated."""
    n = b.n
    live = bytearray(n)
    for r in roots:
        live[r] = 1
    op, a0, a1, pp = b.op, b.a0, b.a1, b.pp
    listed = {OPCODE["sum"], OPCODE["sumsq"], OPCODE["inner"], OPCODE["gather"],
              OPCODE["where"]}
    for i in range(n - 1, -1, -1):
        if not live[i]:
            continue
        if op[i] in listed:                     # operands named in the parameters too
            for k in operands(b, i):
                live[k] = 1
            continue
        if a0[i] >= 0:
            live[a0[i]] = 1
        if a1[i] >= 0:
            live[a1[i]] = 1
    const, leaves = OPCODE["const"], {OPCODE["const"], OPCODE["input"]}
    dead = 0
    for i in range(n):
        if not live[i] and op[i] not in leaves:
            op[i], a0[i], a1[i], pp[i], b.need[i] = const, -1, -1, -1, 0
            dead += 1
    return dead


def backward(b, start, seeds, wrt):
    """Cotangents {node: traced value or None} of the nodes in ``wrt`` (the copies made at
    ``start``), pulled back from ``seeds`` {node: cotangent} through the nodes appended
    since, last to first. Only nodes that depend on ``wrt`` pass cotangents on."""
    b.derived = True
    end = b.n                                   # the rules append nodes: stop at these
    dep = _reaches(b, start, wrt)
    # a seed may come at the shape of a view of its node ((n, 1) for an (n,) node)
    ct = {k: v if not isinstance(v, Var) or v.shape == b.shapes[k]
          else _bnp().reshape(v, b.shapes[k]) for k, v in seeds.items()}
    for i in range(end - 1, start - 1, -1):
        g = ct.get(i)
        if g is None or i in wrt or i not in dep or ROWS[b.op[i]].kind == "leaf":
            continue
        for k, c in node_vjp(b, i, g, dep.__contains__):
            if k in dep and c is not None:
                ct[k] = c if k not in ct else ct[k] + c
    return {k: ct.get(k) for k in wrt}


def forward(b, start, tangents):
    """Tangents {node: traced value} of every node appended since ``start`` that a node of
    ``tangents`` (copies made at ``start``) reaches, first to last."""
    b.derived = True
    t = dict(tangents)
    end = b.n
    for i in range(start, end):
        row = ROWS[b.op[i]]
        if i in t or row.kind == "leaf" or (row.kind == "map" and row.da is None
                                            and row.db is None):
            continue                            # masks and stop_gradient carry no tangent
        ty = node_jvp(b, i, t.get)
        if ty is None:
            continue
        ty = b.lift(ty)
        t[i] = ty if ty.shape == b.shapes[i] else broadcast_to(ty, b.shapes[i])
    return t


# -- many tangents at once: the forward sweep with a leading batch axis ------------------------
# A batched tangent of node i has shape (B,) + shape(i): B directions pushed forward together,
# so that a matrix product of tangents is one matrix-matrix product (the Hessian's columns
# in one pass instead of d). Rows without a batched rule fall back to one rule per direction.

def _batched_map(b, i, tangent, B):
    row = ROWS[b.op[i]]
    out_shape = b.shapes[i]
    total = None
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        t = tangent(node)
        if getattr(row, slot) is None or t is None:
            continue
        shape = operand_shape(b, node, out_shape)
        lead = (1,) * (len(out_shape) - len(shape))      # align with the output's axes
        _, ev = _map_env(b, i, _bnp().reshape(t, (B,) + lead + shape))
        term = _rule(row, slot, ev)
        total = term if total is None else total + term
    return total


def _batched_sum(b, i, tangent, B, identity=()):
    bnp = _bnp()
    terms = [bnp.sum(bnp.reshape(tangent(k), (B, -1)), axis=1) for k in _listed(b, i)
             if tangent(k) is not None]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return float(b.imm[i]) * total


def _batched_reduce(b, i, tangent, B, identity=()):
    bnp = _bnp()
    o, m, n = params(b, i)[:3]
    t3 = bnp.reshape(tangent(b.a0[i]), (B * o, m, n))
    return float(b.imm[i]) * bnp.sum(t3, axis=1)


def _batched_gather(b, i, tangent, B, identity=()):
    """One gather of the sources' batched tangents: direction k's element j is read from
    row k of its source's tangent."""
    size = math.prod(b.shapes[i])
    positions = np.asarray(params(b, i)[:size])
    owner = sources(b, positions)
    off = _offsets(b)
    picked = np.empty((B, size), dtype=np.int64)
    used = []
    for s in np.unique(owner):
        t = tangent(int(s))
        if t is None:
            t = b.const(np.zeros((B,) + b.shapes[s]))
        used.append(t)
        js = np.flatnonzero(owner == s)
        rows = t.positions().reshape(B, -1)
        picked[:, js] = rows[:, positions[js] - off[s]]
    return b.gather(used, picked.reshape(-1), (B,) + b.shapes[i])


def _transposed(b, v):
    """The matrix v transposed, as a view. Where v is a gather node made from a view (the
    x^T of a backward), the view reads that gather's own sources: (x^T)^T is x, no copy."""
    through = b.viewed.get(v.node) if v._view is None else None
    if through is None:
        return _bnp().transpose(v, (1, 0))
    pos = np.asarray(through).reshape(v.shape).T
    srcs = [var(b, int(s)) for s in np.unique(sources(b, pos.reshape(-1)))]
    return b.gather(srcs, pos, pos.shape)


def _batched_matmul(b, i, tangent, B, identity=()):
    """tY = tA @ B + A @ tB for B directions. With one left matrix, A @ tB is computed as
    A @ [tB_1 ... tB_B] (the directions side by side): one matrix-matrix product."""
    bnp = _bnp()
    A, Bm, (nb, M, K, N, sa, sb) = _matmul_views(b, i)
    ta, tb = tangent(b.a0[i]), tangent(b.a1[i])
    out = None
    if ta is not None:
        out = bnp.matmul(bnp.reshape(ta, (B,) + A.shape), Bm)
    if tb is not None:
        tb4 = bnp.reshape(tb, (B,) + Bm.shape)
        if b.a1[i] in identity and A.shape[0] == 1 and Bm.shape == (1, K, 1) and B == K:
            # the directions are the unit vectors: A @ e_k is A's column k, so the product
            # is A transposed (the Jacobian of X @ w with respect to w, not a K-fold product)
            # (shaped as the other term, (B, 1, M, 1), so that the two add elementwise)
            term = bnp.reshape(bnp.transpose(bnp.reshape(A, (M, K)), (1, 0)), (K, 1, M, 1))
        elif A.shape[0] == 1 and N == 1 and Bm.shape[0] == 1:
            # A @ t_k for every direction k, as rows: T (B, K) @ A^T, one product (A is
            # often x^T from the backward of x @ w: then A^T is x itself, no transpose)
            At = _transposed(b, bnp.reshape(A, (M, K)))
            term = bnp.reshape(bnp.matmul(bnp.reshape(tb4, (B, K)), At), (B, 1, M, 1))
        elif A.shape[0] == 1:
            T = bnp.reshape(bnp.transpose(tb4, (2, 0, 1, 3)), (K, B * Bm.shape[0] * N))
            Y = bnp.matmul(bnp.reshape(A, (M, K)), T)                # (M, B * nbB * N)
            term = bnp.transpose(bnp.reshape(Y, (M, B, Bm.shape[0], N)), (1, 2, 0, 3))
        else:
            term = bnp.matmul(A, tb4)
        out = term if out is None else out + term
    return out


BATCHED = {"sum": _batched_sum, "sum_axis": _batched_reduce, "gather": _batched_gather,
           "matmul": _batched_matmul,
           "argsort": lambda b, i, tangent, B, identity=(): None}   # integer data: no tangent


def _whole_copy(b, i):
    """The node that gather node i copies whole and in order, or None."""
    size = math.prod(b.shapes[i])
    src = b.a0[i]
    start = b.off[src]
    if b.off[src + 1] - start != size:
        return None
    p = np.asarray(params(b, i)[:size])
    return src if size and p[0] == start and np.array_equal(p, start + np.arange(size)) \
        else None


class _Scaled:
    """A batched tangent kept as ``base * coef``: base has the node's shape with the leading
    axis of B directions, coef is unbatched (a float, or a traced value that broadcasts over
    the node's shape the way a map row's operand does). A map row's tangent rule is linear in
    the tangent (g * f'(a), g / b, -g, g if c else 0, ...), so applied to a scaled tangent it
    scales the coefficient alone: rule(base * c) = base * rule(c), one op over a node's
    values instead of over B of them. A chain of such rows (the logistic loss's exp, log and
    divides under a Hessian) costs one batched multiply, made where a row needs the batched
    tangent itself (``_formed``). Mathematically the same tangent; the rounding differs from
    applying each rule to the batched tangent (the factors are multiplied in another order)."""
    __slots__ = ("base", "coef")

    def __init__(self, base, coef):
        self.base, self.coef = base, coef


def _formed(b, t, node):
    """Node ``node``'s batched tangent as a traced value (None without one); a scaled one
    is multiplied out once and kept."""
    ty = t.get(node)
    if not isinstance(ty, _Scaled):
        return ty
    formed = ty.base if type(ty.coef) is float and ty.coef == 1.0 else ty.base * ty.coef
    t[node] = formed
    return formed


def _scaled_map(b, i, t, B):
    """Map row i's batched tangent as a ``_Scaled`` one, or None where it cannot be: an
    operand whose tangent is broadcast over the output, or two operands' tangents on
    different bases."""
    row = ROWS[b.op[i]]
    out_shape = b.shapes[i]
    n = math.prod(out_shape)
    base, coef = None, None
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        tk = t.get(node)
        if getattr(row, slot) is None or tk is None:
            continue
        if math.prod(b.shapes[node]) != n:
            return None
        kb, kc = (tk.base, tk.coef) if isinstance(tk, _Scaled) else (tk, 1.0)
        kb = _bnp().reshape(kb, (B,) + out_shape)
        if base is None:
            base = kb
        elif kb.node != base.node:
            return None
        if isinstance(kc, Var) and kc.size != math.prod(b.shapes[node]):
            kc = broadcast_to(kc, b.shapes[node])
        _, ev = _map_env(b, i, kc, node)
        term = _rule(row, slot, ev)
        coef = term if coef is None else coef + term
    if base is None:
        return None
    return _Scaled(base, coef if isinstance(coef, Var) else float(coef))


def forward_batched(b, start, tangents, B, identity=()):
    """As ``forward``, for tangents with a leading axis of B directions; ``identity``: the
    nodes whose tangents are the B unit vectors (a rule may use that). A tangent of the
    result may be a ``_Scaled`` one: read them with ``_formed``."""
    b.derived = True
    bnp = _bnp()
    t = dict(tangents)
    get = functools.partial(_formed, b, t)
    identity = set(identity)
    for i in range(start, b.n):
        row = ROWS[b.op[i]]
        if i in t or row.kind == "leaf" or (row.kind == "map" and row.da is None
                                            and row.db is None):
            continue
        if not any(t.get(k) is not None for k in operands(b, i)):
            continue
        if row.name == "gather" and _whole_copy(b, i) in t:
            src = _whole_copy(b, i)               # a copy of a node: the same tangent
            t[i] = t[src]
            if src in identity:
                identity.add(i)
            continue
        if row.kind == "map":
            scaled = _scaled_map(b, i, t, B)
            if scaled is not None:
                t[i] = scaled
                continue
            ty = _batched_map(b, i, get, B)
        elif row.name in BATCHED:
            ty = BATCHED[row.name](b, i, get, B, identity)
        else:                                   # one direction at a time
            cols = []
            for k in range(B):
                col = node_jvp(b, i, lambda n: None if get(n) is None else t[n][k])
                col = b.lift(col)
                cols.append(col if col.shape == b.shapes[i] else
                            broadcast_to(col, b.shapes[i]))
            ty = bnp.stack(cols)
        if ty is None:
            continue
        ty = b.lift(ty)
        shape = (B,) + b.shapes[i]
        if ty.shape != shape:
            ty = bnp.reshape(ty, shape) if ty.size == math.prod(shape) else \
                broadcast_to(bnp.reshape(ty, (B,) + (1,) * len(b.shapes[i])), shape) \
                if ty.size == B else broadcast_to(ty, shape)
        t[i] = ty
    return t


# -- transformations on traced values ------------------------------------------------------------
def _substitute(b, args, argnums):
    """The arguments with each leaf of the differentiated ones replaced by a copy node, and
    those copies in order (with their argument's pytree layout for the results)."""
    from ..trace.pytree import flatten, unflatten
    new, copies, layout = list(args), [], []
    for k in argnums:
        leaves, treedef = flatten(args[k])
        fresh = []
        for x in leaves:
            v = b.lift(x)
            node = copy(v)
            copies.append(node)
            fresh.append(var(b, node))
        new[k] = unflatten(treedef, fresh)
        layout.append((treedef, len(leaves)))
    return new, copies, layout


def _regroup(values, layout, single):
    from ..trace.pytree import unflatten
    out, pos = [], 0
    for treedef, n in layout:
        out.append(unflatten(treedef, values[pos:pos + n]))
        pos += n
    return out[0] if single else tuple(out)


def _zeros_like(b, node):
    shape = b.shapes[node]
    return b.const(np.zeros(shape)) if shape else b.const(0.0)


def value_and_grad(b, f, args, kwargs, argnums, single, has_aux, with_value):
    """grad / value_and_grad of f at traced arguments, emitted into their trace."""
    from ..transforms.core import _as_output
    start = b.n
    new, copies, layout = _substitute(b, args, argnums)
    result = f(*new, **kwargs)
    aux = None
    if has_aux:
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            from .._errors import OutputError
            raise OutputError("has_aux=True: the function must return a pair (output, aux)")
        result, aux = result
    out = _as_output(b, result, True)
    cts = backward(b, start, {out.node: b.const(1.0)}, set(copies))
    grads = _regroup([cts[c] if cts[c] is not None else _zeros_like(b, c) for c in copies],
                     layout, single)
    if has_aux:
        return ((out, aux), grads) if with_value else (grads, aux)
    return (out, grads) if with_value else grads


def vjp(b, f, primals):
    """(f(*primals), vjp_fun) at traced primals; vjp_fun emits the backward when called."""
    start = b.n
    new, copies, layout = _substitute(b, primals, tuple(range(len(primals))))
    out = b.lift(f(*new))
    out_node = out.node

    def vjp_fun(cotangent):
        ct = b.lift(cotangent)
        if ct.shape != out.shape:
            from .._errors import ShapeError
            raise ShapeError(at_user_site(f"vjp: the cotangent has shape {ct.shape}, but the "
                                          f"output has shape {out.shape}"))
        cts = backward(b, start, {out_node: ct}, set(copies))
        return tuple(_regroup([cts[c] if cts[c] is not None else _zeros_like(b, c)
                               for c in copies], layout, False))
    return out, vjp_fun


def jvp(b, f, primals, tangents):
    """(f(*primals), J tangents) at traced primals, emitted into their trace."""
    from ..trace.pytree import flatten
    start = b.n
    new, copies, _ = _substitute(b, primals, tuple(range(len(primals))))
    seeds = {}
    flat = [leaf for t in tangents for leaf in flatten(t)[0]]
    for node, t in zip(copies, flat):
        seeds[node] = b.lift(t)
    out = b.lift(f(*new))
    out_node = out.node           # a pending view (x.T, a reshape) becomes a node first
    t = forward(b, start, seeds)
    ty = t.get(out_node)
    ty = ty if ty is not None else _zeros_like(b, out_node)
    return out, (ty if ty.shape == out.shape else _bnp().reshape(ty, out.shape))


def jacobian_matrix(b, f, args, argnums, how):
    """The Jacobian of f at traced arguments as one (m, n) matrix (output elements by
    differentiated input elements), emitted into the trace: every input direction pushed
    forward at once (fwd), or one backward per output element (rev). Also returns the
    output's shape, the differentiated leaves' shapes and their pytree layout."""
    from .. import numpy as bnp
    start = b.n
    new, copies, layout = _substitute(b, args, argnums)
    out = b.lift(f(*new))
    out_node = out.node           # a pending view becomes a node before the sweeps
    m = math.prod(out.shape)
    sizes = [math.prod(b.shapes[c]) for c in copies]
    n = sum(sizes)
    if how == "fwd" or (how == "auto" and n <= m):
        # copy c's seed is rows pos .. pos + size of the identity
        seeds, pos = {}, 0
        for c, size in zip(copies, sizes):
            e = np.zeros((n, size))
            e[pos:pos + size] = np.eye(size)
            seeds[c] = b.const(e.reshape((n,) + b.shapes[c]))
            pos += size
        t = forward_batched(b, start, seeds, n, set(copies) if len(copies) == 1 else ())
        ty = _formed(b, t, out_node)
        cols = bnp.reshape(ty, (n, m)) if ty is not None else b.const(np.zeros((n, m)))
        J = bnp.transpose(cols, (1, 0))
    else:
        rows = []
        for r in range(m):
            e = np.zeros(m)
            e[r] = 1.0
            seed = b.const(e.reshape(out.shape)) if out.shape else b.const(1.0)
            cts = backward(b, start, {out_node: seed}, set(copies))
            parts = [bnp.reshape(cts[c] if cts[c] is not None else _zeros_like(b, c), (-1,))
                     for c in copies]
            rows.append(bnp.concatenate(parts) if len(parts) > 1 else parts[0])
        J = bnp.stack(rows)
    return J, out.shape, [b.shapes[c] for c in copies], layout
