"""numpy's functions that convert their arguments before a traced value is asked (#30).

Two kinds of numpy call never reach burnumba through numpy's protocols:

* ``np.asarray(x, dtype=float)`` (the first line of many numpy functions, scipy's examples
  among them), ``np.array(parts, dtype=np.float64)`` and ``np.fromiter(gen, float)``:
  numpy's compiled constructors ask every element for a number when given a dtype;
* ``np.sum([a, b])``, ``np.mean([f(v) for v in x])``, ``np.polyval([a, b, c], t)``,
  ``np.linalg.norm([dx, dy])``: numpy's dispatch looks only at the argument itself, a list,
  and converts it, asking each traced element for numbers.

So while a thread traces, these numpy functions, as its own code reads them from numpy's
module (``np.sum``, ``numpy.asarray``, ``np.linalg.norm``), are stand-ins. A constructor
called with a float dtype on traced values goes to burnumba.numpy's asarray (the tape's
float dtype; another float dtype warns); a function of _LIST_FUNCTIONS given lists or
tuples holding traced values gets them stacked into traced arrays and goes to
burnumba.numpy's implementation. Every other call goes to numpy's own, with the same
arguments: no dtype (``np.asarray(x)`` keeps its documented result, an object array of
traced scalars), an integer or object dtype, plain values.

numpy's module dict is not changed: while any thread traces, the module's class gives these
names' stand-ins to that thread's own code only (module_views.py); other threads, and
numba, numpy, scipy and burnumba code, get numpy's functions, and every other attribute is
read as before. ``np`` stays numpy (``xp is np`` holds). A global or closure variable
bound to one of the functions before the trace (``from numpy import asarray``) holds its
stand-in during the trace (library_calls.py's places); one reached another way (a dict)
keeps numpy's function, and its error names the fix.
"""
import functools
import itertools

import numpy as np

from .. import numpy as _bnp
from .._errors import ConcretizationError, at_user_site
from ..numpy._common import _builder
from ..tracing.dispatch import FUNCTIONS
from ..tracing.tracer import Var
from .module_views import class_places

_CONSTRUCTORS = ("asarray", "array", "asanyarray", "ascontiguousarray")
# functions a program applies to Python lists of traced values (np.sum([f(v) for v in x]),
# np.polyval([a, b, c], t), np.outer([dx, dy], u)): their list arguments are stacked
_LIST_FUNCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var",
                   "average", "median", "cumsum", "cumprod", "ptp", "diff", "ediff1d", "clip",
                   "sort", "argsort", "argmax", "argmin", "round", "around", "outer", "inner",
                   "cross", "kron", "tensordot", "convolve", "trapezoid", "polyval", "interp",
                   "gradient", "percentile", "quantile", "nansum", "nanmean", "nanmax",
                   "nanmin", "nanstd", "nanvar", "nanmedian", "nanpercentile", "nanquantile",
                   "flip", "roll", "tile", "repeat", "vander",
                   # numpy's functions of array_like arguments (a list is converted as
                   # np.asarray would): products, shapes, selections, comparisons
                   "dot", "matmul", "vdot", "einsum", "trace", "diag", "diagonal", "diagflat",
                   "transpose", "reshape", "ravel", "squeeze", "expand_dims", "moveaxis",
                   "swapaxes", "rollaxis", "rot90", "flipud", "fliplr", "where", "isclose",
                   "allclose", "array_equal", "array_equiv", "take", "take_along_axis", "pad",
                   "append", "insert", "delete", "cov", "corrcoef", "correlate", "polyfit",
                   "sinc", "fix", "nan_to_num", "nanprod", "nanargmax", "nanargmin", "real",
                   "imag", "tril", "triu", "atleast_1d", "atleast_2d", "atleast_3d",
                   "broadcast_to", "copy", "zeros_like", "ones_like", "empty_like",
                   "full_like", "any", "all", "count_nonzero", "compress", "searchsorted",
                   "digitize", "linspace", "logspace", "unique", "nonzero", "flatnonzero",
                   "argwhere", "meshgrid", "resize", "apply_along_axis")
# not here: the functions of sequences of arrays (np.concatenate, np.stack, np.block,
# np.select's and np.piecewise's lists), whose dispatch looks inside the sequence itself,
# and the writes into numpy arrays (np.copyto, np.put, np.place, np.putmask)
_LINALG_LIST_FUNCTIONS = ("norm", "det", "inv", "solve", "slogdet", "cholesky", "eigh",
                          "eigvalsh", "svd", "svdvals", "pinv", "lstsq", "matrix_power",
                          "matrix_norm", "vector_norm")
# numpy.fft's transforms: numpy's own has no loop for an object array of traced values
# (np.fft.fft(np.array([a, b]))), so such an array is stacked too
_FFT_LIST_FUNCTIONS = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn",
                       "fftshift", "ifftshift")


def _holds_traced(a):
    """Whether ``a`` is a traced value or a (nested) list, tuple or object array of them."""
    if isinstance(a, np.ndarray):
        return a.dtype == object and any(isinstance(x, Var) for x in a.flat)
    return _builder(a) is not None


def _float_kind(dtype):
    """Whether ``dtype`` is a float dtype (an object, integer or boolean one stays numpy's:
    an object array of traced values, integer data numpy refuses to guess)."""
    try:
        return np.dtype(dtype).kind == "f"
    except TypeError:
        return False


