"""The block rows (where, gather, sum, sumsq, inner) through the API that produces them,
against HIPS autograd and central differences."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
from burnumba.kernels import OPCODE
from conftest import central_diff


def check(ours, theirs, *args, rtol=1e-10, fd=True):
    """Gradient of every argument against autograd, and against central differences
    (``fd=False`` where the arguments sit on a jump, where differences are meaningless)."""
    argnums = tuple(range(len(args)))
    value, g = bn.value_and_grad(ours, argnums=argnums)(*args)
    ref = autograd.grad(theirs, argnum=argnums)(*args)
    np.testing.assert_allclose(value, theirs(*args), rtol=1e-12)
    for k in argnums:
        assert np.shape(g[k]) == np.shape(args[k])
        np.testing.assert_allclose(g[k], ref[k], rtol=rtol, atol=1e-12)
        if fd:
            np.testing.assert_allclose(g[k], central_diff(ours_value(ours, argnums), args, k),
                                       rtol=1e-5, atol=1e-6)
    return bn.trace(ours, *args, argnums=argnums)


def ours_value(f, argnums):
    vg = bn.value_and_grad(f, argnums=argnums)
    return lambda *a: vg(*a)[0]


def ops_of(tape):
    return set(tape.op.tolist())


def test_sum_and_mean_of_a_tensor(rng):
    x = rng.normal(size=(3, 4))
    t = check(lambda x: np.sum(np.sin(x)) * np.mean(x ** 2),
              lambda x: anp.sum(anp.sin(x)) * anp.mean(x ** 2), x)
    assert OPCODE["sum"] in ops_of(t)


def test_fused_sum_mean_of_scalar_lists(rng):
    a, b, c = rng.uniform(-2, 2, size=3)
    t = check(lambda a, b, c: bnp.sum([a * b, b, np.tanh(c), 1.5]) + bnp.mean([a, c]),
              lambda a, b, c: a * b + b + anp.tanh(c) + 1.5 + (a + c) / 2, a, b, c)
    # the list became one node each, not a chain of adds
    assert list(t.op).count(OPCODE["sum"]) == 2
    assert OPCODE["add"] in ops_of(t)          # the one add of the two sums


def test_sumsq(rng):
    x, y = rng.normal(size=5), rng.normal()
    check(lambda x, y: bn.sumsq(x) + bn.sumsq([y, 2.0 * y]),
          lambda x, y: anp.sum(x * x) + 5.0 * y * y, x, y)


@pytest.mark.parametrize("bias", [False, True])
def test_inner_of_lists_and_arrays(rng, bias):
    w, x = rng.normal(size=4), rng.normal(size=4)
    b = float(rng.normal())
    if bias:
        t = check(lambda w, x, b: bn.inner(list(w), list(x), bias=b) + np.dot(w, x),
                  lambda w, x, b: 2 * anp.dot(w, x) + b, w, x, b)
    else:
        t = check(lambda w, x: bn.inner(list(w), list(x)) + np.dot(w, x),
                  lambda w, x: 2 * anp.dot(w, x), w, x)
    assert list(t.op).count(OPCODE["inner"]) == 2


def test_inner_with_itself_fans_out(rng):
    """x . x lists the same node on both sides: its gradient is 2x."""
    x = rng.normal(size=6)
    g = bn.grad(lambda x: np.dot(x, x))(x)
    np.testing.assert_allclose(g, 2 * x, rtol=1e-14)
    a = float(rng.normal())
    assert bn.grad(lambda a: bn.inner([a, a], [a, 3.0]))(a) == pytest.approx(2 * a + 3.0, rel=1e-14)


def test_where(rng):
    x, y = rng.normal(size=7), rng.normal(size=7)
    f = lambda x, y: np.sum(np.where(x > y, x * y, np.sin(y)) * np.arange(7.0))  # noqa: E731
    g = lambda x, y: anp.sum(anp.where(x > y, x * y, anp.sin(y)) * anp.arange(7.0))  # noqa: E731
    check(f, g, x, y)
    x[3] = y[3]                          # at a tie, x > y is false: the second branch
    check(f, g, x, y, fd=False)
    # constant condition, scalar branches
    mask = np.array([True, False, True, True, False, False, True])
    check(lambda x: np.sum(bnp.where(mask, x, 0.5) ** 2),
          lambda x: anp.sum(anp.where(mask, x, 0.5) ** 2), x)


@pytest.mark.parametrize("key", [
    0, -1, slice(1, 3), (1, slice(None, None, -1)), (slice(None), 2), ([0, 2, 2], slice(1, 3)),
    (Ellipsis, 0), np.array([[1, 0], [2, 2]]), (np.array([True, False, True]),),
])
def test_indexing(rng, key):
    x = rng.normal(size=(3, 4))
    w = rng.normal(size=np.shape(x[key]))
    t = check(lambda x: np.sum(np.tanh(x[key]) * w), lambda x: anp.sum(anp.tanh(x[key]) * w), x)
    assert OPCODE["gather"] in ops_of(t)


def test_repeated_indices_accumulate(rng):
    x = rng.normal(size=3)
    g = bn.grad(lambda x: np.sum(x[np.array([0, 0, 2, 0])]))(x)
    np.testing.assert_array_equal(g, [3.0, 0.0, 1.0])


def test_reshape_is_free_and_transpose_gathers(rng):
    x = rng.normal(size=(2, 3, 4))
    w = rng.normal(size=(4, 6))
    t = check(lambda x: np.sum(np.transpose(x, (2, 0, 1)).reshape(4, 6) ** 3 * w),
              lambda x: anp.sum(anp.transpose(x, (2, 0, 1)).reshape(4, 6) ** 3 * w), x)
    assert list(t.op).count(OPCODE["gather"]) == 1      # the transpose; reshape adds no node
    t2 = bn.trace(lambda x: np.sum(x.reshape(6, 4)), x)
    assert OPCODE["gather"] not in ops_of(t2)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_and_concatenate(rng, axis):
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    w = rng.normal(size=np.stack([a, b], axis=axis).shape)
    v = rng.normal(size=np.concatenate([a, b], axis=axis).shape)
    check(lambda a, b: np.sum(np.stack([a, b * b], axis=axis) * w)
          + np.sum(np.concatenate([np.sin(a), b], axis=axis) * v),
          lambda a, b: anp.sum(anp.stack([a, b * b], axis=axis) * w)
          + anp.sum(anp.concatenate([anp.sin(a), b], axis=axis) * v), a, b)


def test_array_of_traced_scalars(rng):
    a, b = rng.normal(size=2)
    w = rng.normal(size=(2, 3))
    check(lambda a, b: np.sum(bnp.array([[a, b, 1.0], [a * b, 2.0, b]]) * w),
          lambda a, b: anp.sum(anp.array([[a, b, 1.0], [a * b, 2.0, b]]) * w), a, b)


def test_broadcasting_expands_with_gather(rng):
    x, y = rng.normal(size=(3, 1)), rng.normal(size=(1, 4))
    w = rng.normal(size=(3, 4))
    check(lambda x, y: np.sum((x * y + np.broadcast_to(y, (3, 4))) * w),
          lambda x, y: anp.sum((x * y + anp.broadcast_to(y, (3, 4))) * w), x, y)


def test_clip_expand_squeeze_ravel(rng):
    x = rng.uniform(-2, 2, size=(3, 1))
    check(lambda x: np.sum(np.clip(x, -0.5, 0.7) ** 2) + np.sum(np.squeeze(x) * np.arange(3.0))
          + np.sum(np.expand_dims(np.ravel(x), 0) ** 3),
          lambda x: anp.sum(anp.clip(x, -0.5, 0.7) ** 2) + anp.sum(anp.squeeze(x) * anp.arange(3.0))
          + anp.sum(anp.expand_dims(anp.ravel(x), 0) ** 3), x)


def test_inner_dot_matmul_with_a_constant_array(rng):
    x, w = rng.normal(size=4), rng.normal(size=4)
    for f in (lambda x: np.inner(x, w), lambda x: np.inner(w, x), lambda x: bnp.inner(x, w),
              lambda x: x @ w, lambda x: w @ x, lambda x: np.dot(w, x)):
        np.testing.assert_allclose(bn.grad(f)(x), w, rtol=1e-15)
    np.testing.assert_allclose(bn.grad(lambda x: x @ x)(x), 2 * x, rtol=1e-15)


@pytest.mark.parametrize("shapes", [((8, 4), (4, 8)), ((3, 9, 30), (30, 7)),
                                    ((2, 3, 8, 4), (2, 3, 4, 8)), ((5, 20, 16), (16, 12)),
                                    ((16, 12), (4, 12, 9)), ((2, 3, 8, 40), (2, 3, 40, 8))])
def test_matmul_on_both_sides_of_the_loop_blas_threshold(rng, shapes):
    """Per-batch products of up to 512 multiply-adds run as loops, larger ones through BLAS;
    these shapes land on both sides, with batches folded, shared and broadcast."""
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    w = rng.normal(size=np.matmul(a, b).shape)
    check(lambda a, b: np.sum(np.tanh(a @ b) * w), lambda a, b: anp.sum(anp.tanh(a @ b) * w),
          a, b)
