"""Reductions, scans, sort and contractions on traced values (#11): prod, cumsum, cumprod,
cummax / cummin (np.maximum / np.minimum.accumulate), ufunc.accumulate, sort, einsum,
tensordot and select.

Values are checked against numpy, gradients against HIPS autograd where it has the function
(prod, cumsum, einsum, tensordot, 1-D sort) and against central differences everywhere, at
seeded random points over many shapes, axes, keepdims and broadcasts, in float64 and (looser)
float32. The conventions are checked exactly: prod's gradient at zeros (one zero: the product
of the others; two: 0), cumprod's likewise, and sort's ties (stable: equal values keep their
order, so the gradient of the k-th smallest goes to the first of the tied elements in input
order; NaN sorts last).
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
from conftest import central_diff


def _point(rng, shape, lo=0.5, hi=1.5):
    """Random values with |x| in [lo, hi] and random signs: no zeros, no ties."""
    x = rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return x if shape else float(x)


def _weights(f, args):
    """A fixed random cotangent shaped like f's output (numpy computes the shape)."""
    y = np.asarray(f(*args))
    return np.random.default_rng(y.size + 11).normal(size=y.shape)


def check(ours, args, ref=None, rtol=1e-10, fd=True, dtype=np.float64):
    """ours(*args) on traced values: its value equals ours on numpy arrays (numpy's own
    function), and the gradient of sum(ours * w) matches autograd's of ``ref`` and central
    differences. Returns the gradients."""
    args = tuple(np.asarray(a, dtype) for a in args)
    w = _weights(ours, args)
    argnums = tuple(range(len(args)))

    def loss(*xs):
        y = ours(*xs)
        return np.sum(y * w), y
    (_, y), g = bn.value_and_grad(loss, argnums=argnums, has_aux=True)(*args)
    want = ours(*[a.astype(np.float64) for a in args])
    tol = 1e-12 if dtype == np.float64 else 2e-5
    assert np.shape(y) == np.shape(want)
    np.testing.assert_allclose(y, want, rtol=tol, atol=tol)
    if dtype == np.float32:
        assert all(gk.dtype == np.float32 for gk in g)
        g64 = check(ours, args, ref, rtol, fd=False)
        for gk, gk64 in zip(g, g64):
            np.testing.assert_allclose(gk, gk64, rtol=1e-4,
                                       atol=1e-4 * max(1.0, np.abs(gk64).max()))
        return g
    if ref is not None:
        ref_g = autograd.grad(lambda *xs: anp.sum(ref(*xs) * w), argnums)(*args)
        for k, (gk, rk) in enumerate(zip(g, ref_g)):
            np.testing.assert_allclose(gk, rk, rtol=rtol, atol=1e-12,
                                       err_msg=f"gradient {k} vs autograd")
    if fd:
        plain = lambda *xs: np.sum(ours(*xs) * w)                   # noqa: E731
        for k in argnums:
            np.testing.assert_allclose(g[k], central_diff(plain, args, k), rtol=1e-5, atol=1e-6,
                                       err_msg=f"gradient {k} vs central differences")
    return g


# ==============================================================================================
# prod
# ==============================================================================================

PROD = [((5,), None, False), ((5,), 0, True), ((3, 4), None, True), ((3, 4), 0, False),
        ((3, 4), 1, False), ((3, 4), -1, True), ((2, 3, 4), (0, 2), False),
        ((2, 3, 4), (2, 0), True), ((2, 3, 4), (1,), False), ((2, 3, 4), (0, 1, 2), False),
        ((2, 1, 3), 1, True), ((4, 1), 0, False), ((), None, False), ((3, 0), 1, False)]


