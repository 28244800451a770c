"""grad, value_and_grad and trace: trace once per input signature, then run the njit entry."""
import functools

import numpy as np

from ._errors import InputError, OutputError, ShapeError
from ._plan import DATA as _DATA, DIFF as _DIFF, STATIC as _STATIC, CallPlan
from ._pytree import check_same, describe, flatten, unflatten
from ._tape import Tape
from ._tracer import Builder, Var


def _norm_argnums(argnums):
    if isinstance(argnums, int):
        return (argnums,), True
    argnums = tuple(argnums)
    if not argnums or not all(isinstance(k, int) for k in argnums):
        raise InputError("argnums must be an int or a non-empty tuple of ints")
    return argnums, False


def _diff_leaf(x, where):
    """Signature of a differentiated leaf; rejects what cannot be differentiated."""
    t = type(x)
    if t is float:
        return float
    if t is np.ndarray and x.dtype.kind == "f":         # the common case, kept short
        return (x.shape, x.dtype)
    if isinstance(x, (np.ndarray, np.generic)):
        kind = x.dtype.kind
        if kind == "f":
            return (x.shape, x.dtype)
        what = {"i": "an integer", "u": "an unsigned integer", "b": "a boolean",
                "c": "a complex"}.get(kind, f"a {x.dtype}")
        raise InputError(
            f"{where} is {what} array of dtype {x.dtype}: gradients need float inputs. "
            f"Pass it as x.astype(float), or leave it out of argnums")
    if isinstance(x, bool) or isinstance(x, int):
        raise InputError(
            f"{where} is the Python int {x!r}: gradients need float inputs. Pass {float(x)!r} "
            "instead, or leave it out of argnums")
    if isinstance(x, complex):
        raise InputError(f"{where} is complex: burnumba differentiates real functions only")
    if isinstance(x, float):                      # float subclasses
        return float
    raise InputError(
        f"{where} has type {t.__name__}, which cannot be differentiated: pass floats, numpy "
        "float arrays, or tuples / lists / dicts of them")


def _other_leaf(x, where):
    """Signature of a non-differentiated leaf: numpy data is a tape input, the rest is static."""
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind not in "biuf":
            raise InputError(f"{where} has dtype {x.dtype}: only real numpy data can be traced")
        return _DATA, (x.shape, x.dtype)
    try:
        hash(x)
    except TypeError:
        raise InputError(
            f"{where} of type {type(x).__name__} is neither numpy data nor hashable: burnumba "
            "keys its trace cache on the values of non-array arguments") from None
    return _STATIC, (type(x), x)


class _Where:
    """'argument k (leaf j of {...})' for error messages, built only when one is raised."""

    __slots__ = ("k", "j", "treedef")

    def __init__(self, k, j, treedef):
        self.k, self.j, self.treedef = k, j, treedef

    def __str__(self):
        leaf = f" (leaf {self.j} of {describe(self.treedef)})" if self.treedef is not None else ""
        return f"argument {self.k}{leaf}"

    __format__ = lambda self, spec: format(str(self), spec)   # noqa: E731


