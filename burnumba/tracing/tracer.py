"""The tracer: running ``f`` on ``Var`` objects appends rows to a ``Builder``.

Tracing is symbolic, as under ``jax.jit``: a ``Var`` knows its node and shape, not its value.
Every node gets the next slice of the value arena, so tape order is execution order and the
offsets of all nodes are known while tracing (the ``gather`` row relies on that)."""
import functools
import hashlib
import math
from math import copysign as _copysign

import numpy as np

from .._errors import (ComplexOperand, InplaceError, LeakedTracerError, NestedTrace,
                      ShapeError, TracerBoolError, ConcretizationError, UnsupportedMethodError,
                      UnsupportedOpError, at_user_site, numpy_caller, user_site)
from ..kernels import BY_NAME, OPCODE
from .concrete import (COMPARISONS, FIRST_COMPARISON, INTEGER, NAN, SWAPPED, TRUTH, Evaluator,
                       Guards)
from .conversions import (INTO_NUMPY, MEMORY, NOT_TRACED, cast_check, refuse,  # noqa: F401 (cast_check: burnumba.numpy)
                          guarded_index, guarded_index_ok, no_delete, no_modulus, store_refused,
                          storing_into_numpy, lifted, user_instruction)
from .dispatch import (FUNCTIONS, METHODS, UFUNCS, apply_function, apply_ufunc, call,
                       dispatched, scipy_hint)
from .decisions import Decisions
from .broadcasting import tiles
from .promote import stored_array

# bound once (as math's copysign): a stand-in's name costs a descriptor per read of np.<name>
_asarray, _array, _ascontiguousarray, _matmul = np.asarray, np.array, np.ascontiguousarray, \
    np.matmul                                   # while a thread traces (module_views.py)

CONST = OPCODE["const"]
_COMPARE = {OPCODE[name]: name for name in COMPARISONS}
# Rows folded when every operand is a constant: one IEEE operation per element, which
# numpy computes exactly as the kernel does (a derivative's 1 * 1, a broadcast 1 times 100)
EXACT_ROWS = frozenset(("add", "subtract", "multiply", "divide", "negative"))

_INT_MAX = np.iinfo(np.int32).max
_COMPLEX = (complex, np.complexfloating)


