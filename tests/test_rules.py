"""The map rows' rules as Python functions (kernels/rules.py): inside the contract, callable
on floats, and inlined by the generator as written."""
import inspect
import math

import numpy as np
import pytest

from burnumba.kernels import _gen, rules
from burnumba.kernels.ops import ROWS
from burnumba.kernels.rules import RuleError

MAP_ROWS = [r for r in ROWS if r.kind == "map"]
SLOTS = [(r, slot) for r in MAP_ROWS for slot in ("fwd", "da", "db")
         if getattr(r, slot) is not None]


@pytest.mark.parametrize("row,slot", SLOTS, ids=[f"{r.name}-{s}" for r, s in SLOTS])
def test_every_rule_keeps_to_the_contract(row, slot):
    """A rule's arguments are the contract's names (a, b, c, y, g; fwd without y and g; no
    b in a unary row), read from its own signature; it calls only the math functions."""
    fn = getattr(row, slot)
    assert callable(fn), f"{row.name}.{slot} is not a Python function"
    rule = rules.read(fn, row.name, slot, row.arity)
    assert rule.params == tuple(inspect.signature(fn).parameters)
    assert set(rule.params) <= set(rules.CONTRACT[(slot, row.arity)])


def _env(row, rng):
    """A point inside the row's domain and away from its ``avoid`` region, with c."""
    while True:
        xs = [float(rng.uniform(lo, hi)) for lo, hi in row.domain[:row.arity]]
        a, b = xs[0], xs[1] if row.arity == 2 else 0.0
        if not row.avoid or not eval(row.avoid, {}, {"a": a, "b": b, "abs": abs}):
            c = 3.0 if row.name == "powi" else 2.5 if row.name == "pow_c" else 0.0
            return {"a": a, "b": b, "c": c}


def _call(fn, env):
    return fn(*[env[p] for p in inspect.signature(fn).parameters])


@pytest.mark.parametrize("row", MAP_ROWS, ids=lambda r: r.name)
def test_rules_called_on_floats_agree_with_differences(row):
    """Each row's Python rules, called directly on Python floats (math's functions), give
    derivatives that match central differences of its forward rule: the rules are checked
    as plain Python, before any generator or kernel touches them."""
    rng = np.random.default_rng(sum(map(ord, row.name)))
    for _ in range(5):
        env = _env(row, rng)
        y = _call(row.fwd, env)
        assert isinstance(y, float) and math.isfinite(y), (row.name, env, y)
        for slot, x in (("da", "a"), ("db", "b")):
            fn = getattr(row, slot)
            if fn is None:
                continue
            h = 1e-6 * max(1.0, abs(env[x]))
            hi, lo = dict(env), dict(env)
            hi[x] += h
            lo[x] -= h
            fd = (_call(row.fwd, hi) - _call(row.fwd, lo)) / (2 * h)
            got = _call(fn, dict(env, y=y, g=1.0))
            assert math.isclose(got, fd, rel_tol=1e-5, abs_tol=1e-6), (row.name, slot, env)
            # the upstream gradient scales the contribution linearly
            assert math.isclose(_call(fn, dict(env, y=y, g=-2.5)), -2.5 * got, rel_tol=1e-14,
                                abs_tol=1e-300)


@pytest.mark.parametrize("row", MAP_ROWS, ids=lambda r: r.name)
def test_the_generator_inlines_the_rules_as_written(row):
    """The row module holds each rule's expression verbatim (no call, no closure)."""
    source = _gen.row_module(row)
    for slot in ("fwd", "da", "db"):
        if getattr(row, slot) is not None:
            rule = _gen.rule(row, slot)
            body = _gen._flatten(_gen._inline(rule, "out = ")).strip().splitlines()[-1]
            assert body[len("out = "):] in source, (row.name, slot)
    assert "lambda" not in source


# Rules outside the contract, each with the words its error must contain.
def _two_statements(a, g):
    s = a * a
    return g * s


def _reads_a_global(a, g):
    return g * _SCALE


def _rebinds(a, g):
    g = 2.0 * g
    return g * a


def _loops(a, g):
    for _ in range(2):
        a = a + 1.0
    return g * a


