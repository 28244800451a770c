"""np.vectorize of traced values (transforms/numpy_calls.py's ``vectorize``, #30): the
Python function called per element on traced scalars, as numpy calls it, the results
stacked; made inside the traced function or at a module's top (``@np.vectorize``)."""
import math

import numpy as np
import pytest

import burnumba as bn


@np.vectorize
def soft(v):
    return v * v if v > 0 else -0.5 * v


def loss(x):
    return np.sum(soft(x) * 2.0)


X = np.array([0.3, -1.2, 2.0, 0.7])


def numeric(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_a_module_level_vectorized_function_with_a_branch():
    g = bn.grad(loss)
    np.testing.assert_allclose(g(X), np.where(X > 0, 4 * X, -1.0), rtol=1e-14)
    np.testing.assert_allclose(g(X), numeric(loss, X), rtol=1e-6)
    # other branches on another call: the guards trace anew
    np.testing.assert_allclose(g(-X), np.where(-X > 0, -4 * X, -1.0), rtol=1e-14)
    assert type(soft) is np.vectorize                  # numpy's object again after the trace
    np.testing.assert_array_equal(soft(np.array([1.0, -2.0])), [1.0, 1.0])


def test_made_inside_with_broadcasting_and_math():
    def f(x):
        v = np.vectorize(lambda a, b: math.exp(a) * b)
        return np.sum(v(x.reshape(2, 2), np.array([1.0, 3.0])))
    want = np.exp(X) * np.array([1.0, 3.0, 1.0, 3.0])
    np.testing.assert_allclose(bn.grad(f)(X), want, rtol=1e-14)
    assert bn.value_and_grad(f)(X)[0] == pytest.approx(np.sum(want))


def test_a_tuple_of_results():
    two = np.vectorize(lambda v: (v * 2, v ** 3))

    def f(x):
        a, b = two(x.reshape(2, 2))
        assert a.shape == b.shape == (2, 2)
        return np.sum(a) + np.sum(b)
    np.testing.assert_allclose(bn.grad(f)(X), 2 + 3 * X ** 2, rtol=1e-14)


def test_under_vmap_and_jacobian():
    jac = bn.jacobian(lambda x: soft(x) * 1.0)(X)
    np.testing.assert_allclose(jac, np.diag(np.where(X > 0, 2 * X, -0.5)), rtol=1e-14)
    got = bn.vmap(bn.grad(lambda x: np.sum(soft(x))))(np.stack([X, -X]))
    np.testing.assert_allclose(got, [np.where(X > 0, 2 * X, -0.5),
                                     np.where(-X > 0, -2 * X, -0.5)], rtol=1e-14)


def test_what_stays_numpys_names_the_fix():
    with_signature = np.vectorize(lambda r: r * 2, signature="(n)->(n)")
    with pytest.raises(bn.ConcretizationError, match="signature=.*Python loop"):
        bn.grad(lambda x: np.sum(with_signature(x)))(X)
    ints = np.vectorize(lambda v: v * 2, otypes=[int])
    with pytest.raises(bn.ConcretizationError, match="non-float otypes"):
        bn.grad(lambda x: np.sum(ints(x)))(X)
