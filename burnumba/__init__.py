"""burnumba: numpy code traced once into a struct-of-arrays tape, run by one compiled
interpreter loop.

>>> import burnumba as bn, numpy as np
>>> value, g = bn.value_and_grad(lambda x: np.sum(np.tanh(x) ** 2))(np.array([0.5, -1.0]))
"""
from ._version import __version__  # noqa: F401  (bn.__version__)
from ._errors import (BurnumbaError, CheckpointError, ConcretizationError, ConcurrencyError,
                      DataError, GradientCheckError, GuardError, InplaceError, InputError,
                      LeakedTracerError, NjitArgumentError, MissingExtraError, NonFiniteError,
                      PrecisionWarning, RandomSourceError, TapeFormatError,
                      OutputError, PytreeError, ShapeError, TracerBoolError,
                      UnsupportedMethodError, UnsupportedOpError, VariantWarning)
from .kernels import KernelError, precompile
from . import numpy
from .numpy import inner, relu, rsqrt, sigmoid, stop_gradient, sumsq
from .numpy.functional import (causal_softmax, cross_entropy, gelu, layer_norm, log_softmax,
                               logsumexp, masked_fill, softmax)
from .ir.checked import debug_nans
from .ir.tape import Tape, load_tape
from .transforms.core import grad, trace, value_and_grad
from .transforms.forward import (elementwise_grad, hessian, hvp, jacfwd, jacobian, jacrev, jvp,
                                 linearize, vjp)
from .transforms.sparse import (hessian_sparsity, jacobian_sparsity, sparse_hessian,
                                sparse_jacobian)
from .transforms.vmap import vmap
from .transforms.njit import njit_value_and_grad
from .transforms.custom import custom_jvp, custom_vjp
from .transforms.njit_op import njit_op
from .transforms.implicit import custom_root, fixed_point
from .transforms.autograd_names import (deriv, grad_and_aux, grad_named, hessian_tensor_product,
                                        hessian_vector_product, make_hvp, make_jvp, make_vjp,
                                        tensor_jacobian_product, vector_jacobian_product)
from .transforms.loops import fori_loop, scan, while_loop
from .tools.profile import profile
from .tools.check import check_grads, flatten, flatten_func
from .tools.trees import tree_leaves, tree_map
from .train.checkpoint import load_checkpoint, save_checkpoint
from . import data, nn, optim            # public paths of burnumba/train's modules

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
    "hessian", "hvp", "elementwise_grad", "sparse_jacobian", "sparse_hessian",
    "jacobian_sparsity", "hessian_sparsity", "stop_gradient", "vmap", "njit_value_and_grad",
    "custom_vjp", "custom_jvp", "njit_op", "custom_root", "fixed_point", "fori_loop", "scan",
    "while_loop", "check_grads", "flatten",
    "flatten_func", "tree_map", "tree_leaves",
    # autograd's names (transforms/autograd_names.py)
    "grad_and_aux", "hessian_tensor_product", "hessian_vector_product", "vector_jacobian_product",
    "tensor_jacobian_product", "make_vjp", "make_jvp", "make_hvp", "deriv", "grad_named",
    "NjitArgumentError", "trace", "debug_nans", "profile", "precompile", "Tape", "load_tape",
    "numpy",
    "relu", "sigmoid", "rsqrt", "inner", "sumsq", "softmax", "causal_softmax", "log_softmax",
    "logsumexp", "cross_entropy", "layer_norm", "gelu", "masked_fill", "nn", "optim", "data",
    "save_checkpoint", "load_checkpoint",
    "BurnumbaError", "CheckpointError", "ConcretizationError", "ConcurrencyError", "DataError",
    "GradientCheckError", "GuardError", "VariantWarning",
    "InplaceError", "InputError", "KernelError", "LeakedTracerError", "NonFiniteError",
    "MissingExtraError", "OutputError", "PrecisionWarning", "PytreeError", "RandomSourceError",
    "ShapeError",
    "TapeFormatError", "TracerBoolError",
    "UnsupportedMethodError", "UnsupportedOpError",
]

