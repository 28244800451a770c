"""numpy.fft on traced values (burnumba/numpy/fft.py): values and gradients against numpy
and HIPS autograd (whose fft gradients are an independent implementation), central
differences where autograd has none, and the errors of what complex arrays do not support."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
from burnumba import UnsupportedOpError

RNG = np.random.default_rng(7)
X8, X7, Y = RNG.normal(size=8), RNG.normal(size=7), RNG.normal(size=(3, 6))
K5 = np.exp(-np.arange(5.0))
H = np.exp(1j * np.arange(8.0) / 3)            # a complex constant (a filter)


def both(body):
    """(burnumba's function, autograd's): ``body(np_module, x)`` written once."""
    return (lambda x: body(np, x)), (lambda x: body(anp, x))


CASES = {
    "power spectrum": (both(lambda m, x: m.sum(m.abs(m.fft.fft(x)) ** 2)), X8),
    "odd length": (both(lambda m, x: m.sum(m.abs(m.fft.fft(x)) ** 3)), X7),
    "rfft real part": (both(lambda m, x: m.sum(m.real(m.fft.rfft(x)) * m.arange(5.0))), X8),
    "ifft of filtered fft": (both(lambda m, x: m.sum(m.real(m.fft.ifft(m.fft.fft(x) * H)) ** 2)),
                             X8),
    "irfft of rfft (even n)": (both(lambda m, x: m.sum(m.fft.irfft(m.fft.rfft(x) * K5) ** 2)), X8),
    "axis 0, ortho": (both(lambda m, x: m.sum(m.abs(m.fft.fft(x, axis=0, norm="ortho")) ** 3)),
                      Y),
    "forward norm": (both(lambda m, x: m.sum(m.imag(m.fft.ifft(x, norm="forward")) * x)), X8),
    "n: zero-padded": (both(lambda m, x: m.sum(m.abs(m.fft.fft(x, n=11)))), X8),
    "n: cut": (both(lambda m, x: m.sum(m.abs(m.fft.fft(x, n=5)) ** 2)), X8),
    "conj product": (both(lambda m, x: m.sum(m.real(m.fft.fft(x) * m.conj(m.fft.fft(x))))), X8),
    "angle": (both(lambda m, x: m.sum(m.angle(m.fft.fft(x))[1:4] * x[:3])), X8),
    "real times complex": (both(lambda m, x: m.sum(m.abs(x * m.fft.fft(x))
                                                   + m.abs(m.fft.fft(x) / (2.0 + x)))), X8),
    "square, power, exp": (both(lambda m, x: m.sum(m.imag(m.fft.fft(x) ** 3)
                                                   + m.real(m.exp(m.fft.fft(x) * 0.1)))), X8),
    "fftshift": (both(lambda m, x: m.sum(m.abs(m.fft.fftshift(m.fft.fft(x))) * m.arange(8.0))),
                 X8),
    "ifftshift": (both(lambda m, x: m.sum(m.fft.ifftshift(x) * m.arange(7.0) ** 2)), X7),
    "fft2": (both(lambda m, x: m.sum(m.abs(m.fft.fft2(x)) ** 2 * m.arange(6.0))), Y),
    "ifftn": (both(lambda m, x: m.sum(m.real(m.fft.ifftn(x)) * m.arange(6.0))), Y),
    "Fourier features": (both(lambda m, x: m.sum(m.real(m.exp(1j * x * m.arange(6.0)))
                                              + m.imag(m.exp(-2j * x)) * x)), X8[:6]),
    "complex constants": (both(lambda m, x: m.sum(m.abs(x * H[:6] + H[:6] * x ** 2
                                                       - x / (1 + 2j)) ** 2)), X8[:6]),
    "complex scalar power": (both(lambda m, x: m.sum(m.real((1j * x + 0.5) ** 3))), X8),
    "sum and mean": (both(lambda m, x: m.abs(m.sum(m.fft.fft(x)[1:])) + m.real(
        m.mean(m.fft.fft(x) ** 2))), X8),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_numpy_and_autograd(name):
    (f, f_autograd), x = CASES[name]
    value, grad = bn.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, autograd.grad(f_autograd)(x), rtol=1e-10, atol=1e-12)


def central(f, x, h=1e-6):
    e = np.eye(x.size).reshape((x.size,) + x.shape)
    return np.array([(f(x + h * d) - f(x - h * d)) / (2 * h) for d in e]).reshape(x.shape)


@pytest.mark.parametrize("n", [7, 9, 12])
def test_irfft_of_any_length_against_central_differences(n):
    """irfft with an odd n (autograd has no gradient for it) or a longer one."""
    def f(x):
        return np.sum(np.fft.irfft(np.fft.rfft(x) * np.exp(-np.arange(5.0)), n=n) ** 2 * x[0])
    value, grad = bn.value_and_grad(f)(X8)
    np.testing.assert_allclose(value, f(X8), rtol=1e-12)
    np.testing.assert_allclose(grad, central(f, X8), rtol=1e-7, atol=1e-9)


def test_under_vmap_jvp_and_hessian():
    def spectrum(x):
        return np.sum(np.abs(np.fft.rfft(x)) ** 2)
    X = RNG.normal(size=(4, 8))
    G = bn.vmap(bn.grad(spectrum))(X)
    for k in range(4):
        np.testing.assert_allclose(G[k], autograd.grad(
            lambda x: anp.sum(anp.abs(anp.fft.rfft(x)) ** 2))(X[k]), rtol=1e-10, atol=1e-12)
    # sum |fft x|^2 = n sum x^2 (Parseval): its Hessian is 2 n I
    H = bn.hessian(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(X8)
    np.testing.assert_allclose(H, 16 * np.eye(8), atol=1e-12)
    _, t = bn.jvp(spectrum, (X[0],), (X[1],))
    assert t == pytest.approx(bn.grad(spectrum)(X[0]) @ X[1], rel=1e-12)


@pytest.mark.parametrize("body, words", [
    (lambda x: np.sum(np.fft.fft(x)), "returned ComplexArray"),
    (lambda x: np.sum(np.abs(np.sin(np.fft.fft(x)))), "numpy.sin of a complex traced array"),
    (lambda x: x[0] if np.fft.fft(x)[1] > 0 else x[1], "no order"),
    (lambda x: np.sum(np.fft.rfft(np.fft.fft(x)).real), "np.real of it first"),
    (lambda x: np.sum(np.abs(np.fft.fft(x, out=np.zeros(8, complex)))), "drop out="),
    (lambda x: np.sum(np.abs(np.fft.hfft(x))), "numpy.fft.hfft is not supported"),
    (lambda x: np.sum(np.where(x > 0, np.fft.fft(x), 0.0).real), "take np.real, np.imag"),
    (lambda x: np.sum(np.abs(np.fft.fft(x)) ** 0.5 * float(np.fft.fft(x)[0].real)),
     "float"),
    (lambda x: np.sum(np.abs(np.sin(1j * x))), "numpy.sin of a complex traced array"),
    (lambda x: np.sum(x) if np.sum(x) > 1j else 0.0, "numpy.greater of a complex"),
    (lambda x: np.sum(np.maximum(x, 2j).real), "numpy.maximum of a complex"),
])
def test_what_complex_arrays_do_not_support_is_named(body, words):
    with pytest.raises(bn.BurnumbaError, match=words):
        bn.grad(body)(X8)


def test_plain_values_are_numpy_and_bnp_fft_has_numpys_names():
    import burnumba.numpy as bnp
    np.testing.assert_array_equal(bnp.fft.fft(X8), np.fft.fft(X8))
    assert bnp.fft.fftfreq is np.fft.fftfreq and bnp.fft.hfft is np.fft.hfft
    assert issubclass(UnsupportedOpError, bn.BurnumbaError)


def test_abs_at_zero_and_an_array_of_traced_scalars():
    """|z| at z = 0 has the gradient 0, autograd's convention (a zero signal's spectrum);
    np.fft.fft(np.array([a, 2 * a])) of traced scalars (numpy's object array) is traced."""
    def spectrum(m, x):
        return m.sum(m.abs(m.fft.fft(x)) ** 2 + m.abs(m.fft.fft(x)))
    for x in (np.zeros(4), np.array([1.0, 0.0, 0.0, 0.0])):
        np.testing.assert_allclose(bn.grad(lambda x: spectrum(np, x))(x),
                                   autograd.grad(lambda x: spectrum(anp, x))(x), atol=1e-12)
    g = bn.grad(lambda a: abs(np.fft.fft(np.array([a, 2 * a]))[1]) + a)(0.5)
    assert g == pytest.approx(autograd.grad(
        lambda a: anp.abs(anp.fft.fft(anp.array([a, 2 * a]))[1]) + a)(0.5), rel=1e-14)
