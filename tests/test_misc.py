"""burnumba.misc: autograd's ``misc`` paths. The optimizers must give autograd's own numbers
(the same formulas in the same order, so bit for bit), on pytrees, with the callback seeing
what autograd's sees."""
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
from burnumba.misc import flatten, flatten_func
from burnumba.misc.optimizers import adam, rmsprop, sgd

autograd = pytest.importorskip("autograd")
from autograd.misc import optimizers as ag_opt  # noqa: E402

TARGET = {"w": np.array([[1.0, -2.0], [0.5, 3.0]]), "b": [np.array([0.25, -1.5]), 2.0]}


def loss(params, i):
    """A convex loss whose minimiser is TARGET, with a term that changes with the step i."""
    (w, b), (tw, tb) = (params["w"], params["b"]), (TARGET["w"], TARGET["b"])
    return (bnp.sum((w - tw) ** 2) + bnp.sum((b[0] - tb[0]) ** 4)
            + (b[1] - tb[1]) ** 2 * (1.0 + 0.1 * i))


def start():
    return {"w": np.zeros((2, 2)), "b": [np.zeros(2), 0.0]}


def plain_grad(params, i):
    """loss's gradient in plain numpy: the same numbers reach both libraries' optimizers."""
    (w, b), (tw, tb) = (params["w"], params["b"]), (TARGET["w"], TARGET["b"])
    return {"w": 2.0 * (w - tw), "b": [4.0 * (b[0] - tb[0]) ** 3,
                                       2.0 * (b[1] - tb[1]) * (1.0 + 0.1 * i)]}


@pytest.mark.parametrize("name,kwargs", [("adam", dict(num_iters=300, step_size=0.05)),
                                         ("sgd", dict(num_iters=300, step_size=0.1)),
                                         ("rmsprop", dict(num_iters=600, step_size=0.01))])
def test_the_optimizers_give_autograds_numbers_bit_for_bit(name, kwargs):
    ours, theirs = {"adam": adam, "sgd": sgd, "rmsprop": rmsprop}[name], getattr(ag_opt, name)
    seen_ours, seen_theirs = [], []
    got = ours(plain_grad, start(), lambda p, i, g: seen_ours.append((i, g["b"][1])), **kwargs)
    want = theirs(plain_grad, start(), lambda p, i, g: seen_theirs.append((i, g["b"][1])),
                  **kwargs)
    assert np.array_equal(got["w"], want["w"]) and np.array_equal(got["b"][0], want["b"][0])
    assert float(got["b"][1]) == float(want["b"][1])
    assert seen_ours == seen_theirs and len(seen_ours) == kwargs["num_iters"]
    assert np.allclose(got["w"], TARGET["w"], atol=0.05)          # it did optimise


def test_adam_on_bn_grad_traces_once_and_converges():
    g = bn.grad(loss)
    out = adam(g, start(), num_iters=2000, step_size=0.02)
    assert len(g.tapes) == 1                 # the iteration counter i is data, not a retrace
    assert np.allclose(out["w"], TARGET["w"], atol=1e-3)
    assert np.allclose(out["b"][0], TARGET["b"][0], atol=0.1)   # quartic: slow at the end
    assert abs(float(out["b"][1]) - TARGET["b"][1]) < 1e-3
    assert isinstance(out, dict) and isinstance(out["b"], list) and out["w"].shape == (2, 2)


def test_the_callback_gets_the_pytree_and_no_callback_is_fine():
    shapes = []
    sgd(plain_grad, start(), lambda p, i, g: shapes.append((p["w"].shape, g["b"][0].shape)),
        num_iters=3)
    assert shapes == [((2, 2), (2,))] * 3
    assert rmsprop(plain_grad, start(), num_iters=2)["w"].shape == (2, 2)


def test_misc_flatten_is_bn_flatten():
    assert flatten is bn.flatten and flatten_func is bn.flatten_func
    vec, unflatten = flatten(start())
    assert vec.shape == (7,)              # dict keys in sorted order: b's leaves, then w
    assert unflatten(np.arange(7.0))["w"].tolist() == [[3.0, 4.0], [5.0, 6.0]]


def test_autograds_import_paths():
    from burnumba.misc.flatten import flatten as f2, flatten_func as ff2
    import burnumba.misc
    assert f2 is bn.flatten and ff2 is bn.flatten_func and burnumba.misc.flatten is bn.flatten


def _sqrt(fixed_point, np_, a, tol):
    """autograd's examples/fixed_points.py: x <- x - 0.05 (x^2 - a) has the fixed point
    sqrt(a)."""
    return fixed_point(lambda a: lambda x: x - 0.05 * (x ** 2 - a), a, 10.0,
                       lambda x, y: np_.abs(x - y), tol)


@pytest.mark.parametrize("a", [2.0, 5.0])
def test_fixed_point_is_autograds_with_the_implicit_derivative(a):
    import autograd.numpy as anp
    from autograd.misc.fixed_points import fixed_point as theirs

    from burnumba.misc.fixed_points import fixed_point as ours
    value = float(_sqrt(ours, bnp, a, 1e-4))
    assert value == float(_sqrt(theirs, anp, a, 1e-4))     # the same iterations, same point
    # the derivative by the implicit function theorem at the point reached, 1 / (2 x*)
    # (autograd's adjoint iteration stops at its tolerance: it agrees to about 1e-4)
    assert abs(float(bn.grad(lambda a: _sqrt(ours, bnp, a, 1e-4))(a)) - 0.5 / value) < 1e-12
    assert abs(float(autograd.grad(lambda a: _sqrt(theirs, anp, a, 1e-4))(a))
               - 0.5 / value) < 1e-3
    # converged: the second derivative of sqrt(a), -a^(-3/2) / 4
    second = bn.grad(bn.grad(lambda a: _sqrt(ours, bnp, a, 1e-13)))(a)
    assert abs(float(second) + 0.25 * a ** -1.5) < 1e-9


def test_the_docstring_examples_run():
    import doctest

    from burnumba.misc import fixed_points
    assert doctest.testmod(fixed_points).attempted and not doctest.testmod(fixed_points).failed


def test_test_util_path():
    from burnumba.test_util import check_grads
    assert check_grads is bn.check_grads
    check_grads(lambda x: bnp.sum(bnp.tanh(x) ** 2), modes=["rev"])(np.array([0.3, -0.7]))
