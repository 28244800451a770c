"""What a traced value answers when Python asks it for a concrete value: ``bool()``,
``float()``, ``int()``, an index, ``.item()``, ``round()``, ``format()`` and ``hash()``.

The value is computed now from the trace's inputs (``tracing/concrete.py``) and recorded as
a guard of the tape; a run whose guards fail is traced again (a new variant), so the tape is
never run on a decision its inputs would not take. ``Decisions`` is a mixin of ``Var``.
"""
import numpy as np

from .._errors import (ConcretizationError, TracerBoolError, UnsupportedMethodError,
                       UnsupportedOpError, at_user_site)
from .concrete import EXACT, INTEGER, TRUTH, peek
from .conversions import formatting_with_percent, store_refused, storing_into_numpy
from .dispatch import FUNCTIONS
from .promote import stored_scalar


def number_kind(v):
    """numpy's dtype kind of the Python number ``v.item()`` gives: an argument's own kind
    ("i", "u", "b") for an argument or elements taken from one argument, else "f" (the tape
    computes in floats: a value computed from integers is a float here)."""
    b = v._b
    if v._view is None:
        return b.input_kinds.get(v._node, "f")
    owners = np.unique(np.searchsorted(np.asarray(b.off), np.ravel(v._view[0]), "right") - 1)
    kinds = {b.input_kinds.get(int(k), "f") for k in owners}
    return kinds.pop() if len(kinds) == 1 else "f"


def as_python(v, kind):
    return int(v) if kind in ("i", "u") else bool(v) if kind == "b" else float(v)


