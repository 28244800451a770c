"""burnumba's exceptions. Each message names the operation or argument and the fix."""
import importlib.util
import linecache
import os
import sys

import numpy


def _scipy_folder():
    """scipy's folder, found without importing scipy (its code, as numpy's, is not the user's:
    a scipy function given a traced value points at the user's call of it)."""
    spec = importlib.util.find_spec("scipy")
    return os.path.dirname(os.path.abspath(spec.origin)) if spec and spec.origin else None


# Frames in these folders are burnumba's, numpy's or scipy's own; the user's line is the first
# other one. burnumba.kernels is the folder kernels/ beside burnumba/ in a source tree (its
# rows' traced rules run inside a derivative: betainc's appends betainc_da, whose refusal
# names the user's line), inside burnumba/ once installed.
_HERE = os.path.dirname(os.path.abspath(__file__))
# (numpy_caller reads _SKIP[0] and _SKIP[1] as burnumba's and numpy's: those stay first)
_SKIP = tuple(f for f in (_HERE, os.path.dirname(os.path.abspath(numpy.__file__)),
                          _scipy_folder(), os.path.join(os.path.dirname(_HERE), "kernels") + os.sep)
              if f)


class BurnumbaError(Exception):
    """Base class of every error burnumba raises on purpose."""


class TracerBoolError(BurnumbaError, TypeError):
    """Python control flow (if, while, and, or, bool()) on a traced value."""


class ConcretizationError(BurnumbaError):
    """A traced value was asked for a concrete Python number or numpy array.

    Not a TypeError on purpose: numpy swallows TypeErrors from ``__float__`` during item
    assignment (``arr[0] = traced``) and reports an unrelated ValueError instead."""


class UnsupportedOpError(BurnumbaError, TypeError):
    """A numpy function, ufunc or method that burnumba cannot trace."""


class ComplexOperand(UnsupportedOpError):
    """A complex value (a complex number or array, or numpy.fft's result: a complex traced
    array, burnumba/numpy/fft.py) where a real one is needed; the arithmetic of a traced
    value with one is complex arithmetic there."""
    MESSAGE = ("a complex value (a complex number, or numpy.fft's result) cannot be an "
               "operand here: take np.real, np.imag or np.abs of it first "
               "(burnumba/numpy/fft.py lists what complex traced arrays support)")


class UnsupportedMethodError(UnsupportedOpError, AttributeError):
    """An ndarray method or attribute that traced values do not have (also an
    AttributeError, so that ``hasattr`` keeps working)."""


class InplaceError(BurnumbaError, TypeError):
    """In-place assignment into a traced array."""


class InputError(BurnumbaError, TypeError):
    """An argument burnumba cannot differentiate (integer, complex, object)."""


class OutputError(BurnumbaError, TypeError):
    """The traced function returned something grad cannot use."""


class NjitArgumentError(InputError):
    """An njit handle was called with an argument of the wrong size (raised inside numba,
    so the message is fixed; the handle's ``describe()`` lists the expected arguments)."""


class PrecisionWarning(UserWarning):
    """A cast to another float dtype inside a tape (``astype``, ``dtype=``): the values stay
    in the tape's dtype, so results can differ from numpy's in the last digits."""


class ShapeError(BurnumbaError, ValueError):
    """Operand shapes that do not fit the op."""


class PytreeError(BurnumbaError, ValueError):
    """An argument's pytree structure differs from the traced one."""


class LeakedTracerError(BurnumbaError, RuntimeError):
    """A traced value was used outside the trace that made it."""


class DataError(BurnumbaError, IndexError, ValueError):
    """Data that cannot be used as given. While a tape runs: an index or a target class out
    of range (an IndexError, as numpy raises for a bad index). In burnumba.data: a file,
    text, character or token id the tokenizers and samplers cannot use (a ValueError)."""


class NonFiniteError(BurnumbaError, FloatingPointError):
    """debug_nans found a value or gradient that is NaN or infinite (the message names the
    node, its op, the direction and the source line)."""


class RandomSourceError(BurnumbaError, RuntimeError):
    """A random draw inside a traced function that burnumba cannot replay on every call (an
    unrecorded source, a traced parameter it cannot reparameterise, a tape with draws sent
    where the user's generator cannot follow)."""


