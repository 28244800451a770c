"""Sparse Jacobians and Hessians: pattern from the tape, colouring, one compressed run.

``bn.sparse_jacobian(f)(x)`` returns ``scipy.sparse.csr_matrix`` J (output elements by the
differentiated input elements, flattened in argument order), equal to ``bn.jacobian`` at its
nonzeros. Per input signature, once:

1. f's tape gives the pattern (``derive/sparsity.py``): a superset of J's nonzeros;
2. the columns (forward) or rows (reverse) are coloured so that one colour's nonzeros never
   meet in a row (column) (``transforms/colouring.py``); the mode needing fewer colours wins;
3. a second tape is traced: f, followed by its derivative pushed along every colour's seed at
   once (forward: one batched tangent sweep of ``J S``; reverse: one backward sweep per
   colour, ``W^T J``), all traced ops.

Each call then runs that tape's forward sweep once (no Python per colour) and reads the
nonzeros out of the compressed matrix with one precomputed index. ``bn.sparse_hessian(f)``
is the same applied to ``grad f`` (forward over reverse), with the Hessian's pattern from
the nonlinear interactions on f's tape, and a star colouring with symmetric recovery where it
needs fewer colours than colouring the columns directly.
"""
import functools
import math
import weakref

import numpy as np

from .. import numpy as bnp
from .._errors import InputError, NestedTrace, nested_unsupported
from ..derive.batched import formed, forward_batched
from ..derive.graph import builder_of
from ..derive.sweeps import backward
from ..tracing.pytree import flatten
from .core import TapeCache, _trace

# derive/sparsity.py and transforms/colouring.py use scipy.sparse (about 0.1 s to import):
# they are imported by the first call that needs them, so that `import burnumba` does not
# pay for it (a local import pointing down, as kernels/engine's of numba)
from . import nested


def _flat(b, parts):
    parts = [bnp.reshape(b.lift(p), (-1,)) for p in parts]
    return bnp.concatenate(parts) if len(parts) > 1 else parts[0]


def _traced_body(f, args, argnums):
    """f run in the trace of its traced ``args``, the differentiated leaves copied first (as
    every nested transformation does): (builder, first new node, copies, output)."""
    b = builder_of([x for a in args for x in flatten(a)[0]])
    start = b.n
    new, copies, _ = nested._substitute(b, args, argnums)
    out = b.lift(f(*new))
    out.node                         # a pending view becomes a node before the sweeps
    return b, start, copies, out


def _seeded_forward(f, argnums, seeds):
    """A function of f's arguments returning (colours x outputs): J S, every colour's seed
    pushed forward at once. ``seeds``: (colours x n) float array (the rows of S^T)."""
    p = seeds.shape[0]

    def compressed(*args):
        b, start, copies, out = _traced_body(f, args, argnums)
        t, pos = {}, 0
        for c in copies:
            shape = b.shapes[c]
            size = math.prod(shape)
            t[c] = b.const(np.ascontiguousarray(seeds[:, pos:pos + size]).reshape((p,) + shape))
            pos += size
        tangents = forward_batched(b, start, t, p)
        ty = formed(b, tangents, out.node)
        m = math.prod(out.shape)
        if ty is None:
            return b.const(np.zeros((p, m)))
        return bnp.reshape(ty, (p, m))
    return compressed


def _seeded_backward(f, argnums, seeds, out_shape):
    """A function of f's arguments returning (colours x n): W^T J, one backward sweep per
    colour. ``seeds``: (colours x outputs)."""
    def compressed(*args):
        b, start, copies, out = _traced_body(f, args, argnums)
        rows = []
        for w in seeds:
            seed = b.const(w.reshape(out_shape)) if out_shape else b.const(float(w[0]))
            cts = backward(b, start, {out.node: seed}, set(copies))
            rows.append(_flat(b, [cts[c] if cts[c] is not None else nested._zeros_like(b, c)
                                  for c in copies]))
        return bnp.stack(rows)
    return compressed


def _gradient_of(f, argnums):
    """grad f as one flat traced vector (for the Hessian's forward-over-reverse)."""
    def g(*args):
        b = builder_of([x for a in args for x in flatten(a)[0]])
        grads = nested.value_and_grad(b, f, args, {}, argnums, False, False, False)
        return _flat(b, [leaf for tree in grads for leaf in flatten(tree)[0]])
    return g


class _Plan:
    """What one signature's calls reuse: the pattern, the colouring, the compressed tape and
    the flat index of each nonzero into the compressed matrix."""

    __slots__ = ("pattern", "colours", "mode", "tape", "take", "__weakref__")

    def __init__(self, pattern, colours, mode, tape, take):
        self.pattern, self.colours, self.mode, self.tape, self.take = \
            pattern, colours, mode, tape, take

    def matrix(self, leaves):
        import scipy.sparse as sp
        compressed = self.tape.run_forward(leaves)
        data = np.asarray(compressed).reshape(-1)[self.take]
        p = self.pattern
        return sp.csr_matrix((data, p.indices, p.indptr), shape=p.shape)


def _recovery(pattern, colours, mode, n_cols):
    """Flat indices into the compressed matrix, one per nonzero of ``pattern`` (CSR order)."""
    p = pattern
    rows = np.repeat(np.arange(p.shape[0]), np.diff(p.indptr))
    cols = p.indices
    m, n = p.shape
    if mode == "fwd":                 # (colours x m): J[i, j] = C[colour[j], i]
        return colours[cols] * m + rows
    return colours[rows] * n + cols   # (colours x n): J[i, j] = C[colour[i], j]


