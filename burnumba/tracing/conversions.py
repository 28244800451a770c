"""What numpy asks a traced value for, and the messages when it cannot have it: the user's
instruction at a conversion (a write into a numpy array, an index, a call), the ndarray
methods traced values refuse and why, and the dtype casts inside a tape."""
import dis
import sys
import warnings

import numpy as np

from .._errors import PrecisionWarning, UnsupportedOpError, at_user_site


INTO_NUMPY = (
    "writing a traced value into a numpy array (`out[...] = v` with out a numpy array) is not "
    "traceable: make out a traced array, out = np.zeros_like(x) or np.zeros(shape, like=x) "
    "(x any traced value), then write into it; or build the result with np.stack / "
    "np.array(list)")


def storing_into_numpy():
    """Whether numpy asks a traced value for a number because the user's line writes it into
    a numpy array (``out[i] = v``): called from a conversion (``__float__``, ``__array__``)
    that numpy's compiled code calls, two frames below the user's line."""
    return user_instruction(1) == "store"


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
    **dict.fromkeys(("any", "all", "argmax", "argmin", "argsort", "argpartition", "nonzero",
                     "searchsorted", "round", "compress"), _NOT_DIFFERENTIABLE),
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
