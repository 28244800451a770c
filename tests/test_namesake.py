"""``import burnumba.numpy as np`` (and burnumba.scipy's modules) replace numpy's, autograd's
or scipy's in a whole program: a name burnumba does not define is the library's own, plain
values get the library's result, and a traced value given to a function burnumba cannot
trace raises burnumba's error naming it (never a bare AttributeError)."""
import numpy
import pytest
import scipy.special

import burnumba as bn
import burnumba.numpy as np
import burnumba.scipy.linalg as L
import burnumba.scipy.special as S
import burnumba.scipy.stats as T


def test_numpys_names_are_numpys_own():
    assert np.pi == numpy.pi and np.newaxis is None and np.float64 is numpy.float64
    assert np.random is numpy.random and np.histogram is numpy.histogram
    # bnp.fft: numpy.fft's names, its transforms traced too (burnumba/numpy/fft.py)
    assert np.fft.fftfreq is numpy.fft.fftfreq and np.fft.hfft is numpy.fft.hfft
    x = numpy.arange(6.0)
    assert numpy.array_equal(np.fft.rfft(x), numpy.fft.rfft(x))
    assert np.linalg.eig is numpy.linalg.eig and np.linalg.solve is not numpy.linalg.solve
    assert S.erfcx is scipy.special.erfcx and S.gammaln is not scipy.special.gammaln
    assert np.histogram(numpy.array([2.0, 1.0, 2.0]), bins=2)[0].tolist() == [1, 2]


def test_an_autograd_style_program_runs_with_its_numpy_import_swapped():
    def loss(w, x):                    # autograd's examples' style: np.* for everything
        h = np.tanh(np.dot(x, w[:, np.newaxis]))
        return np.sum(np.log1p(np.exp(-h))) + np.pi * np.sum(w ** 2) / np.float64(2.0)
    x = numpy.random.default_rng(0).normal(size=(5, 3))
    w = numpy.ones(3)
    ref = numpy.sum(numpy.log1p(numpy.exp(-numpy.tanh(x @ w[:, None])))) + numpy.pi * 1.5
    value, g = bn.value_and_grad(loss)(w, x)
    assert abs(value - ref) < 1e-12 and g.shape == (3,)


@pytest.mark.parametrize("f, error, name", [
    (lambda x: np.sum(np.histogram(x)[0] * x[0]), bn.UnsupportedOpError, "numpy.histogram"),
    (lambda x: np.sum(np.linalg.eigvals(np.outer(x, x))), bn.UnsupportedOpError,
     "numpy.linalg.eigvals"),
    (lambda x: np.sum(S.erfcx(x)), bn.UnsupportedOpError, "scipy.special.erfcx"),
    (lambda x: np.sum(T.wishart.logpdf(numpy.eye(3) * x[0], 4, numpy.eye(3))),
     bn.ConcretizationError, "scipy.stats.wishart"),
    (lambda x: np.sum(L.sqrtm(np.outer(x, x))), bn.ConcretizationError, "scipy.linalg.sqrtm"),
])
def test_what_burnumba_cannot_trace_is_named(f, error, name):
    with pytest.raises(error, match=name):
        bn.grad(f)(numpy.array([0.5, 1.5, 2.0]))


def test_a_name_neither_has_is_an_attribute_error():
    with pytest.raises(AttributeError, match="'burnumba.numpy' has no attribute 'nonsense'"):
        np.nonsense
    assert not hasattr(np, "_private") and not hasattr(S, "__wrapped__")


def test_burnumba_numpy_random_is_numpys_and_draws_stay_fresh():
    import burnumba.numpy.random as npr
    assert npr.RandomState is numpy.random.RandomState and npr.randn is numpy.random.randn
    rs = npr.RandomState(0)
    g = bn.grad(lambda w: np.sum(w * rs.randn(3)))   # autograd's black-box SVI style
    first, second = g(numpy.ones(3)), g(numpy.ones(3))
    want = numpy.random.RandomState(0)
    assert first.tolist() == want.randn(3).tolist() and second.tolist() == want.randn(3).tolist()
