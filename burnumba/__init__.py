"""burnumba: numpy code traced once into a struct-of-arrays tape, run by one compiled
interpreter loop.

>>> import burnumba as bn, numpy as np
>>> value, g = bn.value_and_grad(lambda x: np.sum(np.tanh(x) ** 2))(np.array([0.5, -1.0]))
"""
from . import numpy
from ._checkpoint import load_checkpoint, save_checkpoint
from ._api import grad, trace, value_and_grad
from ._debug import debug_nans
from ._forward import (elementwise_grad, hessian, hvp, jacfwd, jacobian, jacrev, jvp,
                       linearize, vjp)
from ._errors import (BurnumbaError, CheckpointError, ConcretizationError, ConcurrencyError,
                      DataError, InplaceError, InputError, LeakedTracerError, NjitArgumentError,
                      MissingExtraError, NonFiniteError, PrecisionWarning, TapeFormatError,
                      OutputError, PytreeError, ShapeError, TracerBoolError,
                      UnsupportedMethodError, UnsupportedOpError)
from ._functional import (causal_softmax, cross_entropy, gelu, layer_norm, log_softmax,
                          logsumexp, masked_fill, softmax)
from ._tape import Tape
from ._tapefile import load_tape
from ._vmap import vmap
from ._njit import njit_value_and_grad
from ._profile import profile
from .kernels import KernelError, precompile
from .numpy import inner, relu, rsqrt, sigmoid, stop_gradient, sumsq
from . import data, nn, optim

__version__ = "0.2.0"

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
    "hessian", "hvp", "elementwise_grad", "stop_gradient", "vmap", "njit_value_and_grad",
    "NjitArgumentError", "trace", "debug_nans", "profile", "precompile", "Tape", "load_tape",
    "numpy",
    "relu", "sigmoid", "rsqrt", "inner", "sumsq", "softmax", "causal_softmax", "log_softmax",
    "logsumexp", "cross_entropy", "layer_norm", "gelu", "masked_fill", "nn", "optim", "data",
    "save_checkpoint", "load_checkpoint",
    "BurnumbaError", "CheckpointError", "ConcretizationError", "ConcurrencyError", "DataError",
    "InplaceError", "InputError", "KernelError", "LeakedTracerError", "NonFiniteError",
    "MissingExtraError", "OutputError", "PrecisionWarning", "PytreeError", "ShapeError",
    "TapeFormatError", "TracerBoolError",
    "UnsupportedMethodError", "UnsupportedOpError",
]
