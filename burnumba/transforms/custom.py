"""Custom derivative rules: ``bn.custom_vjp``, ``bn.custom_jvp`` (JAX's decorators) and
``burnumba.extend.primitive`` with ``defvjp`` / ``defjvp`` (autograd's).

Called on traced values, a function with a rule runs its body (or, under ``custom_vjp``,
its ``fwd``) in the trace, which gives the forward value, and then copies its output into a
node of its own, the *output node*. The trace remembers the rule by that node
(``Builder.custom``), and the derivative sweeps written with traced ops (burnumba/derive)
call the rule there instead of the node's own derivative: the body is never differentiated
on the way from the output to the arguments (what its residuals feed still is, as in JAX).

One rule serves both directions. A vjp rule ``g -> cotangents`` is linear in ``g``, so the
jvp is its transpose: ``J t = d/dg <vjp(g), t>``, one backward sweep through the traced rule
from a placeholder ``g``. A jvp rule is transposed the same way (``J^T g = d/dt <J t, g>``).
So custom_vjp functions have forward mode too, where JAX refuses it.

The compiled kernel's own sweeps know nothing of a rule: a tape with a rule in it
(``tape.custom``) is only ever run forward, and every transformation of it computes its
derivative as traced ops in a second tape (``by_ops``), which is then run forward. That costs
one more trace per signature, and none per call.
"""
import functools
import math
import threading

import numpy as np

from .. import numpy as bnp
from .._errors import (ConcretizationError, InputError, OutputError, PytreeError, ShapeError,
                       at_user_site)
from ..derive.graph import builder_of, copy, var
from ..derive.sweeps import backward
from ..tracing.pytree import describe, flatten, unflatten
from ..tracing.tracer import Var
from .outputs import as_output


# -- the rule at an output node ------------------------------------------------------------------
def _zeros(b, shape):
    return b.const(np.zeros(shape)) if shape else b.const(0.0)


def _placeholder(b, shape):
    """A node of its own holding zeros: the variable a linear rule is transposed in."""
    return var(b, copy(_zeros(b, shape)))


