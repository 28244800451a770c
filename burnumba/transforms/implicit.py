"""Implicit differentiation through a solver: ``bn.custom_root`` (as ``jax.lax.custom_root``)
and ``bn.fixed_point``.

A root x*(theta) of F(x, theta) = 0 moves with theta as the implicit function theorem says:
dx*/dtheta = -(dF/dx)^-1 dF/dtheta. So the vjp of the solver's output is: solve the
adjoint system (dF/dx)^T u = -g at x*, then pull u back through one evaluation of F to
whatever F reads besides x (its parameters, passed in or closed over). Neither the solver's
iterations nor their derivatives are differentiated: the solver is only the forward value.

Under a transformation the solver runs on traced values and is traced too (its steps are
on the tape for the value; the derivative skips them). A Python ``for`` loop unrolls; a
``while`` on a traced tolerance records guards, so a call that needs another number of
iterations traces again (docs/guide/control-flow.md). Called on plain numbers, the solver
runs as it is. The derivative is exact at the point the solver reached, as with JAX.
"""
import numpy as np

from .. import numpy as bnp
from .._errors import InputError, ShapeError, at_user_site
from ..derive.graph import copy, var
from ..derive.sweeps import node_vjp
from ..kernels import ROWS
from ..tracing.tracer import Var
from . import nested
from .custom import _Region


def _pull_into_earlier(b, s0, s1, seeds):
    """[(node, cotangent)] of the nodes before s0 that nodes s0+1 .. s1-1 read, the
    cotangents ``seeds`` {node: cotangent} pulled back through those nodes (node s0, the
    copy of x, is where the sweep stops: x's cotangent is not wanted)."""
    ct, out = dict(seeds), {}
    for i in range(s1 - 1, s0, -1):
        g = ct.get(i)
        if g is None or ROWS[b.op[i]].kind == "leaf":
            continue
        for k, c in node_vjp(b, i, g):
            if c is None or k == s0:
                continue
            into = ct if k > s0 else out
            into[k] = c if k not in into else into[k] + c
    return list(out.items())


class _Root(_Region):
    """The output node of a solver: its vjp by the implicit function theorem."""

    def __init__(self, name, f, shape, tangent_solve):
        super().__init__(name, (), (), None, None, [shape], None, None)
        self.f, self.shape, self.tangent_solve = f, shape, tangent_solve

    def split(self, flat):
        return bnp.reshape(flat, self.shape)

    def vjp(self, b, i, g, need=None):
        x = copy(var(b, i))                        # x* as a node of its own: F's argument
        fx = self._residual(b, var(b, x))
        s1 = b.n
        gbar = -bnp.reshape(g, (-1,))
        if self.tangent_solve is None:
            # the Jacobian dF/dx at x*, by one backward per output element, then the
            # transposed solve
            J = nested.jacobian_matrix(b, lambda z: bnp.reshape(self.f(z), (-1,)),
                                       (var(b, x),), (0,), "auto")[0]
            u = bnp.linalg.solve(bnp.transpose(J), gbar) if J.shape != (1, 1) \
                else gbar / bnp.reshape(J, (1,))
        else:
            u = bnp.reshape(self.tangent_solve(self._transposed(b, x), bnp.reshape(
                gbar, self.shape)), (-1,))
        return _pull_into_earlier(b, x, s1, {fx.node: bnp.reshape(u, b.shapes[fx.node])})

    def _residual(self, b, x):
        fx = b.lift(self.f(x))
        if fx.shape != tuple(self.shape):
            raise ShapeError(at_user_site(
                f"{self.name}: f(x) has shape {fx.shape}, x has shape {tuple(self.shape)}: "
                "a root is where f(x) = 0, one equation per unknown"))
        return fx

    def _transposed(self, b, x):
        """v -> (dF/dx)^T v at x*, as a traced function (the tangent solver's operator: the
        transpose of the linearized f, which for a symmetric Jacobian or a scalar is f's
        own)."""
        def op(v):
            _, pull = nested.vjp(b, self.f, (var(b, x),))
            return pull(v)[0]
        return op


def custom_root(f, initial_guess, solve, tangent_solve=None):
    """A root of ``f`` found by ``solve(f, initial_guess)``, differentiated implicitly, as
    ``jax.lax.custom_root``: the derivative of the root with respect to everything ``f``
    reads (values it closes over, from the differentiated function) comes from the
    implicit function theorem, not from the solver's steps. ``tangent_solve(g, y)``
    solves the linear system ``g(x) = y`` (for reverse mode, ``g`` is the transposed
    linearization of ``f`` at the root; ``lambda g, y: y / g(1.0)`` for a scalar); by
    default a dense solve with ``f``'s Jacobian. ``initial_guess`` is one array or float.

    Under a transformation the solver is traced: a ``for`` loop unrolls, and a ``while`` on
    a traced tolerance is guarded (another iteration count traces again). See
    ``bn.fixed_point`` for iterations x = g(x), and ``burnumba.misc.fixed_points`` for
    autograd's ``fixed_point(f, a, x0, distance, tol)``.

    >>> import burnumba as bn, numpy as np
    >>> def newton(f, x):
    ...     for _ in range(30):
    ...         x = x - f(x) / bn.grad(f)(x)
    ...     return x
    >>> def sqrt(a):
    ...     return bn.custom_root(lambda x: x * x - a, 1.0, newton)
    >>> round(bn.grad(sqrt)(4.0), 12)          # 1 / (2 sqrt(4))
    0.25
    """
    x = solve(f, initial_guess)
    if not isinstance(x, Var):
        return x                                   # plain numbers: the solver's result
    b = x._b
    shape = tuple(np.shape(initial_guess))
    if x.shape != shape:
        raise ShapeError(at_user_site(
            f"custom_root: the solver returned shape {x.shape}, the initial guess has "
            f"shape {shape}"))
    node = copy(x)
    b.custom[node] = _Root(f"custom_root of {getattr(f, '__name__', 'f')}", f, shape,
                           tangent_solve)
    return var(b, node)


def fixed_point(f, x0, *params, iters=100):
    """The fixed point ``x = f(x, *params)`` reached by ``iters`` iterations from ``x0``,
    with its derivative with respect to ``params`` by the implicit function theorem:
    ``(I - df/dx)^T u = g`` solved at the fixed point, then ``u`` pulled back through
    ``f``'s dependence on the parameters (jaxopt's ``FixedPointIteration`` with implicit
    differentiation). The iterations are not differentiated (nor stored for it).

    >>> import burnumba as bn, numpy as np
    >>> W = np.array([[0.5, -0.2], [0.1, 0.3]])
    >>> def layer(b):        # the equilibrium z = tanh(W z + b) of a deep-equilibrium layer
    ...     return np.sum(bn.fixed_point(lambda z, b: np.tanh(W @ z + b), np.zeros(2), b))
    >>> g = bn.grad(layer)(np.array([0.3, -0.1]))
    """
    if not (isinstance(iters, int) and iters >= 1):
        raise InputError(at_user_site(f"fixed_point: iters must be an int >= 1, got {iters!r}"))

    def iterate(_, x):
        for _ in range(iters):
            x = f(x, *params)
        return x
    name = getattr(f, "__name__", "f")
    residual = _named(lambda x: f(x, *params) - x, name)
    return custom_root(residual, x0, iterate)


def _named(fn, name):
    fn.__name__ = name
    return fn
