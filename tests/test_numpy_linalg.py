"""numpy.linalg on traced values (burnumba/numpy/linalg.py and the linalg rows of kernels/ops.py):
values against numpy, gradients against HIPS autograd (autograd.numpy.linalg) and central
differences, forward mode and second order, stacks of matrices, float64 and float32, the
singular and non-finite conventions and the errors.
"""
import zlib

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp

SIZES = [1, 2, 3, 5]
BATCHES = [(), (2,), (2, 3)]
TOL = {np.float64: dict(rtol=1e-9, atol=1e-10), np.float32: dict(rtol=2e-3, atol=2e-4)}


def _rng(*key):
    """A generator seeded by the test's own key (reproducible across processes)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def general(rng, batch, n):
    """Well conditioned, not symmetric, determinants of both signs."""
    a = rng.normal(size=batch + (n, n)) * 0.4 + np.eye(n) * 2.0
    return a * rng.choice([-1.0, 1.0], size=batch + (1, n))


def spd(rng, batch, n):
    """Symmetric positive definite with distinct, well separated eigenvalues."""
    q, _ = np.linalg.qr(rng.normal(size=batch + (n, n)))
    w = 1.0 + 0.9 * np.arange(n) + rng.uniform(0.0, 0.3, size=batch + (n,))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def weights(rng, shape):
    return rng.normal(size=shape)


def central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[j] = eps
        g[j] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def check_grad(f, af, x, dtype=np.float64, fd=True):
    """bn's value and gradient of the scalar f against autograd's (and central differences)."""
    xd = x.astype(dtype)
    value, g = bn.value_and_grad(f)(xd)
    assert g.dtype == dtype
    np.testing.assert_allclose(value, af(x), **TOL[dtype])
    want = autograd.grad(af)(x)
    np.testing.assert_allclose(g, want, **TOL[dtype])
    if fd and dtype == np.float64:
        np.testing.assert_allclose(g, central(af, x), rtol=1e-5, atol=1e-6)


def check_forward(f, x, rng, symmetric=False):
    """bn.jvp against the gradient (<grad, v>) and central differences. ``symmetric``: along
    symmetric directions only (cholesky reads one triangle, but its gradient is autograd's
    symmetric one, so the two agree on symmetric directions)."""
    v = rng.normal(size=x.shape)
    if symmetric:
        v = v + np.swapaxes(v, -1, -2)
    y, t = bn.jvp(f, (x,), (v,))
    np.testing.assert_allclose(y, bn.value_and_grad(f)(x)[0], rtol=1e-12)
    np.testing.assert_allclose(t, np.sum(bn.grad(f)(x) * v), rtol=1e-9, atol=1e-10)
    eps = 1e-6
    num = (bn.value_and_grad(f)(x + eps * v)[0] - bn.value_and_grad(f)(x - eps * v)[0]) / (
        2 * eps)
    np.testing.assert_allclose(t, num, rtol=1e-5, atol=1e-6)


# -- solve ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", SIZES)
def test_solve_matrix_rhs(n, batch, dtype):
    rng = _rng("solve", n, batch)
    a, b = general(rng, batch, n), rng.normal(size=batch + (n, 2))
    w = weights(rng, batch + (n, 2))
    x = bn.trace(lambda a: np.linalg.solve(a, b.astype(dtype)), a.astype(dtype))(a.astype(dtype))
    np.testing.assert_allclose(x, np.linalg.solve(a, b), **TOL[dtype])
    check_grad(lambda a: np.sum(np.linalg.solve(a, b) * w),
               lambda a: anp.sum(anp.linalg.solve(a, b) * w), a, dtype, fd=n <= 3)
    check_grad(lambda b: np.sum(np.linalg.solve(a, b) ** 2),
               lambda b: anp.sum(anp.linalg.solve(a, b) ** 2), b, dtype, fd=n <= 3)


@pytest.mark.parametrize("a_shape, b_shape, out", [
    ((3, 3), (3,), (3,)),                     # a vector only when b.ndim == 1 (numpy 2)
    ((2, 3, 3), (3, 2), (2, 3, 2)),           # b's stack broadcasts
    ((3, 3), (4, 3, 1), (4, 3, 1)),           # a's too
    ((2, 1, 3, 3), (4, 3, 2), (2, 4, 3, 2)),
])
def test_solve_follows_numpy2_shapes_and_broadcasting(a_shape, b_shape, out):
    rng = _rng("solve-shapes", a_shape, b_shape)
    a = general(rng, a_shape[:-2], 3)
    b = rng.normal(size=b_shape)
    w = weights(rng, out)
    x = bn.trace(lambda a, b: np.linalg.solve(a, b), a, b, argnums=(0, 1))(a, b)
    assert x.shape == out == np.linalg.solve(a, b).shape
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12)
    f = lambda a, b: np.sum(np.linalg.solve(a, b) * w)           # noqa: E731
    af = lambda a, b: anp.sum(anp.linalg.solve(a, b) * w)        # noqa: E731
    ga, gb = bn.grad(f, argnums=(0, 1))(a, b)
    # (autograd's solve does not sum a broadcast operand's gradient back to its shape)
    np.testing.assert_allclose(ga, central(lambda a: af(a, b), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, central(lambda b: af(a, b), b), rtol=1e-6, atol=1e-8)


def test_solve_and_bnp_linalg_are_the_same_function():
    a = general(_rng("bnp"), (), 3)
    b = np.arange(3.0)
    g1 = bn.grad(lambda a: np.sum(np.linalg.solve(a, b)))(a)
    g2 = bn.grad(lambda a: bnp.sum(bnp.linalg.solve(a, b)))(a)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_allclose(bnp.linalg.solve(a, b), np.linalg.solve(a, b))    # numpy arrays
    assert bnp.linalg.eigh(np.eye(2))[0].shape == (2,)


# -- inv, det, slogdet ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", SIZES)
def test_inv_det_slogdet(n, batch, dtype):
    rng = _rng("inv", n, batch)
    a = general(rng, batch, n)
    w = weights(rng, batch + (n, n))
    wd = weights(rng, batch) if batch else 1.3
    check_grad(lambda a: np.sum(np.linalg.inv(a) * w),
               lambda a: anp.sum(anp.linalg.inv(a) * w), a, dtype, fd=n <= 3)
    check_grad(lambda a: np.sum(np.linalg.det(a) * wd),
               lambda a: anp.sum(anp.linalg.det(a) * wd), a, dtype, fd=n <= 3)
    check_grad(lambda a: np.sum(np.linalg.slogdet(a)[1] * wd),
               lambda a: anp.sum(anp.linalg.slogdet(a)[1] * wd), a, dtype, fd=n <= 3)
    sign, logdet = (bn.trace(lambda a: np.linalg.slogdet(a)[k], a.astype(dtype))(
        a.astype(dtype)) for k in (0, 1))
    want = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign, want.sign)
    np.testing.assert_allclose(logdet, want.logabsdet, **TOL[dtype])


def test_slogdet_result_and_sign_gradient():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])                       # det -2
    res = bn.trace(lambda a: np.stack(np.linalg.slogdet(a)), a)(a)
    assert res[0] == -1.0 and np.isclose(res[1], np.log(2.0))
    traced = []
    bn.grad(lambda a: traced.append(type(np.linalg.slogdet(a))) or np.sum(a))(a)
    assert traced[0] is type(np.linalg.slogdet(a))              # SlogdetResult, numpy's
    assert np.all(bn.grad(lambda a: np.linalg.slogdet(a).sign * 3.0)(a) == 0.0)
    np.testing.assert_allclose(bn.grad(lambda a: np.linalg.det(a))(a), [[4.0, -3.0], [-2.0, 1.0]])


def test_det_gradient_near_singular_and_at_singular():
    # near singular (det 1e-9): det * A^-T stays accurate (it is the cofactor matrix)
    a = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]])
    g = bn.grad(lambda a: np.linalg.det(a))(a)
    np.testing.assert_allclose(g, [[4.0 + 1e-9, -2.0], [-2.0, 1.0]], rtol=1e-6)
    np.testing.assert_allclose(g, autograd.grad(anp.linalg.det)(a), rtol=1e-6)
    # exactly singular: numpy's (0, -inf) and det 0; the gradient is NaN, never a wrong 0
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    value, g = bn.value_and_grad(lambda a: np.linalg.det(a))(s)
    assert value == 0.0 and np.all(np.isnan(g))
    sign, logdet = bn.trace(lambda a: np.stack(np.linalg.slogdet(a)), s)(s)
    assert sign == 0.0 and logdet == -np.inf


# -- cholesky ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", SIZES)
def test_cholesky(n, batch, dtype):
    rng = _rng("chol", n, batch)
    a = spd(rng, batch, n)
    w = weights(rng, batch + (n, n))
    L = bn.trace(lambda a: np.linalg.cholesky(a), a.astype(dtype))(a.astype(dtype))
    np.testing.assert_allclose(L, np.linalg.cholesky(a), **TOL[dtype])
    check_grad(lambda a: np.sum(np.linalg.cholesky(a) * w),
               lambda a: anp.sum(anp.linalg.cholesky(a) * w), a, dtype, fd=False)


def test_cholesky_reads_one_triangle_and_upper():
    rng = _rng("chol-upper")
    a = spd(rng, (), 3)
    w = weights(rng, (3, 3))
    junk = a + np.triu(rng.normal(size=(3, 3)), 1)             # the upper triangle is not read
    L = bn.trace(lambda a: np.linalg.cholesky(a), junk)(junk)
    np.testing.assert_allclose(L, np.linalg.cholesky(a), rtol=1e-12)
    junk_l = a + np.tril(rng.normal(size=(3, 3)), -1)
    U = bn.trace(lambda a: np.linalg.cholesky(a, upper=True), junk_l)(junk_l)
    np.testing.assert_allclose(U, np.linalg.cholesky(a, upper=True), rtol=1e-12)
    # the gradient is autograd's symmetric one, which central differences see on
    # symmetric perturbations
    g = bn.grad(lambda a: np.sum(np.linalg.cholesky(a) * w))(a)
    np.testing.assert_allclose(g, g.T, rtol=1e-12)
    v = rng.normal(size=(3, 3))
    v = v + v.T
    eps = 1e-6
    f = lambda a: np.sum(np.linalg.cholesky(a) * w)                # noqa: E731
    num = (f(a + eps * v) - f(a - eps * v)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * v), num, rtol=1e-6)


# -- eigh, eigvalsh ---------------------------------------------------------------------------
def _sign_free(U, W):
    """A loss of eigenvectors that does not depend on their signs."""
    return (U * W) ** 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", SIZES)
def test_eigh(n, batch, dtype):
    rng = _rng("eigh", n, batch)
    a = spd(rng, batch, n) - 2.0 * np.eye(n)                     # eigenvalues of both signs
    w = weights(rng, batch + (n, n))
    v = weights(rng, batch + (n,))
    vals, vecs = (bn.trace(lambda a: np.linalg.eigh(a)[k], a.astype(dtype))(a.astype(dtype))
                  for k in (0, 1))
    want = np.linalg.eigh(a)
    np.testing.assert_allclose(vals, want.eigenvalues, **TOL[dtype])
    # eigenvectors up to sign: ours have their largest entry positive
    s = np.sign(np.take_along_axis(want.eigenvectors, np.argmax(
        np.abs(want.eigenvectors), axis=-2)[..., None, :], axis=-2))
    np.testing.assert_allclose(vecs, want.eigenvectors * s, **TOL[dtype])
    check_grad(lambda a: np.sum(np.linalg.eigh(a)[0] * v) + np.sum(
        _sign_free(np.linalg.eigh(a)[1], w)),
        lambda a: anp.sum(anp.linalg.eigh(a)[0] * v) + anp.sum(
            _sign_free(anp.linalg.eigh(a)[1], w)), a, dtype, fd=False)
    check_grad(lambda a: np.sum(np.linalg.eigvalsh(a) * v),
               lambda a: anp.sum(anp.linalg.eigh(a)[0] * v), a, dtype, fd=False)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_triangle_gradients_match_autograd(uplo):
    rng = _rng("eigh-uplo", uplo)
    a = spd(rng, (), 4) + rng.normal(size=(4, 4)) * 0.3           # not symmetric: one triangle
    w = weights(rng, (4, 4))
    f = lambda a: np.sum(np.linalg.eigh(a, UPLO=uplo)[0] ** 2) + np.sum(  # noqa: E731
        _sign_free(np.linalg.eigh(a, UPLO=uplo)[1], w))
    af = lambda a: anp.sum(anp.linalg.eigh(a, UPLO=uplo)[0] ** 2) + anp.sum(  # noqa: E731
        _sign_free(anp.linalg.eigh(a, UPLO=uplo)[1], w))
    value, g = bn.value_and_grad(f)(a)
    np.testing.assert_allclose(value, af(a), rtol=1e-10)
    np.testing.assert_allclose(g, autograd.grad(af)(a), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g, central(af, a), rtol=1e-5, atol=1e-6)
    untouched = np.triu(g, 1) if uplo == "L" else np.tril(g, -1)
    assert np.all(untouched == 0.0)


def test_eigh_repeated_eigenvalues_keep_eigenvalue_gradients():
    g = bn.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 2))(np.eye(3))
    np.testing.assert_allclose(g, 2.0 * np.eye(3))


# -- svd --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2), (2, 2, 5), (1, 1)])
def test_svd(shape, dtype):
    rng = _rng("svd", shape)
    a = rng.normal(size=shape)
    k = min(shape[-2:])
    if k > 1:      # well separated singular values
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        a = (u * np.linspace(3.0, 1.0, k)) @ vh
    ws = weights(rng, shape[:-2] + (k,))
    wu = weights(rng, shape[:-1] + (k,))
    s = bn.trace(lambda a: np.linalg.svd(a, compute_uv=False), a.astype(dtype))(a.astype(dtype))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), **TOL[dtype])
    U, s2, Vh = (bn.trace(lambda a: np.linalg.svd(a, full_matrices=False)[k], a)(a)
                 for k in range(3))
    np.testing.assert_allclose((U * s2[..., None, :]) @ Vh, a, rtol=1e-9, atol=1e-10)
    eye = np.broadcast_to(np.eye(k), U.shape[:-2] + (k, k))
    np.testing.assert_allclose(np.swapaxes(U, -1, -2) @ U, eye, atol=1e-9)
    check_grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False) * ws),
               lambda a: anp.sum(anp.linalg.svd(a, compute_uv=False) * ws), a, dtype)
    check_grad(lambda a: np.sum(_sign_free(np.linalg.svd(a, full_matrices=False)[0], wu)),
               lambda a: anp.sum(_sign_free(anp.linalg.svd(a, full_matrices=False)[0], wu)),
               a, dtype, fd=False)


def test_svd_is_accurate_for_ill_conditioned_matrices():
    """eigh of [[0, A], [A^T, 0]] keeps s to eps * s_max (the Gram matrix A^T A would lose
    small singular values: 1e-7 came out 5e-4 off, relatively)."""
    rng = _rng("svd-ill")
    q1, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    q2, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    s = np.array([1.0, 1e-4, 1e-7])
    a = (q1[:, :3] * s) @ q2.T
    got = bn.trace(lambda a: np.linalg.svd(a, compute_uv=False), a)(a)
    np.testing.assert_allclose(got, np.linalg.svd(a, compute_uv=False), rtol=1e-8)
    np.testing.assert_allclose(got, s, rtol=1e-8)


@pytest.mark.parametrize("shape", [(4, 2), (2, 5), (3, 3)])
def test_svd_second_order_with_a_null_space(shape):
    """Non-square: |m - n| zero eigenvalues of the augmented matrix, repeated; their vectors
    get no gradient and no NaN, at orders 1 and 2."""
    rng = _rng("svd-h", shape)
    a = rng.normal(size=shape)
    wu = weights(rng, (shape[0], min(shape)))
    f = lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 3) + np.sum(  # noqa: E731
        _sign_free(np.linalg.svd(a, full_matrices=False)[0], wu))
    af = lambda a: anp.sum(anp.linalg.svd(a, compute_uv=False) ** 3) + anp.sum(  # noqa: E731
        _sign_free(anp.linalg.svd(a, full_matrices=False)[0], wu))
    np.testing.assert_allclose(bn.grad(f)(a), autograd.grad(af)(a), rtol=1e-8, atol=1e-10)
    H = bn.hessian(f)(a)
    assert np.all(np.isfinite(H))
    np.testing.assert_allclose(H, autograd.hessian(af)(a), rtol=1e-6, atol=1e-8)
    check_forward(f, a, rng)


def test_eigh_repeated_eigenvalues_with_eigenvector_loss_is_nan_in_reverse_mode():
    # the eigenvectors are not unique there; autograd gives NaN too (never a silent number)
    g = bn.grad(lambda a: np.sum(np.linalg.eigh(a)[1][:, 0] * np.arange(3.0)))(np.eye(3))
    assert not np.all(np.isfinite(g))


def test_svd_full_matrices_on_non_square_is_refused_with_the_fix():
    with pytest.raises(bn.UnsupportedOpError, match="full_matrices=False"):
        bn.grad(lambda a: np.sum(np.linalg.svd(a)[1]))(np.ones((3, 2)))
    # square: full_matrices=True is the same as False
    a = general(_rng("svd-sq"), (), 3)
    U = bn.trace(lambda a: np.linalg.svd(a)[0], a)(a)
    assert U.shape == (3, 3)


# -- norm -------------------------------------------------------------------------------------
VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5, -1.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


def _anorm_vector(x, ord, axis, keepdims):
    """numpy's vector norms written with autograd (its norm lacks some orders' gradients)."""
    if axis is None:
        axis = 0
    ax = anp.abs(x)
    if ord is None or ord == 2:
        return anp.sqrt(anp.sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return anp.max(ax, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return anp.min(ax, axis=axis, keepdims=keepdims)
    return anp.sum(ax ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _anorm_matrix(x, ord, axis, keepdims):
    """numpy's matrix norms written with autograd."""
    r, c = (k % x.ndim for k in axis)
    if ord in (2, -2, "nuc"):
        rest = [k for k in range(x.ndim) if k not in (r, c)]
        s = anp.linalg.svd(anp.transpose(x, rest + [r, c]), compute_uv=False)
        out = anp.max(s, -1) if ord == 2 else anp.min(s, -1) if ord == -2 else anp.sum(s, -1)
    elif ord in (None, "fro"):
        out = anp.sqrt(anp.sum(x * x, axis=(r, c)))
    elif ord in (1, -1):
        red = anp.max if ord == 1 else anp.min
        out = red(anp.sum(anp.abs(x), axis=r), axis=c - 1 if c > r else c)
    else:
        red = anp.max if ord == np.inf else anp.min
        out = red(anp.sum(anp.abs(x), axis=c), axis=r - 1 if r > c else r)
    if keepdims:
        shape = list(x.shape)
        shape[r] = shape[c] = 1
        out = anp.reshape(out, shape)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (-1, True), (1, False)])
