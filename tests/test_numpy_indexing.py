"""Advanced indexing with traced integer indices: numpy's full rules, read at run time.

Integer arrays passed as arguments outside argnums are tape data: ``logp[np.arange(n), t]``,
``x[:, idx]``, ``x[i, j]``, ``x[..., idx]``, ``np.take(x, idx, axis=k)`` and
``np.take_along_axis`` read them when the tape runs, so new indices never retrace. Each key is
checked against HIPS autograd (values and gradients, which follow numpy's rules for where
the broadcast index axes go) and against central differences, in float64 and float32, with
negative indices, broadcasting index arrays, slices and None mixed in. Indices out of range
raise DataError at run time; indices that gradients flow through are refused.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from conftest import central_diff

import burnumba as bn
import burnumba.numpy as bnp

SHAPE = (4, 5, 6)

# key(np, i, j): a key built from the index arrays i and j (and constants); i and j's shapes
# and ranges (with negative values) are drawn per case. The id names the numpy layout rule.
KEYS = {
    "x[i]": (lambda i, j: i, (3,), None),
    "x[i] 2-d index": (lambda i, j: i, (2, 3), None),
    "x[:, i]": (lambda i, j: (slice(None), i), (3,), None),
    "x[..., i]": (lambda i, j: (Ellipsis, i), (2, 2), None),
    "x[i, :, j] separated, B first": (lambda i, j: (i, slice(None), j), (3,), (3,)),
    "x[:, i, j] adjacent, in place": (lambda i, j: (slice(None), i, j), (3,), (3,)),
    "x[i, j] broadcast": (lambda i, j: (i, j), (3, 1), (1, 2)),
    "x[arange, i] cross-entropy": (lambda i, j: (np.arange(4), i), (4,), None),
    "x[arange[:, None], i]": (lambda i, j: (np.arange(4)[:, None], i), (4, 2), None),
    "x[0, :, i] int counts as advanced": (lambda i, j: (0, slice(None), i), (3,), None),
    "x[:, -1, i] adjacent with an int": (lambda i, j: (slice(None), -1, i), (3,), None),
    "x[i, None, j] None separates": (lambda i, j: (i, None, j), (3,), (3,)),
    "x[:, i, None]": (lambda i, j: (slice(None), i, None), (2,), None),
    "x[None, i]": (lambda i, j: (None, i), (3,), None),
    "x[1:3, i]": (lambda i, j: (slice(1, 3), i), (3,), None),
    "x[i, ::-2]": (lambda i, j: (i, slice(None, None, -2)), (2,), None),
    "x[i, 1:, j]": (lambda i, j: (i, slice(1, None), j), (2,), (2,)),
    "x[i, ..., j]": (lambda i, j: (i, Ellipsis, j), (3,), (3,)),
    "x[:, i, ..., j] empty ellipsis separates": (lambda i, j: (slice(None), i, Ellipsis, j),
                                                 (2,), (2,)),
    "x[i, [0, 2, -1]] constant list": (lambda i, j: (i, [0, 2, -1]), (3,), None),
    "x[mask, i] constant boolean": (lambda i, j: (np.array([True, False, True, True]), i),
                                    (3,), None),
    "x[i, j, 2] all advanced": (lambda i, j: (i, j, 2), (2, 3), (3,)),
    "x[i, j, i] one array twice": (lambda i, j: (i, j, i), (2,), (2,)),
    "x[:, i, :] scalar-shaped i": (lambda i, j: (slice(None), i[0], slice(None)), (3,), None),
}


def _run(f, *args):
    """f's value through its tape, with the integer arguments as tape data."""
    return bn.trace(f, *args)(*args)


def _index_args(rng, key, dtype_idx=np.int64):
    f, si, sj = KEYS[key]
    # index ranges: each traced array indexes an axis; draw within -size .. size - 1
    i = rng.integers(-3, 3, size=si).astype(dtype_idx)
    j = None if sj is None else rng.integers(-4, 4, size=sj).astype(dtype_idx)
    return f, i, j


def _loss(xnp, key, w):
    """sum(sin(x[key]) * w): a nonlinear function of the picked elements."""
    def loss(x, i, j=None):
        return xnp.sum(xnp.sin(x[key(i, j)]) * w)
    return loss


