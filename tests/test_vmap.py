"""bn.vmap: one traced tape run for every sample, exactly as a Python loop, on every core."""
import concurrent.futures as cf

import numpy as np
import pytest

import burnumba as bn
from burnumba.kernels import rules


def _mlp_loss(p, x, y):
    h = np.tanh(x @ p["W1"] + p["b1"])
    h = np.tanh(h @ p["W2"] + p["b2"])
    return np.sum((h @ p["W3"] + p["b3"] - y) ** 2)


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return {"W1": rng.normal(size=(2, 16)), "b1": rng.normal(size=16) * 0.1,
            "W2": rng.normal(size=(16, 16)) / 4, "b2": np.zeros(16),
            "W3": rng.normal(size=(16, 1)), "b3": np.zeros(1)}


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_per_sample_gradients_equal_a_loop_bit_for_bit(threads):
    rng = np.random.default_rng(1)
    p, X, Y = _params(), rng.normal(size=(300, 2)), rng.normal(size=(300, 1))
    got = bn.vmap(bn.grad(_mlp_loss), in_axes=(None, 0, 0), threads=threads)(p, X, Y)
    g = bn.grad(_mlp_loss)
    for i in range(len(X)):
        want = g(p, X[i], Y[i])
        for k in p:
            np.testing.assert_array_equal(got[k][i], want[k], err_msg=(k, i))
    assert got["W2"].shape == (300, 16, 16)


def test_float32_and_value_and_grad_pytrees_of_outputs():
    rng = np.random.default_rng(2)
    p = {k: v.astype(np.float32) for k, v in _params().items()}
    X, Y = rng.normal(size=(70, 2)).astype(np.float32), rng.normal(size=(70, 1)).astype(np.float32)
    vg = bn.vmap(bn.value_and_grad(_mlp_loss), in_axes=(None, 0, 0))
    values, grads = vg(p, X, Y)
    assert values.shape == (70,) and values.dtype == np.float32
    one = bn.value_and_grad(_mlp_loss)
    for i in (0, 33, 69):
        v, g = one(p, X[i], Y[i])
        assert values[i] == v
        np.testing.assert_array_equal(grads["b1"][i], g["b1"])


def test_in_axes_and_out_axes():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 5, 4))           # batch along axis 1
    w = rng.normal(size=4)
    f = lambda a, w: np.tanh(a @ w)                                 # noqa: E731
    out = bn.vmap(f, in_axes=(1, None))(A, w)
    assert out.shape == (5, 3)
    np.testing.assert_array_equal(out, np.stack([bn.trace(f, A[:, i], w)(A[:, i], w)
                                                 for i in range(5)]))
    out_t = bn.vmap(f, in_axes=(1, None), out_axes=1)(A, w)
    np.testing.assert_array_equal(out_t, out.T)
    # a plain function of one batched argument: in_axes=0 by default
    np.testing.assert_allclose(bn.vmap(lambda x: np.sum(x ** 2))(A[0]), np.sum(A[0] ** 2, 1))


def test_in_axes_pytrees():
    """An in_axes entry may be a pytree of the argument's structure (as in JAX): a dict of
    parameters with some leaves batched and others shared, a tuple inside a tuple."""
    rng = np.random.default_rng(4)
    p = {"w": rng.normal(size=(6, 3)), "b": rng.normal(size=3)}
    X = rng.normal(size=(6, 3))

    def f(p, x):
        return np.tanh(p["w"] * x + p["b"])
    out = bn.vmap(f, in_axes=({"w": 0, "b": None}, 0))(p, X)
    loop = [bn.trace(f, {"w": p["w"][i], "b": p["b"]}, X[i])({"w": p["w"][i], "b": p["b"]},
                                                                X[i]) for i in range(6)]
    np.testing.assert_array_equal(out, np.stack(loop))
    pair = bn.vmap(lambda t: t[0] @ t[1][0], in_axes=((1, (0,)),))((p["w"].T, (X,)))
    np.testing.assert_allclose(pair, np.einsum("ij,ij->i", X, p["w"]), rtol=1e-13)


