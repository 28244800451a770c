"""A map row's derivative on traced values: its rules (``da`` / ``db`` in the op table, plain
Python functions whose source kernels/rules.py reads) evaluated with traced ops (``x if c
else y`` becomes ``where``); a broadcast operand's cotangent is summed back to its shape. The
tangent rule is the same expression with the upstream gradient replaced by the operand's
tangent.
"""
import ast
import functools
import math
import types

import numpy as np

from .. import numpy as bnp
from ..scipy import special as bsp
from .._errors import UnsupportedOpError
from ..kernels import ROWS, rules
from ..tracing.tracer import Var
from .graph import var


# -- evaluating a map row's derivative expression on traced values ---------------------------
def _erfc(z):
    return 1.0 - bnp.erf(z)


# the rules' math functions (math's names, kernels.rules.MATH) that are numpy's under
# another name (copysign, fmod, cbrt, rint and trunc are rows of their own name)
_NUMPY_NAME = {"fabs": "absolute", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
               "atan2": "arctan2", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh"}


@functools.lru_cache(maxsize=1)
def _math():
    """The rules' math names as traced functions (read-only: one mapping for every
    evaluator, made at the first derivative traced)."""
    own = vars(bnp)        # burnumba's own functions (numpy's other names are numpy's)
    out = {m: own[_NUMPY_NAME.get(m, m)] for m in rules.MATH if _NUMPY_NAME.get(m, m) in own}
    out["erfc"] = _erfc
    # the special functions (kernels.rules.SPECIAL): their rows, through burnumba.scipy
    out.update(lgamma=bsp.gammaln, erfinv=bsp.erfinv, ndtri=bsp.ndtri, log_ndtr=bsp.log_ndtr,
               i0=bsp.i0, i1=bsp.i1, polygamma=lambda n, x: bsp.polygamma(int(n), x),
               j0=bsp.j0, j1=bsp.j1, y0=bsp.y0, y1=bsp.y1, gammainc=bsp.gammainc,
               gammaincc=bsp.gammaincc, gammaincinv=bsp.gammaincinv,
               gammainccinv=bsp.gammainccinv, jn=bsp.jn, yn=bsp.yn, betainc=bsp.betainc,
               betaincc=bsp.betaincc, betainc_dx=bsp._betainc_dx,
               gammainc_da=bsp._gammainc_da, betainc_dab=bsp._betainc_dab,
               betainc_dx_dab=bsp._betainc_dx_dab, owens_t=bsp.owens_t, jv=bsp.jv,
               jv_dx=bsp._jv_dx, yv=bsp.yv, yv_dx=bsp._yv_dx, iv=bsp.iv, iv_dx=bsp._iv_dx,
               ive=bsp.ive, ive_dx=bsp._ive_dx, kv=bsp.kv, kv_dx=bsp._kv_dx, kve=bsp.kve,
               kve_dx=bsp._kve_dx)
    assert set(rules.SPECIAL) <= set(out)
    return types.MappingProxyType(out)


_CONSTANTS = {"inf": math.inf, "nan": math.nan}


@functools.lru_cache(maxsize=4096)
def _parsed(code, mode):
    """A rule's parsed source (the rules are a fixed table's: the same few hundred strings;
    the evaluator only reads the tree)."""
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


def as_operand(b, v, node, out_shape):
    shape = operand_shape(b, node, out_shape)
    if not isinstance(v, Var) or v.shape == shape:
        return v
    return bnp.reshape(v, shape)


def map_env(b, i, g, g_node=None):
    """The names a map row's rules use, as traced values shaped the way the kernel reads
    them; ``g`` is the output's cotangent, or (forward) the tangent of operand g_node."""
    row = ROWS[b.op[i]]
    out = b.shapes[i]
    if g_node is not None:
        g = as_operand(b, g, g_node, out)
    env = {"a": as_operand(b, var(b, b.a0[i]), b.a0[i], out), "c": float(b.imm[i]),
           "y": var(b, i), "g": g}
    if row.arity == 2:
        env["b"] = as_operand(b, var(b, b.a1[i]), b.a1[i], out)
    return row, _Evaluator(env)


def rule(row, slot, ev):
    """A map row's rule (kernels/rules.py: its statements and expression, read from the
    row's Python function) evaluated on traced values."""
    r = rules.read(getattr(row, slot), row.name, slot, row.arity)
    if r.statements:
        ev.run("\n".join(r.statements))
    return ev(r.expr)


def unbroadcast(v, shape):
    """A cotangent of the output's shape, summed back to an operand's: the same shape, a
    scalar, or a tile repeated in row-major order over the output."""
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


def map_vjp(b, i, g, need=None):
    row, ev = map_env(b, i, g)
    out = []
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        if getattr(row, slot) is not None and (need is None or need(node)):
            out.append((node, unbroadcast(rule(row, slot, ev), b.shapes[node])))
    return out


def map_jvp(b, i, tangent):
    out = None
    row = ROWS[b.op[i]]
    for k, slot in enumerate(("da", "db")[:row.arity]):
        node = b.a0[i] if k == 0 else b.a1[i]
        t = tangent(node)
        if getattr(row, slot) is None or t is None:
            continue
        _, ev = map_env(b, i, t, node)
        term = rule(row, slot, ev)
        out = term if out is None else out + term
    return out