def test_vector_norms(ord, axis, keepdims, dtype):
    rng = _rng("vnorm", ord, axis)
    x = rng.normal(size=(5,) if axis is None else (3, 4))
    x = np.where(np.abs(x) < 0.1, 0.5, x)                       # away from abs's kink
    w = weights(rng, np.linalg.norm(x, ord, axis, keepdims).shape)
    got = bn.trace(lambda x: np.linalg.norm(x, ord, axis, keepdims), x.astype(dtype))(
        x.astype(dtype))
    np.testing.assert_allclose(got, np.linalg.norm(x, ord, axis, keepdims), **TOL[dtype])
    check_grad(lambda x: np.sum(np.linalg.norm(x, ord, axis, keepdims) * w),
               lambda x: anp.sum(_anorm_vector(x, ord, axis, keepdims) * w), x, dtype)


def test_vector_norm_order_0_counts_and_has_no_gradient():
    x = np.array([0.0, 2.0, -3.0, 0.0])
    v, g = bn.value_and_grad(lambda x: np.linalg.norm(x, 0))(x)
    assert v == 2.0 and np.all(g == 0.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
@pytest.mark.parametrize("shape, axis, keepdims", [
    ((3, 4), None, False), ((4, 3), (0, 1), True), ((2, 3, 4), (2, 1), False),
    ((3, 2, 4), (0, -1), True)])
def test_matrix_norms(ord, shape, axis, keepdims, dtype):
    rng = _rng("mnorm", ord, shape)
    x = rng.normal(size=shape)
    x = np.where(np.abs(x) < 0.1, 0.5, x)
    want = np.linalg.norm(x, ord, axis, keepdims)
    w = weights(rng, np.shape(want))
    got = bn.trace(lambda x: np.linalg.norm(x, ord, axis, keepdims), x.astype(dtype))(
        x.astype(dtype))
    np.testing.assert_allclose(got, want, **TOL[dtype])
    ax = axis if axis is not None else (0, 1)
    check_grad(lambda x: np.sum(np.linalg.norm(x, ord, axis, keepdims) * w),
               lambda x: anp.sum(_anorm_matrix(x, ord, ax, keepdims) * w), x, dtype)


def test_norm_of_any_array_and_errors():
    x = np.arange(1.0, 25.0).reshape(2, 3, 4)
    g = bn.grad(lambda x: np.linalg.norm(x))(x)
    np.testing.assert_allclose(g, x / np.linalg.norm(x))
    with pytest.raises(bn.ShapeError, match="norm"):
        bn.grad(lambda x: np.linalg.norm(x, 1))(x)
    with pytest.raises(bn.ShapeError, match="invalid norm order"):
        bn.grad(lambda x: np.linalg.norm(x, 3, axis=(0, 1)))(x)


@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 3], ids=str)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (None, True), (1, False),
                                            ((0, 2), True), ((2, 0), False)])
