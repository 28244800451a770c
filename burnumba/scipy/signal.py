"""``burnumba.scipy.signal``: scipy.signal's convolve and correlate in N dimensions (modes
full, valid, same) and convolve2d / correlate2d, on traced values.

The full convolution is one gather and one product: full[n] = sum_k A[n - k] K[k], the
positions n - k that fall outside A reading an appended zero. A is the larger operand (the
convolution commutes), so the gather holds (output size) x (smaller size) positions; 'same'
and 'valid' are slices of 'full', as scipy takes them. Gradients flow to both operands.
"""
import math

import numpy as np

from .._errors import InputError, ShapeError, UnsupportedOpError, at_user_site
from ..numpy import indexing, products, shapes
from ..numpy._common import _builder

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]


def _scipy(name):
    import scipy.signal
    return getattr(scipy.signal, name)


def _shape(x):
    return tuple(x.shape) if _builder(x) is not None else np.shape(x)


def _full(a, k):
    """The full N-d convolution of a and k (same ndim)."""
    sa, sk = _shape(a), _shape(k)
    if math.prod(sk) > math.prod(sa):
        a, k, sa, sk = k, a, sk, sa
    out = tuple(p + q - 1 for p, q in zip(sa, sk))
    d = len(out)
    n = np.indices(out).reshape(d, -1, 1)
    j = np.indices(sk).reshape(d, 1, -1)
    m = n - j
    dims = np.array(sa).reshape(d, 1, 1)
    inside = np.all((m >= 0) & (m < dims), axis=0)
    flat = np.ravel_multi_index(tuple(np.clip(m, 0, dims - 1)), sa)
    idx = np.where(inside, flat, math.prod(sa))
    b = _builder(a, k)
    av = shapes.concatenate([shapes.reshape(b.lift(a), (-1,)), np.zeros(1)])
    taken = indexing.take(av, idx)                      # (out size, kernel size)
    y = products.matmul(taken, shapes.reshape(b.lift(k), (-1,)))
    return shapes.reshape(y, out)


def _mode_slice(full, s1, s2, mode):
    if mode == "full":
        return full
    fs = _shape(full)
    if mode == "same":
        starts = [(f - p) // 2 for f, p in zip(fs, s1)]
        return full[tuple(slice(st, st + p) for st, p in zip(starts, s1))]
    # valid: one operand at least as large as the other in every dimension
    if not (all(p >= q for p, q in zip(s1, s2)) or all(q >= p for p, q in zip(s1, s2))):
        raise ShapeError(at_user_site(
            f"convolve(..., mode='valid'): in1 {s1} and in2 {s2}: one must be at least as "
            "large as the other in every dimension"))
    lo = [min(p, q) - 1 for p, q in zip(s1, s2)]
    size = [max(p, q) - min(p, q) + 1 for p, q in zip(s1, s2)]
    return full[tuple(slice(st, st + z) for st, z in zip(lo, size))]


def _check(name, in1, in2, mode, method):
    if mode not in ("full", "valid", "same"):
        raise InputError(at_user_site(
            f"{name}: mode must be 'full', 'valid' or 'same', got {mode!r}"))
    if method not in ("auto", "direct", "fft"):
        raise InputError(at_user_site(
            f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}"))
    s1, s2 = _shape(in1), _shape(in2)
    if len(s1) != len(s2):
        raise ShapeError(at_user_site(
            f"{name}: in1 {s1} and in2 {s2} should have the same dimensionality"))
    if 0 in s1 or 0 in s2:
        raise ShapeError(at_user_site(f"{name} of an empty array ({s1}, {s2})"))
    return s1, s2


def convolve(in1, in2, mode="full", method="auto"):
    """The N-d convolution of in1 and in2 (scipy.signal.convolve; ``method`` is accepted and
    the result is the exact sum either way).

    >>> bn.grad(lambda k: convolve(np.arange(5.0), k, mode="same").sum())(np.ones(3))
    """
    if _builder(in1, in2) is None:
        return _scipy("convolve")(in1, in2, mode=mode, method=method)
    s1, s2 = _check("convolve", in1, in2, mode, method)
    if len(s1) == 0:
        return in1 * in2
    return _mode_slice(_full(in1, in2), s1, s2, mode)


def correlate(in1, in2, mode="full", method="auto"):
    """The N-d cross-correlation (scipy.signal.correlate): convolve(in1, in2 reversed in
    every axis) for real inputs, with scipy's 'valid' swap when in2 is the larger."""
    if _builder(in1, in2) is None:
        return _scipy("correlate")(in1, in2, mode=mode, method=method)
    s1, s2 = _check("correlate", in1, in2, mode, method)
    if len(s1) == 0:
        return in1 * in2
    b = _builder(in1, in2)
    if mode == "valid" and all(q >= p for p, q in zip(s1, s2)) and s1 != s2:
        # scipy swaps the operands and reverses the result
        full = _full(shapes.flip(b.lift(in1)), b.lift(in2))
        return shapes.flip(_mode_slice(full, s2, s1, mode))
    full = _full(b.lift(in1), shapes.flip(b.lift(in2)))
    return _mode_slice(full, s1, s2, mode)


def _two_d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise UnsupportedOpError(at_user_site(
            f"{name}(..., boundary={boundary!r}, fillvalue={fillvalue!r}) is not supported "
            "on traced values: only boundary='fill' with fillvalue=0 (pad the input with "
            "bnp.pad for 'wrap' or 'symm')"))
    if len(_shape(in1)) != 2 or len(_shape(in2)) != 2:
        raise ShapeError(at_user_site(f"{name} inputs must both be 2-D arrays"))


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-D convolution (scipy.signal.convolve2d), zero-filled boundary."""
    if _builder(in1, in2) is None:
        return _scipy("convolve2d")(in1, in2, mode=mode, boundary=boundary,
                                     fillvalue=fillvalue)
    _two_d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode=mode)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-D cross-correlation (scipy.signal.correlate2d), zero-filled boundary."""
    if _builder(in1, in2) is None:
        return _scipy("correlate2d")(in1, in2, mode=mode, boundary=boundary,
                                      fillvalue=fillvalue)
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    return correlate(in1, in2, mode=mode)