@pytest.mark.parametrize("shape,axis,keepdims", PROD)
def test_prod_against_autograd_and_central_differences(rng, shape, axis, keepdims):
    x = _point(rng, shape)
    check(lambda x: np.prod(x, axis=axis, keepdims=keepdims), (x,),
          lambda x: anp.prod(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("shape,axis,keepdims", PROD[:10])
def test_prod_float32(rng, shape, axis, keepdims):
    check(lambda x: np.prod(x, axis=axis, keepdims=keepdims), (_point(rng, shape),),
          dtype=np.float32)


def test_prod_gradient_at_zeros_is_exact():
    """One zero in a slice: its gradient is the product of the others, the others' 0; two
    zeros: 0 everywhere (autograd's y / x would give NaN)."""
    g = bn.grad(lambda x: np.prod(x))
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 3.0, -1.5])), [0.0, -9.0, 0.0, 0.0])
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 3.0, 0.0])), [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g(np.array([0.0, 1.7])), [1.7, 0.0])
    x = np.array([[0.0, 2.0, 5.0], [3.0, 0.0, 0.0], [1.5, 2.0, -4.0]])
    w = np.array([1.0, -2.0, 0.5])
    gx = bn.grad(lambda x: np.sum(np.prod(x, axis=1) * w))(x)
    np.testing.assert_array_equal(gx, [[10.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                                       [0.5 * -8.0, 0.5 * -6.0, 0.5 * 3.0]])
    # along axis 0, with keepdims (the lines are columns)
    gx0 = bn.grad(lambda x: np.sum(x.prod(axis=0, keepdims=True) * w))(x)
    np.testing.assert_array_equal(gx0, [[4.5, 0.0, 0.0], [0.0, -8.0, -10.0], [0.0, 0.0, 0.0]])
    # forward mode and the second derivative at a zero, exactly
    x = np.array([2.0, 0.0, 3.0])
    np.testing.assert_array_equal(bn.jacfwd(lambda x: np.prod(x))(x), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(bn.hessian(lambda x: np.prod(x))(x),
                                  [[0.0, 3.0, 0.0], [3.0, 0.0, 2.0], [0.0, 2.0, 0.0]])


def test_prod_dispatch_and_method(rng):
    x = _point(rng, (3, 4))
    for f in (lambda x: np.prod(x, 1), lambda x: x.prod(axis=1), lambda x: bnp.prod(x, 1)):
        y, g = bn.value_and_grad(lambda x, f=f: np.sum(f(x)))(x)
        np.testing.assert_allclose(y, np.sum(np.prod(x, 1)), rtol=1e-13)
        np.testing.assert_allclose(g, np.prod(x, 1, keepdims=True) / x, rtol=1e-12)


# ==============================================================================================
# cumsum / cumprod
# ==============================================================================================

SCANS = [((6,), None), ((6,), 0), ((6,), -1), ((3, 4), None), ((3, 4), 0), ((3, 4), 1),
         ((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), 0), ((3, 1), 1), ((1, 5), 0), ((), None)]


@pytest.mark.parametrize("shape,axis", SCANS)
def test_cumsum_against_autograd_and_central_differences(rng, shape, axis):
    x = _point(rng, shape)
    check(lambda x: np.cumsum(x, axis=axis), (x,), lambda x: anp.cumsum(x, axis=axis))


def _cumprod_ref(x, axis):
    """autograd has no cumprod: a stack of running products (for 1 and 2-D x)."""
    if axis is None:
        x, axis = anp.ravel(x), 0
    if x.ndim == 0:
        return anp.reshape(x, (1,))
    xt = x if axis % x.ndim == 0 else anp.swapaxes(x, 0, axis)
    out, acc = [], None
    for k in range(xt.shape[0]):
        acc = xt[k] if acc is None else acc * xt[k]
        out.append(acc)
    y = anp.stack(out)
    return y if axis % x.ndim == 0 else anp.swapaxes(y, 0, axis)


@pytest.mark.parametrize("shape,axis", [s for s in SCANS if len(s[0]) < 3])
def test_cumprod_against_autograd_and_central_differences(rng, shape, axis):
    x = _point(rng, shape)
    check(lambda x: np.cumprod(x, axis=axis), (x,), lambda x: _cumprod_ref(x, axis))


@pytest.mark.parametrize("shape,axis", [s for s in SCANS if len(s[0]) == 3])
def test_cumprod_3d_against_central_differences(rng, shape, axis):
    check(lambda x: np.cumprod(x, axis=axis), (_point(rng, shape),))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("shape,axis", SCANS[:9])
def test_scans_float32(rng, name, shape, axis):
    check(lambda x: getattr(np, name)(x, axis=axis), (_point(rng, shape),), dtype=np.float32)


def test_cumprod_gradient_at_zeros_is_exact():
    """d y_k / d x_j = prod_{i <= k, i != j} x_i: a zero at j keeps the later products'
    gradient at j, and two zeros cancel everything past the second."""
    def exact(x, w):
        g = np.zeros_like(x)
        for j in range(len(x)):
            for k in range(j, len(x)):
                g[j] += w[k] * np.prod(np.delete(x[:k + 1], j))
        return g
    w = np.array([1.0, -2.0, 0.5, 3.0, 0.25])
    for x in ([2.0, 0.0, 3.0, -1.5, 4.0], [0.0, 2.0, 0.0, 3.0, 1.0], [1.5, 2.0, 0.5, 0.0, 0.0],
              [0.0, 0.0, 0.0, 2.0, 1.0]):
        x = np.array(x)
        g = bn.grad(lambda x: np.sum(np.cumprod(x) * w))(x)
        np.testing.assert_array_equal(g, exact(x, w))
        jv = bn.jvp(lambda x: np.cumprod(x), (x,), (w,))[1]
        np.testing.assert_array_equal(jv, [sum(w[j] * np.prod(np.delete(x[:k + 1], j))
                                               for j in range(k + 1)) for k in range(5)])


def test_scan_methods_and_dispatch(rng):
    x = _point(rng, (3, 4))
    for f, want in ((lambda x: x.cumsum(axis=1), np.cumsum(x, axis=1)),
                    (lambda x: x.cumprod(0), np.cumprod(x, 0)),
                    (lambda x: x.cumsum(), np.cumsum(x)),
                    (lambda x: bnp.cumprod(x), np.cumprod(x))):
        y = bn.trace(f, x)(x)
        np.testing.assert_allclose(y, want, rtol=1e-13)


# cummax / cummin: np.maximum.accumulate / np.minimum.accumulate (kernels/blocks_scan.py), the
# chain of maximum (minimum) steps with that row's conventions at every step

def _chain(ext, x, axis):
    """The accumulation written as its chain of steps with ``ext`` (anp.maximum, or
    np.maximum on traced values: the maximum row), an independent reference."""
    lib = anp if ext in (anp.maximum, anp.minimum) else np
    if axis is None:
        x, axis = lib.ravel(x), 0
    xt = lib.moveaxis(x, axis, 0)
    steps = [xt[0]]
    for k in range(1, xt.shape[0]):
        steps.append(ext(steps[-1], xt[k]))
    return lib.moveaxis(lib.stack(steps), 0, axis)


@pytest.mark.parametrize("shape,axis", [s for s in SCANS if s[0]])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_cummax_cummin_against_autograd_and_central_differences(rng, name, shape, axis):
    x = _point(rng, shape)
    ufunc, ext = getattr(np, name), getattr(anp, name)
    if axis is None:
        fn = getattr(bnp, "cummax" if name == "maximum" else "cummin")
        check(lambda x: fn(x), (x,), lambda x: _chain(ext, x, None))
        np.testing.assert_array_equal(fn(x), ufunc.accumulate(np.ravel(x)))
    else:
        check(lambda x: ufunc.accumulate(x, axis=axis), (x,), lambda x: _chain(ext, x, axis))
        np.testing.assert_array_equal(fn_axis := getattr(bnp, "cummax" if name == "maximum"
                                                         else "cummin")(x, axis=axis),
                                      ufunc.accumulate(x, axis=axis))
        assert fn_axis.shape == shape


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_cummax_cummin_float32(rng, name):
    x = _point(rng, (3, 4))
    check(lambda x: getattr(np, name).accumulate(x, axis=1), (x,), dtype=np.float32)


# lines with exact ties (kinks): each step's tie splits its cotangent 1/2, 1/2
KINKS = [[1.0, 1.0, 1.0], [3.0, 1.0, 3.0, 2.0, 3.0], [-0.5, 2.0, 2.0, -1.0, 2.0, 4.0],
         [0.0, -0.0, 0.0, 0.0], [2.0, 2.0, 1.0, 2.0, 5.0, 5.0]]


@pytest.mark.parametrize("line", KINKS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_cummax_cummin_kinks_at_exact_values(name, line):
    """At ties the gradient and the tangent are exactly those of the chain of np.maximum
    (np.minimum) steps: burnumba's maximum row's and HIPS autograd's (both 1/2 each at a
    tie); cummin is -cummax(-x) bit for bit."""
    sign = 1.0 if name == "maximum" else -1.0
    x = sign * np.array(line)
    w = np.linspace(-1.0, 2.0, x.size)
    ufunc = getattr(np, name)
    g = bn.grad(lambda x: np.sum(ufunc.accumulate(x) * w))(x)
    np.testing.assert_array_equal(g, bn.grad(lambda x: np.sum(_chain(ufunc, x, 0) * w))(x))
    np.testing.assert_array_equal(g, autograd.grad(
        lambda x: anp.sum(_chain(getattr(anp, name), x, 0) * w))(x))
    t = np.cos(np.arange(x.size))
    y, ty = bn.jvp(lambda x: ufunc.accumulate(x), (x,), (t,))
    np.testing.assert_array_equal(y, ufunc.accumulate(x))
    np.testing.assert_array_equal(ty, bn.jvp(lambda x: _chain(ufunc, x, 0), (x,), (t,))[1])
    other = np.minimum if name == "maximum" else np.maximum
    np.testing.assert_array_equal(
        g, bn.grad(lambda x: np.sum(-other.accumulate(-x) * w))(x))


def test_cummax_by_hand():
    """cummax of [1, 1, 1]: y_1 = max(y_0, a_1) ties (1/2, 1/2), y_2 = max(y_1, a_2) ties
    (1/2 to y_1, 1/2 to a_2): d y_2 / d a = (1/4, 1/4, 1/2), so d sum(y) / d a = (1 + 1/2 +
    1/4, 1/2 + 1/4, 1/2); [0.5, 2, 1]: 2 takes over from the second on, with slope 1."""
    g = bn.grad(lambda x: np.sum(np.maximum.accumulate(x)))(np.ones(3))
    np.testing.assert_array_equal(g, [1.75, 0.75, 0.5])
    g = bn.grad(lambda x: np.sum(np.maximum.accumulate(x)))(np.array([0.5, 2.0, 1.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0, 0.0])
    _, t = bn.jvp(lambda x: np.minimum.accumulate(x), (np.array([2.0, 2.0, 3.0]),),
                  (np.array([1.0, 3.0, 5.0]),))
    np.testing.assert_array_equal(t, [1.0, 2.0, 2.0])


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_cummax_cummin_second_order_and_forward_jacobian(rng, name):
    """Nested: the Hessian of a loss through the row (its traced rules) against central
    differences of the gradient, and the forward Jacobian (the batched rule) equal to the
    reverse one."""
    ufunc = getattr(np, name)
    w = rng.normal(size=(2, 4))

    def loss(x):
        return np.sum(ufunc.accumulate(np.sin(x) * x, axis=1) * w)
    x = _point(rng, (2, 4))
    H = np.reshape(bn.hessian(loss)(x), (8, 8))
    grad = bn.grad(loss)
    fd = np.stack([np.ravel(grad(x + e.reshape(2, 4) * 1e-6) - grad(x - e.reshape(2, 4) * 1e-6))
                   / 2e-6 for e in np.eye(8)], axis=1)
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-7)
    f = lambda x: ufunc.accumulate(x * x, axis=0)               # noqa: E731
    np.testing.assert_allclose(bn.jacfwd(f)(x), bn.jacobian(f)(x), rtol=1e-14)
    np.testing.assert_allclose(bn.jacobian(lambda x: bn.jacfwd(f)(x).sum(axis=(0, 1)))(x),
                               bn.jacobian(lambda x: bn.jacobian(f)(x).sum(axis=(0, 1)))(x),
                               rtol=1e-14)


def test_cummax_kernel_agrees_with_the_plain_python_sweep():
    """Two engines, one table: the compiled kernel and kernels/reference.py at ties and at
    the special values (NaN, +-inf, signed zeros)."""
    from burnumba.kernels import engine, layout, reference
    x = np.array([[1.0, np.nan, 1.0, -np.inf], [-0.0, 0.0, np.inf, np.inf],
                  [2.0, 2.0, -1.0, 2.0]])
    w = np.arange(12.0).reshape(3, 4) - 5.0
    for f in (lambda x: np.maximum.accumulate(x, axis=1),
              lambda x: np.minimum.accumulate(x, axis=0)):
        tape = bn.trace(lambda x: np.sum(f(x) * w), x)
        F1, C = tape.F0.copy(), engine.control_block(tape.dtype)
        v_kernel = tape.kernel.caller(tape.I, F1, C)(layout.MODE_VALUE_AND_GRAD)
        F2 = tape.F0.copy()
        v_ref = reference.value_and_grad(tape.I, F2)
        np.testing.assert_array_equal(v_kernel, v_ref)
        np.testing.assert_array_equal(F1, F2)


def _in_order(x, axis, c=1.0):
    """c * (0.0 + x[.., 0, ..] + x[.., 1, ..] + ...): each line along the axis summed in
    index order, one float64 add at a time (not numpy's pairwise sum)."""
    lines = np.moveaxis(x, axis, -1)
    out = np.empty(lines.shape[:-1])
    for idx in np.ndindex(out.shape):
        acc = 0.0
        for v in lines[idx]:
            acc += float(v)
        out[idx] = c * acc
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis", [((7, 3), 1), ((9, 5, 2), 2), ((5, 6, 3), 0),
                                         ((3, 7, 4), 1), ((2, 300, 16), 1), ((1, 4), 1),
                                         ((3, 50, 7), 1)])
def test_sum_and_mean_along_an_axis_add_each_line_in_order(shape, axis, dtype):
    """The sum_axis row's kernel sums the lines of a block side by side (inner > 1) or four
    at a time, yet each line's adds are one float64 accumulator's, in index order, in the
    value, the tangent and (exactly c * g to every element) the gradient; a float32 tape
    rounds once, at the end. Magnitudes spread over 16 decades make any other order show."""
    rng = np.random.default_rng(sum(shape) + axis)
    x, t = (np.asarray(rng.standard_normal(shape) * 10.0 ** rng.uniform(-8, 8, shape), dtype)
            for _ in range(2))
    m = shape[axis]
    # the row's c is a value of the tape's dtype (a float32 tape holds 1 / m in float32)
    for f, c in ((lambda x: np.sum(x, axis=axis), 1.0),
                 (lambda x: np.mean(x, axis=axis), float(dtype(1.0 / m)))):
        y, ty = bn.jvp(f, (x,), (t,))
        assert y.dtype == dtype
        np.testing.assert_array_equal(y, _in_order(x, axis, c).astype(dtype))
        np.testing.assert_array_equal(ty, _in_order(t, axis, c).astype(dtype))
        w = rng.standard_normal(y.shape).astype(dtype)
        g = bn.grad(lambda x: np.sum(f(x) * w))(x)
        want = (c * w.astype(np.float64)).astype(dtype)          # c * g in float64, rounded
        np.testing.assert_array_equal(g, np.broadcast_to(np.expand_dims(want, axis), shape))


# ufunc.accumulate: the scan rows that declare themselves a ufunc's accumulation
# (kernels/row.py: Op.accumulate), from the table: a new such row is tested here unnamed
ACCUMULATING = [r for r in bn.kernels.ROWS if r.accumulate]
ACCUMULATE_CASES = [((6,), None), ((6,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -1),
                    ((2, 3, 4), 0), ((4, 1), 1)]


def test_the_accumulating_rows_are_registered():
    from burnumba.tracing.dispatch import ACCUMULATE
    assert {"cumsum": "add", "cumprod": "multiply", "logcumsumexp": "logaddexp"}.items() <= {
        r.name: r.accumulate for r in ACCUMULATING}.items()
    assert set(ACCUMULATE) == {getattr(np, r.accumulate) for r in ACCUMULATING}


@pytest.mark.parametrize("row", ACCUMULATING, ids=lambda r: r.name)
@pytest.mark.parametrize("shape,axis", ACCUMULATE_CASES)
def test_ufunc_accumulate_is_its_row(rng, row, shape, axis):
    """np.<ufunc>.accumulate(x, axis) on a traced x is a node of the row: numpy's value, and
    a gradient that matches central differences (axis 0 when not given, as numpy)."""
    ufunc = getattr(np, row.accumulate)
    lo, hi = row.domain[0]
    x = rng.uniform(lo, hi, size=shape)
    call = ((lambda x: ufunc.accumulate(x)) if axis is None
            else (lambda x: ufunc.accumulate(x, axis=axis)))
    if shape[axis or 0] > 1:
        tape = bn.grad(lambda x: np.sum(call(x))).trace(x)
        assert row.name in tape.ops
    check(call, (x,))


def test_ufunc_accumulate_writes_out_and_refuses_what_numpy_refuses(rng):
    x = _point(rng, (3, 4))

    def into_out(x):
        out = np.zeros_like(x)
        np.add.accumulate(x, axis=1, out=out)
        return out * x
    check(into_out, (x,))
    for call, error, words in (
            (lambda x: np.add.accumulate(x, axis=None), bn.ShapeError,
             ["numpy.add.accumulate", "axis=None", "1-d"]),
            (lambda x: np.add.accumulate(np.sum(x)), bn.ShapeError, ["scalar"]),
            (lambda x: np.add.accumulate(x, axis=2), bn.ShapeError, ["axis 2"]),
            (lambda x: np.hypot.accumulate(x), bn.UnsupportedOpError,
             ["numpy.hypot.accumulate", "accumulate is supported for add"]),
            (lambda x: np.add.accumulate(x, dtype=np.int64), bn.UnsupportedOpError,
             ["dtype"])):
        with pytest.raises(error) as e:
            bn.grad(lambda x: np.sum(call(x)))(x)
        assert all(w in str(e.value) for w in words), str(e.value)


# ==============================================================================================
# sort
# ==============================================================================================

def _sort_grad(x, w, axis):
    """The gradient of sum(sort(x) * w): w scattered back through the stable permutation."""
    if axis is None:
        return _sort_grad(x.ravel(), w, 0).reshape(x.shape)
    order = np.argsort(x, axis=axis, kind="stable")
    g = np.zeros_like(x)
    np.put_along_axis(g, order, w, axis=axis)
    return g


SORTS = [((7,), -1), ((7,), 0), ((7,), None), ((3, 5), -1), ((3, 5), 0), ((3, 5), None),
         ((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), 0), ((4, 1), 1), ((1,), -1)]


@pytest.mark.parametrize("shape,axis", SORTS)
def test_sort_values_and_gradients(rng, shape, axis):
    x = _point(rng, shape, 0.0, 2.0)
    g = check(lambda x: np.sort(x, axis=axis), (x,), anp.sort if len(shape) == 1 else None)
    w = _weights(lambda x: np.sort(x, axis=axis), (x,))
    np.testing.assert_array_equal(g[0], _sort_grad(x, w, axis))


@pytest.mark.parametrize("shape,axis", SORTS[:9])
def test_sort_float32(rng, shape, axis):
    check(lambda x: np.sort(x, axis=axis), (_point(rng, shape, 0.0, 2.0),), dtype=np.float32)


def test_sort_recomputes_the_permutation_for_new_values(rng):
    """A tape is traced once and replayed: the order must come from the values of each call."""
    w = np.arange(1.0, 6.0)
    vg = bn.value_and_grad(lambda x: np.sum(np.sort(x) * w))
    for _ in range(4):
        x = rng.normal(size=5)
        value, g = vg(x)
        np.testing.assert_allclose(value, np.sum(np.sort(x) * w), rtol=1e-13)
        np.testing.assert_array_equal(g, _sort_grad(x, w, 0))
    assert len(vg.tapes) == 1


def test_sort_ties_are_stable_and_nan_sorts_last():
    """Ties keep their input order (numpy's kind="stable"; -0.0 and 0.0 are equal), so the
    k-th smallest's gradient goes to the earliest of the tied elements still unplaced."""
    w = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0, 1e5])
    x = np.array([2.0, 1.0, 2.0, 1.0, -0.0, 0.0])
    (_, y), g = bn.value_and_grad(lambda x: (np.sum(np.sort(x) * w), np.sort(x)),
                                  has_aux=True)(x)
    np.testing.assert_array_equal(y, np.sort(x, kind="stable"))
    assert np.signbit(y[0]) and not np.signbit(y[1])          # -0.0 came first
    np.testing.assert_array_equal(g, [1e4, 100.0, 1e5, 1000.0, 1.0, 10.0])
    x = np.array([np.nan, 1.0, -np.inf, np.nan, 0.5])
    (_, y), g = bn.value_and_grad(lambda x: (np.sum(np.sort(x) * w[:5]), np.sort(x)),
                                  has_aux=True)(x)
    np.testing.assert_array_equal(y, [-np.inf, 0.5, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(g, [1000.0, 100.0, 1.0, 10000.0, 10.0])


def test_sort_second_order_and_forward_mode(rng):
    x = rng.normal(size=(2, 4))
    f = lambda x: np.sum(np.sort(x, axis=1) ** 3 * np.arange(4.0))   # noqa: E731
    H = bn.hessian(f)(x)
    order = np.argsort(x, axis=1, kind="stable")
    want = np.zeros((8, 8))
    for r in range(2):
        for k, j in enumerate(order[r]):
            want[4 * r + j, 4 * r + j] = 6.0 * x[r, j] * k
    np.testing.assert_allclose(H.reshape(8, 8), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(bn.jacfwd(lambda x: np.sort(x, axis=1))(x),
                               bn.jacrev(lambda x: np.sort(x, axis=1))(x), rtol=0, atol=0)


# ==============================================================================================
# einsum / tensordot / select
# ==============================================================================================

EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),
    ("...ij,jk", [(2, 3, 4), (4, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("i,i", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,ij", [(3, 4), (3, 4)]),
    ("ij,ij->ij", [(1, 4), (3, 4)]),
    ("ij,jk->ik", [(3, 1), (4, 2)]),
    ("ijk,ikl->ijl", [(2, 3, 4), (1, 4, 2)]),
    ("bi,bj,bk->bijk", [(2, 3), (2, 2), (2, 4)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("ij,jk,ki", [(2, 3), (3, 4), (4, 2)]),
    ("ab,cd->abcd", [(2, 2), (3, 1)]),
    ("i,ij,j->", [(3,), (3, 4), (4,)]),
    ("ijk->ik", [(2, 3, 4)]),
    ("ij,j->i", [(3, 4), (4,)]),
    (",i->i", [(), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum_against_numpy_and_autograd(rng, subscripts, shapes):
    args = [_point(rng, s) for s in shapes]
    # autograd's einsum cannot differentiate a diagonal (it would einsum "i->ii"): central
    # differences only there
    diagonal = any(len(set(t)) < len(t) for t in subscripts.split("->")[0].split(","))
    check(lambda *xs: np.einsum(subscripts, *xs), args,
          None if diagonal else lambda *xs: anp.einsum(subscripts, *xs))


@pytest.mark.parametrize("subscripts,shapes", EINSUM[:12:3], ids=[e[0] for e in EINSUM[:12:3]])
def test_einsum_float32(rng, subscripts, shapes):
    check(lambda *xs: np.einsum(subscripts, *xs), [_point(rng, s) for s in shapes],
          dtype=np.float32)


def test_einsum_forms_and_composition(rng):
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    for f in (lambda a, b: bnp.einsum("ij,jk->ik", a, b, optimize=True),
              lambda a, b: np.einsum("ij,jk->ik", a, b, optimize="greedy"),
              lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]),
              lambda a, b: np.einsum(" ij , jk -> ik ", a, b)):
        np.testing.assert_allclose(bn.trace(f, a, b, argnums=(0, 1))(a, b), a @ b, rtol=1e-13)
    # one operand traced, one a numpy constant
    g = bn.grad(lambda a: np.sum(np.einsum("ij,jk->ik", a, b) ** 2))(a)
    np.testing.assert_allclose(g, 2 * (a @ b) @ b.T, rtol=1e-12)
    # a two-operand contraction is one matmul row
    tape = bn.trace(lambda a, b: np.einsum("ij,jk->ik", a, b), a, b, argnums=(0, 1))
    assert "matmul" in tape.ops
    # nested derivatives through the composition
    H = bn.hessian(lambda a: np.einsum("ij,ij,ij->", a, a, a))(a)
    np.testing.assert_allclose(H.reshape(12, 12), np.diag(6 * a.ravel()), rtol=1e-12,
                               atol=1e-14)


TENSORDOT = [((3, 4), (4, 5), 1), ((2, 3, 4), (3, 4, 5), 2), ((3, 4), (5, 6), 0),
             ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])), ((3, 4), (3, 5), (0, 0)),
             ((2, 3), (2, 3), 2), ((2, 3, 4), (5, 2), ([0], [-1])), ((4,), (4,), 1)]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT)
def test_tensordot_against_numpy_and_autograd(rng, sa, sb, axes):
    a, b = _point(rng, sa), _point(rng, sb)
    check(lambda a, b: np.tensordot(a, b, axes), (a, b),
          lambda a, b: anp.tensordot(a, b, axes))


def test_tensordot_float32(rng):
    check(lambda a, b: np.tensordot(a, b, ([1, 2], [1, 0])),
          (_point(rng, (2, 3, 4)), _point(rng, (4, 3, 5))), dtype=np.float32)


def _select(x, y):
    return np.select([x > 0.5, x < -0.5, y > 0.0], [x ** 2, np.sin(y), x * y], default=-y)


def _aselect(x, y):
    ones = np.ones(np.broadcast_shapes(np.shape(x), np.shape(y)))
    x, y = x * ones, y * ones                 # autograd's where does not unbroadcast
    return anp.where(x > 0.5, x ** 2, anp.where(x < -0.5, anp.sin(y),
                                                anp.where(y > 0.0, x * y, -y)))


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1))])
def test_select_against_numpy_and_autograd(rng, shapes):
    x = rng.uniform(-1.5, 1.5, size=shapes[0])
    x = np.where(np.abs(np.abs(x) - 0.5) < 0.05, 1.0, x)      # away from the switches
    y = _point(rng, shapes[1])
    check(_select, (x, y), _aselect)
    check(lambda x: np.select([x > 0.5], [x ** 3]), (x,),
          lambda x: anp.where(x > 0.5, x ** 3, 0.0))
    check(_select, (x, y), dtype=np.float32)


