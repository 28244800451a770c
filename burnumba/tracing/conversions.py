"""What numpy asks a traced value for, and the messages when it cannot have it: the user's
instruction at a conversion (a write into a numpy array, an index, a call), the ndarray
methods traced values refuse and why, the dtype casts inside a tape, and the integers of a
traced index into a numpy array."""
import dis
import sys
import warnings

import numpy as np

from .._errors import InplaceError, PrecisionWarning, UnsupportedOpError, at_user_site
from .concrete import EXACT, Evaluator
from .integers import integer_data
from .subscripts import lifted, note  # noqa: F401 (lifted: the tracer's)


INTO_NUMPY = (
    "writing a traced value into a numpy array (`out[...] = v` with out a numpy array) that "
    "is seen from elsewhere too (another name, a list, a view of it, a global, an attribute) "
    "or is not of floats, or in a form other than NAME[key] = v (a key of names, constants, "
    "slices and lists, with no call in it: `idx = np.arange(4)` first): a float array held "
    "by one local name only becomes traced at its first traced write; this one would keep its old "
    "numbers for the others. Make out a traced array, out = np.zeros_like(x) or "
    "np.zeros(shape, like=x) (x any traced value), then write into it; or build the result "
    "with np.stack / np.array(list)")


def store_refused(b):
    """The error for ``out[i] = v`` with out a numpy array and v a traced scalar. numpy
    replaces any exception that ``__float__`` raises for an object with ``__getitem__`` (a
    traced scalar has it: ``s[None]``) by its own "setting an array element with a
    sequence", so the builder keeps ours and the trace raises it instead (transforms/core.py:
    ``_traced``)."""
    b.store_error = InplaceError(at_user_site(INTO_NUMPY))
    return b.store_error


def storing_into_numpy():
    """Whether numpy asks a traced value for a number because the user's line writes it into
    a numpy array (``out[i] = v``): called from a conversion (``__float__``, ``__array__``)
    that numpy's compiled code calls, two frames below the user's line."""
    return user_instruction(1) == "store"


def formatting_with_percent():
    """Whether Python asks a traced value for ``float()`` / ``int()`` because the user's line
    formats it with ``%`` (``"loss %.3f" % v``): called from the conversion that str's ``%``
    calls, whose caller is the user's ``BINARY_OP %`` (a ``%`` of a traced value with a
    number is Var's own ``__mod__``, which asks for no conversion)."""
    frame = sys._getframe(2)
    code, i = frame.f_code.co_code, frame.f_lasti
    name = dis.opname[code[i]]
    if name == "BINARY_OP":                            # Python 3.11 on: the op is its arg
        return code[i + 1] in _REMAINDER
    return name in ("BINARY_MODULO", "INPLACE_MODULO")    # before


# BINARY_OP's arguments for % and %= (dis's table of them, Python 3.11 on)
_REMAINDER = tuple(k for k, (name, _) in enumerate(getattr(dis, "_nb_ops", ()))
                   if name in ("NB_REMAINDER", "NB_INPLACE_REMAINDER"))


def user_instruction(depth=0):
    """What the user's line does where numpy (compiled code, no Python frame of its own) asked
    a traced value for an array: "store" (``out[i] = v``), "load" (``arr[v]``) or "call"
    (``np.array([a, b])``, a ufunc of a list)."""
    frame = sys._getframe(2 + depth)
    name = dis.opname[frame.f_code.co_code[frame.f_lasti]]
    if name.startswith("STORE"):
        return "store"
    if "SUBSCR" in name:
        return "load"
    return "call" if name.startswith(("CALL", "PRECALL")) else "other"



MEMORY = frozenset(("__array_interface__", "__array_struct__", "__buffer__",
                     "__dlpack__", "__dlpack_device__"))
_CONCRETE = ("it asks for concrete numbers, which do not exist while tracing: return the "
             "value from the function (or use has_aux=True) to get numbers out")
_NOT_DIFFERENTIABLE = ("its result is integer or boolean, neither differentiable nor traced: "
                       "compute it with numpy before the call and pass it in as data (an "
                       "integer array argument indexes at run time: x[idx]), or use "
                       "bnp.where for a choice made by traced values")
_IN_PLACE = ("it writes in place, which is not traceable: build a new array (bnp.where, "
             "bnp.concatenate, bnp.stack)")
