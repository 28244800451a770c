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
    it = iter(leaves)
    out = _unflatten(treedef, it)
    return out


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
        return "{" + ", ".join(f"{k!r}: {describe(s)}" for k, s in zip(treedef[1], treedef[2])) + "}"
    inner = ", ".join(describe(s) for s in treedef[1])
    return f"({inner},)" if treedef[0] is tuple and len(treedef[1]) == 1 else (
        f"({inner})" if treedef[0] is tuple else f"[{inner}]")


def check_same(expected, got, what):
    if expected != got:
        raise PytreeError(
            f"{what}: pytree structure changed from {describe(expected)} to {describe(got)}. "
            "A Tape runs the structure it was traced with: trace again with bn.trace, or use "
            "bn.grad / bn.value_and_grad, which retrace for each new structure.")
