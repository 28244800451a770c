"""Every row at NaN, +-inf and +-0, from its special-value cases (kernels/ieee_cases.py):
values as numpy, gradients as JAX (with the exceptions the rows document). A new row cannot
skip them."""
import math

import numba
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp
import burnumba.scipy.special as bsp
from burnumba.kernels import ROWS
from graphs import adjoints

SPECIALS = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0)
MAP_ROWS = [r for r in ROWS if r.kind == "map"]
# lanes rows (bn.vmap's wide tapes) are checked against their rows' own sweeps, bit for bit,
# with these rows' cases: tests/test_vmap.py
BLOCK_ROWS = [r for r in ROWS if r.kind == "block" and not r.lanes_of]

# How each map row is reached from numpy code (the tracer picks the row; checked below).
CALLS = {
    "add": lambda a, b, c: a + b, "subtract": lambda a, b, c: a - b,
    "multiply": lambda a, b, c: a * b, "divide": lambda a, b, c: a / b,
    "negative": lambda a, c: -a, "square": lambda a, c: a ** 2, "cube": lambda a, c: a ** 3,
    "powi": lambda a, c: a ** c, "pow_c": lambda a, c: a ** c,
    "power": lambda a, b, c: a ** b, "exp": lambda a, c: np.exp(a),
    "log": lambda a, c: np.log(a), "sqrt": lambda a, c: np.sqrt(a),
    "reciprocal": lambda a, c: 1.0 / a, "rsqrt": lambda a, c: bn.rsqrt(a),
    "tanh": lambda a, c: np.tanh(a), "sigmoid": lambda a, c: bn.sigmoid(a),
    "gelu_tanh": lambda a, c: bn.gelu(a, approximate=True),
    "gelu_erf": lambda a, c: bn.gelu(a, approximate=False),
    "sin": lambda a, c: np.sin(a), "cos": lambda a, c: np.cos(a),
    "relu": lambda a, c: bn.relu(a), "absolute": lambda a, c: np.abs(a),
    "maximum": lambda a, b, c: np.maximum(a, b), "minimum": lambda a, b, c: np.minimum(a, b),
    "greater": lambda a, b, c: np.greater(a, b), "greater_equal": lambda a, b, c: a >= b,
    "less": lambda a, b, c: a < b, "less_equal": lambda a, b, c: a <= b,
    "equal": lambda a, b, c: np.equal(a, b), "not_equal": lambda a, b, c: np.not_equal(a, b),
    "erf": lambda a, c: bnp.erf(a), "stop_gradient": lambda a, c: bn.stop_gradient(a),
    "sign": lambda a, c: np.sign(a),
    "sinh": lambda a, c: np.sinh(a),
    "cosh": lambda a, c: np.cosh(a),
    "tan": lambda a, c: np.tan(a),
    "arcsin": lambda a, c: np.arcsin(a),
    "arccos": lambda a, c: np.arccos(a),
    "arctan": lambda a, c: np.arctan(a),
    "exp2": lambda a, c: np.exp2(a),
    "expm1": lambda a, c: np.expm1(a),
    "log1p": lambda a, c: np.log1p(a),
    "log2": lambda a, c: np.log2(a),
    "log10": lambda a, c: np.log10(a),
    "floor": lambda a, c: np.floor(a),
    "ceil": lambda a, c: np.ceil(a),
    "arctan2": lambda a, b, c: np.arctan2(a, b),
    "hypot": lambda a, b, c: np.hypot(a, b),
    "logaddexp": lambda a, b, c: np.logaddexp(a, b),
    "logaddexp2": lambda a, b, c: np.logaddexp2(a, b),
    "fmax": lambda a, b, c: np.fmax(a, b),
    "fmin": lambda a, b, c: np.fmin(a, b),
    "remainder": lambda a, b, c: a % b,
    # more ufuncs (#11)
    "arcsinh": lambda a, c: np.arcsinh(a),
    "arccosh": lambda a, c: np.arccosh(a),
    "arctanh": lambda a, c: np.arctanh(a),
    "cbrt": lambda a, c: np.cbrt(a),
    "copysign": lambda a, b, c: np.copysign(a, b),
    "fmod": lambda a, b, c: np.fmod(a, b),
    "heaviside": lambda a, b, c: np.heaviside(a, b),
    "rint": lambda a, c: np.rint(a),
    "trunc": lambda a, c: np.trunc(a),
    "floor_divide": lambda a, b, c: a // b,
    "isnan": lambda a, c: np.isnan(a),
    "isinf": lambda a, c: np.isinf(a),
    "isfinite": lambda a, c: np.isfinite(a),
    "signbit": lambda a, c: np.signbit(a),
    "logical_not": lambda a, c: np.logical_not(a),
    "logical_and": lambda a, b, c: np.logical_and(a, b),
    "logical_or": lambda a, b, c: np.logical_or(a, b),
    "logical_xor": lambda a, b, c: np.logical_xor(a, b),
    # scipy.special's rows (#31); polygamma's order is its immediate
    "gammaln": lambda a, c: bsp.gammaln(a), "polygamma": lambda a, c: bsp.polygamma(int(c), a),
    "erfc": lambda a, c: bsp.erfc(a), "erfinv": lambda a, c: bsp.erfinv(a),
    "ndtri": lambda a, c: bsp.ndtri(a), "log_ndtr": lambda a, c: bsp.log_ndtr(a),
    "i0": lambda a, c: bsp.i0(a), "i1": lambda a, c: bsp.i1(a),
    "j0": lambda a, c: bsp.j0(a), "j1": lambda a, c: bsp.j1(a),
    "y0": lambda a, c: bsp.y0(a), "y1": lambda a, c: bsp.y1(a),
    "gammainc": lambda a, b, c: bsp.gammainc(a, b),
    "gammaincc": lambda a, b, c: bsp.gammaincc(a, b),
    "gammaincinv": lambda a, b, c: bsp.gammaincinv(a, b),
    "gammainccinv": lambda a, b, c: bsp.gammainccinv(a, b),
    "gammainc_da": lambda a, b, c: bsp._gammainc_da(a, b),
    "jn": lambda a, b, c: bsp.jn(a, b), "yn": lambda a, b, c: bsp.yn(a, b),
    "owens_t": lambda a, b, c: bsp.owens_t(a, b),
    "jv": lambda a, b, c: bsp.jv(a, b), "yv": lambda a, b, c: bsp.yv(a, b),
    "iv": lambda a, b, c: bsp.iv(a, b), "ive": lambda a, b, c: bsp.ive(a, b),
    "kv": lambda a, b, c: bsp.kv(a, b), "kve": lambda a, b, c: bsp.kve(a, b),
}