def test_numpy2_vector_norm(ord, axis, keepdims):
    rng = _rng("vector_norm", ord, axis)
    x = rng.normal(size=(2, 3, 4))
    x = np.where(np.abs(x) < 0.1, 0.5, x)
    want = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    w = weights(rng, np.shape(want))
    value, g = bn.value_and_grad(
        lambda x: np.sum(np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord) * w))(x)
    np.testing.assert_allclose(value, np.sum(want * w), rtol=1e-12)
    f = lambda x: np.sum(np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord) * w)  # noqa: E731,E501
    np.testing.assert_allclose(g, central(f, x), rtol=1e-5, atol=1e-7)


def test_numpy2_matrix_norm_and_svdvals():
    rng = _rng("matrix_norm")
    x = rng.normal(size=(2, 3, 4))
    for ord in MATRIX_ORDS:
        for keepdims in (False, True):
            want = np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims)
            got = bn.trace(lambda x: np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims), x)(x)
            np.testing.assert_allclose(got, want, rtol=1e-10)
    g = bn.grad(lambda x: np.sum(np.linalg.svdvals(x) * np.array([1.0, 2.0, 3.0])))(x)
    want = autograd.grad(lambda x: anp.sum(anp.linalg.svd(x, compute_uv=False) * np.array(
        [1.0, 2.0, 3.0])))(x)
    np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-10)


