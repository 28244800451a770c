"""The op table's rules are small Python functions; this module reads them back as code.

``fwd=lambda a, b: a + b`` or ``da=lambda b, g: g * b`` (or a ``def`` next to the row) is
real Python: a linter sees it, a test can call it on floats, and a typo fails at import
rather than as a numba typing error in generated code. The generator does not call the
function: it reads its source (``inspect`` finds the file and line, ``ast`` the function),
and inlines the body where the sweep has the same names as locals, so the compiled code is
what a hand-written string rule gave (no call, no closure).

**The contract is the argument names.** A rule takes any of the names its slot allows, in
any order; the generator takes them from the signature:

* ``fwd``: ``a`` (and ``b`` for a binary row), the inputs; ``c``, the node's immediate;
* ``da`` / ``db``: those and ``y``, the output, and ``g``, the upstream gradient. The
  tangent (forward mode) is derived from them, with ``g`` bound to the operand's tangent
  (an elementwise derivative is diagonal).

The body is a ``return`` of one expression, after any number of ``name = expression``
statements (numba has no assignment expressions; the statements are inlined before the
expression). It may call the math functions in ``MATH`` (which exist with one meaning in
math, numba and numpy) and read ``inf`` and ``nan``, and nothing else: no globals, no
closures, no defaults.
"""
import ast
import copy
import functools
import inspect
import textwrap
from typing import NamedTuple, Tuple

from .errors import KernelError

# The math functions a rule may call: math's names, which numba compiles to libm calls.
# floor, ceil, fmod, exp2, cbrt, rint and trunc are numpy's (float results, which numba
# compiles too).
MATH = ("exp", "log", "sqrt", "tanh", "sin", "cos", "fabs", "copysign", "erf", "erfc",
        "sinh", "cosh", "tan", "asin", "acos", "atan", "atan2", "hypot", "exp2", "expm1",
        "log1p", "log2", "log10", "floor", "ceil", "fmod", "asinh", "acosh", "atanh", "cbrt",
        "rint", "trunc")
# The special functions a map rule may call (kernels/special.py: scipy.special's, compiled
# with numba where a kernel calls them; the rows of maps_special.py use them)
# (kernels/special_bessel.py: the Bessel functions; special_gamma.py: the incomplete gamma
# functions; special_beta.py: the incomplete beta function, which the three-operand block
# rows of blocks_beta.py call, as block rules may; special_owens.py: Owen's T function;
# special_bessel_real.py: the Bessel functions of real order and their derivatives in x). Each
# module's code keys only the compiled objects whose rules call one of its functions (keys.py:
# SPECIAL_MODULES).
SPECIAL_MODULES = {
    "special.py": ("lgamma", "polygamma", "erfinv", "ndtri", "log_ndtr", "i0", "i1"),
    "special_bessel.py": ("j0", "j1", "y0", "y1", "jn", "yn"),
    "special_gamma.py": ("gammainc", "gammaincc", "gammaincinv", "gammainccinv",
                         "gammainc_da"),
    "special_beta.py": ("betainc", "betaincc", "betainc_dx", "betainc_dab",
                        "betainc_dx_dab"),
    "special_owens.py": ("owens_t",),
    "special_bessel_real.py": ("jv", "jv_dx", "yv", "yv_dx", "iv", "iv_dx", "ive", "ive_dx",
                               "kv", "kv_dx", "kve", "kve_dx"),
}
SPECIAL = tuple(name for names in SPECIAL_MODULES.values() for name in names)
# The math a map row's loops call in a form of their own that vectorizes (kernels/_native.py
# VECTOR_MATH), where the dispatcher's scalar case calls libm: the two may differ in the last
# bit, so a node of such a row gives the same bits only where it stays a tensor or a scalar.
LOOP_MATH = ("exp",)
# Names of constants a rule may read (IEEE's infinity and NaN have no literal).
CONSTANTS = ("inf", "nan")

# The argument names each slot allows, for a unary and a binary row.
CONTRACT = {
    ("fwd", 1): ("a", "c"), ("fwd", 2): ("a", "b", "c"),
    ("da", 1): ("a", "c", "y", "g"), ("da", 2): ("a", "b", "c", "y", "g"),
    ("db", 2): ("a", "b", "c", "y", "g"),
}


class RuleError(KernelError, ValueError):
    """A rule that the generator cannot inline (the message names the op, the rule
    and the fix). A KernelError (``bn.KernelError``): no kernel can be made from it."""


class Rule(NamedTuple):
    params: Tuple[str, ...]            # the contract names the rule takes
    statements: Tuple[str, ...]        # ``name = expression`` lines run before ``expr``
    expr: str                          # the value, as source


