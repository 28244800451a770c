"""Tensor ops: matmul, axis reductions, shaping, indexing and embedding lookups, joining and
splitting, where / masked_fill, softmax and friends, cross_entropy, layer_norm, gelu, float32
and the errors of all these.

Every op is checked against HIPS autograd (rtol 1e-10) and against central differences of
burnumba's own forward value (rtol 1e-5), in float64, at random points and over several shapes,
including numpy broadcasting (size-1 dimensions, scalars with tensors, batch dimensions of
matmul that differ but broadcast). The reference implementations of the neural-network
functions (softmax, log_softmax, logsumexp, cross_entropy, layer_norm, gelu) are written here
with autograd.numpy, independently of burnumba.
"""
import functools
import json
import math
import os
import subprocess
import sys

import autograd
import autograd.numpy as anp
import warnings

import numpy as np
import pytest
from autograd.scipy.special import erf as a_erf
from hypothesis import given
from hypothesis import strategies as st

import burnumba as bn
from conftest import central_diff

# -- autograd references ----------------------------------------------------------------------


def a_logsumexp(x, axis=-1, keepdims=False):
    m = anp.max(x, axis=axis, keepdims=True)
    r = anp.log(anp.sum(anp.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else anp.squeeze(r, axis=axis)


def a_softmax(x, axis=-1):
    e = anp.exp(x - anp.max(x, axis=axis, keepdims=True))
    return e / anp.sum(e, axis=axis, keepdims=True)


def a_log_softmax(x, axis=-1):
    return x - a_logsumexp(x, axis=axis, keepdims=True)


def a_cross_entropy(logits, targets):
    onehot = np.eye(logits.shape[-1])[targets]
    return -anp.mean(anp.sum(a_log_softmax(logits, axis=-1) * onehot, axis=-1))


def a_layer_norm(x, weight=None, bias=None, eps=1e-5):
    mu = anp.mean(x, axis=-1, keepdims=True)
    var = anp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / anp.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def a_gelu(x, approximate=True):
    if approximate:        # the tanh form, as jax.nn.gelu(approximate=True)
        return 0.5 * x * (1.0 + anp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + a_erf(x / math.sqrt(2.0)))


def a_masked_fill(x, mask, value):
    return anp.where(mask, value, x)


# -- exact, numerically stable values in plain numpy (for the large-logit tests) --------------

def np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_logsumexp(x, axis=-1, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


# -- the checker --------------------------------------------------------------------------------

def _atol(ref, scale=1e-11):
    return scale * max(1.0, float(np.max(np.abs(ref))) if np.size(ref) else 1.0)


def check(ours, theirs, *args, argnums=None, rtol=1e-10, fd=True, fd_rtol=1e-5):
    """Value and gradient of every argument in ``argnums`` (default: all) against autograd,
    and against central differences of burnumba's forward value. Arguments outside argnums
    (integer index arrays) are data. Returns the value_and_grad function (its tape cache)."""
    if argnums is None:
        argnums = tuple(range(len(args)))
    vg = bn.value_and_grad(ours, argnums=argnums)
    value, g = vg(*args)
    ref_value = theirs(*args)
    ref = autograd.grad(theirs, argnum=argnums)(*args)
    np.testing.assert_allclose(value, ref_value, rtol=1e-11, atol=_atol(ref_value))
    assert len(g) == len(argnums)
    for k, gk, rk in zip(argnums, g, ref):
        assert np.shape(gk) == np.shape(args[k]), (k, np.shape(gk), np.shape(args[k]))
        np.testing.assert_allclose(gk, rk, rtol=rtol, atol=_atol(rk),
                                   err_msg=f"gradient of argument {k} vs autograd")
        if fd:
            num = central_diff(lambda *a: vg(*a)[0], args, k)
            np.testing.assert_allclose(gk, num, rtol=fd_rtol, atol=1e-6,
                                       err_msg=f"gradient of argument {k} vs central differences")
    # the cached tape, run again at the same point after other points: the same answer
    # (nothing left over in the gradient or scratch buffers)
    value2, g2 = vg(*args)
    assert value2 == value
    for gk, gk2 in zip(g, g2):
        np.testing.assert_array_equal(gk2, gk)
    assert len(vg.tapes) == 1
    return vg


# ==============================================================================================
# matmul / @ / np.matmul / np.dot
# ==============================================================================================

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),               # (M,K)@(K,N)
    ((2, 3, 4), (4, 5)),            # (B,T,C)@(C,D)
    ((2, 2, 3, 4), (2, 2, 4, 3)),   # (B,H,T,d)@(B,H,d,T)
    ((4,), (4, 5)),                 # (K,)@(K,N)
    ((3, 4), (4,)),                 # (M,K)@(K,)
    ((4,), (4,)),                   # (K,)@(K,)
    ((2, 3, 4), (4,)),              # (B,M,K)@(K,)
    ((4,), (2, 4, 3)),              # (K,)@(B,K,N)
    ((2, 3, 4), (2, 4, 5)),         # same batch
    ((3, 4), (2, 4, 5)),            # (M,K)@(B,K,N)
    ((2, 1, 3, 4), (3, 4, 5)),      # (B,1,M,K)@(H,K,N): batch dims broadcast to (2, 3)
    ((1, 3, 4), (2, 4, 5)),         # size-1 batch on the left
    ((2, 3, 4), (1, 4, 5)),         # size-1 batch on the right
    ((2, 1, 3, 4), (1, 2, 4, 5)),   # both sides broadcast
    ((1, 4), (4, 1)),               # size-1 M and N
    ((1, 300), (300, 40)),          # a vector times a matrix beyond BLAS's threshold: loops
    ((3, 70), (70, 9)),             # ... with up to 4 rows (N not a multiple of 4)
    ((2, 5, 64), (64, 33)),         # 10 rows folded: BLAS
    ((2, 3, 8, 4), (2, 3, 4, 8)),   # attention's per-head products, B small (K * N <= 4096):
    ((2, 3, 8, 8), (2, 3, 8, 4)),   # sums in registers, four columns at a time
    ((2, 6, 7), (2, 7, 5)),         # ... with K and N not multiples of 4
    ((7, 6), (6, 9)),               # ... one product of several rows
    ((1, 16), (16, 16)),            # one row: dA four columns in registers, dB rank-1 updates
    ((2, 9), (9, 37)),              # up to 4 rows, N >= 32: the row loop that vectorizes
    ((2, 2, 1, 48), (2, 1, 48, 64)),  # ... batched, and beyond BLAS's threshold (one row)
]
MM_IDS = [f"{a}@{b}".replace(" ", "") for a, b in MATMUL_SHAPES]


def _matmul_forms(sa, sb):
    forms = {"at": (lambda a, b: a @ b), "np.matmul": np.matmul}
    if len(sb) <= 2:               # np.dot agrees with matmul when b is 1-D or 2-D
        forms["np.dot"] = np.dot
    return forms


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=MM_IDS)
def test_matmul_against_autograd_and_differences(rng, sa, sb):
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    expected = np.matmul(a, b)
    w = rng.normal(size=expected.shape)
    for name, form in _matmul_forms(sa, sb).items():
        # both traced
        check(lambda a, b: np.sum(np.tanh(form(a, b)) * w),
              lambda a, b: anp.sum(anp.tanh(anp.matmul(a, b)) * w), a, b)
        # a traced, b a captured constant, and the other way round
        check(lambda a: np.sum(form(a, b) * w), lambda a: anp.sum(anp.matmul(a, b) * w), a,
              fd=False)
        check(lambda b: np.sum(form(a, b) * w), lambda b: anp.sum(anp.matmul(a, b) * w), b,
              fd=False)
        # the value itself, and vjp with a tensor cotangent
        y, pull = bn.vjp(form, a, b)
        assert np.shape(y) == expected.shape, name
        np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)
        ga, gb = pull(w)
        ra, rb = autograd.grad(lambda a, b: anp.sum(anp.matmul(a, b) * w), argnum=(0, 1))(a, b)
        np.testing.assert_allclose(ga, ra, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gb, rb, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES[:4] + MATMUL_SHAPES[10:11],
                         ids=MM_IDS[:4] + MM_IDS[10:11])
def test_matmul_at_random_points_on_one_tape(sa, sb):
    """One traced tape, many random points (new values never retrace)."""
    w = np.random.default_rng(1).normal(size=np.matmul(np.ones(sa), np.ones(sb)).shape)
    vg = bn.value_and_grad(lambda a, b: np.sum(np.sin(a @ b) * w), argnums=(0, 1))
    ref = autograd.grad(lambda a, b: anp.sum(anp.sin(anp.matmul(a, b)) * w), argnum=(0, 1))

    @given(st.integers(0, 2 ** 32 - 1), st.floats(0.1, 10.0))
    def run(seed, scale):
        r = np.random.default_rng(seed)
        a, b = scale * r.normal(size=sa), r.normal(size=sb)
        _, (ga, gb) = vg(a, b)
        ra, rb = ref(a, b)
        np.testing.assert_allclose(ga, ra, rtol=1e-10, atol=_atol(ra))
        np.testing.assert_allclose(gb, rb, rtol=1e-10, atol=_atol(rb))

    run()
    assert len(vg.tapes) == 1


@st.composite
def matmul_shapes(draw):
    """Two operand shapes numpy.matmul accepts: 1-D operands, and batch dimensions that
    broadcast (some dropped, some set to 1)."""
    M, K, N = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(st.lists(st.integers(1, 3), max_size=3))

    def side():
        b = batch[draw(st.integers(0, len(batch))):]
        return tuple(1 if draw(st.booleans()) else d for d in b)

    sa = (K,) if draw(st.integers(0, 4)) == 0 else side() + (M, K)
    sb = (K,) if draw(st.integers(0, 4)) == 0 else side() + (K, N)
    return sa, sb


