"""What a traced function reads from outside its arguments, checked on every call.

A trace runs ``f`` once; the values ``f`` reads from its globals, its closure or an
object's attributes (``self.k``, ``model.lr``) enter the tape as constants. A
program written for numpy or autograd rebinds them between calls (``beta = epoch / 10``
before each gradient, ``self.temperature *= 0.9``, ``data = next_batch()``), and expects
the next call to use the new value: autograd does, because it runs ``f`` again on every
call. A tape that kept the old constant would give a silently wrong number.

So after each trace, ``snapshot(f)`` records where each such value lives and the object it
was, and every call asks ``changed()`` whether each place still holds the same object (an
``is`` test per value: 0.2-0.4 us a call for a few globals on the project's VM, against the
2 us and more of such a call). When one was rebound, the function's tapes
are dropped and it is traced again with the new value (``transforms/core.py``).

What is recorded, recursively through the user's functions that ``f`` reads (helpers,
closures, ``functools.partial``, bound methods, callable objects, the functions under a
decorator's ``__wrapped__``):

- each global name the code loads (not one it stores: an output of ``f``, not an input);
- each closure cell that some code can rebind (a cell that no code of the enclosing
  function stores into, a factory's parameter, holds its object for good; defaults are
  fixed when the function is made);
- the attributes named in the code (``LOAD_ATTR``) of the objects found so (``self``, a
  global model or configuration object), and theirs in turn, three levels deep
  (``self.cfg.lr``);
- the items of the dicts and lists found so that the code reads with a constant key
  (``CONFIG["lr"]``, ``self.cfg["opt"]["lr"]``, ``CONFIG.get("lr", 0.1)``, ``W[0]``) or
  with a global's value (``CONFIG[KEY]``), three levels deep, but not those it writes
  itself. A key the code computes (a loop variable) is not seen: such an item set again
  in place of another stays the constant it was, as an array changed in place does.

Not recorded: modules, classes, builtins, ufuncs, and the functions of numpy, scipy and
burnumba (their behaviour is their code), nor burnumba's own wrappers (only what they
wrap). An array changed *in place* keeps its identity and is not detected: as under
``jax.jit``, it stays the constant it was (docs/sharp-bits.md); pass it as an argument.
"""
import dis
import functools
import os
import sys
import sysconfig
import types

import numpy as np

from .._errors import PACKAGE
from .shared import same_atom

_MISSING = object()
_LIBRARIES = frozenset({"numpy", "scipy", "burnumba"})
_NUMPY_FUNCTION = () if type(np.sum) is types.FunctionType else (type(np.sum),)
_SKIP = (types.ModuleType, type, types.BuiltinFunctionType, types.BuiltinMethodType,
         np.ufunc, types.MethodWrapperType, types.WrapperDescriptorType) + _NUMPY_FUNCTION
_ATOMS = (int, float, complex, str, bytes, type(None), np.generic)   # compared by value
_MAX_READS = 512      # places recorded for one function (a bound on the check's cost)
_MAX_DEPTH = 8        # helpers calling helpers


@functools.lru_cache(maxsize=1024)
def _names(code):
    """(global names loaded and not stored, attribute names loaded) of ``code`` and the
    code nested in it (comprehensions, inner functions)."""
    loads, stores, attrs = {}, set(), {}
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            op = ins.opname
            if op in ("LOAD_GLOBAL", "LOAD_NAME"):
                loads.setdefault(ins.argval, None)
            elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
                stores.add(ins.argval)
            elif op in ("LOAD_ATTR", "LOAD_METHOD"):
                attrs.setdefault(ins.argval, None)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return (tuple(n for n in loads if n not in stores), tuple(attrs))


# A place that no longer exists when checked: a global or dict item deleted, a list item
# gone with its list's end, a closure cell emptied (the call then traces again)
GONE = (KeyError, IndexError, ValueError)


def _is_subscript(ins):
    return ins.opname == "BINARY_SUBSCR" or (ins.opname == "BINARY_OP" and ins.argrepr == "[]")