@pytest.mark.parametrize("key", list(KEYS))
def test_advanced_index_matches_numpy_and_autograd(rng, key):
    f, i, j = _index_args(rng, key)
    x = rng.normal(size=SHAPE)
    expected = x[f(i, j)]
    y = _run(lambda x, i, j: x[f(i, j)], x, i, j)
    assert np.shape(y) == expected.shape, key
    np.testing.assert_array_equal(y, expected)
    w = rng.normal(size=expected.shape)
    args = (x, i) if j is None else (x, i, j)
    value, g = bn.value_and_grad(_loss(np, f, w))(*args)
    ref_value, ref_g = autograd.value_and_grad(_loss(anp, f, w))(*args)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(g, ref_g, rtol=1e-12, atol=1e-14)
    fd = central_diff(_loss(np, f, w), args, 0)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("key", [
    lambda i: (slice(0, 0), i), lambda i: (i, slice(None), slice(3, 3)),
    lambda i: (i[:0], i[:0]), lambda i: (slice(None), i[:0]), lambda i: (i[:0], None, 1),
])
def test_empty_results(rng, key):
    """Empty slices and empty index arrays give numpy's empty shapes (and no index error)."""
    x = rng.normal(size=SHAPE)
    i = np.array([1, -2, 0])
    expected = x[key(i)]
    assert expected.size == 0
    y = _run(lambda x, i: bnp.concatenate([x[key(i)].ravel(), x[0, 0, :1]]), x, i)
    np.testing.assert_array_equal(y, x[0, 0, :1])
    g = bn.grad(lambda x, i: bnp.sum(bnp.concatenate([x[key(i)].ravel(), x[0, 0, :1]])))(x, i)
    assert g[0, 0, 0] == 1.0 and g.sum() == 1.0
    shape = bn.trace(lambda x, i: x[key(i)], x, i).out_shape
    assert tuple(shape) == expected.shape


@pytest.mark.parametrize("key", ["x[arange, i] cross-entropy", "x[i, :, j] separated, B first",
                                 "x[..., i]", "x[i, j] broadcast"])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.uint8, np.int16])
def test_float32_tapes_and_index_dtypes(rng, key, idx_dtype):
    f, i, j = _index_args(rng, key)
    if idx_dtype == np.uint8:                   # unsigned: numpy's values, wrapped by hand
        i = np.where(i < 0, i + SHAPE[0], i).astype(idx_dtype)
        if j is not None:
            j = np.where(j < 0, j + 5, j)
    i = i.astype(idx_dtype)
    x = rng.normal(size=SHAPE).astype(np.float32)
    w = rng.normal(size=x[f(i, j)].shape)
    args = (x, i) if j is None else (x, i, j)
    value, g = bn.value_and_grad(_loss(np, f, w))(*args)
    assert g.dtype == np.float32
    ref_value, ref_g = autograd.value_and_grad(_loss(anp, f, w))(x.astype(np.float64),
                                                                   *args[1:])
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    np.testing.assert_allclose(g, ref_g, rtol=1e-5, atol=1e-6)