def test_vmap_inside_a_trace():
    """Inside another transformation (a traced argument, or f closing over a traced value)
    vmap traces f once per sample into that trace and stacks the outputs: gradients flow
    through every sample, and the results equal the loop written out by hand."""
    rng = np.random.default_rng(6)
    X, Y, w = rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=3)

    def loss(w, x, y):
        return (np.tanh(x @ w) - y) ** 2

    def by_vmap(w):
        return np.sum(bn.vmap(loss, in_axes=(None, 0, 0))(w, X, Y))

    def by_loop(w):
        return sum(loss(w, X[i], Y[i]) for i in range(5))
    assert np.array_equal(bn.grad(by_vmap)(w), bn.grad(by_loop)(w))
    # a closure over the traced value, samples along axis 1 in and out (in_axes=1, out_axes=1)
    closed = bn.grad(lambda w: np.sum(bn.vmap(lambda x: x * w, in_axes=1, out_axes=1)(X.T)
                                      * X.T))(w)
    np.testing.assert_allclose(closed, np.sum(X * X, 0), rtol=1e-14)
    # per-sample gradients under an outer gradient: the gradient of the summed squared
    # per-sample gradient norms (DP-SGD's clipping statistics), against the loop
    def norms(vm):
        def total(w):
            if vm:
                G = bn.vmap(bn.grad(loss), in_axes=(None, 0, 0))(w, X, Y)
                return np.sum(G * G)
            return sum(np.sum(bn.grad(loss)(w, X[i], Y[i]) ** 2) for i in range(5))
        return bn.grad(total)(w)
    assert np.array_equal(norms(True), norms(False))
    # a traced batched argument
    Hs = bn.jacfwd(lambda X: bn.vmap(lambda x: np.sin(x) * w)(X))(X)
    assert Hs.shape == (5, 3, 5, 3)
    np.testing.assert_allclose(Hs[2, :, 2, :], np.diag(np.cos(X[2]) * w), rtol=1e-14)
    assert not Hs[2, :, 3, :].any()
    # an error in f there is the user's alone, not chained to the switch to the trace
    with pytest.raises(bn.UnsupportedOpError, match="nancumsum") as info:
        bn.grad(lambda w: np.sum(bn.vmap(lambda x: np.nancumsum(x * w))(X)))(w)
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_nested_transformations_inside_vmap():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    f = lambda x: np.sum(np.sin(x) * x)                             # noqa: E731
    H = bn.vmap(bn.hessian(f))(X)
    for i in (0, 39):
        np.testing.assert_array_equal(H[i], bn.hessian(f)(X[i]))
    hv = bn.vmap(lambda x, v: bn.hvp(f, x, v))(X, X[::-1].copy())
    np.testing.assert_allclose(hv[0], bn.hessian(f)(X[0]) @ X[-1], rtol=1e-13)


def test_threads_calling_one_vmapped_function_at_once():
    rng = np.random.default_rng(5)
    p, X, Y = _params(), rng.normal(size=(256, 2)), rng.normal(size=(256, 1))
    ps = bn.vmap(bn.grad(_mlp_loss), in_axes=(None, 0, 0), threads=2)
    serial = [ps(p, X[k:k + 128], Y[k:k + 128]) for k in (0, 64, 128)]
    with cf.ThreadPoolExecutor(6) as ex:
        results = list(ex.map(lambda k: ps(p, X[k:k + 128], Y[k:k + 128]), [0, 64, 128] * 8))
    for j, got in enumerate(results):
        for k in p:
            np.testing.assert_array_equal(got[k], serial[j % 3][k])


