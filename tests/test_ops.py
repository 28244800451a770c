"""Every elementwise row of the op table, against central differences and HIPS autograd.

Points are drawn by hypothesis from each row's domain (never only 0, +-1 or 2); the points
where central differences are invalid (the row's ``avoid``) are rejected and the kinks are
checked at their exact values instead.
"""
import autograd
import autograd.numpy as anp
import autograd.scipy.special as asp
import autograd.scipy.stats.norm as anorm
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import burnumba as bn
import burnumba.numpy as bnp
import burnumba.scipy.special as bsp
from burnumba.kernels import BY_NAME, OPCODE, ROWS
from conftest import (AG_GAMMAINC, AG_GAMMAINC_DA, AG_GAMMAINCC, AG_GAMMAINCCINV,
                      AG_GAMMAINCINV, AG_JV, AG_KV, AG_KVE, AG_OWENS_T, AG_YV,
                      central_diff)

# row -> (burnumba expression that must produce the row, independent autograd expression)
CASES = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "subtract": (lambda a, b: a - b, lambda a, b: a - b),
    "multiply": (lambda a, b: a * b, lambda a, b: a * b),
    "divide": (lambda a, b: a / b, lambda a, b: a / b),
    "negative": (lambda a: -a, lambda a: -a),
    "square": (lambda a: a ** 2, lambda a: a * a),
    "cube": (lambda a: a ** 3, lambda a: a * a * a),
    "powi": (lambda a: a ** 5, lambda a: a ** 5),
    "pow_c": (lambda a: a ** 2.7, lambda a: a ** 2.7),
    "power": (lambda a, b: a ** b, lambda a, b: a ** b),
    "exp": (np.exp, anp.exp),
    "log": (np.log, anp.log),
    "sqrt": (np.sqrt, anp.sqrt),
    "reciprocal": (lambda a: 1.0 / a, lambda a: 1.0 / a),
    "rsqrt": (bn.rsqrt, lambda a: 1.0 / anp.sqrt(a)),
    "tanh": (np.tanh, anp.tanh),
    "sigmoid": (bn.sigmoid, lambda a: 1.0 / (1.0 + anp.exp(-a))),
    "gelu_tanh": (bn.gelu, lambda a: 0.5 * a * (1.0 + anp.tanh(np.sqrt(2.0 / np.pi)
                                                             * (a + 0.044715 * a ** 3)))),
    "gelu_erf": (lambda a: bn.gelu(a, approximate=False),
                 lambda a: 0.5 * a * (1.0 + asp.erf(a / np.sqrt(2.0)))),
    "sin": (np.sin, anp.sin),
    "cos": (np.cos, anp.cos),
    "relu": (bn.relu, lambda a: anp.maximum(a, 0.0)),
    "absolute": (abs, anp.abs),
    "maximum": (np.maximum, anp.maximum),
    "minimum": (np.minimum, anp.minimum),
    "erf": (bnp.erf, asp.erf),
    # issue #11's ufuncs: np.<name> on a traced value reaches the row of that name
    "sign": (np.sign, anp.sign),
    "sinh": (np.sinh, anp.sinh),
    "cosh": (np.cosh, anp.cosh),
    "tan": (np.tan, anp.tan),
    "arcsin": (np.arcsin, anp.arcsin),
    "arccos": (np.arccos, anp.arccos),
    "arctan": (np.arctan, anp.arctan),
    "exp2": (np.exp2, anp.exp2),
    "expm1": (np.expm1, anp.expm1),
    "log1p": (np.log1p, anp.log1p),
    "log2": (np.log2, anp.log2),
    "log10": (np.log10, anp.log10),
    "floor": (np.floor, anp.floor),
    "ceil": (np.ceil, anp.ceil),
    "arctan2": (np.arctan2, anp.arctan2),
    "hypot": (np.hypot, anp.hypot),
    "logaddexp": (np.logaddexp, anp.logaddexp),
    "logaddexp2": (np.logaddexp2, anp.logaddexp2),
    "fmax": (np.fmax, anp.fmax),
    "fmin": (np.fmin, anp.fmin),
    "remainder": (lambda a, b: a % b, lambda a, b: a % b),
    # more ufuncs (#11); autograd has no derivative of cbrt, copysign or fmod: their formulas
    "arcsinh": (np.arcsinh, anp.arcsinh),
    "arccosh": (np.arccosh, anp.arccosh),
    "arctanh": (np.arctanh, anp.arctanh),
    "cbrt": (np.cbrt, lambda a: anp.sign(a) * anp.abs(a) ** (1.0 / 3.0)),
    "copysign": (np.copysign, lambda a, b: anp.abs(a) * anp.sign(b)),
    "fmod": (np.fmod, lambda a, b: a - b * anp.trunc(a / b)),
    # (away from a = 0, its kinks: heaviside's d/db is 1 there only)
    "heaviside": (np.heaviside, lambda a, b: anp.where(a < 0, 0.0, 1.0) + 0.0 * b),
    "rint": (np.rint, anp.rint),
    "trunc": (np.trunc, anp.trunc),
    "floor_divide": (lambda a, b: a // b, lambda a, b: anp.floor_divide(a, b)),
    # scipy.special's rows (#31): burnumba.scipy.special against autograd.scipy (ndtri as
    # erfinv(2a - 1) sqrt 2, log_ndtr as autograd's norm.logcdf: autograd has neither)
    "gammaln": (bsp.gammaln, asp.gammaln),
    "polygamma": (lambda a: bsp.polygamma(1, a), lambda a: asp.polygamma(1, a)),
    "erfc": (bsp.erfc, asp.erfc),
    "erfinv": (bsp.erfinv, asp.erfinv),
    "ndtri": (bsp.ndtri, lambda a: asp.erfinv(2.0 * a - 1.0) * np.sqrt(2.0)),
    "log_ndtr": (bsp.log_ndtr, anorm.logcdf),
    "i0": (bsp.i0, asp.i0),
    "i1": (bsp.i1, asp.i1),
    "j0": (bsp.j0, asp.j0),
    "j1": (bsp.j1, asp.j1),
    "y0": (bsp.y0, asp.y0),
    "y1": (bsp.y1, asp.y1),
    # (autograd's have no d/da: scipy's values, mpmath's d/da, tests/conftest.py)
    "gammainc": (bsp.gammainc, AG_GAMMAINC),
    "gammaincc": (bsp.gammaincc, AG_GAMMAINCC),
    # (their inverses: scipy's values, autograd's numpy for the slope: tests/conftest.py)
    "gammaincinv": (bsp.gammaincinv, AG_GAMMAINCINV),
    "gammainccinv": (bsp.gammainccinv, AG_GAMMAINCCINV),
    # dP/da: mpmath's, d/dx in autograd's numpy; its a is refused
    # (test_refused_operands_are_named_errors)
    "gammainc_da": (bsp._gammainc_da, AG_GAMMAINC_DA),
    # (n is refused: its domain holds n = 3 only; x broadcast first, as autograd's jn / yn
    # vjp does not sum a broadcast x back)
    "jn": (bsp.jn, lambda n, x: asp.jn(n, x + 0.0 * n)),
    "yn": (bsp.yn, lambda n, x: asp.yn(n, x + 0.0 * n)),
    # Owen's T: scipy's values, its derivatives' closed forms in autograd's numpy (autograd
    # has none; tests/conftest.py)
    "owens_t": (bsp.owens_t, AG_OWENS_T),
    # the Bessel functions of real order: autograd's iv, ive (d/dx only); jv, yv, kv and kve
    # scipy's values with the recurrences in autograd's numpy (tests/conftest.py)
    "jv": (bsp.jv, lambda v, x: AG_JV(v, x + 0.0 * v)),
    "yv": (bsp.yv, lambda v, x: AG_YV(v, x + 0.0 * v)),
    "iv": (bsp.iv, lambda v, x: asp.iv(v, x + 0.0 * v)),
    "ive": (bsp.ive, lambda v, x: asp.ive(v, x + 0.0 * v)),
    "kv": (bsp.kv, lambda v, x: AG_KV(v, x + 0.0 * v)),
    "kve": (bsp.kve, lambda v, x: AG_KVE(v, x + 0.0 * v)),
}
COMPARISONS = {"greater": np.greater, "greater_equal": np.greater_equal, "less": np.less,
               "less_equal": np.less_equal, "equal": np.equal, "not_equal": np.not_equal,
               "logical_and": np.logical_and, "logical_or": np.logical_or,
               "logical_xor": np.logical_xor}
