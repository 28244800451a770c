"""Concrete values on demand while tracing: what lets Python decide (``if x > 0``,
``while err > tol``, ``range(n)``, ``int(x)``) on a traced value.

Tracing is symbolic: a ``Var`` knows its node, not its value. But the arguments' values are
known while a transformation traces, so when Python asks a traced value for a decision, the
builder's rows up to that value's node are evaluated now, with numpy, from the trace's input
values: the map rows' own rule functions vectorised over each row's elements, the block rows'
own statements (``kernels/reference.py``, the plain-Python twin of the compiled kernels). It
is lazy and incremental: nothing is evaluated until the first decision, and each decision
evaluates only the rows appended since the last one. A trace without decisions costs nothing.

Each decision becomes a guard of the tape (``Guards``): (node, kind, expected value). A run
reads the guard nodes' values after its forward sweep and compares; a failed guard makes the
transformation trace again (``transforms/core.TapeCache``).
"""
import numpy as np

from .._errors import ConcretizationError, DataError, at_user_site, user_site
from ..kernels import ROWS, layout
from .loops import Bound, run_forward

# guard kinds: what was asked of the value, so what must hold again
TRUTH = 0        # bool(x): (x != 0) is the recorded outcome (NaN is true, as in Python)
EXACT = 1        # x == the recorded value (float(x), x.item(), x as an index or a shape)
INTEGER = 2      # int(x): trunc(x) == the recorded integer (an integer is piecewise constant)
NAN = 3          # whether x is NaN (recorded: 1 or 0): the truth of x == x or x != x
# bool(x OP c) of a comparison with a constant c, recorded on x itself (the comparison row
# then has no reader and leaves the tape, so a guarded tape runs the kernel of the same tape
# without the decision): FIRST_COMPARISON + k where (x OP_k c) was true, + 6 more where it
# was false; the recorded value is c (in the tape's dtype, as the kernel compares)
# One row per comparison: the op row's name, its symbol, the row of c OP x written as
# x OP' c, and x OP c as a method of the float c (c.__lt__(x) is x > c: ir/tape.py's fast
# path tests a guard with it)
_COMPARISON_ROWS = (("greater", ">", "less", "__lt__"),
                    ("greater_equal", ">=", "less_equal", "__le__"),
                    ("less", "<", "greater", "__gt__"),
                    ("less_equal", "<=", "greater_equal", "__ge__"),
                    ("equal", "==", "equal", "__eq__"),
                    ("not_equal", "!=", "not_equal", "__ne__"))
COMPARISONS = tuple(row[0] for row in _COMPARISON_ROWS)
SYMBOLS = tuple(row[1] for row in _COMPARISON_ROWS)
SWAPPED = {row[0]: row[2] for row in _COMPARISON_ROWS}
REFLECTED = tuple(row[3] for row in _COMPARISON_ROWS)
FIRST_COMPARISON = 4
LAST_KIND = FIRST_COMPARISON + 2 * len(COMPARISONS) - 1
KIND_NAMES = {TRUTH: "bool()", EXACT: "the exact value (an index, a size, float(), item())",
              INTEGER: "int()", NAN: "a comparison with itself (x == x: whether x is NaN)"}


def describe(kind, want):
    """A guard's decision and its outcome when traced, as an error names them: ("bool()",
    "True"), ("x > 0.5", "True"), ("int()", "3"), ..."""
    kind = int(kind)
    if kind >= FIRST_COMPARISON:
        c = kind - FIRST_COMPARISON
        return f"x {SYMBOLS[c % 6]} {want:g}", str(c < 6)
    if kind == TRUTH:
        return KIND_NAMES[kind], str(bool(want))
    if kind == NAN:
        return KIND_NAMES[kind], "NaN" if want else "not NaN"
    return KIND_NAMES[kind], f"{want:g}"


def holds(v, kind, want):
    """Whether a guard of ``kind`` recorded as ``want`` holds for the value ``v`` (a number,
    or elementwise for arrays): a truth guard compares (v != 0) with its outcome (NaN is
    true, as in Python), an integer guard trunc(v), an exact guard v itself (NaN matches
    NaN), a NaN guard v's NaN-ness, a comparison guard (v OP want) with its outcome. Plain
    arithmetic: the tape's check runs it in Python, an njit handle compiled
    (transforms/njit_numba.py)."""
    if kind == TRUTH:
        return (v != 0) == (want != 0)
    if kind == INTEGER:
        return np.trunc(v) == want
    if kind == EXACT:
        return (v == want) | ((v != v) & (want != want))
    if kind == NAN:
        return (v != v) == (want != 0)
    c = kind - FIRST_COMPARISON
    op = c % 6
    if op == 0:
        r = v > want
    elif op == 1:
        r = v >= want
    elif op == 2:
        r = v < want
    elif op == 3:
        r = v <= want
    elif op == 4:
        r = v == want
    else:
        r = v != want
    return r == (c < 6)