def test_reductions_with_a_traced_where_mask(rng):
    """np.sum(x, where=x > 0), np.mean(x, axis=0, where=mask), np.max(..., where=,
    initial=) with masks computed from traced values: one tape for every mask (np.where
    selects; a mean divides by the mask's traced count, NaN for an empty line as numpy's),
    checked against numpy's values and central differences."""
    def f(x):
        m = x.reshape(3, 4)
        return (np.sum(x ** 2, where=x > 0) + np.nansum(np.mean(m ** 3, axis=0, where=m > -0.2))
                + np.max(x, where=x < 1.0, initial=-5.0) + np.min(m, axis=1, where=m > 0,
                                                                  initial=9.0).sum())
    vg = bn.value_and_grad(f)
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(3):
            x = rng.normal(size=12)
            value, g = vg(x)
            assert value == pytest.approx(f(x), rel=1e-13)
            np.testing.assert_allclose(g, central_diff(f, (x,), 0), rtol=1e-6, atol=1e-8)
    assert len(vg.tapes) == 1 and not vg.variants          # no decision, no variant


# ==============================================================================================
# errors
# ==============================================================================================

@pytest.mark.parametrize("call,error,words", [
    (lambda x: np.prod(x, dtype=int), bn.UnsupportedOpError, ["prod", "dtype"]),
    (lambda x: np.prod(x, out=np.zeros(())), bn.InplaceError, ["prod", "out="]),
    (lambda x: np.prod(x, initial=2.0), bn.UnsupportedOpError, ["initial"]),
    (lambda x: np.prod(x, where=x > 0), bn.UnsupportedOpError, ["where", "bnp.where"]),
    (lambda x: np.cumsum(x, dtype=np.int64), bn.UnsupportedOpError, ["cumsum", "dtype"]),
    (lambda x: np.cumsum(x, axis=2), bn.ShapeError, ["cumsum", "axis 2"]),
    # (argsort, argmax, argmin are decided under guards: tests/test_decided_masks.py)
    (lambda x: np.argpartition(x, 1), bn.UnsupportedOpError, ["numpy.argpartition"]),
    (lambda x: x.searchsorted(2.0), bn.UnsupportedMethodError,
     ["ndarray.searchsorted", "np.searchsorted(x, v)"]),
    (lambda x: x.argpartition(1), bn.UnsupportedMethodError,
     ["ndarray.argpartition", "neither differentiable"]),
    (lambda x: x.sort(order="a"), bn.UnsupportedOpError, ["sort", "order"]),
    (lambda x: np.sort(x, order="a"), bn.UnsupportedOpError, ["order"]),
    (lambda x: np.einsum("ij,jk->ik", x, x, out=np.zeros((3, 3))), bn.InplaceError,
     ["einsum", "out="]),
    (lambda x: np.einsum("ij,jk->ik", x, np.ones((4, 2))), bn.ShapeError,
     ["einsum", "'j'"]),
    (lambda x: np.einsum("ijk", x), bn.ShapeError, ["einsum", "'ijk'"]),
    (lambda x: np.einsum("ij->k", x), bn.ShapeError, ["einsum", "output"]),
    (lambda x: np.einsum("ij,jk", x), bn.ShapeError, ["einsum", "2 operand subscripts"]),
    (lambda x: np.tensordot(x, x, ([0], [0, 1])), bn.ShapeError, ["tensordot"]),
    (lambda x: np.select([x > 0], [x, x]), bn.ShapeError, ["select"]),
])
def test_errors_name_the_function_and_the_fix(call, error, words):
    x = np.arange(1.0, 10.0).reshape(3, 3)
    with pytest.raises(error) as e:
        bn.grad(lambda x: np.sum(call(x)))(x)
    for word in words:
        assert word in str(e.value), (word, str(e.value))


def test_plain_numpy_arrays_still_call_numpy(rng):
    x = rng.normal(size=(3, 4))
    np.testing.assert_array_equal(bnp.prod(x, axis=1), np.prod(x, axis=1))
    np.testing.assert_array_equal(bnp.cumsum(x), np.cumsum(x))
    np.testing.assert_array_equal(bnp.sort(x, axis=0), np.sort(x, axis=0))
    np.testing.assert_array_equal(bnp.argsort(x), np.argsort(x))
    np.testing.assert_array_equal(bnp.einsum("ij->j", x), np.einsum("ij->j", x))
    np.testing.assert_array_equal(bnp.tensordot(x, x.T, 1), np.tensordot(x, x.T, 1))
    np.testing.assert_array_equal(bnp.select([x > 0], [x]), np.select([x > 0], [x]))