@given(matmul_shapes(), st.integers(0, 2 ** 32 - 1))
def test_matmul_random_shapes(shapes, seed):
    sa, sb = shapes
    r = np.random.default_rng(seed)
    a, b = r.normal(size=sa), r.normal(size=sb)
    expected = np.matmul(a, b)
    u = r.normal(size=expected.shape)
    y, pull = bn.vjp(lambda a, b: a @ b, a, b)
    assert np.shape(y) == expected.shape
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)
    ga, gb = pull(u)
    ra, rb = autograd.grad(lambda a, b: anp.sum(anp.matmul(a, b) * u), argnum=(0, 1))(a, b)
    assert ga.shape == sa and gb.shape == sb
    np.testing.assert_allclose(ga, ra, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb, rb, rtol=1e-10, atol=1e-12)


def test_matmul_with_itself_fans_out(rng):
    """x @ x.T uses x on both sides; x.T @ x as well."""
    x = rng.normal(size=(3, 4))
    w = rng.normal(size=(3, 3))
    v = rng.normal(size=(4, 4))
    check(lambda x: np.sum((x @ x.T) * w) + np.sum(np.matmul(x.T, x) * v),
          lambda x: anp.sum(anp.matmul(x, x.T) * w) + anp.sum(anp.matmul(x.T, x) * v), x)


@pytest.mark.parametrize("n", [3, 40])
def test_blas_matmul_operands_shared_by_several_products(rng, n):
    """Above the loop threshold BLAS writes an operand's gradient directly while it is still
    zero and adds through scratch after: W and x below each get three contributions (two
    products and an elementwise use), in both orders."""
    x, W, V = rng.normal(size=(n, 12)), rng.normal(size=(12, 16)), rng.normal(size=(16, 12))
    u = rng.normal(size=(n, 12))

    def f(x, W, V, xp):
        h = xp.tanh(x @ W)
        return xp.sum((h @ V + x @ W @ V) * u) + xp.sum(W * W) + xp.sum(x * u)

    check(lambda x, W, V: f(x, W, V, np), lambda x, W, V: f(x, W, V, anp), x, W, V)


@pytest.mark.parametrize("bias_shape", [(5,), (1, 5), (3, 1), (), (2, 1, 1)])
def test_matmul_with_scalar_and_broadcast_bias(rng, bias_shape):
    """A scalar (a Python float argument) and a bias with size-1 dimensions around matmul."""
    x, W = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))
    s = float(rng.uniform(0.5, 1.5))
    bias = rng.normal(size=bias_shape) if bias_shape else float(rng.normal())
    w = rng.normal(size=(2, 3, 5))
    vg = check(lambda x, W, s, c: np.sum(np.tanh(s * (x @ W) + c) * w),
               lambda x, W, s, c: anp.sum(anp.tanh(s * anp.matmul(x, W) + c) * w),
               x, W, s, bias)
    _, g = vg(x, W, s, bias)
    assert isinstance(g[2], float)                 # a Python float gives a Python float


def test_dot_of_higher_rank_arrays_is_numpy_or_a_clear_error(rng):
    """np.dot of two arrays of rank >= 3 is a tensor contraction, not matmul: burnumba must
    either compute numpy's result or refuse clearly, never silently return matmul's."""
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    try:
        y, _ = bn.vjp(np.dot, a, b)
    except bn.BurnumbaError as e:
        assert "dot" in str(e)
    else:
        np.testing.assert_allclose(y, np.dot(a, b), rtol=1e-12)


# ==============================================================================================
# reductions along axes
# ==============================================================================================

REDUCTIONS = {
    "sum": (np.sum, anp.sum),
    "mean": (np.mean, anp.mean),
    "max": (np.max, anp.max),
    "amax": (np.amax, anp.max),
    "min": (np.min, anp.min),
    "amin": (np.amin, anp.min),
    "var": (np.var, anp.var),
    "var_ddof1": (lambda x, **k: np.var(x, ddof=1, **k), lambda x, **k: anp.var(x, ddof=1, **k)),
    "std": (np.std, anp.std),
    "std_ddof1": (lambda x, **k: np.std(x, ddof=1, **k), lambda x, **k: anp.std(x, ddof=1, **k)),
}
AXES = [None, 0, 1, 2, -1, -2, -3, (0, 1), (0, 2), (1, 2), (2, 0), (-1, -3), (0, 1, 2)]


@pytest.mark.parametrize("axis", AXES, ids=[str(a).replace(" ", "") for a in AXES])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_along_axes(rng, name, axis):
    """Every axis of a 3-D array, negative axes, tuples, None; keepdims False and True.
    Random normal points: no ties for max / min (ties are tested below)."""
    ours, theirs = REDUCTIONS[name]
    x = rng.normal(size=(2, 3, 4))
    for keepdims in (False, True):
        expected = theirs(x, axis=axis, keepdims=keepdims)
        y, pull = bn.vjp(lambda x: ours(x, axis=axis, keepdims=keepdims), x)
        assert np.shape(y) == np.shape(expected), (keepdims, np.shape(y))
        np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-14)
        w = rng.normal(size=np.shape(expected)) if np.shape(expected) else float(rng.normal())
        (gx,) = pull(w)
        check(lambda x: np.sum(ours(x, axis=axis, keepdims=keepdims) * w),
              lambda x: anp.sum(theirs(x, axis=axis, keepdims=keepdims) * w), x)
        ref = autograd.grad(lambda x: anp.sum(theirs(x, axis=axis, keepdims=keepdims) * w))(x)
        np.testing.assert_allclose(gx, ref, rtol=1e-10, atol=1e-12)


@st.composite
def reduction_cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    nd = len(shape)
    kind = draw(st.integers(0, 2))
    if kind == 0:
        axis = None
    elif kind == 1:
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    return shape, axis, draw(st.booleans()), name


@given(reduction_cases(), st.integers(0, 2 ** 32 - 1))
def test_reductions_random_shapes(case, seed):
    shape, axis, keepdims, name = case
    ours, theirs = REDUCTIONS[name]
    r = np.random.default_rng(seed)
    x = r.normal(size=shape)
    if ("ddof1" in name or "std" in name) and np.size(x) == np.size(np.sum(x, axis=axis)):
        # one element per group: no degrees of freedom (ddof=1), or std = sqrt(0), where
        # the derivative does not exist (sqrt's kink)
        return
    expected = theirs(x, axis=axis, keepdims=keepdims)
    u = r.normal(size=np.shape(expected))
    y, pull = bn.vjp(lambda x: ours(x, axis=axis, keepdims=keepdims), x)
    assert np.shape(y) == np.shape(expected)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-14)
    (g,) = pull(u if np.shape(expected) else float(u))
    ref = autograd.grad(lambda x: anp.sum(theirs(x, axis=axis, keepdims=keepdims) * u))(x)
    np.testing.assert_allclose(g, ref, rtol=1e-10, atol=1e-12)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data(),
       st.integers(0, 2 ** 32 - 1))