def test_cross_entropy_idiom_replays_with_new_targets_without_retracing(rng):
    """The tape is traced once; every later call reads the new targets (no retrace)."""
    n, C = 6, 5
    traces = []

    def nll(logits, t):
        traces.append(1)
        logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        return -np.mean(logp[np.arange(n), t])

    def ref(logits, t):
        logp = logits - anp.log(anp.sum(anp.exp(logits), axis=1, keepdims=True))
        return -anp.mean(logp[np.arange(n), t])

    vg = bn.value_and_grad(nll)
    logits = rng.normal(size=(n, C))
    for seed in range(5):
        t = np.random.default_rng(seed).integers(-C, C, size=n)
        value, g = vg(logits, t)
        rv, rg = autograd.value_and_grad(ref)(logits, t)
        np.testing.assert_allclose(value, rv, rtol=1e-12)
        np.testing.assert_allclose(g, rg, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(value, bn.cross_entropy(logits, np.where(t < 0, t + C, t)),
                                   rtol=1e-12)
    assert len(traces) == 1 and len(vg.tapes) == 1


@pytest.mark.parametrize("key", ["x[i, :, j] separated, B first", "x[:, i]", "x[i, j] broadcast",
                                 "x[0, :, i] int counts as advanced"])
def test_a_cached_tape_reads_new_indices(rng, key):
    f, i, j = _index_args(rng, key)
    x = rng.normal(size=SHAPE)
    w = rng.normal(size=x[f(i, j)].shape)
    g = bn.grad(_loss(np, f, w))
    ref = autograd.grad(_loss(anp, f, w))
    for seed in range(4):
        _, i2, j2 = _index_args(np.random.default_rng(seed), key)
        args = (x, i2) if j2 is None else (x, i2, j2)
        np.testing.assert_allclose(g(*args), ref(*args), rtol=1e-12, atol=1e-15)
    assert len(g.tapes) == 1


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None])
def test_take_with_traced_indices_along_any_axis(rng, axis):
    x = rng.normal(size=SHAPE)
    idx = np.array([[2, -1, 0], [1, 1, -2]])
    expected = np.take(x, idx, axis=axis)
    w = rng.normal(size=expected.shape)
    # autograd has no take: its reference is numpy's equivalent fancy index
    ref = autograd.value_and_grad(lambda x: anp.sum(anp.cos(
        x.ravel()[idx] if axis is None else x[(slice(None),) * (axis % 3) + (idx,)]) * w))(x)
    for take in (np.take, bnp.take):
        value, g = bn.value_and_grad(
            lambda x, i, take=take: np.sum(np.cos(take(x, i, axis=axis)) * w))(x, idx)
        np.testing.assert_allclose(value, ref[0], rtol=1e-12)
        np.testing.assert_allclose(g, ref[1], rtol=1e-12, atol=1e-15)
    # the method, with the same arguments
    y = _run(lambda x, i: x.take(i, axis=axis), x, idx)
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("axis, idx_shape", [(0, (2, 5, 6)), (1, (4, 3, 6)), (2, (4, 5, 2)),
                                             (-1, (4, 5, 1)), (1, (4, 2, 1)), (0, (1, 5, 6)),
                                             (None, (7,))])
def test_take_along_axis_with_traced_indices(rng, axis, idx_shape):
    """numpy's own construction (aranges along the other axes), broadcasting size-1 axes."""
    x = rng.normal(size=SHAPE)
    n = x.size if axis is None else SHAPE[axis]
    idx = rng.integers(-n, n, size=idx_shape)
    expected = np.take_along_axis(x, idx, axis=axis)
    y = _run(lambda x, i: np.take_along_axis(x, i, axis=axis), x, idx)
    np.testing.assert_array_equal(y, expected)
    w = rng.normal(size=expected.shape)
    g = bn.grad(lambda x, i: np.sum(np.exp(np.take_along_axis(x, i, axis=axis)) * w))(x, idx)
    ref = autograd.grad(lambda x: anp.sum(anp.exp(_along(x, idx, axis)) * w))(x)
    np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-15)


def _along(x, idx, axis):
    """take_along_axis with autograd.numpy (which lacks it): numpy's fancy index."""
    if axis is None:
        return x.ravel()[idx]
    axis = axis % x.ndim
    key = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (x.ndim - d - 1))
           for d, n in enumerate(x.shape)]
    key[axis] = idx
    return x[tuple(key)]


def test_scalar_index_argument(rng):
    """A numpy integer scalar passed as data is a 0-d traced index."""
    x = rng.normal(size=SHAPE)
    g = bn.grad(lambda x, k: np.sum(np.sin(x[:, k]) + x[k, 1, k]))
    ref = autograd.grad(lambda x, k: anp.sum(anp.sin(x[:, k]) + x[k, 1, k]))
    for k in (np.int64(2), np.int64(-1), np.int32(0)):
        np.testing.assert_allclose(g(x, k), ref(x, k), rtol=1e-13)
    assert len(g.tapes) == 2                     # int64 and int32: two signatures


def test_higher_order_derivatives_through_advanced_indexing(rng):
    x = rng.normal(size=(3, 4))
    t = np.array([1, -1, 0])

    def f(np):
        return lambda x, t: np.sum(np.tanh(x[np.arange(3), t]) ** 2 + x[:, t] ** 3)

    H = bn.hessian(f(np))(x, t)
    ref = autograd.hessian(f(anp))(x, t)
    np.testing.assert_allclose(H, ref, rtol=1e-11, atol=1e-13)
    v = rng.normal(size=x.shape)
    _, jv = bn.jvp(lambda x: f(np)(x, t), (x,), (v,))
    np.testing.assert_allclose(jv, np.sum(autograd.grad(f(anp))(x, t) * v), rtol=1e-11)