# -- forward mode and second order ------------------------------------------------------------
_RHS = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
FORWARD = {
    "solve": (lambda a: np.sum(np.linalg.solve(a, _RHS) ** 2),
              lambda a: anp.sum(anp.linalg.solve(a, _RHS) ** 2),
              general),
    "inv": (lambda a: np.sum(np.linalg.inv(a) * np.arange(9.0).reshape(3, 3)),
            lambda a: anp.sum(anp.linalg.inv(a) * np.arange(9.0).reshape(3, 3)), general),
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], lambda a: anp.linalg.slogdet(a)[1], general),
    "det": (lambda a: np.linalg.det(a), lambda a: anp.linalg.det(a), general),
    "cholesky": (lambda a: np.sum(np.linalg.cholesky(a) * np.arange(9.0).reshape(3, 3)),
                 lambda a: anp.sum(anp.linalg.cholesky(a) * np.arange(9.0).reshape(3, 3)), spd),
    "eigh": (lambda a: np.sum(np.linalg.eigh(a)[0] * np.array([1.0, -2.0, 0.5])) + np.sum(
        np.linalg.eigh(a)[1] ** 2 * np.arange(9.0).reshape(3, 3)),
        lambda a: anp.sum(anp.linalg.eigh(a)[0] * np.array([1.0, -2.0, 0.5])) + anp.sum(
            anp.linalg.eigh(a)[1] ** 2 * np.arange(9.0).reshape(3, 3)), spd),
    "svd": (lambda a: np.sum(np.linalg.svd(a, compute_uv=False) * np.array([1.0, 2.0, 3.0])),
            lambda a: anp.sum(anp.linalg.svd(a, compute_uv=False) * np.array([1.0, 2.0, 3.0])),
            general),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_mode_and_hessian(name):
    f, af, make = FORWARD[name]
    rng = _rng("fwd", name)
    a = make(rng, (), 3)
    check_forward(f, a, rng, symmetric=name == "cholesky")
    H = bn.hessian(f)(a)
    # eigh and cholesky: autograd's gradient is symmetrized, so its hessian is too
    np.testing.assert_allclose(H, autograd.hessian(af)(a), rtol=1e-7, atol=1e-9)


