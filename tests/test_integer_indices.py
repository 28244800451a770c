"""Indices computed from traced values, as numpy programs write them.

``np.floor(x).astype(int)`` of a traced ``x`` is integer data with no gradient (numpy's cast
truncates; the derivative of a step is zero where it exists, as autograd and jax take it),
and so are its sums, products and remainders on a float64 tape. Such an index reads a traced
array at run time (the take row: new indices never retrace), and a numpy array as a constant
of the tape under a guard (new indices trace again). The bilinear interpolation below is
autograd's fluid-simulation example (examples/fluidsim/fluidsim.py, ``advect``), checked
against autograd and central differences.
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from conftest import central_diff

import burnumba as bn
from burnumba import ConcretizationError, DataError, UnsupportedOpError

N = 6


def advect(np, f, vx, vy):
    """Move field f along (vx, vy): semi-Lagrangian, bilinear (autograd's fluidsim)."""
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()
    left_ix = np.floor(center_xs).astype(int)
    top_ix = np.floor(center_ys).astype(int)
    rw = center_xs - left_ix
    bw = center_ys - top_ix
    left_ix = np.mod(left_ix, rows)
    right_ix = np.mod(left_ix + 1, rows)
    top_ix = np.mod(top_ix, cols)
    bot_ix = np.mod(top_ix + 1, cols)
    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]) + rw * (
        (1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix])
    return np.reshape(flat_f, (rows, cols))


def loss(np, f, vx, vy):
    g = advect(np, f, vx, vy)
    g = advect(np, g, vx, vy)
    return np.sum(g * np.sin(np.arange(g.size).reshape(g.shape)))


def _point(seed):
    rng = np.random.default_rng(seed)
    # velocities of up to 2.5 cells: indices cross cells and wrap around the edges, and no
    # coordinate sits on a cell boundary (where floor jumps)
    f, vx, vy = rng.normal(size=(N, N)), rng.uniform(-2.5, 2.5, (N, N)), \
        rng.uniform(-2.5, 2.5, (N, N))
    return f, vx, vy


@pytest.mark.parametrize("seed", range(4))
def test_indices_from_floor_read_a_traced_array_at_run_time(seed):
    f, vx, vy = _point(seed)
    traces = []

    def fn(f, vx, vy):
        traces.append(1)
        return loss(np, f, vx, vy)
    g = bn.value_and_grad(fn, argnums=(0, 1, 2))
    value, grads = g(f, vx, vy)
    ref_value = loss(anp, f, vx, vy)
    ref = autograd.grad(lambda f, vx, vy: loss(anp, f, vx, vy), argnum=(0, 1, 2))(f, vx, vy)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    for got, want in zip(grads, ref):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # central differences along a random direction, in each argument
    direction = np.random.default_rng(seed + 10).normal(size=(N, N))
    for k in range(3):
        def along(t, k=k):
            args = [f, vx, vy]
            args[k] = args[k] + t * direction
            return loss(np, *args)
        np.testing.assert_allclose(np.sum(grads[k] * direction), central_diff(along, [0.0], 0),
                                   rtol=1e-6, atol=1e-8)
    # other velocities move the indices: the tape reads them at run time, no new trace
    for s in range(3):
        f2, vx2, vy2 = _point(100 + s)
        value2, _ = g(f2, vx2, vy2)
        np.testing.assert_allclose(value2, loss(np, f2, vx2, vy2), rtol=1e-12)
    assert len(traces) == 1


def test_astype_int_truncates_like_numpy_and_has_no_gradient():
    x = np.array([-2.5, -1.0, -0.4, 0.0, 0.7, 3.9])

    def fn(x):
        i = x.astype(np.int64)
        return np.sum(i * x), i
    (value, i), grad = bn.value_and_grad(fn, has_aux=True)(x)
    np.testing.assert_array_equal(i, x.astype(np.int64))
    np.testing.assert_allclose(value, np.sum(x.astype(np.int64) * x))
    np.testing.assert_array_equal(grad, x.astype(np.int64))      # d/dx (trunc(x) x) = trunc(x)


def test_numpy_array_indexed_by_traced_integers_is_read_at_run_time():
    # numpy's own subscript, consumed at once by an operator with a traced operand: the
    # subscript is traced on the table (tracing/subscripts.py), new cells do not retrace
    table = np.arange(10.0) ** 2
    traces = []

    def fn(x):
        traces.append(1)
        i = np.floor(x).astype(int)
        return np.sum(x * table[i]) + np.sum(table[np.floor(x).astype(int)] * x)
    g = bn.value_and_grad(fn)
    for x in ([0.5, 3.2, 7.9], [1.5, 4.2, 8.9], [9.5, -0.5, -9.9]):   # negative: wrap
        x = np.array(x)
        value, grad = g(x)
        np.testing.assert_allclose(grad, 2 * table[np.floor(x).astype(int)])
        np.testing.assert_allclose(value, 2 * np.sum(x * table[np.floor(x).astype(int)]))
    assert len(traces) == 1
    assert next(iter(g.tapes.values())).guards is None