def test_vmap_over_index_data(rng):
    """Per-sample indices: each sample reads its own."""
    x = rng.normal(size=(3, 4))
    T = rng.integers(-4, 4, size=(5, 3))
    per = bn.vmap(bn.grad(lambda x, t: np.sum(x[np.arange(3), t] ** 2)), in_axes=(None, 0))(x, T)
    for s in range(5):
        ref = autograd.grad(lambda x, s=s: anp.sum(x[np.arange(3), T[s]] ** 2))(x)
        np.testing.assert_allclose(per[s], ref, rtol=1e-13)


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("key, bad", [
    ("x[arange, i] cross-entropy", [0, 5, 1, 2]),     # axis 1 has 5 elements
    ("x[arange, i] cross-entropy", [0, -6, 1, 2]),
    ("x[:, i]", [1, 9, 0]),
    ("x[i]", [4, 0, 0]),
    ("x[i, :, j] separated, B first", [0, 0, 0]),     # j bad below
])
def test_out_of_range_indices_raise_at_run_time(rng, key, bad):
    """An index outside -n .. n - 1 raises DataError (an IndexError) naming the value and the
    axis length, at the first call and on a cached tape; never a read out of bounds."""
    f, i, j = _index_args(rng, key)
    x = rng.normal(size=SHAPE)

    def loss(x, i, j=None):
        return np.sum(x[f(i, j)] ** 2)

    g = bn.grad(loss)
    args = (x, i) if j is None else (x, i, j)
    g(*args)                                            # valid: traces and caches
    bad = np.array(bad)
    bad_args = (x, bad) if j is None else (x, bad, np.array([0, 7, 1]))
    with pytest.raises(bn.DataError, match="out of bounds for size") as e:
        g(*bad_args)
    assert isinstance(e.value, IndexError)
    g(*args)                                            # the tape still works afterwards
    assert len(g.tapes) == 1
    # at the first call too (a fresh transformed function)
    with pytest.raises(bn.DataError, match="out of bounds"):
        bn.grad(loss)(*bad_args)


def test_out_of_range_in_take_and_take_along_axis():
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(bn.DataError, match="index 4 is out of bounds for size 4"):
        bn.grad(lambda x, i: np.sum(np.take(x, i, axis=1)))(x, np.array([0, 4]))
    with pytest.raises(bn.DataError, match="index -5 is out of bounds for size 4"):
        bn.grad(lambda x, i: np.sum(np.take_along_axis(x, i, axis=1)))(
            x, np.array([[0], [-5], [1]]))


def test_constant_index_out_of_range_is_a_trace_time_error(rng):
    x = rng.normal(size=SHAPE)
    with pytest.raises(bn.ShapeError, match="out of bounds for axis 1 with size 5"):
        bn.grad(lambda x, i: np.sum(x[i, [0, 5]]))(x, np.array([0, 1]))


def test_float32_flat_index_limit():
    """A flat index over more than 2**24 elements is not exact in float32: a clear error at
    trace time (the array argument is a zero-copy broadcast, never allocated)."""
    big = np.broadcast_to(np.float32(0.0), (4097, 4097))
    with pytest.raises(bn.ShapeError, match="2\\*\\*24"):
        bn.grad(lambda x, i: np.sum(x[i, i]))(big, np.array([1, 2]))


def test_index_data_too_large_for_float32():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(bn.InputError, match="does not fit exactly"):
        bn.grad(lambda x, i: np.sum(x[:, i]))(x, np.array([2 ** 24 + 1]))


