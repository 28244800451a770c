"""Transformations on traced values: what lets them compose (``bn.grad(bn.grad(f))``).

A transformation called on concrete numbers traces its function and runs the compiled
kernel. Called on traced values (inside another transformation's trace), it cannot run
anything yet: it runs the function on those values, which appends its nodes to the same
trace, and then appends the derivative of those nodes, node by node, as more traced ops
(burnumba/derive). The outer transformation then compiles and differentiates the whole,
derivative included, so they nest to any depth and every result is exact.

Each argument a transformation differentiates is first copied into a node of its own, so a
value that the function also reaches through a closure is not mistaken for the argument
(JAX's "perturbation confusion").
"""
import math

import numpy as np

from .. import numpy as bnp
from .._errors import OutputError, ShapeError, at_user_site
from ..derive.batched import formed, forward_batched
from ..derive.graph import copy, var
from ..derive.sweeps import backward, forward
from ..tracing.pytree import flatten, unflatten
from .outputs import as_output


# -- transformations on traced values ------------------------------------------------------------
def _substitute(b, args, argnums):
    """The arguments with each leaf of the differentiated ones replaced by a copy node, and
    those copies in order (with their argument's pytree layout for the results)."""
    new, copies, layout = list(args), [], []
    # the derivative sweeps (derive/) see a trace's nodes, not a loop's steps: from here on,
    # bn.fori_loop / scan / while_loop in this trace are unrolled
    b.loops_ok = False
    for k in argnums:
        leaves, treedef = flatten(args[k])
        fresh = []
        for x in leaves:
            v = b.lift(x)
            node = copy(v)
            copies.append(node)
            fresh.append(var(b, node))
        new[k] = unflatten(treedef, fresh)
        layout.append((treedef, len(leaves)))
    return new, copies, layout


def into_layout(values, layout, single):
    """Per-copy results put back into the differentiated arguments' structures (``layout``
    from ``_substitute``); one argument's alone when ``single``."""
    out, pos = [], 0
    for treedef, n in layout:
        out.append(unflatten(treedef, values[pos:pos + n]))
        pos += n
    return out[0] if single else tuple(out)


def _zeros_like(b, node):
    shape = b.shapes[node]
    return b.const(np.zeros(shape)) if shape else b.const(0.0)


def value_and_grad(b, f, args, kwargs, argnums, single, has_aux, with_value):
    """grad / value_and_grad of f at traced arguments, emitted into their trace."""
    start = b.n
    new, copies, layout = _substitute(b, args, argnums)
    result = f(*new, **kwargs)
    aux = None
    if has_aux:
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise OutputError("has_aux=True: the function must return a pair (output, aux)")
        result, aux = result
    out = as_output(b, result, True)
    cts = backward(b, start, {out.node: b.const(1.0)}, set(copies))
    grads = into_layout([cts[c] if cts[c] is not None else _zeros_like(b, c) for c in copies],
                     layout, single)
    if has_aux:
        return ((out, aux), grads) if with_value else (grads, aux)
    return (out, grads) if with_value else grads


def vjp(b, f, primals):
    """(f(*primals), vjp_fun) at traced primals; vjp_fun emits the backward when called."""
    start = b.n
    new, copies, layout = _substitute(b, primals, tuple(range(len(primals))))
    out = b.lift(f(*new))
    out_node = out.node

    def vjp_fun(cotangent):
        ct = b.lift(cotangent)
        if ct.shape != out.shape:
            raise ShapeError(at_user_site(f"vjp: the cotangent has shape {ct.shape}, but the "
                                          f"output has shape {out.shape}"))
        cts = backward(b, start, {out_node: ct}, set(copies))
        return tuple(into_layout([cts[c] if cts[c] is not None else _zeros_like(b, c)
                               for c in copies], layout, False))
    return out, vjp_fun


def jvp(b, f, primals, tangents):
    """(f(*primals), J tangents) at traced primals, emitted into their trace."""
    start = b.n
    new, copies, _ = _substitute(b, primals, tuple(range(len(primals))))
    seeds = {}
    flat = [leaf for t in tangents for leaf in flatten(t)[0]]
    for node, t in zip(copies, flat):
        seeds[node] = b.lift(t)
    out = b.lift(f(*new))
    out_node = out.node           # a pending view (x.T, a reshape) becomes a node first
    t = forward(b, start, seeds)
    ty = t.get(out_node)
    ty = ty if ty is not None else _zeros_like(b, out_node)
    return out, (ty if ty.shape == out.shape else bnp.reshape(ty, out.shape))


def jacobian_matrix(b, f, args, argnums, how):
    """The Jacobian of f at traced arguments as one (m, n) matrix (output elements by
    differentiated input elements), emitted into the trace: every input direction pushed
    forward at once (fwd), or one backward per output element (rev). Also returns the
    output's shape, the differentiated leaves' shapes and their pytree layout."""
    start = b.n
    new, copies, layout = _substitute(b, args, argnums)
    out = b.lift(f(*new))
    out_node = out.node           # a pending view becomes a node before the sweeps
    m = math.prod(out.shape)
    sizes = [math.prod(b.shapes[c]) for c in copies]
    n = sum(sizes)
    if how == "fwd" or (how == "auto" and n <= m):
        # copy c's seed is rows pos .. pos + size of the identity
        seeds, pos = {}, 0
        for c, size in zip(copies, sizes):
            e = np.zeros((n, size))
            e[pos:pos + size] = np.eye(size)
            seeds[c] = b.const(e.reshape((n,) + b.shapes[c]))
            pos += size
        t = forward_batched(b, start, seeds, n, set(copies) if len(copies) == 1 else ())
        ty = formed(b, t, out_node)
        cols = bnp.reshape(ty, (n, m)) if ty is not None else b.const(np.zeros((n, m)))
        J = bnp.transpose(cols, (1, 0))
    else:
        rows = []
        for r in range(m):
            e = np.zeros(m)
            e[r] = 1.0
            seed = b.const(e.reshape(out.shape)) if out.shape else b.const(1.0)
            cts = backward(b, start, {out_node: seed}, set(copies))
            parts = [bnp.reshape(cts[c] if cts[c] is not None else _zeros_like(b, c), (-1,))
                     for c in copies]
            rows.append(bnp.concatenate(parts) if len(parts) > 1 else parts[0])
        J = bnp.stack(rows)
    return J, out.shape, [b.shapes[c] for c in copies], layout
