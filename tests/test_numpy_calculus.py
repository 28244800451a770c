"""numpy.interp, polyval, trapezoid, gradient, piecewise and apply_along_axis on traced values
(burnumba/numpy/calculus.py), as a program written for numpy calls them: values against numpy
itself (bit for bit where burnumba follows numpy's formula), gradients of sum(f * w) against
central differences of numpy's own function and, where autograd has the function, autograd's.
"""
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp

from test_numpy_more import _check, _np

KNOTS = np.array([-1.0, 0.0, 0.5, 2.0, 3.5])
VALUES = np.array([1.0, -2.0, 0.25, 3.0, 1.5])


def _same_values(f, *args):
    got = bn.trace(f, *args, argnums=tuple(range(len(args))))(*args)
    np.testing.assert_array_equal(got, _np(f, *args))


# -- interp ----------------------------------------------------------------------------------
def test_interp_values_match_numpy_bit_for_bit_inside_outside_and_at_the_knots():
    x = np.concatenate([KNOTS, [-3.0, -1.0 + 1e-12, 0.3, 1.7, 3.5 - 1e-9, 9.0, np.nan]])
    for f in (lambda x, fp: np.interp(x, KNOTS, fp),
              lambda x, fp: np.interp(x, KNOTS, fp, left=-7.0, right=fp[0] * 2.0),
              lambda x, fp: np.interp(x[3], KNOTS, fp)):
        _same_values(f, x, VALUES)


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_interp_gradients_in_x_fp_left_and_right(where):
    x = np.array([-0.7, 0.2, 1.1, 3.0]) if where == "inside" else np.array([-2.0, 4.0])
    _check(lambda x, fp, lo, hi: np.interp(x, KNOTS, fp, left=lo, right=hi),
           x, VALUES, -5.0, 6.0)


def test_interp_at_a_knot_takes_the_slope_to_its_right_as_numpy_picks_that_segment():
    g = bn.grad(lambda x: np.interp(x, KNOTS, VALUES))
    slopes = np.diff(VALUES) / np.diff(KNOTS)
    for k in range(len(KNOTS) - 1):
        assert g(KNOTS[k]) == slopes[k]
    assert g(KNOTS[-1]) == slopes[-1]          # the last segment's, at the last knot
    assert g(KNOTS[0] - 1.0) == 0.0 and g(KNOTS[-1] + 1.0) == 0.0


def test_interp_with_data_x_and_traced_values_and_float32():
    # a resampling: fixed query points, the table's values differentiated
    q = np.linspace(-2.0, 4.0, 13)
    _check(lambda fp: np.interp(q, KNOTS, fp), VALUES)
    g = bn.grad(lambda x: np.sum(np.interp(x, KNOTS, VALUES)))(np.float32([0.2, 1.0]))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [(0.25 + 2.0) / 0.5, (3.0 - 0.25) / 1.5], rtol=1e-6)


def test_interp_refuses_traced_knots_and_period_with_the_fix():
    with pytest.raises(bn.UnsupportedOpError, match="knots xp are traced"):
        bn.grad(lambda xp: np.interp(0.5, xp, VALUES))(KNOTS)
    with pytest.raises(bn.UnsupportedOpError, match="period"):
        bn.grad(lambda x: np.interp(x, KNOTS, VALUES, period=4.0))(0.5)
    with pytest.raises(bn.ShapeError, match="same length"):
        bn.grad(lambda fp: np.sum(np.interp(0.5, KNOTS, fp)))(VALUES[:3])


# -- polyval ---------------------------------------------------------------------------------
def test_polyval_in_the_coefficients_and_the_point():
    p, x = np.array([0.5, -2.0, 1.0, 3.0]), np.array([-1.5, 0.0, 0.7, 2.0])
    _check(np.polyval, p, x)                     # (autograd's polyval has no derivative)
    _check(lambda p, x: np.polyval(p, x), p, 1.25)
    # a list of traced scalars as the coefficients: numpy's polyval would convert it first;
    # while tracing, burnumba stands in for it (transforms/numpy_calls.py)
    x2 = np.array([0.5, -1.0])
    _check(lambda x: np.polyval([x[0], 2.0, x[1]], 3.0), x2)
    _check(lambda x: bnp.polyval([x[0], 2.0, x[1]], 3.0), x2)


# -- trapezoid -------------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["dx", "x", "axis0-x", "x-2d"])
def test_trapezoid_as_numpy(form, rng):
    y = rng.normal(size=(4, 6))
    x1 = np.cumsum(rng.uniform(0.1, 1.0, size=6))
    f = {"dx": lambda y: np.trapezoid(y, dx=0.25),
         "x": lambda y: np.trapezoid(y, x1),
         "axis0-x": lambda y: np.trapezoid(y, x1[:4], axis=0),
         "x-2d": lambda y: np.trapezoid(y, np.tile(x1, (4, 1)), axis=1)}[form]
    _check(f, y)
    # the coordinates traced too
    if form == "x":
        _check(lambda y, x: np.trapezoid(y, x), y, x1)


