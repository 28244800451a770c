"""``autograd.misc.fixed_points``' path and signature: ``fixed_point(f, a, x0, distance, tol)``
iterates ``x <- f(a)(x)`` from ``x0`` until ``distance(x, x_prev) <= tol``, and its
derivative with respect to ``a`` comes from the implicit function theorem at the point
reached (``bn.custom_root``), as autograd's does by iterating the adjoint to the same
fixed point. Under a transformation the ``while`` on the traced distance records guards:
another number of iterations traces again (``docs/guide/control-flow.md``)."""
from ..transforms.implicit import custom_root

__all__ = ["fixed_point"]


def fixed_point(f, a, x0, distance, tol):
    """The fixed point of ``f(a)`` reached from ``x0`` to tolerance ``tol`` (autograd's).

    >>> import burnumba as bn, numpy as np
    >>> from burnumba.misc.fixed_points import fixed_point
    >>> def sqrt(a):       # x = x - 0.05 (x^2 - a) has the fixed point sqrt(a)
    ...     return fixed_point(lambda a: lambda x: x - 0.05 * (x ** 2 - a), a, 10.0,
    ...                        lambda x, y: np.abs(x - y), 1e-10)
    >>> round(float(bn.grad(sqrt)(2.0)), 6)       # 1 / (2 sqrt(2))
    0.353553
    """
    step = f(a)

    def iterate(_, x):
        x, x_prev = step(x0), x0
        while distance(x, x_prev) > tol:
            x, x_prev = step(x), x
        return x
    return custom_root(lambda x: step(x) - x, x0, iterate)