def test_unbatched_arguments_are_read_at_every_call():
    """A training loop calls one vmapped gradient with new parameters every step."""
    loss = lambda w, x, y: (np.dot(x, w) - y) ** 2                 # noqa: E731
    ps = bn.vmap(bn.grad(loss), in_axes=(None, 0, 0))
    X, Y = np.ones((4, 2)), np.zeros(4)
    np.testing.assert_array_equal(ps(np.array([1.0, 0.0]), X, Y)[0], [2.0, 2.0])
    np.testing.assert_array_equal(ps(np.array([3.0, 0.0]), X, Y)[0], [6.0, 6.0])
    f = bn.vmap(lambda w, x: np.dot(x, w), in_axes=(None, 0))
    np.testing.assert_array_equal(f(np.array([1.0, 0.0]), X), [1.0] * 4)
    np.testing.assert_array_equal(f(np.array([3.0, 0.0]), X), [3.0] * 4)
    h = bn.vmap(bn.hessian(lambda x, c: np.sum(c * x ** 3)), in_axes=(0, None))
    np.testing.assert_array_equal(h(X, 1.0)[0], np.diag([6.0, 6.0]))
    np.testing.assert_array_equal(h(X, 2.0)[0], np.diag([12.0, 12.0]))


def test_calls_unlike_the_last_one_take_the_general_path():
    """A vmapped function keeps the plan of its last call and reuses it for arguments of the
    same structure, shapes, dtypes and static values; any other call is planned again. Each
    call here is against a loop of bn.grad on the same arguments."""
    def loss(p, x, y, power):
        return np.sum((np.tanh(x @ p["W"] + p["b"]) - y) ** power)

    rng = np.random.default_rng(7)
    p = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    g = bn.grad(loss)
    ps = bn.vmap(g, in_axes=(None, 0, 0, None))

    def check(p, X, Y, power):
        got = ps(p, X, Y, power)
        for i in range(len(X)):
            want = g(p, X[i], Y[i], power)
            for k in want:
                np.testing.assert_array_equal(got[k][i], want[k], err_msg=(k, i))
            assert got[k].dtype == np.asarray(want[k]).dtype

    X, Y = rng.normal(size=(80, 3)), rng.normal(size=(80, 2))
    check(p, X, Y, 2)
    check(p, X, Y, 2)                                      # the plan
    X[5] = 9.0                                             # new values in place
    p["W"][0, 0] = -4.0
    check(p, X, Y, 2)
    check(p, X[:40], Y[:40], 2)                            # another batch size
    check(p, X, Y, 4)                                      # another static value
    check({k: v.astype(np.float32) for k, v in p.items()},  # another dtype
          X.astype(np.float32), Y.astype(np.float32), 2)
    check(p, X.T.copy().T, Y, 2)                           # a strided batch
    check({"W": p["W"], "b": 0.5}, X, Y, 2)                # a float leaf
    check({"W": p["W"], "b": np.float64(0.5)}, X, Y, 2)    # a numpy scalar leaf
    check(p, X, Y, 2)
    with pytest.raises(bn.InputError, match="no argument is batched"):
        bn.vmap(g, in_axes=None)(p, X, Y, 2)
    with pytest.raises(bn.ShapeError, match="has 79 samples along axis 0, an earlier one 80"):
        ps(p, X, Y[1:], 2)
    check({**p, "unused": np.ones(3)}, X, Y, 2)            # another structure
    check(p, X, Y, 2)


def test_integer_data_must_fit_the_tape_shared_or_batched():
    """Integer data becomes float in the tape: above 2**24 a float32 tape would round it."""
    f = bn.vmap(lambda w, x, n: np.sum(w * x) * n, in_axes=(None, 0, None))
    w, X = np.ones(2, np.float32), np.ones((40, 2), np.float32)
    np.testing.assert_array_equal(f(w, X, np.array(3)), np.full(40, 6.0, np.float32))
    with pytest.raises(bn.InputError, match="does not fit exactly in this"):
        f(w, X, np.array(2 ** 25))
    g = bn.vmap(lambda w, x: np.sum(w * x), in_axes=(None, 0))
    np.testing.assert_array_equal(g(w, np.ones((40, 2), np.int64)), np.full(40, 2.0, np.float32))
    with pytest.raises(bn.InputError, match="does not fit exactly in this"):
        g(w, np.full((40, 2), 2 ** 25, np.int64))


