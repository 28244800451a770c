"""A library module as the code of a tracing thread sees it (#30): some of its attributes
are stand-ins there, and the module's own everywhere else.

While any thread traces, the module's class is a subclass of its type (``during``) with a
data descriptor for each name that has a stand-in. A data descriptor is found before the
module's dict, so the module's other attributes keep CPython's own lookup at its speed,
and the module's dict is never changed. The descriptor gives the stand-in to code of a
thread that is tracing (``randomness.current()``: the recorder stack of this thread's open
traces) that is not a library's own; every other reader gets the module's attribute:
other threads, and numba (compiling a function meanwhile resolves ``np.sum`` to numpy's),
numpy, scipy and burnumba code in the tracing thread. The module stays the same object, so
``xp is np`` holds. library_calls.py swaps the class for the traces in progress (a count)
and puts the module type back after the last.
"""
import sys
import types

from ..tracing import randomness

# code whose reads of a module's attributes always get the module's own: the libraries'
# (numba's compiler resolves np.sum in a function it compiles; numpy's and scipy's own
# Python code; the kernels' generated modules, which the in-process engines load)
_LIBRARIES = frozenset(("numpy", "numba", "llvmlite", "scipy", "burnumba",
                        "burnumba_kernels_gen"))


class StandIn:
    """The data descriptor of one attribute (``np.sum``, ``scipy.stats.norm``)."""

    __slots__ = ("name", "ours")

    def __init__(self, name, ours):
        self.name, self.ours = name, ours

    def __get__(self, module, owner=None):
        if module is None:
            return self
        if randomness.current() is not None:
            frame = sys._getframe(1)
            # a module's own top level reads the module's attribute: that is an import
            # during the trace (``from math import exp`` in a module imported lazily),
            # which must not keep a stand-in after it
            if frame.f_globals.get("__name__", "").partition(".")[0] not in _LIBRARIES \
                    and frame.f_code.co_name != "<module>":
                return self.ours
        return module.__dict__[self.name]

    def __set__(self, module, value):            # the module's own assignments, as before
        module.__dict__[self.name] = value

    def __delete__(self, module):
        del module.__dict__[self.name]


def class_places(tables):
    """library_calls.py's places for the modules of ``tables`` ({module: {name: stand-in}}):
    (module, "__class__", the module type, its class while tracing), made once; the class
    is swapped while any thread traces (counted there)."""
    return [(module, "__class__", types.ModuleType, during(module, names))
            for module, names in tables.items()]


def during(module, table):
    """The class ``module`` takes while some thread traces: ``table`` {name: stand-in}."""
    attrs = {name: StandIn(name, ours) for name, ours in table.items()}
    # the module type's own name and module: a walk over what a function reads (captures,
    # randomness) takes the library for a module, not for an object of burnumba's
    attrs.update(__slots__=(), __module__="builtins")
    return type("module", (type(module),), attrs)
