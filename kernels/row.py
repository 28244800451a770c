"""What a row of the op table holds: ``Op``. The rows themselves are in ``maps.py`` and the
``blocks_*.py`` modules, each with its opcode; ``ops.py`` puts them in opcode order."""
import sys
from typing import Callable, NamedTuple, Optional, Tuple


class Traced(NamedTuple):
    """A block row's rules written with numpy's names (``np`` is the namespace passed in), on
    its operands and output in the shapes the row's ``layout`` gives (``NODE_SHAPES``): for an
    "axis" row, ``a`` and ``y`` are (outer, m, inner) arrays and the axis is 1. Run with numpy,
    they are the row's reference, which the tests hold its kernels to; run with
    ``burnumba.numpy`` on traced values, they are its derivative as traced ops (nested
    transformations, Hessians).
    ``c`` is the node's immediate (a scale, a sign, an eps; 0 where the row has none). A row
    of two operands takes both: ``value(np, a, b, c)``, ``vjp(np, a, b, y, g, c, need)`` ->
    (da, db), computing only those ``need`` (a pair of bools) asks for (None for the other),
    and ``jvp(np, a, b, y, ta, tb, c)`` with None for an operand without a tangent."""
    value: Callable    # value(np, a, c): y
    vjp: Callable      # vjp(np, a, y, g, c): the cotangent of a, for the cotangent g of y
    #                    (None: integer data, no cotangent)
    jvp: Callable      # jvp(np, a, y, t, c): the tangent of y, for the tangent t of a (None:
    #                    no tangent)
    batched: Optional[Callable] = None   # batched(np, a, y, t, c): jvp for B tangents at
    # once, t of shape (B,) + a's shape, the result (B,) + y's; None: jvp per direction
    imm: Tuple[float, ...] = (0.0,)      # the immediates c the table-driven tests try


class OnTrace(NamedTuple):
    """A block row's derivative rules that read the trace itself, where numpy's names do not
    reach: arena positions (gather, scatter), rows without a numpy name that they append
    (take's adjoint take_add, cross_entropy's softmax), or how the trace holds an operand
    (matmul's transposed views and unit-vector tangents). Each takes ``np`` (the traced
    namespace, burnumba.numpy), ``t`` the trace (``burnumba/derive/traced.py: Trace``: a
    node's shape, operands, immediate, parameters and traced value, the arena's positions,
    views of them, and new nodes of the rows the row's ``appends`` names) and the node i.
    Where a row has ``traced`` rules too, these replace them for the slots they fill."""
    vjp: Optional[Callable] = None      # vjp(np, t, i, g, need): [(operand node, cotangent)]
    #                                     for the cotangent g of node i (need: a predicate on
    #                                     nodes, None for every operand)
    jvp: Optional[Callable] = None      # jvp(np, t, i, tangent): node i's tangent, from
    #                                     tangent(k), operand k's (None without one)
    batched: Optional[Callable] = None  # batched(np, t, i, tangent, B, identity): B tangents
    # at once, each (B,) + its node's shape; identity: the nodes whose B tangents are the unit
    # vectors


class Sparsity(NamedTuple):
    """What a block row's node adds to the Jacobian's and Hessian's patterns read off a tape
    (burnumba/derive/sparsity.py runs it, compiled). A row without one is taken as dense
    and nonlinear: each output element may depend on every operand element, and every pair
    of those may meet in the Hessian (conservative)."""
    deps: str           # which operand elements each output element reads: "listed" (a
    # scalar of every element of the listed nodes), "inner" (the same, and the bias a0),
    # "reduce" / "whole" / "prefix" (an axis row's line: y[o, k] reads a[o, :, k]; every
    # y[o, j, k] reads the whole line; y[o, j, k] reads a[o, :j+1, k]), "where" (the element
    # of a0 and a1 each, as a tile), "tiles" (the same of the node P[p], a0 and a1: the beta
    # rows' a, b, x), "gather",
    # "scatter", "matmul", "dense" (all of a0 and a1), "dense_a0" (all of a0), "none" (no
    # derivative: integers)
    hessian: str = "nonlinear"   # the pairs it adds: "linear" (none), "bilinear" (a
    # element times b element: the listed x_k[e] w_k[e], matmul's A[i, k] B[k, j]),
    # "squares" (each listed element with itself), "nonlinear" (every pair of what an
    # output element reads)
    exact: bool = True  # False: a superset of the true pattern at some points (the rows
    # read are data, or the rule is coarser than the row)


