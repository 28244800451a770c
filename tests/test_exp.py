"""burnumba's own exp (kernels/_prims.exp; compiled in kernels/_native, where the map rows'
loops call it instead of libm's so that they vectorize): within 1 ulp of numpy's exp
everywhere, subnormal results included, with IEEE's special values exact."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import burnumba as bn
import burnumba.numpy as bnp
from burnumba.kernels import _prims

# the edges: the largest finite result, the first overflow, the smallest subnormal result,
# the first underflow to 0, the normal/subnormal boundary, and 0 of both signs
EDGES = [709.782712893384, 709.7827128933841, 710.0, -708.3964185322641, -708.4,
         -745.1332191019411, -745.1332191019412, -746.0, 0.0, -0.0, 1e-300, -1e-300,
         0.5 * math.log(2.0), -0.5 * math.log(2.0), 1.0, -1.0]


def ulps(got, want):
    """|got - want| in units of the last place of ``want`` (subnormals: of the smallest
    subnormal)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.abs(got - want) / np.spacing(np.abs(want))


def points(rng):
    return np.concatenate([rng.uniform(-746.0, 710.0, 200_000), rng.normal(0.0, 3.0, 200_000),
                           rng.uniform(-1e-3, 1e-3, 20_000),
                           rng.uniform(-745.2, -708.0, 50_000),     # subnormal results
                           EDGES])


def python_exp(x):
    """_prims.exp on a Python float (numpy scalars inside: their overflow to inf and NaN
    casts are the IEEE results wanted, not warnings)."""
    with np.errstate(all="ignore"):
        return float(_prims.exp(x))


def compiled_exp():
    numba = pytest.importorskip("numba")
    from burnumba.kernels import _native

    @numba.njit(error_model="numpy")
    def run(x, y):
        for j in range(x.size):
            y[j] = _native.exp(x[j])
    return run


def assert_python_exp_right(x):
    """The Python definition at x: inf and 0 exactly where numpy's are, else within 1 ulp."""
    with np.errstate(over="ignore"):
        want = np.exp(x)
    got = python_exp(x)
    if math.isinf(want) or want == 0.0:
        assert got == want
    else:
        assert ulps(got, want) <= 1.0, (x, got, want)


@pytest.mark.parametrize("x", EDGES + [math.inf, -math.inf])
def test_python_exp_at_the_edges(x):
    assert_python_exp_right(x)


def test_python_exp_of_nan_is_nan():
    assert math.isnan(python_exp(math.nan))


@given(st.floats(min_value=-800.0, max_value=800.0))
def test_python_exp_within_one_ulp(x):
    assert_python_exp_right(x)


def test_compiled_exp_within_one_ulp_everywhere():
    run = compiled_exp()
    x = points(np.random.default_rng(0))
    y = np.empty_like(x)
    run(x, y)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    finite = np.isfinite(want) & (want > 0.0)
    assert ulps(y[finite], want[finite]).max() <= 1.0
    assert ulps(y[finite], want[finite]).mean() < 0.2
    np.testing.assert_array_equal(y[~finite], want[~finite])      # inf and 0 exactly


def test_compiled_exp_special_values():
    run = compiled_exp()
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308])
    y = np.empty_like(x)
    run(x, y)
    assert np.isnan(y[0])
    np.testing.assert_array_equal(y[1:], [np.inf, 0.0, 1.0, 1.0, np.inf, 0.0])


def test_compiled_exp_matches_the_python_definition():
    run = compiled_exp()
    x = points(np.random.default_rng(1))[::97]
    y = np.empty_like(x)
    run(x, y)
    np.testing.assert_array_equal(y, [python_exp(v) for v in x])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "gelu"])
