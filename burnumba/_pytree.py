"""Pytrees of tuples, lists and dicts, flattened to leaves plus a hashable structure."""
from ._errors import PytreeError


def flatten(tree):
    """Return (leaves, treedef). dict keys are visited in sorted order, as in JAX."""
    leaves = []
    treedef = _flatten(tree, leaves)
    return leaves, treedef


def _flatten(tree, leaves):
    t = type(tree)
    if t is tuple or t is list:
        return (t, tuple(_flatten(x, leaves) for x in tree))
    if t is dict:
        keys = tuple(sorted(tree))
        return (dict, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return None


def unflatten(treedef, leaves):
    if treedef is not None and treedef[0] is dict and not any(treedef[2]):
        return dict(zip(treedef[1], leaves))          # a flat dict, the usual parameters
    return _unflatten(treedef, iter(leaves))


def _unflatten(treedef, it):
    if treedef is None:
        return next(it)
    if treedef[0] is dict:
        return {k: _unflatten(sub, it) for k, sub in zip(treedef[1], treedef[2])}
    return treedef[0](_unflatten(sub, it) for sub in treedef[1])


def describe(treedef):
    """A short human-readable form of a structure, for error messages."""
    if treedef is None:
        return "*"
    if treedef[0] is dict:
        items = (f"{k!r}: {describe(s)}" for k, s in zip(treedef[1], treedef[2]))
        return "{" + ", ".join(items) + "}"
    inner = ", ".join(describe(s) for s in treedef[1])
    return f"({inner},)" if treedef[0] is tuple and len(treedef[1]) == 1 else (
        f"({inner})" if treedef[0] is tuple else f"[{inner}]")


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
    subs = treedef[1]
    if type(tree) is not kind or len(tree) != len(subs):
        return False
    for x, sub in zip(tree, subs):
        if not leaves_if_same(x, sub, out):
            return False
    return True


def args_leaves(args, treedefs):
    """The leaves of ``args``, argument after argument, if each has the structure in
    ``treedefs`` (one per argument), else None: the call plans' first check."""
    if len(args) != len(treedefs):
        return None
    leaves = []
    for a, treedef in zip(args, treedefs):
        if not leaves_if_same(a, treedef, leaves):
            return None
    return leaves