def test_numpy_array_indexed_elsewhere_stays_a_guarded_constant():
    # numpy's result kept in a name (it could go anywhere): its index is guarded, a new
    # index traces again
    table = np.arange(10.0) ** 2
    traces = []

    def fn(x):
        traces.append(1)
        r = table[np.floor(x).astype(int)]
        return np.sum(r * x)
    g = bn.grad(fn)
    x = np.array([0.5, 3.2, 7.9])
    np.testing.assert_allclose(g(x), table[np.floor(x).astype(int)])
    np.testing.assert_allclose(g(x + 0.05), table[np.floor(x).astype(int)])   # same cells
    assert len(traces) == 1
    x2 = np.array([1.5, 4.2, 8.9])                                             # new cells
    np.testing.assert_allclose(g(x2), table[np.floor(x2).astype(int)])
    assert len(traces) == 2
    np.testing.assert_allclose(g(x), table[np.floor(x).astype(int)])          # kept variant
    assert len(traces) == 2


def test_guarded_index_that_keeps_moving_warns_with_the_remedy():
    table = np.arange(100.0)

    def fn(x):
        r = table[np.floor(x).astype(int)]
        return np.sum(r * x)
    g = bn.grad(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(12):
            np.testing.assert_allclose(g(np.array([k + 0.5, 50.5])), [table[k], table[50]])
    messages = [str(w.message) for w in caught if issubclass(w.category, bn.VariantWarning)]
    assert messages and "bnp.take(array, idx, axis=0)" in messages[0]


def test_out_of_range_and_nan_indices_raise_at_run_time():
    f = np.arange(5.0)

    def fn(f, x):
        return np.sum(f[np.floor(x).astype(int)])
    g = bn.grad(fn)
    g(f, np.array([1.5, 4.0]))
    with pytest.raises(DataError):
        g(f, np.array([1.5, 5.0]))
    with pytest.raises(DataError):
        g(f, np.array([1.5, np.nan]))


def test_float32_arithmetic_on_indices_is_refused():
    f = np.arange(5.0, dtype=np.float32)

    def fn(f, x):
        return np.sum(f[np.floor(x).astype(int) + 1])
    with pytest.raises(UnsupportedOpError, match="float64"):
        bn.grad(fn)(f, np.array([1.5], dtype=np.float32))
    # without arithmetic, a float32 floor is integer data too
    x = np.array([1.5, 3.2], dtype=np.float32)
    np.testing.assert_array_equal(
        bn.grad(lambda f, x: np.sum(f[np.floor(x).astype(int)]))(f, x), [0, 1, 0, 1, 0])


def test_bool_cast_and_float_index_stay_refused():
    with pytest.raises(UnsupportedOpError, match="astype"):
        bn.grad(lambda x: np.sum(x.astype(bool) * x))(np.ones(3))
    table = np.arange(4.0)
    with pytest.raises(ConcretizationError):
        bn.grad(lambda x: np.sum(table[x] * x))(np.ones(3))


# -- numpy tables indexed by traced integers, read at run time (tracing/subscripts.py) --

GRID = np.cos(np.arange(20.0)).reshape(4, 5) + 2.0


def gathers(np, x, t):
    """1-D and 2-D fancy gathers of a traced table t and of numpy's GRID with indices
    computed from x: negative ones (wrapping), repeated ones (their gradients add up),
    a mixed key (an int and a traced index)."""
    i = np.floor(x).astype(int)                 # -7 .. 6 for x in (-7, 7)
    j = np.mod(i * 3, 5)
    k = np.mod(i, 4)
    return (np.sum(x * t[i] + np.sin(x) * t[i] * t[i])
            + np.sum(x ** 2 * GRID[k, j]) + np.sum(GRID[k, 2] * x)
            + np.sum(x * GRID[np.mod(np.floor(x).astype(int), 4), -1]))


def _xs(seed, n=9):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-6.9, 6.9, n)
    x[1] = x[0] + 1e-3                          # a repeated index
    return x


@pytest.mark.parametrize("seed", range(3))
def test_gathers_match_autograd_and_central_differences(seed):
    t = np.sin(np.arange(7.0)) + 1.5
    x = _xs(seed)
    traces = []

    def fn(x, t):
        traces.append(1)
        return gathers(np, x, t)
    g = bn.value_and_grad(fn, argnums=(0, 1))
    value, grads = g(x, t)
    ref = autograd.grad(lambda x, t: gathers(anp, x, t), argnum=(0, 1))(x, t)
    np.testing.assert_allclose(value, gathers(np, x, t), rtol=1e-13)
    for got, want in zip(grads, ref):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for k, arg in enumerate((x, t)):
        d = np.random.default_rng(seed + 5).normal(size=arg.shape)

        def along(s, k=k):
            args = [x, t]
            args[k] = args[k] + s * d
            return gathers(np, *args)
        np.testing.assert_allclose(np.sum(grads[k] * d), central_diff(along, [0.0], 0),
                                   rtol=1e-6, atol=1e-8)
    for s in range(3):                           # new indices: the same tape
        x2 = _xs(100 + s)
        np.testing.assert_allclose(g(x2, t)[0], gathers(np, x2, t), rtol=1e-13)
    assert len(traces) == 1
    assert next(iter(g.tapes.values())).guards is None