def _seeds(colours, count, size):
    s = np.zeros((count, size))
    s[colours, np.arange(size)] = 1.0
    return s


class _Sparse(TapeCache):
    """The tapes of f (for the patterns) and, per tape, its _Plan."""

    def __init__(self, f, argnums, mode, hessian):
        super().__init__(f, argnums, need_scalar=hessian)
        if mode not in ("auto", "fwd", "rev"):
            raise InputError(f"sparse_jacobian: mode must be 'auto', 'fwd' or 'rev', got "
                             f"{mode!r}")
        self.mode = mode
        self.hessian = hessian
        self.plans = weakref.WeakKeyDictionary()

    def plan(self, tape, sig, args, kwargs, argnums):
        from ..derive.sparsity import hessian_pattern, jacobian_pattern
        from .colouring import column_colouring, hessian_colouring, row_colouring, \
            star_recovery
        take = None
        if self.hessian:
            pattern = hessian_pattern(tape)
            colours, count, kind = hessian_colouring(pattern)
            mode = "fwd"
            if kind == "star":
                take = star_recovery(pattern, colours)
            fn = _seeded_forward(_gradient_of(self.f, argnums), argnums,
                                 _seeds(colours, count, pattern.shape[1]))
        else:
            pattern = jacobian_pattern(tape)
            mode = self.mode
            cf = column_colouring(pattern) if mode in ("auto", "fwd") else None
            cr = row_colouring(pattern) if mode in ("auto", "rev") else None
            if mode == "auto":
                mode = "fwd" if cf[1] <= cr[1] else "rev"
            colours, count = cf if mode == "fwd" else cr
            if mode == "fwd":
                fn = _seeded_forward(self.f, argnums, _seeds(colours, count, pattern.shape[1]))
            else:
                fn = _seeded_backward(self.f, argnums, _seeds(colours, count, pattern.shape[0]),
                                      tape.out_shape)
        ctape = _trace(fn, args, kwargs, argnums, False, sig, False)
        if take is None:
            take = _recovery(pattern, colours, mode, pattern.shape[1])
        plan = _Plan(pattern, colours, mode, ctape, take)
        with self.lock:
            return self.plans.setdefault(tape, plan)

    def _tape(self, args, kwargs):
        try:
            return self.tape_for(args, kwargs)
        except NestedTrace:
            raise nested_unsupported(
                "bn.sparse_hessian" if self.hessian else "bn.sparse_jacobian") from None

    def call(self, args, kwargs):
        tape, sig, argnums = self._tape(args, kwargs)
        plan = self.plans.get(tape)
        if plan is None:
            plan = self.plan(tape, sig, args, kwargs, argnums)
        return plan.matrix(sig.diff + sig.data)

    def pattern(self, args, kwargs):
        from ..derive.sparsity import hessian_pattern, jacobian_pattern
        tape, sig, argnums = self._tape(args, kwargs)
        return (hessian_pattern if self.hessian else jacobian_pattern)(tape)


def _wrap(state, f, what):
    @functools.wraps(f)
    def call(*args, **kwargs):
        return state.call(args, kwargs)
    call.tapes = state.tapes
    call.plans = state.plans
    call.sparsity = lambda *args, **kwargs: state.pattern(args, kwargs)
    call.__doc__ = f"The {what} of {getattr(f, '__name__', 'f')} (scipy.sparse CSR)."
    return call


def sparse_jacobian(f, argnums=0, mode="auto"):
    """Return a function computing f's Jacobian as a ``scipy.sparse.csr_matrix``: output
    elements (flattened) by the elements of the arguments ``argnums`` (flattened, in order).

    The pattern is read off f's tape, its columns (``mode="fwd"``) or rows (``"rev"``) are
    coloured greedily, and one run of a compressed tape gives every nonzero (``"auto"``: the
    mode with fewer colours). ``.sparsity(*args)`` returns the pattern.

    >>> import burnumba as bn, numpy as np
    >>> J = bn.sparse_jacobian(lambda x: x[1:] * x[:-1])(np.arange(1.0, 5.0))
    >>> J.toarray()
    array([[2., 1., 0., 0.],
           [0., 3., 2., 0.],
           [0., 0., 4., 3.]])
    """
    return _wrap(_Sparse(f, argnums, mode, False), f, "Jacobian")


def sparse_hessian(f, argnums=0):
    """Return a function computing the Hessian of scalar f as a ``scipy.sparse.csr_matrix``
    (inputs by inputs, flattened in argument order): its pattern from the nonlinear
    interactions on f's tape, a star colouring (or a distance-2 one, if fewer), and ``H S``
    by forward-over-reverse in one run of a compressed tape.

    >>> import burnumba as bn, numpy as np
    >>> H = bn.sparse_hessian(lambda x: np.sum((x[1:] - x[:-1] ** 2) ** 2))(np.ones(4))
    >>> H.nnz
    10
    """
    return _wrap(_Sparse(f, argnums, "fwd", True), f, "Hessian")


def jacobian_sparsity(f, argnums=0):
    """Return a function giving the Jacobian's pattern of f (a CSR matrix of ones)."""
    state = _Sparse(f, argnums, "auto", False)
    return lambda *args, **kwargs: state.pattern(args, kwargs)


def hessian_sparsity(f, argnums=0):
    """Return a function giving the Hessian's pattern of scalar f (a CSR matrix of ones)."""
    state = _Sparse(f, argnums, "fwd", True)
    return lambda *args, **kwargs: state.pattern(args, kwargs)
