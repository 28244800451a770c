"""autograd's tensor convolution, ``convolve(A, B, axes=, dot_axes=, mode=)`` (what
autograd's convnet example calls), in burnumba.scipy.signal: values and gradients of both
operands against autograd.scipy.signal.convolve, on plain and traced values, plus central
differences; the swap of operands when A is the larger, and both modes."""
import autograd
import autograd.numpy as anp
import autograd.scipy.signal as ags
import numpy as np
import pytest
from conftest import central_diff

import burnumba as bn
from burnumba.scipy.signal import convolve

CASES = {
    "conv layer, valid": ((4, 1, 9, 9), (1, 3, 5, 5),
                          dict(axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")),
    "conv layer, full": ((2, 2, 6, 6), (2, 3, 3, 3),
                         dict(axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="full")),
    "1-d full": ((7,), (3,), dict(axes=([0], [0]), mode="full")),
    "1-d valid": ((7,), (3,), dict(axes=([0], [0]), mode="valid")),
    "1-d valid, B larger": ((3,), (7,), dict(axes=([0], [0]), mode="valid")),
    "batch of 2-d, full": ((2, 6, 5), (4, 3), dict(axes=([1, 2], [0, 1]), mode="full")),
    "every axis": ((3, 4), (5, 6), dict(dot_axes=((), ()), mode="full")),
}


@pytest.mark.parametrize("name", CASES)
def test_tensor_convolve_matches_autograd(name, rng):
    sa, sb, kw = CASES[name]
    A, B = rng.normal(size=sa), rng.normal(size=sb)
    ref = ags.convolve(A, B, **kw)
    plain = convolve(A, B, **kw)
    assert plain.shape == ref.shape
    np.testing.assert_allclose(plain, ref, rtol=1e-12, atol=1e-13)
    W = rng.normal(size=ref.shape)
    want = autograd.grad(lambda A, B: anp.sum(ags.convolve(A, B, **kw) * W), argnum=(0, 1))(A, B)
    value, got = bn.value_and_grad(lambda A, B: np.sum(convolve(A, B, **kw) * W),
                                   argnums=(0, 1))(A, B)
    np.testing.assert_allclose(value, np.sum(ref * W), rtol=1e-12)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    if A.size <= 8:
        np.testing.assert_allclose(
            got[0], central_diff(lambda A, B: np.sum(convolve(A, B, **kw) * W), [A, B], 0),
            rtol=1e-6, atol=1e-8)


def test_tensor_convolve_refuses_same_and_unpaired_axes(rng):
    A, B = rng.normal(size=5), rng.normal(size=3)
    with pytest.raises(bn.InputError, match="'full' or 'valid'"):
        bn.grad(lambda A: np.sum(convolve(A, B, axes=([0], [0]), mode="same")))(A)
    with pytest.raises(bn.ShapeError, match="pair"):
        bn.grad(lambda A: np.sum(convolve(A, B, axes=([0], []))))(A)
