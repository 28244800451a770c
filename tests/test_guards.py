"""Python control flow and changing ints: decisions on traced values become guards of the
tape (tracing/concrete.py), a failed guard traces a new variant (transforms/core.TapeCache),
and every transformation gives the derivative of the branch taken, as autograd does."""
import contextlib
import io
import pickle
import warnings

import numpy as np
import pytest

import burnumba as bn
from burnumba.kernels import ROWS

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


def both(fn):
    """fn(np_, *args) as (the burnumba form on numpy, the autograd form on autograd.numpy)."""
    return (lambda *a: fn(np, *a)), (lambda *a: fn(anp, *a))


# -- piecewise functions of one scalar: (name, fn(np_, x), points on different branches and
# at the kinks' exact values)
def _relu_like(np_, x):
    if x > 0.0:
        return x * 1.5
    return -x * 0.25


def _three_pieces(np_, x):
    if x < -1.0:
        return np_.exp(x)
    elif x < 2.0:
        return np_.sin(x) * x
    return x ** 3 - 4.0


def _abs_like(np_, x):
    return x if x >= 0.0 else -x


def _and_or(np_, x):
    if x > -0.5 and x < 0.5 or x > 3.0:
        return np_.tanh(x)
    return x * x


def _nested_ifs(np_, x):
    y = np_.sin(x)
    if y > 0.0:
        if x * y > 0.5:
            return y * y
        return y + x
    return np_.cos(x) * y


PIECEWISE = [
    ("relu_like", _relu_like, [-1.3, 0.0, -0.0, 0.7, 2.2]),
    ("three_pieces", _three_pieces, [-3.0, -1.0, -0.4, 1.9, 2.0, 5.5]),
    ("abs_like", _abs_like, [-2.0, 0.0, -0.0, 1e-300, 3.0]),
    ("and_or", _and_or, [-0.7, -0.5, 0.1, 0.5, 2.0, 3.5]),
    ("nested_ifs", _nested_ifs, [-2.0, 0.3, 1.2, 2.5, 4.0]),
]


@pytest.mark.parametrize("name, fn, points", PIECEWISE, ids=[p[0] for p in PIECEWISE])
def test_piecewise_value_and_grad_match_autograd(name, fn, points):
    ours, theirs = both(fn)
    vg = bn.value_and_grad(ours)
    for x in points + points[::-1]:                  # every branch, then back again
        value, g = vg(x)
        assert value == pytest.approx(theirs(x), rel=1e-13, abs=0)
        assert g == pytest.approx(autograd.grad(theirs)(x), rel=1e-13, abs=0)
    key = next(iter(vg.tapes))
    assert len(vg.tapes) == 1                        # one signature, variants inside it
    assert 1 <= len(vg._transformed.variants.get(key, [None])) <= 8


def test_kink_takes_the_branch_numpy_takes_at_the_exact_value():
    g = bn.grad(lambda x: x if x > 0.0 else -2.0 * x)
    assert g(0.0) == -2.0 and g(-0.0) == -2.0 and g(5e-324) == 1.0
    h = bn.grad(lambda x: x if x >= 1.0 else x * x)
    assert h(1.0) == 1.0 and h(np.nextafter(1.0, 0.0)) == pytest.approx(2.0)


def test_a_program_without_decisions_has_no_guards():
    tape = bn.trace(lambda x: np.sum(np.tanh(x) * 2.0), np.ones(3))
    assert tape.guards is None


def test_guards_are_recorded_with_source_lines():
    def f(x):
        if x > 1.0:
            return x * 2.0
        return x
    tape = bn.value_and_grad(f).trace(3.0)
    nodes, kinds, values, sites = tape.guards
    # x > 1.0 was true: a comparison guard on x itself (kind 4: greater, true), value 1.0
    assert list(nodes) == [0] and list(values) == [1.0] and list(kinds) == [4]
    assert "if x > 1.0" in sites[0] and "test_guards.py" in sites[0]


# -- loops -----------------------------------------------------------------------------------
def _newton_sqrt(np_, a):
    """A while loop until convergence: the derivative is that of the iterations taken."""
    x = a
    while abs(x * x - a) > 1e-10 * a:
        x = x - (x * x - a) / (2.0 * x)
    return x


def test_while_loop_newton_solver():
    ours, theirs = both(_newton_sqrt)
    vg = bn.value_and_grad(ours)
    for a in [2.0, 9.0, 0.25, 100.0, 2.0, 1e4]:
        value, g = vg(a)
        assert value == pytest.approx(theirs(a), rel=1e-14)
        assert g == pytest.approx(autograd.grad(theirs)(a), rel=1e-12)
        assert g == pytest.approx(0.5 / np.sqrt(a), rel=1e-6)


def test_early_exit_loop():
    def f(np_, x):
        s = 0.0
        for k in range(50):
            s = s + np_.sin(x * (k + 1)) / (k + 1)
            if s > 1.2 or s < -0.7:
                break
        return s * x
    ours, theirs = both(f)
    g = bn.grad(ours)
    for x in [0.1, 0.5, 1.0, 2.0, -1.0, 0.1]:
        assert g(x) == pytest.approx(autograd.grad(theirs)(x), rel=1e-12)


def test_for_range_of_a_traced_int_and_of_int_of_a_traced_float():
    def f(np_, x, n):
        s = x
        for _ in range(n):
            s = np_.sin(s) + x
        return s
    ours, theirs = both(f)
    g = bn.grad(ours)
    for n in [3, 5, 0, 3, 8]:
        assert g(0.7, n) == pytest.approx(autograd.grad(theirs)(0.7, n), rel=1e-13)
    assert len(g.tapes) == 1                         # n is data; one variant per trip count

    def h(np_, x, t):
        return np_.sum(x[:int(t)] ** 2) * t         # a size from a traced float
    ours, theirs = both(h)
    gh = bn.grad(ours)
    x = np.arange(1.0, 7.0)
    for t in [2.5, 4.0, 6.0, 2.9]:
        np.testing.assert_allclose(gh(x, t), autograd.grad(theirs)(x, t), rtol=1e-14)


def test_shapes_from_an_int_argument_are_guarded():
    def f(x, n):
        z = np.zeros(n)
        return np.sum(x[:n] * 2.0) + np.sum(z) + np.sum(x.reshape(n, -1))
    g = bn.grad(f)
    x = np.arange(12.0)
    for n in [2, 3, 4, 6, 3]:
        want = np.where(np.arange(12) < n, 3.0, 1.0)
        np.testing.assert_array_equal(g(x, n), want)


def test_an_optimiser_loop_passing_its_step_number_traces_once():
    """Adam with a bias correction and a learning-rate schedule that read the step i."""
    def loss(w, i, X, y):
        lr_scale = 0.5 ** (i / 100.0)
        return np.mean((X @ w - y) ** 2) * (1.0 + 0.0 * lr_scale)

    vg = bn.value_and_grad(loss)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    w, m, v = np.zeros(3), np.zeros(3), np.zeros(3)
    for i in range(1, 101):
        value, g = vg(w, i, X, y)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - 0.05 * (m / (1 - 0.9 ** i)) / (np.sqrt(v / (1 - 0.999 ** i)) + 1e-8)
    assert len(vg.tapes) == 1 and not vg._transformed.variants
    np.testing.assert_allclose(w, np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-2)