def test_softmax_family_random_shapes(shape, data, seed):
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    r = np.random.default_rng(seed)
    x = 3.0 * r.normal(size=shape)
    u = r.normal(size=shape)
    for ours, theirs in ((bn.softmax, a_softmax), (bn.log_softmax, a_log_softmax)):
        y, pull = bn.vjp(lambda x: ours(x, axis=axis), x)
        np.testing.assert_allclose(y, theirs(x, axis=axis), rtol=1e-12, atol=1e-14)
        ref = autograd.grad(lambda x: anp.sum(theirs(x, axis=axis) * u))(x)
        np.testing.assert_allclose(pull(u)[0], ref, rtol=1e-10, atol=1e-12)
    for keepdims in (False, True):
        expected = a_logsumexp(x, axis=axis, keepdims=keepdims)
        v = r.normal(size=np.shape(expected))
        y, pull = bn.vjp(lambda x: bn.logsumexp(x, axis=axis, keepdims=keepdims), x)
        np.testing.assert_allclose(y, expected, rtol=1e-12)
        ref = autograd.grad(lambda x: anp.sum(a_logsumexp(x, axis=axis, keepdims=keepdims) * v))(x)
        np.testing.assert_allclose(pull(v)[0], ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("rows", [4, 9, 11])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_in_blocks_and_alone_get_the_same_bits(rows, dtype):
    """softmax and layer_norm along the last axis run four rows at a time, and the small
    products two rows (of A, or of dB) at a time, with the last rows alone. A row's values
    and gradients must be the same bits wherever it lands: moving rows between the blocks
    and the rest (a permutation) permutes the results exactly, special values included."""
    r = np.random.default_rng(rows)
    x = (3.0 * r.normal(size=(rows, 16))).astype(dtype)
    x[1, 3] = np.nan                                  # a NaN row, inside the first block
    x[2, :] = -np.inf                                 # a row of -inf (softmax: NaN)
    x[3, 5] = np.inf
    x[rows - 1, 0] = 0.0
    u = r.normal(size=x.shape).astype(dtype)
    perm = np.roll(np.arange(rows), 3)                # rows in blocks move to the rest
    for f in (lambda x: bn.softmax(x, axis=-1), lambda x: bn.layer_norm(x)):
        with np.errstate(all="ignore"):
            y, pull = bn.vjp(f, x)
            yp, pullp = bn.vjp(f, x[perm])
            g, gp = pull(u)[0], pullp(u[perm])[0]
        assert np.array_equal(yp, y[perm], equal_nan=True)
        assert np.array_equal(gp, g[perm], equal_nan=True)
    for K, N in ((4, 8), (8, 4), (5, 7)):             # attention's shapes, and odd ones
        a = r.normal(size=(2, rows, K)).astype(dtype)
        b = r.normal(size=(2, K, N)).astype(dtype)
        w = r.normal(size=(2, rows, N)).astype(dtype)
        kp = np.roll(np.arange(K), 1)                 # dB's rows (k) between pairs and alone

        def loss(a, b, w):
            return np.sum((a @ b) * w)
        v, (ga, gb) = bn.value_and_grad(loss, argnums=(0, 1))(a, b, w)
        # (dB sums over the rows, so their order is part of its bits: only dA is compared)
        _, (gap, _) = bn.value_and_grad(loss, argnums=(0, 1))(a[:, perm], b, w[:, perm])
        assert np.array_equal(gap, ga[:, perm])
        _, (gak, gbk) = bn.value_and_grad(loss, argnums=(0, 1))(a[:, :, kp], b[:, kp], w)
        assert np.array_equal(gak, ga[:, :, kp]) and np.array_equal(gbk, gb[:, kp])
        y = bn.trace(lambda a, b: a @ b, a, b)
        assert np.array_equal(y(a[:, perm], b), y(a, b)[:, perm])


def test_reductions_compose_with_broadcasting(rng):
    """Normalising with keepdims statistics, and a reduced axis broadcast back."""
    x = rng.normal(size=(3, 4, 5))
    w = rng.normal(size=(3, 4, 5))
    check(lambda x: np.sum(((x - np.mean(x, axis=(0, 2), keepdims=True))
                            / np.std(x, axis=-1, keepdims=True)
                            + np.max(x, axis=1, keepdims=True) * np.min(x, axis=0)) * w),
          lambda x: anp.sum(((x - anp.mean(x, axis=(0, 2), keepdims=True))
                             / anp.std(x, axis=-1, keepdims=True)
                             + anp.max(x, axis=1, keepdims=True) * anp.min(x, axis=0)) * w), x)


def test_reduction_methods(rng):
    x = rng.normal(size=(2, 3, 4))
    w = rng.normal(size=(2, 4))
    check(lambda x: np.sum(x.sum(axis=1) * w) + x.mean(axis=(0, 2), keepdims=True)[0, 1, 0],
          lambda x: anp.sum(anp.sum(x, axis=1) * w)
          + anp.mean(x, axis=(0, 2), keepdims=True)[0, 1, 0],
          x)


def test_max_and_min_split_the_gradient_evenly_at_ties():
    """The convention at a tie (where max is not differentiable): the gradient is split evenly
    among the tied elements, as in HIPS autograd (and TensorFlow's reduce_max), so that the
    gradient of max(stack([x, x])) is still the gradient of x."""
    x = np.array([[1.0, 3.0, 3.0],
                  [2.0, 2.0, 2.0],
                  [5.0, -1.0, 5.0]])
    g = bn.grad(lambda x: np.sum(np.max(x, axis=1)))(x)
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.0, 0.5]],
                               rtol=1e-15)
    col = np.array([[1.0], [3.0], [6.0]])
    g = bn.grad(lambda x: np.sum(np.max(x, axis=-1, keepdims=True) * col))(x)
    np.testing.assert_array_equal(g, [[0.0, 0.5, 0.5], [1.0, 1.0, 1.0], [3.0, 0.0, 3.0]])
    g = bn.grad(lambda x: np.max(x))(x)                       # over everything: two 5s
    np.testing.assert_array_equal(g, [[0, 0, 0], [0, 0, 0], [0.5, 0, 0.5]])
    y = np.array([[1.0, 2.0, -4.0], [1.0, 2.0, 0.0], [3.0, 2.0, -4.0]])
    g = bn.grad(lambda y: np.sum(np.min(y, axis=0) * np.array([1.0, 2.0, 4.0])))(y)
    np.testing.assert_allclose(g, [[0.5, 2 / 3, 2.0], [0.5, 2 / 3, 0.0], [0.0, 2 / 3, 2.0]],
                               rtol=1e-15)
    g = bn.grad(lambda y: np.sum(np.amax(y, axis=(0, 1))))(y)  # 3.0 once
    np.testing.assert_array_equal(g, [[0, 0, 0], [0, 0, 0], [1.0, 0, 0]])
    # agrees with autograd's convention
    for axis in (0, 1, None, (0, 1)):
        f = lambda x: np.sum(np.max(x, axis=axis) ** 2)              # noqa: E731
        fa = lambda x: anp.sum(anp.max(x, axis=axis) ** 2)           # noqa: E731
        np.testing.assert_allclose(bn.grad(f)(x), autograd.grad(fa)(x), rtol=1e-15)
    # max over two copies of the same array
    v = np.array([0.3, -1.2, 2.0])
    np.testing.assert_array_equal(bn.grad(lambda v: np.sum(np.max(np.stack([v, v]), axis=0)))(v),
                                  np.ones(3))


# ==============================================================================================
# shaping, slicing, integer-array indexing
# ==============================================================================================

SHAPING = {
    "reshape(4,6)": lambda m, x: x.reshape(4, 6),
    "reshape(-1)": lambda m, x: m.reshape(x, -1),
    "reshape(2,-1,3)": lambda m, x: m.reshape(x, (2, -1, 3)),
    "reshape(24,1)": lambda m, x: x.reshape((24, 1)),
    "transpose": lambda m, x: m.transpose(x),
    "transpose(1,0,2)": lambda m, x: m.transpose(x, (1, 0, 2)),
    "transpose(2,0,1)": lambda m, x: x.transpose((2, 0, 1)),
    ".T": lambda m, x: x.T,
    "swapaxes(0,2)": lambda m, x: m.swapaxes(x, 0, 2),
    "swapaxes(-1,-2)": lambda m, x: m.swapaxes(x, -1, -2),
    "swapaxes(1,1)": lambda m, x: m.swapaxes(x, 1, 1),
    "expand_dims(0)": lambda m, x: m.expand_dims(x, 0),
    "expand_dims(-1)": lambda m, x: m.expand_dims(x, -1),
    "expand_dims(2)": lambda m, x: m.expand_dims(x, 2),
    "x[1]": lambda m, x: x[1],
    "x[:,1:]": lambda m, x: x[:, 1:],
    "x[...,::2]": lambda m, x: x[..., ::2],
    "x[::-1,:,1:3]": lambda m, x: x[::-1, :, 1:3],
    "x[:,None,0]": lambda m, x: x[:, None, 0],
    "x[-1,-2:,::-2]": lambda m, x: x[-1, -2:, ::-2],
    "x[None]": lambda m, x: x[np.newaxis],
    "x[[1,0,1]]": lambda m, x: x[[1, 0, 1]],
    "x[:,[2,0]]": lambda m, x: x[:, [2, 0]],
    "x[2d int array]": lambda m, x: x[np.array([[0, 1], [1, 1]])],
    "x[[0,1],[2,0]]": lambda m, x: x[[0, 1], [2, 0]],
    "x[...,[3,3,0]]": lambda m, x: x[..., np.array([3, 3, 0])],
    "x[1,[0,2],1:3]": lambda m, x: x[1, [0, 2], 1:3],
    "x[-1,[-1,0]]": lambda m, x: x[-1, [-1, 0]],
}


@pytest.mark.parametrize("name", list(SHAPING))
def test_shaping_and_indexing(rng, name):
    op = SHAPING[name]                   # op(module, x), module numpy or autograd.numpy
    x = rng.normal(size=(2, 3, 4))
    expected = op(np, x)
    y, _ = bn.vjp(lambda x: op(np, x), x)
    assert np.shape(y) == expected.shape
    np.testing.assert_array_equal(y, expected)
    w = rng.normal(size=expected.shape)
    check(lambda x: np.sum(np.sin(op(np, x)) * w), lambda x: anp.sum(anp.sin(op(anp, x)) * w), x)


SQUEEZE = {
    "squeeze()": lambda m, x: m.squeeze(x),
    "squeeze(1)": lambda m, x: m.squeeze(x, axis=1),
    "squeeze((1,3))": lambda m, x: m.squeeze(x, axis=(1, 3)),
    "squeeze(-1)": lambda m, x: m.squeeze(x, -1),
    "expand_dims((0,2))": lambda m, x: m.expand_dims(x, (0, 2)),
}


@pytest.mark.parametrize("name", list(SQUEEZE))
def test_squeeze_and_expand_dims(rng, name):
    op = SQUEEZE[name]
    x = rng.normal(size=(2, 1, 4, 1))
    expected = op(np, x)
    y, _ = bn.vjp(lambda x: op(np, x), x)
    assert np.shape(y) == expected.shape
    w = rng.normal(size=expected.shape)
    check(lambda x: np.sum(np.sin(op(np, x)) * w), lambda x: anp.sum(anp.sin(op(anp, x)) * w), x)


# ==============================================================================================
# embedding lookup: table[idx] with idx an integer argument (tape data)
# ==============================================================================================

@pytest.mark.parametrize("idx_shape", [(5,), (2, 3), (1,)])
def test_embedding_lookup_matches_autograd(rng, idx_shape):
    V, D = 6, 3
    table = rng.normal(size=(V, D))
    idx = rng.integers(0, V, size=idx_shape)
    w = rng.normal(size=idx_shape + (D,))
    check(lambda t, i: np.sum(np.tanh(t[i]) * w), lambda t, i: anp.sum(anp.tanh(t[i]) * w),
          table, idx, argnums=(0,))