def test_indices_that_gradients_flow_through_are_refused():
    x = np.arange(6.0)
    with pytest.raises(bn.UnsupportedOpError, match="differentiable traced value"):
        bn.grad(lambda x, y: np.sum(x[:, y]), argnums=(0, 1))(x.reshape(2, 3), np.ones(2))
    with pytest.raises(bn.UnsupportedOpError, match="must be integer data"):
        bn.grad(lambda x, y: np.sum(x[np.arange(2), y]))(x.reshape(2, 3), np.ones(2))
    with pytest.raises(bn.UnsupportedOpError, match="must be integer data"):
        bn.grad(lambda x, i: np.sum(x[i + 0.5]))(x, np.array([0, 1]))
    # a boolean mask argument is decided under guards (tests/test_decided_masks.py)
    m = np.array([True, False, True])
    np.testing.assert_array_equal(
        bn.grad(lambda x, m: np.sum(x[:, m] ** 2))(x.reshape(2, 3), m),
        np.where(m, 2 * x.reshape(2, 3), 0.0))


def test_index_shape_errors(rng):
    x = rng.normal(size=(3, 4))
    with pytest.raises(bn.ShapeError, match="could not be broadcast"):
        bn.grad(lambda x, i, j: np.sum(x[i, j]))(x, np.array([0, 1]), np.array([0, 1, 2]))
    with pytest.raises(bn.ShapeError, match="too many indices"):
        bn.grad(lambda x, i: np.sum(x[i, 0, 1]))(x, np.array([0, 1]))
    with pytest.raises(bn.ShapeError, match="single ellipsis"):
        bn.grad(lambda x, i: np.sum(x[..., i, ...]))(x, np.array([0, 1]))


def test_numpy_array_indexed_by_a_traced_index(rng):
    """``table[idx]`` with a numpy table and traced idx is numpy's own __getitem__ (it asks
    idx for an array): when an operator with a traced operand consumes the result at once,
    the subscript is traced on the table and reads idx when the tape runs (no new trace);
    kept in a name, idx becomes its integers, a guarded constant, so new indices trace
    again; bnp.take reads them when the tape runs, with no new trace. A float index is
    refused with the fix."""
    table = rng.normal(size=(5, 3))
    traces = []

    def as_written(w, i):
        traces.append(1)
        return np.sum(table[i] * w)

    def kept(w, i):
        traces.append(1)
        rows = table[i]
        return np.sum(rows * w)
    for fn, count in ((as_written, 1), (kept, 2)):
        del traces[:]
        g = bn.grad(fn)
        for idx in (np.array([4, 0, -1]), np.array([4, 0, -1]), np.array([1, 2, 3])):
            np.testing.assert_allclose(g(np.ones(3), idx), table[idx].sum(axis=0),
                                       rtol=1e-14)
        assert len(traces) == count
    idx = np.array([4, 0, -1])
    g = bn.grad(lambda w, i: np.sum(bnp.take(table, i, axis=0) * w))(np.ones(3), idx)
    np.testing.assert_allclose(g, table[idx].sum(axis=0), rtol=1e-14)
    with pytest.raises(bn.ConcretizationError, match="bnp.take"):
        bn.grad(lambda w: np.sum(table[w * 2.0] * w))(np.ones(3))