def test_int_arguments_in_arithmetic_are_exact():
    g = bn.value_and_grad(lambda x, i: x * i + i // 3 + i % 5)
    for i in [0, 7, -4, 2 ** 23, -(2 ** 23) + 1]:
        value, d = g(2.0, i)
        assert value == 2.0 * i + i // 3 + i % 5 and d == float(i)
    assert len(g.tapes) == 1


def test_item_and_int_of_values_that_need_no_gradient():
    def f(x, k):
        j = int(k * 2)                 # k is data, not differentiated: a guard
        return x[j] * k.item()
    g = bn.grad(f)
    x = np.arange(5.0)
    for k in [np.float64(1.0), np.float64(2.0), np.float64(0.5)]:
        want = np.zeros(5)
        want[int(k * 2)] = float(k)
        np.testing.assert_array_equal(g(x, k), want)


# -- the variants' limit ---------------------------------------------------------------------
def test_past_the_variant_limit_a_warning_names_the_line_and_results_stay_right():
    def f(x):
        return x * int(x)               # a new integer part: a new variant
    g = bn.grad(f)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for x in np.arange(0.5, 12.5, 1.0):
            assert g(float(x)) == pytest.approx(int(x))
    ours = [w for w in seen if issubclass(w.category, bn.VariantWarning)]
    assert len(ours) == 1                                       # once
    text = str(ours[0].message)
    assert "return x * int(x)" in text and "bnp.where" in text and "static_argnums" in text
    key = next(iter(g.tapes))
    assert len(g._transformed.variants[key]) == 8               # bounded, LRU
    assert g(3.5) == 3.0 and g(11.5) == 11.0


# -- Python's protocols that read a value: format() and hash() are decisions too --------------
def test_formatting_a_traced_scalar_gives_its_text_under_a_guard():
    # the text is the value's, as plain numpy's; a replay happens only where it is the same
    f = bn.value_and_grad(lambda x: len(f"{x[0]}") * x[0])
    for x0 in (3.0, 13.5, 3.0, 0.125):
        x = np.array([x0, 2.0])
        value, g = f(x)
        assert value == len(f"{x[0]}") * x0 and g.tolist() == [len(f"{x[0]}"), 0.0]
    # an integer argument formats as an int, with and without a spec
    k = bn.value_and_grad(lambda w, i: w * len(f"{i:03d}-{i}"))
    for i in (7, 1234, 7):
        assert k(1.0, i) == (len(f"{i:03d}-{i}"),) * 2


def test_printing_a_loss_inside_the_function_prints_each_calls_value():
    def loss(w):
        v = np.sum(w * w)
        print(f"loss {v:.2f} {v}")
        print("loss", v, str(v), [v][0], "of", w[:1])    # print(v) and str(v) as f"{v}"
        return v
    g = bn.grad(loss)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for s in range(3):
            np.testing.assert_array_equal(g(np.array([1.0, float(s)])), [2.0, 2.0 * s])
    lines = out.getvalue().splitlines()
    assert lines[::2] == ["loss 1.00 1.0", "loss 2.00 2.0", "loss 5.00 5.0"]
    assert [line.split(" of ")[0] for line in lines[1::2]] == [
        "loss 1.0 1.0 1.0", "loss 2.0 2.0 2.0", "loss 5.0 5.0 5.0"]
    assert all("Traced<float64[1]" in line for line in lines[1::2])     # an array: its text


def test_percent_formatting_prints_as_f_strings_do():
    """``"loss %.3f" % v`` asks for float(v), which a differentiated value refuses elsewhere:
    under str's % it is text, as format(v) gives, under the same guard."""
    def loss(w, i):
        v = np.sum(w * w)
        print("step %d loss %.2f (%5.1f%%)" % (i, v, 100 * v))
        text = "%d" % (v * 2)
        text %= ()
        return v * len(text)
    g = bn.grad(loss)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for s in range(3):
            want = 2.0 * np.array([1.0, s]) * len("%d" % (2 * (1 + s * s)))
            np.testing.assert_array_equal(g(np.array([1.0, float(s)]), s), want)
    assert out.getvalue().splitlines() == ["step 0 loss 1.00 (100.0%)",
                                           "step 1 loss 2.00 (200.0%)",
                                           "step 2 loss 5.00 (500.0%)"]
    assert bn.grad(lambda x: x % 1.5)(2.0) == 1.0       # a number's %: the op, not text
    with pytest.raises(bn.ConcretizationError, match="float"):
        bn.grad(lambda x: float(x) * x)(2.0)


def test_a_traced_scalar_is_found_in_dicts_and_sets_as_its_value():
    d = {3.0: 2.0, 4.0: 5.0}
    g = bn.value_and_grad(lambda x: d.get(x[0], 1.0) * x[0] + (x[1] in {2.0, 7.0}) * x[1])
    for x0, x1 in [(3.0, 2.0), (4.0, 1.0), (5.0, 7.0), (3.0, 2.0)]:
        want_d, want_s = d.get(x0, 1.0), float(x1 in {2.0, 7.0})
        value, grad = g(np.array([x0, x1]))
        assert value == want_d * x0 + want_s * x1 and grad.tolist() == [want_d, want_s]
    # an int argument in a set: data under a guard, each call as plain Python decides
    h = bn.value_and_grad(lambda w, i: w * (2.0 if i in {0, 10} else 1.0))
    assert [h(1.5, i) for i in (0, 1, 10, 3)] == [(3.0, 2.0), (1.5, 1.0), (3.0, 2.0),
                                                  (1.5, 1.0)]
    # per lane under vmap, and through forward over reverse
    per_lane = bn.vmap(bn.grad(lambda w: d.get(w, 1.0) * w ** 2))
    np.testing.assert_array_equal(per_lane(np.array([3.0, 4.0, 5.0])), [12.0, 40.0, 10.0])
    H = bn.hessian(lambda x: d.get(x[0], 1.0) * x[0] ** 3)
    for x0 in (3.0, 5.0):
        assert H(np.array([x0]))[0, 0] == 6.0 * d.get(x0, 1.0) * x0


# -- errors ----------------------------------------------------------------------------------
def test_float_of_a_differentiated_value_raises_with_the_fix():
    with pytest.raises(bn.ConcretizationError, match="stop_gradient"):
        bn.grad(lambda x: x * float(x))(2.0)
    with pytest.raises(bn.ConcretizationError, match="gradient"):
        bn.grad(lambda x: np.sum(x) * x[0].item())(np.ones(2))
    # bn.stop_gradient(x): the value as a constant, on purpose (a guard)
    g = bn.grad(lambda x: x * float(bn.stop_gradient(x)))
    assert g(2.0) == 2.0 and g(3.0) == 3.0


def test_bool_of_an_array_is_ambiguous():
    with pytest.raises(bn.TracerBoolError, match="ambiguous"):
        bn.grad(lambda x: np.sum(x) if x > 0 else 0.0)(np.ones(2))


def test_an_index_that_is_not_an_integer_is_refused():
    with pytest.raises(bn.ConcretizationError, match="not an integer"):
        bn.grad(lambda x, t: np.sum(x[:t]))(np.ones(3), 1.5)


def test_a_saved_tape_raises_guard_error_on_another_branch(tmp_path):
    def f(x):
        if x > 0.0:
            return x * 2.0
        return x * 3.0
    tape = bn.value_and_grad(f).trace(1.0)
    tape.save(tmp_path / "t.npz")
    for t in (bn.load_tape(tmp_path / "t.npz"), pickle.loads(pickle.dumps(tape)), tape):
        assert t.value_and_grad(2.0) == (4.0, 2.0)
        with pytest.raises(bn.GuardError, match="x > 0.0") as e:
            t.value_and_grad(-1.0)
        assert "bn.grad" in str(e.value)


def test_a_data_error_on_the_wrong_branch_is_a_guard_failure_first():
    def f(x, table, idx):
        if x > 0.0:
            return x * 2.0 + np.sum(table)
        return x * np.sum(table[idx])
    g = bn.grad(f)
    table = np.ones(3)
    assert g(-1.0, table, np.array([1])) == 1.0
    assert g(1.0, table, np.array([7])) == 2.0   # the traced branch would index out of range
    with pytest.raises(bn.DataError, match="out of bounds"):
        g(-1.0, table, np.array([7]))


# -- every transformation --------------------------------------------------------------------
def _vector_branch(np_, x):
    if np_.sum(x) > 0.0:
        return np_.sum(np_.sin(x) * x)
    return np_.sum(x ** 3) + x[0] * x[1]


POINTS = [np.array([1.0, 2.0]), np.array([-1.0, -2.0]), np.array([0.5, -0.4]),
          np.array([-0.5, 0.4])]


def test_jvp_vjp_linearize_and_jacobians_take_each_points_branch():
    ours, theirs = both(_vector_branch)
    for x in POINTS + POINTS[::-1]:
        v = np.array([0.3, -1.1])
        want = autograd.grad(theirs)(x)
        y, dy = bn.jvp(ours, (x,), (v,))
        assert y == pytest.approx(theirs(x), rel=1e-14)
        assert dy == pytest.approx(want @ v, rel=1e-13)
        np.testing.assert_allclose(bn.vjp(ours, x)[1](1.0)[0], want, rtol=1e-13)
        assert bn.linearize(ours, x)[1](v) == pytest.approx(want @ v, rel=1e-13)
        np.testing.assert_allclose(bn.jacrev(ours)(x), want, rtol=1e-13)
        np.testing.assert_allclose(bn.jacfwd(ours)(x), want, rtol=1e-13)


def test_hessian_hvp_and_nested_grad():
    ours, theirs = both(_vector_branch)
    for x in POINTS + POINTS[::-1]:
        H = autograd.hessian(theirs)(x)
        np.testing.assert_allclose(bn.hessian(ours)(x), H, rtol=1e-12, atol=1e-15)
        v = np.array([1.0, -0.5])
        np.testing.assert_allclose(bn.hvp(ours, x, v), H @ v, rtol=1e-12, atol=1e-15)
    # decisions inside an inner trace are guards of the outer trace
    scalar, scalar_ag = both(lambda np_, x: x ** 3 if x > 0.5 else np_.sin(x) * x)
    gg = bn.grad(bn.grad(scalar))
    for x in [1.0, 0.2, -1.0, 0.5, 2.0]:
        assert gg(x) == pytest.approx(autograd.grad(autograd.grad(scalar_ag))(x), rel=1e-13)


def test_elementwise_grad_and_value_and_grad_with_aux():
    f = bn.value_and_grad(lambda x: (x * 2.0 if x > 0 else x * 3.0, int(x > 1.0)),
                          has_aux=True)
    assert f(2.0) == ((4.0, 1), 2.0)
    assert f(-2.0) == ((-6.0, 0), 3.0)
    eg = bn.elementwise_grad(lambda x: x * x if np.sum(x) > 0 else -x)
    np.testing.assert_array_equal(eg(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_array_equal(eg(np.array([-1.0, -2.0])), [-1.0, -1.0])


def test_vmap_lanes_on_different_branches():
    ours, theirs = both(_vector_branch)
    X = np.array(POINTS * 3)
    per_sample = bn.vmap(bn.grad(ours))(X)
    np.testing.assert_allclose(per_sample, [autograd.grad(theirs)(x) for x in X], rtol=1e-13)
    values = bn.vmap(ours)(X)
    np.testing.assert_allclose(values, [theirs(x) for x in X], rtol=1e-14)
    H = bn.vmap(bn.hessian(ours))(X)
    np.testing.assert_allclose(H, [autograd.hessian(theirs)(x) for x in X], rtol=1e-12,
                               atol=1e-15)
    # a shared argument and a batched int
    g = bn.vmap(bn.grad(lambda x, n: np.sum(x[:n] ** 2)), in_axes=(None, 0))
    np.testing.assert_array_equal(g(np.ones(4), np.array([1, 3, 2])),
                                  [[2, 0, 0, 0], [2, 2, 2, 0], [2, 2, 0, 0]])


def test_fast_paths_of_repeated_calls_check_the_guards(monkeypatch):
    """hvp and jvp of plain arrays, the Jacobian's matching-arguments path and vmap's
    one-branch plan skip the general path on a repeated call; on a tape with decisions
    each must check them, and take the general path when one went the other way."""
    from burnumba.transforms import forward, vmap
    general = {"jvp": 0, "grouped": 0}

    def counted(name, fn):
        def call(*args, **kwargs):
            general[name] += 1
            return fn(*args, **kwargs)
        return call
    monkeypatch.setattr(forward, "_check_tangents",      # on the general path only
                        counted("jvp", forward._check_tangents))
    monkeypatch.setattr(vmap._VMapped, "_grouped", counted("grouped", vmap._VMapped._grouped))
    ours, theirs = both(_vector_branch)
    A, B = POINTS[0], POINTS[1]                 # sum > 0 and sum < 0: two branches
    order = [A, A, B, B, A, B, A * 0.5, A * 0.25, B * 0.5]
    v = np.array([0.3, -0.7])
    hv, H, J, gradient = bn.hvp(ours), bn.hessian(ours), bn.jacfwd(bn.grad(ours)), bn.grad(ours)
    for x in order:
        want = autograd.hessian(theirs)(x)
        np.testing.assert_allclose(hv(x, v), want @ v, rtol=1e-13)
        np.testing.assert_allclose(bn.jvp(gradient, (x,), (v,))[1], want @ v,
                                   rtol=1e-13)
        np.testing.assert_allclose(H(x), want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(J(x), want, rtol=1e-13, atol=1e-15)
    # hvp and jvp each: the first call, and each change of branch (5 of them)
    assert general["jvp"] == 2 * 6
    per_sample = bn.vmap(bn.grad(ours))
    batches = [np.stack([A, 2 * A, A]), np.stack([A, 3 * A, A]), np.stack([B, 2 * B, B]),
               np.stack([B, B, 3 * B]), np.stack([A, B, A]), np.stack([A, 2 * A, 0.5 * A]),
               np.stack([B, B, B])]
    for X in batches:
        np.testing.assert_allclose(per_sample(X), [autograd.grad(theirs)(x) for x in X],
                                   rtol=1e-13)
    assert general["grouped"] == len(batches) - 2      # the 2nd A batch and 2nd B batch


def test_njit_handle_raises_guard_error_naming_the_decision():
    pytest.importorskip("numba")

    def f(x):
        s = np.sum(x * x)
        if s > 1.0:
            return s
        return -s
    h = bn.njit_value_and_grad(f, np.ones(3))
    g = np.zeros(3)
    assert h(np.ones(3), g) == 3.0
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    with pytest.raises(bn.GuardError, match="if s > 1.0"):
        h(np.full(3, 0.1), g)


def test_the_scalar_fast_path_checks_guards():
    g = bn.value_and_grad(lambda a, b: a * b if a > b else a + b, argnums=(0, 1))
    for a, b in [(2.0, 1.0), (1.0, 2.0), (2.0, 1.0), (0.0, 0.0), (3.0, -3.0), (-3.0, 3.0)]:
        value, (da, db) = g(a, b)
        if a > b:
            assert (value, da, db) == (a * b, b, a)
        else:
            assert (value, da, db) == (a + b, 1.0, 1.0)


def _kinds(a, b):
    """One guard of each kind: truth (``if`` on a value), integer (``int``), exact
    (``float`` of a stopped value), a comparison with a constant (``if a > 0.0``)."""
    n = int(b)
    c = float(bn.stop_gradient(b))
    if b - a:
        c = c * 1.0
    return (a * a if a > 0.0 else -a) * n + a * c


@pytest.mark.parametrize("in_c", [True, False], ids=["in-c", "python"])
def test_the_scalar_runner_detects_each_kind_of_failed_guard(in_c, monkeypatch):
    from burnumba import kernels
    if not in_c:                      # an extension built before it could check guards
        monkeypatch.setattr(kernels.engine, "has_guard_checks", lambda: False)
    tape = bn.value_and_grad(_kinds, argnums=(0, 1)).trace(1.5, 2.5)
    assert sorted(tape.guard_kinds.tolist()) == [0, 1, 2, 4]
    run = tape.scalar_runner((0, 1), True, False)
    assert run((1.5, 2.5)) == (1.5 * 1.5 * 2 + 1.5 * 2.5, (1.5 * 2 * 2 + 2.5, 0.0))
    assert run((0.5, 2.5)) == (0.5 * 0.5 * 2 + 0.5 * 2.5, (0.5 * 2 * 2 + 2.5, 0.0))
    for bad in [(-1.5, 2.5),            # the branch
                (1.5, 2.4),             # float(b): the exact value
                (2.5, 2.5),             # bool(b - a)
                (1.5, np.nan)]:         # NaN matches no recorded number
        with pytest.raises(bn.GuardError) as e:
            run(bad)
        assert e.value.tape is tape
    # the integer guard alone: trunc(b) changes at 3.0 (2.4 failed on the exact one first)
    only_int = bn.value_and_grad(lambda a, b: a * int(b), argnums=(0, 1)).trace(1.0, 2.5)
    run = only_int.scalar_runner((0, 1), True, False)
    assert run((1.0, 2.9)) == (2.0, (2.0, 0.0))
    with pytest.raises(bn.GuardError, match="int()"):
        run((1.0, 3.0))
    # through the transformation: each kind retraces and gives autograd's numbers
    vg = bn.value_and_grad(_kinds, argnums=(0, 1))
    for a, b in [(1.5, 2.5), (-1.5, 2.5), (1.5, 3.5), (-0.5, 3.5), (1.5, 2.5)]:
        value, (da, db) = vg(a, b)
        n = int(b)
        assert value == (a * a if a > 0 else -a) * n + a * b
        assert (da, db) == ((2 * a if a > 0 else -1.0) * n + b, 0.0)


def test_the_scalar_runner_checks_float32_guards():
    tape = bn.value_and_grad(lambda a, b: a * b if a > b else a + b, argnums=(0, 1)).trace(
        np.float32(2.0), np.float32(1.0))
    assert tape.dtype == np.float32
    run = tape.scalar_runner((0, 1), True, False)
    assert run((3.0, 1.0)) == (3.0, (1.0, 3.0))
    with pytest.raises(bn.GuardError):
        run((1.0, 3.0))


def test_alternating_branches_switch_variants_without_tracing_again(monkeypatch):
    from burnumba import kernels
    def f(x):
        if x < 1.0:
            return x ** 2
        if x < 3.0:
            return 2.0 * x - 1.0
        return np.sin(x)
    g = bn.grad(f)
    state = g._transformed
    points = [0.5, 1.5, 0.5, 1.5, 4.0, 0.25, 4.0, 2.0, 0.5, -1.0, 4.5]
    # the fast path's switch builds no GuardError until every variant has failed
    built = []
    error = bn.Tape.guard_error
    monkeypatch.setattr(bn.Tape, "guard_error",
                        lambda tape, k: built.append(k) or error(tape, k))
    new_traces = []
    for x in points:
        before = len(built)
        assert g(x) == (2 * x if x < 1.0 else 2.0 if x < 3.0 else np.cos(x))
        key = next(iter(g.tapes))
        if len(built) > before:
            new_traces.append(x)
    assert len(g.variants[key]) == 3 and state.traces[key] == 3
    if kernels.engine.has_guard_checks():  # (through ctypes, each failed run raises)
        assert new_traces == [1.5, 4.0]    # the two new branches, once each
    assert state.fast[2] in g.variants[key]


def test_alternating_branches_of_array_arguments_switch_plans():
    ours, theirs = both(_vector_branch)
    g = bn.value_and_grad(ours)
    for x in POINTS * 3:
        value, grad = g(x)
        assert value == pytest.approx(theirs(x), rel=1e-14)
        np.testing.assert_allclose(grad, autograd.grad(theirs)(x), rtol=1e-13)
    key = next(iter(g.tapes))
    assert len(g.variants[key]) == 2 and g._transformed.traces[key] == 2
    assert {id(p.tape) for p in g.plans.values()} == {id(t) for t in g.variants[key]}


def test_a_custom_rule_under_a_branch_retraces_under_every_transformation():
    @bn.custom_vjp
    def sq(x):
        return x * x

    sq.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))

    def f(x):
        if x > 0.0:
            return sq(x) * 3.0
        return sq(x) - x
    for x in [1.5, -1.0, 2.0, -3.0, 1.5]:
        value, d, dd = (3 * x * x, 6 * x, 6.0) if x > 0 else (x * x - x, 2 * x - 1, 2.0)
        assert bn.value_and_grad(f)(x) == (value, d)
        assert bn.jvp(f, (x,), (1.0,)) == (value, d)
        assert bn.vjp(f, x)[1](1.0) == (d,)
        y, f_jvp = bn.linearize(f, x)
        assert (y, f_jvp(1.0)) == (value, d)
        assert bn.jacrev(f)(x) == d and bn.jacfwd(f)(x) == d
        assert bn.hessian(f)(x) == dd
        np.testing.assert_array_equal(bn.vmap(bn.grad(f))(np.array([x, -x])),
                                      [d, 6 * -x if -x > 0 else -2 * x - 1])


def test_threads_each_get_their_own_branch():
    import concurrent.futures
    g = bn.grad(lambda x: x * x if x > 0 else -3.0 * x)
    xs = [(-1.0) ** k * (k + 1.0) for k in range(200)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(g, xs))
    assert got == [2 * x if x > 0 else -3.0 for x in xs]


def test_tape_pickle_keeps_guards_as_read_only_arrays():
    tape = bn.value_and_grad(lambda x, n: x ** 2 if n > 2 else x).trace(1.5, 3)
    back = pickle.loads(pickle.dumps(tape))
    for a, b in zip(tape.guards[:3], back.guards[:3]):
        np.testing.assert_array_equal(a, b)
        assert not b.flags.writeable
    buf = io.BytesIO()
    tape.save(buf)
    buf.seek(0)
    assert bn.load_tape(buf).value_and_grad(2.0, 5) == (4.0, 4.0)


CONFIG_INTS = [
    ("sum axis", lambda x, k: np.sum(np.sum(x, axis=k) ** 2)),
    ("method axis", lambda x, k: np.sum(x.max(axis=k) * x.mean(k)[0])),
    ("index", lambda x, k: x[k, 0, 0] * 2.0),
    ("slice", lambda x, k: np.sum(x[:k])),
    ("reshape", lambda x, k: np.sum(x.reshape(k, -1)[0])),
    ("zeros", lambda x, k: np.sum(x) * np.sum(np.ones(k) + np.zeros(k))),
    ("roll", lambda x, k: np.sum(np.roll(x, k)[0])),
    ("repeat", lambda x, k: np.sum(np.repeat(x, k) ** 2)),
    ("tile", lambda x, k: np.sum(np.tile(x, k)[0] ** 2)),
    ("linspace", lambda x, k: np.sum(x) * np.sum(np.linspace(0, 1, k))),
    ("power", lambda x, k: np.sum(x ** k + x ** (k - 1))),
    ("concatenate", lambda x, k: np.sum(np.concatenate([x] * k) ** 2)),
    ("swapaxes", lambda x, k: np.sum(np.swapaxes(x, 0, k)[0])),
    ("expand_dims", lambda x, k: np.sum(np.expand_dims(x, k) ** 2)),
    ("cumsum", lambda x, k: np.sum(np.cumsum(x, axis=k) ** 2)),
    ("softmax", lambda x, k: np.sum(bn.softmax(x, axis=k)[0])),
    ("diff", lambda x, k: np.sum(np.diff(x, n=k, axis=0) ** 2)),
    ("split", lambda x, k: np.sum(np.split(x, [k], axis=0)[0])),
    ("pad", lambda x, k: np.sum(np.pad(x, k) ** 2)),
    ("triu", lambda x, k: np.sum(np.triu(x, k) ** 2)),
]


@pytest.mark.parametrize("name, f", CONFIG_INTS, ids=[c[0] for c in CONFIG_INTS])
def test_int_arguments_used_as_configuration_keep_working(name, f):
    """A small int argument is data; where numpy wants a Python int (an axis, a size, a
    shift), it becomes one, guarded: the same results as with the int static."""
    x = np.arange(12.0).reshape(3, 2, 2) / 7.0 - 0.5
    data, static = bn.grad(f), bn.grad(f, static_argnums=1)
    for k in (1, 2, 1):
        np.testing.assert_array_equal(data(x, k), static(x, k))
    assert len(data.tapes) == 1


def test_early_decisions_are_checked_before_the_rest_of_the_run(monkeypatch):
    """A large tape whose decisions come first (a numpy table sliced at a traced batch
    index, as autograd's examples pick their minibatch) checks its guards after the nodes
    they read and before the rest of the forward sweep and the reverse sweep
    (ir/tape.SPLIT_VALUES, layout.C_FROM): a call on another variant's batch pays that
    prefix, not a whole gradient run; the results are the bits of one whole run."""
    from burnumba.ir import tape as tape_mod
    from burnumba.kernels import layout
    rng = np.random.default_rng(0)
    table = rng.normal(size=(6, 4000))

    def loss(w, i):
        rows = table[(i % 3) * 2:(i % 3) * 2 + 2]   # numpy's slice: each batch a variant
        return np.sum(np.tanh(rows * w) ** 2)
    w = rng.normal(size=4000)
    split = bn.value_and_grad(loss)
    modes = []
    call = tape_mod.State._call

    def counted(self, mode):
        modes.append(mode)
        return call(self, mode)
    monkeypatch.setattr(tape_mod.State, "_call", counted)
    got = [split(w, i) for i in range(9)]
    assert len(split.plans) == 3 and all(t.guard_split > 0 for t in split.plans)
    modes.clear()
    for i in range(3, 9):                             # every batch's variant is known
        split(w, i)
    # one whole gradient per call; a variant tried on another batch stops at its prefix
    assert modes.count(layout.MODE_VALUE_AND_GRAD) == 6
    assert modes.count(layout.MODE_STEP_FORWARD) > 6
    monkeypatch.setattr(tape_mod, "SPLIT_VALUES", 10 ** 12)
    whole = bn.value_and_grad(loss)
    ag = autograd.value_and_grad(lambda w, i: anp.sum(anp.tanh(table[(i % 3) * 2:(i % 3) * 2
                                                                      + 2] * w) ** 2))
    for i, (value, gradient) in enumerate(got):
        v, g = whole(w, i)
        assert value == v
        np.testing.assert_array_equal(gradient, g)
        a, b = ag(w, i)
        np.testing.assert_allclose(gradient, b, rtol=1e-12, atol=1e-14)


# -- vmap's check of a whole batch (tracing/concrete.all_hold) agrees with the per-sample one
_SPECIAL = np.array([0.0, -0.0, 1.0, -2.5, 3.0, np.nan, np.inf, -np.inf, 1e-300, 2.9])


@pytest.mark.parametrize("seed", range(40))
def test_all_hold_is_every_row_of_holds_rows(seed):
    from burnumba.tracing.concrete import (INTEGER, LAST_KIND, TRUTH, all_hold, holds,
                                           holds_rows)
    rng = np.random.default_rng(seed)
    guards = int(rng.integers(1, 4))
    kinds = rng.choice(np.arange(LAST_KIND + 1), size=guards)
    want = rng.choice(_SPECIAL, size=guards)
    rows = int(rng.integers(1, 6))
    # mostly rows that hold (each guard's recorded value, or another that holds: a nonzero
    # for a truth guard, a value of the same integer part), some that do not
    values = np.empty((rows, guards))
    for k in range(guards):
        if kinds[k] == TRUTH:
            pool = _SPECIAL[_SPECIAL != 0] if want[k] != 0 else np.array([0.0, -0.0])
        elif kinds[k] == INTEGER:
            pool = np.array([want[k], want[k] + 0.25 * np.sign(want[k] or 1.0)])
        else:
            pool = np.array([want[k]])
        values[:, k] = rng.choice(pool, size=rows)
    if rng.random() < 0.5:
        values[rng.integers(rows), rng.integers(guards)] = rng.choice(_SPECIAL)
    expected = bool(holds_rows(values, kinds, want).all())
    assert all_hold(values, kinds, want) == expected
    # and holds_rows is holds, guard by guard
    each = [[bool(holds(float(values[r, k]), int(kinds[k]), float(want[k])))
             for k in range(guards)] for r in range(rows)]
    assert holds_rows(values, kinds, want).tolist() == [all(row) for row in each]


def test_values_only_a_decision_reads_are_not_differentiated():
    """A value only a Python decision reads (the sum of squares below) is computed on every
    run, for its guard, but no sweep differentiates it (need 0): its derivative would be
    multiplied by zero. The gradient is the branch's, as autograd's, on both branches, and
    the guard still switches branches."""
    def f(np_, x):
        s = np_.sum(x ** 2)
        if s > 1.0:
            return np_.sum(np_.sin(x))
        return np_.sum(np_.cos(x))

    ours, theirs = both(f)
    x_big, x_small = np.array([0.9, -0.8, 0.3]), np.array([0.1, 0.2, -0.3])
    tape = bn.trace(ours, x_big)
    rows = [ROWS[o].name for o in tape.op]
    guard = int(tape.guard_nodes[0])
    below = [k for k in range(guard + 1) if ROWS[tape.op[k]].kind != "leaf"]
    assert {rows[k] for k in below} >= {"square", "sum"}, rows
    assert all(tape.need[k] == 0 for k in below), [(rows[k], tape.need[k]) for k in below]
    grad = bn.grad(ours)
    for x in (x_big, x_small, x_big):
        np.testing.assert_allclose(grad(x), autograd.grad(theirs)(x), rtol=1e-14)
    hvp = bn.hvp(ours, x_big, np.ones(3))
    np.testing.assert_allclose(hvp, -np.sin(x_big), rtol=1e-14)


# -- a comparison with a constant (or of a value with itself) is a guard on its operand: the
# comparison row leaves the tape, which runs the kernel of the same program without the
# decision (tracing/tracer.py's _comparison_guard)
_UFUNCS = [np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal]
_CONSTANTS = [0.5, 0.0, -0.0, np.inf, -np.inf, np.nan]
_AT = [0.5, 0.0, -0.0, 0.75, -0.25, np.inf, -np.inf, np.nan, 1e-300, -1e300]


def _decided(ufunc, c, const_left):
    def f(x):
        if ufunc(c, x) if const_left else ufunc(x, c):
            return x * x * 3.0
        return np.sin(x)
    return f


def _expected(ufunc, c, const_left, x):
    with np.errstate(invalid="ignore"):
        taken = bool(ufunc(c, x) if const_left else ufunc(x, c))
        return (x * x * 3.0, 6.0 * x) if taken else (np.sin(x), np.cos(x)), taken


@pytest.mark.parametrize("in_c", [True, False], ids=["in-c", "python"])
@pytest.mark.parametrize("const_left", [False, True], ids=["x-op-c", "c-op-x"])
@pytest.mark.parametrize("ufunc", _UFUNCS, ids=[u.__name__ for u in _UFUNCS])
def test_a_comparison_with_a_constant_is_a_guard_on_its_operand(ufunc, const_left, in_c,
                                                                monkeypatch):
    from burnumba import kernels
    if not in_c:
        monkeypatch.setattr(kernels.engine, "has_guard_checks", lambda: False)
    comparisons = {kernels.OPCODE[u.__name__] for u in _UFUNCS}
    plain = bn.value_and_grad(lambda x: x * x * 3.0).trace(0.75)
    for c in _CONSTANTS:
        f = _decided(ufunc, c, const_left)
        vg = bn.value_and_grad(f)
        for p in _AT:
            tape = vg.trace(p)
            assert not comparisons & set(tape.op.tolist()), (c, p)
            assert tape.guard_kinds.tolist()[0] >= 4 and tape.guard_nodes.tolist() == [0]
            (_, _), taken = _expected(ufunc, c, const_left, p)
            if taken:                  # the very kernel of the program without the decision
                assert tape.kernel is plain.kernel
            run = tape.scalar_runner((0,), True, False)
            for x in _AT:
                (value, slope), same = _expected(ufunc, c, const_left, x)
                if same == taken:
                    got, (got_slope,) = run((x,))
                    np.testing.assert_array_equal((got, got_slope), (value, slope))
                else:
                    with pytest.raises(bn.GuardError, match=r"x [<>=!]=? "):
                        run((x,))
            # through the transformation: each point its own branch (a variant per branch)
            for x in _AT:
                (value, slope), _ = _expected(ufunc, c, const_left, x)
                np.testing.assert_array_equal(vg(x), (value, slope))


@pytest.mark.parametrize("in_c", [True, False], ids=["in-c", "python"])
def test_a_value_compared_with_itself_is_a_nan_guard(in_c, monkeypatch):
    from burnumba import kernels
    from burnumba.tracing.concrete import NAN
    if not in_c:
        monkeypatch.setattr(kernels.engine, "has_guard_checks", lambda: False)
    for op in (np.equal, np.not_equal, np.less_equal, np.greater):
        def f(a, b):
            loss = a * b + np.sin(a)
            return loss if op(loss, loss) else loss * 2.0
        vg = bn.value_and_grad(f, argnums=(0, 1))
        tape = vg.trace(1.5, 2.0)
        assert tape.guard_kinds.tolist() == [NAN]
        assert tape.kernel is bn.value_and_grad(lambda a, b: a * b + np.sin(a),
                                                argnums=(0, 1)).trace(1.5, 2.0).kernel
        run = tape.scalar_runner((0, 1), True, False)
        for a, b in [(1.5, 2.0), (0.0, -1.0), (np.inf, 1.0), (-2.0, np.inf)]:
            with np.errstate(invalid="ignore"):
                loss = a * b + np.sin(a)
                taken = bool(op(loss, loss))
                k = 1.0 if taken else 2.0
                want = (k * loss, (k * (b + np.cos(a)), k * a))
            if np.isnan(loss):                 # traced on a number: a NaN loss fails it
                with pytest.raises(bn.GuardError, match="NaN"):
                    run((a, b))
            else:
                got, grads = run((a, b))
                np.testing.assert_array_equal((got,) + grads, (want[0],) + want[1])
            got, grads = vg(a, b)
            np.testing.assert_array_equal((got,) + grads, (want[0],) + want[1])


def test_comparison_guards_under_every_path():
    """The folded guards hold in the array paths too: the CallPlan run, hvp, the njit handle,
    vmap's lanes and a saved tape (whose guards keep their kinds)."""
    def f(np_, x):
        s = np_.sum(x * x)
        if 1.0 < s:
            return s * np_.sum(np_.sin(x))
        return np_.sum(np_.cos(x)) - s
    ours, theirs = both(f)
    big, small = np.array([0.9, -0.8, 0.3]), np.array([0.1, 0.2, -0.3])
    g = bn.grad(ours)
    tape = bn.trace(ours, big)
    assert tape.guard_kinds.tolist() == [4]                         # s > 1.0: true
    for x in (big, small, big, small * 2, big * 0.5):
        np.testing.assert_allclose(g(x), autograd.grad(theirs)(x), rtol=1e-14)
        np.testing.assert_allclose(bn.hvp(ours, x, np.ones(3)),
                                   autograd.hessian(theirs)(x) @ np.ones(3), rtol=1e-13)
    X = np.stack([big, small, big * 0.5, small * 3])
    np.testing.assert_allclose(bn.vmap(g)(X), [autograd.grad(theirs)(x) for x in X],
                               rtol=1e-14)
    h = bn.njit_value_and_grad(ours, big)
    out = np.zeros(3)
    h(big, out)
    np.testing.assert_allclose(out, autograd.grad(theirs)(big), rtol=1e-14)
    with pytest.raises(bn.GuardError, match="if 1.0 < s"):
        h(small, out)
    loaded = pickle.loads(pickle.dumps(tape))
    assert loaded.guard_kinds.tolist() == [4]
    assert loaded(big) == tape(big)
    with pytest.raises(bn.GuardError, match=r"x > 1 .*it was True"):
        loaded(small)


def test_the_c_check_knows_every_kind_of_guard():
    """kernels/_bncall.c's failed_guard switches over the kinds of tracing/concrete.py; the
    extension states how many it knows, and an older one is not asked to check guards."""
    from burnumba.kernels import engine
    from burnumba.tracing.concrete import LAST_KIND
    assert engine.GUARD_KINDS == LAST_KIND + 1
    if engine._extension is not None:
        assert engine._extension.GUARD_KINDS == engine.GUARD_KINDS
        assert engine.has_guard_checks()


# -- numpy's decisions on arrays: np.any / np.all (and the methods) are traced masks, whose
# bool() in an `if` is a guard; np.allclose / array_equal / array_equiv return that bool
def _vector_newton(np_, a):
    """sqrt of each element of a, stopped when every step is small (numpy's usual test)."""
    z = a * 0.0 + 1.0
    for _ in range(60):
        step = (z * z - a) / (2.0 * z)
        z = z - step
        if np_.all(np_.abs(step) < 1e-12):
            break
    return np_.sum(z * z * z)


def _any_branch(np_, x):
    if np_.any(x > 1.0):
        return np_.sum(np_.sin(x) * x)
    if (x < -1.0).any():
        return np_.sum(x ** 3)
    return np_.sum(np_.tanh(x)) if (np_.abs(x) < 0.5).all() else np_.prod(x)


def _close_branch(np_, x):
    y = x * 2.0
    if np_.allclose(y, 2.0 * x[::-1]):
        return np_.sum(y * y)
    if np_.array_equal(np_.round(x), np_.round(x[::-1])):
        return np_.sum(np_.exp(x))
    return np_.sum(x) ** 2


ARRAY_DECISIONS = [
    ("vector_newton", _vector_newton, [[2.0, 9.0, 0.25], [4.0, 1e4, 3.0], [2.0, 9.0, 0.25]]),
    ("any_branch", _any_branch, [[0.3, 1.5, -0.2], [0.3, -1.5, 0.2], [0.1, -0.2, 0.4],
                                 [0.1, -0.7, 0.4], [0.3, 1.5, -0.2]]),
    ("close_branch", _close_branch, [[1.0, 2.0, 1.0], [1.0, 2.0, 1.2], [0.7, 2.0, 3.0],
                                     [1.0, 2.0, 1.0]]),
]


@pytest.mark.parametrize("name, fn, points", ARRAY_DECISIONS, ids=[p[0] for p in ARRAY_DECISIONS])
def test_numpy_any_all_allclose_decide_as_autograd(name, fn, points):
    """Each point takes another branch (and the last repeats the first: a replay); values and
    gradients against autograd, which runs the same numpy decisions on its boxes, and jvp."""
    ours, theirs = both(fn)
    vg = bn.value_and_grad(ours)
    for p in points:
        x = np.array(p)
        value, g = vg(x)
        assert value == pytest.approx(theirs(x), rel=1e-12)
        np.testing.assert_allclose(g, autograd.grad(theirs)(x), rtol=1e-9, atol=1e-12)
        t = np.linspace(0.5, 1.5, 3)
        _, tangent = bn.jvp(ours, (x,), (t,))
        assert tangent == pytest.approx(float(np.dot(g, t)), rel=1e-9, abs=1e-12)
    # under vmap each lane gets its own branch
    X = np.array(points)
    G = bn.vmap(bn.grad(ours))(X)
    for x, g in zip(X, G):
        np.testing.assert_allclose(g, autograd.grad(theirs)(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("shape, axis, keepdims", [
    ((5,), None, False), ((3, 4), 0, False), ((3, 4), 1, True), ((3, 4), None, True),
    ((2, 3, 4), (0, 2), False), ((2, 3, 4), -1, False), ((0, 3), 0, False), ((3, 0), 1, True),
    ((0,), None, False)])
def test_any_all_values_are_numpys_with_nan_zeros_and_where(name, shape, axis, keepdims):
    rng = np.random.default_rng(3)
    a = rng.choice(np.array([0.0, -0.0, 1.5, -2.0, np.nan, np.inf, -np.inf, 1e-300]),
                   size=shape)
    ref = getattr(np, name)
    got = bn.trace(lambda a: ref(a, axis=axis, keepdims=keepdims) * 1.0, a)(a)
    np.testing.assert_array_equal(got, ref(a, axis=axis, keepdims=keepdims))
    got = bn.trace(lambda a: getattr(a, name)(axis=axis, keepdims=keepdims) * 1.0, a)(a)
    np.testing.assert_array_equal(got, ref(a, axis=axis, keepdims=keepdims))
    if a.size:
        where = rng.uniform(size=shape) > 0.5
        got = bn.trace(lambda a: ref(a, axis=axis, keepdims=keepdims, where=where) * 1.0, a)(a)
        np.testing.assert_array_equal(got, ref(a, axis=axis, keepdims=keepdims, where=where))


def test_any_all_are_masks_without_gradient():
    x = np.array([[0.5, -2.0, 0.0], [1.0, 3.0, -1.0]])
    g = bn.grad(lambda x: np.sum(np.any(x > 0.7, axis=1, keepdims=True) * x))(x)
    np.testing.assert_array_equal(g, [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    # a mask: & and | of two of them trace (between masks only)
    g = bn.grad(lambda x: np.sum((np.any(x > 0.7, axis=0) | np.all(x < 0.0, axis=0)) * x[0]))(x)
    np.testing.assert_array_equal(g, [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])


def test_allclose_and_array_equal_take_the_other_branch_by_a_new_variant():
    calls = []

    def f(x):
        calls.append(1)
        return np.sum(x) if np.allclose(x, 1.0) else np.sum(x * x)
    g = bn.grad(f)
    assert g(np.ones(3)).tolist() == [1.0, 1.0, 1.0]
    assert g(np.array([1.0, 2.0, 3.0])).tolist() == [2.0, 4.0, 6.0]
    n = len(calls)
    assert g(np.array([1.0, 1.0 + 1e-9, 1.0])).tolist() == [1.0, 1.0, 1.0]
    assert g(np.array([0.0, 2.0, 1.0])).tolist() == [0.0, 4.0, 2.0]
    assert len(calls) == n                     # both variants replayed, no new trace
    # shapes that differ (array_equal) or do not broadcast (array_equiv) decide nothing
    h = bn.grad(lambda x: np.sum(x) * (np.array_equal(x, np.ones(2)) + 2.0 *
                                       np.array_equiv(x, np.ones((3, 2)))))
    assert h(np.ones(3)).tolist() == [0.0, 0.0, 0.0]
    h2 = bn.grad(lambda x: np.sum(x) * np.array_equiv(x, np.ones((2, 3))))
    assert h2(np.ones(3)).tolist() == [1.0, 1.0, 1.0]
    assert h2(np.array([1.0, 0.0, 1.0])).tolist() == [0.0, 0.0, 0.0]


# -- guards that only Python ints decide, failing again and again: those ints are keyed by
# value (as static_argnums would make them), so each value is one dict lookup away
def _one_hot_loss(np_, W, x, label, traces=None):
    if traces is not None:
        traces.append(label)
    y = np_.zeros(10)
    y[label] = 1.0                        # a numpy array written at a traced int: a guard
    z = np_.dot(x, W)
    p = np_.exp(z - np_.max(z))
    return -np_.sum(y * np_.log(p / np_.sum(p)))


def test_a_label_writing_a_numpy_array_is_keyed_by_value_once_it_keeps_changing():
    rng = np.random.default_rng(5)
    W, X = rng.normal(size=(5, 10)) * 0.3, rng.normal(size=(30, 5))
    labels = [k % 10 for k in range(30)]
    traces = []
    g = bn.grad(lambda W, x, label: _one_hot_loss(np, W, x, label, traces))
    with pytest.warns(bn.VariantWarning, match="only Python int arguments decide it"):
        first = [g(W, x, label) for x, label in zip(X[:10], labels[:10])]
    assert g._transformed.ints_static
    later = [g(W, x, label) for x, label in zip(X[10:20], labels[10:20])]
    traced = len(traces)                  # each label once more, keyed by its value now
    later += [g(W, x, label) for x, label in zip(X[20:], labels[20:])]
    assert len(traces) == traced          # every label found by its key: no trace
    ref = autograd.grad(lambda W, x, label: _one_hot_loss(anp, W, x, label))
    for G, x, label in zip(first + later, X, labels):
        np.testing.assert_allclose(G, ref(W, x, label), rtol=1e-12)
    # the tape of a keyed label runs on its own, saved and pickled too
    tape = g.trace(W, X[0], 3)
    assert tape.ints_static
    np.testing.assert_allclose(tape.value_and_grad(W, X[0], 3)[1], ref(W, X[0], 3),
                               rtol=1e-12)
    saved = io.BytesIO()
    tape.save(saved)
    saved.seek(0)
    for copy in (pickle.loads(pickle.dumps(tape)), bn.load_tape(saved)):
        assert copy.ints_static
        np.testing.assert_allclose(copy.value_and_grad(W, X[1], 3)[1], ref(W, X[1], 3),
                                   rtol=1e-12)
    # under vmap, each lane its own label's tape
    G = bn.vmap(g, in_axes=(None, 0, None))(W, X[:4], 7)
    for Gk, x in zip(G, X[:4]):
        np.testing.assert_allclose(Gk, ref(W, x, 7), rtol=1e-12)


def test_a_float_decision_that_keeps_changing_keeps_ints_as_data():
    def f(x, k):
        s = x * k
        for _ in range(int(x)):           # a trip count that x decides: a new one each call
            s = s + x
        return s
    g = bn.grad(f)
    with pytest.warns(bn.VariantWarning, match="Write the choice as data"):
        for j in range(12):
            assert g(j + 0.5, 3) == 3.0 + j
    assert not g._transformed.ints_static


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_c_check_of_guards_after_any_run(dtype):
    """Call plans, hvp and State.run check the guards with the extension's caller
    (``guards_hold``), on float32 tapes too (their F holds 4-byte items); a failed guard
    switches variant as the Python read of the guards did."""
    from burnumba import kernels

    def f(x):
        s = np.sum(x * x)
        if s > 1.0:
            return np.sum(np.sin(x)) * s
        return np.sum(x ** 3)
    g = bn.grad(f)
    small, large = np.full(3, 0.1, dtype), np.full(3, 0.9, dtype)
    for x in (small, large, small, large, large):
        want = (np.cos(x) * np.sum(x * x) + 2 * x * np.sum(np.sin(x))
                if np.sum(x * x) > 1.0 else 3 * x ** 2)
        np.testing.assert_allclose(g(x), want, rtol=1e-5 if dtype == np.float32 else 1e-13)
    tape = next(iter(g.tapes.values()))
    state = tape.state()
    if kernels.engine.has_guards_hold():
        assert state.holds == state.call.guards_hold
    for x in (np.full(3, 0.1), np.full(3, 0.9), np.full(3, 0.1)):     # hvp's own path
        # sum(sin x) * |x|^2: -diag(sin x) |x|^2 + 2 x cos(x)' + 2 cos(x) x' + 2 sum(sin x) I
        hess = (-np.diag(np.sin(x)) * np.sum(x * x) + 2 * np.outer(x, np.cos(x))
                + 2 * np.outer(np.cos(x), x) + 2 * np.sum(np.sin(x)) * np.eye(3))
        want = 6 * x if np.sum(x * x) <= 1.0 else hess @ np.ones(3)
        np.testing.assert_allclose(bn.hvp(f, x, np.ones(3)), want, rtol=1e-12)
