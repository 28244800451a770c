"""autograd's differential operators under autograd's names and signatures, so that
``from burnumba import hessian_vector_product`` replaces ``from autograd import ...``
unchanged. Each is built from burnumba's own transformations; the functions that take the
point and return a function (``grad_and_aux``, ``hessian_vector_product``,
``vector_jacobian_product``) trace once per signature, like ``bn.grad``.

autograd's ``argnum`` (one int, or a tuple) is ``argnums`` here; ``bn.grad``,
``bn.value_and_grad``, ``bn.elementwise_grad``, ``bn.jacobian`` and ``bn.hessian`` take
``argnum=`` too (``core.argnums_of``).

=================================  ==============================================================
autograd                           what it computes
=================================  ==============================================================
``grad_and_aux(f, argnum)``        ``f`` returns ``(value, aux)``: gives ``(gradient, aux)``
``hessian_tensor_product(f, k)``   ``(*args, v) -> tensordot(H, v, v.ndim)`` (H with respect to
                                   argument k); ``hessian_vector_product`` is the same
``vector_jacobian_product(f, k)``  ``(*args, v) -> tensordot(v, J, v.ndim)`` (v^T J);
                                   ``tensor_jacobian_product`` is the same
``make_vjp(f, k)(*args)``          ``(vjp, f(*args))``: ``vjp(v)`` is v^T J
``make_jvp(f, k)(*args)``          ``jvp``: ``jvp(t)`` is ``(f(*args), J t)``
``make_hvp(f, k)(*args)``          ``(hvp, gradient)``: ``hvp(v)`` is H v
``deriv(f, k)(*args)``             J times ones: the derivative of an elementwise ``f``
``grad_named(f, name)``            the gradient with respect to the argument called ``name``
=================================  ==============================================================
"""
import inspect

import numpy as np

from .. import numpy as bnp
from .._errors import InputError, at_user_site
from .core import grad as _grad
from .forward import jvp as _jvp, vjp as _vjp


def _at(args, argnum, x):
    """args with the differentiated argument(s) replaced by x."""
    args = list(args)
    if isinstance(argnum, int):
        args[argnum] = x
    else:
        for k, xk in zip(argnum, x):
            args[k] = xk
    return args


def _point(args, argnum):
    return args[argnum] if isinstance(argnum, int) else tuple(args[k] for k in argnum)


def grad_and_aux(fun, argnum=0):
    """The gradient of ``fun``, which returns ``(value, aux)``, and its aux:
    ``grad_and_aux(f)(x) == (gradient, aux)``, as autograd's (``bn.grad(f, has_aux=True)``)."""
    return _grad(fun, argnums=argnum, has_aux=True)


def hessian_tensor_product(fun, argnum=0):
    """``(*args, vector) -> tensordot(H, vector, vector.ndim)``, the Hessian of scalar
    ``fun`` with respect to argument ``argnum`` times ``vector`` (of that argument's shape:
    the Hessian-vector product), by reverse over reverse: autograd's definition, the
    gradient of ``<grad f, vector>``, traced once per signature."""
    gradient = _grad(fun, argnums=argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return bnp.tensordot(gradient(*args, **kwargs), vector, np.ndim(vector))
    return _grad(vector_dot_grad, argnums=argnum)


hessian_vector_product = hessian_tensor_product


def vector_jacobian_product(fun, argnum=0):
    """``(*args, vector) -> tensordot(vector, J, vector.ndim)``: ``vector`` (of the output's
    shape) times the Jacobian of ``fun`` with respect to argument ``argnum``, as autograd's;
    the gradient of ``<vector, fun(*args)>``, traced once per signature."""
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return bnp.tensordot(vector, fun(*args, **kwargs), np.ndim(vector))
    return _grad(vector_dot_fun, argnums=argnum)


tensor_jacobian_product = vector_jacobian_product


def make_vjp(fun, argnum=0):
    """``make_vjp(f, argnum)(*args) == (vjp, f(*args))``, ``vjp(v)`` the vector-Jacobian
    product with respect to argument ``argnum``, as autograd's (``bn.vjp``, traced per call
    as autograd's is)."""
    def at(*args, **kwargs):
        value, pullback = _vjp(lambda x: fun(*_at(args, argnum, x), **kwargs),
                               _point(args, argnum))
        return (lambda v: pullback(v)[0]), value
    return at


def make_jvp(fun, argnum=0):
    """``make_jvp(f, argnum)(*args)`` is ``jvp``, with ``jvp(t) == (f(*args), J t)``, as
    autograd's (``bn.jvp``)."""
    def at(*args, **kwargs):
        x = _point(args, argnum)

        def jvp(tangent):
            return _jvp(lambda y: fun(*_at(args, argnum, y), **kwargs), (x,), (tangent,))
        return jvp
    return at


def make_hvp(fun, argnum=0):
    """``make_hvp(f, argnum)(*args) == (hvp, gradient)``: ``hvp(v)`` is the Hessian of
    scalar ``f`` times ``v``, and ``gradient`` its gradient at ``args``, as autograd's (the
    vjp of the gradient)."""
    return make_vjp(_grad(fun, argnums=argnum), argnum)


def deriv(fun, argnum=0):
    """``deriv(f, argnum)(*args)``: the Jacobian of ``f`` times a vector of ones, the
    derivative of an elementwise ``f`` at each point, by one forward sweep (autograd's)."""
    def at(*args, **kwargs):
        x = _point(args, argnum)
        return make_jvp(fun, argnum)(*args, **kwargs)(np.ones(np.shape(x)))[1]
    return at


def grad_named(fun, argname):
    """The gradient of ``fun`` with respect to the argument called ``argname`` (autograd's),
    ``bn.grad`` with that argument's position."""
    names = list(inspect.signature(fun).parameters)
    if argname not in names:
        raise InputError(at_user_site(
            f"grad_named: {fun.__name__ if hasattr(fun, '__name__') else fun} has no argument "
            f"{argname!r}; its arguments are {names}"))
    return _grad(fun, argnums=names.index(argname))