def test_embedding_lookup_does_not_retrace_for_new_indices(rng):
    V, D = 7, 4
    table = rng.normal(size=(V, D))
    w = rng.normal(size=(2, 5, D))
    calls = []

    def loss(t, i):
        calls.append(1)
        return np.sum(np.tanh(t[i]) ** 2 * w)

    g = bn.grad(loss)
    ref = autograd.grad(lambda t, i: anp.sum(anp.tanh(t[i]) ** 2 * w))
    for seed in range(6):
        idx = np.random.default_rng(seed).integers(0, V, size=(2, 5))
        np.testing.assert_allclose(g(table, idx), ref(table, idx), rtol=1e-12, atol=1e-14)
    assert len(calls) == 1
    assert len(g.tapes) == 1


def test_embedding_gradient_scatter_adds_repeated_rows(rng):
    table = rng.normal(size=(5, 3))
    idx = np.array([[0, 3, 0], [0, 4, 3]])
    g = bn.grad(lambda t, i: np.sum(t[i]))(table, idx)
    counts = np.array([3.0, 0.0, 0.0, 2.0, 1.0])
    np.testing.assert_array_equal(g, np.repeat(counts[:, None], 3, axis=1))
    # weighted: each row's gradient is the sum of the cotangents of its occurrences
    w = rng.normal(size=(2, 3, 3))
    g = bn.grad(lambda t, i: np.sum(t[i] * w))(table, idx)
    expected = np.zeros_like(table)
    np.add.at(expected, idx, w)
    np.testing.assert_allclose(g, expected, rtol=1e-14)


def test_embedding_of_a_traced_table_and_a_matmul(rng):
    """The lookup inside a small model: embed, project, weighted sum."""
    table, W = rng.normal(size=(6, 4)), rng.normal(size=(4, 3))
    idx = np.array([[1, 5, 5, 0], [2, 2, 3, 1]])
    w = rng.normal(size=(2, 4, 3))
    check(lambda t, W, i: np.sum(np.tanh(t[i] @ W) * w),
          lambda t, W, i: anp.sum(anp.tanh(anp.matmul(t[i], W)) * w), table, W, idx,
          argnums=(0, 1))


OOB_SCRIPT = r"""
import json, numpy as np, burnumba as bn
table = np.arange(12.0).reshape(4, 3)
g = bn.grad(lambda t, i: np.sum(t[i] ** 2))
out = {}
def attempt(key, idx):
    try:
        r = g(table, np.array(idx))
        out[key] = {"raised": False, "result": np.asarray(r).tolist()}
    except Exception as e:
        out[key] = {"raised": True, "types": [c.__name__ for c in type(e).__mro__],
                    "message": str(e)}
attempt("first call out of range", [0, 4])
logits = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
ce = bn.value_and_grad(bn.cross_entropy)
for key, t in [("target 3", [0, 1, 2, 3]), ("target -1", [0, -1, 2, 1]),
               ("target 2**32", [0, 1, 2, 2**32])]:
    try:
        ce(logits, np.array(t))
        out[key] = {"raised": False}
    except Exception as e:
        out[key] = {"raised": True, "types": [c.__name__ for c in type(e).__mro__],
                    "message": str(e)}
g(table, np.array([0, 3]))                     # a valid call: the tape is traced and cached
for key, idx in [("4", [0, 4]), ("100", [100, 1]), ("-5", [1, -5]), ("2**32+1", [2**32 + 1]),
                 ("-1", [-1, 0])]:
    attempt(key, idx)
out["tapes"] = len(g.tapes)
print(json.dumps(out))
"""


@functools.lru_cache(maxsize=None)
def _run_isolated(script):
    """Run a script in a fresh interpreter, so that a crash (segfault) fails one test only.
    Cached: the two tests that read OOB_SCRIPT's report share one run."""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, f"exit code {proc.returncode} (a crash?)\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_embedding_index_out_of_range_raises():
    """Out-of-range rows raise an IndexError-like error (IndexError or a burnumba error that
    says so), at trace time and on a cached tape; never a crash or garbage. A negative index
    in range is either numpy's (counting from the end) or refused with the same kind of error."""
    out = _run_isolated(OOB_SCRIPT)
    for key in ("first call out of range", "4", "100", "-5", "2**32+1"):
        res = out[key]
        assert res["raised"], f"index {key}: no error, returned {res.get('result')}"
        assert "IndexError" in res["types"] or "BurnumbaError" in res["types"], res
        assert any(s in res["message"].lower() for s in ("index", "range", "bound")), res
    neg = out["-1"]
    if neg["raised"]:
        assert "IndexError" in neg["types"] or "BurnumbaError" in neg["types"], neg
    else:                        # numpy semantics: table[-1] is the last row
        table = np.arange(12.0).reshape(4, 3)
        expected = np.zeros_like(table)
        np.add.at(expected, np.array([-1, 0]), 2 * table[[-1, 0]])
        np.testing.assert_array_equal(neg["result"], expected)


def test_cross_entropy_target_out_of_range_raises():
    """Targets outside 0 .. classes - 1 (negative ones included: a target is a class, not a
    position) raise an IndexError-like error instead of reading outside the row."""
    out = _run_isolated(OOB_SCRIPT)
    for key in ("target 3", "target -1", "target 2**32"):
        res = out[key]
        assert res["raised"], f"{key}: no error"
        assert "IndexError" in res["types"] or "BurnumbaError" in res["types"], res


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8, np.int64])
def test_embedding_index_dtypes_and_layouts(rng, dtype):
    table = rng.normal(size=(6, 3))
    w = rng.normal(size=(2, 3, 3))
    idx = np.array([[0, 5, 5], [2, 1, 0]])
    ref = autograd.grad(lambda t: anp.sum(anp.tanh(t[idx]) * w))(table)
    g = bn.grad(lambda t, i: np.sum(np.tanh(t[i]) * w))
    for i in (idx.astype(dtype), np.asfortranarray(idx.astype(dtype)),
              np.ascontiguousarray(idx.T.astype(dtype)).T):
        np.testing.assert_allclose(g(table, i), ref, rtol=1e-13)


def test_boolean_array_argument_as_an_index_is_numpy_or_an_error(rng):
    """A boolean array passed as data and used as x[m] selects where m is true in numpy; its
    result shape depends on the data, so burnumba must refuse it clearly, never read it as the
    integer indices 0 and 1."""
    x = np.arange(1.0, 7.0)
    m = np.array([True, False, True, False, False, True])
    try:
        value, g = bn.value_and_grad(lambda x, m: np.sum(x[m]))(x, m)
    except bn.BurnumbaError:
        return
    assert value == np.sum(x[m])
    np.testing.assert_array_equal(g, m.astype(float))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_array_argument_as_an_index_is_refused(dtype):
    """numpy raises IndexError for float index arrays; burnumba must not truncate them
    (2.7 -> row 2) into integer rows."""
    table = np.arange(12.0).reshape(4, 3)
    with pytest.raises((IndexError, bn.BurnumbaError)):
        bn.grad(lambda t, i: np.sum(t[i]))(table, np.array([0.0, 2.7], dtype=dtype))


def test_boolean_array_argument_as_a_mask(rng):
    """A boolean array passed as data works as the condition of where / masked_fill."""
    x = rng.normal(size=(3, 4))
    w = rng.normal(size=(3, 4))
    g = bn.grad(lambda x, m: np.sum(np.where(m, x, 0.0) * w) + np.sum(bn.masked_fill(x, m, 2.0)))
    for seed in range(3):
        m = np.random.default_rng(seed).random((3, 4)) < 0.5
        np.testing.assert_array_equal(g(x, m), np.where(m, w, 0.0) + np.where(m, 0.0, 1.0))
    assert len(g.tapes) == 1


def test_non_contiguous_arguments(rng):
    """Transposed, Fortran-ordered and strided arrays give the results of contiguous copies."""
    a, W = rng.normal(size=(4, 3)), rng.normal(size=(8, 5))
    f = bn.grad(lambda a, W: np.sum(np.tanh(a @ W) ** 2), argnums=(0, 1))
    expected = f(np.ascontiguousarray(a.T), np.ascontiguousarray(W[::2]))
    for args in ((a.T, W[::2]), (np.asfortranarray(a.T), np.asfortranarray(W[::2]))):
        got = f(*args)
        for x, y in zip(got, expected):
            np.testing.assert_allclose(x, y, rtol=1e-14)


# ==============================================================================================
# concatenate / stack / split
# ==============================================================================================

@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concatenate_and_stack(rng, axis):
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    ours = lambda a, b: (np.concatenate([a, np.sin(b), a * b], axis=axis),   # noqa: E731
                         np.stack([a, b ** 2], axis=axis))
    theirs = lambda a, b: (anp.concatenate([a, anp.sin(b), a * b], axis=axis),  # noqa: E731
                           anp.stack([a, b ** 2], axis=axis))
    c, s = theirs(a, b)
    wc, ws = rng.normal(size=c.shape), rng.normal(size=s.shape)
    check(lambda a, b: np.sum(ours(a, b)[0] * wc) + np.sum(ours(a, b)[1] * ws),
          lambda a, b: anp.sum(theirs(a, b)[0] * wc) + anp.sum(theirs(a, b)[1] * ws), a, b)


def test_concatenate_of_different_lengths_and_stack_at_the_end(rng):
    a, c = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 1))
    w = rng.normal(size=(2, 3, 5))
    v = rng.normal(size=(2, 3, 4, 3))
    check(lambda a, c: np.sum(np.concatenate([a, c], axis=-1) * w)
          + np.sum(np.stack([a, a * 2.0, c * a], axis=3) * v),
          lambda a, c: anp.sum(anp.concatenate([a, c], axis=-1) * w)
          + anp.sum(anp.stack([a, a * 2.0, c * a], axis=3) * v), a, c)


