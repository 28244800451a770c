"""A call of a user's own numba function, with the derivative rules the user gives
(``bn.njit_op``, issue #31): the row ``njit_call``.

The node reads one operand, a0 (the user's arguments, concatenated flat), and writes its
own slice; ``P[p]`` is the op's slot in the run's table of addresses (``C[C_USER]``,
``layout.C_USER``): three per op the tape calls, the forward, the vjp and the jvp, each
compiled by numba as a C callback ``int64 f(x, y, a, b, nx, ny)`` of pointers into the
arena (burnumba/transforms/njit_op.py makes them; the tape holds the table, so a kernel
takes nothing but arrays and ints). The forward writes y from x; the vjp adds the
cotangent of x for the cotangent g of y (a = g, b = the gradient of x); the jvp writes the
tangent of y for the tangent t of x (a = t, b = y's tangent). A callback returns 0, or
ERR_USER_RAISED when the user's function raised; an address 0 (a rule not given) gives
ERR_USER_RULE; the caller turns both into an error that names the op.

The row is one generic kernel for every user function: a program that calls none of them
never builds it, and a new user function builds no kernel, only its callbacks.
"""
from .row import OnTrace, Op, Sparsity


def _njit_call_fwd(i, oy, ny, p, P, off, a0, val, user):
    ix = a0[i]
    ox = off[ix]
    nx = off[ix + 1] - ox
    st = user(P[p], 0, val, ox, nx, val, oy, ny, val, ox, val, oy)
    if st != 0:
        return st


def _njit_call_bwd(i, oy, ny, p, P, off, a0, need, val, grad, user):
    ix = a0[i]
    if need[ix]:
        ox = off[ix]
        nx = off[ix + 1] - ox
        st = user(P[p], 1, val, ox, nx, val, oy, ny, grad, oy, grad, ox)
        if st != 0:
            return st


def _njit_call_jvp(i, oy, ny, p, P, off, a0, need, val, grad, user):
    ix = a0[i]
    if need[ix]:
        ox = off[ix]
        nx = off[ix + 1] - ox
        st = user(P[p], 2, val, ox, nx, val, oy, ny, grad, ox, grad, oy)
        if st != 0:
            return st
    else:
        for j in range(ny):
            grad[oy + j] = 0.0


# -- derivatives as traced ops (nested transformations): the user's rules are compiled code,
# not ops, so a derivative of the derivative is refused where it would be traced
def _refuse(np, t, i, *_):
    t.refuse(f"bn.njit_op {t.user_op(i).name!r}: a derivative of its derivative (bn.hessian, "
             "grad of grad, an hvp, a jvp or vjp inside another transformation) is not "
             "available: its vjp and jvp run as compiled code, not as traced ops. Take one "
             "derivative of it (bn.grad, bn.jvp, bn.vmap of those), or write the function "
             "with burnumba.numpy, or give the rule with bn.custom_vjp")


# -- the tape-file check (``Op.check``, burnumba/ir/tapefile.py): ``t`` is its checker
def _njit_call_check(t, i):
    """A tape file cannot name the machine code of a user's function: refused."""
    t.want(i, False, "njit_call (a user's numba function, bn.njit_op) cannot be stored in "
                     "a tape file or a pickle: its code lives in the process that traced it")


ROWS = (
    Op("njit_call", 1, "block", fwd=_njit_call_fwd, bwd=_njit_call_bwd, jvp=_njit_call_jvp,
       check=_njit_call_check, on_trace=OnTrace(_refuse, _refuse, _refuse),
       sparsity=Sparsity("dense_a0", "nonlinear", exact=False),
       doc="a user's numba function with the user's vjp and jvp (bn.njit_op)", opcode=123),
)


# -- special values (test data, tests/test_ieee.py): the row hands the user's function the
# values and cotangents bit for bit, NaN, +-inf and +-0 included (here 2 x, whose vjp is 2 g)
_DOUBLE = ("bn.njit_op(numba.njit(lambda x: 2.0 * x), "
           "vjp=numba.njit(lambda x, y, g: 2.0 * g))(a)")
IEEE_CASES = {
    "njit_call": (
        (_DOUBLE, [[float("nan"), float("inf"), -float("inf"), 0.0, -0.0]],
         [float("nan"), float("inf"), -float("inf"), 0.0, -0.0], [1.0, -1.0, 0.5, 1.0, -0.0],
         [[2.0, -2.0, 1.0, 2.0, -0.0]]),
    ),
}
