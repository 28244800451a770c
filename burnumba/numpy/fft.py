"""numpy.fft on traced values, and the complex arrays its transforms return (and a traced
value's arithmetic with a complex constant: ``1j * x``, ``np.exp(1j * w * t)``).

A tape holds real numbers only, so a complex traced array is a pair of real ones:
``ComplexArray(re, im)``, each a traced array or a numpy constant of the same shape. The
discrete Fourier transforms are real linear maps of such pairs. Along the transformed
axis of length n, with W[j, k] = exp(-2 pi i j k / n) = C - i S,

    fft(a + i b) = (a C + b S) + i (b C - a S)        (a, b: rows of the input)

two or four products with the cosine and sine matrices (computed in float64 with the
exponent j k reduced mod n, so each entry is correctly rounded). That is O(n^2) work per
transform, not the FFT's O(n log n): fine for the signal and image sizes of a small
model (n up to a few thousand), and its rounding error grows like n eps, not log n eps.
Gradients follow from the products, the same as autograd's fft gradients.

What a complex array supports: + - * / with real or complex numbers, arrays and traced
values, ``**`` of an integer, ``abs``, ``np.real`` / ``np.imag`` / ``.real`` / ``.imag``,
``np.conj``, ``np.angle``, ``np.exp``, ``np.square``, ``np.sum`` / ``np.mean``, indexing,
``reshape``, ``.T``, ``np.fft``'s transforms and shifts. Anything else (a complex result
returned from the function, a comparison, a ufunc without a complex rule here) raises an
UnsupportedOpError that names it. A function's output must be real: take ``np.abs``,
``np.real`` or ``np.sum(abs(X) ** 2)`` of a transform.
"""
import functools

import numpy as np

from .._errors import UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements, implements_method
from ._common import _builder

_NORMS = (None, "backward", "ortho", "forward")


def _unsupported(what):
    return UnsupportedOpError(at_user_site(
        f"{what} of a complex traced array (numpy.fft's result): complex arrays here support "
        "+ - * /, ** of an int, abs, real, imag, conj, angle, exp, square, sum, mean, "
        "indexing, reshape, .T and numpy.fft's transforms; take np.abs or np.real of it "
        "first (a function's output must be real)"))


def _parts(x):
    """(re, im) of a complex array, a traced value, a number or a numpy array; im None when
    x is real."""
    if type(x) is ComplexArray:
        return x.re, x.im
    if isinstance(x, complex) or (isinstance(x, np.ndarray) and x.dtype.kind == "c") or \
            isinstance(x, np.complexfloating):
        return np.real(x), np.imag(x)
    return x, None


def _complex(re, im):
    return re if im is None else ComplexArray(re, im)