def test_forward_mode_on_stacks():
    rng = _rng("fwd-stack")
    a = spd(rng, (2,), 3)
    v = rng.normal(size=a.shape)
    for f in (lambda a: np.sum(np.linalg.cholesky(a) ** 2),
              lambda a: np.sum(np.linalg.slogdet(a)[1]),
              lambda a: np.sum(np.linalg.inv(a)), lambda a: np.sum(np.linalg.eigvalsh(a) ** 3)):
        _, t = bn.jvp(f, (a,), (v,))
        np.testing.assert_allclose(t, np.sum(bn.grad(f)(a) * v), rtol=1e-9)


# -- singular and non-finite input, errors ----------------------------------------------------
def test_singular_and_not_positive_definite_give_nan_and_debug_nans_names_the_op():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    value, g = bn.value_and_grad(lambda a: np.sum(np.linalg.solve(a, np.ones(2))))(s)
    assert np.isnan(value) and np.all(np.isnan(g))
    value, g = bn.value_and_grad(lambda a: np.sum(np.linalg.inv(a)))(s)
    assert np.isnan(value) and np.all(np.isnan(g))
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]])
    value = bn.value_and_grad(lambda a: np.sum(np.linalg.cholesky(a)))(indefinite)[0]
    assert np.isnan(value)
    for f, x, op in [(lambda a: np.sum(np.linalg.solve(a, np.ones(2))), s, "solve"),
                     (lambda a: np.sum(np.linalg.cholesky(a)), -np.eye(2), "cholesky")]:
        with pytest.raises(FloatingPointError) as e, bn.debug_nans():
            bn.value_and_grad(f)(x)
        assert op in str(e.value) and "test_numpy_linalg.py" in str(e.value)