def test_the_map_rows_that_use_it_agree_with_numpy(op, dtype):
    """Tensors (the vectorized loops) against numpy in float64, over a wide range, with the
    special values in the same tensor."""
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(0.0, 4.0, 4096), rng.uniform(-0.06, 0.06, 512),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 30.0, -30.0, 700.0, -700.0]])
    xd = x.astype(dtype).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        # the rows' own formulas with numpy's exp (libm's), where they are not numpy's
        e = np.exp(-np.abs(xd))
        u = 0.7978845608028654 * (xd + 0.044715 * xd ** 3)
        want = {"exp": np.exp(xd), "tanh": np.tanh(xd),
                "sigmoid": np.where(xd >= 0.0, 1.0, e) / (1.0 + e),
                "gelu": xd / (1.0 + np.exp(-2.0 * u))}[op].astype(dtype).astype(np.float64)
    fn = {"exp": bnp.exp, "tanh": bnp.tanh, "sigmoid": bn.sigmoid,
          "gelu": lambda v: bn.gelu(v, approximate=True)}[op]
    got = bn.trace(fn, x.astype(dtype))(x.astype(dtype))
    assert got.dtype == np.dtype(dtype)
    rtol = 1e-13 if dtype == "float64" else 2e-7
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=1e-300)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])


# -- block rows: softmax and causal_softmax exponentiate a slice of 64 values or more in one
# loop of their own with this exp (rules.BLOCK_MATH's vexp), fewer in one pass with libm's.
# The large path must follow the small one's conventions row by row: the special values
# (tested on small slices by the op table) and the values themselves, to an ulp or two.
def _rows_with_specials(rng, n):
    x = rng.normal(0.0, 3.0, (n, 5))
    x[1, 2] = -np.inf                      # a masked entry: 0
    x[2, :] = -np.inf                      # no finite entry: NaN
    x[3, 0] = np.nan                       # NaN: the lane is NaN
    x[4, 4] = np.inf                       # +inf: the lane is NaN
    x[5, 1] = x[5, 3] = -0.0
    x[6, :] = [800.0, -800.0, 0.0, 1.0, 2.0]     # shifted values far below -746
    return x


def _assert_close_rows(big, small):
    assert np.array_equal(np.isnan(big), np.isnan(small))
    ok = ~np.isnan(small)
    assert np.array_equal(big[ok] == 0.0, small[ok] == 0.0)
    np.testing.assert_allclose(big[ok], small[ok], rtol=4e-16, atol=0.0)


def test_softmax_of_a_large_slice_agrees_with_small_ones():
    rng = np.random.default_rng(3)
    x = _rows_with_specials(rng, 40)                       # 200 values: the vexp path
    w = rng.normal(size=x.shape)
    vg = bn.value_and_grad(lambda x: np.sum(bn.softmax(x, axis=-1) * w))
    big = bn.trace(lambda x: bn.softmax(x, axis=-1), x)(x)
    small = np.array([bn.trace(lambda r: bn.softmax(r), row)(row) for row in x])
    _assert_close_rows(big, small)
    # along axis 0 (inner > 1) as well
    big0 = bn.trace(lambda x: bn.softmax(x, axis=0), x.T)(x.T)
    _assert_close_rows(big0.T, small)
    # the gradient (the backward is one code for both): against the rows' own
    g = vg(x)[1]
    rows = [bn.value_and_grad(lambda r, wr=wr: np.sum(bn.softmax(r) * wr))(r)[1]
            for r, wr in zip(x, w)]
    finite = np.isfinite(small).all(axis=1)
    np.testing.assert_allclose(g[finite], np.array(rows)[finite], rtol=1e-14, atol=1e-300)


def test_causal_softmax_of_a_large_slice_agrees_with_small_ones():
    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 3.0, (16, 3, 3))                   # 144 values: the vexp path
    x[1, 2, 0] = -np.inf
    x[2, 0, 0] = -np.inf                                   # row 0 has no finite entry
    x[3, 1, 0] = np.nan
    x[4, 2, 1] = np.inf
    x[5, 0, 1] = x[5, 0, 2] = np.nan                       # the masked half is never read
    big = bn.trace(lambda x: bn.causal_softmax(x, 0.5), x)(x)
    small = np.array([bn.trace(lambda b: bn.causal_softmax(b, 0.5), blk)(blk) for blk in x])
    _assert_close_rows(big.reshape(-1, 3), small.reshape(-1, 3))
    assert np.all(big[:, np.triu_indices(3, 1)[0], np.triu_indices(3, 1)[1]] == 0.0)
