"""Lists of traced values.

burnumba.numpy takes lists (and nested lists) of traced and constant values everywhere:
``bnp.array``, ``bnp.stack``, ``bnp.mean`` ... build one traced array. numpy's functions whose
dispatch looks inside the list (``np.stack``, ``np.concatenate``, ``np.vstack`` ...) work too.
numpy's others (``np.array(list)``, ``np.mean(list)``, ``np.linalg.norm(list)``, ufuncs of a
list) convert the list before any traced value can take over: numpy asks each element for
``__array__``, which raises ConcretizationError naming the numpy function and the burnumba
fix. Never a silently wrong number (a traced value taken for a constant), never an object
array of traced values leaking on.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp

X = np.array([[0.3, -1.2, 0.8], [1.5, 0.4, -0.7]])

# name -> f(xp, x): the same code with burnumba.numpy (or numpy) and autograd.numpy
WORKS = {
    "bnp.array of scalars": lambda xp, x: xp.sum(xp.array([x[0, 0], x[1, 2], 2.0]) ** 2),
    "bnp.array nested": lambda xp, x: xp.sum(xp.sin(xp.array([[x[0, 0], 1.0], [x[1, 1],
                                                                              x[0, 2]]]))),
    "bnp.array of rows": lambda xp, x: xp.sum(xp.array([x[0], x[1] * 2, np.ones(3)]) ** 2),
    "bnp.asarray": lambda xp, x: xp.sum(xp.asarray([x[0, 1], x[1, 0]]) ** 3),
    "stack": lambda xp, x: xp.sum(xp.stack([x[0], np.ones(3), x[1]], axis=1) ** 2),
    "concatenate mixed": lambda xp, x: xp.sum(xp.concatenate([x[0], np.arange(2.0),
                                                              x[1, :2]]) ** 2),
    "vstack mixed": lambda xp, x: xp.sum(xp.vstack([x, np.ones(3)]) ** 3),
    "mean of scalars": lambda xp, x: xp.mean([x[0, 0], x[1, 1] ** 2, 0.5]),
    "sum of arrays": lambda xp, x: xp.sum([x[0], x[1] ** 2]),
    "max of scalars": lambda xp, x: xp.max(xp.array([x[0, 0], x[1, 1], x[0, 2]])),
    "sum with axis": lambda xp, x: xp.sum(xp.sum([x[0] ** 2, x[1]], axis=0) ** 2),
    "mean with axis": lambda xp, x: xp.sum(xp.mean([x[0] ** 2, x[1], x[0]], axis=1) ** 2),
    "norm of a stacked list": lambda xp, x: xp.sqrt(xp.sum(xp.array([x[0, 0], x[1, 1]]) ** 2)),
}


@pytest.mark.parametrize("name", list(WORKS))
def test_lists_through_burnumba_numpy_and_dispatching_numpy(name):
    f = WORKS[name]
    value, g = bn.value_and_grad(lambda x: f(bnp, x))(X)
    ref_value, ref_g = autograd.value_and_grad(lambda x: f(anp, x))(X)
    np.testing.assert_allclose(value, ref_value, rtol=1e-13)
    np.testing.assert_allclose(g, ref_g, rtol=1e-13, atol=1e-15)
    if name.startswith(("stack", "concatenate", "vstack")):      # plain numpy dispatches
        value, g = bn.value_and_grad(lambda x: f(np, x))(X)
        np.testing.assert_allclose(g, ref_g, rtol=1e-13, atol=1e-15)


# numpy's np.array / np.asarray / a ufunc of a list in the user's code ask each traced
# element for an array: it answers with an object array of traced scalars, which the next
# traced op stacks (tests/test_numpy_build.py has the full table)
NOW_WORK = [
    (lambda xp, x: xp.array([x[0, 0], x[1, 1]])),
    (lambda xp, x: (xp.asarray if xp is np else anp.array)([x[0], x[1]])),
    (lambda xp, x: xp.array([[x[0, 0], 1.0], [2.0, x[1, 1]]])),
    (lambda xp, x: xp.exp([x[0, 0], x[1, 1]]) if xp is np else anp.exp(anp.array(
        [x[0, 0], x[1, 1]]))),
]


@pytest.mark.parametrize("k", range(len(NOW_WORK)))
def test_numpy_building_an_array_from_a_list_of_traced_values(k):
    f = NOW_WORK[k]
    # + 0 * x: the object array of traced values and numbers becomes one traced array (a
    # ufunc on it alone would ask the number 1.0 for a .sin method: test_numpy_build.py)
    value, g = bn.value_and_grad(lambda x: np.sum(np.sin(f(np, x) + 0.0 * x[0, 0])))(X)
    ref_value, ref_g = autograd.value_and_grad(lambda x: anp.sum(anp.sin(f(anp, x))))(X)
    np.testing.assert_allclose(value, ref_value, rtol=1e-13)
    np.testing.assert_allclose(g, ref_g, rtol=1e-13, atol=1e-15)


# (np.sum, mean, max, linalg.norm, np.trace, np.dot ... of such a list work:
# transforms/numpy_calls.py stands in for them while tracing, test_numpy_build.py's
# LIST_CASES; these are numpy's others: a function no stand-in covers, numpy's operators)
@pytest.mark.parametrize("call, words", [
    (lambda x: np.shape([x[0, 0], x[1, 1]]), ["numpy.shape", "bnp.shape"]),
    (lambda x: np.zeros(3) + [x[0, 0], 1.0, 2.0], ["bnp.array(list)"]),
])
def test_numpy_converting_a_list_of_traced_values_is_a_clear_error(call, words):
    with pytest.raises(bn.ConcretizationError) as e:
        bn.grad(lambda x: bnp.sum(call(x)))(X)
    message = str(e.value)
    for w in words:
        assert w in message, (w, message)
    assert "test_numpy_lists.py" in message                    # the user's line


def test_an_object_array_of_traced_values_is_stacked_never_a_constant():
    """np.array(list, dtype=object) and an object array filled item by item hold the traced
    values themselves: numpy's object loops call their operators, and burnumba stacks such
    an array when it meets one."""
    g = bn.grad(lambda x: bnp.sum(np.array([x[0, 0], 1.0], dtype=object) ** 2))(X)
    assert g[0, 0] == 2 * X[0, 0] and np.sum(g != 0.0) == 1

    def f(x):
        objs = np.empty(3, dtype=object)
        objs[0], objs[1], objs[2] = x[0, 0], x[1, 1], 3.0
        return (bnp.sum(bnp.asarray(objs) ** 2) + bnp.sum(objs * objs)
                + bnp.sum(x * 0.0 + objs[:, None][:2]))

    g = bn.grad(f)(X)
    expected = np.zeros_like(X)
    expected[0, 0], expected[1, 1] = 4 * X[0, 0] + 3, 4 * X[1, 1] + 3
    np.testing.assert_allclose(g, expected, rtol=1e-15)
    with pytest.raises(bn.UnsupportedOpError, match="dtype object"):
        bn.grad(lambda x: bnp.sum(x * np.array(["a"], dtype=object)))(X)


def test_builtin_sum_and_max_of_traced_values():
    """Python's own sum works (it adds); max branches, a guard: the gradient of the branch
    taken (the larger element's)."""
    g = bn.grad(lambda x: sum([x[0, 0], x[1, 1] ** 2]))(X)
    assert g[0, 0] == 1.0 and g[1, 1] == pytest.approx(2 * X[1, 1])
    m = bn.grad(lambda x: max([x[0, 0], x[1, 1]]))
    for a, b in ((1.0, 2.0), (3.0, -1.0)):
        x = np.zeros_like(X)
        x[0, 0], x[1, 1] = a, b
        want = np.zeros_like(X)
        want[(0, 0) if a > b else (1, 1)] = 1.0
        np.testing.assert_array_equal(m(x), want)


@pytest.mark.parametrize("f", [bnp.flip, bnp.ravel, bnp.transpose, bnp.atleast_2d,
                               lambda a: bnp.reshape(a, (2, 2)), bnp.diff, bnp.squeeze,
                               lambda a: bnp.repeat(a, 2), lambda a: bnp.tile(a, 2),
                               lambda a: bnp.roll(a, 1), lambda a: bnp.take(a, [3, 0]),
                               lambda a: bnp.clip(a, 0.0, 1.0), bnp.exp, bnp.max, bnp.var])
def test_burnumba_numpy_functions_take_lists_of_traced_values(f):
    def loss(x):
        return bnp.sum(bnp.sin(f([x[0, 0], x[0, 1], x[1, 0], 2.0])))

    value, _ = bn.value_and_grad(loss)(X)
    v = np.array([X[0, 0], X[0, 1], X[1, 0], 2.0])
    assert value == pytest.approx(float(np.sum(np.sin(f(v)))), rel=1e-14)


def test_an_object_array_of_traced_values_returned_is_stacked():
    def filled(x):
        o = np.empty(2, dtype=object)
        o[0], o[1] = x[0, 0] * 2.0, x[1, 1]
        return o

    y, pull = bn.vjp(filled, X)
    np.testing.assert_array_equal(y, [2 * X[0, 0], X[1, 1]])
    (g,) = pull(np.array([1.0, 3.0]))
    assert g[0, 0] == 2.0 and g[1, 1] == 3.0 and g.sum() == 5.0
    (_, aux), _ = bn.value_and_grad(lambda x: (bnp.sum(x), filled(x)), has_aux=True)(X)
    assert isinstance(aux, np.ndarray) and aux.dtype == np.float64
    np.testing.assert_array_equal(aux, [2 * X[0, 0], X[1, 1]])


def test_a_list_of_plain_numbers_beside_a_traced_value_is_a_constant():
    """np.where(traced, [1.0, 2.0], y): the list is numpy's array, lifted as a constant (it
    came back as a bare ndarray, and where failed with an AttributeError)."""
    g = bn.grad(lambda y: np.sum(np.where(y > 0.5, [1.0, 2.0], y)))(np.array([0.2, 0.9]))
    np.testing.assert_array_equal(g, [1.0, 0.0])