# How each block ``layout`` shows a node's operands and output to its ``Traced`` rules, from
# the node's parameters P[p:]: (the operands' shapes, the output's, the work space that
# follows the output in the node's slice). An axis row's P[p:p+3] = (outer, m, inner).
def _axis_shapes(reduce):
    def shapes(row, P):
        outer, m, inner = P[0], P[1], P[2]
        a = (outer, m, inner)
        return (a,), ((outer, 1, inner) if reduce else a), 0
    return shapes


def _matrices_shapes(row, P):
    # the row's own shape rule, on as many parameters as it takes (nb, n[, k])
    return row.shapes(*(int(P[k]) for k in range(row.shapes.__code__.co_argcount)))


def _listed_shapes(row, P):
    return None, None, 0             # the operands' shapes are in the trace, not in P


NODE_SHAPES = {
    "axis": _axis_shapes(False),                  # y as large as a
    "axis_rows": _axis_shapes(False),             # inner = 1: the rows along the last axis
    "axis_reduce": _axis_shapes(True),            # y (outer, 1, inner)
    "matrices": _matrices_shapes,                 # stacks of matrices (Op.shapes)
    "listed": _listed_shapes,                     # a scalar of the nodes listed in P
    "inner": _listed_shapes,                      # x_1..x_m, w_1..w_m in P, a bias in a0
    "tiles": _listed_shapes,                      # cond P[p], a0, a1: tiles of the output
}