@pytest.mark.parametrize("derive", [
    lambda t, u: t[:2],
    lambda t, u: t[::-1],
    lambda t, u: t.reshape(3, 1),
    lambda t, u: np.stack([t, u]),
    lambda t, u: np.concatenate([t, np.array([0, -1])]),
    lambda t, u: t[u],                            # a take of integer data is integer data
    lambda t, u: np.broadcast_to(t, (2, 3)),
])
def test_indices_moved_from_integer_arguments_are_integer_data(rng, derive):
    """Slicing, reshaping, stacking or indexing integer data keeps it integer data (every
    element comes from an int argument or an integer constant)."""
    x = rng.normal(size=(4, 5))
    t, u = np.array([3, -1, 0]), np.array([2, 0, 1])
    key = derive(t, u)
    w = rng.normal(size=x[:, key].shape)
    g = bn.grad(lambda x, t, u: np.sum(np.sin(x[:, derive(t, u)]) * w))(x, t, u)
    ref = autograd.grad(lambda x: anp.sum(anp.sin(x[:, key]) * w))(x)
    np.testing.assert_allclose(g, ref, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("derive", [lambda t: t + 1, lambda t: t * 2, lambda t: -t - 1,
                                    lambda t: np.mod(t + 5, 4), lambda t: (t * 3) // 2])
def test_integer_arithmetic_on_indices_reads_at_run_time(derive):
    """Sums, products, remainders and floor quotients of integer data are integer data on a
    float64 tape: the take row reads them when the tape runs."""
    x = np.arange(4.0) ** 2
    g = bn.value_and_grad(lambda x, t: np.sum(x[derive(t)] * x[derive(t)]))
    for t in (np.array([0, 1]), np.array([1, 0])):
        value, grad = g(x, t)
        ref = autograd.value_and_grad(lambda x: anp.sum(x[derive(t)] * x[derive(t)]))(x)
        np.testing.assert_allclose(value, ref[0], rtol=1e-14)
        np.testing.assert_allclose(grad, ref[1], rtol=1e-14)


@pytest.mark.parametrize("derive", [lambda t: t + 0.5, lambda t: t / 2,
                                    lambda t: np.concatenate([t, np.array([0.5])])])
def test_non_integer_indices_are_refused(derive):
    with pytest.raises(bn.UnsupportedOpError, match="must be integer data"):
        bn.grad(lambda x, t: np.sum(x[derive(t)]))(np.ones(4), np.array([0, 1]))


def test_a_saved_tape_reads_new_indices(rng, tmp_path):
    x = rng.normal(size=(3, 4))

    def f(x, t):
        return np.sum(np.tanh(x[np.arange(3), t]) * x[:, t[:2]].sum())

    tape = bn.trace(f, x, np.array([1, -1, 0]))
    tape.save(tmp_path / "t.npz")
    loaded = bn.load_tape(tmp_path / "t.npz")
    for t in (np.array([2, 2, -4]), np.array([0, 3, -1])):
        assert loaded(x, t) == pytest.approx(f(x, t), rel=1e-14)
    with pytest.raises(bn.DataError, match="index 4 is out of bounds for size 4"):
        loaded(x, np.array([0, 4, 0]))


def test_take_modes_other_than_raise_need_constant_indices():
    x = np.arange(6.0)
    with pytest.raises(bn.UnsupportedOpError, match="mode='raise'"):
        bn.grad(lambda x, i: np.sum(np.take(x, i, mode="wrap")))(x, np.array([7]))
    g = bn.grad(lambda x: np.sum(np.take(x, [7, -8], mode="clip")))(x)
    np.testing.assert_array_equal(g, [1, 0, 0, 0, 0, 1])


def _random_key(rng, shape):
    """A random numpy key over ``shape`` with 1 to 3 traced integer arrays among slices,
    integers, None, an Ellipsis and constant integer arrays; returns (key builder, arrays)."""
    ndim = len(shape)
    n_idx = int(rng.integers(1, ndim + 1))
    entries, arrays, axis = [], [], 0
    ellipsis_at = int(rng.integers(0, ndim + 1)) if rng.random() < 0.3 else -1
    while axis < ndim:
        if axis == ellipsis_at:
            entries.append(("ell",))
            skip = int(rng.integers(0, ndim - axis + 1))
            axis += skip
            ellipsis_at = -1
            continue
        if rng.random() < 0.15:
            entries.append(("new",))
        size = shape[axis]
        r = rng.random()
        bshape = [(), (2,), (3,), (2, 1), (1, 3)][int(rng.integers(0, 5))]
        if len(arrays) < n_idx and r < 0.5:
            arrays.append(rng.integers(-size, size, size=bshape or (2,)))
            entries.append(("traced", len(arrays) - 1))
        elif r < 0.65:
            entries.append(("const", rng.integers(-size, size, size=bshape or (2,))))
        elif r < 0.75:
            entries.append(("int", int(rng.integers(-size, size))))
        else:
            start = int(rng.integers(-size, size))
            step = int(rng.choice([1, 1, 2, -1]))
            entries.append(("slice", slice(start, None, step) if rng.random() < 0.5
                            else slice(None)))
        axis += 1
    if not arrays:
        entries.append(("new",))
        k = next((j for j, e in enumerate(entries) if e[0] in ("slice", "int", "const")), None)
        if k is None:
            return None
        arrays.append(np.array([0, -1]))
        entries[k] = ("traced", 0)

    def key(*traced):
        out = []
        for e in entries:
            out.append({"ell": lambda e: Ellipsis, "new": lambda e: None,
                        "traced": lambda e: traced[e[1]], "const": lambda e: e[1],
                        "int": lambda e: e[1], "slice": lambda e: e[1]}[e[0]](e))
        return tuple(out)

    return key, arrays


@pytest.mark.parametrize("dtype, limit", [(np.float64, None), (np.float32, 16)])
def test_random_keys_match_numpy(rng, monkeypatch, dtype, limit):
    """Many random keys (shapes, slices, ints, None, Ellipsis, constant and traced arrays):
    values are numpy's, and the gradient of sum(x[key] * w) is np.add.at's scatter. With
    float32's exact-integer limit lowered to 16, the transposed-table path is taken often."""
    if limit:
        monkeypatch.setattr(bnp.indexing, "_EXACT32", limit)
    checked = 0
    for trial in range(300):
        shape = tuple(int(s) for s in rng.integers(2, 5, size=int(rng.integers(1, 4))))
        made = _random_key(rng, shape)
        if made is None:
            continue
        key, arrays = made
        x = rng.normal(size=shape).astype(dtype)
        try:
            expected = x[key(*arrays)]
        except IndexError:                   # a key numpy refuses (shapes that don't broadcast)
            continue
        if expected.size == 0:
            continue
        try:
            y = _run(lambda x, *a: x[key(*a)], x, *arrays)              # noqa: B023
        except bn.ShapeError as e:           # the lowered limit refuses a merged index space
            assert limit and "2**24" in str(e)
            continue
        np.testing.assert_array_equal(y, expected, err_msg=f"trial {trial}: {key(*arrays)}")
        w = rng.normal(size=expected.shape)
        g = bn.grad(lambda x, *a: np.sum(x[key(*a)] * w))(x, *arrays)   # noqa: B023
        ref = np.zeros_like(x)
        np.add.at(ref, key(*arrays), w)
        np.testing.assert_allclose(g, ref, rtol=1e-14 if limit is None else 1e-6,
                                   atol=1e-15 if limit is None else 1e-6,
                                   err_msg=f"trial {trial}: {key(*arrays)}")
        checked += 1
    assert checked > (150 if limit is None else 100)


@pytest.mark.parametrize("key", ["x[:, i]", "x[1:3, i]", "x[None, i]",
                                 "x[:, i, None]", "x[..., i]"])
def test_float32_in_place_read_falls_back_to_the_transposed_table(rng, monkeypatch, key):
    """When outer * n rows would pass float32's exact integers (2**24, lowered here to 16 so
    that small arrays reach it), adjacent indices read a transposed table instead, and B
    still lands in numpy's place."""
    monkeypatch.setattr(bnp.indexing, "_EXACT32", 16)
    f, i, j = _index_args(rng, key)
    x = rng.normal(size=SHAPE).astype(np.float32)
    expected = x[f(i, j)]
    tape = bn.trace(lambda x, i: x[f(i, None)], x, i)
    np.testing.assert_array_equal(tape(x, i), expected)
    w = rng.normal(size=expected.shape)
    g = bn.grad(_loss(np, f, w))(x, i)
    ref = autograd.grad(_loss(anp, f, w))(x.astype(np.float64), i)
    np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, fn, ref", [
    ("tril_indices_from k=-1", lambda m: np.tril_indices_from(m, -1), np.tril_indices(5, -1)),
    ("triu_indices_from", np.triu_indices_from, np.triu_indices(5)),
    ("triu_indices_from k=2", lambda m: np.triu_indices_from(m, k=2), np.triu_indices(5, 2)),
    ("diag_indices_from", np.diag_indices_from, np.diag_indices(5)),
])
def test_indices_from_a_traced_matrix(rng, name, fn, ref):
    """np.tril / triu / diag_indices_from of a traced matrix: its shape's index arrays
    (plain integers), indexing it as numpy's would."""
    x = rng.normal(size=5)

    def loss(xnp, pick):
        return lambda x: xnp.sum(xnp.sin(xnp.outer(x, x)[pick(xnp.outer(x, x))]) ** 2)
    g = bn.grad(loss(np, fn))(x)
    np.testing.assert_allclose(g, autograd.grad(loss(anp, lambda m: ref))(x), rtol=1e-12)
    np.testing.assert_allclose(g, central_diff(loss(np, fn), (x,), 0), rtol=1e-6, atol=1e-9)