@functools.lru_cache(maxsize=None)
def calls_loop_math(row):
    """Whether a map row's rules call a LOOP_MATH function (its scalar case and its loops
    may then differ in the last bit)."""
    for slot in ("fwd", "da", "db"):
        fn = getattr(row, slot)
        if fn is None:
            continue
        r = read(fn, row.name, slot, row.arity)
        for code in r.statements + (r.expr,):
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in LOOP_MATH for n in ast.walk(ast.parse(code.strip()))):
                return True
    return False


@functools.lru_cache(maxsize=None)
def _functions(filename):
    """{first line: [Lambda and FunctionDef nodes starting there]} of a source file, parsed
    once (a rule is then found without walking the file again)."""
    with open(filename) as fh:
        tree = ast.parse(fh.read(), filename)
    index = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Lambda):
            index.setdefault(n.lineno, []).append(n)
        elif isinstance(n, ast.FunctionDef):
            first = n.decorator_list[0].lineno if n.decorator_list else n.lineno
            index.setdefault(first, []).append(n)
    return index


def _inside(node, positions):
    """Whether every source position of a code object lies inside ``node``."""
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return all(start <= (ln, col) and (end_ln, end_col) <= end
               for ln, end_ln, col, end_col in positions)


def _node(fn, where):
    """The ast node (Lambda or FunctionDef) that defined ``fn``: the one on its first line
    whose span holds all of its code's positions (several lambdas can share a line)."""
    code = fn.__code__
    try:
        index = _functions(inspect.getsourcefile(fn))
    except (OSError, TypeError):
        raise RuleError(f"{where}: the rule's source cannot be read; define it in a .py "
                        "file (a lambda or a def next to the row)") from None
    # the instructions' source spans (RESUME and the like have an empty one)
    positions = [p for p in code.co_positions()
                 if None not in p and (p[0], p[2]) != (p[1], p[3])]
    found = [n for n in index.get(code.co_firstlineno, ())
             if isinstance(n, ast.FunctionDef) or _inside(n, positions)]
    if isinstance(fn, type(lambda: 0)) and fn.__name__ != "<lambda>":
        found = [n for n in found if isinstance(n, ast.FunctionDef) and n.name == fn.__name__]
    else:
        found = [n for n in found if isinstance(n, ast.Lambda)]
    # the innermost match: a lambda inside another lambda's span is the tighter one
    found.sort(key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
    if not found:
        raise RuleError(f"{where}: cannot find the rule's source")
    return found[0]


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


def read(fn, op, slot, arity):
    """The Rule of ``fn``, the ``slot`` rule (fwd, da, db) of the map row ``op``; raises
    RuleError when it steps outside the contract."""
    where = f"op {op!r}, rule {slot}"
    allowed = CONTRACT.get((slot, arity))
    if allowed is None:
        raise RuleError(f"{where}: a row of arity {arity} has no {slot} rule")
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise RuleError(f"{where}: a rule is a Python function (lambda {', '.join(allowed)}: "
                        f"...), not {type(fn).__name__}")
    return _read(fn, op, slot, allowed)


@functools.lru_cache(maxsize=None)
def _read(fn, op, slot, allowed):
    where = f"op {op!r}, rule {slot}"
    # a copy: the renaming below edits the tree, and the file's parsed tree is cached (one
    # rule function may serve two rows, as the incomplete gamma inverses' d/da)
    node = copy.deepcopy(_node(fn, where))
    args = node.args
    if (args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults
            or fn.__closure__):
        raise RuleError(f"{where}: a rule takes plain arguments named from "
                        f"{', '.join(allowed)} (no defaults, *args, keywords or closures)")
    params = tuple(a.arg for a in args.args)
    bad = [p for p in params if p not in allowed]
    if bad:
        raise RuleError(f"{where}: argument {bad[0]!r} is not one of the rule arguments "
                        f"{', '.join(allowed)}; rename it (the names are the contract)")
    if isinstance(node, ast.Lambda):
        body, value = [], node.body
    else:
        stmts = list(node.body)
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
            stmts = stmts[1:]                           # a docstring
        if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None:
            raise RuleError(f"{where}: a def rule ends with `return <expression>`")
        body, value = stmts[:-1], stmts[-1].value
    known = set(params) | set(MATH) | set(SPECIAL) | set(CONSTANTS)
    local = {}
    statements = []
    for st in body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)):
            raise RuleError(f"{where}: `{ast.unparse(st)}` is not `name = expression`; a "
                            "rule's statements only bind names")
        _check_names(st.value, known, where)
        name = st.targets[0].id
        if name in allowed or name in local:
            raise RuleError(f"{where}: `{ast.unparse(st)}` rebinds {name!r}; use another "
                            "name")
        if name.startswith("_"):
            raise RuleError(f"{where}: local names starting with _ are the generator's; "
                            f"rename {name!r}")
        known.add(name)
        # the rule's locals become _name in the sweep, where q, t, j ... are loop indices
        # and accumulators of the generated code
        local[name] = "_" + name
        statements.append(ast.unparse(_Rename(local).visit(st)))
    _check_names(value, known, where)
    return Rule(params, tuple(statements), ast.unparse(_Rename(local).visit(value)))