def same(got, want, rtol=1e-13):
    """Equal as the conventions mean it: NaN, inf and zeros (with their sign) exactly, other
    numbers to rtol (burnumba's fast tanh and gelu differ from numpy in the last ulp)."""
    got, want = float(got), float(want)
    if math.isnan(want) or math.isinf(want) or want == 0.0:
        return (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1, got) == math.copysign(1, want))
    return math.isclose(got, want, rel_tol=rtol)


def same_grad(got, want, rtol=1e-13):
    """As ``same``, up to the sign of a zero (a gradient slot starts at +0.0)."""
    if float(want) == 0.0:
        return float(got) == 0.0
    return same(got, want, rtol)


def test_the_cases_are_data_kept_apart_by_row_name():
    """The cases live in kernels/ieee_cases.py or in a rule file's ``IEEE_CASES``, not in the
    table (no kernel is generated from them): every entry names a row, and every row but the
    leaves and the lanes rows has one."""
    from burnumba.kernels import ieee_cases, ops
    assert "special" not in ops.Op._fields
    cases = ops.special_cases()
    assert set(cases) == {r.name for r in ROWS if r.kind != "leaf" and not r.lanes_of}
    assert set(ieee_cases.CASES) <= set(cases)
    assert all(r.special is cases[r.name] for r in MAP_ROWS + BLOCK_ROWS)


def test_a_rule_file_may_hold_its_rows_cases(monkeypatch):
    """A row's cases moved from ieee_cases.py into its rule file's ``IEEE_CASES`` are read
    from there (``Op.special``, ``ops.special_cases``); a row with cases in both places, or
    an entry that names no row of its file, is refused."""
    from burnumba.kernels import BY_NAME, KernelError, ieee_cases, ops
    row, family = BY_NAME["cumsum"], ops.blocks_scan
    theirs = getattr(family, "IEEE_CASES", {})
    before = ops.special_cases()
    moved = ieee_cases.CASES["cumsum"]
    monkeypatch.setattr(ieee_cases, "CASES", {k: v for k, v in ieee_cases.CASES.items()
                                              if k != "cumsum"})
    monkeypatch.setattr(family, "IEEE_CASES", {**theirs, "cumsum": moved}, raising=False)
    assert row.special is moved and ops.special_cases() == before
    monkeypatch.setattr(ieee_cases, "CASES", {**ieee_cases.CASES, "cumsum": moved})
    with pytest.raises(KernelError, match="'cumsum' are both in ieee_cases.py and in"):
        ops.special_cases()
    monkeypatch.setattr(family, "IEEE_CASES", {**theirs, "tanh": moved})
    with pytest.raises(KernelError, match="names 'tanh', not a row of that file"):
        ops.special_cases()


