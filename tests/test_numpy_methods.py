"""ndarray methods on traced values: numpy's names and signatures, each the burnumba.numpy
function of the same name, checked against numpy's values and HIPS autograd's gradients
(ArrayBox has the same methods). Methods that cannot be traced (concrete values, integer
results, in-place writes) raise UnsupportedMethodError naming the method and the fix.
"""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from conftest import central_diff

import burnumba as bn
from burnumba.tracing.tracer import supported_methods

MASK = np.array([[True, False, True, True], [False, True, True, False],
                 [True, True, False, True]])

# name -> f(x) on a (3, 4) array, written once: x is a traced array, an ArrayBox or numpy's
METHODS = {
    "flatten": lambda x: x.flatten(),
    "flatten F": lambda x: x.flatten("F"),
    "ravel": lambda x: x.ravel(),
    "ravel order=F": lambda x: x.ravel(order="F"),
    "reshape tuple": lambda x: x.reshape((2, 6)),
    "reshape varargs -1": lambda x: x.reshape(6, -1),
    "reshape order=F": lambda x: x.reshape((6, 2), order="F"),
    "reshape 3-d F": lambda x: x.reshape(2, 3, 2, order="F"),
    "transpose": lambda x: x.transpose(),
    "transpose axes": lambda x: x.reshape(3, 2, 2).transpose(2, 0, 1),
    "transpose tuple": lambda x: x.reshape(3, 2, 2).transpose((1, 2, 0)),
    "T": lambda x: x.T,
    "swapaxes": lambda x: x.reshape(3, 2, 2).swapaxes(0, 2),
    "squeeze": lambda x: x.reshape(3, 1, 4, 1).squeeze(),
    "squeeze axis": lambda x: x.reshape(3, 1, 4, 1).squeeze(axis=1),
    "sum": lambda x: x.sum(),
    "sum axis keepdims": lambda x: x.sum(axis=1, keepdims=True),
    "sum positional": lambda x: x.sum(0, None, None, True),
    "sum initial": lambda x: x.sum(axis=0, initial=2.5),
    "sum where": lambda x: x.sum(axis=1, where=MASK),
    "mean": lambda x: x.mean(),
    "mean axis": lambda x: x.mean(axis=(0, 1), keepdims=True),
    "mean where": lambda x: x.mean(axis=0, where=MASK),
    "max": lambda x: x.max(),
    "max axis": lambda x: x.max(axis=0),
    "max initial": lambda x: x.max(axis=1, initial=0.3),
    "max where initial": lambda x: x.max(axis=1, where=MASK, initial=-5.0),
    "min": lambda x: x.min(axis=-1, keepdims=True),
    "min initial": lambda x: x.min(initial=-0.2),
    "var": lambda x: x.var(),
    "var ddof": lambda x: x.var(axis=0, ddof=1),
    "std": lambda x: x.std(axis=1),
    "std keepdims ddof": lambda x: x.std(axis=0, ddof=1, keepdims=True),
    "clip": lambda x: x.clip(-0.5, 0.7),
    "clip min only": lambda x: x.clip(min=-0.2),
    "clip max only": lambda x: x.clip(max=0.1),
    "clip no bounds": lambda x: np.clip(x, None, None) * 1.5,
    "take mode wrap": lambda x: x.take([13, -14], mode="wrap"),
    "take mode clip": lambda x: np.take(x, [[20], [-3]], axis=1, mode="clip"),
    "dot vector": lambda x: x.dot(np.array([1.0, -2.0, 0.5, 3.0])),
    "dot matrix": lambda x: x.dot(x.T),
    "copy": lambda x: x.copy() * 2.0,
    "take": lambda x: x.take([2, 0, -1]),
    "take axis": lambda x: x.take([3, 3, 0], axis=1),
    "repeat": lambda x: x.repeat(2),
    "repeat axis": lambda x: x.repeat([1, 0, 2], axis=0),
    "diagonal": lambda x: x.diagonal(),
    "diagonal offset": lambda x: x.diagonal(1),
    "trace": lambda x: x.trace(),
    "trace offset": lambda x: x.trace(offset=-1),
    "conj": lambda x: x.conj() + x.conjugate(),
    "real": lambda x: x.real,
    "imag": lambda x: x.imag + x,
    "mT": lambda x: x.reshape(3, 2, 2).mT if hasattr(x, "mT") else None,
    "round": lambda x: x.round(1) + x,
    "compress": lambda x: x.compress([True, False, True, True, False]),
    "compress axis": lambda x: x.compress([False, True], axis=0),
}


def _numpy_value(name, x):
    return np.asarray(METHODS[name](x))


def _ref_grad(name, x, w):
    """autograd's gradient where ArrayBox has the method, else central differences (also
    for where=, which autograd's sum ignores)."""
    f = METHODS[name]
    if "where" in name:
        return central_diff(lambda x: np.sum(np.sin(f(x)) * w), (x,), 0), 1e-6
    try:
        return autograd.grad(lambda x: anp.sum(anp.sin(f(x)) * w))(x), 1e-12
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return central_diff(lambda x: np.sum(np.sin(f(x)) * w), (x,), 0), 1e-6


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_method_matches_numpy_and_autograd(rng, name, dtype):
    x = rng.normal(size=(3, 4)).astype(dtype)
    f = METHODS[name]
    expected = _numpy_value(name, x.astype(np.float64))
    y, _ = bn.vjp(f, x)
    assert np.shape(y) == expected.shape, name
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(y, expected, rtol=tol, atol=tol)
    w = rng.normal(size=expected.shape)
    g = bn.grad(lambda x: np.sum(np.sin(f(x)) * w))(x)
    assert g.dtype == dtype
    ref, ref_tol = _ref_grad(name, x.astype(np.float64), w)
    tol = max(tol, ref_tol)
    np.testing.assert_allclose(g, ref, rtol=tol * 10, atol=tol * 10)