@functools.lru_cache(maxsize=1024)
def _subscripts(code):
    """``(keys, names)``: the keys ``code`` (and the code nested in it) reads items with, as
    constants (``d["lr"]``, ``w[0]``, ``d.get("lr", 0.1)``) or as the value of a global
    (``d[NAME]``: its name); not those it writes or deletes (``d["n"] = ...``: an output of
    the code)."""
    reads, names, writes = {}, {}, set()
    stack = [code]
    while stack:
        c = stack.pop()
        previous = None
        for ins in dis.get_instructions(c):
            if previous is not None and previous.opname == "LOAD_CONST":
                key = previous.argval
                if _is_subscript(ins):
                    reads.setdefault(key, None)
                elif ins.opname in ("STORE_SUBSCR", "DELETE_SUBSCR"):
                    writes.add(key)
            if previous is not None and previous.opname == "LOAD_GLOBAL" and _is_subscript(ins):
                names.setdefault(previous.argval, None)
            if ins.opname == "LOAD_CONST" and previous is not None and previous.opname in (
                    "LOAD_METHOD", "LOAD_ATTR") and previous.argval == "get":
                reads.setdefault(ins.argval, None)          # d.get(key[, default])
            previous = ins
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    # keys whose repr is a literal (the check is generated code: Captures.same)
    keys = tuple(k for k in reads if isinstance(k, (str, int, bytes)) and type(k) is not bool
                 and k not in writes)
    return keys, tuple(names)


def _codes(code):
    """``code`` and every code object nested in it."""
    out, stack = [], [code]
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _never_rebound(f):
    """The closure variables of ``f`` that no code can rebind: its enclosing function (a
    module-level function or method, found by ``f.__qualname__``) and every function nested
    in it, ``f`` included, have no ``STORE_DEREF`` / ``DELETE_DEREF`` of them, so the cell
    holds the object it was made with for good (a parameter of a factory, ``fn`` in
    ``make(fn): return lambda x: fn(x)``). Empty when the enclosing code cannot be found."""
    outer_name, sep, _ = f.__qualname__.rpartition(".<locals>.")
    if not sep or "<locals>" in outer_name or not f.__code__.co_freevars:
        return frozenset()
    outer = f.__globals__.get(outer_name.split(".")[0])
    for part in outer_name.split(".")[1:]:
        outer = getattr(outer, part, None)
    code = getattr(getattr(outer, "__func__", outer), "__code__", None)
    return _fixed(code, f.__code__) if isinstance(code, types.CodeType) else frozenset()


@functools.lru_cache(maxsize=1024)
def _fixed(outer, inner):
    codes = _codes(outer)
    if inner not in codes:                  # not where this function was made
        return frozenset()
    stored = {ins.argval for c in codes for ins in dis.get_instructions(c)
              if ins.opname in ("STORE_DEREF", "DELETE_DEREF")}
    return frozenset(inner.co_freevars) - stored


def _own(code):
    """Whether ``code`` is burnumba's own (a transformation's wrapper): not read through."""
    return code.co_filename.startswith(PACKAGE)


@functools.lru_cache(maxsize=1024)
def _user_module(name):
    """Whether the module ``name`` is the user's (not numpy's, scipy's, burnumba's, nor one of
    the standard library or an installed package: their attributes are not a program's
    settings); None for a name that is no loaded module."""
    module = sys.modules.get(name or "")
    if module is None:
        return None
    if name.partition(".")[0] in _LIBRARIES or name in sys.builtin_module_names:
        return False
    path = getattr(module, "__file__", None)
    if not path:
        return name == "__main__"
    path = os.path.realpath(path)
    return not any(path.startswith(p) for p in _INSTALLED_PATHS)


