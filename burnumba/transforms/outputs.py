"""A differentiated function's outputs as one array: the vjp, jvp and the Jacobians trace
``Outputs(f)``, which returns a tuple, list or dict of outputs as the concatenation of their
ravels, and cut their results back into that structure (``split``, ``flat_cotangent``)."""
import functools
import math
import threading

import numpy as np

from .. import numpy as bnp
from .._errors import OutputError, PytreeError, ShapeError, at_user_site
from ..kernels import ROWS
from ..tracing.pytree import describe, flatten, unflatten
from ..tracing.tracer import MASK_ROWS, Var


class Outputs:
    """``f`` as vjp, the forward-mode transformations and the Jacobians trace it, with one
    array output: a pytree of outputs (a tuple, list or dict of arrays) is returned as one
    vector, the concatenation of the leaves' ravels, which the results are cut back from
    (``split``, ``forward._blocks``). ``take()`` gives the structure of the output this
    thread traced last: None for one array (returned unchanged), else (treedef, the
    leaves' shapes)."""

    def __init__(self, f, has_aux=False):
        self.f = f
        self.has_aux = has_aux
        self.local = threading.local()
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        """The output as one array; with has_aux, the pair (that array, aux)."""
        result = self.f(*args, **kwargs)
        if not self.has_aux:
            return self._flat(result)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise OutputError(at_user_site(
                f"{getattr(self.f, '__name__', 'f')}: has_aux=True: the function must "
                f"return a pair (output, aux), got {type(result).__name__}"))
        return self._flat(result[0]), result[1]

    def primary(self, *args, aux=None):
        """The output as one array, without aux (appended to the list ``aux`` if given):
        what vjp, jvp and the Jacobians differentiate inside another trace."""
        out = self(*args)
        if not self.has_aux:
            return out
        if aux is not None:
            aux.append(out[1])
        return out[0]

    def _flat(self, result):
        leaves, treedef = flatten(result)
        if treedef is None:
            self.local.tree = None
            return result
        name = getattr(self.f, "__name__", "f")
        if not leaves:
            raise OutputError(at_user_site(
                f"{name}: the differentiated function returned an empty "
                f"{type(result).__name__}; return at least one array"))
        for x in leaves:
            if not (isinstance(x, (Var, int, float, np.number)) or (
                    isinstance(x, np.ndarray) and x.dtype.kind in "biuf")):
                raise OutputError(at_user_site(
                    f"{name}: the differentiated function returned a {type(x).__name__} "
                    f"among its outputs; vjp, jvp, linearize and the Jacobians need arrays "
                    f"or numbers as outputs, alone or in a tuple, list or dict"))
        self.local.tree = (treedef, [tuple(getattr(x, "shape", ())) for x in leaves])
        return bnp.concatenate([bnp.reshape(x, (-1,)) for x in leaves])

    def take(self):
        tree, self.local.tree = getattr(self.local, "tree", None), None
        return tree


def split(tree, flat, reshape):
    """The output pytree ``tree`` describes, cut from the flat vector of its leaves."""
    leaves, r = [], 0
    for shape in tree[1]:
        m = math.prod(shape)
        leaves.append(reshape(flat[r:r + m], shape))
        r += m
    return unflatten(tree[0], leaves)


def copied(data, shape):
    """A slice of a run's values as an output leaf: a float for a scalar, else a copy."""
    return float(data[0]) if shape == () else data.reshape(shape).copy()


def flat_cotangent(tree, cotangent):
    """A cotangent of the output pytree ``tree`` describes, as the one vector of its
    leaves' ravels (numpy, or traced inside another trace), after checking its structure and
    shapes against the output's."""
    leaves, treedef = flatten(cotangent)
    if treedef != tree[0]:
        raise PytreeError(at_user_site(
            f"vjp: the cotangent has the structure {describe(treedef)}, the output "
            f"{describe(tree[0])}: give one cotangent per output, in the output's structure"))
    for k, (x, shape) in enumerate(zip(leaves, tree[1])):
        got = tuple(x.shape if isinstance(x, Var) else np.shape(x))
        if got != tuple(shape):
            raise ShapeError(at_user_site(
                f"vjp: cotangent leaf {k} has shape {got}, its output {tuple(shape)}"))
    return bnp.concatenate([bnp.reshape(x, (-1,)) for x in leaves])


# The mask rows (comparisons, isnan, logical_and ...: no gradient, and numpy's twin returns
# booleans) are tracing.tracer.MASK_ROWS. (sign, floor, ceil and stop_gradient also have no
# gradient rule, but their values are floats: grad of them is 0, as in JAX.)


def stacked(b, x):
    """An object array holding traced values (filled item by item) as one traced array, so
    that no traced value leaves the trace inside it; anything else unchanged."""
    if isinstance(x, np.ndarray) and x.dtype == object and \
            any(isinstance(e, Var) for e in x.flat):
        return b.lift(x)
    return x


def as_output(b, result, need_scalar):
    if need_scalar and (isinstance(result, (bool, np.bool_)) or (
            isinstance(result, np.ndarray) and result.dtype.kind == "b") or (
            isinstance(result, Var) and result._view is None
            and ROWS[b.op[result.node]].name in MASK_ROWS)):
        raise OutputError(at_user_site(
            "grad needs a float output, but the function returns a boolean (a comparison "
            "mask, which has no gradient; JAX refuses it too): return a float, e.g. "
            "bnp.where(mask, x, 0.0) or the loss the mask selects"))
    result = stacked(b, result)
    if isinstance(result, Var):
        out = result
    elif isinstance(result, (float, int, np.floating, np.integer)) or (
            isinstance(result, np.ndarray) and result.dtype.kind in "biuf"):
        out = b.const(result)                     # a constant output: every gradient is 0
    elif need_scalar:
        raise OutputError(
            f"the traced function returned {type(result).__name__}; grad needs one scalar "
            "output (use has_aux=True to return more)")
    else:
        raise OutputError(
            f"the traced function returned {type(result).__name__}; a tape's output is one "
            "array or number: return one (bnp.concatenate of the outputs' ravels joins "
            "several). vjp, jvp, linearize and the Jacobians also take a tuple, list or dict "
            "of arrays")
    if need_scalar and out.shape != () and out.size == 1:
        # a (1,) or (1, 1) loss is a scalar, as autograd takes it (JAX refuses it): its
        # one element, the value returned as a scalar
        out = bnp.reshape(out, ())
    if need_scalar and out.shape != ():
        raise OutputError(
            f"grad needs a scalar output, but the function returned shape {out.shape}: reduce "
            "it first (bnp.sum, bnp.mean) or index one element")
    return out