class _Signature:
    """Walks the arguments once: the cache key, and the leaves in tape-input order."""

    __slots__ = ("key", "diff", "data", "treedefs", "kinds")

    def __init__(self, args, kwargs, argnums):
        key = []
        diff, data, treedefs, kinds = [], [], [], []
        nargs = len(args)
        for k in argnums:
            if not -nargs <= k < nargs:
                raise InputError(f"argnums names argument {k}, but the function got {nargs}")
        for k, a in enumerate(args):
            is_diff = k in argnums
            if type(a) is float and is_diff:           # the common scalar case, kept short
                key.append(float)
                diff.append(a)
                treedefs.append(None)
                kinds.append((_DIFF,))
                continue
            leaves, treedef = flatten(a)
            treedefs.append(treedef)
            sig, kind = [], []
            for j, x in enumerate(leaves):
                where = _Where(k, j, treedef)
                if is_diff:
                    sig.append(_diff_leaf(x, where))
                    diff.append(x)
                    kind.append(_DIFF)
                else:
                    lk, s = _other_leaf(x, where)
                    sig.append(s)
                    kind.append(lk)
                    if lk == _DATA:
                        data.append(x)
            key.append((treedef, tuple(sig)))
            kinds.append(tuple(kind))
        if kwargs:
            for name in sorted(kwargs):
                leaves, treedef = flatten(kwargs[name])
                sig = []
                for x in leaves:
                    lk, s = _other_leaf(x, f"keyword argument {name!r}")
                    sig.append(s)
                    if lk == _DATA:
                        data.append(x)
                key.append((name, treedef, tuple(sig)))
        self.key = tuple(key)
        self.diff = diff
        self.data = data
        self.treedefs = treedefs
        self.kinds = kinds