class ComplexArray:
    """A complex traced array as its real and imaginary parts (module docstring)."""

    _burnumba_complex = True            # tracing/tracer.py's lift: not a real operand
    __array_priority__ = 100

    def __init__(self, re, im):
        self.re, self.im = re, im

    # -- metadata ----------------------------------------------------------------------
    shape = property(lambda self: np.shape(self.re))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))
    dtype = np.dtype(np.complex128)
    real = property(lambda self: self.re)
    imag = property(lambda self: self.im)
    T = property(lambda self: ComplexArray(np.transpose(self.re), np.transpose(self.im)))

    def __len__(self):
        return len(self.re)

    def __repr__(self):
        return f"ComplexTraced<{list(self.shape)}>"

    def conj(self):
        return ComplexArray(self.re, -self.im)

    conjugate = conj

    def reshape(self, *shape):
        return ComplexArray(np.reshape(self.re, shape[0] if len(shape) == 1 else shape),
                            np.reshape(self.im, shape[0] if len(shape) == 1 else shape))

    def sum(self, *args, **kwargs):
        return ComplexArray(np.sum(self.re, *args, **kwargs), np.sum(self.im, *args, **kwargs))

    def mean(self, *args, **kwargs):
        return ComplexArray(np.mean(self.re, *args, **kwargs),
                            np.mean(self.im, *args, **kwargs))

    def __getitem__(self, index):
        return ComplexArray(self.re[index], self.im[index])

    # -- arithmetic --------------------------------------------------------------------
    def __neg__(self):
        return ComplexArray(-self.re, -self.im)

    def __pos__(self):
        return self

    def __add__(self, o):
        a, b = _parts(o)
        return _complex(self.re + a, self.im if b is None else self.im + b)

    __radd__ = __add__

    def __sub__(self, o):
        a, b = _parts(o)
        return _complex(self.re - a, self.im if b is None else self.im - b)

    def __rsub__(self, o):
        return (-self).__add__(o)

    def __mul__(self, o):
        a, b = _parts(o)
        if b is None:
            return ComplexArray(self.re * a, self.im * a)
        return ComplexArray(self.re * a - self.im * b, self.re * b + self.im * a)

    __rmul__ = __mul__

    def __truediv__(self, o):
        a, b = _parts(o)
        if b is None:
            return ComplexArray(self.re / a, self.im / a)
        d = a * a + b * b
        return ComplexArray((self.re * a + self.im * b) / d, (self.im * a - self.re * b) / d)

    def __rtruediv__(self, o):
        a, b = _parts(o)
        d = self.re * self.re + self.im * self.im
        b = 0.0 if b is None else b
        return ComplexArray((a * self.re + b * self.im) / d, (b * self.re - a * self.im) / d)

    def __pow__(self, p):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise _unsupported(f"** {p!r}")
        if p < 0:
            return 1.0 / self ** (-p)
        out, base = None, self
        while p:                               # square and multiply
            if p & 1:
                out = base if out is None else out * base
            p >>= 1
            if p:
                base = base * base
        return ComplexArray(np.ones_like(self.re), np.zeros_like(self.im)) if out is None \
            else out

    def __abs__(self):
        # |z| = sqrt(re^2 + im^2), with the gradient 0 at z = 0 (autograd's convention; the
        # plain formula's would be inf * 0): the square root never sees the zero it skips
        u = self.re * self.re + self.im * self.im
        positive = u > 0.0
        return np.where(positive, np.sqrt(np.where(positive, u, 1.0)), 0.0)

    def __bool__(self):
        raise _unsupported("bool()")

    def __float__(self):
        raise _unsupported("float()")

    def __eq__(self, o):
        raise _unsupported("==")

    def __ne__(self, o):
        raise _unsupported("!=")

    def __lt__(self, o):
        raise _unsupported("a comparison (complex numbers have no order)")

    __le__ = __gt__ = __ge__ = __lt__
    __hash__ = None

    # -- numpy's protocols ---------------------------------------------------------------
    def __array__(self, *args, **kwargs):
        raise _unsupported("a numpy array")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        rule = _UFUNCS.get(ufunc)
        if method != "__call__" or kwargs or rule is None:
            raise _unsupported(f"numpy.{ufunc.__name__}" + ("" if method == "__call__"
                                                            else f".{method}"))
        return rule(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        rule = _FUNCTIONS.get(func)
        if rule is None:
            raise _unsupported(f"{func.__module__}.{func.__name__}")
        return rule(*args, **kwargs)


def _exp(z):
    a, b = _parts(z)
    e = np.exp(a)
    return e if b is None else ComplexArray(e * np.cos(b), e * np.sin(b))


# x op y of two operands, at least one complex: ``method`` when x is a complex array, y's
# ``reflected`` one when only y is; else (a complex constant and a traced real value, from
# the tracer's map: ``1j * x``) x as a complex array, its imaginary part zeros
_BINARY = {"add": (ComplexArray.__add__, ComplexArray.__radd__),
           "subtract": (ComplexArray.__sub__, ComplexArray.__rsub__),
           "multiply": (ComplexArray.__mul__, ComplexArray.__rmul__),
           "divide": (ComplexArray.__truediv__, ComplexArray.__rtruediv__)}


def _binary(name, x, y):
    method, reflected = _BINARY[name]
    if type(x) is ComplexArray:
        return method(x, y)
    if type(y) is ComplexArray:
        return reflected(y, x)
    a, b = _parts(x)
    return method(ComplexArray(a, np.zeros(np.shape(a)) if b is None else b), y)


_UFUNCS = {
    np.add: lambda x, y: _binary("add", x, y),
    np.subtract: lambda x, y: _binary("subtract", x, y),
    np.multiply: lambda x, y: _binary("multiply", x, y),
    np.divide: lambda x, y: _binary("divide", x, y),
    np.negative: ComplexArray.__neg__,
    np.absolute: ComplexArray.__abs__,
    np.conjugate: ComplexArray.conj,
    np.square: lambda z: z * z,
    np.exp: _exp,
}


@implements_method("__complex__")
def complex_map(name, xs):
    """The elementwise row ``name`` of the tracer's map when an operand is complex (a complex
    constant, ``1j * x``, or a ComplexArray): the complex arithmetic of the two."""
    if name not in _BINARY or len(xs) != 2:
        raise _unsupported(f"numpy.{name}")
    return _binary(name, *xs)


def _real_part(z):
    return _parts(z)[0]


def _imag_part(z):
    b = _parts(z)[1]
    return np.zeros_like(z) if b is None else b


def _angle(z, deg=False):
    a, b = _parts(z)
    out = np.arctan2(0.0 * a if b is None else b, a)
    return out * (180.0 / np.pi) if deg else out


# numpy's functions (the ufuncs, np.abs and np.conj among them, are _UFUNCS')
_FUNCTIONS = {
    np.real: _real_part, np.imag: _imag_part, np.angle: _angle, np.sum: ComplexArray.sum,
    np.mean: ComplexArray.mean, np.reshape: ComplexArray.reshape,
    np.transpose: lambda z: z.T, np.shape: lambda z: z.shape,
}


# -- the transforms ----------------------------------------------------------------------
def _dft(n, m, inverse):
    """(C, S): cos and sin of 2 pi j k / n for j < n (input) and k < m (output); the sign
    of the exponent is the caller's (fft: exp(-i t), ifft: exp(+i t))."""
    jk = np.outer(np.arange(n), np.arange(m)) % n
    t = 2.0 * np.pi * jk / n
    return np.cos(t), (-1.0 if inverse else 1.0) * np.sin(t)


def _scale(n, norm, inverse):
    if norm not in _NORMS:
        raise UnsupportedOpError(at_user_site(
            f"numpy.fft: norm={norm!r}; numpy's are 'backward', 'ortho' and 'forward'"))
    if norm == "ortho":
        return 1.0 / np.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def _along_last(x, n, axis):
    """(re, im) of x with ``axis`` moved last and cut or zero-padded to ``n`` there."""
    a, b = _parts(x)
    a = np.moveaxis(a, axis, -1)
    b = None if b is None else np.moveaxis(b, axis, -1)
    length = np.shape(a)[-1]
    if n is None:
        return a, b, length
    if n < 1:
        raise UnsupportedOpError(at_user_site(f"numpy.fft: n={n}; it must be at least 1"))
    if n < length:
        a, b = a[..., :n], None if b is None else b[..., :n]
    elif n > length:
        pad = [(0, 0)] * (np.ndim(a) - 1) + [(0, n - length)]
        a, b = np.pad(a, pad), None if b is None else np.pad(b, pad)
    return a, b, n


def _transform(x, n, axis, norm, inverse, m=None):
    a, b, n = _along_last(x, n, axis)
    C, S = _dft(n, n if m is None else m, inverse)
    s = _scale(n, norm, inverse)
    # (a + i b)(C - i S) = (a C + b S) + i (b C - a S)
    re, im = a @ C, -(a @ S)
    if b is not None:
        re, im = re + b @ S, im + b @ C
    re, im = (re * s, im * s) if s != 1.0 else (re, im)
    return ComplexArray(np.moveaxis(re, -1, axis), np.moveaxis(im, -1, axis))


def _on_traced(npfunc):
    """The decorated transform for a traced (or complex traced) first argument; numpy's
    ``npfunc`` for plain values (``bnp.fft.fft(array)`` called outside a trace)."""
    def decorate(impl):
        @functools.wraps(impl)
        def transform(a, *args, **kwargs):
            if type(a) is not ComplexArray and _builder(a) is None:
                return npfunc(a, *args, **kwargs)
            return impl(a, *args, **kwargs)
        return transform
    return decorate


@implements(np.fft.fft)
@_on_traced(np.fft.fft)
def fft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.fft of a real or complex traced array (a complex array: ComplexArray)."""
    _no_out("fft", out)
    return _transform(a, n, axis, norm, False)


@implements(np.fft.ifft)
@_on_traced(np.fft.ifft)
def ifft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.ifft."""
    _no_out("ifft", out)
    return _transform(a, n, axis, norm, True)


@implements(np.fft.rfft)
@_on_traced(np.fft.rfft)
def rfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.rfft: the n // 2 + 1 non-negative frequencies of a real input."""
    _no_out("rfft", out)
    if _parts(a)[1] is not None:
        raise UnsupportedOpError(at_user_site(
            "numpy.fft.rfft of a complex array: numpy discards its imaginary part; take "
            "np.real of it first, or use fft"))
    length = np.shape(a)[axis] if n is None else n
    return _transform(a, n, axis, norm, False, m=length // 2 + 1)


@implements(np.fft.irfft)
@_on_traced(np.fft.irfft)
def irfft(a, n=None, axis=-1, norm=None, out=None):
    """numpy.fft.irfft: the real signal of length n (default 2 (m - 1)) whose rfft is a's
    first n // 2 + 1 entries; the imaginary parts of the zero and Nyquist terms are
    ignored, as numpy does."""
    _no_out("irfft", out)
    m_in = np.shape(_parts(a)[0])[axis]
    n = 2 * (m_in - 1) if n is None else n
    if n < 1:
        raise UnsupportedOpError(at_user_site(f"numpy.fft.irfft: n={n}; it must be at least 1"))
    m = n // 2 + 1
    a, b, _ = _along_last(a, m, axis)
    # x[t] = s sum_k c_k (Re X_k cos(2 pi k t / n) - Im X_k sin(2 pi k t / n)), c_k = 2 but
    # for k = 0 and the Nyquist term k = n / 2 (n even): 1
    k, t = np.arange(m), np.arange(n)
    angle = 2.0 * np.pi * (np.outer(k, t) % n) / n
    c = np.full(m, 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    s = _scale(n, norm, True)
    x = a @ (c[:, None] * np.cos(angle) * s)
    if b is not None:
        x = x - b @ (c[:, None] * np.sin(angle) * s)
    return np.moveaxis(x, -1, axis)


def _over_axes(name, x, s, axes, norm, inverse):
    """fft2 / fftn and their inverses: the 1-D transform along each axis in turn (``s``:
    the lengths, as numpy's n per axis)."""
    ndim = np.ndim(_parts(x)[0])
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    axes = tuple(axes)
    if s is not None and len(s) != len(axes):
        raise UnsupportedOpError(at_user_site(
            f"numpy.fft.{name}: s has {len(s)} lengths for {len(axes)} axes"))
    for k, axis in enumerate(axes):
        x = _transform(x, None if s is None else s[k], axis, norm, inverse)
    return x


@implements(np.fft.fft2)
@_on_traced(np.fft.fft2)
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.fft2: fft along the two axes."""
    _no_out("fft2", out)
    return _over_axes("fft2", a, s, axes, norm, False)


@implements(np.fft.ifft2)
@_on_traced(np.fft.ifft2)
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy.fft.ifft2."""
    _no_out("ifft2", out)
    return _over_axes("ifft2", a, s, axes, norm, True)


@implements(np.fft.fftn)
@_on_traced(np.fft.fftn)
def fftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.fftn: fft along every axis (or ``axes``)."""
    _no_out("fftn", out)
    return _over_axes("fftn", a, s, axes, norm, False)


@implements(np.fft.ifftn)
@_on_traced(np.fft.ifftn)
def ifftn(a, s=None, axes=None, norm=None, out=None):
    """numpy.fft.ifftn."""
    _no_out("ifftn", out)
    return _over_axes("ifftn", a, s, axes, norm, True)


def _shift(x, axes, inverse):
    """fftshift (the zero frequency to the middle: a roll by n // 2) or its inverse (by
    -(n // 2)), of both parts."""
    a, b = _parts(x)
    axes = tuple(range(np.ndim(a))) if axes is None else (
        (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes))
    shifts = [(-1 if inverse else 1) * (np.shape(a)[ax] // 2) for ax in axes]
    return _complex(np.roll(a, shifts, axes), None if b is None else np.roll(b, shifts, axes))


@implements(np.fft.fftshift)
@_on_traced(np.fft.fftshift)
def fftshift(x, axes=None):
    """numpy.fft.fftshift (of a real or complex traced array)."""
    return _shift(x, axes, False)


@implements(np.fft.ifftshift)
@_on_traced(np.fft.ifftshift)
def ifftshift(x, axes=None):
    """numpy.fft.ifftshift."""
    return _shift(x, axes, True)


_FUNCTIONS.update({np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft,
                   np.fft.fft2: fft2, np.fft.ifft2: ifft2, np.fft.fftn: fftn,
                   np.fft.ifftn: ifftn, np.fft.fftshift: fftshift,
                   np.fft.ifftshift: ifftshift})
fftfreq, rfftfreq = np.fft.fftfreq, np.fft.rfftfreq        # plain numbers: numpy's own


def _no_out(name, out):
    if out is not None:
        raise UnsupportedOpError(at_user_site(
            f"numpy.fft.{name}(..., out=...) of a traced array: drop out= and use the result"))


def __getattr__(name):
    """numpy.fft's other names (fft2, hfft, ...): numpy's own, which a traced array reaches
    through its protocol, and there raises the error that names them."""
    return getattr(np.fft, name)


__all__ = ["ComplexArray", "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn",
           "fftshift", "ifftshift", "fftfreq", "rfftfreq"]