def test_every_row_meets_every_special_value():
    """Each operand of each map row meets NaN, +inf, -inf, +0.0 and -0.0 in its cases; each
    block row's inputs hold all five."""
    for row in MAP_ROWS:
        assert row.special, f"{row.name} has no special cases"
        for k in range(row.arity):
            for v in SPECIALS:
                assert any(same(case[0][k], v) for case in row.special), \
                    f"{row.name}: operand {k} never meets {v!r}"
    for row in BLOCK_ROWS:
        flat = [float(x) for case in row.special for i in case[1]
                if np.asarray(i).dtype.kind == "f" for x in np.ravel(i)]
        for v in SPECIALS:
            assert any(same(x, v) for x in flat), f"{row.name} never meets {v!r}"


def _map_function(row, c):
    call = CALLS[row.name]
    if row.arity == 1:
        return lambda a: call(a, c)
    return lambda a, b: call(a, b, c)


def _run_map(row, operands, c, dtype, width):
    """(value, grads) of one case: as Python floats (width 0, the dispatcher's inline scalar
    code) or as arrays of ``width`` elements (the row's tensor loops; the second operand of a
    binary row is then broadcast as a scalar tile when width is negative). An operand whose
    derivative the row refuses (``Op.refused``) is data, its gradient None."""
    f = _map_function(row, c)
    argnums = row.diff_operands
    if width == 0:
        args = tuple(float(x) for x in operands)
    else:
        args = [np.full(abs(width), x, dtype) for x in operands]
        if width < 0 and row.arity == 2:
            args[1] = np.full(1, operands[1], dtype)
        args = tuple(args)
    tape = bn.trace(lambda *xs: np.sum(f(*xs)), *args, argnums=argnums)
    assert row.name in tape.ops, f"{row.name}: the call reached {sorted(tape.ops)}"
    value, grads = tape.value_and_grad(*args)
    out = bn.trace(f, *args, argnums=argnums)(*args)
    grads = dict(zip(argnums, grads))
    return np.ravel(out), [None if k not in grads else
                           np.ravel(grads[k]) / (abs(width) if width < 0 and k == 1 else 1)
                           for k in range(row.arity)]


@pytest.mark.parametrize("row", MAP_ROWS, ids=lambda r: r.name)
@pytest.mark.parametrize("width", [0, 5, -5], ids=["scalar", "tensor", "tile"])
def test_map_rows_follow_their_conventions(row, width):
    for operands, c, value, grads in row.special:
        got, got_grads = _run_map(row, operands, c, np.float64, width)
        where = f"{row.name}{operands} c={c}"
        assert all(same(v, value) for v in got), f"{where}: value {got}, want {value}"
        if grads is None or all(g is None for g in grads):
            continue
        for k, (g, want) in enumerate(zip(got_grads, grads)):
            if k not in row.diff_operands:
                assert want is None, f"{where}: a refused operand has no gradient case"
                continue
            assert all(same_grad(x, want) for x in g), f"{where}: d/d{'ab'[k]} {g}, want {want}"


@pytest.mark.parametrize("row", MAP_ROWS, ids=lambda r: r.name)
def test_map_rows_follow_their_conventions_in_float32(row):
    """NaN, inf and zeros survive float32 unchanged; finite numbers to float32 precision."""
    for operands, c, value, grads in row.special:
        if not all(np.isfinite(np.float32(x)) == np.isfinite(x) for x in operands):
            continue                                 # an operand that overflows float32
        got, _ = _run_map(row, operands, c, np.float32, 3)
        want = float(np.float32(value)) if np.isfinite(value) else value
        if np.isfinite(want) and want != 0.0:
            assert all(math.isclose(float(v), want, rel_tol=3e-6) for v in got), (row.name,
                                                                                   operands)
        elif math.isfinite(float(np.float64(np.float32(value)))) or not np.isfinite(value):
            assert all(same(v, want) for v in got) or (
                abs(float(value)) < 1e-37), (row.name, operands, got, value)


def _block_case(expr, inputs):
    """The case's function of its inputs, the float inputs it differentiates, and the
    arguments (integer targets / indices stay integer data)."""
    args, argnums = [], []
    for k, x in enumerate(inputs):
        a = np.asarray(x)
        if a.dtype.kind in "iu":
            args.append(a.astype(np.int64))
        else:
            args.append(a.astype(np.float64) if a.ndim else float(a))
            argnums.append(k)
    names = "abc"[:len(inputs)]
    f = eval(f"lambda {', '.join(names)}: {expr}", {"bn": bn, "bnp": bnp, "np": np,
                                                    "_sym": adjoints, "numba": numba})
    return f, tuple(argnums), args