SPLITS = [(2, 0), (3, 1), ([1, 3], 2), ([1], -1), (4, -1), ([0, 2], 1), ([2, 2], 1)]


@pytest.mark.parametrize("sections,axis", SPLITS, ids=[f"{s}-axis{a}" for s, a in SPLITS])
def test_split(rng, sections, axis):
    x = rng.normal(size=(2, 3, 4))
    parts = np.split(x, sections, axis=axis)
    shapes = []

    def record(x):                       # the pieces' shapes, as seen while tracing
        shapes.extend(np.shape(p) for p in np.split(x, sections, axis=axis))
        return np.sum(x)

    bn.grad(record)(x)
    assert shapes == [p.shape for p in parts]
    for j, p in enumerate(parts):
        if p.size:
            y, _ = bn.vjp(lambda x: np.split(x, sections, axis=axis)[j], x)
            np.testing.assert_array_equal(y, p)
    ws = [rng.normal(size=p.shape) for p in parts]
    # empty pieces (sections [0, 2] or [2, 2]) are left out of the loss: summing an empty
    # array is an error in burnumba
    check(lambda x: sum(np.sum(np.sin(p) * w)
                        for p, w in zip(np.split(x, sections, axis=axis), ws) if w.size),
          lambda x: sum(anp.sum(anp.sin(p) * w)
                        for p, w in zip(anp.split(x, sections, axis=axis), ws) if w.size),
          x)
    # only one piece used: the rest of x gets zero gradient
    k = max(range(len(parts)), key=lambda j: parts[j].size)
    check(lambda x: np.sum(np.split(x, sections, axis=axis)[k] * ws[k]),
          lambda x: anp.sum(anp.split(x, sections, axis=axis)[k] * ws[k]), x)


def test_split_then_concatenate_round_trip(rng):
    x = rng.normal(size=(3, 6))
    w = rng.normal(size=(3, 6))
    check(lambda x: np.sum(np.concatenate(np.split(x, 3, axis=1)[::-1], axis=1) ** 3 * w),
          lambda x: anp.sum(anp.concatenate(anp.split(x, 3, axis=1)[::-1], axis=1) ** 3 * w), x)


# ==============================================================================================
# where / masked_fill
# ==============================================================================================

def test_where_with_broadcasting(rng):
    x, y = rng.normal(size=(3, 1)), rng.normal(size=(1, 4))
    s = float(rng.normal())
    w = rng.normal(size=(3, 4))
    check(lambda x, y, s: np.sum(np.where(x > y, x * y, s * y + x) * w),
          lambda x, y, s: anp.sum(anp.where(x > y, x * y, s * y + x) * w), x, y, s)
    cond = np.array([True, False, False, True])            # (4,) broadcast against (3, 4)
    z = rng.normal(size=(3, 4))
    check(lambda z, s: np.sum(np.where(cond, z, s) * w),     # (autograd needs s as an array)
          lambda z, s: anp.sum(anp.where(cond, z, s * np.ones((3, 4))) * w), z, s)
    check(lambda z: np.sum(np.where(z > 0.1, np.exp(z), 0.5) * w),
          lambda z: anp.sum(anp.where(z > 0.1, anp.exp(z), 0.5) * w), z)


@pytest.mark.parametrize("value", [-1e9, 0.0, 2.5])
def test_masked_fill(rng, value):
    T = 4
    mask = ~np.tril(np.ones((T, T), dtype=bool))           # True above the diagonal
    x = rng.normal(size=(2, T, T))
    w = rng.normal(size=(2, T, T))
    y, _ = bn.vjp(lambda x: bn.masked_fill(x, mask, value), x)
    np.testing.assert_array_equal(y, np.where(mask, value, x))
    g = bn.grad(lambda x: np.sum(bn.masked_fill(x, mask, value) * w))(x)
    assert np.all(g[:, mask] == 0.0)                        # filled entries get no gradient
    np.testing.assert_array_equal(g[:, ~mask], w[:, ~mask])
    # zero weights on the filled entries keep the loss small, so that central differences
    # are not drowned by the rounding of a -1e9 term
    w0 = np.where(mask, 0.0, w)
    check(lambda x: np.sum(np.exp(bn.masked_fill(x, mask, value)) * w0),
          lambda x: anp.sum(anp.exp(a_masked_fill(x, mask, value)) * w0), x)
    # a mask with size-1 dimensions broadcasts
    col = np.array([[True], [False], [False], [True]])
    y, _ = bn.vjp(lambda x: bn.masked_fill(x, col, value), x)
    np.testing.assert_array_equal(y, np.where(col, value, x))
    w1 = np.where(col, 0.0, w)
    check(lambda x: np.sum(np.sin(bn.masked_fill(x, col, value)) * w1),
          lambda x: anp.sum(anp.sin(a_masked_fill(x, col, value)) * w1), x)


def test_causal_masked_softmax_with_minus_infinity(rng):
    T = 5
    mask = ~np.tril(np.ones((T, T), dtype=bool))
    x = rng.normal(size=(3, T, T))
    w = rng.normal(size=(3, T, T))
    y, pull = bn.vjp(lambda x: bn.softmax(bn.masked_fill(x, mask, -np.inf), axis=-1), x)
    assert np.all(np.isfinite(y))
    assert np.all(y[:, mask] == 0.0)
    np.testing.assert_allclose(np.sum(y, axis=-1), 1.0, rtol=1e-14)
    (g,) = pull(w)
    assert np.all(np.isfinite(g)) and np.all(g[:, mask] == 0.0)
    check(lambda x: np.sum(bn.softmax(bn.masked_fill(x, mask, -np.inf), axis=-1) * w),
          lambda x: anp.sum(a_softmax(a_masked_fill(x, mask, -np.inf), axis=-1) * w), x)


@pytest.mark.parametrize("shape, scale", [((1, 1), 1.0), ((4, 4), 0.5), ((3, 5, 5), 1.7),
                                          ((2, 3, 8, 8), 0.35355339059327373)])
def test_causal_softmax_equals_the_masked_softmax_it_fuses(rng, shape, scale):
    """causal_softmax(x, c) = softmax(masked_fill(c * x, future, -inf)): values, gradients
    against autograd and central differences, exact zeros in the masked half."""
    T = shape[-1]
    future = np.triu(np.ones((T, T), dtype=bool), 1)
    x = rng.normal(size=shape) * 3.0
    w = rng.normal(size=shape)
    y, pull = bn.vjp(lambda x: bn.causal_softmax(x, scale), x)
    np.testing.assert_allclose(y, np_softmax(np.where(future, -np.inf, scale * x)), rtol=1e-13)
    assert np.all(y[..., future] == 0.0)
    (g,) = pull(w)
    assert np.all(g[..., future] == 0.0)
    np.testing.assert_allclose(bn.causal_softmax(x, scale), y, rtol=1e-13)   # numpy path
    check(lambda x: np.sum(bn.causal_softmax(x, scale) * w),
          lambda x: anp.sum(a_softmax(a_masked_fill(scale * x, future, -np.inf), axis=-1) * w),
          x)


def test_causal_softmax_at_large_scores_and_bad_arguments(rng):
    x = rng.normal(size=(2, 6, 6)) * 1e4                   # exp would overflow unshifted
    y, pull = bn.vjp(lambda x: bn.causal_softmax(x, 1.0), x)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(pull(np.ones_like(x))[0]))
    np.testing.assert_allclose(np.sum(y, axis=-1), 1.0, rtol=1e-14)
    with pytest.raises(bn.ShapeError, match=r"\(\.\.\., T, T\)"):
        bn.vjp(lambda x: bn.causal_softmax(x, 1.0), rng.normal(size=(3, 4)))
    with pytest.raises(bn.InputError, match="scale must be > 0"):
        bn.vjp(lambda x: bn.causal_softmax(x, -1.0), x)


# ==============================================================================================
# softmax, log_softmax, logsumexp
# ==============================================================================================

SOFTMAX_CASES = [((5,), -1), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1),
                 ((2, 3, 4), 0), ((2, 3, 4), -2), ((4, 1), -1)]
SM_IDS = [f"{s}-axis{a}".replace(" ", "") for s, a in SOFTMAX_CASES]


@pytest.mark.parametrize("shape,axis", SOFTMAX_CASES, ids=SM_IDS)
def test_softmax_and_log_softmax(rng, shape, axis):
    x = 2.0 * rng.normal(size=shape)
    w = rng.normal(size=shape)
    y, _ = bn.vjp(lambda x: bn.softmax(x, axis=axis), x)
    np.testing.assert_allclose(y, np_softmax(x, axis=axis), rtol=1e-13)
    check(lambda x: np.sum(bn.softmax(x, axis=axis) * w),
          lambda x: anp.sum(a_softmax(x, axis=axis) * w), x)
    check(lambda x: np.sum(bn.log_softmax(x, axis=axis) * w),
          lambda x: anp.sum(a_log_softmax(x, axis=axis) * w), x)


@pytest.mark.parametrize("shape,axis", SOFTMAX_CASES, ids=SM_IDS)
def test_logsumexp(rng, shape, axis):
    x = 2.0 * rng.normal(size=shape)
    for keepdims in (False, True):
        expected = np_logsumexp(x, axis=axis, keepdims=keepdims)
        y, _ = bn.vjp(lambda x: bn.logsumexp(x, axis=axis, keepdims=keepdims), x)
        assert np.shape(y) == np.shape(expected)
        np.testing.assert_allclose(y, expected, rtol=1e-13)
        w = rng.normal(size=np.shape(expected)) if np.shape(expected) else float(rng.normal())
        check(lambda x: np.sum(bn.logsumexp(x, axis=axis, keepdims=keepdims) * w),
              lambda x: anp.sum(a_logsumexp(x, axis=axis, keepdims=keepdims) * w), x)