def _tape_dtype(leaves):
    """float32 when every float array among the inputs is float32, else float64.
    Python floats and integer data adapt to the tape (as JAX's weak types)."""
    kinds = {x.dtype for x in leaves
             if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f"}
    return np.float32 if kinds == {np.dtype(np.float32)} else np.float64


def _trace(f, args, kwargs, argnums, has_aux, sig, need_scalar, single=False):
    b = Builder(_tape_dtype(sig.diff + sig.data))
    in_slots = []

    def new_input(x, need):
        shape = np.shape(x)
        v = b.input(shape, need, getattr(x, "dtype", np.dtype(float)).kind)
        in_slots.append((b.off[v.node], v.size, shape, isinstance(x, float)
                         and not isinstance(x, np.floating)))
        return v

    diff_vars = iter([new_input(x, True) for x in sig.diff])
    data_vars = iter([new_input(x, False) for x in sig.data])
    traced_args = []
    for k, a in enumerate(args):
        leaves, treedef = flatten(a)
        kinds = sig.kinds[k]
        new = [next(diff_vars) if kd == _DIFF else next(data_vars) if kd == _DATA else x
               for kd, x in zip(kinds, leaves)]
        traced_args.append(unflatten(treedef, new))
    traced_kwargs = {}
    for name in sorted(kwargs):
        leaves, treedef = flatten(kwargs[name])
        new = [next(data_vars) if isinstance(x, (np.ndarray, np.generic)) else x for x in leaves]
        traced_kwargs[name] = unflatten(treedef, new)

    result = f(*traced_args, **traced_kwargs)
    if has_aux:
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise OutputError(
                "has_aux=True: the function must return a pair (output, aux), got "
                f"{type(result).__name__}")
        result, aux_tree = result
        aux_leaves, aux_def = flatten(aux_tree)
        aux_items = [(v.node, v.shape) if isinstance(v, Var) else ("const", v)
                     for v in aux_leaves]
        aux = (aux_def, aux_items)
    else:
        aux = None
    out = _as_output(b, result, need_scalar)
    out_node = out.node                    # a pending view becomes a node here
    b.live = False
    tape = Tape(b, sig.key, len(sig.diff), in_slots, out_node, out.shape, aux)
    tape.argnums = argnums
    tape.single = single
    return tape


def _as_output(b, result, need_scalar):
    if isinstance(result, Var):
        out = result
    elif isinstance(result, (float, int, np.floating, np.integer)) or (
            isinstance(result, np.ndarray) and result.dtype.kind in "biuf"):
        out = b.const(result)                     # a constant output: every gradient is 0
    else:
        raise OutputError(
            f"the traced function returned {type(result).__name__}; grad needs one scalar "
            "output (use has_aux=True to return more)")
    if need_scalar and out.shape != ():
        raise OutputError(
            f"grad needs a scalar output, but the function returned shape {out.shape}: reduce "
            "it first (bnp.sum, bnp.mean) or index one element")
    return out


def _structure(tape, flat, sig, argnums, single):
    """The flat gradient, split per leaf and rebuilt into the structure of each argnum."""
    leaves = tape.split_grads(flat)
    if len(argnums) == 1 and sig.treedefs[argnums[0]] is None:
        return leaves[0] if single else (leaves[0],)
    # leaves were collected in order of argument position, whatever the order of argnums
    by_position, pos = {}, 0
    for k in sorted(set(argnums)):
        n = len(sig.kinds[k])
        by_position[k] = unflatten(sig.treedefs[k], leaves[pos:pos + n])
        pos += n
    out = tuple(by_position[k] for k in argnums)
    return out[0] if single else out


def _explain_mismatch(tape, sig):
    """Raise the error that says how these arguments differ from the traced ones."""
    if len(sig.key) != len(tape.key):
        raise InputError(f"the tape was traced with {len(tape.key)} arguments, got "
                         f"{len(sig.key)}")
    for k, (old, new) in enumerate(zip(tape.key, sig.key)):
        if old == new:
            continue
        old_def = None if old is float else old[-2]
        new_def = None if new is float else new[-2]
        check_same(old_def, new_def, f"argument {k}")
        raise ShapeError(
            f"argument {k}: the tape was traced for shapes / dtypes / static values {old}, "
            f"got {new}. Trace again with bn.trace, or use bn.grad, which retraces")
    raise InputError("these arguments do not match the traced ones")


def run_tape(tape, args, kwargs, with_grad):
    """Tape.__call__ and Tape.value_and_grad: check the signature, then run."""
    sig = _Signature(args, kwargs, tape.argnums)
    if sig.key != tape.key:
        _explain_mismatch(tape, sig)
    leaves = sig.diff + sig.data
    if not with_grad:
        return tape.run_forward(leaves)
    if tape.out_shape != ():
        raise OutputError(f"value_and_grad needs a scalar output; this tape's output has shape "
                          f"{tape.out_shape}: use bn.vjp")
    value, flat = tape.run_value_and_grad(leaves)
    return value, _structure(tape, flat, sig, tape.argnums, tape.single)


class _Transformed:
    """The state behind what grad / value_and_grad return: a per-signature cache of tapes."""

    def __init__(self, f, argnums, has_aux, with_value):
        self.f = f
        self.argnums, self.single = _norm_argnums(argnums)
        self.has_aux = has_aux
        self.with_value = with_value
        self.tapes = {}
        self.fast = None           # (nargs, runner) once every argument is a traced float
        self.plan = None           # the CallPlan of the tape used last

    def function(self):
        """A plain closure (cheaper to call than an object's __call__) over this state."""
        state = self

        def transformed(*args, **kwargs):
            fast = state.fast
            if fast is not None and not kwargs and len(args) == fast[0]:
                for a in args:
                    if type(a) is not float:
                        break
                else:
                    return fast[1](args)
            plan = state.plan
            if plan is not None and not kwargs:
                leaves = plan.match(args)
                if leaves is not None:
                    return plan.run(leaves)
            return state.call(args, kwargs)

        functools.update_wrapper(transformed, self.f)
        transformed.tapes = self.tapes
        transformed.trace = self.trace
        return transformed

    def tape_for(self, args, kwargs):
        """(tape, signature, argnums) for these arguments, tracing on a cache miss."""
        argnums = self.argnums
        if min(argnums) < 0:
            argnums = tuple(k + len(args) if k < 0 else k for k in argnums)
        sig = _Signature(args, kwargs, argnums)
        tape = self.tapes.get(sig.key)
        if tape is None:
            tape = _trace(self.f, args, kwargs, argnums, self.has_aux, sig, True, self.single)
            self.tapes[sig.key] = tape
            if (not kwargs and not self.has_aux and sorted(argnums) == list(range(len(args)))
                    and all(type(a) is float for a in args)):
                self.fast = (len(args), tape.scalar_runner(argnums, self.with_value,
                                                           self.single))
        return tape, sig, argnums

    def call(self, args, kwargs):
        tape, sig, argnums = self.tape_for(args, kwargs)
        if not kwargs:
            if tape.plan is None:
                tape.plan = CallPlan(tape, sig, argnums, self.single, self.with_value,
                                     self.has_aux)
            self.plan = tape.plan
        value, flat = tape.run_value_and_grad(sig.diff + sig.data)
        grads = _structure(tape, flat, sig, argnums, self.single)
        if self.has_aux:
            aux = tape._aux_values()
            return ((value, aux), grads) if self.with_value else (grads, aux)
        return (value, grads) if self.with_value else grads

    def trace(self, *args, **kwargs):
        """The Tape this function runs for these arguments."""
        return self.tape_for(args, kwargs)[0]


def value_and_grad(f, argnums=0, has_aux=False):
    """Return a function computing ``(f(*args), grad)``, as ``jax.value_and_grad``.

    ``f`` is traced once per input signature (pytree structure, shapes, dtypes and the values
    of static non-array arguments); later calls only run the compiled tape.

    >>> import burnumba as bn, numpy as np
    >>> vg = bn.value_and_grad(lambda a, b: (a * b + np.tanh(a)) ** 2, argnums=(0, 1))
    >>> value, (da, db) = vg(0.5, -1.5)
    """
    return _Transformed(f, argnums, has_aux, True).function()


def grad(f, argnums=0, has_aux=False):
    """Return a function computing the gradient of scalar ``f``, as ``jax.grad``.

    >>> import burnumba as bn, numpy as np
    >>> bn.grad(lambda x: np.sum(np.sin(x) ** 2))(np.linspace(0.0, 1.0, 5)).shape
    (5,)
    """
    return _Transformed(f, argnums, has_aux, False).function()


def trace(f, *args, argnums=0, **kwargs):
    """Trace ``f`` on these arguments and return its ``Tape`` for inspection.

    >>> import burnumba as bn
    >>> print(bn.trace(lambda a, b: (a + b) * b, 1.0, 2.0, argnums=(0, 1)))  # doctest: +SKIP
    """
    argnums_t, single = _norm_argnums(argnums)
    sig = _Signature(args, kwargs, argnums_t)
    tape = _trace(f, args, kwargs, argnums_t, False, sig, False, single)
    tape.run_forward(sig.diff + sig.data)
    return tape


def vjp(f, *primals):
    """Return ``(f(*primals), vjp_fun)``, as ``jax.vjp``.

    ``vjp_fun(cotangent)`` returns the tuple of ``cotangent . df/dprimal`` for every primal,
    each shaped like its primal. The output may be any shape; the cotangent has its shape.

    >>> import burnumba as bn, numpy as np
    >>> y, pull = bn.vjp(lambda x: np.sin(x) * 2.0, np.array([0.1, 0.2]))
    >>> pull(np.ones(2)).__len__()
    1
    """
    argnums = tuple(range(len(primals)))
    sig = _Signature(primals, {}, argnums)
    tape = _trace(f, primals, {}, argnums, False, sig, False)
    leaves = sig.diff + sig.data
    value = tape.run_forward(leaves)
    out_shape = tape.out_shape

    def vjp_fun(cotangent):
        seed = np.asarray(cotangent, dtype=np.float64)
        if seed.shape != out_shape:
            raise ShapeError(f"vjp: the cotangent has shape {seed.shape}, but the output has "
                             f"shape {out_shape}")
        tape._write_in(leaves)
        tape.vjp(seed.reshape(-1))
        grads = tape.split_grads(tape.grad[:tape.n_diff_elems].copy())
        out, pos = [], 0
        for k in argnums:
            n = len(sig.kinds[k])
            out.append(unflatten(sig.treedefs[k], grads[pos:pos + n]))
            pos += n
        return tuple(out)

    return value, vjp_fun