def test_metadata_and_len(rng):
    x = rng.normal(size=(3, 4))
    seen = {}

    def f(x):
        seen.update(size=x.size, ndim=x.ndim, shape=x.shape, dtype=x.dtype, len=len(x),
                    itemsize=x.itemsize, nbytes=x.nbytes, scalar=x[0, 0].shape)
        return x.sum()

    bn.grad(f)(x)
    assert seen == {"size": 12, "ndim": 2, "shape": (3, 4), "dtype": np.float64, "len": 3,
                    "itemsize": 8, "nbytes": 96, "scalar": ()}
    bn.grad(f)(x.astype(np.float32))
    assert seen["dtype"] == np.float32 and seen["nbytes"] == 48


def test_methods_on_traced_scalars(rng):
    g = bn.grad(lambda a: (a.reshape(1, 1) * 2).sum() + a.astype(np.float64) + a.clip(0, 1)
                + a.copy() + a.mean() + a.T)(0.3)
    assert g == pytest.approx(2 + 1 + 1 + 1 + 1 + 1)


def test_astype_float_dtypes_warn_and_keep_the_tape_dtype(rng):
    x = rng.normal(size=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = bn.grad(lambda x: np.sum(x.astype(np.float64) ** 2))(x)      # the same dtype
    np.testing.assert_allclose(g, 2 * x)
    with pytest.warns(bn.PrecisionWarning, match="astype\\(float32\\) inside a float64 tape"):
        v, g = bn.value_and_grad(lambda x: np.sum(x.astype(np.float32) ** 2))(x)
    assert isinstance(g, np.ndarray) and g.dtype == np.float64
    np.testing.assert_allclose(v, np.sum(x ** 2), rtol=1e-15)
    x32 = x.astype(np.float32)
    with pytest.warns(bn.PrecisionWarning, match="values stay float32"):
        g = bn.grad(lambda x: np.sum(x.astype(float) ** 2))(x32)
    assert g.dtype == np.float32
    with pytest.warns(bn.PrecisionWarning):
        bn.grad(lambda x: np.sum(x, dtype=np.float32))(x)


@pytest.mark.parametrize("dtype, match", [(bool, "not be differentiable"),
                                          (np.complex128, "complex")])
def test_astype_to_non_float_is_an_error(dtype, match):
    with pytest.raises(bn.UnsupportedOpError, match=match):
        bn.grad(lambda x: np.sum(x.astype(dtype)))(np.ones(3))


@pytest.mark.parametrize("method, words", [
    ("tolist", ["ndarray.tolist", "concrete numbers"]),
    ("argpartition", ["ndarray.argpartition", "integer or boolean", "x[idx]", "bnp.where"]),
    ("resize", ["ndarray.resize", "in place"]),
    ("partition", ["ndarray.partition", "np.sort"]),
    ("choose", ["ndarray.choose", "burnumba.numpy"]),
])
def test_unsupported_methods_name_the_method_and_the_fix(method, words):
    def f(x):
        getattr(x, method)()
        return x.sum()

    with pytest.raises(bn.UnsupportedMethodError) as e:
        bn.grad(f)(np.ones((2, 3)))
    assert isinstance(e.value, AttributeError)
    message = str(e.value)
    for w in words + ["reshape", "astype", "sum"]:          # ... and the supported ones
        assert w in message, (w, message)
    assert "test_numpy_methods.py" in message               # the user's line


def test_hasattr_works_on_traced_values():
    seen = {}

    def f(x):
        seen.update(item=hasattr(x, "item"), sum=hasattr(x, "sum"), nope=hasattr(x, "nope"))
        return x.sum()

    bn.grad(f)(np.ones(2))
    assert seen == {"item": True, "sum": True, "nope": False}


def test_a_non_numpy_attribute_is_a_plain_attribute_error():
    with pytest.raises(AttributeError) as e:
        bn.grad(lambda x: x.not_a_method())(np.ones(2))
    assert not isinstance(e.value, bn.BurnumbaError)


def test_supported_methods_are_ndarray_names_and_callable_on_traced_arrays():
    names = supported_methods()
    assert {"reshape", "flatten", "T", "astype", "sum", "take", "repeat", "trace", "imag"} \
        <= set(names)
    assert all(hasattr(np.ndarray, n) for n in names)
    assert not {"tolist", "argpartition"} & set(names)
    assert {"argmax", "argmin", "argsort", "nonzero", "any", "all"} <= set(names)  # guards


def test_method_arguments_out_and_order_are_refused_clearly():
    x = np.ones((2, 3))
    with pytest.raises(bn.InplaceError, match="out="):
        bn.grad(lambda x: x.sum(out=np.empty(())))(x)
    with pytest.raises(bn.InplaceError, match="out="):
        bn.grad(lambda x: x.clip(0, 1, out=np.empty((2, 3))).sum())(x)
    with pytest.raises(bn.UnsupportedOpError, match="order='K'"):
        bn.grad(lambda x: x.ravel(order="K").sum())(x)
    with pytest.raises(bn.ShapeError, match="initial="):
        bn.grad(lambda x: x.max(where=np.array([True, False, True])))(x)