def test_softmax_family_default_axis_is_last(rng):
    x = rng.normal(size=(3, 4))
    np.testing.assert_allclose(bn.vjp(bn.softmax, x)[0], np_softmax(x, -1), rtol=1e-13)
    np.testing.assert_allclose(bn.vjp(bn.log_softmax, x)[0], np.log(np_softmax(x, -1)),
                               rtol=1e-13)
    np.testing.assert_allclose(bn.vjp(bn.logsumexp, x)[0], np_logsumexp(x, -1), rtol=1e-13)


def test_softmax_of_a_broadcast_sum_and_a_scalar(rng):
    """softmax(s * (x + y)) with x (2,1,4), y (3,1) and s a scalar argument."""
    x, y = rng.normal(size=(2, 1, 4)), rng.normal(size=(3, 1))
    s = float(rng.uniform(0.5, 2.0))
    w = rng.normal(size=(2, 3, 4))
    check(lambda x, y, s: np.sum(bn.softmax(s * (x + y), axis=-1) * w)
          + bn.logsumexp(x * s, axis=-1)[1, 0],
          lambda x, y, s: anp.sum(a_softmax(s * (x + y), axis=-1) * w)
          + a_logsumexp(x * s, axis=-1)[1, 0], x, y, s)


LARGE = np.array([[1000.0, -1000.0, 0.0, 999.0],
                  [1000.0, 1000.0, 1000.0, 1000.0],
                  [-1000.0, -1000.0, -1000.0, -1000.0],
                  [-1000.0, -1000.0, -999.0, 1000.0],
                  [700.0, 710.0, -745.0, 0.0]])


@pytest.mark.parametrize("scale", [1.0, 50.0])
def test_softmax_family_is_finite_and_exact_at_large_logits(rng, scale):
    """At logits of +-1000 (and +-50000), exp overflows unless it is shifted: the values and
    gradients stay finite and equal the exact ones (computed stably here)."""
    x = LARGE * scale
    u = rng.normal(size=x.shape)
    p = np_softmax(x)
    lse = np_logsumexp(x)

    y, pull = bn.vjp(lambda x: bn.softmax(x, axis=-1), x)
    (g,) = pull(u)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(g))
    np.testing.assert_allclose(y, p, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g, p * (u - np.sum(u * p, axis=-1, keepdims=True)),
                               rtol=1e-10, atol=1e-13)

    y, pull = bn.vjp(lambda x: bn.log_softmax(x, axis=-1), x)
    (g,) = pull(u)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(g))
    m = np.max(x, axis=-1, keepdims=True)
    exact = (x - m) - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))
    # rounding of the inputs' magnitude is allowed (x - lse loses the ulp of lse)
    np.testing.assert_allclose(y, exact, rtol=1e-12, atol=1e-15 * np.max(np.abs(x)))
    np.testing.assert_allclose(g, u - p * np.sum(u, axis=-1, keepdims=True), rtol=1e-10,
                               atol=1e-12)

    uv = u[:, 0]
    y, pull = bn.vjp(lambda x: bn.logsumexp(x, axis=-1), x)
    (g,) = pull(uv)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(g))
    np.testing.assert_allclose(y, lse, rtol=1e-13)
    np.testing.assert_allclose(g, uv[:, None] * p, rtol=1e-10, atol=1e-300)

    targets = np.array([2, 0, 3, 1, 2])          # target logits of -1000 next to +1000
    value, g = bn.value_and_grad(bn.cross_entropy)(x, targets)
    onehot = np.eye(4)[targets]
    assert np.isfinite(value) and np.all(np.isfinite(g))
    np.testing.assert_allclose(value, np.mean(lse - x[np.arange(5), targets]), rtol=1e-13)
    np.testing.assert_allclose(g, (p - onehot) / 5, rtol=1e-10, atol=1e-300)


def test_softmax_family_is_finite_at_large_logits_in_float32():
    x = LARGE.astype(np.float32)
    for f in (lambda x: np.sum(bn.softmax(x) * np.arange(4.0)),
              lambda x: np.sum(bn.log_softmax(x) * np.arange(4.0)),
              lambda x: np.sum(bn.logsumexp(x)),
              lambda x: bn.cross_entropy(x, np.array([2, 0, 3, 1, 2]))):
        value, g = bn.value_and_grad(f)(x)
        assert np.isfinite(value) and np.all(np.isfinite(g))


# ==============================================================================================
# cross_entropy
# ==============================================================================================

@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (1, 3), (6,)])
def test_cross_entropy(rng, shape):
    logits = 2.0 * rng.normal(size=shape)
    targets = rng.integers(0, shape[-1], size=shape[:-1])
    vg = check(lambda l, t: bn.cross_entropy(l, t), a_cross_entropy, logits, targets,
               argnums=(0,))
    value, _ = vg(logits, targets)
    assert np.ndim(value) == 0


def test_cross_entropy_does_not_retrace_for_new_targets(rng):
    logits = rng.normal(size=(6, 5))
    vg = bn.value_and_grad(lambda l, t: bn.cross_entropy(l * 1.5, t))
    ref = autograd.value_and_grad(lambda l, t: a_cross_entropy(l * 1.5, t))
    for seed in range(5):
        targets = np.random.default_rng(seed).integers(0, 5, size=6)
        v, g = vg(logits, targets)
        rv, rg = ref(logits, targets)
        np.testing.assert_allclose(v, rv, rtol=1e-13)
        np.testing.assert_allclose(g, rg, rtol=1e-10, atol=1e-14)
    assert len(vg.tapes) == 1


def test_cross_entropy_after_a_linear_layer(rng):
    x, W, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5)
    t = rng.integers(0, 5, size=(2, 3))
    check(lambda x, W, b, t: bn.cross_entropy(x @ W + b, t),
          lambda x, W, b, t: a_cross_entropy(anp.matmul(x, W) + b, t), x, W, b, t,
          argnums=(0, 1, 2))


# ==============================================================================================
# layer_norm, gelu, relu
# ==============================================================================================

@pytest.mark.parametrize("shape", [(6,), (3, 6), (2, 3, 5), (4, 1, 2)])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm(rng, shape, affine):
    x = rng.normal(size=shape) * 2.0 + 0.5
    D = shape[-1]
    wt, bs = rng.normal(size=D), rng.normal(size=D)
    out = rng.normal(size=shape)
    if affine == "none":
        check(lambda x: np.sum(bn.layer_norm(x) * out), lambda x: anp.sum(a_layer_norm(x) * out), x)
    elif affine == "weight":
        check(lambda x, wt: np.sum(bn.layer_norm(x, weight=wt) * out),
              lambda x, wt: anp.sum(a_layer_norm(x, wt) * out), x, wt)
    else:
        check(lambda x, wt, bs: np.sum(bn.layer_norm(x, wt, bs) * out),
              lambda x, wt, bs: anp.sum(a_layer_norm(x, wt, bs) * out), x, wt, bs)


def test_layer_norm_eps_and_constant_rows(rng):
    """eps matters where the variance is small; a constant row is finite (0 / sqrt(eps))."""
    x = rng.normal(size=(3, 4)) * 1e-3
    x[1] = 0.7                                  # a constant row
    out = rng.normal(size=(3, 4))
    for eps in (1e-5, 1e-2):
        check(lambda x: np.sum(bn.layer_norm(x, eps=eps) * out),
              lambda x: anp.sum(a_layer_norm(x, eps=eps) * out), x, rtol=1e-9, fd_rtol=1e-4)
    y, _ = bn.vjp(lambda x: bn.layer_norm(x), x)
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y[1], 0.0, atol=1e-9)


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu(rng, approximate):
    x = rng.uniform(-4, 4, size=(3, 5))
    w = rng.normal(size=(3, 5))
    check(lambda x: np.sum(bn.gelu(x, approximate=approximate) * w),
          lambda x: anp.sum(a_gelu(x, approximate) * w), x)
    s = float(rng.uniform(-3, 3))
    check(lambda s: bn.gelu(s, approximate=approximate) * 2.0,
          lambda s: a_gelu(s, approximate) * 2.0, s)


def test_gelu_default_is_the_tanh_form(rng):
    x = rng.uniform(-3, 3, size=7)
    y, _ = bn.vjp(bn.gelu, x)
    np.testing.assert_allclose(y, a_gelu(x, True), rtol=1e-13, atol=1e-15)
    assert np.max(np.abs(a_gelu(x, True) - a_gelu(x, False))) > 1e-6   # the forms do differ


def test_relu_on_tensors(rng):
    x = rng.normal(size=(4, 5))
    x[np.abs(x) < 1e-3] = 0.5                    # keep away from the kink for differences
    w = rng.normal(size=(4, 5))
    check(lambda x: np.sum(bn.relu(x @ x.T / 2.0 - 0.1)) + np.sum(bn.relu(x) * w),
          lambda x: anp.sum(anp.maximum(anp.matmul(x, x.T) / 2.0 - 0.1, 0.0))
          + anp.sum(anp.maximum(x, 0.0) * w), x)


# ==============================================================================================
# compositions: attention, a tiny transformer block, and the dot-product test
# ==============================================================================================

def _attention(np_, softmax, masked_fill):
    def attn(q, k, v, w):
        d = q.shape[-1]
        T = q.shape[-2]
        mask = ~np.tril(np.ones((T, T), dtype=bool))
        s = np_.matmul(q, np_.swapaxes(k, -1, -2)) / math.sqrt(d)
        p = softmax(masked_fill(s, mask, -np.inf), axis=-1)
        return np_.sum(np_.matmul(p, v) * w)
    return attn