def _constructor(real):
    """``real`` (np.asarray, ...) while a function is traced."""
    @functools.wraps(real)
    def call(a, dtype=None, *args, **kwargs):
        if dtype is not None and (type(a) is not np.ndarray or a.dtype == object) and \
                _float_kind(dtype) and _holds_traced(a):
            if isinstance(a, np.ndarray):            # numpy's object array of traced values
                a = a.tolist()
            return _bnp.asarray(a, dtype=dtype)
        return real(a, dtype, *args, **kwargs)
    call._burnumba_original = real
    return call


def _fromiter(real):
    """np.fromiter while a function is traced: an iterable yielding traced values, of a
    float dtype, is burnumba.numpy's asarray of its items; any other numpy's own (fed the
    items when they were read here)."""
    @functools.wraps(real)
    def call(iterable, dtype, count=-1, **kwargs):
        if not _float_kind(dtype):
            return real(iterable, dtype, count, **kwargs)
        items = list(iterable) if count < 0 else list(itertools.islice(iterable, count))
        if _holds_traced(items):
            if len(items) < count:
                raise ValueError(f"iterator too short: Expected {count} but iterator had "
                                 f"only {len(items)} items.")
            return _bnp.asarray(items, dtype=dtype)
        return real(items, dtype, count, **kwargs)
    call._burnumba_original = real
    return call


def _lists(real, kinds=(list, tuple)):
    """``real`` (np.sum, np.linalg.det, ...) while a function is traced: its positional
    arguments of ``kinds`` (lists or tuples; numpy.fft's: object arrays too) holding traced
    values are stacked into traced arrays (burnumba.numpy's asarray), and the call goes to
    burnumba.numpy's implementation."""
    mine = FUNCTIONS[real]

    @functools.wraps(real)
    def call(*args, **kwargs):
        for a in args:
            if type(a) in kinds and _holds_traced(a):
                return mine(*[_bnp.asarray(v.tolist() if type(v) is np.ndarray else v)
                              if type(v) in kinds and _holds_traced(v) else v for v in args],
                            **kwargs)
        return real(*args, **kwargs)
    call._burnumba_original = real
    return call


class vectorize(np.vectorize):
    """``np.vectorize`` as a traced program sees it: numpy's class, whose call with traced
    arguments broadcasts them and calls the Python function once per element, as numpy's
    does, on traced scalars, stacking the results (a tuple of results: one traced array
    each). Plain arguments go to numpy's call. ``signature=``, ``excluded=`` and an
    ``otypes`` that is not a float type stay numpy's, and their error names the fix."""

    def __call__(self, *args, **kwargs):
        if not any(_holds_traced(a) for a in (*args, *kwargs.values())):
            return super().__call__(*args, **kwargs)
        otypes = [np.dtype(t) for t in (self.otypes or "")]
        if self.signature is not None or self.excluded or kwargs or \
                any(t.kind != "f" for t in otypes):
            raise ConcretizationError(at_user_site(
                "np.vectorize with signature=, excluded=, keyword arguments or a non-float "
                "otypes, given traced values: call the function in a Python loop over the "
                "elements and stack the results with np.stack"))
        arrays = [_bnp.asarray(a) if _holds_traced(a) else np.asarray(a) for a in args]
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        size = int(np.prod(shape))
        if size == 0:
            return super().__call__(*[np.zeros(a.shape) for a in arrays])
        flat = [(_bnp.broadcast_to(a, shape) if isinstance(a, Var) else
                 np.broadcast_to(a, shape)).reshape(-1) for a in arrays]
        outs = [self.pyfunc(*[a[i] for a in flat]) for i in range(size)]
        if isinstance(outs[0], tuple):
            return tuple(_bnp.asarray([o[k] for o in outs], dtype=float).reshape(shape)
                         for k in range(len(outs[0])))
        return _bnp.asarray(outs, dtype=float).reshape(shape)


def vectorized(real):
    """The stand-in of a ``np.vectorize`` object made before the trace (``@np.vectorize``
    on a module's function): the same object's settings, ``vectorize``'s call."""
    out = object.__new__(vectorize)
    out.__dict__.update(real.__dict__)
    out._burnumba_original = real
    return out


def _stand_ins():
    """{module: {name: stand-in}}, made when burnumba is imported."""
    table = {np: {name: _constructor(getattr(np, name)) for name in _CONSTRUCTORS}}
    table[np]["fromiter"] = _fromiter(np.fromiter)
    table[np]["vectorize"] = vectorize
    for module, names in ((np, _LIST_FUNCTIONS), (np.linalg, _LINALG_LIST_FUNCTIONS)):
        table.setdefault(module, {}).update(
            {name: _lists(getattr(module, name)) for name in names
             if getattr(module, name, None) in FUNCTIONS})
    table[np.fft] = {name: _lists(getattr(np.fft, name), (list, tuple, np.ndarray))
                     for name in _FFT_LIST_FUNCTIONS}
    return table


_TABLE = _stand_ins()


_PLACES = class_places(_TABLE)


def places():
    """numpy's, numpy.linalg's and numpy.fft's module classes: library_calls.py's places."""
    return _PLACES