def test_complex_and_non_square_input_errors_name_the_function_and_the_fix():
    with pytest.raises(bn.UnsupportedOpError, match="numpy.linalg.solve: complex"):
        bn.grad(lambda a: np.sum(np.linalg.solve(a, np.array([1j, 2.0]))))(np.eye(2))
    for name, call in [("inv", lambda a: np.linalg.inv(a)), ("det", lambda a: np.linalg.det(a)),
                       ("cholesky", lambda a: np.linalg.cholesky(a)),
                       ("eigh", lambda a: np.linalg.eigh(a)[0]),
                       ("solve", lambda a: np.linalg.solve(a, np.ones(2)))]:
        with pytest.raises(bn.ShapeError, match=f"numpy.linalg.{name}.*square"):
            bn.grad(lambda a: np.sum(call(a)))(np.ones((2, 3)))
    with pytest.raises(bn.ShapeError, match="numpy.linalg.solve"):
        bn.grad(lambda a: np.sum(np.linalg.solve(a, np.ones(3))))(np.eye(2))


# -- least squares (lstsq, pinv) for matrices of full rank: Björck's augmented solve
LSQ_SHAPES = [(6, 3), (9, 2), (4, 4), (2, 5), (1, 3), (5, 1)]


@pytest.mark.parametrize("shape", LSQ_SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pinv(shape, dtype):
    a = _rng("pinv", shape).normal(size=shape)
    w = weights(_rng("pinv-w", shape), shape[::-1])
    check_grad(lambda a: np.sum(np.linalg.pinv(a) * w), lambda a: anp.sum(anp.linalg.pinv(a) * w),
               a, dtype)
    got = bn.trace(lambda a: np.linalg.pinv(a), a.astype(dtype))(a.astype(dtype))
    np.testing.assert_allclose(got, np.linalg.pinv(a.astype(dtype)), **TOL[dtype])


def test_pinv_of_stacks_forward_mode_and_rtol():
    a = _rng("pinv-stack").normal(size=(2, 3, 5, 3))
    got = bn.trace(lambda a: np.linalg.pinv(a, rtol=None), a)(a)
    np.testing.assert_allclose(got, np.linalg.pinv(a), rtol=1e-12, atol=1e-13)
    t = _rng("pinv-t").normal(size=a.shape)
    _, tangent = bn.jvp(lambda a: np.sum(np.linalg.pinv(a) ** 2), (a,), (t,))
    g = autograd.grad(lambda a: anp.sum(anp.linalg.pinv(a) ** 2))(a)
    assert tangent == pytest.approx(float(np.sum(g * t)), rel=1e-9)


@pytest.mark.parametrize("shape", LSQ_SHAPES)
@pytest.mark.parametrize("k", [None, 2])
def test_lstsq_against_numpy_and_the_normal_equations(shape, k):
    rng = _rng("lstsq", shape, k)
    a = rng.normal(size=shape)
    b = rng.normal(size=(shape[0],) if k is None else (shape[0], k))
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=None)
    ranks = []

    def part(i):
        def f(a, b):
            out = np.linalg.lstsq(a, b, rcond=None)
            ranks.append(out[2])
            return out[i]
        return bn.trace(f, a, b, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(part(0), x, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(part(1), res, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(part(3), s, rtol=1e-12)
    assert ranks == [rank] * 3 and isinstance(ranks[0], int)
    # the gradient in a and b: autograd's pinv(a) @ b (pinv has autograd's derivative)
    wx = rng.normal(size=x.shape)
    f = lambda a, b: np.sum(np.linalg.lstsq(a, b, rcond=None)[0] * wx)  # noqa: E731
    af = lambda a, b: anp.sum(anp.dot(anp.linalg.pinv(a), b) * wx)  # noqa: E731
    for k_arg in (0, 1):
        np.testing.assert_allclose(bn.grad(f, argnums=k_arg)(a, b),
                                   autograd.grad(af, k_arg)(a, b), rtol=1e-9, atol=1e-11)
    if shape[0] > shape[1]:                      # the residuals' gradient
        wr = rng.normal(size=res.shape)
        g = bn.grad(lambda a: np.sum(np.linalg.lstsq(a, b, rcond=None)[1] * wr))(a)
        fd = central(lambda a: np.sum(np.linalg.lstsq(a, b, rcond=None)[1] * wr), a)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_lstsq_is_accurate_where_the_normal_equations_are_not():
    # a degree-8 Vandermonde matrix, condition 6e5: the normal equations lose 1e-6
    a = np.vander(np.linspace(0.0, 1.0, 20), 9)
    b = np.sin(np.linspace(0.0, 3.0, 20))
    x = bn.trace(lambda a, b: np.linalg.lstsq(a, b)[0], a, b)(a, b)
    ref = np.linalg.lstsq(a, b)[0]
    assert np.abs(x - ref).max() <= 1e-10 * np.abs(ref).max()


def test_rank_deficient_least_squares_is_refused_and_rank_is_a_guard():
    a = _rng("rank").normal(size=(6, 3))
    low = a.copy()
    low[:, 2] = low[:, 0]
    for f in (lambda a: np.sum(np.linalg.pinv(a)),
              lambda a: np.sum(np.linalg.lstsq(a, np.ones(6))[0])):
        g = bn.grad(f)
        g(a)
        with pytest.raises(bn.UnsupportedOpError, match="rank 2.*ridge"):
            g(low)                               # the rank guard fails: a new trace refuses
        assert np.all(np.isfinite(g(a)))
    with pytest.raises(bn.ShapeError, match=r"\(m, n\)"):
        bn.grad(lambda a: np.sum(np.linalg.lstsq(a, np.ones(3))[0]))(a)


@pytest.mark.parametrize("deg, weighted, columns", [(1, False, None), (3, False, None),
                                                   (3, True, None), (2, False, 2)])
def test_polyfit_against_numpy_and_central_differences(deg, weighted, columns):
    rng = _rng("polyfit", deg, weighted, columns)
    x = np.sort(rng.uniform(-1.0, 2.0, 12))
    y = rng.normal(size=(12,) if columns is None else (12, columns))
    kw = {"w": rng.uniform(0.5, 1.5, 12)} if weighted else {}
    got = bn.trace(lambda x, y: np.polyfit(x, y, deg, **kw), x, y, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(got, np.polyfit(x, y, deg, **kw), rtol=1e-11, atol=1e-12)
    u = rng.normal(size=np.shape(got))
    for k, arg in enumerate((x, y)):
        def f(a):
            xy = [x, y]
            xy[k] = a
            return np.sum(np.polyfit(*xy, deg, **kw) * u)
        np.testing.assert_allclose(bn.grad(f)(arg), central(f, arg), rtol=1e-5, atol=1e-6)
    full = bn.trace(lambda y: np.polyfit(x, y, deg, full=True)[1], y)(y)
    np.testing.assert_allclose(full, np.polyfit(x, y, deg, full=True)[1], rtol=1e-10)
    with pytest.raises(bn.UnsupportedOpError, match="cov"):
        bn.grad(lambda y: np.sum(np.polyfit(x, y, deg, cov=True)[0]))(y)


def test_logspace_with_traced_endpoints():
    a = np.array([0.5, 2.0])
    for kw in ({}, {"base": 2.0, "endpoint": False}, {"num": 4, "base": np.array([2.0, 3.0])}):
        got = bn.trace(lambda a: np.logspace(a[0], a[1] + np.zeros(2), **kw), a)(a)
        np.testing.assert_allclose(got, np.logspace(a[0], a[1] + np.zeros(2), **kw),
                                   rtol=1e-14)
        f = lambda a: np.sum(np.logspace(a[0], a[1] + np.zeros(2), **kw))  # noqa: E731
        np.testing.assert_allclose(bn.grad(f)(a), central(f, a), rtol=1e-6)