# the unary predicates (#11): 0/1 masks without gradient, as the comparisons
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
              "signbit": np.signbit, "logical_not": np.logical_not}
# block rows are tested in test_structural.py and (the tensor rows) test_tensor_ops.py; the
# adjoint rows (scatter, take_add) and stop_gradient in test_transforms.py
BLOCKS = {"where", "gather", "sum", "sumsq", "inner", "sum_axis", "max_axis", "softmax",
          "causal_softmax", "log_softmax", "logsumexp", "layer_norm", "cross_entropy", "take",
          "matmul", "scatter", "take_add",
          "cumsum", "cumprod", "argsort",    # reductions and scans (#11): test_numpy_reduce.py
          # numpy.linalg's rows, tested in test_numpy_linalg.py
          "solve", "slogdet", "cholesky", "eigh",
          # the incomplete beta rows (three operands, layout tiles) and their derivatives in
          # a and b: test_scipy.py (against mpmath), with betainc_da's / betainc_db's
          # refused a and b
          "betainc", "betaincc", "betainc_dx", "betainc_da", "betainc_db",
          # a user's numba function as an op (bn.njit_op): test_njit_op.py
          "njit_call"} | {
    # the lanes rows (bn.vmap's wide tapes), bit for bit against their rows' own sweeps with
    # every sample: test_vmap.py::test_every_lanes_row_gives_its_rows_bits, from the table
    r.name for r in ROWS if r.lanes_of}