class Op(NamedTuple):
    name: str
    arity: int                       # 0 leaf, 1 unary, 2 binary; -1: operands listed in P
    kind: str                        # "leaf" | "map" | "block"
    fwd: Optional[Callable] = None   # the forward rule (kernels/rules.py)
    da: Optional[Callable] = None    # map rows: d/da contribution; block rows: unused
    db: Optional[Callable] = None
    bwd: Optional[Callable] = None   # block rows: the backward statements
    jvp: Optional[Callable] = None   # block rows: the tangent statements (tangents in grad)
    domain: Tuple[Tuple[float, float], ...] = ((-3.0, 3.0), (-3.0, 3.0))
    avoid: str = ""                  # where central differences are invalid (kinks, poles)
    kinks: Tuple[Tuple[float, ...], ...] = ()   # exact (a, [b,] da, [db]) at kinks
    doc: str = ""
    inline: bool = False             # block rows: written into the interpreter loop instead
                                     # of called (small rows common in scalar graphs)
    tangent_reads: Optional[str] = None  # block rows: the values their jvp reads (an hvp's
    # lean sweep computes only those): None, its own value and scratch and its operands'
    # (the safe default); "", none (it moves tangents); "cross", each operand's value when
    # the other operand has a tangent (a product: tY = tA B + A tB)
    lanes_of: Optional[str] = None   # a lanes row: it runs the nodes of row ``lanes_of`` for L
    # samples at once, sample innermost (bn.vmap's wide tapes, burnumba/ir/lanes.py); the tracer
    # never writes one, and it has no tangent rule
    fits: Optional[Callable] = None  # lanes rows: fits(params, need_a, need_b, blas), whether a
    # node of ``lanes_of`` with these integer parameters gives every sample the bits that its
    # own sweep gives (the same sums in the same order: not where that sweep calls BLAS)
    layout: Optional[str] = None     # block rows: how the node and its operand lie in the
    # arena, which every module reads from here: "axis", the operand a0 seen as
    # (outer, m, inner) = P[p:p+3] and the output of its size; "axis_reduce", the output
    # (outer, inner); "axis_rows", as "axis" with inner = 1 (rows along the last axis);
    # "matrices", stacks of matrices whose shapes the row's ``shapes`` gives; "listed", a
    # scalar of every element of the nodes P[p+1 : p+1+m], m = P[p] (the rules take the list
    # of their values, ``xs``); "inner", the nodes x_1..x_m, w_1..w_m = P[p+1 : p+1+2m] and
    # the bias a0 if any, listed so; "tiles", the operands (the node P[p], a0, a1) each read
    # as a tile of the output: its shape, a scalar, or its trailing axes; NODE_SHAPES
    traced: Optional[Traced] = None  # block rows: the rules in numpy's names (``Traced``);
    # a row that has them needs no derivative code in burnumba/derive
    public: Optional[str] = None     # the burnumba.numpy function made from the row and its
    # layout: for an "axis" row, ``public(x, axis=None)`` (None: the flattened array)
    shapes: Optional[Callable] = None  # "matrices" rows: the shape rule, shapes(*P[p:p+k])
    # for its k parameters (nb, n[, k]; matmul's nb, M, K, N, sa, sb): (the operands' shapes,
    # the result's shape, the size of the work space after the result in the node's slice),
    # or None where the parameters are not valid
    refused: Tuple[str, ...] = ()    # map and "tiles" rows: per operand, the name of the public
    # function's argument whose derivative is not defined (jn's n; betainc_da's a and b,
    # I's second derivative in its shape), or "": the tracer refuses that operand when it
    # depends on a differentiated argument, with an error that names it, rather than give a
    # silent zero
    sparsity: Optional[Sparsity] = None  # block rows: their rule for sparsity patterns;
    # None: dense and nonlinear (conservative)
    check: Optional[Callable] = None   # block rows whose operands no layout kind describes
    # (gather, scatter, take, take_add, cross_entropy) or is the row's alone (inner, where):
    # the tape-file
    # check of a node, check(t, i), t the checker of burnumba/ir/tapefile.py
    on_trace: Optional[OnTrace] = None   # block rows: rules that read the trace itself
    # (``OnTrace``), for those no numpy name expresses
    appends: Tuple[str, ...] = ()   # the rows the ``on_trace`` rules append nodes of by name
    # (``t.append``, ``t.axis``), besides the row itself: take's take_add, scatter for gather
    opcode: Optional[int] = None    # the row's number in a tape (its place in ops.ROWS),
    # declared where the row is defined and fixed forever: tape files store opcodes, so a new
    # row takes the next free one (ops.py checks that they are unique and run 0 .. n - 1)
    accumulate: Optional[str] = None  # "axis" rows: the numpy ufunc, by name, whose method
    # ``accumulate`` the row computes (cumsum: "add"): np.add.accumulate(x, axis=0) on a
    # traced x makes a node of the row (burnumba/numpy/reductions.py registers it)

    @property
    def diff_operands(self):
        """The operands (0, 1; a "tiles" row's 0, 1, 2 in its rules' order: the node P[p],
        a0, a1) whose derivative the row defines or holds zero: all but the ``refused``
        ones."""
        n = 3 if self.layout == "tiles" else max(self.arity, 0)
        return tuple(k for k in range(n) if not (k < len(self.refused) and self.refused[k]))

    def node_shapes(self, P):
        """The shapes in which a node of this row shows its operands and output to its
        ``traced`` rules (``NODE_SHAPES`` of its layout), from its parameters P (a sequence
        from the node's p): (operands' shapes, output's shape, work space after it)."""
        return NODE_SHAPES[self.layout](self, P)

    @property
    def special(self):
        """The row's IEEE special-value cases, test data kept out of the row (no kernel is
        generated from them, so no key sees them): the entry under its name in its rule
        file's ``IEEE_CASES`` (the module that defines its forward rule, already loaded), else
        in ``ieee_cases.CASES``; () for none. ``ops.special_cases()`` checks that no row has
        both."""
        module = sys.modules.get(getattr(self.fwd, "__module__", None) or "")
        here = getattr(module, "IEEE_CASES", {})
        if self.name in here:
            return here[self.name]
        from .ieee_cases import CASES          # data only tests read: loaded when asked
        return CASES.get(self.name, ())

    def linked(self, tensor_rows):
        """Whether a kernel calls this row's compiled functions: a block row unless it is
        written inline, a map row when some node of it is a tensor (``tensor_rows``, names);
        a map row used only on scalars runs inline, so its loops are neither compiled nor
        linked."""
        return ((self.kind == "block" and not self.inline)
                or (self.kind == "map" and self.name in tensor_rows))


def _always_fits(params, need_a, need_b, blas):
    """The ``fits`` of a lanes row whose sweeps loop whatever the node's sizes."""
    return True