@pytest.mark.parametrize("threads", [1, 2])
def test_results_of_earlier_calls_stay_as_they_were(threads):
    """The chunks write their rows straight into the array a call returns: the next call
    (new parameters, new samples, more of them) must not write into an earlier result."""
    rng = np.random.default_rng(4)
    ps = bn.vmap(bn.value_and_grad(_mlp_loss), in_axes=(None, 0, 0), threads=threads)
    p, X, Y = _params(), rng.normal(size=(100, 2)), rng.normal(size=(100, 1))
    v1, g1 = ps(p, X, Y)
    kept = (v1.copy(), {k: g.copy() for k, g in g1.items()})
    for n in (100, 300):
        ps(_params(seed=n), rng.normal(size=(n, 2)), rng.normal(size=(n, 1)))
    np.testing.assert_array_equal(v1, kept[0])
    for k in g1:
        np.testing.assert_array_equal(g1[k], kept[1][k])


def test_errors():
    x = np.ones((4, 3))
    f = lambda a, b: np.sum(a * b)                                  # noqa: E731
    with pytest.raises(bn.InputError, match="in_axes has 1 entries but the function got 2"):
        bn.vmap(f, in_axes=(0,))(x, x)
    with pytest.raises(bn.ShapeError, match="has 3 samples along axis 0, an earlier one 4"):
        bn.vmap(f)(x, np.ones((3, 3)))
    with pytest.raises(bn.ShapeError, match="in_axes 2 is out of range"):
        bn.vmap(f, in_axes=(2, None))(x, x)
    with pytest.raises(bn.InputError, match="no argument is batched"):
        bn.vmap(f, in_axes=None)(x, x)
    with pytest.raises(bn.InputError, match="holds a float"):
        bn.vmap(f)(1.0, x)
    with pytest.raises(bn.InputError, match="in_axes for argument 0 is '0', which does not"):
        bn.vmap(f, in_axes=("0", None))(x, x)
    with pytest.raises(bn.InputError, match=r"in_axes for argument 0 has the keys \['a'\]"):
        bn.vmap(lambda p: np.sum(p["a"]), in_axes=({"a": 0},))({"a": x, "b": x})
    with pytest.raises(bn.InputError, match=r"in_axes for argument 0\[1\] is \(0,\)"):
        bn.vmap(lambda p: np.sum(p[0]), in_axes=((0, (0,)),))((x, x))
    with pytest.raises(bn.InputError, match="out_axes must be an int"):
        bn.vmap(f, out_axes=(0,))
    with pytest.raises(bn.ShapeError, match="the batch is empty"):
        bn.vmap(f)(np.ones((0, 3)), np.ones((0, 3)))
    with pytest.raises(bn.DataError, match="take"):                   # bad data, its message
        bn.vmap(lambda t, i: np.sum(t[i]), in_axes=(None, 0))(np.ones((3, 2)),
                                                              np.array([[0], [7]]))


def test_error_in_another_threads_chunk():
    """A bad sample in the chunk a pool thread runs raises its error in the caller, after
    every chunk has finished; the next call runs normally."""
    table = np.arange(6.0).reshape(3, 2)
    f = bn.vmap(lambda t, i: np.sum(t[i]), in_axes=(None, 0), threads=2)
    idx = np.zeros((256, 1), np.int64)
    idx[200] = 7                                    # in the second of the two chunks
    with pytest.raises(bn.DataError, match="index 7 is out of bounds"):
        f(table, idx)
    idx[200] = 2
    expected = np.array([np.sum(table[i]) for i in idx])
    np.testing.assert_array_equal(f(table, idx), expected)


# -- wide tapes (burnumba/ir/lanes.py): L samples side by side, each with its own bits --------

def _bits(x):
    """The bits of x, every NaN as one (a NaN's sign and payload carry no meaning: the
    scalar case and a loop may set the sign differently, as numpy's own paths do)."""
    x = np.where(np.isnan(x), np.nan, x).astype(np.asarray(x).dtype)
    return x.view(np.uint64 if x.dtype == np.float64 else np.uint32)


