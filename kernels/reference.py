"""A plain-Python interpreter of the op table: the second engine the compiled kernels are
tested against. It reads the rows directly (not the generated code), calls the map rows' rule
functions element by element on numpy float64 scalars (IEEE arithmetic: inf and NaN where Python's
``math`` would raise), and runs block statements as Python functions over the named columns.
Slow by design; for tests on small tapes.
"""
import math
import textwrap
import types

import numpy as np

from . import (_prims, layout, rules, special, special_bessel, special_bessel_real, special_beta,
               special_gamma, special_owens)
from .layout import views
from .ops import ROWS

# numpy's scalar functions under math's names, which follow IEEE at 0, inf and NaN (math's
# raise there); math's erf / erfc do too
_NUMPY_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
                "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh"}
IEEE_MATH = {name: getattr(np, _NUMPY_NAMES.get(name, name))
             for name in rules.MATH if name not in ("erf", "erfc")}
IEEE_MATH.update(erf=math.erf, erfc=math.erfc)
IEEE_MATH["vexp"] = np.exp      # rules.BLOCK_MATH: exp, in loops that vectorize
IEEE_MATH.update(special.FUNCTIONS)   # rules.SPECIAL: scipy.special's, in plain Python
IEEE_MATH.update(special_bessel.FUNCTIONS)
IEEE_MATH.update(special_gamma.FUNCTIONS)
IEEE_MATH.update(special_beta.FUNCTIONS)
IEEE_MATH.update(special_owens.FUNCTIONS)
IEEE_MATH.update(special_bessel_real.FUNCTIONS)
_MATH = dict(IEEE_MATH, abs=abs, int=int, max=max, np=np, inf=math.inf, nan=math.nan)


def _ieee(row, slot):
    """A map row's rule as a function of the contract's names (``a, b, c, y, g``), run with
    numpy's IEEE scalar functions in place of math's: the rule's own code, called directly."""
    fn = getattr(row, slot)
    params = rules.read(fn, row.name, slot, row.arity).params
    rebound = types.FunctionType(fn.__code__, {**fn.__globals__, **IEEE_MATH}, fn.__name__)

    def rule(a, b, c, y=None, g=None):
        env = {"a": a, "b": b, "c": c, "y": y, "g": g}
        return rebound(*[env[p] for p in params])
    return rule


class _Table(dict):
    """opcode -> a row's rule as a Python function, each made the first time it is looked
    up (``build(row)``), so a process pays for the rows it runs, not for the table: making
    all of them (every block's statements read and compiled) took 0.66 s, at the first
    Python decision of every process that makes one (tracing/concrete.py). Two threads may
    both make a missing one: they make the same function, and either is kept."""

    def __init__(self, build):
        super().__init__()
        self._build = build

    def __missing__(self, k):
        fn = self[k] = self._build(ROWS[k])
        return fn


_FWD = _Table(lambda r: _ieee(r, "fwd"))
_DA = _Table(lambda r: _ieee(r, "da"))
_DB = _Table(lambda r: _ieee(r, "db"))
_NAMES = "i, oy, ny, c, p, P, off, a0, a1, need, val, grad, scratch"


def _block(code, name):
    """A block's statements as a function of the sweep's locals; returns 0 or an error."""
    namespace = dict(_MATH, ERR_INDEX=layout.ERR_INDEX, ERR_TARGET=layout.ERR_TARGET,
                     blas=True, lanes=1, gemm=lambda *args: _prims.gemm(None, *args),
                     gemv=lambda *args: _prims.gemv(None, *args),
                     user=lambda *args: _prims.user(None, *args))
    exec(compile(f"def block({_NAMES}):\n" + textwrap.indent(code, "    ") + "\n    return 0\n",
                 f"<{name}>", "exec"), namespace)
    return namespace["block"]


_BLOCK_FWD = _Table(lambda r: _block(rules.block_source(r.fwd, r.name, "fwd"), f"{r.name} fwd"))
_BLOCK_BWD = _Table(lambda r: _block(rules.block_source(r.bwd, r.name, "bwd"), f"{r.name} bwd"))


def _run_block(table, k, cols, i):
    with np.errstate(all="ignore"):
        _run_block_ieee(table, k, cols, i)


def _run_block_ieee(table, k, cols, i):
    off = cols["off"]
    status = table[k](i, int(off[i]), int(off[i + 1] - off[i]), float(cols["imm"][i]),
                      int(cols["pp"][i]), cols["P"], off, cols["a0"], cols["a1"], cols["need"],
                      cols["val"], cols["grad"], cols["scratch"])
    if status:
        raise IndexError(f"{ROWS[k].name} (node {i}): {layout.ERRORS[status]}")


def _operand(cols, node, ny):
    """(offset, size) of a map operand: element j of the output reads element j % size
    (a scalar, the same size, or a tile repeated over the output)."""
    off = cols["off"]
    o = int(off[node])
    return o, int(off[node + 1]) - o


def forward(I, F):
    cols = views(I, F)
    off, val = cols["off"], cols["val"]
    for i in range(len(cols["op"])):
        k = int(cols["op"][i])
        row = ROWS[k]
        if row.kind == "leaf":
            continue
        if row.kind == "block":
            _run_block(_BLOCK_FWD, k, cols, i)
            continue
        oy, ny = int(off[i]), int(off[i + 1] - off[i])
        c = float(cols["imm"][i])
        oa, na = _operand(cols, int(cols["a0"][i]), ny)
        ob, nb = _operand(cols, int(cols["a1"][i]), ny) if row.arity == 2 else (0, 1)
        with np.errstate(all="ignore"):
            for j in range(ny):
                b = np.float64(val[ob + j % nb]) if row.arity == 2 else 0.0
                val[oy + j] = _FWD[k](np.float64(val[oa + j % na]), b, c)


def backward(I, F, last):
    cols = views(I, F)
    off, val, grad, need = cols["off"], cols["val"], cols["grad"], cols["need"]
    for i in range(last, -1, -1):
        if not need[i]:
            continue
        k = int(cols["op"][i])
        row = ROWS[k]
        if row.kind == "leaf":
            continue
        if row.kind == "block":
            _run_block(_BLOCK_BWD, k, cols, i)
            continue
        oy, ny = int(off[i]), int(off[i + 1] - off[i])
        c = float(cols["imm"][i])
        ia, ib = int(cols["a0"][i]), int(cols["a1"][i])
        oa, na = _operand(cols, ia, ny)
        ob, nb = _operand(cols, ib, ny) if row.arity == 2 else (0, 1)
        with np.errstate(all="ignore"):
            for j in range(ny):
                a = np.float64(val[oa + j % na])
                b = np.float64(val[ob + j % nb]) if row.arity == 2 else 0.0
                y, g = np.float64(val[oy + j]), np.float64(grad[oy + j])
                if row.da and need[ia]:
                    grad[oa + j % na] += _DA[k](a, b, c, y, g)
                if row.db and need[ib]:
                    grad[ob + j % nb] += _DB[k](a, b, c, y, g)


def value_and_grad(I, F):
    """``run(I, F, C, MODE_VALUE_AND_GRAD)`` in plain Python (returns the output's value)."""
    cols = views(I, F)
    out = int(I[1])
    forward(I, F)
    off = cols["off"]
    cols["grad"][:off[out + 1]] = 0.0
    cols["grad"][off[out]] = 1.0
    backward(I, F, out)
    return float(cols["val"][off[out]])
