"""``import burnumba.numpy as bnp``: numpy's names for the ops burnumba can trace.

Each function accepts traced values, numpy arrays and Python numbers. With no traced value
among its arguments it simply calls numpy. Plain ``np.exp(x)``, ``np.sum(x)`` ... on a traced
``x`` arrive at the same functions through ``__array_ufunc__`` and ``__array_function__``: each
module registers its functions in the tables of ``burnumba.tracing.dispatch`` (``@implements``).

The functions live by area, one module each, and each imports only the modules before it:

    _common       the trace among the arguments; numpy's out= / dtype= conventions
    elementwise   the ufuncs (one per elementwise row of the op table), where, clip, round, ...
    shapes        reshape, transpose, stack, concatenate, flip, tile, pad, tril, diag, ...
    creation      array, asarray, zeros_like, full_like, linspace, meshgrid
    indexing      x[key], take, take_along_axis
    inplace       x[key] = v, x += v, out=, copyto, put, place, fill_diagonal, views (last)
    at            x.at[idx].set(v), .add(v), ...: JAX's functional updates, on inplace's
    reductions    sum, mean, max, min, var, std, prod, cumsum, any, all, the nan* reductions
    products      matmul, dot, inner, outer, einsum, tensordot, trace, vecdot, ...
    statistics    sort, unique, median, quantile, percentile, average, cov, corrcoef, ...
    calculus      interp, polyval, vander, trapezoid, gradient, piecewise, apply_along_axis
    linalg        numpy.linalg (bnp.linalg)
    fft           numpy.fft's transforms, and the complex arrays they return (bnp.fft)
    functional    softmax, log_softmax, cross_entropy, layer_norm, gelu (no numpy twins)
    random        numpy.random itself (burnumba.numpy.random, autograd's npr import)

This module only gathers their public names; no module of this package imports it.
"""
from .elementwise import (abs, absolute, acos, acosh, add, allclose, arccos, arccosh, arcsin,
                          arcsinh, arctan, arctan2, arctanh, around, array_equal, array_equiv,
                          asin, asinh, atan, atan2, atanh, cbrt, ceil, clip, conj, conjugate,
                          copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2,
                          expm1, fabs, fix, float_power, floor, floor_divide, fmax, fmin, fmod,
                          frexp, greater, greater_equal, heaviside, hypot, imag, isclose, isfinite,
                          isinf, isnan, ldexp, less, less_equal, log, log10, log1p, log2,
                          logaddexp, logaddexp2, logical_and, logical_not, logical_or, logical_xor,
                          maximum, minimum, mod, modf, multiply, nan_to_num, negative, not_equal,
                          positive, pow, power, rad2deg, radians, real, reciprocal, relu,
                          remainder, rint, round, rsqrt, select, sigmoid, sign, signbit, sin, sinc,
                          sinh, sqrt, square, subtract, tan, tanh, true_divide, trunc, where)
# public, though not in __all__ (numpy has no erf, no stop_gradient)
from .elementwise import erf, stop_gradient  # noqa: F401
from .shapes import (append, array_split, atleast_1d, atleast_2d, atleast_3d, block,
                     broadcast_to, column_stack, concatenate, delete, diag, diagonal, diff,
                     diagflat, dstack, ediff1d, expand_dims, flip, fliplr, flipud, hstack,
                     insert, moveaxis, pad, ravel, repeat, reshape, resize, roll, rollaxis, rot90,
                     split, squeeze, stack, swapaxes, tile, transpose, tril, triu, vstack)
from .creation import (array, asarray, empty_like, full_like, linspace, logspace, meshgrid,
                       ones_like, zeros_like)
from .indexing import compress, take, take_along_axis
from .reductions import (all, amax, amin, any, count_nonzero, cumprod, cumsum, max, mean, min,
                         nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar, prod, std, sum,
                         sumsq, var)
from .products import (cross, dot, einsum, inner, kron, matmul, matvec, outer, tensordot, trace,
                       vecdot, vecmat)
from .statistics import (argmax, argmin, argsort, average, convolve, corrcoef, correlate, cov,
                         digitize, median, nanargmax, nanargmin, nanmedian, nanpercentile,
                         nanquantile, percentile, ptp, quantile, searchsorted, sort, unique)
from .calculus import (apply_along_axis, gradient, interp, piecewise, polyval, trapezoid,
                       vander)