def _widened(vmapped):
    """Whether the last call ran the tape's wide form."""
    return any(w is not None for t in vmapped.traced.values() for w in t.wide.values())


def _same_as_a_loop(f, args, in_axes, argnums):
    """vmap of value_and_grad(f) against a loop of it, bit for bit (signs of zeros and NaN
    included); returns whether the wide form ran."""
    vg = bn.value_and_grad(f, argnums=argnums)
    mapped = bn.vmap(vg, in_axes=in_axes)
    values, grads = mapped(*args)
    size = next(a.shape[0] for a, ax in zip(args, in_axes) if ax == 0)
    for i in range(size):
        one = [a[i] if ax == 0 else a for a, ax in zip(args, in_axes)]
        v, g = vg(*one)
        assert _bits(values[i]) == _bits(np.asarray(v, values.dtype)), (i, values[i], v)
        for k in range(len(argnums)):
            np.testing.assert_array_equal(_bits(grads[k][i]), _bits(g[k]), err_msg=(i, k))
    return _widened(mapped)


def test_the_mlp_runs_wide_bit_for_bit_in_both_dtypes():
    rng = np.random.default_rng(5)

    def loss(p, x, y):
        h = np.tanh(x @ p["W1"] + p["b1"])
        h = np.tanh(h @ p["W2"] + p["b2"])
        return ((h @ p["W3"] + p["b3"])[0] - y) ** 2

    for dtype in (np.float64, np.float32):
        p = {k: v.astype(dtype) for k, v in _params().items()}
        for size in (1, 3, 64, 65, 200):            # one sample, lanes < 64, whole, a tail
            X = rng.normal(size=(size, 2)).astype(dtype)
            Y = rng.normal(size=size).astype(dtype)
            mapped = bn.vmap(bn.grad(loss), in_axes=(None, 0, 0))
            got = mapped(p, X, Y)
            assert _widened(mapped) == (size > 1)
            for i in range(size):
                want = bn.grad(loss)(p, X[i], Y[i])
                for k in p:
                    np.testing.assert_array_equal(_bits(got[k][i]), _bits(want[k]))


def _map_samples(row, rng, dtype, size=70):
    """Per-sample operands of a map row: its special values (NaN, +-inf, +-0, the tiniest
    and the largest number) against points of its domain, then random points of it."""
    fi = np.finfo(dtype)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, fi.tiny, -fi.max], dtype)
    cols = [rng.uniform(lo, hi, size).astype(dtype) for lo, hi in row.domain[:row.arity]]
    m = len(special)
    for k, col in enumerate(cols):
        col[k * m:(k + 1) * m] = special
    if row.arity == 2:
        cols[1][2 * m:3 * m] = special                  # both special at once
        cols[0][2 * m:3 * m] = special[::-1]
    return cols


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(r.name for r in bn.kernels.ROWS if r.kind == "map"))
def test_every_map_row_runs_wide_bit_for_bit(name, dtype):
    """A map row runs unchanged on a wide tape: per-sample scalars (inline code in a tape of
    one sample, the row's loops in a wide one) and vectors with a shared weight (its tile
    loops, and the lanes form of sum), at special values and in the row's domain."""
    from test_ops import CASES, COMPARISONS, PREDICATES
    row = bn.kernels.BY_NAME[name]
    fn = {**{k: v[0] for k, v in CASES.items()}, **COMPARISONS, **PREDICATES,
          "stop_gradient": bn.stop_gradient}[name]
    rng = np.random.default_rng(7)
    cols = _map_samples(row, rng, dtype)
    argnums = row.diff_operands             # (jn's n is refused: data)
    scalar = lambda *xs: fn(*xs) * 1.0 + xs[0] * 0.5            # noqa: E731  (a gradient)
    # a scalar node of a row that calls exp stays a tape of one sample (burnumba/ir/lanes.py)
    assert _same_as_a_loop(scalar, cols, (0,) * row.arity, argnums) == \
        (not rules.calls_loop_math(row))
    w = rng.normal(size=3).astype(dtype)
    vectors = [np.stack([np.roll(c, -j) for j in range(3)], axis=1) for c in cols]
    vec = lambda w, *xs: np.sum(fn(*xs) * w) + np.sum(xs[0]) * 0.5  # noqa: E731
    assert _same_as_a_loop(vec, [w] + vectors, (None,) + (0,) * row.arity,
                           tuple(k + 1 for k in argnums) + (0,))