class _Region:
    """One call of a function with a rule, in a trace: its arguments (``args``; the
    differentiated ones' Var leaves made nodes before the body ran), the output's structure
    and the rule's two directions (``vjp_rule``, ``jvp_rule``; either may be None: it is
    then the other one transposed)."""

    def __init__(self, name, args, diff, res, out_def, out_shapes, vjp_rule, jvp_rule,
                 missing=()):
        self.name, self.args, self.diff, self.res = name, args, diff, res
        self.out_def, self.out_shapes = out_def, out_shapes
        self.vjp_rule, self.jvp_rule = vjp_rule, jvp_rule
        self.missing = missing          # traced arguments without a rule (a primitive's)

    def _refuse_missing(self, wanted):
        """A derivative asked of an argument that has no rule: an error, never a zero."""
        for k in self.missing:
            if any(isinstance(x, Var) and wanted(x.node) for x in flatten(self.args[k])[0]):
                raise InputError(at_user_site(
                    f"{self.name}: argument {k} is differentiated, but the primitive has no "
                    f"rule for it: give one with defvjp / defjvp (argnums=({k},) ...)"))

    # the output node's value as the user's output pytree, and back
    def split(self, flat):
        if len(self.out_shapes) == 1:
            return unflatten(self.out_def, [bnp.reshape(flat, self.out_shapes[0])])
        leaves, pos = [], 0
        for shape in self.out_shapes:
            m = math.prod(shape)
            leaves.append(bnp.reshape(flat[pos:pos + m], shape))
            pos += m
        return unflatten(self.out_def, leaves)

    def joined(self, b, tree, what):
        """A tangent pytree of the output as the output node's shape (checked)."""
        leaves, treedef = flatten(tree)
        if treedef != self.out_def:
            raise PytreeError(at_user_site(
                f"{self.name}: {what} has the structure {describe(treedef)}, but the function's "
                f"output has {describe(self.out_def)}"))
        parts = []
        for j, (x, shape) in enumerate(zip(leaves, self.out_shapes)):
            x = _zeros(b, shape) if x is None else b.lift(x)
            if x.shape != tuple(shape):
                x = self._broadcast(x, shape, f"{what} (leaf {j})", "output")
            parts.append(x)
        if len(parts) == 1:
            return parts[0]
        return bnp.concatenate([bnp.reshape(x, (-1,)) for x in parts])

    def _broadcast(self, x, shape, what, of):
        """A scalar rule result for a shaped value is broadcast; any other shape is an
        error that names the rule and both shapes."""
        if x.shape == ():
            return bnp.broadcast_to(x, shape)
        raise ShapeError(at_user_site(
            f"{self.name}: {what} has shape {x.shape}, but its {of} has shape {tuple(shape)}: "
            "a derivative rule returns values of its primal's shape"))

    def operand_leaves(self):
        """[(position, leaf index, Var leaf)] of the differentiated arguments' traced leaves."""
        out = []
        for k in self.diff:
            for j, x in enumerate(flatten(self.args[k])[0]):
                if isinstance(x, Var):
                    out.append((k, j, x))
        return out

    # the two directions, as derive's sweeps call them at the output node
    def vjp(self, b, i, g, need=None):
        if need is not None:
            self._refuse_missing(need)
        if self.vjp_rule is None:
            return self._vjp_by_transposing(b, g)
        cts = self.vjp_rule(self.args, self.res, self.split(g))
        return self._cotangents(b, cts)

    def jvp(self, b, i, tangent):
        self._refuse_missing(lambda node: tangent(node) is not None)
        if self.jvp_rule is None:
            return self._jvp_by_transposing(b, i, tangent)
        tangents = {}
        for k, j, x in self.operand_leaves():
            t = tangent(x.node)
            if t is not None:
                tangents[(k, j)] = t
        return self.joined(b, self.jvp_rule(self.args, self._tangent_args(b, tangents)),
                           "the jvp rule's output tangent")

    def _tangent_args(self, b, tangents):
        """Per differentiated argument, its tangent pytree: the given traced tangents, zeros
        elsewhere."""
        out = []
        for k in self.diff:
            leaves, treedef = flatten(self.args[k])
            out.append(unflatten(treedef, [tangents.get((k, j)) if (k, j) in tangents
                                           else _zeros(b, np.shape(x) if not isinstance(x, Var)
                                                       else x.shape)
                                           for j, x in enumerate(leaves)]))
        return tuple(out)

    def _cotangents(self, b, cts):
        """[(operand node, cotangent)] from a vjp rule's result, checked: one entry per
        differentiated argument, each of its argument's structure and shapes (None: zero)."""
        if not isinstance(cts, (tuple, list)) or len(cts) != len(self.diff):
            got = (f"a {type(cts).__name__} of length {len(cts)}"
                   if isinstance(cts, (tuple, list)) else f"a {type(cts).__name__}")
            raise OutputError(at_user_site(
                f"{self.name}: the vjp rule must return a tuple with one cotangent per "
                f"differentiated argument ({len(self.diff)}), got {got}"))
        out = []
        for k, ct in zip(self.diff, cts):
            if ct is None:
                continue
            leaves, treedef = flatten(self.args[k])
            ct_leaves, ct_def = flatten(ct)
            if ct_def != treedef:
                raise PytreeError(at_user_site(
                    f"{self.name}: the vjp rule's cotangent for argument {k} has the structure "
                    f"{describe(ct_def)}, the argument {describe(treedef)}"))
            for j, (x, c) in enumerate(zip(leaves, ct_leaves)):
                if not isinstance(x, Var) or c is None:
                    continue
                c = b.lift(c)
                if c.shape != x.shape:
                    c = self._broadcast(c, x.shape, f"the vjp rule's cotangent for argument "
                                        f"{k}" + (f" (leaf {j})" if treedef else ""),
                                        "argument")
                out.append((x.node, c))
        return out

    def _jvp_by_transposing(self, b, i, tangent):
        """J t from the vjp rule: the gradient in g of <vjp(g), t>, g a placeholder."""
        g = _placeholder(b, b.shapes[i])
        seeds = {}
        for node, c in self.vjp(b, i, g):
            t = tangent(node)
            if t is None:
                continue
            t = b.lift(t)
            t = t if t.shape == c.shape else bnp.broadcast_to(t, c.shape)
            if isinstance(c, Var) and c._b is b and c.node == g.node:
                seeds[g.node] = t if g.node not in seeds else seeds[g.node] + t
                continue
            seeds[c.node] = t if c.node not in seeds else seeds[c.node] + t
        if not seeds:
            return _zeros(b, b.shapes[i])
        jt = backward(b, g.node, seeds, {g.node})[g.node]
        return _zeros(b, b.shapes[i]) if jt is None else jt

    def _vjp_by_transposing(self, b, g):
        """J^T g from the jvp rule: the gradient in t of <jvp(t), g>, t placeholders."""
        leaves = self.operand_leaves()
        if not leaves:
            return []
        holders = {(k, j): _placeholder(b, x.shape) for k, j, x in leaves}
        start = holders[(leaves[0][0], leaves[0][1])].node
        ty = self.joined(b, self.jvp_rule(self.args, self._tangent_args(b, holders)),
                         "the jvp rule's output tangent")
        cts = backward(b, start, {ty.node: g}, {h.node for h in holders.values()})
        return [(x.node, cts[holders[(k, j)].node]) for k, j, x in leaves
                if cts[holders[(k, j)].node] is not None]