from . import fft, functional, linalg  # noqa: F401  (bnp.fft, bnp.linalg, bnp.functional)
from .linalg import polyfit  # noqa: E402  (numpy's top-level name)
# in-place updates (x[i] = v, out=, np.copyto ...): registered last, since it reads the tables
from .inplace import (bincount, copy, copyto, empty, fill_diagonal, full, ones, place,  # noqa: F401
                      put, putmask, zeros)
from . import at  # noqa: F401,E402  (x.at[idx].set(v): JAX's functional updates)
from .reductions import ROW_FUNCTIONS as _ROW_FUNCTIONS

# the functions made from block rows with a public name (bnp.logcumsumexp): public, not in
# __all__ (numpy has no such functions)
globals().update(_ROW_FUNCTIONS)

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "positive", "power",
    "square", "exp", "log", "sqrt", "reciprocal", "tanh", "sin", "cos", "abs", "absolute",
    "maximum", "minimum", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
    "where", "sum", "mean", "max", "amax", "min", "amin", "var", "std", "inner", "dot", "matmul",
    "stack", "concatenate", "split", "array", "asarray", "reshape", "ravel", "transpose",
    "swapaxes", "broadcast_to", "expand_dims", "squeeze", "take", "relu", "sigmoid", "rsqrt",
    "sumsq", "clip", "sign", "sinh", "cosh", "tan", "arcsin", "arccos", "arctan", "arctan2",
    "hypot", "exp2", "expm1", "log1p", "log2", "log10", "logaddexp", "logaddexp2", "fmax", "fmin",
    "floor", "ceil", "remainder", "mod", "flip", "fliplr", "flipud", "diagflat", "compress",
    "roll", "repeat", "tile", "moveaxis", "rollaxis",
    "atleast_1d", "atleast_2d", "atleast_3d", "vstack", "hstack", "column_stack", "tril", "triu",
    "diag", "diagonal", "trace", "diff", "outer", "kron", "cross", "pad", "take_along_axis",
    "prod", "cumsum", "cumprod", "sort", "argsort", "argmax", "argmin", "einsum", "tensordot",
    "select", "arcsinh", "arccosh", "arctanh", "cbrt", "copysign", "fmod", "heaviside", "rint",
    "trunc", "floor_divide", "isnan", "isinf", "isfinite", "signbit", "logical_not", "logical_and",
    "logical_or", "logical_xor", "acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh", "pow",
    "float_power", "fabs", "conj", "conjugate", "deg2rad", "radians", "rad2deg", "degrees",
    "ldexp", "frexp", "modf", "divmod", "round", "around", "fix", "real", "imag", "zeros_like",
    "ones_like", "empty_like", "full_like", "average", "ptp", "nansum", "nanmean", "nanmax",
    "nanmin", "nanprod", "isclose", "allclose", "count_nonzero", "median", "quantile",
    "percentile", "cov", "corrcoef", "correlate", "convolve", "meshgrid", "linspace", "vecdot",
    "matvec", "vecmat", "nanvar", "nanstd", "nanmedian", "nanquantile", "nanpercentile",
    "interp", "polyval", "trapezoid", "gradient", "piecewise", "apply_along_axis", "any", "all",
    "array_equal", "array_equiv", "nan_to_num", "sinc", "vander", "unique", "append", "insert",
    "delete", "array_split", "dstack", "rot90", "resize", "block", "ediff1d", "logspace",
    "polyfit", "searchsorted", "digitize", "nanargmax", "nanargmin", "bincount",
]

# The names the one-module burnumba.numpy had through its own imports, kept so that every
# name it had is still there; they are not its API (their homes are numpy, burnumba._errors,
# burnumba.kernels and burnumba.tracing.tracer).
import builtins, math  # noqa: E401,E402,F401
import numpy as np  # noqa: E402,F401
from .._errors import (InplaceError, ShapeError, TracerBoolError,  # noqa: E402,F401
                       UnsupportedOpError, at_user_site)
from ..kernels import ROWS  # noqa: E402,F401
from ..tracing.tracer import Var, cast_check, is_mask, normalize_axis, tiles  # noqa: E402,F401

# numpy's names this package does not define (np.pi, np.newaxis, np.random, np.unique, ...)
from ._common import namesake  # noqa: E402

__getattr__ = namesake(__name__, "numpy")
del namesake