class _Rename(ast.NodeTransformer):
    """Names -> other names (a str: a map rule's locals), or -> the name or number a
    template's call gave for an argument (an ast node)."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        new = self.names.get(node.id, node.id)
        if isinstance(new, str):
            return ast.Name(new, node.ctx)
        return ast.copy_location(copy.deepcopy(new), node)


def _check_names(node, known, where):
    for n in ast.walk(node):
        if isinstance(n, (ast.Lambda, ast.NamedExpr, ast.ListComp, ast.GeneratorExp,
                          ast.DictComp, ast.SetComp, ast.Await, ast.Yield)):
            raise RuleError(f"{where}: `{ast.unparse(n)}` cannot be inlined into a kernel; "
                            "write plain arithmetic, comparisons and `x if c else y`")
        if isinstance(n, ast.Compare) and len(n.ops) > 1:
            raise RuleError(f"{where}: `{ast.unparse(n)}` chains comparisons, which traced "
                            "derivatives cannot evaluate; write `x < y and y < z`")
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name)
                                            and n.func.id in MATH + SPECIAL):
            raise RuleError(f"{where}: `{ast.unparse(n)}` calls something other than the "
                            f"math functions {', '.join(MATH + SPECIAL)}")
    unknown = sorted(_names(node) - known)
    if unknown:
        raise RuleError(f"{where}: {unknown[0]!r} is neither a rule argument nor one of the "
                        f"math functions; rules may not read globals (write the number, "
                        f"or compute it in a `name = ...` statement)")


def source(rule):
    """The statements and the expression of a Rule, for messages and digests."""
    return textwrap.dedent("\n".join(rule.statements + (f"return {rule.expr}",)))


# -- block rows ----------------------------------------------------------------------------
# A block row's rules (fwd, bwd, jvp) are defs whose body is statements over the sweep's
# locals: they take any of these names (ops.py describes them), and read nothing else but
# their own locals, MATH, SPECIAL, CONSTANTS and BLOCK_GLOBALS. Statements several rules share are
# templates (below), called as ``names = _template(args)``.
BLOCK_ARGS = ("i", "oy", "ny", "c", "p", "P", "off", "a0", "a1", "need", "val", "grad",
              "scratch", "blas", "gemm", "gemv", "lanes", "user")
BLOCK_GLOBALS = ("range", "max", "min", "int", "abs", "ERR_INDEX", "ERR_TARGET")
# Math only block rules call. ``vexp`` is exp computed in arithmetic (kernels/_prims.exp,
# within 1 ulp of libm's): a loop whose body calls it can vectorize, where a call of libm's
# exp keeps it scalar; in a loop that stays scalar anyway, libm's exp is faster. A block
# that exponentiates many values does it in a loop of its own with vexp (softmax).
BLOCK_MATH = ("vexp",)


def template(fn):
    """Mark ``fn`` as a template of block statements. A block rule calls it as
    ``r1, r2 = fn(x, y)`` with its returned names (``return r1, r2``), or as a statement,
    ``fn(x, y)``, when it only writes arrays and returns nothing; for each
    argument, a name or a number: the template's own argument name, or another name or a
    number, which the generator writes in place of the argument (``fn(val, 1)`` for
    ``def fn(u, step)`` reads ``val`` with step 1). The generator pastes the template's
    statements in place of the call, so compiled code has no call; a template may call
    another, which is pasted into it first. Called from Python, it is a function."""
    fn.__bn_template__ = True
    return fn


def block_source(fn, op, slot):
    """The statements of block rule ``fn`` (the ``slot`` rule of row ``op``), templates
    pasted in, as source; raises RuleError when it steps outside the contract."""
    return _block_source(fn, op, slot)


def _templated(fn, call):
    """The template a ``names = f(args)`` call names, or None."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
        t = fn.__globals__.get(call.func.id)
        if getattr(t, "__bn_template__", False):
            return t
    return None