def _traced_call(name, f, args, diff, forward, vjp_rule, jvp_rule, missing=()):
    """Run a function with a rule on traced arguments: ``forward(args)`` gives ``(output,
    residuals)``; the output is copied into the output node, which the rule is kept for."""
    b = builder_of([x for a in args for x in flatten(a)[0]])
    for k in diff:                           # operands are nodes before the body runs
        for x in flatten(args[k])[0]:
            if isinstance(x, Var):
                x.node
    out, res = forward(args)
    leaves, out_def = flatten(out)
    if not leaves:
        raise OutputError(at_user_site(f"{name}: the function returned no array"))
    leaves = [b.lift(x) for x in leaves]
    shapes = [x.shape for x in leaves]
    flat = leaves[0] if len(leaves) == 1 else bnp.concatenate(
        [bnp.reshape(x, (-1,)) for x in leaves])
    node = copy(flat)
    region = _Region(name, args, diff, res, out_def, shapes, vjp_rule, jvp_rule, missing)
    b.custom[node] = region
    return region.split(var(b, node))


def _is_traced(args, kwargs):
    return any(isinstance(x, Var) for a in (*args, *kwargs.values()) for x in flatten(a)[0])


def _name(f):
    return getattr(f, "__qualname__", getattr(f, "__name__", "f"))


def _norm_nondiff(nondiff_argnums):
    nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else tuple(nondiff_argnums)
    if not all(isinstance(k, int) and k >= 0 for k in nums):
        raise InputError("nondiff_argnums must be a tuple of non-negative ints")
    return nums