def test_causal_attention_with_batched_heads(rng):
    B, H, T, d = 2, 2, 4, 3
    q, k, v = (rng.normal(size=(B, H, T, d)) for _ in range(3))
    w = rng.normal(size=(B, H, T, d))
    ours = _attention(np, bn.softmax, bn.masked_fill)
    theirs = _attention(anp, a_softmax, a_masked_fill)
    check(lambda q, k, v: ours(q, k, v, w), lambda q, k, v: theirs(q, k, v, w), q, k, v)


def _block(np_, nn):
    """Embedding, pre-norm causal self-attention with 2 heads, a gelu MLP, cross-entropy."""
    softmax, masked_fill, layer_norm, gelu, cross_entropy = nn

    def loss(emb, wqkv, wo, w1, w2, g1, b1, g2, b2, wout, idx, targets):
        B, T = idx.shape
        C = emb.shape[1]
        H, d = 2, C // 2
        x = emb[idx]                                              # (B, T, C)
        h = layer_norm(x, g1, b1)
        q, k, v = np_.split(np_.matmul(h, wqkv), 3, axis=-1)      # (B, T, C) each
        q, k, v = (np_.transpose(np_.reshape(t, (B, T, H, d)), (0, 2, 1, 3)) for t in (q, k, v))
        mask = ~np.tril(np.ones((T, T), dtype=bool))
        att = np_.matmul(q, np_.swapaxes(k, -1, -2)) * (1.0 / math.sqrt(d))
        att = softmax(masked_fill(att, mask, -1e9), axis=-1)
        o = np_.reshape(np_.transpose(np_.matmul(att, v), (0, 2, 1, 3)), (B, T, C))
        x = x + np_.matmul(o, wo)
        x = x + np_.matmul(gelu(np_.matmul(layer_norm(x, g2, b2), w1)), w2)
        return cross_entropy(np_.matmul(x, wout), targets)
    return loss


def _block_args(rng, dtype=np.float64):
    V, C = 7, 4
    params = [rng.normal(size=(V, C)), 0.5 * rng.normal(size=(C, 3 * C)),
              0.5 * rng.normal(size=(C, C)), 0.5 * rng.normal(size=(C, 2 * C)),
              0.5 * rng.normal(size=(2 * C, C)), 1 + 0.1 * rng.normal(size=C),
              0.1 * rng.normal(size=C), 1 + 0.1 * rng.normal(size=C), 0.1 * rng.normal(size=C),
              rng.normal(size=(C, V))]
    idx = rng.integers(0, V, size=(2, 3))
    targets = rng.integers(0, V, size=(2, 3))
    return [p.astype(dtype) for p in params] + [idx, targets]


OURS_NN = (bn.softmax, bn.masked_fill, bn.layer_norm, bn.gelu, bn.cross_entropy)
THEIRS_NN = (a_softmax, a_masked_fill, a_layer_norm, a_gelu, a_cross_entropy)


def test_tiny_transformer_block(rng):
    args = _block_args(rng)
    check(_block(np, OURS_NN), _block(anp, THEIRS_NN), *args, argnums=tuple(range(10)),
          rtol=1e-9)


T4 = 4
CAUSAL = ~np.tril(np.ones((T4, T4), dtype=bool))
MIX = np.random.default_rng(11).normal(size=(16, 16)) / 4.0

# Stages map h of shape (2, 4, 4) (with the parameters W (4, 4), g (4,), b (4,)) to the
# same shape, so that any sequence of them composes.
STAGES = [
    lambda h, W, g, b: h @ W,
    lambda h, W, g, b: np.swapaxes(h, -1, -2) @ np.tanh(h) / 2.0,
    lambda h, W, g, b: bn.softmax(h, axis=-1),
    lambda h, W, g, b: bn.softmax(h, axis=1),
    lambda h, W, g, b: bn.log_softmax(h, axis=-1),
    lambda h, W, g, b: bn.layer_norm(h, g, b),
    lambda h, W, g, b: bn.gelu(h),
    lambda h, W, g, b: bn.gelu(h, approximate=False),
    lambda h, W, g, b: np.tanh(h),
    lambda h, W, g, b: bn.softmax(bn.masked_fill(h, CAUSAL, -np.inf), axis=-1),
    lambda h, W, g, b: h - np.mean(h, axis=0, keepdims=True),
    lambda h, W, g, b: h / (1.0 + np.std(h, axis=(1, 2), keepdims=True)),
    lambda h, W, g, b: h * np.max(h, axis=-1, keepdims=True) - np.min(h, axis=1, keepdims=True),
    lambda h, W, g, b: h - bn.logsumexp(h, axis=1, keepdims=True),
    lambda h, W, g, b: np.concatenate(np.split(h, 2, axis=-1)[::-1], axis=-1),
    lambda h, W, g, b: np.transpose(h, (0, 2, 1)) + b,
    lambda h, W, g, b: h[:, ::-1] * 0.5 + h,
    lambda h, W, g, b: np.where(h > 0, h, 0.1 * h),
    lambda h, W, g, b: np.stack([np.sum(h, axis=0), np.var(h, axis=0)]),
    lambda h, W, g, b: np.reshape(np.reshape(h, (2, 16)) @ MIX, (2, 4, 4)) * g,
    lambda h, W, g, b: h * np.expand_dims(np.squeeze(h[:, :1, :1], axis=2), -1),
]
FINAL_AXES = [0, 1, 2, (0, 2), -1]


def composition(program, final):
    def f(x, W, g, b):
        h = x
        for k in program:
            h = STAGES[k](h, W, g, b)
        return np.sum(h, axis=FINAL_AXES[final])
    return f


def dot_product_test(f, args, rng):
    """<u, J v> (J v by central differences of bn.vjp's forward value) against <J^T u, v>
    (J^T u from bn.vjp's pull). Returns False when the point is unusable (overflow)."""
    y, pull = bn.vjp(f, *args)
    u = rng.normal(size=np.shape(y))
    vs = [rng.normal(size=np.shape(a)) for a in args]
    h = 1e-6
    plus = bn.vjp(f, *[a + h * v for a, v in zip(args, vs)])[0]
    minus = bn.vjp(f, *[a - h * v for a, v in zip(args, vs)])[0]
    jv = (np.asarray(plus) - np.asarray(minus)) / (2 * h)
    grads = pull(u)
    lhs = float(np.sum(u * jv))
    rhs = float(sum(np.sum(gk * v) for gk, v in zip(grads, vs)))
    if not (np.isfinite(lhs) and np.isfinite(rhs) and max(abs(lhs), abs(rhs)) < 1e6):
        return False
    np.testing.assert_allclose(lhs, rhs, rtol=1e-5, atol=1e-6)
    return True


def _composition_args(rng):
    return [rng.normal(size=(2, 4, 4)), 0.7 * rng.normal(size=(4, 4)),
            1.0 + 0.2 * rng.normal(size=4), 0.2 * rng.normal(size=4)]


@given(st.lists(st.integers(0, len(STAGES) - 1), min_size=1, max_size=7),
       st.integers(0, len(FINAL_AXES) - 1), st.integers(0, 2 ** 31))
def test_dot_product_test_on_random_compositions(program, final, seed):
    rng = np.random.default_rng(seed)
    dot_product_test(composition(program, final), _composition_args(rng), rng)


@pytest.mark.parametrize("program", [
    [0, 2, 5],               # matmul -> softmax -> layer_norm -> sum over an axis
    [0, 9, 1, 5, 6],         # matmul -> causal masked softmax -> h^T tanh(h) -> ln -> gelu
    [5, 0, 4, 13, 12],
    [14, 15, 16, 17, 18, 19, 20, 3, 7, 10, 11],
    list(range(len(STAGES))),
])
def test_dot_product_test_on_chosen_compositions(program):
    rng = np.random.default_rng(7)
    for final in range(len(FINAL_AXES)):
        assert dot_product_test(composition(program, final), _composition_args(rng), rng)


def test_every_stage_against_autograd(rng):
    """The dot-product test checks consistency; this pins one long composition to autograd."""
    args = _composition_args(rng)
    mask = CAUSAL

    def theirs(x, W, g, b):
        h = anp.matmul(x, W)
        h = a_softmax(a_masked_fill(h, mask, -np.inf), axis=-1)
        h = anp.matmul(anp.swapaxes(h, -1, -2), anp.tanh(h)) / 2.0
        h = a_layer_norm(h, g, b)
        h = a_gelu(h, False) - a_logsumexp(h, axis=1, keepdims=True)
        h = h * anp.max(h, axis=-1, keepdims=True) - anp.min(h, axis=1, keepdims=True)
        h = anp.concatenate(anp.split(h, 2, axis=-1)[::-1], axis=-1)
        h = anp.stack([anp.sum(h, axis=0), anp.var(h, axis=0)])
        return anp.sum(anp.sum(h, axis=(0, 2)) * anp.arange(1.0, 5.0))

    def ours(x, W, g, b):
        h = x @ W
        h = bn.softmax(bn.masked_fill(h, mask, -np.inf), axis=-1)
        h = np.swapaxes(h, -1, -2) @ np.tanh(h) / 2.0
        h = bn.layer_norm(h, g, b)
        h = bn.gelu(h, approximate=False) - bn.logsumexp(h, axis=1, keepdims=True)
        h = h * np.max(h, axis=-1, keepdims=True) - np.min(h, axis=1, keepdims=True)
        h = np.concatenate(np.split(h, 2, axis=-1)[::-1], axis=-1)
        h = np.stack([np.sum(h, axis=0), np.var(h, axis=0)])
        return np.sum(np.sum(h, axis=(0, 2)) * np.arange(1.0, 5.0))

    check(ours, theirs, *args, rtol=1e-9)