NOT_TRACED = {
    **dict.fromkeys(("tolist", "tobytes", "tofile", "dump", "dumps", "__array__"),
                    _CONCRETE),
    **dict.fromkeys(("argpartition", "compress"),
                    _NOT_DIFFERENTIABLE),
    "searchsorted": "call np.searchsorted(x, v), which traces (its points decided under a "
                    "guard)",
    "itemset": "it writes in place: x[i] = v works on traced arrays (a functional update)",
    "resize": ("it changes the array's size in place, which is not traceable: build the new "
               "array with bnp.concatenate / bnp.pad / reshape"),
    **dict.fromkeys(("setfield", "getfield", "byteswap", "setflags", "strides", "data", "base",
                     "flags", "ctypes"),
                    "a traced value has no memory of its own (it is a node of a tape): drop "
                    "the call, or use reshape / astype"),
    "partition": ("it sorts in place around a pivot: use np.sort(x, axis) (a sorted copy, "
                  "differentiable)"),
    "view": "a traced array has no memory of its own to view; use reshape or astype",
}


def no_delete(x, key):
    """``del x[key]`` of a traced array (numpy: cannot delete array elements)."""
    raise InplaceError(at_user_site(
        "del x[...] of a traced array: numpy cannot delete array elements either; build the "
        "rest with a mask or slices (x[mask], np.concatenate([x[:i], x[i + 1:]]))"))


def no_modulus():
    """pow(x, y, mod) of a traced value (Python's three-argument pow)."""
    raise UnsupportedOpError(at_user_site(
        "pow(x, y, mod) of a traced value: numpy refuses a modulus with floats too; write "
        "(x ** y) % mod"))


def cast_check(what, dtype, have):
    """A cast inside a tape (astype, dtype=): another float dtype computes on in the tape's own
    dtype with a PrecisionWarning; an integer, boolean or complex dtype is an error."""
    want = np.dtype(dtype)
    if want == have:
        return
    if want.kind == "f":
        warnings.warn(at_user_site(
            f"{what} inside a {have} tape: values stay {have} (a tape computes in one float "
            f"dtype, set by its float array arguments), so results can differ from numpy's in "
            f"the last digits. Pass {want} arrays to trace a {want} tape, or drop the cast"),
            PrecisionWarning, stacklevel=2)
        return
    if want.kind == "c":
        raise UnsupportedOpError(at_user_site(
            f"{what}: complex numbers are not supported (burnumba differentiates real "
            "functions)"))
    raise UnsupportedOpError(at_user_site(
        f"{what} of a traced value: it would not be differentiable. Compute integer or "
        "boolean data (indices, masks) with numpy before the call and pass it in; use "
        "bnp.where for a mask built from traced values"))


def guarded_index_ok(x):
    """Whether the traced value ``x``, indexing a numpy array (``arr[i]``, which numpy does
    without asking us), can become that index's integers under a guard: integer data with no
    gradient, in a trace that has the arguments' values."""
    b = x._b
    need = x._view[1] if x._view is not None else b.need[x._node]
    return b.given is not None and b.live and not need and integer_data(b, x)


def guarded_index(x, dtype):
    """The integers of the traced index ``x`` now, for numpy to index a numpy array with: a
    constant of the tape, valid while every index stays the same, so one guard checks that
    sum(|index - recorded|) is 0 (an index that moves makes the transformation trace again,
    as a branch that changes does; a take row would read it at run time instead)."""
    b = x._b
    start = b.n
    if b.evaluator is None:
        b.evaluator = Evaluator(b, b.given)
    values = np.array(b.evaluator.value(x.node), dtype=np.int64).reshape(x.shape)
    b.concrete(abs(x - values.astype(b.dtype)).sum(), EXACT, "a traced index into a numpy array")
    # the remedy, for the message of a guard that keeps failing
    b.guards.sites[-1] += (" [a numpy array indexed by traced integers: bnp.take(array, idx, "
                           "axis=0), or the array as a traced value (an argument, or computed "
                           "from one), reads the index when the tape runs, with no new trace]")
    # numpy's subscript in the user's frame (two frames up: Var.__array__, then the line)
    note(x, sys._getframe(2), len(b.guards) - 1, start)
    return values if dtype is None else values.astype(dtype)


def refuse(row, xs, need):
    """A map row's operand without a derivative (``Op.refused``, e.g. jn's ``n``) that
    depends on a differentiated argument (``need`` of its node): refused with an error that
    names the argument, rather than a gradient silently zero. ``xs``: the traced operands."""
    for k, name in enumerate(row.refused):
        if name and k < len(xs) and need[xs[k].node]:
            raise UnsupportedOpError(at_user_site(
                f"{row.name}: the derivative with respect to its argument `{name}` is not "
                f"defined (autograd has none either), and here `{name}` depends on a "
                f"differentiated argument. Hold `{name}` constant: pass it as data (outside "
                f"argnums), or as bn.stop_gradient({name})"))