class _Decorated:
    """What both decorators return: f, callable as before, with a rule to define."""

    def __init__(self, f, nondiff_argnums):
        self._custom_fun = f
        self._custom_nondiff = _norm_nondiff(nondiff_argnums)
        functools.update_wrapper(self, f)

    def _split(self, args):
        for k in self._custom_nondiff:
            if k >= len(args):
                raise InputError(at_user_site(
                    f"{_name(self._custom_fun)}: nondiff_argnums names argument {k}, but the "
                    "function "
                    f"got {len(args)}"))
        nondiff = tuple(args[k] for k in self._custom_nondiff)
        for x in (leaf for a in nondiff for leaf in flatten(a)[0]):
            if isinstance(x, Var):
                raise InputError(at_user_site(
                    f"{_name(self._custom_fun)}: an argument named in nondiff_argnums is a "
                    "traced value; "
                    "nondiff_argnums are for static values (functions, ints, flags): pass a "
                    "traced value as a differentiated argument"))
        return nondiff, tuple(k for k in range(len(args)) if k not in self._custom_nondiff)

    def __get__(self, obj, objtype=None):            # decorated methods bind as functions
        return self if obj is None else functools.partial(self, obj)


class custom_vjp(_Decorated):
    """A function with its own reverse-mode rule, as ``jax.custom_vjp``.

    ``f.defvjp(fwd, bwd)``: ``fwd(*args)`` returns ``(output, residuals)`` and
    ``bwd(*nondiff_args, residuals, g)`` returns a tuple with one cotangent per argument not
    named in ``nondiff_argnums`` (each of its argument's structure and shapes, or None for
    zero). Under a transformation the forward value is ``fwd``'s output, and every
    derivative of the output with respect to the arguments comes from ``bwd``: gradients,
    vjp, Jacobians, Hessians (the rule's residuals are differentiated as usual), and
    forward mode too (jvp), by transposing ``bwd``, which must be linear in ``g``. Called
    on plain numbers, ``f`` runs as it is.

    >>> import burnumba as bn, numpy as np
    >>> @bn.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1.0, 1.0),))
    >>> bn.grad(lambda x: 3.0 * clip_gradient(x))(2.0)
    1.0
    """

    def __init__(self, f, nondiff_argnums=()):
        super().__init__(f, nondiff_argnums)
        self._custom_fwd = self._custom_bwd = None
        # fwd may call f itself (JAX's idiom ``return f(x), res``): there, f is its body
        self._custom_in_fwd = threading.local()

    def defvjp(self, fwd, bwd):
        """Give the rule: ``fwd(*args) -> (output, residuals)``,
        ``bwd(*nondiff_args, residuals, g) -> tuple of cotangents``."""
        self._custom_fwd, self._custom_bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if not _is_traced(args, kwargs) or getattr(self._custom_in_fwd, "on", False):
            return self._custom_fun(*args, **kwargs)
        if kwargs:
            self._refuse_kwargs()
        if self._custom_fwd is None:
            raise InputError(at_user_site(
                f"{_name(self._custom_fun)}: a custom_vjp function without its rule: call "
                f"{_name(self._custom_fun)}.defvjp(fwd, bwd) first"))
        nondiff, diff = self._split(args)
        fwd, bwd = self._custom_fwd, self._custom_bwd
        name = f"custom_vjp rule of {_name(self._custom_fun)}"

        def forward(a):
            self._custom_in_fwd.on = True
            try:
                pair = fwd(*a)
            finally:
                self._custom_in_fwd.on = False
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise OutputError(at_user_site(
                    f"{name}: fwd must return a pair (output, residuals), got "
                    f"{type(pair).__name__}"))
            return pair[0], pair[1]

        return _traced_call(name, self._custom_fun, args, diff, forward,
                            lambda a, res, g: bwd(*nondiff, res, g), None)

    def _refuse_kwargs(self):
        raise InputError(at_user_site(
            f"{_name(self._custom_fun)}: a custom_vjp function takes its arguments by position "
            "under "
            "a transformation (as in JAX): pass them positionally"))