NO_GRADIENT = {"stop_gradient"}
# the block rows that carry their rules in numpy's names: test_traced_rows.py, from the table
TRACED = {r.name for r in ROWS if r.traced is not None}

MAPS = sorted(CASES)


def test_every_row_is_tested():
    """Adding a row to kernels/ops.py without a test here fails."""
    rows = {r.name for r in ROWS if r.kind != "leaf"}
    assert rows == (set(CASES) | set(COMPARISONS) | set(PREDICATES) | BLOCKS | NO_GRADIENT
                    | TRACED)


@pytest.mark.parametrize("name", MAPS)
def test_expression_produces_the_row(name):
    f = CASES[name][0]
    row = BY_NAME[name]
    args = [np.mean(d) + 0.1 for d in row.domain[:row.arity]]
    tape = bn.trace(lambda *xs: f(*xs), *args, argnums=row.diff_operands)
    assert OPCODE[name] in set(tape.op.tolist())


def _points(name):
    row = BY_NAME[name]
    return st.tuples(*[st.floats(lo, hi, allow_nan=False) for lo, hi in row.domain[:row.arity]])


def _valid(row, xs):
    if not row.avoid:
        return True
    env = {"a": xs[0], "b": xs[1] if len(xs) > 1 else 0.0, "abs": abs}
    return not eval(row.avoid, {}, env)


