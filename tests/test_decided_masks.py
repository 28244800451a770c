"""Boolean masks computed from traced values, used where numpy needs their values: x[x > 0],
numpy_array[mask], np.nonzero / np.where(cond) / flatnonzero / argwhere, x[mask] = v with one
value per selected element. The mask is decided while tracing and guarded (its elements
packed 50 to an exact guard, 20 on a float32 tape), so every call gets numpy's selection at
its own arguments, and the gradient of the elements taken, as autograd gives it."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn

POINTS = [np.array([0.5, -1.0, 2.0, 0.25]), np.array([0.6, -1.5, 2.0, 0.3]),
          np.array([-0.5, 1.0, -2.0, 0.25]), np.array([0.5, -1.0, 2.0, 0.25])]


def both(fn):
    return (lambda *a: fn(np, *a)), (lambda *a: fn(anp, *a))


PROGRAMS = {
    "x[x > 0]": lambda np_, x: np_.sum(x[x > 0] ** 2) + np_.sum(x[(x < 1) & (x > -1)]),
    "rows by a column": lambda np_, x: np_.sum(np_.outer(x, x)[x > 0] ** 2),
    "np.nonzero": lambda np_, x: np_.sum(x[np_.nonzero(x > 0)] ** 3),
    "np.where(cond)": lambda np_, x: np_.sum(x[np_.where(x > 0.3)] * 2.0),
    "flatnonzero": lambda np_, x: np_.sum(x[np_.flatnonzero(x < 1)] ** 2),
    "nonzero of values": lambda np_, x: np_.sum(x[np_.nonzero(x * (x > 0))] ** 2),
    "x[argmax]": lambda np_, x: x[np_.argmax(x)] * 2.0 + x[int(np_.argmin(x))] ** 2,
    "x[argsort]": lambda np_, x: np_.sum(x[np_.argsort(x)] * np_.arange(4.0)),
    "top two": lambda np_, x: np_.sum(x[np_.argsort(x)[::-1][:2]] ** 2),
    "argmax per row": lambda np_, x: np_.sum(np_.max(np_.outer(x, x), axis=1)
                                             * np_.argmax(np_.outer(x, x), axis=1)),
    "methods": lambda np_, x: x[x.argmax()] + x[x.argsort()[0]] * x[x.argmin()],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_mask_programs_match_autograd_at_points_with_other_masks(name):
    ours, theirs = both(PROGRAMS[name])
    vg = bn.value_and_grad(ours)
    for x in POINTS:
        value, g = vg(x)
        assert value == pytest.approx(theirs(x), rel=1e-14)
        np.testing.assert_allclose(g, autograd.grad(theirs)(x), rtol=1e-14)


def test_a_numpy_array_indexed_by_a_traced_mask():
    table = np.arange(4.0) + 1.0
    vg = bn.value_and_grad(lambda x: np.sum(table[x > 0]) * x[0] + np.sum(x[x > 0]))
    for x in POINTS:
        value, g = vg(x)
        m = x > 0
        assert value == np.sum(table[m]) * x[0] + np.sum(x[m])
        want = m.astype(float)
        want[0] += np.sum(table[m])
        np.testing.assert_array_equal(g, want)


def test_writing_one_value_per_selected_element():
    def f(x):
        y = x * 1.0
        y[x > 0.3] = np.array([10.0, 20.0]) * x[3]
        z = np.zeros((4, 2), like=x)
        z[x > 0, 1] = x[x > 0] * 3.0
        return np.sum(y ** 2) + np.sum(z ** 2)

    def plain(x):
        y = x.copy()
        y[x > 0.3] = np.array([10.0, 20.0]) * x[3]
        z = np.zeros((4, 2))
        z[x > 0, 1] = x[x > 0] * 3.0
        return np.sum(y ** 2) + np.sum(z ** 2)
    vg = bn.value_and_grad(f)
    for x in (POINTS[0], POINTS[3], np.array([0.9, -1.0, 0.1, 0.35])):
        value, g = vg(x)
        assert value == pytest.approx(plain(x), rel=1e-14)
        fd = [(plain(x + h) - plain(x - h)) / 2e-6 for h in np.eye(4) * 1e-6]
        np.testing.assert_allclose(g, fd, rtol=1e-6)
    # another number of selected elements than v has: numpy's error
    with pytest.raises((ValueError, bn.ShapeError)):
        vg(np.array([0.9, 1.0, 0.4, 0.35]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_change_anywhere_in_a_long_mask_traces_again(dtype):
    # 130 elements: three packed guards on float64, seven on float32; flip one near the end
    x = np.linspace(-1.0, 1.0, 130).astype(dtype)
    g = bn.grad(lambda x: np.sum(x[x > 0] ** 2))
    for k in (0, 77, 128):
        y = x.copy()
        y[k] = -y[k] if y[k] > 0 else 0.5
        np.testing.assert_allclose(g(y), np.where(y > 0, 2 * y, 0), rtol=1e-6)
    np.testing.assert_allclose(g(x), np.where(x > 0, 2 * x, 0), rtol=1e-6)


def test_masks_under_vmap_jvp_and_hessian():
    ours, theirs = both(PROGRAMS["x[x > 0]"])
    X = np.stack(POINTS)
    np.testing.assert_allclose(bn.vmap(bn.grad(ours))(X),
                               [autograd.grad(theirs)(x) for x in X], rtol=1e-14)
    for x in POINTS:
        H = bn.hessian(ours)(x)
        np.testing.assert_allclose(H, autograd.hessian(theirs)(x), rtol=1e-14, atol=1e-15)
        v = np.array([0.3, 0.1, -0.2, 1.0])
        np.testing.assert_allclose(bn.jvp(ours, (x,), (v,))[1],
                                   autograd.grad(theirs)(x) @ v, rtol=1e-14)


def test_a_mask_that_changes_on_every_call_warns_past_the_variant_limit():
    g = bn.grad(lambda x: np.sum(x[x > 0]))
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(12):
            x = rng.normal(size=8)
            np.testing.assert_array_equal(g(x), (x > 0).astype(float))
    text = " ".join(str(w.message) for w in seen if issubclass(w.category, bn.VariantWarning))
    assert "x[x > 0]" in text


def test_argmax_takes_numpys_first_nan_and_first_maximum():
    g = bn.value_and_grad(lambda x: x[np.argmax(x)] + 0.0 * np.sum(x))
    for x in (np.array([1.0, 3.0, 3.0, 2.0]), np.array([1.0, np.nan, 3.0, np.nan]),
              np.array([5.0, 3.0, 3.0, 5.0])):
        value, grad = g(x)
        k = int(np.argmax(x))
        assert value == x[k] or (np.isnan(value) and np.isnan(x[k]))
        assert grad[k] == 1.0 and np.sum(grad) == 1.0
    # argsort with ties keeps a sort of the values; a new order traces again
    h = bn.grad(lambda x: np.sum(x[np.argsort(x)] * np.arange(4.0)))
    for x in (np.array([2.0, 2.0, 1.0, 3.0]), np.array([0.0, 2.0, 1.0, 3.0])):
        np.testing.assert_array_equal(h(x)[np.argsort(x)], np.arange(4.0))


def test_a_mask_that_selects_nothing_gives_numpys_empty_sum_and_mean():
    # numpy: the sum of no elements is 0, their mean NaN (with its RuntimeWarning)
    g = bn.value_and_grad(lambda x: np.sum(x[x > 0] ** 2) + x[0])
    assert g(np.array([-1.0, -2.0]))[0] == -1.0
    np.testing.assert_array_equal(g(np.array([-1.0, -2.0]))[1], [1.0, 0.0])
    np.testing.assert_array_equal(g(np.array([3.0, -2.0]))[1], [7.0, 0.0])
    with pytest.warns(RuntimeWarning):
        value, grad = bn.value_and_grad(lambda x: np.mean(x[x > 0]) + x[0])(-np.ones(2))
    assert np.isnan(value) and grad.tolist() == [1.0, 0.0]
    assert bn.grad(lambda x: np.sum(np.sum(x[x > 5].reshape(0, 2), axis=0) + x[:2]))(
        np.ones(4)).tolist() == [1.0, 1.0, 0.0, 0.0]


def _plain(v):
    while hasattr(v, "_value"):
        v = v._value
    return v


UNIQUE_POINTS = [np.array([3.0, 1.0, 3.0, 2.0, 1.0]), np.array([5.0, 1.0, 5.0, 2.0, 1.0]),
                 np.array([1.0, 1.0, 1.0, 2.0, 1.0]), np.array([0.5, -1.0, 2.0, 0.25, 7.0]),
                 np.array([3.0, 1.0, 3.0, 2.0, 1.0])]


def test_unique_is_decided_and_takes_each_groups_first_element():
    """Values against numpy, gradients against autograd on x[first occurrences] (autograd has
    no derivative of unique): a different grouping of equal values traces again."""
    def ours(x):
        u, counts = np.unique(x, return_counts=True)
        return np.sum(u ** 2 * np.arange(1.0, 1.0 + u.size)) + np.sum(counts * u)

    def theirs(x):
        u, first, counts = np.unique(_plain(x), return_index=True, return_counts=True)
        return anp.sum(x[first] ** 2 * np.arange(1.0, 1.0 + u.size)) + anp.sum(counts * x[first])
    vg = bn.value_and_grad(ours)
    for x in UNIQUE_POINTS:
        value, g = vg(x)
        assert value == theirs(x)
        np.testing.assert_allclose(g, autograd.grad(theirs)(x), rtol=1e-14)
    G = bn.vmap(bn.grad(ours))(np.array(UNIQUE_POINTS))
    for x, g in zip(UNIQUE_POINTS, G):
        np.testing.assert_allclose(g, autograd.grad(theirs)(x), rtol=1e-14)


@pytest.mark.parametrize("x", [np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 1.0]),
                               np.array([[2.0, 1.0], [2.0, np.inf]]), np.array([4.0])])
@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_results_are_numpys(x, equal_nan):
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=equal_nan)
    seen = []

    def f(x):
        out = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                        equal_nan=equal_nan)
        seen.append(out[1:])
        return out[0]
    got = bn.trace(f, x)(x)
    np.testing.assert_array_equal(got, want[0])
    assert np.array_equal(np.signbit(got), np.signbit(want[0]))
    for a, b in zip(seen[0], want[1:]):
        np.testing.assert_array_equal(a, b)
        assert a.shape == b.shape
    with pytest.raises(bn.UnsupportedOpError, match="axis"):
        bn.grad(lambda x: np.sum(np.unique(x, axis=0)))(x)


SORTED = np.array([0.0, 1.0, 1.0, 2.5, 4.0, np.nan])


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("v", [np.array([-1.0, 0.0, 1.0, 1.2, 4.0, 5.0]),
                               np.array([np.nan, 2.0, 1.0, -np.inf, np.inf, 0.5]),
                               np.array([[1.0, 3.0], [-0.0, 2.5]])])
def test_searchsorted_points_are_numpys_and_guarded(side, v):
    seen = []

    def f(a, v):
        seen.append(np.searchsorted(a, v, side))
        return np.sum(v) + np.sum(a)
    tape = bn.trace(f, SORTED, v, argnums=(0, 1))
    np.testing.assert_array_equal(seen[0], np.searchsorted(SORTED, v, side))
    assert tape.guards is not None


def test_binning_by_searchsorted_replays_while_the_points_hold():
    a = SORTED[:-1]
    calls = []

    def piecewise(np_, x, i):
        t = (x - a[i]) / (a[i + 1] - a[i] + 1e-9)
        return np_.sum(t ** 2 * (i + 1.0))

    def ours(x):
        calls.append(1)
        return piecewise(np, x, np.clip(np.searchsorted(a, x) - 1, 0, len(a) - 2))

    def theirs(x):                       # autograd: the points from the plain values
        return piecewise(anp, x, np.clip(np.searchsorted(a, x._value) - 1, 0, len(a) - 2))
    g = bn.grad(ours)
    expected_calls = [1, 1, 2, 2, 3]
    for x, n in zip([[0.5, 3.0], [0.6, 3.1], [1.5, 0.2], [0.55, 3.05], [-2.0, 9.0]],
                    expected_calls):
        x = np.array(x)
        np.testing.assert_allclose(g(x), autograd.grad(theirs)(x), rtol=1e-12)
        assert len(calls) == n


@pytest.mark.parametrize("right", [False, True])
def test_digitize_increasing_decreasing_and_traced_bins(right):
    a = SORTED[:-1]
    x = np.array([-1.0, 0.0, 1.0, 3.0, 9.0])
    for bins in (a, a[::-1]):
        got = bn.trace(lambda x: np.digitize(x, bins, right) * 1.0, x)(x)
        np.testing.assert_array_equal(got, np.digitize(x, bins, right))
        got = bn.trace(lambda b: np.digitize(x, b, right) * 1.0, bins)(bins)
        np.testing.assert_array_equal(got, np.digitize(x, bins, right))


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nanargmax_nanargmin_skip_nans_and_refuse_an_all_nan_slice(name, axis):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 0.5, 0.2], [2.0, 2.0, np.nan]])
    f = getattr(np, name)
    got = bn.trace(lambda x: f(x, axis=axis) * 1.0, x)(x)
    np.testing.assert_array_equal(got, f(x, axis=axis))
    g = bn.grad(lambda x: np.sum(np.take(x, f(x))))(x)       # the element found, gradient 1
    want = np.zeros(x.size)
    want[f(x)] = 1.0
    np.testing.assert_array_equal(g, want.reshape(x.shape))
    with pytest.raises(bn.DataError, match="All-NaN"):
        bn.grad(lambda x: np.sum(f(x, axis=0) * x[0]))(np.array([[np.nan, 1.0], [np.nan, 2.0]]))


def test_bincount_of_traced_weights_and_of_traced_integer_data():
    w, x = np.array([0.5, 1.5, 2.0, 3.0]), np.array([0, 2, 2, 4])
    got = bn.trace(lambda w: np.bincount(x, weights=w, minlength=7), w)(w)
    np.testing.assert_array_equal(got, np.bincount(x, w, 7))
    g = bn.grad(lambda w, i: np.sum(np.bincount(i, weights=w) ** 2))
    for i in (x, np.array([1, 1, 0, 0]), x):           # another length traces again
        counts = np.bincount(i, w)
        np.testing.assert_array_equal(g(w, i), 2 * counts[i])
    with pytest.raises(bn.ShapeError, match="non-negative"):
        bn.grad(lambda w: np.sum(np.bincount(np.array([0, -1]), weights=w)))(w[:2])
    with pytest.raises(bn.ShapeError, match="non-negative"):
        g(w, np.array([1, -1, 0, 0]))