# ==============================================================================================
# float32
# ==============================================================================================

def _f32_cases(rng):
    x = rng.normal(size=(2, 3, 4))
    W = rng.normal(size=(4, 5))
    table = rng.normal(size=(6, 4))
    idx = np.array([[0, 5, 5], [2, 1, 0]])
    t = np.array([[1, 4, 0], [3, 3, 2]])
    g, b = 1 + 0.1 * rng.normal(size=4), 0.1 * rng.normal(size=4)
    mask = ~np.tril(np.ones((3, 3), dtype=bool))
    w3 = rng.normal(size=(2, 3, 5))
    return {
        "matmul": (lambda x, W: np.sum(np.tanh(x @ W) * w3), (x, W), ()),
        "batched matmul": (lambda x: np.sum(np.sin(x @ np.swapaxes(x, -1, -2))), (x,), ()),
        "reductions": (lambda x: np.sum(np.var(x, axis=1))
                       + np.sum(np.std(x, axis=(0, 2), keepdims=True))
                       + np.sum(np.max(x, axis=0) * np.mean(x, axis=0)) - np.min(x), (x,), ()),
        "softmax": (lambda x, W: np.sum(bn.softmax(x @ W, axis=-1) * w3), (x, W), ()),
        "log_softmax": (lambda x: np.sum(bn.log_softmax(x, axis=1) ** 2), (x,), ()),
        "logsumexp": (lambda x: np.sum(bn.logsumexp(x, axis=-1) ** 2), (x,), ()),
        "cross_entropy": (lambda x, W, t: bn.cross_entropy(x @ W, t), (x, W), (t,)),
        "layer_norm": (lambda x, g, b: np.sum(bn.layer_norm(x, g, b) ** 3), (x, g, b), ()),
        "gelu tanh": (lambda x: np.sum(bn.gelu(x) * x), (x,), ()),
        "gelu erf": (lambda x: np.sum(bn.gelu(x, approximate=False) * x), (x,), ()),
        "embedding": (lambda tb, W, i: np.sum(np.tanh(tb[i] @ W) * w3), (table, W), (idx,)),
        "split concat": (lambda x: np.sum(np.concatenate(np.split(x, 2, axis=-1)[::-1], -1) ** 2
                                          * np.arange(4.0)), (x,), ()),
        "masked softmax": (lambda x: np.sum(bn.softmax(bn.masked_fill(
            np.swapaxes(x, -1, -2)[:, :3] @ x[:, :, :3], mask, -np.inf)) * np.arange(3.0)),
            (x,), ()),
        "where": (lambda x: np.sum(np.where(x > 0.2, x ** 2, -x) * np.arange(4.0)), (x,), ()),
        "transformer block": (_block(np, OURS_NN), tuple(_block_args(rng)[:10]),
                              tuple(_block_args(np.random.default_rng(3))[10:])),
    }


F32_NAMES = list(_f32_cases(np.random.default_rng(0)))


@pytest.mark.parametrize("name", F32_NAMES)
def test_float32_gradients_are_float32_and_close_to_float64(rng, name):
    f, diff_args, data = _f32_cases(rng)[name]
    argnums = tuple(range(len(diff_args)))
    v64, g64 = bn.value_and_grad(f, argnums=argnums)(*diff_args, *data)
    args32 = [a.astype(np.float32) for a in diff_args]
    v32, g32 = bn.value_and_grad(f, argnums=argnums)(*args32, *data)
    np.testing.assert_allclose(float(v32), float(v64), rtol=1e-4, atol=1e-4 * max(1, abs(v64)))
    for k, (a, b) in enumerate(zip(g32, g64)):
        assert a.dtype == np.float32, (k, a.dtype)
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.max(np.abs(b)))))


def test_float32_vjp_outputs_are_float32(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    W = rng.normal(size=(4, 2)).astype(np.float32)
    y, pull = bn.vjp(lambda x, W: bn.layer_norm(x @ W), x, W)
    assert y.dtype == np.float32 and y.shape == (3, 2)
    gx, gW = pull(np.ones((3, 2), dtype=np.float32))
    assert gx.dtype == np.float32 and gW.dtype == np.float32


# ==============================================================================================
# errors
# ==============================================================================================

def raises(exc, fn, *args, match):
    with pytest.raises(exc, match=match) as info:
        fn(*args)
    assert isinstance(info.value, bn.BurnumbaError)
    return str(info.value)


@pytest.mark.parametrize("form", ["at", "np.matmul", "np.dot"])
def test_matmul_shape_mismatch_names_the_op_and_both_shapes(form):
    mm = {"at": lambda a, b: a @ b, "np.matmul": np.matmul, "np.dot": np.dot}[form]
    msg = raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(mm(a, b)), argnums=(0, 1)),
                 np.ones((3, 4)), np.ones((5, 2)), match="matmul|dot")
    assert "(3, 4)" in msg and "(5, 2)" in msg
    msg = raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(mm(a, b)), argnums=(0, 1)),
                 np.ones(3), np.ones((4, 2)), match="matmul|dot")
    assert "(3,)" in msg and "(4, 2)" in msg
    msg = raises(bn.ShapeError, bn.grad(lambda a: np.sum(mm(a, np.ones((2, 3))))),
                 np.ones((3, 4)), match="matmul|dot")
    assert "(3, 4)" in msg and "(2, 3)" in msg


def test_matmul_of_a_scalar():
    msg = raises(bn.ShapeError, bn.grad(lambda a: np.sum(a @ 2.0)), np.ones(3), match="matmul")
    assert "(3,)" in msg and "()" in msg


def test_matmul_batch_mismatch():
    msg = raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(a @ b), argnums=(0, 1)),
                 np.ones((2, 3, 4)), np.ones((3, 4, 5)), match="matmul")
    assert "(2, 3, 4)" in msg and "(3, 4, 5)" in msg


def test_elementwise_broadcast_mismatch_of_tensors():
    msg = raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(a * b), argnums=(0, 1)),
                 np.ones((2, 3, 4)), np.ones((3,)), match="multiply")
    assert "(2, 3, 4)" in msg and "(3,)" in msg


def test_joining_and_where_and_masked_fill_mismatches():
    msg = raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(np.concatenate([a, b])),
                                        argnums=(0, 1)),
                 np.ones((2, 3)), np.ones((2, 4)), match="concatenate")
    assert "(2, 3)" in msg and "(2, 4)" in msg
    raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(np.stack([a, b], axis=1)),
                                  argnums=(0, 1)),
           np.ones((2, 3)), np.ones((3, 2)), match="stack")
    msg = raises(bn.ShapeError, bn.grad(lambda a, b: np.sum(np.where(a > 0, a, b)),
                                        argnums=(0, 1)),
                 np.ones(3), np.ones(4), match="where|broadcast")
    assert "(3,)" in msg and "(4,)" in msg
    msg = raises(bn.ShapeError, bn.grad(lambda a: np.sum(bn.masked_fill(a, np.ones(4, bool), 0.0))),
                 np.ones((2, 3)), match="masked_fill")
    assert "(2, 3)" in msg and "(4,)" in msg


def test_split_into_unequal_sections():
    raises(bn.ShapeError, bn.grad(lambda a: np.sum(np.split(a, 2)[0])), np.ones(5),
           match="split")


def test_layer_norm_and_cross_entropy_mismatches():
    msg = raises(bn.ShapeError, bn.grad(lambda x, w: np.sum(bn.layer_norm(x, w)),
                                        argnums=(0, 1)),
                 np.ones((3, 6)), np.ones(5), match="layer_norm")
    assert "(3, 6)" in msg and "(5,)" in msg
    msg = raises(bn.ShapeError, bn.grad(lambda l, t: bn.cross_entropy(l, t)),
                 np.ones((4, 5)), np.zeros(3, dtype=np.int64), match="cross_entropy")
    assert "(4, 5)" in msg and "(3,)" in msg


EMPTY = "empty|no elements|0 elements|size 0"


@pytest.mark.parametrize("name", ["max", "min", "var", "std"])
def test_reduction_over_an_empty_axis(name):
    f = getattr(np, name)
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(f(x[:, :0], axis=1)) + x[0, 0]),
           np.ones((3, 4)), match=EMPTY)
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(f(x[:0], axis=(0, 1))) + x[0, 0]),
           np.ones((3, 4)), match=EMPTY)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_and_mean_over_an_empty_axis_are_numpys(name):
    # numpy: an empty sum is 0, an empty mean NaN (with its RuntimeWarning); a constant
    f = getattr(np, name)
    for g in (lambda x: np.sum(f(x[:, :0], axis=1)) + x[0, 0],
              lambda x: np.sum(f(x[:0], axis=(0, 1))) + x[0, 0]):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            value, grad = bn.value_and_grad(g)(np.ones((3, 4)))
            want = g(np.ones((3, 4)))
        assert value == want or (np.isnan(value) and np.isnan(want))
        assert grad[0, 0] == 1.0 and np.sum(grad) == 1.0


def test_logsumexp_over_an_empty_axis():
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(bn.logsumexp(x[:, :0], axis=-1)) + x[0, 0]),
           np.ones((3, 4)), match=EMPTY)


def test_reduction_axis_out_of_range():
    with pytest.raises((bn.BurnumbaError, np.exceptions.AxisError), match="axis"):
        bn.grad(lambda x: np.sum(np.sum(x, axis=2)))(np.ones((2, 3)))
    with pytest.raises((bn.BurnumbaError, np.exceptions.AxisError), match="axis"):
        bn.grad(lambda x: np.sum(bn.softmax(x, axis=-3)))(np.ones((2, 3)))
