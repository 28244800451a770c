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
from ..numpy._common import _builder, namesake

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "oaconvolve"]


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


def convolve(in1, in2, mode="full", method="auto", axes=None, dot_axes=None):
    """The N-d convolution of in1 and in2 (scipy.signal.convolve; ``method`` is accepted and
    the result is the exact sum either way).

    With ``axes`` or ``dot_axes``, autograd's tensor convolution
    (``autograd.scipy.signal.convolve(A, B, axes, dot_axes, mode)``, modes 'full' and
    'valid'): A and B are convolved along the axis pairs ``axes`` (default: all), summed
    along the pairs ``dot_axes``, and the result's axes are A's other axes, B's other axes,
    then the convolved ones; a convolutional layer is
    ``convolve(inputs, filters, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")``.

    >>> bn.grad(lambda k: convolve(np.arange(5.0), k, mode="same").sum())(np.ones(3))
    """
    if axes is not None or dot_axes is not None:
        return _tensor_convolve(in1, in2, axes, ((), ()) if dot_axes is None else dot_axes,
                                mode)
    if _builder(in1, in2) is None:
        return _scipy("convolve")(in1, in2, mode=mode, method=method)
    s1, s2 = _check("convolve", in1, in2, mode, method)
    if len(s1) == 0:
        return in1 * in2
    return _mode_slice(_full(in1, in2), s1, s2, mode)


def _tensor_convolve(A, B, axes, dot_axes, mode):
    """autograd's convolve(A, B, axes, dot_axes, mode), its algorithm step by step: the
    larger operand's sliding windows (one gather of constant positions, numpy's as_strided
    applied to element numbers), the other operand flipped along the convolved axes, and one
    einsum over the convolved and dotted axes."""
    if mode not in ("full", "valid"):
        raise InputError(at_user_site(
            f"convolve(..., axes=, dot_axes=): mode must be 'full' or 'valid' (autograd's "
            f"tensor convolution), got {mode!r}"))
    b = _builder(A, B)
    lift = (lambda x: x) if b is None else b.lift
    A, B = lift(A), lift(B)
    sa, sb = _shape(A), _shape(B)
    if axes is None:
        axes = (list(range(len(sa))), list(range(len(sa))))
    axes = (list(axes[0]), list(axes[1]))
    dot_axes = (list(dot_axes[0]), list(dot_axes[1]))
    if len(axes[0]) != len(axes[1]) or len(dot_axes[0]) != len(dot_axes[1]):
        raise ShapeError(at_user_site(
            f"convolve: axes {axes} and dot_axes {dot_axes} must pair A's axes with B's"))
    if any(sb[j] < sa[i] for i, j in zip(*axes)):          # B must be the larger: swap
        if mode == "valid" and not all(sb[j] <= sa[i] for i, j in zip(*axes)):
            raise ShapeError(at_user_site(
                f"convolve(..., mode='valid'): A {sa} and B {sb}: one must be at least as "
                "large as the other along every convolved axis"))
        if mode != "full" or math.prod(sb) <= math.prod(sa):
            i1 = len(sb) - len(dot_axes[1]) - len(axes[1])
            i2 = i1 + len(sa) - len(dot_axes[0]) - len(axes[0])
            i3 = i2 + len(axes[0])
            out = _tensor_convolve(B, A, axes[::-1], dot_axes[::-1], mode)
            return shapes.transpose(out, list(range(i1, i2)) + list(range(i1)) +
                                    list(range(i2, i3)))
    if mode == "full":
        pad = [(0, 0)] * len(sb)
        for i, j in zip(*axes):
            pad[j] = (sa[i] - 1,) * 2
        B = np.pad(B, pad, mode="constant")
        sb = _shape(B)
    # the windows of B: element numbers through numpy's as_strided, then one gather
    numbers = np.arange(math.prod(sb)).reshape(sb)
    view_shape, view_strides = list(sb), list(numbers.strides)
    flip = [slice(None)] * len(sa)
    for i, j in zip(*axes):
        view_shape.append(abs(sb[j] - sa[i]) + 1)
        view_strides.append(numbers.strides[j])
        view_shape[j] = sa[i]
        flip[i] = slice(None, None, -1)
    positions = np.lib.stride_tricks.as_strided(numbers, view_shape, view_strides)
    B_view = shapes.reshape(B, (-1,))[np.array(positions)]
    A_view = A[tuple(flip)]
    a_labels = list(range(len(sa)))
    b_labels = list(range(len(sa), len(sa) + len(view_shape)))
    for k, (i, j) in enumerate(zip(axes[0] + dot_axes[0], axes[1] + dot_axes[1])):
        a_labels[i] = b_labels[j] = len(sa) + len(view_shape) + k
    return products.einsum(A_view, a_labels, B_view, b_labels)


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


def _fft_named(name):
    def conv(in1, in2, mode="full", axes=None):
        if _builder(in1, in2) is None:
            return _scipy(name)(in1, in2, mode=mode, axes=axes)
        if axes is not None:
            raise UnsupportedOpError(at_user_site(
                f"{name}(..., axes={axes!r}) is not supported on traced values: only "
                "axes=None (every axis)"))
        return convolve(in1, in2, mode=mode)
    conv.__name__ = conv.__qualname__ = name
    conv.__doc__ = (f"scipy.signal.{name}: the same convolution as ``convolve`` (traced as "
                    "the direct sum, which equals the FFT's result up to rounding); "
                    "``axes=None`` only on traced values.")
    return conv


fftconvolve = _fft_named("fftconvolve")
oaconvolve = _fft_named("oaconvolve")


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
    if mode == "same":
        # scipy's correlate2d centres its 'same' window otherwise than correlate: it starts
        # at in2's side // 2 of the full correlation, correlate's at (side - 1) // 2, one
        # apart where a side of in2 is even
        full = correlate(in1, in2, mode="full")
        return full[tuple(slice(q // 2, q // 2 + p) for p, q in zip(_shape(in1), _shape(in2)))]
    return correlate(in1, in2, mode=mode)

__getattr__ = namesake(__name__, "scipy.signal")    # what burnumba does not define: scipy's own