class custom_jvp(_Decorated):
    """A function with its own forward-mode rule, as ``jax.custom_jvp``.

    ``f.defjvp(jvp)``: ``jvp(*nondiff_args, primals, tangents)`` returns ``(output,
    output_tangent)``, ``primals`` and ``tangents`` being tuples of the arguments not named
    in ``nondiff_argnums``; the output tangent must be linear in ``tangents``. The forward
    value is ``f``'s; derivatives of the output with respect to the arguments come from the
    rule: jvp, Jacobians and Hessians, and reverse mode (grad, vjp) by transposing it.

    >>> import burnumba as bn, numpy as np
    >>> @bn.custom_jvp
    ... def log1pexp(x):
    ...     return np.log1p(np.exp(x))
    >>> log1pexp.defjvp(lambda p, t: (log1pexp(p[0]), t[0] / (1.0 + np.exp(-p[0]))))
    >>> bn.grad(log1pexp)(800.0)         # autodiff of the body gives nan here
    1.0
    """

    def __init__(self, f, nondiff_argnums=()):
        super().__init__(f, nondiff_argnums)
        self._custom_rule = None

    def defjvp(self, jvp):
        """Give the rule: ``jvp(*nondiff_args, primals, tangents) -> (output, tangent)``."""
        self._custom_rule = jvp

    def defjvps(self, *jvps):
        """One rule per argument, as ``jax.custom_jvp.defjvps``: ``jvp_k(t_k, output,
        *primals)`` gives argument k's contribution to the output tangent (None: none)."""
        def rule(*a):
            primals, tangents = a[-2], a[-1]
            out = self._custom_fun(*a[:-2], *primals)
            total = None
            for fn, t in zip(jvps, tangents):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                total = term if total is None else total + term
            return out, total
        self._custom_rule = rule

    def __call__(self, *args, **kwargs):
        if not _is_traced(args, kwargs):
            return self._custom_fun(*args, **kwargs)
        if kwargs:
            raise InputError(at_user_site(
                f"{_name(self._custom_fun)}: a custom_jvp function takes its arguments by "
                "position under "
                "a transformation (as in JAX): pass them positionally"))
        if self._custom_rule is None:
            raise InputError(at_user_site(
                f"{_name(self._custom_fun)}: a custom_jvp function without its rule: call "
                f"{_name(self._custom_fun)}.defjvp(jvp) first"))
        nondiff, diff = self._split(args)
        f, rule = self._custom_fun, self._custom_rule
        name = f"custom_jvp rule of {_name(self._custom_fun)}"

        def jvp_rule(a, tangents):
            pair = rule(*nondiff, tuple(a[k] for k in diff), tangents)
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise OutputError(at_user_site(
                    f"{name}: the rule must return a pair (output, output tangent), got "
                    f"{type(pair).__name__}"))
            return pair[1]

        return _traced_call(name, f, args, diff, lambda a: (f(*a), None), None, jvp_rule)