@pytest.mark.parametrize("row", [r for r in bn.kernels.ROWS if r.lanes_of],
                         ids=lambda r: r.name)
def test_every_lanes_row_gives_its_rows_bits(row):
    """A lanes row against its row's own sweep, bit for bit, at the row's special cases (each
    sample the case's inputs, perturbed where finite) and random points; where its fits says
    the row's sweep would call BLAS, the tape runs sample by sample."""
    from test_ieee import _block_case
    base = bn.kernels.BY_NAME[row.lanes_of]
    rng = np.random.default_rng(11)
    wide = 0
    for dtype in (np.float64, np.float32):      # float32: sums in a float64 local, as the row
        for expr, inputs, value, cot, grads in base.special:
            f, argnums, args = _block_case(expr, inputs)
            cot = np.asarray(cot, dtype=dtype)
            batch = [np.stack([a] + [a + rng.normal(size=np.shape(a)) * 0.1
                                     for _ in range(40)]).astype(dtype)
                     for a in map(np.asarray, args)]
            loss = lambda *xs: np.sum(f(*xs) * cot)          # noqa: E731
            wide += _same_as_a_loop(loss, batch, (0,) * len(batch), argnums)
    assert wide, f"no case of {base.name} ran wide"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_along_an_axis_run_wide_with_each_samples_bits(dtype):
    """sum_axis_lanes sums each sample's lines in a float64 local in index order, as the row
    does for one sample: values over 16 decades, in float32 too, where summing in the
    float32 arena would round after every add."""
    rng = np.random.default_rng(3)
    for shape, axis in (((6, 40), 1), ((5, 30, 3), 1), ((4, 3, 9), 2), ((30, 5), 0)):
        X = (rng.standard_normal((67,) + shape) * 10.0 ** rng.uniform(-8, 8, (67,) + shape))
        w = rng.standard_normal(np.sum(np.ones(shape), axis=axis).shape)

        def loss(x, axis=axis, w=w):
            return np.sum(np.mean(x * x, axis=axis) * w)
        assert _same_as_a_loop(loss, [X.astype(dtype)], (0,), (0,))


def _uniform_products(vmapped):
    """How many of the wide programs' products read B in lane 0 only (immediate 3)."""
    from burnumba.kernels.ops import OPCODE
    count = 0
    for traced in vmapped.traced.values():
        for prog in traced.wide.values():
            if prog is not None:
                I, F0 = prog.program.I, prog.program.F0
                n = int(I[0])
                count += int(np.sum((I[2:2 + n] == OPCODE["matmul_lanes"]) & (F0[:n] == 3.0)))
    return count


def test_a_product_with_a_shared_operand_gives_its_rows_bits():
    """matmul's lanes form reads a B that every sample shares (a weight: a leaf in_axes
    None) once per element, in lane 0, four terms a pass (ops._add_uniform_sums): at
    matmul's special cases and at inner sizes 0 to 9 and 16 (each first pass of 1 to 4
    terms), with NaN, +-inf and +-0 among A's and B's entries, against a loop, bit for bit;
    in float32 the form is unchanged."""
    from test_ieee import _block_case
    rng = np.random.default_rng(17)
    cases = []
    for expr, inputs, value, cot, grads in bn.kernels.BY_NAME["matmul"].special:
        f, argnums, args = _block_case(expr, inputs)
        cases.append((np.asarray(args[0]), np.asarray(args[1]), np.asarray(cot, float)))
    for K in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16):
        a, b = rng.normal(size=(1, K)), rng.normal(size=(K, 3))
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        a.flat[:min(K, 2)] = specials[:min(K, 2)]
        b.flat[:min(3 * K, 5)] = specials[:min(3 * K, 5)]
        cases.append((a, b, rng.normal(size=(1, 3))))
    uniform = 0
    for dtype in (np.float64, np.float32):
        for a, b, cot in cases:
            A = np.stack([a] + [a + rng.normal(size=a.shape) * 0.1 for _ in range(40)])
            loss = lambda x, w: np.sum((x @ w) * cot)             # noqa: E731
            args = [A.astype(dtype), b.astype(dtype)]
            _same_as_a_loop(loss, args, (0, None), (0, 1))
            mapped = bn.vmap(bn.value_and_grad(loss, argnums=(0, 1)), in_axes=(0, None))
            mapped(*args)
            found = _uniform_products(mapped)
            assert found == 0 or dtype == np.float64
            uniform += found
    # all but the 8 x 9 by 9 x 8 case (BLAS: sample by sample) and the empty B (nothing to read)
    assert uniform == len(cases) - 2, "B was read per lane where it is shared"