class Builder:
    """The growing tape: one Python list per column, packed into arrays by ``Tape``."""

    def __init__(self, dtype=np.float64, record_sites=False):
        self.dtype = np.dtype(dtype)  # of the value arena: float64, or float32
        self.scratch = 0              # work space a row may need at the end of F (none yet)
        self.largest_product = 0      # M * K * N of the largest matmul (BLAS threading)
        self.op, self.a0, self.a1, self.pp, self.need, self.imm = [], [], [], [], [], []
        self.off = [0]
        self.params = []
        self.shapes = []              # per node, for printing and for the Tape's outputs
        self.consts = {}              # node -> float64 values written once when packing
        self.input_kinds = {}         # input node -> numpy dtype kind ("f", "i", "u", "b")
        self._scalar_consts = {}      # (value, sign) -> const node, so 2.0 is stored once
        self._array_consts = {}       # id(array) -> (array, node), captured arrays stored once
        self._gathers = {}            # (source, digest of positions) -> (positions, node)
        self.viewed = {}              # gather node made from a view -> the positions it reads
        self.live = True              # False once the trace is over (leaked tracer check)
        self.derived = False          # True once derivatives are traced as ops (derive/)
        # output node -> the user's derivative rule for it (transforms/custom.py): the
        # derivative sweeps call the rule there instead of differentiating the node's body
        self.custom = {}
        # per node, the user's source line: a side table kept only for debug_nans
        self.sites = [] if record_sites else None
        # Python decisions on traced values (tracing/concrete.py): the input nodes' values
        # (set by the transformation that traces; None: no values, decisions are refused),
        # the evaluator made at the first decision, the guards, tracing/subscripts.py's
        self.given = self.evaluator = self.guards = self.subscripts = None
        self.folded = set()           # comparison nodes whose truth a guard reads off an operand
        # structured loops (tracing/loops.py), by first node; the input nodes they write;
        # whether one may be traced here (the transformation says so; else: unrolled)
        self.loops, self.loop_starts, self.loop_owned, self.loops_ok = [], {}, set(), False
        self.user_ops = []      # by slot, njit_call's (op, argument shapes, output shape)

    @property
    def n(self):
        return len(self.op)

    def add(self, name, shape, a0=-1, a1=-1, params=None, imm=0.0, need=0):
        """Append one node; return its index."""
        if not self.live:
            raise LeakedTracerError(at_user_site(
                f"{name}: a traced value was used outside the trace that made it (it leaked "
                "out of bn.grad / bn.trace, e.g. stored in a global or a list): return it from "
                "the function, or use has_aux=True to get it out as a number"))
        size = math.prod(shape) if shape else 1
        if params is None or len(params) == 0:
            pp = -1
        else:
            pp = len(self.params)
            self.params.extend(params.tolist() if isinstance(params, np.ndarray)
                               else (int(p) for p in params))
        return self._append(name, a0, a1, pp, need, imm, size,
                            shape if type(shape) is tuple else tuple(shape))

    def _append(self, name, a0, a1, pp, need, imm, size, shape):
        """The new node's entry in every column; its index. (``add``, and ``_scalar_map``
        directly: its scalar operands were checked to be this live trace's.)"""
        end = self.off[-1] + size
        if end > _INT_MAX:
            raise ShapeError(at_user_site(
                f"{name}: the tape's value buffer would exceed 2**31 elements (this node ends "
                f"at {end:,}): trace with smaller inputs, e.g. a smaller batch"))
        self.op.append(OPCODE[name])
        self.a0.append(a0)
        self.a1.append(a1)
        self.pp.append(pp)
        self.need.append(1 if need else 0)
        self.imm.append(float(imm))
        self.off.append(end)
        self.shapes.append(shape)
        if self.sites is not None:
            self.sites.append(user_site())
        return len(self.op) - 1

    def drop_last(self):
        """Remove the last node, which nothing reads (a comparison a guard took over, at the
        end of the trace: the tape is then the very tape of the program without it)."""
        for column in (self.op, self.a0, self.a1, self.pp, self.need, self.imm, self.off,
                       self.shapes) + ((self.sites,) if self.sites is not None else ()):
            column.pop()

    def input(self, shape, need, kind="f"):
        node = self.add("input", shape, need=need)
        self.input_kinds[node] = kind
        return Var(self, node, shape)

    def const(self, value):
        """A constant node for a Python number or a numpy array (stored once per trace)."""
        if isinstance(value, (float, int, np.floating, np.integer, bool, np.bool_)):
            v = float(value)
            key = (v, _copysign(1.0, v))           # keeps 0.0 and -0.0 apart
            node = self._scalar_consts.get(key)
            if node is None:
                node = self.add("const", ())
                self.consts[node] = _array([v])
                self._scalar_consts[key] = node
            return Var(self, node, ())
        arr = value
        hit = self._array_consts.get(id(arr))
        if hit is not None and hit[0] is arr:
            return Var(self, hit[1], arr.shape)
        data = _asarray(arr)
        if data.dtype.kind not in "biuf":
            raise UnsupportedOpError(at_user_site(
                f"a captured array of dtype {data.dtype} cannot be a burnumba constant: "
                "use a real (float, int or bool) array"))
        node = self.add("const", data.shape)
        self.consts[node] = _ascontiguousarray(data, dtype=np.float64).reshape(-1)
        self._array_consts[id(arr)] = (arr, node)
        return Var(self, node, data.shape)

    def lift(self, x):
        """x as a Var of this trace: Vars pass through, numbers and arrays become constants."""
        if isinstance(x, Var):
            if x._b is not self and x._b.live:
                # an inner transformation's function closes over an outer trace's value:
                # the inner one runs in the outer trace instead (see transforms/nested.py).
                # Which of the two is the outer one, the trace that started first, is known
                # where a trace starts (core._traced): both travel
                nested = NestedTrace(x._b)
                nested.other = self
                raise nested
            if x._b is not self:
                raise LeakedTracerError(at_user_site(
                    "a traced value from another trace was used here (it leaked out of an "
                    "earlier bn.grad / bn.trace call, e.g. stored in a global or a closure): "
                    "pass it as an argument instead"))
            return x
        if isinstance(x, (list, tuple)):
            return v if isinstance(v := FUNCTIONS[_array](x), Var) else self.const(v)
        if isinstance(x, np.ndarray) and x.dtype == object and \
                any(isinstance(e, Var) for e in x.flat):
            # np.array(..., dtype=object) of traced values: stack them (never a constant)
            return FUNCTIONS[_array](x.tolist())
        if getattr(type(x), "_burnumba_complex", False) or isinstance(x, _COMPLEX) or (
                isinstance(x, np.ndarray) and x.dtype.kind == "c"):     # numpy/fft.py's
            raise ComplexOperand(at_user_site(ComplexOperand.MESSAGE))
        if not isinstance(x, (float, int, np.number, np.ndarray, bool, np.bool_)):
            raise UnsupportedOpError(at_user_site(
                f"cannot use an object of type {type(x).__name__} in a traced computation: "
                "use floats or numpy arrays"))
        return lifted(self, x) if self.subscripts else self.const(x)  # numpy's table[i]

    # -- op constructors ------------------------------------------------------------------

    def map(self, name, *xs, imm=0.0):
        """An elementwise row with numpy broadcasting.

        Scalars and tiles (an operand whose shape is a suffix of the result's, like a bias)
        broadcast inside the kernel; any other operand whose shape differs from the result
        is first expanded with a gather.
        """
        row = BY_NAME[name]
        node = None if row.refused else self._scalar_map(row, xs, imm)
        if node is not None:
            v = object.__new__(Var)             # Var(self, node, ()), without its two calls
            v._b, v._node, v.shape, v._view = self, node, (), None
            return v
        try:
            xs = [self.lift(x) for x in xs]
        except ComplexOperand:              # x * z for a complex z: numpy/fft.py's arithmetic
            return METHODS["__complex__"](name, xs)
        if len(xs) == 1:
            shape = xs[0].shape
        else:
            try:
                shape = np.broadcast_shapes(xs[0].shape, xs[1].shape)
            except ValueError:
                raise ShapeError(at_user_site(
                    f"{name}: operands could not be broadcast together with shapes "
                    f"{xs[0].shape} {xs[1].shape}")) from None
            if name == "multiply":
                for one, other in (xs, xs[::-1]):
                    if other.shape == shape and self._ones(one):
                        # x * 1 is x, bit for bit: a new array of the same node (numpy's
                        # product is a new array: a write into it must leave x as it was)
                        return other.copy()
            xs = [x if tiles(x.shape, shape) else broadcast_to(x, shape) for x in xs]
        if name in EXACT_ROWS and all(self.op[x.node] == CONST for x in xs):
            return self._folded(name, xs, shape)
        refuse(row, xs, self.need)                  # an operand without a derivative
        rules = (row.da, row.db)
        need = any(self.need[x.node] and rules[k] is not None for k, x in enumerate(xs))
        node = self.add(name, shape, xs[0].node, xs[1].node if len(xs) > 1 else -1,
                        imm=imm, need=need)
        return Var(self, node, shape)

    def _scalar_map(self, row, xs, imm):
        """The common case of a scalar graph, without broadcasting: every operand a traced
        scalar of this trace or a Python float. Returns the new node, or None for the general
        path (which also raises the errors). No temporary containers: in a large scalar
        graph every allocation the collector tracks brings its next pass nearer."""
        a = self._scalar_node(xs[0])
        if a is None:
            return None
        need, op = self.need, self.op
        if len(xs) == 1:
            if op[a] == CONST and row.name in EXACT_ROWS:
                return self._folded(row.name, [Var(self, a, ())], ())._node
            return self._append(row.name, a, -1, -1, need[a] and row.da is not None, imm,
                                1, ())
        b = self._scalar_node(xs[1])
        if b is None:
            return None
        if op[a] == CONST or op[b] == CONST:               # constants of derivatives
            if row.name == "multiply":
                one = self._scalar_consts.get((1.0, 1.0))       # x * 1 is x, bit for bit
                if b == one:
                    return a
                if a == one:
                    return b
            if op[a] == op[b] and row.name in EXACT_ROWS:
                return self._folded(row.name, [Var(self, a, ()), Var(self, b, ())], ())._node
        return self._append(row.name, a, b, -1, (need[a] and row.da is not None)
                            or (need[b] and row.db is not None), imm, 1, ())

    def _ones(self, x):
        """Whether x is a constant (or a view of one) whose every value is 1.0."""
        if x._view is None:
            return self.op[x._node] == CONST and bool(np.all(self.consts[x._node] == 1.0))
        positions, _, first = x._view
        values = self._const_values(first, positions.reshape(-1))
        return values is not None and bool(np.all(values == 1.0))

    def _const_values(self, node, flat):
        """The values at arena positions ``flat`` when they all lie in constant ``node``'s
        slice, else None."""
        start = self.off[node]
        if (self.op[node] != CONST or not flat.size or int(flat.min()) < start
                or int(flat.max()) >= self.off[node + 1]):
            return None
        return self.consts[node][flat - start]

    def _folded(self, name, xs, shape):
        """A row of constants computed now, as the kernel would (one correctly rounded IEEE
        operation per element, in the arena's dtype): a constant node. The rows of
        EXACT_ROWS only, where numpy and the kernel agree bit for bit."""
        values = [self.consts[x.node].astype(self.dtype) for x in xs]
        if len(values) == 2:
            values = [np.broadcast_to(v.reshape(x.shape), shape).reshape(-1)
                      for v, x in zip(values, xs)]
        with np.errstate(all="ignore"):
            out = getattr(np, name)(*values)
        if shape == ():
            return self.const(float(out[0]))
        return self.const(_ascontiguousarray(out.reshape(shape), dtype=np.float64))

    def _scalar_node(self, x):
        """The node of x for _scalar_map, or None."""
        if type(x) is Var and x._b is self and self.live:
            return x.node
        if type(x) is float:
            return self.const(x)._node
        return None

    def concrete(self, x, kind, what):
        """The value of traced scalar ``x`` now, as a numpy scalar of the tape's dtype,
        recorded as a guard of ``kind`` (TRUTH, EXACT, INTEGER): the decision Python makes
        with it holds for the tape only while the guard does."""
        if self.given is None or not self.live:
            x._concrete_refused(what)
        if x.size != 1:
            if kind == TRUTH:
                raise TracerBoolError(at_user_site(
                    f"{what} of a traced array of shape {x.shape}: the truth value of an array "
                    "with more than one element is ambiguous (as in numpy). Decide on a scalar, "
                    "e.g. `if np.max(x) > 0` or `if np.min(x) > 0`, or use bnp.where(cond, a, "
                    "b) to choose element by element"))
            raise ConcretizationError(at_user_site(
                f"{what} of a traced array of shape {x.shape}: only a value with one element "
                "can be converted to a Python number (as in numpy)"))
        node = x.node
        if self.evaluator is None:
            self.evaluator = Evaluator(self, self.given)
        v = self.evaluator.value(node)[0]
        if self.guards is None:
            self.guards = Guards()
        folded = self._comparison_guard(node, v != 0) if kind == TRUTH else None
        if folded is not None:
            self.guards.add(*folded, user_site())
            self.folded.add(node)
            return v
        expected = (v != 0) if kind == TRUTH else np.trunc(v) if kind == INTEGER else v
        self.guards.add(node, kind, expected, user_site())
        return v

    def _comparison_guard(self, node, outcome):
        """``bool(x OP c)`` of a comparison with a constant scalar, or of x with itself, as
        a guard on x: (node, kind, value), or None for any other node. The comparison then
        has no reader (unless the program reads it too) and leaves the tape: a tape whose
        only decision is ``if loss == loss`` or ``if x > 0`` runs the very kernel of the same
        program without it (the comparison row changed the kernel, 5% on the tiny graph)."""
        name = _COMPARE.get(self.op[node])
        if name is None:
            return None
        a, c = self.a0[node], self.a1[node]
        value = self.evaluator.value
        if a == c:
            # x OP x is decided by whether x is NaN alone (x < x and x > x never hold)
            return a, NAN, float(np.isnan(value(a)[0]))
        if self.op[a] == CONST and self.op[c] != CONST:
            a, c, name = c, a, SWAPPED[name]
        if self.op[c] != CONST or self.op[a] == CONST:
            return None
        # the constant as the kernel compares it: in the tape's dtype
        k = FIRST_COMPARISON + COMPARISONS.index(name) + (0 if outcome else len(COMPARISONS))
        return a, k, float(value(c)[0])

    def gather(self, sources, positions, shape):
        """A view: y.flat[j] = arena[positions[j]], ``sources`` being the Vars the positions
        fall in. No node yet: views of views compose (their positions are just indexed
        again), and the first consumer that needs a node makes one gather row."""
        positions = _asarray(positions).reshape(shape)
        need = any(s._view[1] if s._view is not None else self.need[s._node] for s in sources)
        first = sources[0]
        first = first._view[2] if first._view is not None else first._node
        return Var(self, None, shape, (positions, need, first))

    def materialize(self, view, shape, copy=False):
        """The node of a pending view: its first source itself when the view is all of that
        node in order (x[:], a reshape of a view), else a gather row; ``copy``: always a
        new node (a stand-in that must be distinct from its source)."""
        positions, need, first = view
        flat = positions.reshape(-1)
        start = self.off[first]
        if (not copy and flat.size == self.off[first + 1] - start and flat.size
                and flat[0] == start and flat[-1] == start + flat.size - 1
                and (flat.size < 3 or bool(np.all(np.diff(flat) == 1)))):
            return first
        if copy:
            return self.add("gather", shape, a0=first, params=flat, need=need)
        values = self._const_values(first, flat)
        if values is not None:
            # a constant's elements picked or repeated (a broadcast scalar of a derivative):
            # a constant, not a gather the forward runs on every call
            node = self.add("const", shape)
            self.consts[node] = values
            return node
        # the same gather twice (x.T read by two rules, a transpose in a derivative) is one
        # node: its positions are fixed at trace time, and so are its sources' values' slots.
        # One element (a scalar picked from an array) is keyed by its position itself.
        if flat.size == 1:
            key = (first, bool(need), 1, int(flat[0]))
            hit = self._gathers.get(key)
            if hit is not None:
                return hit[1]
        else:
            key = (first, bool(need), flat.size,
                   hashlib.blake2b(_ascontiguousarray(flat, np.int64).tobytes(),
                                   digest_size=16).digest())
            hit = self._gathers.get(key)
            if hit is not None and np.array_equal(hit[0], flat):
                return hit[1]
        node = self.add("gather", shape, a0=first, params=flat, need=need)
        self._gathers[key] = (flat, node)
        self.viewed[node] = flat
        return node

    def axis(self, name, x, axis, shape, imm=0.0, operand=-1, params=()):
        """A row that works along one axis of x, seen as (outer, m, inner); ``shape`` is the
        output's. ``operand`` is an optional second operand node (a1)."""
        axis = normalize_axis(axis, x.ndim, name)
        outer = math.prod(x.shape[:axis])
        m = x.shape[axis]
        inner = math.prod(x.shape[axis + 1:])
        if m == 0:
            raise ShapeError(at_user_site(
                f"{name}: axis {axis} of shape {x.shape} is empty; there is nothing to reduce"))
        node = self.add(name, shape, x.node, operand, params=[outer, m, inner, *params],
                        imm=imm, need=self.need[x.node])
        return Var(self, node, shape)

    def reduce(self, name, xs, scale=1.0):
        """A fused reduction row (sum, sumsq) over every element of the listed Vars."""
        xs = [self.lift(x) for x in xs]
        need = any(self.need[x.node] for x in xs)
        node = self.add(name, (), params=[len(xs)] + [x.node for x in xs], imm=scale, need=need)
        return Var(self, node, ())