def holds_rows(values, kinds, want):
    """Per row of ``values`` (rows: runs; columns: a tape's guards, whose ``kinds`` and
    ``want`` are given, broadcast against it), whether every guard holds: ``holds``, for
    many runs at once, once per kind present."""
    values = np.asarray(values, dtype=np.float64)
    shape = np.broadcast_shapes(values.shape, np.shape(kinds), np.shape(want))
    values, kinds, want = (np.broadcast_to(a, shape) for a in (values, kinds, want))
    ok = np.ones(shape, dtype=bool)
    for kind in np.unique(kinds).tolist():
        at = kinds == kind
        with np.errstate(invalid="ignore"):
            ok[at] = holds(values[at], kind, want[at])
    return ok.all(axis=-1)


def all_hold(values, kinds, want):
    """Whether every guard holds in every row of ``values`` (as ``holds_rows(...).all()``),
    by one reduction per guard column: vmap's check of a batch whose samples all take the
    branch it ran, which is nearly every call (1,024 samples, one guard: 3.4 us, where
    holds_rows' ten array operations took 24). A truth guard's column is all nonzero (NaN
    counts, as in Python) or all zero; an exact guard's equals its value (NaN: all NaN)."""
    for k in range(len(kinds)):
        col, kind, w = values[:, k], int(kinds[k]), want[k]
        if kind == TRUTH:
            ok = col.all() if w != 0 else not col.any()
        elif kind == EXACT:
            ok = (col == w).all() if w == w else np.isnan(col).all()
        else:
            ok = holds(col, kind, w).all()
        if not ok:
            return False
    return True