_INSTALLED_PATHS = tuple(os.path.realpath(p) + os.sep for p in {
    sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def _library(f):
    module = getattr(f, "__module__", None) or ""
    return f.__closure__ is None and module.partition(".")[0] in _LIBRARIES


class Captures:
    """The places a function read values from when it was traced, and those values:
    ``changed()`` names the first place that holds another object now, or gives None.

    The common case, every place holding its object, is one call of a function made here
    for these places: ``d0['beta'] is v0 and c0.cell_contents is v1 and ...``, its operands
    bound as defaults (60 ns for three globals, where a loop of ``is`` tests over them took
    200 ns on the project's VM); only when it fails are the places read one by one."""

    __slots__ = ("items", "labels", "same")

    def __init__(self, items, labels):
        self.items, self.labels = items, labels
        params, operands, terms = [], [], []
        for k, (kind, where, name, value) in enumerate(items):
            params += [f"w{k}", f"v{k}"]
            operands += [where, value]
            terms.append(f"w{k}[{name!r}] is v{k}" if kind == 0 else
                         f"w{k}.cell_contents is v{k}" if kind == 1 else
                         f"{name!r} not in w{k}")           # kind 2: a name kept absent
        namespace = {"M": _MISSING}
        exec(f"def same({', '.join(params)}):\n    return {' and '.join(terms)}\n", namespace)
        self.same = namespace["same"]
        self.same.__defaults__ = tuple(operands)

    def changed(self):
        """The description of the first place that holds another value than at the trace,
        or None. A place rebound to an equal number, string or None (``n = X.shape[0]``
        again: a new int object of the same value) takes the new object, so the next
        ``same()`` holds without a retrace."""
        try:
            if self.same():
                return None
        except GONE:
            pass
        items = list(self.items)
        for k, (kind, where, name, value) in enumerate(items):
            try:
                now = where[name] if kind == 0 else where.cell_contents if kind == 1 else \
                    where.get(name, _MISSING)
            except GONE:
                return self.labels[k]()
            if now is value:
                continue
            if not (type(now) is type(value) and isinstance(now, _ATOMS)
                    and same_atom(now, value)):
                return self.labels[k]()
            items[k] = (kind, where, name, now)
        self.items = tuple(items)
        self.same.__defaults__ = tuple(x for _, where, _, value in items
                                       for x in (where, value))
        return None


class _Label:
    """A place's description for the warning, formatted only when one is given."""

    __slots__ = ("text", "name", "f")

    def __init__(self, text, name, f):
        self.text, self.name, self.f = text, name, f

    def __call__(self):
        code = self.f.__code__
        return self.text.format(self.name, f"{self.f.__qualname__} ({code.co_filename}:"
                                           f"{code.co_firstlineno})")


class _Walk:
    def __init__(self):
        self.items, self.labels = [], []
        self.seen = set()
        self.places = set()         # (id of the dict or cell, name): each checked once

    def add(self, kind, where, name, value, label, depth):
        place = (id(where), name)
        if len(self.items) >= _MAX_READS or place in self.places:
            return
        self.places.add(place)
        # a place holding a library's function, a ufunc, a builtin or a class is checked
        # (``act = np.tanh`` rebound to np.sin), but not read through (its behaviour is its
        # code); one holding a module is not checked (``np`` is never rebound)
        library = kind != 2 and (isinstance(value, _SKIP) or (
            type(value) is types.FunctionType and _library(value)))
        if library and isinstance(value, types.ModuleType):
            return
        self.items.append((kind, where, name, value))
        self.labels.append(label)
        if not library:
            self.value(value, depth + 1)

    def value(self, v, depth):
        """Read through ``v`` when it is code that runs (a function, a method, a partial, a
        callable object)."""
        if depth > _MAX_DEPTH or id(v) in self.seen:
            return
        t = type(v)
        if t is types.FunctionType:
            self.seen.add(id(v))
            self.function(v, depth)
        elif t is types.MethodType:     # not marked seen: a bound method is often made
            self.value(v.__func__, depth)       # here and dropped (its id could come back)
            self.attributes(v.__self__, v.__func__, depth)
        elif t is functools.partial:
            self.seen.add(id(v))
            self.value(v.func, depth)
        elif callable(v) and not isinstance(v, _SKIP):
            self.seen.add(id(v))
            wrapped = getattr(v, "__wrapped__", None)
            if wrapped is not None:
                self.value(wrapped, depth)
            call = getattr(t, "__call__", None)
            if type(call) is types.FunctionType and not _own(call.__code__):
                self.value(call, depth)
                self.attributes(v, call, depth)

    def function(self, f, depth):
        wrapped = getattr(f, "__wrapped__", None)
        if wrapped is not None:                 # a decorator's (or burnumba's) wrapper
            self.value(wrapped, depth)
        code = f.__code__
        if _own(code) or _library(f):
            return
        loads, _ = _names(code)
        g = f.__globals__
        builtins = f.__builtins__
        for name in loads:
            if name in g:
                self.add(0, g, name, g[name], _Label("the global {!r} that {} reads", name, f),
                         depth)
            elif name in builtins:              # abs, len: a global of that name made later
                self.add(2, g, name, _MISSING, _Label(    # would be read instead
                    "the builtin {!r} (now shadowed by a global) that {} reads", name, f),
                    depth)
        fixed = _never_rebound(f)
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if name in fixed:                   # no code can rebind it: read through only
                self.value(value, depth + 1)
            else:
                self.add(1, cell, name, value, _Label(
                    "the variable {!r} that {} reads from its enclosing function", name, f),
                    depth)
            self.attributes(value, f, depth)
            self.read_items(value, f, depth)
        for name in loads:                      # a global object's attributes (model.lr)
            if name in g:
                self.attributes(g[name], f, depth)
                self.namespace(g[name], f, depth)
                self.read_items(g[name], f, depth)

    def read_items(self, obj, f, depth, levels=3):
        """The items of a dict or list that ``f``'s code reads with a key of ``_subscripts``
        (``CONFIG["lr"]``, ``W[0]``), and theirs in turn (``CONFIG["opt"]["lr"]``), ``levels``
        deep: an item the program sets to another object between calls is a rebinding, as
        a global's. A key ``d.get`` reads that is not there is kept absent."""
        if type(obj) not in (dict, list):
            return
        code = getattr(f, "__code__", None)
        if code is None or (id(obj), id(code), "[]") in self.seen:
            return
        self.seen.add((id(obj), id(code), "[]"))
        keys, names = _subscripts(code)
        g = f.__globals__
        keys += tuple(g[n] for n in names if type(g.get(n)) in (str, int))
        for key in keys:
            if type(obj) is list:
                if type(key) is not int or not -len(obj) <= key < len(obj):
                    continue
            else:
                try:
                    if key not in obj:
                        # d.get(key, default) of a key not there yet: kept absent
                        self.add(2, obj, key, _MISSING, _Label(
                            "the item [{!r}] (absent when traced) that {} reads", key, f),
                            depth)
                        continue
                except TypeError:               # a key that cannot be hashed
                    continue
            value = obj[key]
            self.add(0, obj, key, value, _Label("the item [{!r}] that {} reads", key, f),
                     depth)
            if levels > 1:
                self.read_items(value, f, depth, levels - 1)

    def attributes(self, obj, f, depth, levels=3):
        """The attributes of a user's object that ``f``'s code names, and theirs in turn
        (``self.cfg.lr``), ``levels`` deep."""
        d = getattr(obj, "__dict__", None)
        if type(d) is not dict or isinstance(obj, _SKIP) or callable(obj) and \
                type(obj) in (types.FunctionType, types.MethodType, functools.partial):
            return
        code = getattr(f, "__code__", None)
        if code is None or (id(obj), id(code)) in self.seen:
            return
        self.seen.add((id(obj), id(code)))      # another function may name other attributes
        _, attrs = _names(code)
        for name in attrs:
            if name in d:
                value = d[name]
                self.add(0, d, name, value, _Label(
                    "the attribute " + type(obj).__name__ + ".{} that {} reads", name, f), depth)
                if levels > 1 and not isinstance(value, (np.ndarray, np.generic) + _ATOMS):
                    self.attributes(value, f, depth, levels - 1)
                    self.read_items(value, f, depth, levels - 1)
                continue
            owner = next((k for k in type(obj).__mro__ if name in k.__dict__), None)
            if owner is None or _user_module(getattr(owner, "__module__", None)) is False:
                continue
            member = owner.__dict__[name]
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if type(member) is types.FunctionType:  # self.reg(w): a method the code calls
                if not _own(member.__code__):
                    self.value(types.MethodType(member, obj), depth + 1)
            elif not isinstance(member, (property, types.MemberDescriptorType)):
                # a class attribute read through the instance (self.lr, Model.lr): the
                # class's value, and the instance's dict staying without its own
                label = _Label("the attribute " + type(obj).__name__ + ".{} that {} reads",
                               name, f)
                self.add(0, owner.__dict__, name, member, label, depth)
                self.add(2, d, name, _MISSING, label, depth)

    def namespace(self, obj, f, depth):
        """A user's module or class that ``f``'s code names (``import config``;
        ``config.LR``, ``Config.LR``): the attributes the code names of it."""
        if isinstance(obj, types.ModuleType):
            if not _user_module(obj.__name__):
                return
        elif not (isinstance(obj, type) and _user_module(obj.__module__)):
            return
        code = f.__code__
        if (id(obj), id(code)) in self.seen:
            return
        self.seen.add((id(obj), id(code)))
        d = obj.__dict__
        for name in _names(code)[1]:
            if name in d and not name.startswith("__"):
                member = d[name]
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                self.add(0, d, name, member, _Label(
                    "the attribute " + obj.__name__ + ".{} that {} reads", name, f), depth)
                self.read_items(member, f, depth)


def snapshot(f):
    """The places ``f`` reads values from and their values now, or None when there are
    none to check."""
    walk = _Walk()
    walk.value(f, 0)
    if not walk.items:
        return None
    return Captures(tuple(walk.items), tuple(walk.labels))