def normalize_axis(axis, ndim, name):
    if isinstance(axis, Var):                # a traced int: a Python int, guarded
        axis = axis.__index__()
    if not -ndim <= axis < ndim:
        raise ShapeError(at_user_site(
            f"{name}: axis {axis} is out of bounds for an array of dimension {ndim}"))
    return axis % ndim


def broadcast_to(x, shape):
    shape = tuple(shape)
    if x.shape == shape:
        return x
    try:
        idx = np.broadcast_to(np.arange(x.size).reshape(x.shape), shape)
    except ValueError:
        raise ShapeError(at_user_site(
            f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")) from None
    return x._b.gather([x], x.positions().reshape(-1)[idx], shape)


# The rows whose output is a mask: no gradient, and numpy's twin returns booleans
# (comparisons, isnan, logical_and ...).
MASK_ROWS = frozenset(r.name for r in BY_NAME.values() if r.kind == "map" and r.da is None
                      and r.db is None and {"d->?", "dd->?"} & set(
                          getattr(getattr(np, r.name, None), "types", ())))


def is_boolean(x):
    """Whether ``x`` is a traced boolean array: a mask row's output, or a bool argument."""
    return isinstance(x, Var) and (is_mask(x) or (x._view is None and
                                                  x._b.input_kinds.get(x.node) == "b"))


def is_mask(x):
    """Whether x holds numpy booleans: a Python or numpy bool, a bool array, or a traced
    value every element of which a mask row wrote."""
    if isinstance(x, (bool, np.bool_)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype == np.bool_
    if not isinstance(x, Var):
        return False
    b = x._b
    if x._view is None:
        nodes = [x.node]
    else:
        owner = np.searchsorted(_asarray(b.off), _asarray(x._view[0]).reshape(-1), "right")
        nodes = {int(k) for k in np.unique(owner - 1)}
    return all(_NAMES[b.op[k]] in MASK_ROWS for k in nodes)


_NAMES = {code: name for name, code in OPCODE.items()}


def _scalar(x):
    return isinstance(x, (float, int, np.floating, np.integer)) and not isinstance(x, bool)


def _int_input(y):
    """Whether y is a traced scalar that is an integer argument itself (a Python int or a
    numpy integer passed as data)."""
    return (isinstance(y, Var) and y.shape == () and y._view is None
            and y._b.input_kinds.get(y._node) in ("i", "u"))


def power(x, y):
    """x ** y, choosing the row: constant integer and real exponents get their own rows. A
    traced base to an int argument's power (x ** n) takes n's value, guarded, as a
    constant exponent would be: powi, exact at x = 0 (0 ** 0 = 1, derivative 0); a
    constant base to it (0.99 ** i) stays one traced power, so a new i does not retrace."""
    if isinstance(x, Var) and _int_input(y):
        y = y.__index__()
    if isinstance(x, Var) and _scalar(y):
        c = float(y)
        b = x._b
        if c == 0.0:
            return _ones_like(x)
        if c == 1.0:
            return x.copy()                 # a new array, as numpy's (writes stay apart)
        special = {2.0: "square", 3.0: "cube", -1.0: "reciprocal", 0.5: "sqrt", -0.5: "rsqrt"}
        if c in special:
            return b.map(special[c], x)
        if c.is_integer() and abs(c) < 2 ** 31:
            return b.map("powi", x, imm=c)
        return b.map("pow_c", x, imm=c)
    b = (x if isinstance(x, Var) else y)._b
    return b.map("power", x, y)


def _method(func, *args, **kwargs):
    """An ndarray method: numpy's function ``func`` through the dispatch tables (its out=
    argument written, its views recorded)."""
    return call(func, args, kwargs)


def _ones_like(x):
    b = x._b
    return b.const(np.ones(x.shape)) if x.shape else b.const(1.0)


class Var(Decisions):
    """A traced value: a node of the tape being built, with a shape and the tape's dtype.

    ``Var(b, node, shape)`` makes an ``ArrayVar`` when the shape is not ``()``: only arrays
    have ``__getitem__``, so that numpy does not take a traced scalar for a sequence (it
    would hide burnumba's error behind "setting an array element with a sequence").
    """

    # _alias: the memory this array shares with its numpy views (numpy/inplace.py), or unset;
    # __weakref__: that memory's list of the arrays that view it
    __slots__ = ("_b", "_node", "shape", "_view", "_alias", "__weakref__")
    __array_priority__ = 1000.0

    @property
    def dtype(self):
        return self._b.dtype

    def __new__(cls, builder, node, shape, view=None):
        return object.__new__(ArrayVar if shape else cls)

    def __init__(self, builder, node, shape, view=None):
        self._b = builder
        self._node = node
        self.shape = shape
        self._view = view          # (positions, need, first source) of an unmade gather

    @property
    def node(self):
        """The node holding this value; a pending view becomes a gather node here."""
        if self._node is None:
            self._node = self._b.materialize(self._view, self.shape)
            self._view = None
        return self._node

    def positions(self):
        """Where each element lives in the arena (absolute offsets), shaped like the value."""
        if self._view is not None:
            return self._view[0]
        return self._b.off[self.node] + np.arange(self.size).reshape(self.shape)

    def reshaped(self, shape):
        """The same elements in row-major order with a new shape: no node."""
        if self._view is not None:
            positions, need, first = self._view
            return Var(self._b, None, shape, (positions.reshape(shape), need, first))
        return Var(self._b, self.node, shape)

    # -- metadata -------------------------------------------------------------------------
    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        where = "a view" if self._node is None else f"node %{self._node}"
        return f"Traced<{self._b.dtype}{list(self.shape)}, {where}>"

    # -- arithmetic -----------------------------------------------------------------------
    def __add__(self, o): return self._b.map("add", self, o)
    def __radd__(self, o): return self._b.map("add", o, self)
    def __sub__(self, o): return self._b.map("subtract", self, o)
    def __rsub__(self, o): return self._b.map("subtract", o, self)
    def __mul__(self, o):
        if isinstance(o, (list, tuple)) and _int_input(self):
            return NotImplemented          # [x] * n: Python repeats the list (n guarded)
        return self._b.map("multiply", self, o)

    def __rmul__(self, o):
        if isinstance(o, (list, tuple)) and _int_input(self):
            return NotImplemented
        return self._b.map("multiply", o, self)

    def __truediv__(self, o): return self._b.map("divide", self, o)
    def __rtruediv__(self, o):
        if _scalar(o) and float(o) == 1.0:           # 1 / x: one node, no constant
            return self._b.map("reciprocal", self)
        return self._b.map("divide", o, self)

    def __mod__(self, o): return self._b.map("remainder", self, o)
    def __rmod__(self, o): return self._b.map("remainder", o, self)
    # // and divmod as numpy's floor_divide (gradient 0) and remainder
    def __floordiv__(self, o): return self._b.map("floor_divide", self, o)
    def __rfloordiv__(self, o): return self._b.map("floor_divide", o, self)
    def __divmod__(self, o): return (self // o, self % o)
    def __rdivmod__(self, o): return (o // self, o % self)
    def __pow__(self, o, mod=None): return power(self, o) if mod is None else no_modulus()
    def __rpow__(self, o): return power(o, self)
    def __neg__(self): return self._b.map("negative", self)
    def __pos__(self): return self.copy()       # numpy's +x is a new array
    def __abs__(self): return self._b.map("absolute", self)
    def __gt__(self, o): return self._b.map("greater", self, o)
    def __ge__(self, o): return self._b.map("greater_equal", self, o)
    def __lt__(self, o): return self._b.map("less", self, o)
    def __le__(self, o): return self._b.map("less_equal", self, o)
    def __eq__(self, o): return self._b.map("equal", self, o)
    def __ne__(self, o): return self._b.map("not_equal", self, o)
    __hash__ = Decisions.__hash__       # (a class defining __eq__ must name its hash)

    def __matmul__(self, o):
        return FUNCTIONS[_matmul](self, o)

    # -- a 0-d value: s[()], s[...], s[None] as numpy's 0-d arrays; no length, no iteration,
    # no item assignment (a traced scalar is immutable, as numpy's scalars)
    def __getitem__(self, key):
        return METHODS["__getitem__"](self, key)

    def __len__(self):
        raise UnsupportedOpError(at_user_site(
            "len() of a 0-d traced value: it has no length (numpy: len() of unsized object); "
            "use x.size or x.shape"))

    def __iter__(self):
        raise UnsupportedOpError(at_user_site(
            "iteration over a 0-d traced value (numpy: iteration over a 0-d array): it is "
            "one number; s[None] makes it a 1-element array"))

    def __setitem__(self, key, value):
        raise InplaceError(at_user_site(
            "item assignment into a traced scalar (0-d): a scalar is immutable, as numpy's "
            "scalars; bind the name to the new value instead, s = v"))

    def __rmatmul__(self, o):
        return FUNCTIONS[_matmul](o, self)

    # -- things a traced value cannot do --------------------------------------------------
    def _no_operator(self, *_):
        raise UnsupportedOpError(at_user_site(
            "the operators << >> & | ^ ~ are not differentiable and not traced, except & | ^ ~ "
            "between masks (comparisons, isnan, ...): for other values compute integer data "
            "(indices, masks) with numpy before the call and pass it in as an argument, or "
            "build the value from traced ops (+ - * / **, np.logical_and / or / xor / not)"))

    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _no_operator

    # & | ^ ~ between masks (numpy's booleans: a comparison's or a predicate's 0/1 output, a
    # numpy bool array, a Python bool) are logical_and / or / xor / not, as numpy's on bools
    def _logical(self, name, o, reflected=False):
        if not (is_mask(self) and is_mask(o)):
            self._no_operator()
        return self._b.map(name, o, self) if reflected else self._b.map(name, self, o)

    def __and__(self, o): return self._logical("logical_and", o)
    def __rand__(self, o): return self._logical("logical_and", o, True)
    def __or__(self, o): return self._logical("logical_or", o)
    def __ror__(self, o): return self._logical("logical_or", o, True)
    def __xor__(self, o): return self._logical("logical_xor", o)
    def __rxor__(self, o): return self._logical("logical_xor", o, True)

    def __invert__(self):
        if not is_mask(self):
            self._no_operator()
        return self._b.map("logical_not", self)

    # -- decisions (bool, float, int, index, item, round, format, hash): tracing/decisions.py

    def __complex__(self):
        raise ConcretizationError(at_user_site(
            "complex() on a traced value: burnumba differentiates real functions only"))

    def __array__(self, dtype=None, copy=None):
        hint = scipy_hint()
        if hint:                    # a scipy function received the traced value
            raise ConcretizationError(at_user_site(
                hint + "(numpy was asked to convert a traced value into a numpy array.)"))
        caller = numpy_caller()
        if caller is None:          # np.array / np.asarray, a ufunc, arr[idx] in the user's code
            what = user_instruction()
            if what == "store":              # out[key] = v: a local numpy array, traced
                return stored_array(self)
            if what == "call" and (dtype is None or np.dtype(dtype) == object):
                # np.array([a, b, 3.0]), np.asarray(list_of_traced): numpy asks each element
                # for an array and gets an object array of traced scalars, so the list
                # becomes an object array of traced values. Every traced op stacks such an
                # array back into one traced array (Builder.lift), and so does returning it.
                return self._objects(writeable=copy is True)
            if what == "call":
                raise ConcretizationError(at_user_site(
                    f"numpy was asked for a {np.dtype(dtype)} array of traced values (np."
                    f"{np.dtype(dtype)}(x), or dtype= of that kind): there are no numbers "
                    "while tracing. Drop the cast (np.asarray(x, dtype=float) works: a float "
                    "dtype keeps the tape's), or use bnp.asarray(x); integer data is computed "
                    "with numpy before the call and passed in"))
            if what == "load" and guarded_index_ok(self):
                return guarded_index(self, dtype)
            if what == "load" and is_boolean(self):       # numpy_array[mask]: decided
                return self._decided_mask("a boolean mask indexing a numpy array")
            raise ConcretizationError(at_user_site(
                "numpy tried to convert a traced value into a numpy array: a numpy array "
                "indexed by a traced value, or a traced value where numpy needs numbers. Use "
                "bnp.take(array, idx, axis=0) to index a numpy array, and bnp.array(list) or "
                "bnp.stack(list) (import burnumba.numpy as bnp) to build arrays"))
        name = caller[len("numpy."):]
        if name == "__call__":      # a numpy callable object: np.vectorize, np.frompyfunc
            raise ConcretizationError(at_user_site(
                "a numpy callable object (np.vectorize, np.frompyfunc, np.poly1d) asked for "
                "the numbers of a traced value, which do not exist while tracing: write the "
                "function with numpy's array operations, which trace, or loop over the "
                "elements, np.stack([f(v) for v in x])"))
        fix = f"bnp.{name}(list), or " if "." not in name and dispatched(name) else ""
        raise ConcretizationError(at_user_site(
            f"{caller} tried to convert a traced value into a numpy array. A list (or tuple) "
            "holding traced values reaches numpy as a plain list, which numpy converts before "
            "burnumba can take over: use "
            f"{fix}{caller.replace('numpy.', 'np.')}(bnp.array(list)) (import burnumba.numpy "
            "as bnp; bnp.array and bnp.stack build a traced array from a list)"))

    def _objects(self, writeable=False):
        """A numpy object array of this value's elements, each a traced scalar (0-d: a 0-d
        object array holding the value itself). Read-only unless numpy asked for a copy:
        np.asarray(x) hands it to the user as it is, where numpy would return x itself, so
        a write into it (which could not reach x) fails loudly; numpy copies it into the
        array it builds from a list."""
        out = np.empty(self.shape, dtype=object)
        if not self.shape:
            out[()] = self
        else:
            b = self._b
            flat = self.positions().reshape(-1)
            cells = out.reshape(-1)
            for j in range(flat.size):
                cells[j] = b.gather([self], flat[j:j + 1].reshape(()), ())
        out.flags.writeable = writeable
        return out

    # -- ndarray methods: numpy's names and signatures, each the implementation of numpy's
    # function (the burnumba.numpy function) that the dispatch tables give, with one lookup.
    # (tests/test_readme.py lists every public ndarray name defined here as supported)
    def reshape(self, *shape, order="C", copy=None):
        return _method(np.reshape, self, shape[0] if len(shape) == 1 else shape, order=order)

    def ravel(self, order="C"):
        return _method(np.ravel, self, order)

    def flatten(self, order="C"):
        return _method(np.ravel, self, order).copy()    # always a copy, as numpy's

    @property
    def T(self):
        return _method(np.transpose, self)

    @property
    def mT(self):
        if self.ndim < 2:
            raise ShapeError(at_user_site(
                f"mT: the matrix transpose needs at least 2 dimensions, not shape {self.shape}"))
        return _method(np.swapaxes, self, -1, -2)

    def transpose(self, *axes):
        return _method(np.transpose, self, axes[0] if len(axes) == 1 else (axes or None))

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _method(np.prod, self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        return _method(np.cumsum, self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return _method(np.cumprod, self, axis=axis, dtype=dtype, out=out)

    def swapaxes(self, axis1, axis2):
        return _method(np.swapaxes, self, axis1, axis2)

    def squeeze(self, axis=None):
        return _method(np.squeeze, self, axis)

    def sum(self, *args, **kwargs):
        return _method(np.sum, self, *args, **kwargs)

    def any(self, *args, **kwargs):
        return _method(np.any, self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return _method(np.all, self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return _method(np.mean, self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return _method(np.max, self, *args, **kwargs)

    def min(self, *args, **kwargs):
        return _method(np.min, self, *args, **kwargs)

    def var(self, *args, **kwargs):
        return _method(np.var, self, *args, **kwargs)

    def std(self, *args, **kwargs):
        return _method(np.std, self, *args, **kwargs)

    def clip(self, *args, **kwargs):
        return _method(np.clip, self, *args, **kwargs)

    def dot(self, b, out=None):
        return _method(np.dot, self, b, out)

    def take(self, *args, **kwargs):
        return _method(np.take, self, *args, **kwargs)

    def nonzero(self):
        return _method(np.nonzero, self)

    def argmax(self, *args, **kwargs):
        return _method(np.argmax, self, *args, **kwargs)

    def argmin(self, *args, **kwargs):
        return _method(np.argmin, self, *args, **kwargs)

    def argsort(self, *args, **kwargs):
        return _method(np.argsort, self, *args, **kwargs)

    def repeat(self, *args, **kwargs):
        return _method(np.repeat, self, *args, **kwargs)

    def diagonal(self, *args, **kwargs):
        return _method(np.diagonal, self, *args, **kwargs)

    def trace(self, *args, **kwargs):
        return _method(np.trace, self, *args, **kwargs)

    def copy(self, order="C"):
        """A copy: a new array object holding the same value (the same node: a node is
        immutable), so that an in-place write to either leaves the other as it was."""
        return Var(self._b, self._node, self.shape, self._view)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        raise ConcretizationError(at_user_site(
            "pickling (or copy.copy through pickle) a traced value: it has no numbers while "
            "tracing. Return the value from the function and pickle the result"))

    def conj(self):
        """Real values are their own conjugates (burnumba traces real numbers only)."""
        return self

    conjugate = conj

    @property
    def real(self):
        return self

    @property
    def imag(self):
        """Zeros (a constant: the imaginary part of a real value, with gradient 0)."""
        return self._b.const(np.zeros(self.shape)) if self.shape else self._b.const(0.0)

    @property
    def itemsize(self):
        return self._b.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self._b.dtype.itemsize

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """To a float dtype: the value itself, computed in the tape's dtype (a tape computes in
        one float dtype, so a cast to another float dtype warns, PrecisionWarning).

        To an integer dtype: numpy's cast truncates toward zero, so this is ``trunc`` with
        no gradient (``stop_gradient``; the derivative of a step function is 0 wherever it
        exists, as autograd and jax take it). The result holds integers as the tape's floats
        and is integer data: it indexes arrays (``f[i, j]`` with ``i = floor(x).astype(int)``,
        a take row checked at run time), and so do its sums, products, remainders and floor
        quotients with other integer data. Boolean and complex dtypes are refused."""
        want = np.dtype(dtype)
        if want.kind in "iu":
            b = self._b
            return b.map("stop_gradient", b.map("trunc", self))
        cast_check(f"astype({want})", dtype, self._b.dtype)
        return self.copy() if copy else self

    def __getattr__(self, name):
        """Any other ndarray method or attribute: a burnumba error that names it and the fix."""
        if name == "_alias":                # the slot, unset: no view of this value was taken
            return None
        if not name.startswith("__") and hasattr(np.ndarray, name):
            if name in METHODS:             # an ndarray method burnumba.numpy registered
                return functools.partial(METHODS[name], self)
            hint = NOT_TRACED.get(name)
            if hint is None:
                hint = ("use the burnumba.numpy function, or compute constants with numpy "
                        "before the call")
            raise UnsupportedMethodError(at_user_site(
                f"ndarray.{name} is not supported on traced values: {hint}. Traced arrays "
                f"have {', '.join(supported_methods())}"))
        if name in MEMORY:                # numpy's probes: a plain (cheap) AttributeError
            raise AttributeError(
                f"{name}: a traced value has no memory of its own (it is a node of a tape); "
                "return it from the function to get a numpy array")
        ufunc = getattr(np, name, None)
        if isinstance(ufunc, np.ufunc) and ufunc in UFUNCS:
            # numpy's object loops call x.exp() for np.exp on an object array of traced
            # values (np.array([a, b]) is one): the traced ufunc
            return lambda *args: UFUNCS[ufunc](self, *args)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- numpy protocols: np.exp(x), np.sum(x) ... on a traced x, through the tables of
    # burnumba.tracing.dispatch (which burnumba.numpy fills)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return apply_function(func, args, kwargs, self)


def supported_methods():
    """The ndarray methods and attributes traced arrays have (numpy's names)."""
    return sorted({n for n in (*dir(ArrayVar), *METHODS)
                   if not n.startswith("_") and hasattr(np.ndarray, n)})


class ArrayVar(Var):
    """A traced array (ndim >= 1): a Var with indexing, iteration and len()."""

    __slots__ = ()

    def _set_shape(self, shape):
        try:
            _SHAPE.__get__(self)
        except AttributeError:                  # Var.__init__
            _SHAPE.__set__(self, shape)
            return
        raise InplaceError(at_user_site(
            "setting x.shape reshapes an array in place: use x = x.reshape(shape) (a traced "
            "array's shape is fixed)"))

    # read through the slot's own descriptor (no Python frame); set once, by Var.__init__
    shape = property(Var.__dict__["shape"].__get__, _set_shape)

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, key):
        return METHODS["__getitem__"](self, key)

    def __iter__(self):
        return (self[k] for k in range(self.shape[0]))

    at = property(lambda self: METHODS["at"](self))     # JAX's x.at[i].set(v) (numpy/at.py)
    __delitem__ = no_delete

    # -- in-place updates (numpy/inplace.py): recorded as functional updates. This object
    # then holds the new value, and so does every numpy view of the same memory.
    def __setitem__(self, key, value):
        METHODS["__setitem__"](self, key, value)

    def __iadd__(self, o): return METHODS["inplace"](self, self + o)
    def __isub__(self, o): return METHODS["inplace"](self, self - o)
    def __imul__(self, o): return METHODS["inplace"](self, self * o)
    def __itruediv__(self, o): return METHODS["inplace"](self, self / o)
    def __ifloordiv__(self, o): return METHODS["inplace"](self, self // o)
    def __imod__(self, o): return METHODS["inplace"](self, self % o)
    def __ipow__(self, o): return METHODS["inplace"](self, power(self, o))
    def __imatmul__(self, o): return METHODS["inplace"](self, self @ o)

    @property
    def flat(self):
        """numpy's flat iterator: x.flat[k] reads, x.flat[k] = v writes in place."""
        return METHODS["flat"](self)

    def fill(self, value):
        """x.fill(v): every element set to v (a functional update)."""
        self[...] = value

    # put and sort: burnumba/numpy/inplace.py's methods (METHODS)


_SHAPE = Var.shape          # the slot's descriptor, read and set once by ArrayVar.shape
