"""``bn.tree_map`` and ``bn.tree_leaves``: jax.tree_util's two most used functions, over the
pytrees burnumba's transformations take (tuples, lists, dicts, namedtuples, dataclasses;
``None`` is an empty subtree, as in JAX), for the update loops of programs written for JAX::

    params = bn.tree_map(lambda p, g: p - lr * g, params, grads)

They are plain Python over the structure; the leaves may be numpy arrays, numbers or traced
values."""
from .._errors import PytreeError
from ..tracing.pytree import fields as _fields
from ..tracing.pytree import is_node as _node
from ..tracing.pytree import rebuilt as _rebuilt


def tree_leaves(tree):
    """The leaves of ``tree`` in order (a dict's values by sorted key, as JAX orders them)."""
    out = []
    stack = [tree]
    while stack:
        x = stack.pop()
        if x is None:
            continue
        if not _node(x):
            out.append(x)
        elif type(x) is dict:
            stack.extend(x[k] for k in sorted(x, reverse=True))
        elif hasattr(type(x), "__dataclass_fields__"):
            stack.extend(getattr(x, k) for k in reversed(_fields(type(x))))
        else:
            stack.extend(reversed(x))
    return out


def tree_map(f, tree, *rest):
    """``f(leaf, *leaves of rest at the same place)`` for every leaf of ``tree``, in a tree of
    the same structure. Every tree in ``rest`` must have ``tree``'s structure."""
    return _map(f, tree, rest, "tree")


def _map(f, x, others, where):
    if x is None:
        return None
    if not _node(x):
        return f(x, *others)
    t = type(x)
    if hasattr(t, "__dataclass_fields__"):
        names = _fields(t)
        for k, o in enumerate(others):
            if type(o) is not t:
                raise PytreeError(
                    f"tree_map: at {where}, the first tree has a {t.__name__}, tree {k + 2} a "
                    f"{type(o).__name__}: every tree needs the first one's structure")
        return _rebuilt(t, names, [_map(f, getattr(x, n), [getattr(o, n) for o in others],
                                        f"{where}.{n}") for n in names])
    for k, o in enumerate(others):
        if type(o) is not t or len(o) != len(x) or (t is dict and o.keys() != x.keys()):
            raise PytreeError(
                f"tree_map: at {where}, the first tree has a {t.__name__} of {len(x)} "
                f"({sorted(x) if t is dict else 'items'}), tree {k + 2} a "
                f"{type(o).__name__}: every tree needs the first one's structure")
    if t is dict:
        return {key: _map(f, x[key], [o[key] for o in others], f"{where}[{key!r}]")
                for key in x}
    items = [_map(f, v, [o[i] for o in others], f"{where}[{i}]") for i, v in enumerate(x)]
    return t(*items) if t is not tuple and t is not list else t(items)