def test_gathers_under_jvp_hessian_and_vmap():
    t = np.sin(np.arange(7.0)) + 1.5
    x = _xs(7)
    v = np.random.default_rng(8).normal(size=x.shape)
    value, tangent = bn.jvp(lambda x: gathers(np, x, t), (x,), (v,))
    ref = autograd.grad(lambda x: gathers(anp, x, t))(x)
    np.testing.assert_allclose(tangent, ref @ v, rtol=1e-12)
    H = bn.hessian(lambda x: gathers(np, x, t))(x)
    np.testing.assert_allclose(H, autograd.hessian(lambda x: gathers(anp, x, t))(x),
                               rtol=1e-12, atol=1e-12)
    X = np.stack([_xs(s) for s in range(4)])
    got = bn.vmap(bn.grad(lambda x: gathers(np, x, t)))(X)
    want = np.stack([autograd.grad(lambda x: gathers(anp, x, t))(r) for r in X])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_fluidsim_first_step_advects_a_numpy_field():
    # autograd's fluidsim advects its smoke image, a numpy array, by traced velocities
    smoke = np.random.default_rng(3).normal(size=(N, N))
    traces = []

    def fn(vx, vy):
        traces.append(1)
        return np.sum(advect(np, smoke, vx, vy) ** 2)
    g = bn.value_and_grad(fn, argnums=(0, 1))
    for seed in range(3):
        _, vx, vy = _point(seed)
        value, grads = g(vx, vy)
        ref = autograd.value_and_grad(
            lambda vx, vy: anp.sum(advect(anp, smoke, vx, vy) ** 2), argnum=(0, 1))(vx, vy)
        np.testing.assert_allclose(value, ref[0], rtol=1e-12)
        for got, want in zip(grads, ref[1]):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert len(traces) == 1


def test_numpy_table_out_of_range_at_run_time():
    table = np.arange(5.0)

    def fn(x):
        i = np.floor(x).astype(int)
        return np.sum(x * table[i])
    g = bn.grad(fn)
    np.testing.assert_allclose(g(np.array([1.5, -4.5])), [1.0, 0.0])     # -5 wraps to 0
    with pytest.raises(DataError):
        g(np.array([1.5, 5.0]))
    with pytest.raises(DataError):
        g(np.array([1.5, -6.0]))
    with pytest.raises(IndexError):             # numpy's own error while tracing
        bn.grad(fn)(np.array([7.5]))


def test_numpy_table_float32():
    table = np.linspace(-1.0, 2.0, 7) ** 2
    traces = []

    def fn(x):
        traces.append(1)
        return np.sum(x * table[np.floor(x).astype(int)])
    g = bn.grad(fn)
    for shift in (0.0, 1.0, 2.0):
        x = np.array([-2.5, -0.3, 0.4, 0.7, 3.2], np.float32) + np.float32(shift)
        got = g(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, table[np.floor(x).astype(int)], rtol=1e-6)
    assert len(traces) == 1


def test_numpy_table_forms_that_stay_guarded():
    # a list of indices (numpy stacks it) or a table read through an attribute: numpy's
    # result is not provably the operator's alone, so the index stays a guarded constant
    holder = type("H", (), {"grid": GRID})()
    for fn in (lambda x: np.sum(GRID[[np.mod(np.floor(x).astype(int), 4)] * 2] * x),
               lambda x: np.sum(x * holder.grid[np.mod(np.floor(x).astype(int), 4), 0])):
        g = bn.grad(fn)
        for x in (np.array([0.5, 2.5, 3.5, 1.5, 0.5]), np.array([1.5, 3.5, 4.5, 2.5, 1.5])):
            d = np.linspace(-1.0, 1.0, x.size)
            np.testing.assert_allclose(np.sum(g(x) * d),
                                       central_diff(lambda s: fn(x + s * d), [0.0], 0),
                                       rtol=1e-6)
        assert len(g.variants[next(iter(g.variants))]) == 2


def test_repeated_indices_add_up():
    t = np.arange(5.0)
    g = bn.grad(lambda t, x: np.sum(t[np.floor(x).astype(int)] * x), argnums=(0,))
    (got,) = g(t, np.array([1.5, 1.25, -1.5, 3.0]))
    np.testing.assert_allclose(got, [0.0, 2.75, 0.0, 1.5, 0.0])   # -2 wraps to 3


def test_numpy_table_from_threads():
    import threading
    table = np.arange(40.0).reshape(8, 5) ** 0.5
    g = bn.grad(lambda x: np.sum(x * table[np.mod(np.floor(x).astype(int), 8), 3]))
    xs = [np.random.default_rng(s).uniform(-20, 20, 64) for s in range(8)]
    want = [table[np.mod(np.floor(x).astype(int), 8), 3] for x in xs]
    got = [None] * len(xs)

    def work(k):
        for _ in range(20):
            got[k] = g(xs[k])
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