def _check_scalar(name, xs):
    row = BY_NAME[name]
    assume(_valid(row, xs))
    ours, theirs = CASES[name]
    argnums = row.diff_operands              # (an operand the row refuses is data)
    value, grads = bn.value_and_grad(lambda *a: ours(*a), argnums=argnums)(*xs)
    ref_grads = autograd.grad(lambda *a: theirs(*a), argnum=argnums)(*xs) \
        if row.arity > 1 else (autograd.grad(theirs)(*xs),)
    np.testing.assert_allclose(value, theirs(*xs), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads, ref_grads, rtol=1e-10, atol=1e-12)
    for j, k in enumerate(argnums):
        fd = central_diff(theirs, xs, k)
        np.testing.assert_allclose(grads[j], fd, rtol=1e-5, atol=1e-6)


# one hypothesis test per row, so that a failure names the op
@pytest.mark.parametrize("name", MAPS)
def test_scalar_gradient(name):
    given(_points(name))(lambda xs: _check_scalar(name, xs))()


@pytest.mark.parametrize("name", MAPS)
def test_tensor_gradient_with_broadcasting(name, rng):
    """The same rows on arrays, and for binary rows a scalar broadcast against an array."""
    row = BY_NAME[name]
    ours, theirs = CASES[name]

    def sample(shape):
        while True:
            x = rng.uniform(*row.domain[0], size=shape)
            if row.arity == 1 and all(_valid(row, (v,)) for v in x.reshape(-1)):
                return x
            if row.arity == 2:
                return x

    w = rng.normal(size=(3, 4))
    layouts = [((3, 4),)] if row.arity == 1 else [((3, 4), (3, 4)), ((3, 4), ()), ((), (3, 4)),
                                                  ((3, 4), (4,)), ((3, 1), (3, 4))]
    for shapes in layouts:
        for _ in range(50):
            xs = [rng.uniform(lo, hi, size=s) if s else float(rng.uniform(lo, hi))
                  for s, (lo, hi) in zip(shapes, row.domain[:row.arity])]
            bx = np.broadcast_arrays(*[np.asarray(x) for x in xs])
            if all(_valid(row, tuple(float(b.reshape(-1)[j]) for b in bx))
                   for j in range(bx[0].size)):
                break
        argnums = row.diff_operands
        g = bn.grad(lambda *a: np.sum(ours(*a) * w), argnums=argnums)(*xs)
        ref = autograd.grad(lambda *a: anp.sum(theirs(*a) * w), argnum=argnums)(*xs) \
            if row.arity > 1 else (autograd.grad(lambda a: anp.sum(theirs(a) * w))(*xs),)
        for j, k in enumerate(argnums):
            assert np.shape(g[j]) == np.shape(xs[k])
            np.testing.assert_allclose(g[j], ref[j], rtol=1e-10, atol=1e-12)


REFUSED = [(r.name, k) for r in ROWS if r.kind == "map" for k in range(max(r.arity, 0))
           if k not in r.diff_operands]


@pytest.mark.parametrize("name,k", REFUSED, ids=[f"{n}-{k}" for n, k in REFUSED])
def test_refused_operands_are_named_errors(name, k):
    """An operand whose derivative the row does not define (Op.refused) is an error that
    names the argument when it is differentiated, in a scalar, a tensor and a nested trace;
    held constant (data, or bn.stop_gradient) the other gradients run."""
    row = BY_NAME[name]
    f = CASES[name][0]
    arg = row.refused[k]
    xs = [float(np.mean(d)) for d in row.domain[:row.arity]]
    for args in (xs, [np.full(3, x) for x in xs]):
        with pytest.raises(bn.UnsupportedOpError, match=f"{name}: .*`{arg}`.*stop_gradient"):
            bn.grad(lambda *a: np.sum(f(*a)), argnums=k)(*args)
    with pytest.raises(bn.UnsupportedOpError, match=f"`{arg}`"):
        bn.grad(lambda u: bn.grad(lambda *a: f(*a), argnums=1 - k)(
            *[u if j == k else xs[j] for j in range(2)]))(xs[k])
    held = bn.grad(lambda *a: f(*[bn.stop_gradient(x) if j == k else x
                                  for j, x in enumerate(a)]), argnums=1 - k)(*xs)
    assert np.isfinite(held)
    with pytest.raises(bn.UnsupportedOpError, match=f"`{arg}`"):
        bn.jvp(lambda u: f(*[u if j == k else xs[j] for j in range(2)]), (xs[k],), (1.0,))