_SCALE = 2.0
_k = 3.0
BAD = [
    (lambda a, x: a * x, "da", 1, "'x' is not one of the rule arguments"),
    (lambda a, b: a * b, "da", 1, "'b' is not one of the rule arguments"),
    (lambda a, y: a * y, "fwd", 2, "'y' is not one of the rule arguments"),
    (lambda a, g: g * expp(a), "da", 1, "calls something other than the math functions"),  # noqa: F821
    (lambda a, g: g * nme, "da", 1, "'nme' is neither a rule argument"),  # noqa: F821
    (_reads_a_global, "da", 1, "'_SCALE' is neither"),
    (_rebinds, "da", 1, "rebinds 'g'"),
    (_loops, "da", 1, "is not `name = expression`"),
    (lambda a, g=1.0: g * a, "da", 1, "no defaults"),
    ((lambda k: lambda a: a * k)(2.0), "fwd", 1, "closures"),
    (lambda a, g: g * (lambda z: z)(a), "da", 1, "cannot be inlined"),
    ("g * a", "da", 1, "a rule is a Python function"),
    (lambda a, g: g, "db", 1, "has no db rule"),
]


@pytest.mark.parametrize("fn,slot,arity,words", BAD, ids=[w for *_, w in BAD])
def test_a_rule_outside_the_contract_is_an_error_naming_the_op(fn, slot, arity, words):
    import burnumba as bn
    assert issubclass(RuleError, bn.KernelError)
    with pytest.raises(RuleError) as e:
        rules.read(fn, "myop", slot, arity)
    assert "op 'myop'" in str(e.value) and words in str(e.value)


def test_statements_and_several_lambdas_on_one_line():
    """A def's ``name = value`` statements come before its expression, their names
    prefixed with _ (the sweep's loop index is q, its tangent accumulator t); of several
    lambdas on one line, each rule is its own."""
    r = rules.read(_two_statements, "sq", "da", 1)
    assert r == rules.Rule(("a", "g"), ("_s = a * a",), "g * _s")
    da, db = (lambda b, g: g * b), (lambda a, g: -g * a)
    assert rules.read(da, "m", "da", 2).expr == "g * b"
    assert rules.read(db, "m", "db", 2).expr == "-g * a"


_IMM = {"powi": 5.0, "pow_c": 2.5}         # x ** 3 would be the cube row


@pytest.mark.parametrize("row", MAP_ROWS, ids=lambda r: r.name)
@pytest.mark.parametrize("shape", [(), (3, 4)], ids=["scalar", "tensor"])
def test_compiled_rows_agree_with_their_rules_called_directly(row, shape):
    """Two engines from one table, row by row: the compiled kernel (the rules inlined into
    the sweep, a tile operand for binary rows) against the plain-Python one
    (kernels/reference.py), which calls each rule function itself."""
    import burnumba as bn
    from burnumba.kernels import engine, layout, reference
    from test_ieee import CALLS
    rng = np.random.default_rng(sum(map(ord, row.name)) + len(shape))
    c = _IMM.get(row.name, 0.0)
    shapes = [shape] if row.arity == 1 else [shape, shape[1:]]
    xs = [rng.uniform(lo, hi, size=s) if s else float(rng.uniform(lo, hi))
          for s, (lo, hi) in zip(shapes, row.domain)]
    call = CALLS[row.name]
    w = rng.normal(size=shape)
    tape = bn.trace(lambda *a: np.sum(call(*a, c) * w), *xs, argnums=row.diff_operands)
    assert row.name in tape.ops
    F1, C = tape.F0.copy(), engine.control_block(tape.dtype)
    v_kernel = tape.kernel.caller(tape.I, F1, C)(layout.MODE_VALUE_AND_GRAD)
    F2 = tape.F0.copy()
    v_ref = reference.value_and_grad(tape.I, F2)
    np.testing.assert_allclose(v_kernel, v_ref, rtol=1e-13)
    np.testing.assert_allclose(F1, F2, rtol=1e-12, atol=1e-300, equal_nan=True)


BLOCK_SLOTS = [(r, slot) for r in ROWS if r.kind == "block"
               for slot in ("fwd", "bwd") + (() if r.lanes_of else ("jvp",))]