@pytest.mark.parametrize("row", BLOCK_ROWS, ids=lambda r: r.name)
def test_block_rows_follow_their_conventions(row):
    assert row.special, f"{row.name} has no special cases"
    for expr, inputs, value, cot, grads in row.special:
        f, argnums, args = _block_case(expr, inputs)
        if expr == "bnp.where(a, b, c)":
            argnums = (1, 2)                    # the mask is data
        cot = np.asarray(cot, dtype=np.float64)

        def loss(*xs):
            y = f(*xs)
            return np.sum(y * cot), y
        (_, y), g = bn.value_and_grad(loss, argnums=argnums, has_aux=True)(*args)
        tape = bn.value_and_grad(loss, argnums=argnums, has_aux=True).trace(*args)
        assert row.name in tape.ops, f"{expr} reached {sorted(tape.ops)}"
        where = f"{row.name}: {expr} at {inputs}"
        assert all(same(a, b) for a, b in zip(np.ravel(y), np.ravel(value))), \
            f"{where}: value {y}, want {value}"
        for k, gk in zip(argnums, g):
            if grads[k] is None:
                continue
            assert all(same_grad(a, b, 1e-12) for a, b in zip(np.ravel(gk), np.ravel(grads[k]))), \
                f"{where}: grad of input {k} {gk}, want {grads[k]}"


def test_the_reported_nan_bugs():
    """The cases that returned a number where numpy and JAX return NaN."""
    nan = float("nan")
    assert math.isnan(bn.value_and_grad(lambda x: bn.relu(x))(nan)[0])
    assert math.isnan(bn.value_and_grad(lambda x: np.maximum(x, 1.0))(nan)[0])
    assert math.isnan(bn.value_and_grad(lambda x: np.maximum(1.0, x))(nan)[0])
    assert math.isnan(bn.value_and_grad(lambda x: np.clip(x, -1.0, 1.0))(nan)[0])
    assert math.isnan(bn.grad(lambda x: np.abs(x))(nan))
    # d/dy 0 ** y = 0 for y > 0 (0 * log 0 is NaN inside the textbook rule)
    assert bn.grad(lambda x, y: x ** y, argnums=1)(0.0, 2.0) == 0.0


def test_masked_softmax_and_logsumexp_are_exact_with_finite_gradients():
    x = np.array([[1.0, -np.inf, 2.0, -np.inf], [0.5, 0.25, -np.inf, -1.0]])
    w = np.array([[1.0, 2.0, -1.0, 0.5], [0.3, -0.7, 1.1, 0.2]])
    for f in (lambda x: np.sum(bn.softmax(x) * w), lambda x: np.sum(bn.logsumexp(x) * w[:, 0])):
        value, g = bn.value_and_grad(f)(x)
        assert np.isfinite(value) and np.all(np.isfinite(g))
        assert np.all(g[np.isneginf(x)] == 0.0)
    p = bn.value_and_grad(lambda x: (np.sum(bn.softmax(x)), bn.softmax(x)), has_aux=True)(x)[0][1]
    keep = ~np.isneginf(x)
    e = np.where(keep, np.exp(np.where(keep, x, 0.0) - x.max(axis=1, keepdims=True)), 0.0)
    np.testing.assert_allclose(p, e / e.sum(axis=1, keepdims=True), rtol=1e-15, atol=0)


@pytest.mark.parametrize("row", ["softmax", "log_softmax", "logsumexp", "causal_softmax",
                                 "layer_norm", "cross_entropy"])
def test_eager_numpy_paths_keep_the_rows_conventions(row):
    """bn.softmax & co. also run on plain numpy arrays (the nn layers' apply samples that
    way): there they give the traced row's values at the special points, NaN included."""
    import warnings
    for expr, inputs, value, cot, grads in next(r for r in ROWS if r.name == row).special:
        f, _, args = _block_case(expr, inputs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            eager = f(*args)
        assert all(same(a, b, 1e-12) for a, b in zip(np.ravel(eager), np.ravel(value))), \
            f"eager {expr} at {inputs}: {eager}, want {value}"


def _deviation(row, operands, grads):
    """The gradients burnumba documents where it parts from JAX (see the op table)."""
    if row.name == "absolute":
        a = operands[0]
        return (math.nan,) if math.isnan(a) else (0.0,) if a == 0.0 else grads
    return grads


@pytest.mark.parametrize("row", MAP_ROWS, ids=lambda r: r.name)
def test_every_measured_special_point(row):
    """The wider set of measured points (tests/ieee_points.py), through the scalar path."""
    from ieee_points import SPECIAL
    for operands, c, value, grads in SPECIAL.get(row.name, row.special):
        got, got_grads = _run_map(row, operands, c, np.float64, 0)
        where = f"{row.name}{operands} c={c}"
        assert same(got[0], value), f"{where}: value {got}, want {value}"
        if grads is None or all(g is None for g in grads):
            continue
        for g, want in zip(got_grads, _deviation(row, operands, grads)):
            if g is not None:
                assert same_grad(g[0], want), f"{where}: grad {g}, want {want}"