KINKS = [(r.name, k) for r in ROWS for k in r.kinks]


@pytest.mark.parametrize("name,kink", KINKS, ids=[f"{n}-{k}" for n, k in KINKS])
def test_kinks_at_exact_values(name, kink):
    """Conventions where the derivative is undefined: relu'(0) = abs'(0) = 0 as in torch and
    JAX; maximum / minimum split the gradient evenly at a tie."""
    row = BY_NAME[name]
    xs, expected = kink[:row.arity], kink[row.arity:]
    _, grads = bn.value_and_grad(lambda *a: CASES[name][0](*a),
                                 argnums=row.diff_operands)(*xs)
    assert tuple(grads) == tuple(expected)


@pytest.mark.parametrize("x", [-1.0, -1e-300, 0.0, 1e-300, 1.0, -0.0])
def test_relu_around_zero(x):
    """tinygrad's relu test points, plus the smallest magnitudes: relu' is 0 for x <= 0."""
    assert bn.grad(bn.relu)(x) == (1.0 if x > 0 else 0.0)
    assert bn.grad(bnp.abs)(x) == (np.sign(x) if x != 0 else 0.0)


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_are_masks_without_gradient(name, rng):
    a, b = rng.normal(size=5), rng.normal(size=5)
    b[0] = a[0]                                  # one tie
    np_fn = COMPARISONS[name]
    tape = bn.trace(lambda x, y: np_fn(x, y) * 1.0, a, b, argnums=(0, 1))
    out = slice(tape.off[tape.out], tape.off[tape.out + 1])    # (x * 1.0 is x itself)
    np.testing.assert_array_equal(tape.val[out], np_fn(a, b).astype(float))
    g = bn.grad(lambda x, y: np.sum(np_fn(x, y) * x * y), argnums=(0, 1))(a, b)
    mask = np_fn(a, b)
    np.testing.assert_allclose(g[0], mask * b)
    np.testing.assert_allclose(g[1], mask * a)


@pytest.mark.parametrize("name", sorted(PREDICATES) + ["logical_and", "logical_or",
                                                     "logical_xor"])
def test_predicates_are_masks_usable_in_where_and_arithmetic(name, rng):
    """Masks from values with zeros, signed zeros, infinities and NaNs: numpy's booleans as
    0/1, selecting in where, and no gradient (in tensors and as Python floats)."""
    np_fn = PREDICATES.get(name) or COMPARISONS[name]
    a = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3.0])
    b = np.array([0.0, 2.0, -0.0, np.nan, 0.0, 1.0, 0.0, -np.inf])
    args = (a,) if name in PREDICATES else (a, b)
    want = np_fn(*args).astype(float)
    tape = bn.trace(lambda *xs: np_fn(*xs) * 1.0, *args, argnums=tuple(range(len(args))))
    assert name in tape.ops
    np.testing.assert_array_equal(tape(*args), want)
    w = rng.normal(size=a.size)

    def f(*xs):
        return np.sum(bnp.where(np_fn(*xs), w * w, w) + np_fn(*xs) * 2.0)
    g = bn.grad(f, argnums=tuple(range(len(args))))(*args)
    assert all(np.all(gk == 0.0) for gk in g)
    np.testing.assert_allclose(bn.trace(f, *args)(*args),
                               np.sum(np.where(want, w * w, w) + want * 2.0), rtol=1e-14)
    for k in range(a.size):                            # the scalar (inline) path
        xs = tuple(float(x[k]) for x in args)
        assert bn.trace(lambda *v: np_fn(*v) * 1.0, *xs)(*xs) == want[k]


