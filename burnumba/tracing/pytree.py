"""Pytrees of tuples, lists, dicts and namedtuples, flattened to leaves plus a hashable
structure (a node's type and its children's structures; a dict's sorted keys). ``None`` is
a node without children, as in JAX: ``{"w": w, "b": None}`` has one leaf, and a gradient
with respect to it is ``{"w": dw, "b": None}``."""
import dataclasses
import functools

from .._errors import PytreeError

_NONE = type(None)
NONE_DEF = (_NONE, ())          # the structure of None: an empty subtree


def is_node(x):
    """Whether ``x`` is a pytree node: a tuple, list or dict, a namedtuple
    (collections.namedtuple, typing.NamedTuple: rebuilt from its fields, as in JAX), or a
    dataclass instance (its fields, in order; JAX needs it registered first)."""
    t = type(x)
    return t is tuple or t is list or t is dict or (isinstance(x, tuple) and
                                                    hasattr(t, "_fields")) or \
        hasattr(t, "__dataclass_fields__")


@functools.lru_cache(maxsize=256)
def fields(cls):
    """A dataclass's field names, in order (its pytree children)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def rebuilt(cls, names, values):
    """A dataclass instance of these field values, as ``dataclasses.replace`` would leave
    it but without running ``__init__`` / ``__post_init__`` (a field may hold a traced
    value or a gradient, which a user's checks in them are not written for); frozen
    dataclasses too."""
    obj = object.__new__(cls)
    for name, value in zip(names, values):
        object.__setattr__(obj, name, value)
    return obj


def flatten(tree):
    """Return (leaves, treedef). dict keys are visited in sorted order, as in JAX."""
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _flatten(tree, leaves):
    t = type(tree)
    if t is dict:
        keys = tuple(sorted(tree))
        return (dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if hasattr(t, "__dataclass_fields__") and not isinstance(tree, type):
        names = fields(t)
        return (t, names, tuple(_flatten(getattr(tree, k), leaves) for k in names))
    if is_node(tree):
        return (t, tuple(_flatten(x, leaves) for x in tree))
    if tree is None:
        return NONE_DEF
    leaves.append(tree)
    return None


def unflatten(treedef, leaves):
    if treedef is not None and treedef[0] is dict and not any(treedef[2]):
        return dict(zip(treedef[1], leaves))          # a flat dict, the usual parameters
    return _unflatten(treedef, iter(leaves))


def _unflatten(treedef, it):
    if treedef is None:
        return next(it)
    kind = treedef[0]
    if kind is dict:
        return {k: _unflatten(sub, it) for k, sub in zip(treedef[1], treedef[2])}
    if kind is tuple or kind is list:
        return kind(_unflatten(sub, it) for sub in treedef[1])
    if kind is _NONE:
        return None
    if len(treedef) == 3:                                              # a dataclass
        return rebuilt(kind, treedef[1], [_unflatten(sub, it) for sub in treedef[2]])
    return kind(*[_unflatten(sub, it) for sub in treedef[1]])          # a namedtuple


def describe(treedef):
    """A short human-readable form of a structure, for error messages."""
    if treedef is None:
        return "*"
    if treedef[0] is _NONE:
        return "None"
    if treedef[0] is dict:
        items = (f"{k!r}: {describe(s)}" for k, s in zip(treedef[1], treedef[2]))
        return "{" + ", ".join(items) + "}"
    if len(treedef) == 3:                                              # a dataclass
        items = (f"{k}={describe(s)}" for k, s in zip(treedef[1], treedef[2]))
        return f"{treedef[0].__name__}({', '.join(items)})"
    inner = ", ".join(describe(s) for s in treedef[1])
    if treedef[0] is list:
        return f"[{inner}]"
    if treedef[0] is not tuple:
        return f"{treedef[0].__name__}({inner})"
    return f"({inner},)" if len(treedef[1]) == 1 else f"({inner})"


def check_same(expected, got, what):
    if expected != got:
        raise PytreeError(
            f"{what}: pytree structure changed from {describe(expected)} to {describe(got)}. "
            "A Tape runs the structure it was traced with: trace again with bn.trace, or use "
            "bn.grad / bn.value_and_grad, which retrace for each new structure.")


def leaves_if_same(tree, treedef, out):
    """Append tree's leaves to ``out`` if tree has the structure ``treedef``, else return
    False. Cheaper than flatten + compare: no treedef is built and dict keys are not sorted."""
    if treedef is None:
        out.append(tree)
        return True
    kind = treedef[0]
    if kind is dict:
        keys = treedef[1]
        if type(tree) is not dict or len(tree) != len(keys):
            return False
        for key, sub in zip(keys, treedef[2]):
            if key not in tree:
                return False
            if sub is None:
                out.append(tree[key])
            elif not leaves_if_same(tree[key], sub, out):
                return False
        return True
    if kind is _NONE:
        return tree is None
    if len(treedef) == 3:                                              # a dataclass
        if type(tree) is not kind:
            return False
        for name, sub in zip(treedef[1], treedef[2]):
            if not leaves_if_same(getattr(tree, name), sub, out):
                return False
        return True
    subs = treedef[1]
    if type(tree) is not kind or len(tree) != len(subs):
        return False
    for x, sub in zip(tree, subs):
        if not leaves_if_same(x, sub, out):
            return False
    return True


class ArgLeaves:
    """``leaves(args)``: the leaves of a call's arguments, argument after argument, if each
    has its structure in ``treedefs`` (one per argument), else None: the call plans' first
    check. Built once per plan, so that a leaf argument and a flat dict (a model's
    parameters) take short paths (the moons MLP's parameters and data: 0.9-1.1 against
    1.3-2.1 us)."""

    __slots__ = ("n", "parts")

    def __init__(self, treedefs):
        self.n = len(treedefs)
        self.parts = [(0, None) if t is None else
                      (1, t[1]) if t[0] is dict and not any(t[2]) else (2, t)
                      for t in treedefs]

    def __call__(self, args):
        if len(args) != self.n:
            return None
        out = []
        for a, (kind, info) in zip(args, self.parts):
            if kind == 0:
                out.append(a)
            elif kind == 1:                        # a dict of leaves: its keys, in order
                if type(a) is not dict or len(a) != len(info):
                    return None
                try:
                    out += [a[k] for k in info]
                except KeyError:
                    return None
            elif not leaves_if_same(a, info, out):
                return None
        return out