# -- autograd's extend: primitive, defvjp, defjvp ------------------------------------------------
class primitive(_Decorated):
    """A function whose derivatives are given by rules, as ``autograd.extend.primitive``:
    ``defvjp(f, vjp_maker_0, vjp_maker_1, ...)`` and ``defjvp(f, jvp_0, ...)`` then give them
    argument by argument. The body must be traceable (burnumba.numpy or numpy on traced
    values): it gives the forward value, and the rules replace its differentiation.
    """

    def __init__(self, f):
        super().__init__(f, ())
        self._custom_vjps = self._custom_jvps = None

    def _by_argnum(self, rules, nargs, what):
        """The rules per argument: a dict, or one ``defvjp_argnum`` / ``defjvp_argnum`` maker
        asked for each of the call's ``nargs`` arguments (autograd's argnum forms)."""
        if not callable(rules):
            return rules or {}
        if what == "vjp":
            return {k: functools.partial(lambda k, ans, *a, **kw: rules(k, ans, a, kw), k)
                    for k in range(nargs)}
        return {k: functools.partial(lambda k, g, ans, *a, **kw: rules(k, g, ans, a, kw), k)
                for k in range(nargs)}

    def __call__(self, *args, **kwargs):
        if not _is_traced(args, kwargs):
            return self._custom_fun(*args, **kwargs)
        if self._custom_vjps is None and self._custom_jvps is None:
            raise InputError(at_user_site(
                f"{_name(self._custom_fun)}: a primitive without derivative rules: give them with "
                f"burnumba.extend.defvjp({_name(self._custom_fun)}, ...) or defjvp"))
        f, name = self._custom_fun, f"primitive {_name(self._custom_fun)}"
        vjps = self._by_argnum(self._custom_vjps, len(args), "vjp")
        jvps = self._by_argnum(self._custom_jvps, len(args), "jvp")
        diff = tuple(k for k in range(len(args))                # the arguments with a rule
                     if vjps.get(k) is not None or jvps.get(k) is not None)
        missing = tuple(k for k in range(len(args)) if k not in diff
                        and any(isinstance(x, Var) for x in flatten(args[k])[0]))
        # a direction's rules are used when they cover every such argument; the other
        # direction is then their transpose
        by_vjp = all(vjps.get(k) is not None for k in diff)
        by_jvp = all(jvps.get(k) is not None for k in diff)
        if not (by_vjp or by_jvp):
            raise InputError(at_user_site(
                f"{name}: its defvjp rules cover arguments {sorted(vjps)} and its defjvp "
                f"rules {sorted(jvps)}: give one kind of rule for every differentiated "
                "argument"))
        box = {}

        def forward(a):
            try:
                return f(*a, **kwargs), None
            except ConcretizationError as err:     # autograd would have run it on plain values
                raise ConcretizationError(
                    f"{name}: the body of a primitive is traced here (autograd runs it on plain "
                    "values), so it cannot turn its arguments into Python numbers or call "
                    "scipy on them: write the body with numpy on the traced values, or as a "
                    "@numba.njit function made an op with bn.njit_op(fwd, vjp=...). "
                    + str(err)) from err

        def vjp_rule(a, res, g):
            return tuple(vjps[k](box["ans"], *a, **kwargs)(g) for k in diff)

        def jvp_rule(a, tangents):
            total = None
            for k, t in zip(diff, tangents):
                term = jvps[k](t, box["ans"], *a, **kwargs)
                if term is not None:                    # None: a zero rule's
                    total = term if total is None else total + term
            if total is None:
                leaves, treedef = flatten(box["ans"])
                return unflatten(treedef, [np.zeros(x.shape if isinstance(x, Var)
                                                    else np.shape(x)) for x in leaves])
            return total

        out = _traced_call(name, f, args, diff, forward, vjp_rule if by_vjp else None,
                           jvp_rule if by_jvp else None, missing)
        box["ans"] = out
        return out


def _primitive(f, what):
    if not isinstance(f, primitive):
        raise InputError(at_user_site(
            f"{what}: {_name(f)} is not a primitive: decorate it with "
            "@burnumba.extend.primitive first"))


def _zero_vjp(ans, *args, **kwargs):
    return lambda g: None                   # a None cotangent is a zero one


def _zero_jvp(g, ans, *args, **kwargs):
    return None


def _same_jvp(f, k):
    """autograd's "same": the function is linear in argument k, its tangent is f at g."""
    return lambda g, ans, *a, **kw: f._custom_fun(*a[:k], g, *a[k + 1:], **kw)


def _rules(f, makers, argnums, what):
    _primitive(f, what)
    argnums = tuple(range(len(makers))) if argnums is None else tuple(argnums)
    if len(argnums) != len(makers):
        raise InputError(at_user_site(
            f"{what}({_name(f._custom_fun)}, ...): {len(makers)} rules for argnums {argnums}"))
    # as autograd's translate_vjp / translate_jvp: None is a zero derivative, "same" (jvp)
    # the function itself applied to the tangent
    zero = _zero_vjp if what == "defvjp" else _zero_jvp
    rules = {}
    for k, m in zip(argnums, makers):
        if m is None:
            m = zero
        elif isinstance(m, str) and m == "same" and what == "defjvp":
            m = _same_jvp(f, k)
        elif not callable(m):
            raise InputError(at_user_site(
                f"{what}({_name(f._custom_fun)}, ...): the rule for argument {k} is {m!r}: give "
                "a function, None (a zero derivative)" + (' or "same"' if what == "defjvp"
                                                         else "")))
        rules[k] = m
    return rules