def test_sigmoid_is_finite_at_large_inputs():
    for x in (-800.0, -40.0, 40.0, 800.0):
        v, g = bn.value_and_grad(bn.sigmoid)(x)
        assert np.isfinite(v) and np.isfinite(g)
        assert 0.0 <= v <= 1.0


def test_integer_powers_of_negative_numbers():
    for p in (2, 3, 4, 5, -1, -2, -3):
        g = bn.grad(lambda x: x ** p)(-1.3)
        np.testing.assert_allclose(g, p * (-1.3) ** (p - 1), rtol=1e-13)
    assert bn.grad(lambda x: x ** 0)(-1.3) == 0.0
    assert bn.grad(lambda x: x ** 1)(-1.3) == 1.0


# The jumps of the piecewise-constant rows, at exact values: HIPS autograd (here) and JAX
# (measured, in the rows' kinks and special cases) treat sign, floor and ceil as constants
# (gradient 0, at the jumps too), and give remainder d/da = 1 and d/db = -floor(a / b)
# there. Ties of fmax / fmin and the origin of hypot follow JAX (its where(a > b | isnan(b),
# a, b) gives a tie to b; autograd splits it), checked in test_kinks_at_exact_values.
JUMPS = [("sign", (0.0,)), ("sign", (-0.0,)), ("floor", (2.0,)), ("floor", (-1.0,)),
         ("floor", (0.0,)), ("ceil", (2.0,)), ("ceil", (-3.0,)), ("remainder", (4.0, 2.0)),
         ("remainder", (-4.0, 2.0)), ("remainder", (3.0, -1.5)), ("remainder", (0.0, 0.7)),
         ("rint", (0.5,)), ("rint", (-2.5,)), ("trunc", (2.0,)), ("trunc", (-1.0,)),
         ("fmod", (4.0, 2.0)), ("fmod", (-4.0, 2.0)), ("fmod", (3.0, -1.5)),
         ("floor_divide", (4.0, 2.0)), ("floor_divide", (-3.0, 1.5))]


@pytest.mark.parametrize("name,xs", JUMPS, ids=[f"{n}-{x}" for n, x in JUMPS])
def test_jumps_give_what_autograd_gives(name, xs):
    import warnings
    ours, theirs = CASES[name]
    argnums = tuple(range(len(xs)))
    value, grads = bn.value_and_grad(lambda *a: ours(*a), argnums=argnums)(*xs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # "Output seems independent of input"
        ref = [autograd.grad(theirs, k)(*xs) for k in argnums]
    assert value == theirs(*xs)
    assert tuple(grads) == tuple(float(r) for r in ref), (name, xs, grads, ref)


@pytest.mark.parametrize("name", MAPS)
def test_float32_gradients_with_broadcasting(name, rng):
    """Every row in float32 (numpy's broadcasting, a tile operand for binary rows): float32
    gradients, close to float64's at the same numbers."""
    row = BY_NAME[name]
    ours = CASES[name][0]
    shapes = [(3, 4)] if row.arity == 1 else [(3, 4), (4,)]
    for _ in range(50):
        xs = [rng.uniform(lo, hi, size=s) for s, (lo, hi) in zip(shapes, row.domain)]
        bx = np.broadcast_arrays(*xs)
        if all(_valid(row, tuple(float(b.reshape(-1)[j]) for b in bx)) for j in range(12)):
            break
    xs32 = [x.astype(np.float32) for x in xs]
    xs64 = [x.astype(np.float64) for x in xs32]         # the same numbers
    argnums = row.diff_operands
    w = rng.normal(size=(3, 4))

    def loss(*a):
        return np.sum(ours(*a) * w)
    v32, g32 = bn.value_and_grad(loss, argnums=argnums)(*xs32)
    v64, g64 = bn.value_and_grad(loss, argnums=argnums)(*xs64)
    np.testing.assert_allclose(v32, v64, rtol=1e-4, atol=1e-4)
    for a, b in zip(g32, g64):
        assert a.dtype == np.float32 and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