class Evaluator:
    """The values of a builder's nodes ``0 .. done - 1``, computed as the kernel would.

    ``given``: input node -> the argument's value (a Python number or a numpy array)."""

    def __init__(self, builder, given):
        # the plain-Python engine, imported at a process's first decision (0.25 s: it
        # compiles every block's statements), never by a trace without decisions
        from ..kernels import reference
        self.fwd, self.block_fwd = reference._FWD, reference._BLOCK_FWD
        self.b = builder
        self.given = given
        self.val = np.zeros(max(builder.off[-1], 1), dtype=builder.dtype)
        self.done = 0
        self._cols = None            # packed columns for the block rows, of ``_cols_n`` nodes
        self._cols_n = -1

    def value(self, node):
        """The value of ``node`` (a flat array of the tape's dtype), evaluating what is needed."""
        b = self.b
        if node >= self.done:
            end = b.off[node + 1]
            if end > self.val.size:                  # the arena grew since: grow with it
                grown = np.zeros(max(end, 2 * self.val.size), dtype=b.dtype)
                grown[:self.val.size] = self.val
                self.val = grown
            with np.errstate(all="ignore"):
                self.done = max(node + 1, self._range(self.done, node + 1))
        return self.val[b.off[node]:b.off[node + 1]]

    def _range(self, a, z):
        """Evaluate nodes a .. z - 1, a structured loop (tracing/loops.py) as all its steps;
        returns the node after the last one evaluated (past z when z falls inside a loop)."""
        starts = self.b.loop_starts
        i = a
        while i < z:
            loop = starts.get(i)
            if loop is None:
                self._node(i)
                i += 1
                continue
            b = self.b
            if b.off[loop.end] > self.val.size:
                grown = np.zeros(b.off[-1], dtype=b.dtype)
                grown[:self.val.size] = self.val
                self.val = grown
            for j in range(loop.lo, loop.body_lo):     # the carry in's gathers, the counter
                self._node(j)
            run_forward(Bound(loop, self.val, b.off), self._range)
            i = loop.end
        return i

    def _node(self, i):
        b, val = self.b, self.val
        row = ROWS[b.op[i]]
        o, e = b.off[i], b.off[i + 1]
        if row.kind == "leaf":
            if row.name == "const":
                val[o:e] = b.consts[i]
            elif i in b.loop_owned:              # a loop's counter or result: its runner's
                return
            else:
                val[o:e] = np.ravel(np.asarray(self.given[i], dtype=np.float64))
            return
        if row.name == "njit_call":          # a user's numba op: its forward, called here
            op, shapes, _ = b.user_ops[b.params[b.pp[i]]]
            k = b.a0[i]
            val[o:e] = op.evaluate(shapes, val[b.off[k]:b.off[k + 1]])
            return
        if row.kind == "block":
            self._block(i)
            return
        k = b.op[i]
        c = b.imm[i]
        ny = e - o
        a = self._operand(b.a0[i], ny)
        bb = self._operand(b.a1[i], ny) if row.arity == 2 else 0.0
        try:
            out = self.fwd[k](a, bb, c)
        except (TypeError, ValueError):
            # a rule written for scalars (a Python ``if`` on a, max(a, b)): element by element,
            # exactly as kernels/reference.py runs it
            out = [self.fwd[k](np.float64(a[j]), bb if row.arity == 1
                                     else np.float64(bb[j]), c) for j in range(ny)]
        val[o:e] = out

    def _operand(self, node, ny):
        """A map operand's values over the output's ny elements: element j reads element
        j % size (a scalar, the same size, or a tile repeated over the output)."""
        b = self.b
        o, e = b.off[node], b.off[node + 1]
        a = self.val[o:e]
        if e - o == ny:
            return a
        return np.tile(a, ny // (e - o))

    def _block(self, i):
        b = self.b
        if self._cols_n != b.n:
            size = len(self.val)
            self._cols = (np.asarray(b.pp, dtype=np.int64), np.asarray(b.params, dtype=np.int64),
                          np.asarray(b.off, dtype=np.int64), np.asarray(b.a0, dtype=np.int64),
                          np.asarray(b.a1, dtype=np.int64), np.asarray(b.need, dtype=np.int64),
                          np.zeros(size, dtype=b.dtype),
                          np.zeros(max(b.scratch, 1), dtype=b.dtype))
            self._cols_n = b.n
        pp, P, off, a0, a1, need, grad, scratch = self._cols
        if grad.size < self.val.size:
            grad = np.zeros(self.val.size, dtype=b.dtype)
            self._cols = self._cols[:6] + (grad, scratch)
        k = b.op[i]
        o, e = b.off[i], b.off[i + 1]
        status = self.block_fwd[k](i, o, e - o, float(b.imm[i]), int(pp[i]), P, off, a0,
                                         a1, need, self.val, grad, scratch)
        if status:
            raise DataError(at_user_site(
                f"{ROWS[k].name}: {layout.ERRORS.get(status, f'error {status}')} (found while "
                "evaluating a traced value for a Python decision)"))


class Guards:
    """The decisions of one trace, in order: node, kind, expected value and the user's line."""

    def __init__(self):
        self.node, self.kind, self.value, self.sites = [], [], [], []

    def add(self, node, kind, value, site):
        self.node.append(node)
        self.kind.append(kind)
        self.value.append(float(value))
        self.sites.append(site)

    def drop(self, indices):
        """Forget the guards at ``indices`` (a decision that turned out to be data:
        tracing/subscripts.py)."""
        for k in sorted(indices, reverse=True):
            for column in (self.node, self.kind, self.value, self.sites):
                del column[k]

    def __len__(self):
        return len(self.node)


def peek(x, what, fix):
    """The value of traced array ``x`` now (a numpy array of its shape), computed from the
    trace's input values as a decision's is, for a function that decides from the values
    (``what``: its name) and records that decision as a guard itself (a pivot choice: the
    guard is the decision's own condition, on traced values, so ``peek`` records none).
    ``fix``: what to use when the trace has no input values."""
    b = x._b
    if b.given is None or not b.live:
        raise ConcretizationError(at_user_site(
            f"{what} decides from the values of a traced array, in a trace that has no input "
            f"values (a value that leaked out of its trace, or a tape being rebuilt): {fix}"))
    if b.evaluator is None:
        b.evaluator = Evaluator(b, b.given)
    return b.evaluator.value(x.node).reshape(x.shape).copy()


def decide(x, what):
    """Record the traced scalar ``x``'s truth now as a guard (as ``bool(x)``), its source
    line annotated with ``what``, the decision a library function took (a GuardError then
    names it): for a function that decides from ``peek``'s values and states its decision
    as one traced condition. Returns the outcome."""
    b = x._b
    v = peek(x, what, "")
    if b.guards is None:
        b.guards = Guards()
    site = user_site()
    b.guards.add(x.node, TRUTH, v.ravel()[0] != 0, f"{site} [{what}]" if site else what)
    return bool(v.ravel()[0] != 0)