class ConcurrencyError(BurnumbaError, RuntimeError):
    """A stateful object (a Trainer, an optimiser) used by two threads at once."""


class CheckpointError(BurnumbaError, ValueError):
    """A checkpoint file that is missing, corrupt, or does not fit the model."""


class MissingExtraError(BurnumbaError, ImportError):
    """An optional dependency (an extra of the burnumba package, such as ``distributed``) is
    not installed; the message names the pip command."""


class GradientCheckError(BurnumbaError, AssertionError):
    """bn.check_grads found a derivative that differs from central differences (the message
    names the derivative and its worst element); an AssertionError, as autograd's."""


class TapeFormatError(BurnumbaError, ValueError):
    """A saved or pickled Tape that cannot run here: damaged, hostile, or written by a
    burnumba whose op table or tape layout differs (the message names the file and the first
    bad field or node; the fix is to retrace)."""


class GuardError(BurnumbaError, RuntimeError):
    """A decision a tape was traced with (``if`` on a traced value, ``int(x)``, ``range(n)``
    of a traced ``n``) went the other way at a run's arguments. bn.grad and the other
    transformations catch it and retrace (a new variant of the tape); a handle that cannot
    retrace (a saved Tape, bn.njit) raises it, naming the decision's source line."""

    def __init__(self, message, tape=None, index=-1):
        super().__init__(message)
        self.tape = tape          # the tape whose guard failed
        self.index = index        # which of its guards


class VariantWarning(UserWarning):
    """A function keeps taking new branches: past the variant limit per signature, each
    new combination of decisions is traced again (correct, but at tracing's speed)."""


class NestedTrace(Exception):
    """Internal: a transformation met values of a trace in progress (it was called inside
    another transformation, or its function closes over such values). The transformation
    then runs in that trace (``transforms/nested.py``); where that is not possible, it becomes an
    UnsupportedOpError."""

    def __init__(self, builder):
        super().__init__("a transformation met the values of a trace in progress")
        self.builder = builder


def nested_unsupported(what):
    return UnsupportedOpError(at_user_site(
        f"{what} on traced values (inside another transformation's trace): call the function "
        "itself, or use a transformation (bn.grad, bn.jvp, ...), which runs inside the trace"))


# burnumba's folder: code there is burnumba's own (a transformation's wrapper, the tracer)
PACKAGE = _HERE


def user_frame():
    """The innermost frame outside burnumba, numpy and scipy (the user's code), or None."""
    frame = sys._getframe(1)
    while frame is not None:
        fname = os.path.abspath(frame.f_code.co_filename)
        if not fname.startswith(_SKIP) and "<__array_function__" not in fname:
            return frame
        frame = frame.f_back
    return None


def user_site():
    """'file:line: source' of the innermost frame outside burnumba and numpy, or ''."""
    frame = user_frame()
    if frame is None:
        return ""
    line = linecache.getline(os.path.abspath(frame.f_code.co_filename), frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno}: {line}" if line else \
        f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _public_module(name, function):
    """numpy.linalg for numpy.linalg._linalg, numpy for numpy._core.fromnumeric: the public
    module that has ``function``."""
    public = ".".join(p for p in name.split(".") if not p.startswith("_"))
    module = sys.modules.get(public)
    if public != "numpy" and module is not None and hasattr(module, function):
        return public
    return "numpy"


def numpy_caller():
    """'numpy.mean' (the public numpy function, outermost of numpy's frames) when numpy's own
    Python code is the caller of burnumba's code, or None when the user's code is."""
    frame = sys._getframe(1)
    found = None
    while frame is not None:
        fname = os.path.abspath(frame.f_code.co_filename)
        if fname.startswith(_SKIP[1]):
            module = _public_module(frame.f_globals.get("__name__", "numpy"),
                                    frame.f_code.co_name)
            found = f"{module}.{frame.f_code.co_name}"
        elif not fname.startswith(_SKIP[0]):
            return found
        frame = frame.f_back
    return found


def at_user_site(message):
    site = user_site()
    return f"{message}\n  at {site}" if site else message