def defvjp(f, *vjpmakers, argnums=None):
    """Reverse-mode rules of a primitive, one per argument, as autograd's:
    ``vjpmaker(ans, *args, **kwargs)`` returns ``g -> cotangent of that argument``.

    >>> from burnumba.extend import primitive, defvjp
    >>> import numpy as np
    >>> @primitive
    ... def logsumexp(x):
    ...     m = np.max(x)
    ...     return m + np.log(np.sum(np.exp(x - m)))
    >>> defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    """
    f._custom_vjps = _rules(f, vjpmakers, argnums, "defvjp")


def defjvp(f, *jvpfuns, argnums=None):
    """Forward-mode rules of a primitive, one per argument, as autograd's:
    ``jvpfun(g, ans, *args, **kwargs)`` is that argument's tangent ``g`` pushed to the
    output (linear in ``g``); None is a zero derivative, ``"same"`` the function itself (it
    is linear in that argument)."""
    f._custom_jvps = _rules(f, jvpfuns, argnums, "defjvp")


def defvjp_argnum(f, vjpmaker):
    """One reverse-mode rule for every argument, as autograd's:
    ``vjpmaker(argnum, ans, args, kwargs)`` returns ``g -> cotangent of args[argnum]``."""
    _primitive(f, "defvjp_argnum")
    f._custom_vjps = vjpmaker


def defjvp_argnum(f, jvpmaker):
    """One forward-mode rule for every argument, as autograd's:
    ``jvpmaker(argnum, g, ans, args, kwargs)`` is the tangent ``g`` of ``args[argnum]``
    pushed to the output."""
    _primitive(f, "defjvp_argnum")
    f._custom_jvps = jvpmaker


def def_linear(f):
    """A primitive linear in each argument (autograd's ``def_linear``): the tangent of
    argument k is the function with g in place of that argument.

    >>> from burnumba.extend import primitive, def_linear
    >>> @primitive
    ... def scale(a, x):
    ...     return a * x
    >>> def_linear(scale)
    """
    defjvp_argnum(f, lambda k, g, ans, args, kwargs: f._custom_fun(*args[:k], g, *args[k + 1:],
                                                                   **kwargs))


# -- a tape with rules in it: its derivatives as traced ops --------------------------------------
def value_and_grads(f, argnums, has_aux):
    """The function that a tape with rules differentiates instead of f: traced with the
    same signature as f's tape, it returns one vector, the value then every differentiated
    leaf's gradient in tape-input order (and aux), computed by the traced backward sweep."""
    def traced(*args, **kwargs):
        order = sorted({k + len(args) if k < 0 else k for k in argnums})
        wrt = [x for k in order for x in flatten(args[k])[0]]
        b = builder_of(wrt + [x for a in (*args, *kwargs.values()) for x in flatten(a)[0]])
        result = f(*args, **kwargs)
        aux = None
        if has_aux:
            result, aux = result
        out = as_output(b, result, True)
        nodes = [x.node for x in wrt]
        cts = backward(b, 0, {out.node: b.const(1.0)}, set(nodes))
        grads = [bnp.reshape(cts[n] if cts[n] is not None else _zeros(b, b.shapes[n]), (-1,))
                 for n in nodes]
        flat = bnp.concatenate([bnp.reshape(out, (1,))] + grads)
        return (flat, aux) if has_aux else flat
    return traced