def test_a_large_tape_gets_fewer_lanes_or_none():
    """The wide state stays within _lanes.WIDE_BYTES: a tape of many values runs with fewer
    lanes, or sample by sample, with the same bits."""
    from burnumba.ir import lanes as _lanes
    rng = np.random.default_rng(13)
    for n in (2_000, 20_000):
        w, X = rng.normal(size=n), rng.normal(size=(12, n))
        mapped = bn.vmap(bn.grad(lambda w, x: np.sum(np.tanh(w * x))), in_axes=(None, 0))
        got = mapped(w, X)
        for i in (0, 11):
            np.testing.assert_array_equal(got[i], bn.grad(lambda w, x: np.sum(np.tanh(w * x)))(
                w, X[i]))
        traced = next(iter(mapped.traced.values()))
        lanes = _lanes.lanes_for(traced.tape, 12)
        values = int(traced.tape.I[2 + 6 * int(traced.tape.I[0])])
        assert lanes == 1 or 2 * values * 8 * lanes <= _lanes.WIDE_BYTES
        assert _widened(mapped) == (lanes > 1)
        assert (lanes > 1) == (n == 2_000)


# -- Python decisions: the samples grouped by branch, each group batched ----------------------
def _three_branches(w, x, k):
    s = np.sum(w * x)
    if s > 1.0:
        out = np.sin(s) * s
    elif s > -1.0:
        out = s ** 3 + np.sum(w ** 2)
    else:
        out = np.exp(s) - s
    return out * float(k) if int(k) > 0 else out      # an int() and an exact value too


def test_guarded_per_sample_gradients_are_grouped_and_equal_a_loop_bit_for_bit():
    calls = []

    def f(w, x, k):
        calls.append(1)
        return _three_branches(w, x, k)
    rng = np.random.default_rng(7)
    w = rng.normal(size=3)
    X = rng.normal(size=(200, 3)) * 1.5
    K = rng.choice([0.0, 2.0], size=200)          # with 3 branches: 6 variants
    g = bn.value_and_grad(f, argnums=(0, 1))
    per_sample = bn.vmap(g, in_axes=(None, 0, 0))
    value, (gw, gx) = per_sample(w, X, K)
    loop = bn.value_and_grad(_three_branches, argnums=(0, 1))
    for i in range(200):
        v, (a, b) = loop(w, X[i], K[i])
        assert value[i] == v
        np.testing.assert_array_equal(gw[i], a)
        np.testing.assert_array_equal(gx[i], b)
    assert len(calls) <= 2 * 6 + 1          # traces per branch, not a call per sample
    calls.clear()
    value2, (gw2, gx2) = per_sample(w, X[::-1], K[::-1])          # the variants are kept
    np.testing.assert_array_equal(value2, value[::-1])
    np.testing.assert_array_equal(gx2, gx[::-1])
    assert calls == []
    # out_axes, and a function of the samples only (the outputs path), against numpy
    gT = bn.vmap(bn.grad(f, argnums=1), in_axes=(None, 0, 0), out_axes=1)(w, X, K)
    np.testing.assert_array_equal(gT, gx.T)
    values = bn.vmap(_three_branches, in_axes=(None, 0, 0))(w, X, K)
    np.testing.assert_allclose(values, [_three_branches(w, X[i], K[i]) for i in range(200)],
                               rtol=1e-13, atol=1e-15)