# -- gradient --------------------------------------------------------------------------------
@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", ["none", "scalar", "uniform", "coordinates"])
def test_np_gradient_as_numpy(edge_order, spacing, rng):
    f1 = rng.normal(size=7)
    coords = np.cumsum(rng.uniform(0.2, 1.0, size=7))
    args = {"none": (), "scalar": (0.3,), "uniform": (np.arange(7) * 0.5,),
            "coordinates": (coords,)}[spacing]
    _check(lambda f: np.gradient(f, *args, edge_order=edge_order), f1, rtol=1e-13)
    f2 = rng.normal(size=(5, 4))
    two = () if spacing == "none" else (args[0] if spacing == "scalar" else
                                        (args[0][:5], args[0][:4]))
    two = two if isinstance(two, tuple) else (two,)
    _check(lambda f: np.stack(np.gradient(f, *two, edge_order=edge_order)), f2, rtol=1e-13)
    _check(lambda f: np.gradient(f, *(two[1:] if len(two) == 2 else two), axis=1,
                                 edge_order=edge_order), f2, rtol=1e-13)


def test_np_gradient_errors_name_the_argument():
    with pytest.raises(bn.ShapeError, match="too small"):
        bn.grad(lambda f: np.sum(np.gradient(f, edge_order=2)))(np.ones(2))
    with pytest.raises(bn.InputError, match="number of arguments"):
        bn.grad(lambda f: np.sum(np.gradient(f, 1.0, 2.0)))(np.ones(4))


# -- piecewise and apply_along_axis ----------------------------------------------------------
def test_piecewise_with_traced_conditions_values_and_an_otherwise():
    x = np.array([-2.0, -0.5, 0.25, 0.5, 3.0])     # (central differences: off the kinks)
    _check(lambda x: np.piecewise(x, [x < 0, x >= 1], [lambda v: -v, lambda v: v ** 2,
                                                        lambda v: 0.5 * v + 1.0]), x)
    _check(lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: v * v, 2.0]), x)
    _check(lambda x: np.piecewise(x, x > 0, [np.sin]), x)


def test_apply_along_axis_traces_each_slice(rng):
    a = rng.normal(size=(3, 4))
    for axis in (0, 1):
        _check(lambda a: np.apply_along_axis(lambda r: np.sum(r ** 2), axis, a), a)
        _check(lambda a: np.apply_along_axis(lambda r: r[::-1] * r, axis, a), a)
        _check(lambda a: np.apply_along_axis(lambda r: np.outer(r, r[:2]), axis, a), a)


# -- np.where(condition): np.nonzero (tests/test_decided_masks.py) --------------------------
def test_where_with_x_and_not_y_is_numpys_error():
    with pytest.raises(bn.InputError, match="both or neither"):
        bn.grad(lambda x: np.sum(np.where(x > 0, x)))(np.ones(3))


# -- numpy calls a sweep of every numpy function on traced values found failing --------------
def test_size_with_an_axis_inner_of_nd_and_scalars_and_split_at_traced_points(rng):
    X, Y = rng.normal(size=(3, 4)), rng.normal(size=(2, 4))
    _check(lambda X: X * np.size(X, 1) + np.size(X, axis=0), X)
    _check(lambda X, Y: np.inner(X, Y), X, Y)
    _check(lambda X: np.inner(X, 2.5) + np.inner(2.0, X), X)
    # split points that are traced integers: their values decide the shapes (guards)
    f = bn.value_and_grad(lambda x, k: np.sum(np.split(x, k)[0] ** 2))
    x = np.arange(1.0, 7.0)
    for k in (np.array([2, 4]), np.array([1, 3]), np.array([2, 4])):
        value, g = f(x, k)
        assert value == np.sum(x[:k[0]] ** 2)
        np.testing.assert_array_equal(g, np.where(np.arange(6) < k[0], 2 * x, 0.0))
    assert f(x, 3)[0] == 1.0 + 4.0


def test_np_vectorize_and_a_dtype_cast_name_the_fix():
    """np.vectorize traces (test_vectorize.py), but not a numpy vectorize object the trace
    cannot see being read (here: held in a dict); nor does np.float64(x)."""
    held = {"f": np.vectorize(lambda v: v * v)}
    with pytest.raises(bn.ConcretizationError, match="np.vectorize"):
        bn.grad(lambda x: np.sum(held["f"](x)))(np.ones(3))
    with pytest.raises(bn.ConcretizationError, match=r"np.float64\(x\)"):
        bn.grad(lambda x: np.float64(x[0]) * x[1])(np.ones(3))