def _plain_body(node, where):
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        raise RuleError(f"{where}: a rule takes plain arguments (no defaults, *args or "
                        "keywords)")
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]                                 # a docstring
    return tuple(a.arg for a in args.args), body


def _name_list(node):
    """[names] of a Name or a tuple of Names, else None."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts]
    return None


class _Paste(ast.NodeTransformer):
    """``names = template(args)`` -> the template's statements."""

    def __init__(self, fn, where):
        self.fn, self.where = fn, where

    def visit_Assign(self, node):
        t = _templated(self.fn, node.value)
        if t is None:
            return self.generic_visit(node)
        where, body = self._body(t, node.value)
        if not body or not isinstance(body[-1], ast.Return):
            raise RuleError(f"{where}: a template that returns ends with `return <names>`; "
                            "one that only writes arrays is called as a statement")
        returned = _name_list(body[-1].value)
        if len(node.targets) != 1 or _name_list(node.targets[0]) != returned:
            raise RuleError(f"{where}: assign its results to its own names: "
                            f"{', '.join(returned or ['...'])} = {t.__name__}(...)")
        return self._paste(t, where, node.value, body[:-1])

    def visit_Expr(self, node):
        """``template(args)`` as a statement: a template that writes arrays, returns none."""
        t = _templated(self.fn, node.value)
        if t is None:
            return self.generic_visit(node)
        where, body = self._body(t, node.value)
        if body and isinstance(body[-1], ast.Return):
            returned = ", ".join(_name_list(body[-1].value) or ["..."])
            raise RuleError(f"{where}: it returns {returned}: assign them, "
                            f"{returned} = {t.__name__}(...)")
        return self._paste(t, where, node.value, body)

    def _body(self, t, call):
        where = f"{self.where}, template {t.__name__}"
        return where, _plain_body(_node(t, where), where)[1]

    def _paste(self, t, where, call, body):
        """The template's statements ``body``, its arguments renamed to the call's."""
        params = _plain_body(_node(t, where), where)[0]
        given = call.args
        if (len(given) != len(params) or call.keywords
                or not all(isinstance(a, (ast.Name, ast.Constant)) for a in given)):
            raise RuleError(f"{where}: call it with a name or a number for each argument "
                            f"of {t.__name__}({', '.join(params)})")
        renamed = {p: a for p, a in zip(params, given)
                   if not (isinstance(a, ast.Name) and a.id == p)}
        inner = [s for s in ast.walk(ast.Module(body, [])) if isinstance(s, ast.Return)]
        if inner:
            raise RuleError(f"{where}: only the last statement of a template returns (an "
                            "error code is the calling rule's to return)")
        # the templates this one calls, pasted in its own names first (looked up in its
        # module: _sum_lines calls _sum4)
        body = _Paste(t, where).visit(ast.Module(copy.deepcopy(body), [])).body
        assigned = {n.id for st in body for n in ast.walk(st)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        if assigned & set(renamed):
            raise RuleError(f"{where}: it assigns its argument "
                            f"{sorted(assigned & set(renamed))[0]!r}: call it with that "
                            "argument's own name")
        return [_Rename(renamed).visit(st) for st in body]


@functools.lru_cache(maxsize=None)
def _block_source(fn, op, slot):
    where = f"op {op!r}, block rule {slot}"
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise RuleError(f"{where}: a block rule is a def of the sweep's names "
                        f"({', '.join(BLOCK_ARGS)}), not {type(fn).__name__}")
    node = _node(fn, where)
    if not isinstance(node, ast.FunctionDef) or fn.__closure__:
        raise RuleError(f"{where}: a block rule is a module-level def (statements)")
    params, body = _plain_body(node, where)
    bad = [p for p in params if p not in BLOCK_ARGS]
    if bad:
        raise RuleError(f"{where}: argument {bad[0]!r} is not one of the block arguments "
                        f"{', '.join(BLOCK_ARGS)}; rename it (the names are the contract)")
    module = ast.fix_missing_locations(_Paste(fn, where).visit(ast.Module(body, [])))
    stored = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)
              and isinstance(n.ctx, (ast.Store, ast.Del))}
    known = (set(params) | stored | set(MATH) | set(BLOCK_MATH) | set(SPECIAL)
             | set(CONSTANTS) | set(BLOCK_GLOBALS))
    unknown = sorted(_names(module) - known)
    if unknown:
        raise RuleError(f"{where}: {unknown[0]!r} is neither a block argument, a local, nor "
                        "a math function; a template is called as `names = template(args)`")
    return ast.unparse(module) + "\n"