def test_guarded_vmap_with_bad_data_on_a_wrong_branch_runs_sample_by_sample():
    def f(x, table, idx):
        if x > 0.0:
            return x * 2.0 + np.sum(table)
        return x * np.sum(table[idx])
    xs = np.array([-1.0, 1.0, -2.0, 3.0])
    idx = np.array([[1], [7], [0], [9]])           # out of range where x > 0 (unused there)
    got = bn.vmap(bn.grad(f), in_axes=(0, None, 0))(xs, np.ones(3), idx)
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0, 2.0])
    with pytest.raises(bn.DataError, match="out of bounds"):
        bn.vmap(bn.grad(f), in_axes=(0, None, 0))(xs, np.ones(3), np.array([[1], [7], [9], [9]]))


def test_traced_forms_are_bounded_as_every_transformation_s():
    """vmap keeps its traced forms on the core's Cache: at most CACHE_SIZE signatures, the
    least recently used dropped (and traced again, to the same bits, when they come back)."""
    from burnumba.transforms.core import CACHE_SIZE
    f = bn.vmap(lambda x: np.sum(np.sin(x)))
    x = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    first = f(x)
    for n in range(1, CACHE_SIZE + 4):
        np.testing.assert_allclose(f(np.ones((2, n))), n * np.sin(1.0), rtol=1e-15)
    assert len(f.traced) == CACHE_SIZE
    np.testing.assert_array_equal(f(x), first)           # n = 1..3 were dropped


def test_a_guarded_vmap_runs_its_branch_once_per_call(monkeypatch):
    """A branch's result rows end with the values its decisions read (layout.C_BATCH_CHECKS),
    so a call whose samples all take one branch is one batched run, not a run of the
    decisions and then one of the branch; a mixed batch runs each variant once on the
    samples left, on wide tapes (64 lanes) as on narrow ones, and still equals a loop bit
    for bit."""
    from burnumba.transforms import vmap as vm
    runs = []
    run_checked = vm._CallPlan.run_checked

    def counted(self, mapped, leaves):
        runs.append((self.traced, self.prog.lanes))
        return run_checked(self, mapped, leaves)
    monkeypatch.setattr(vm._CallPlan, "run_checked", counted)

    def loss(p, x):                      # the per-sample MLP of bench/transform_workloads
        h = np.tanh(x @ p["W1"] + p["b1"])
        s = (h @ p["W2"] + p["b2"])[0]
        if s > 0.0:
            return s ** 2
        return 3.0 * s
    rng = np.random.default_rng(3)
    p = {"W1": rng.normal(size=(2, 16)), "b1": rng.normal(size=16),
         "W2": rng.normal(size=(16, 1)), "b2": rng.normal(size=1)}
    X = rng.normal(size=(300, 2))
    g = bn.grad(loss)
    per_sample = bn.vmap(g, in_axes=(None, 0))
    one = X[[loss(p, x) > 0.0 for x in X]]
    got = per_sample(p, one)
    assert len(runs) == 1 and runs[0][1] == len(one) > 1      # a wide run: lanes
    runs.clear()
    again = per_sample(p, one)                                    # the one-branch plan
    assert len(runs) == 1
    runs.clear()
    mixed = per_sample(p, X)                  # both branches: each variant runs once
    assert len(runs) == 2 and runs[0][0] is not runs[1][0] and runs[0][1] == 64
    for k in p:
        np.testing.assert_array_equal(got[k], again[k])
        np.testing.assert_array_equal(mixed[k], np.stack([g(p, x)[k] for x in X]))
    runs.clear()
    values = bn.vmap(loss, in_axes=(None, 0))(p, X)
    np.testing.assert_allclose(values, [loss(p, x) for x in X], rtol=1e-13,
                               atol=1e-14)                          # to rounding