@pytest.mark.parametrize("row,slot", BLOCK_SLOTS, ids=[f"{r.name}-{s}" for r, s in BLOCK_SLOTS])
def test_every_block_rule_is_a_def_of_the_sweeps_names(row, slot):
    """A block row's rules are defs whose arguments are the sweep's names; the generator
    pastes their templates in, and the row module holds the statements."""
    fn = getattr(row, slot)
    assert callable(fn) and fn.__name__ == f"_{row.name}_{slot}"
    assert set(inspect.signature(fn).parameters) <= set(rules.BLOCK_ARGS)
    source = rules.block_source(fn, row.name, slot)
    assert "_axis(" not in source and "_batch(" not in source      # templates pasted


def _block_bad_argument(i, x, val):
    val[i] = x


def _block_bad_call(i, p, P, a0, off):
    outer, m, inner, oa, ia = _axis_(i, p, P, a0, off)


def _block_other_names(i, q, P, a0, off):
    outer, m, inner, ia, oa = _axis_(i, q, P, a0, off)


def _block_global(i, val):
    val[i] = _SCALE


@rules.template
def _early(i, val):
    if val[i] != val[i]:
        return i
    return i


def _block_early(i, val):
    i = _early(i, val)


def _axis_(i, p, P, a0, off):
    return 0, 0, 0, 0, 0


@rules.template
def _scaled_(u, ua, us):
    s = u[ua] * us
    return s


@rules.template
def _bumps_(u, ua):
    ua = ua + 1
    s = u[ua]
    return s


def _block_renamed(i, oy, val, grad):
    s = _scaled_(grad, oy, 2)
    val[i] = s


@rules.template
def _fills_(u, ua, n):
    for k in range(n):
        u[ua + k] = 0.0


@rules.template
def _fills_twice_(u, ua, n):
    _fills_(u, ua, n)
    s = _scaled_(u, ua, 3)
    return s


def _block_nested(i, oy, val, grad):
    s = _fills_twice_(grad, oy, 2)
    val[i] = s


def _block_fills(i, oy, val, grad):
    _fills_(grad, oy, 3)


def _block_drops_results(i, oy, val):
    _scaled_(val, oy, 2)


def _block_wants_results(i, oy, val):
    s = _fills_(val, oy, 2)
    val[i] = s


def _block_assigns_renamed(i, oy, val):
    s = _bumps_(val, i)
    val[oy] = s


_axis_ = rules.template(_axis_)
BLOCK_BAD = [
    (_block_bad_argument, "'x' is not one of the block arguments"),
    (_block_bad_call, "assign its results to its own names"),
    (_block_other_names, "'q' is not one of the block arguments"),
    (_block_global, "'_SCALE' is neither a block argument"),
    (_block_early, "only the last statement of a template returns"),
    (_block_assigns_renamed, "it assigns its argument 'ua'"),
    (_block_drops_results, "it returns s: assign them, s = _scaled_(...)"),
    (_block_wants_results, "one that only writes arrays is called as a statement"),
    ("val[i] = 0.0", "a block rule is a def"),
]


@pytest.mark.parametrize("fn,words", BLOCK_BAD, ids=[w for _, w in BLOCK_BAD])
def test_a_block_rule_outside_the_contract_is_an_error_naming_the_op(fn, words):
    with pytest.raises(RuleError) as e:
        rules.block_source(fn, "myblock", "fwd")
    assert "op 'myblock'" in str(e.value) and words in str(e.value)


def test_a_template_that_only_writes_arrays_is_called_as_a_statement():
    """sum_axis's _sum_lines writes its sums into val or grad and returns nothing."""
    source = rules.block_source(_block_fills, "myblock", "fwd")
    assert "grad[oy + k] = 0.0" in source and "range(3)" in source and "_fills_" not in source


def test_a_template_pastes_the_templates_it_calls_in_its_callers_names():
    """_sum_lines calls _sum4: the inner template is pasted in the outer one's names, then
    the outer one's arguments are renamed to the caller's."""
    source = rules.block_source(_block_nested, "myblock", "fwd")
    assert "grad[oy + k] = 0.0" in source and "range(2)" in source
    assert "s = grad[oy] * 3" in source and "_fills_" not in source and "_scaled_" not in source


def test_a_template_called_with_other_names_and_numbers_reads_them():
    """A template's arguments may be other names or numbers: they are written in place of
    the arguments (matmul's _four_sums reads val or grad, with strides 1, K or N)."""
    source = rules.block_source(_block_renamed, "myblock", "fwd")
    assert "s = grad[oy] * 2" in source and "u" not in source.split()