class Decisions:
    """The decisions of a traced value (a mixin of ``Var``: ``self._b`` is its builder)."""

    __slots__ = ()

    def __bool__(self):
        # the gradient at a branch is the gradient of the branch taken, as in autograd
        return bool(self._b.concrete(self, TRUTH, "bool()"))

    def __float__(self):
        if storing_into_numpy():             # numpy's out[i] = v asks for float(v)
            return stored_scalar(self)       # out a local array: now a traced one
        if formatting_with_percent():        # "loss %.3f" % v: text, as format(v) gives
            return float(self._b.concrete(self, EXACT, "formatting with %"))
        self._cut_check("float()")
        return float(self._b.concrete(self, EXACT, "float()"))

    def __int__(self):
        if storing_into_numpy():             # out[i] = v into an integer numpy array
            raise store_refused(self._b)
        if formatting_with_percent():        # "step %d" % v
            return int(self._b.concrete(self, INTEGER, "formatting with %d"))
        # an integer is piecewise constant: its derivative is zero where it is defined
        return int(self._b.concrete(self, INTEGER, "int()"))

    # math.floor / ceil / trunc: Python ints, decided as int() is (a guard)
    def __floor__(self):
        return int(self._b.map("floor", self))

    def __ceil__(self):
        return int(self._b.map("ceil", self))

    def __trunc__(self):
        return int(self)

    def __index__(self):
        v = self._b.concrete(self, EXACT, "using it as an index")
        if v != v or v != np.trunc(v) or abs(v) == np.inf:
            raise ConcretizationError(at_user_site(
                f"a traced value used as an index or a size is {v}, not an integer: only "
                "integer values can be indices (as in numpy); use int(x) to truncate"))
        return int(v)

    def item(self, *args):
        """The value as a Python number (int for integer data), recorded as a guard."""
        if args:
            raise UnsupportedMethodError(at_user_site(
                "x.item(index) on a traced array: index it first, x[index].item()"))
        self._cut_check("item()")
        return as_python(self._b.concrete(self, EXACT, "item()"), number_kind(self))

    def __round__(self, ndigits=None):
        if ndigits is None:
            self._cut_check("round() to a Python int")
            return round(float(self._b.concrete(self, EXACT, "round() to a Python int")))
        return FUNCTIONS[np.round](self, ndigits)

    def __format__(self, spec):
        """f"{x}", f"{x:.3f}": the value's text, as numpy's scalar gives it, recorded as an
        exact guard, so a replay happens only where the text would be the same. A string
        carries no gradient, so formatting a differentiated value is not refused as float()
        is: printing a loss inside the function works, and traces anew whenever the loss
        changes (a VariantWarning names the line). A traced array has no text while tracing:
        its format is its description, as str() and repr() are."""
        if self.shape:
            if spec:
                raise ConcretizationError(at_user_site(
                    f"formatting a traced array of shape {self.shape} with {spec!r}: format "
                    "its elements, or return the array from the function and format it there"))
            return repr(self)
        what = f"formatting with {spec!r}" if spec else "formatting (f\"{x}\", format(x))"
        return format(as_python(self._b.concrete(self, EXACT, what), number_kind(self)), spec)

    def __str__(self):
        """str(x), print(x): a traced scalar's text, as f"{x}" gives it (the same exact
        guard); a traced array's description, as repr gives it."""
        return self.__format__("") if not self.shape else repr(self)

    def __hash__(self):
        """A traced scalar hashes as its value (numpy's scalars hash as Python's numbers), so
        a dict or set finds it as the program's numbers would; the value is an exact guard.
        A traced array is unhashable, as numpy's arrays are."""
        if self.shape:
            raise UnsupportedOpError(at_user_site(
                f"unhashable: a traced array of shape {self.shape}, as numpy's arrays are. "
                "Use its elements (x[i]) or tuple(x) as keys"))
        return hash(as_python(self._b.concrete(self, EXACT, "hash() (a dict key, a set)"),
                              number_kind(self)))

    def _decided_mask(self, what):
        """The values of this traced boolean array now, a numpy bool array of its shape,
        decided as Python decides an ``if``: its elements packed 50 to a number (20 on a
        float32 tape: the sum of mask * 2^k, exact in the tape's float), each number an
        exact guard, so that a run whose mask differs anywhere traces again (a new variant).
        What numpy then does with the mask (select elements, count them, find their
        positions) is constant: x[mask] is one gather, whose gradient is that of the
        elements it takes, as in autograd."""
        b = self._b
        values = peek(self, what, "use np.where(mask, x, 0.0) instead") != 0
        bits = 20 if b.dtype == np.float32 else 50
        flat = self.reshape(-1)
        for start in range(0, flat.size, bits):
            chunk = flat[start:start + bits]
            code = b.reduce("sum", [b.map("multiply", chunk, 2.0 ** np.arange(chunk.size))])
            b.concrete(code, EXACT, what)
        return values

    def _cut_check(self, what):
        """float() / item() of a value that depends on a differentiated argument would turn
        it into a constant and cut its gradient silently: refused, with the fix."""
        b = self._b
        need = self._view[1] if self._view is not None else b.need[self._node]
        if need and b.given is not None:
            raise ConcretizationError(at_user_site(
                f"{what} of a traced value that depends on a differentiated argument: the "
                "Python number would be a constant, and its gradient would be lost without a "
                "word. Use the traced value itself (np.exp(x), x * y, bnp.where(...) keep the "
                "gradient), or bn.stop_gradient(x) first to take its value as a constant on "
                "purpose. To put traced values into an array, use bnp.stack / bnp.array "
                "instead of assigning into a numpy array. math's functions keep the "
                "gradient (math.exp(x), or exp(x) after from math import exp) where the "
                "function reads them from a module, a global or a closure variable; one "
                "reached another way (a dict, an attribute) does not: write math.exp(x) or "
                "np.exp(x)"))

    def _concrete_refused(self, what):
        if what == "bool()":
            raise TracerBoolError(at_user_site(
                "Python control flow (`if`, `while`, `and`, `or`, `bool()`) on a traced value "
                "in a trace that has no input values (a value that leaked out of its trace, "
                "or a tape being rebuilt): use bnp.where(cond, a, b), bnp.maximum / "
                "bnp.minimum, or name the argument in static_argnums"))
        raise ConcretizationError(at_user_site(
            f"{what} on a traced value in a trace that has no input values: return the value "
            "from the function (or use has_aux=True) to get numbers out, or name the argument "
            "in static_argnums"))
