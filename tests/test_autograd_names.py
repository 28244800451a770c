"""autograd's differential operators under their names (transforms/autograd_names.py) and the
``argnum=`` keyword: each against autograd's own, on a function of two array arguments."""
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp

ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

RTOL = 1e-12
X = np.array([0.3, -1.2, 0.7])
Y = np.array([[0.5, 1.5, -0.25], [2.0, -0.5, 1.0]])


def scalar(np_):
    def f(x, y):
        return np_.sum(np_.tanh(np_.dot(y, x)) ** 2) + np_.sum(x ** 3) * np_.sum(y)
    return f


def vector(np_):
    def f(x, y):
        return np_.sin(np_.dot(y, x)) * np_.sum(x ** 2)
    return f


def close(a, b):
    if isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(close(u, v) for u, v in zip(a, b))
    return np.allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=1e-14)


# autograd's elementwise_grad, jacobian and hessian of a tuple of arguments are not JAX's
# tuples of blocks (burnumba's), so those three take one argnum here
CASES = [(name, argnum) for name in ("grad", "value_and_grad", "elementwise_grad", "jacobian",
                                     "hessian")
         for argnum in (0, 1, (0, 1)) if argnum != (0, 1) or name.endswith("grad")]


@pytest.mark.parametrize("name,argnum", CASES)
def test_argnum_keyword_is_autograds(name, argnum):
    if name in ("elementwise_grad", "jacobian"):
        f, fa = vector(bnp), vector(anp)
    else:
        f, fa = scalar(bnp), scalar(anp)
    ours = getattr(bn, name)(f, argnum=argnum)(X, Y)
    theirs = getattr(ag, name)(fa, argnum=argnum)(X, Y)
    assert close(ours, theirs)


def test_argnum_and_argnums_together_is_an_error():
    with pytest.raises(bn.InputError, match="argnum"):
        bn.grad(scalar(bnp), argnums=1, argnum=0)


@pytest.mark.parametrize("argnum", [0, 1])
def test_products(argnum):
    f, fa = scalar(bnp), scalar(anp)
    v = np.linspace(-1.0, 1.0, (X, Y)[argnum].size).reshape((X, Y)[argnum].shape)
    for name in ("hessian_tensor_product", "hessian_vector_product"):
        op = getattr(bn, name)(f, argnum)
        assert close(op(X, Y, v), getattr(ag, name)(fa, argnum)(X, Y, v))
        assert close(op(X + 0.1, Y, v), getattr(ag, name)(fa, argnum)(X + 0.1, Y, v))
    g, ga = vector(bnp), vector(anp)
    u = np.array([1.0, -2.0])
    for name in ("vector_jacobian_product", "tensor_jacobian_product"):
        assert close(getattr(bn, name)(g, argnum)(X, Y, u),
                     getattr(ag, name)(ga, argnum)(X, Y, u))


def test_the_curried_products_trace_once():
    hv = bn.hessian_vector_product(scalar(bnp))
    for k in range(3):
        hv(X + k, Y, X)
    assert len(hv.tapes) == 1


@pytest.mark.parametrize("argnum", [0, 1])
def test_make_vjp_jvp_hvp_and_deriv(argnum):
    g, ga = vector(bnp), vector(anp)
    u = np.array([0.5, -1.0])
    vjp, value = bn.make_vjp(g, argnum)(X, Y)
    vjpa, valuea = ag.make_vjp(ga, argnum)(X, Y)
    assert close(value, valuea) and close(vjp(u), vjpa(u))
    t = np.ones_like((X, Y)[argnum]) * 0.3
    assert close(bn.make_jvp(g, argnum)(X, Y)(t), ag.make_jvp(ga, argnum)(X, Y)(t))
    f, fa = scalar(bnp), scalar(anp)
    hvp, gradient = bn.make_hvp(f, argnum)(X, Y)
    hvpa, gradienta = ag.make_hvp(fa, argnum)(X, Y)
    assert close(gradient, gradienta) and close(hvp(t), hvpa(t))
    assert close(bn.deriv(bnp.tanh)(X), ag.deriv(anp.tanh)(X))


def test_grad_and_aux_and_grad_named():
    def f(x, y):
        return bnp.sum(x * y[0]), {"norm": bnp.sum(x ** 2)}
    gradient, aux = bn.grad_and_aux(f)(X, Y)
    assert close(gradient, Y[0]) and close(aux["norm"], np.sum(X ** 2))
    assert close(bn.grad_named(scalar(bnp), "y")(X, Y), ag.grad_named(scalar(anp), "y")(X, Y))
    with pytest.raises(bn.InputError, match="no argument 'z'"):
        bn.grad_named(scalar(bnp), "z")
