"""What migrating users meet in the first hour (issue #31, part 4): size-1 losses, jvp's
argnums, the curried hvp, check_grads and flatten."""
import numpy as np
import pytest

import burnumba as bn

ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


# -- outputs of size 1 are scalar losses, as autograd takes them -----------------------------------
SIZE_ONE = {
    "(1,) by keepdims": (lambda x: np.sum(x ** 3, keepdims=True),
                         lambda x: anp.sum(x ** 3, keepdims=True)),
    "(1, 1) by matmul": (lambda x: x[None, :] @ np.tanh(x)[:, None],
                         lambda x: anp.dot(x[None, :], anp.tanh(x)[:, None])),
    "(1,) by indexing": (lambda x: np.sin(x)[1:2] * x[0],
                         lambda x: anp.sin(x)[1:2] * x[0]),
}


@pytest.mark.parametrize("name", SIZE_ONE)
def test_size_one_outputs_are_scalar_losses(name, rng):
    f, ref = SIZE_ONE[name]
    x = rng.normal(size=3)
    want = ag.grad(ref)(x)
    np.testing.assert_allclose(bn.grad(f)(x), want, rtol=1e-12)
    value, g = bn.value_and_grad(f)(x)
    assert value == pytest.approx(float(np.ravel(ref(x))[0]), rel=1e-14)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(bn.grad(lambda x: np.sum(bn.grad(f)(x) ** 2))(x),
                               ag.grad(lambda x: anp.sum(ag.grad(ref)(x) ** 2))(x), rtol=1e-10)
    # the Hessian of a (1,) output has its shape in front, (1, 3, 3), as autograd's and JAX's
    np.testing.assert_allclose(bn.hessian(f)(x), ag.hessian(ref)(x), rtol=1e-10, atol=1e-15)


def test_larger_outputs_are_still_refused():
    with pytest.raises(bn.OutputError, match="scalar output.*shape \\(2,\\)"):
        bn.grad(lambda x: x * 2.0)(np.ones(2))


# -- jvp's argnums -------------------------------------------------------------------------------
def _f(w, x, k):
    return np.tanh(w * x) ** k + w * np.sum(x)


@pytest.mark.parametrize("argnums, tangents", [
    (0, (1.5,)),
    ((0,), (1.5,)),
    (1, (np.array([0.5, -1.0, 2.0]),)),
    ((1, 0), (np.array([0.5, -1.0, 2.0]), 1.5)),
    ((0, 1), (1.5, np.array([0.5, -1.0, 2.0]))),
    (-2, (np.array([0.5, -1.0, 2.0]),)),
])
def test_jvp_argnums_against_the_full_jvp(argnums, tangents):
    w, x = 0.7, np.array([0.3, -0.2, 1.1])
    nums = (argnums,) if isinstance(argnums, int) else argnums
    full = [0.0, np.zeros(3)]
    for k, t in zip(nums, tangents):
        full[k % 3] = t
    y, t = bn.jvp(_f, (w, x, 2), tangents, argnums=argnums)
    y_ref, t_ref = bn.jvp(lambda w, x: _f(w, x, 2), (w, x), tuple(full))
    np.testing.assert_allclose(y, y_ref, rtol=1e-15)
    np.testing.assert_allclose(t, t_ref, rtol=1e-13)
    # inside another trace: the same numbers, differentiated again
    d = bn.grad(lambda w: np.sum(bn.jvp(_f, (w, x, 2), tangents, argnums=argnums)[1]))(w)
    d_ref = bn.grad(lambda w: np.sum(bn.jvp(lambda w, x: _f(w, x, 2), (w, x),
                                            tuple(full))[1]))(w)
    assert d == pytest.approx(d_ref, rel=1e-12)


def test_jvp_argnums_with_a_custom_rule_and_has_aux():
    @bn.custom_jvp
    def f(w, x):
        return w * x
    f.defjvp(lambda p, t: (f(*p), 2.0 * (t[0] * p[1] + p[0] * t[1])))
    x = np.array([1.0, 2.0])
    y, t, aux = bn.jvp(lambda w, x: (f(w, x), w), (3.0, x), (1.0,), argnums=0, has_aux=True)
    np.testing.assert_allclose(t, 2.0 * x)
    assert aux == 3.0


def test_jvp_argnums_errors():
    x = np.ones(2)
    with pytest.raises(bn.InputError, match="argnums"):
        bn.jvp(_f, (1.0, x, 2), (1.0,), argnums=5)
    with pytest.raises(bn.InputError, match="one entry per primal"):
        bn.jvp(_f, (1.0, x, 2), (1.0, x), argnums=0)
    with pytest.raises(bn.ShapeError, match="tangent 0"):
        bn.jvp(_f, (1.0, x, 2), (np.ones(3),), argnums=1)


# -- the curried hvp reuses its tapes ----------------------------------------------------------
def test_curried_hvp_traces_once(rng):
    traced = []

    def f(x):
        traced.append(1)                 # Python runs only while tracing
        return np.sum(np.sin(x) * x ** 3)

    hv = bn.hvp(f)
    x, v = rng.normal(size=5), rng.normal(size=5)
    H = ag.hessian(lambda x: anp.sum(anp.sin(x) * x ** 3))(x)
    np.testing.assert_allclose(hv(x, v), H @ v, rtol=1e-12)
    np.testing.assert_allclose(bn.hvp(f, x, v), H @ v, rtol=1e-12)
    count = len(traced)
    for _ in range(3):
        x, v = rng.normal(size=5), rng.normal(size=5)
        H = ag.hessian(lambda x: anp.sum(anp.sin(x) * x ** 3))(x)
        np.testing.assert_allclose(hv(x, v), H @ v, rtol=1e-12)
    assert len(traced) == count
    with pytest.raises(bn.InputError, match="both x and v"):
        bn.hvp(f, x)


# -- check_grads -----------------------------------------------------------------------------
CHECKED = {
    "tanh squared": (lambda x: np.sum(np.tanh(x) ** 2), (np.array([0.3, -1.2]),), 0),
    "vector output": (lambda x: np.exp(x) * np.sin(x[::-1]), (np.array([0.1, 0.5, -0.7]),), 0),
    "pytree in and out": (lambda x, y: {"a": np.sin(x) * y, "b": (x ** 2, np.exp(y))},
                          (np.array([0.2, 0.4]), 0.5), (0, 1)),
    "matrix": (lambda W, x: np.tanh(W @ x), (np.array([[0.5, -0.2], [0.1, 0.3]]),
                                             np.array([1.0, 2.0])), (0, 1)),
}


@pytest.mark.parametrize("name", CHECKED)
@pytest.mark.parametrize("modes", [("fwd", "rev"), ("rev",), "fwd"])
def test_check_grads_passes_correct_derivatives(name, modes):
    f, args, argnums = CHECKED[name]
    assert bn.check_grads(f, args, order=2, modes=modes, argnums=argnums) is None
    assert bn.check_grads(f, modes=modes, order=2, argnums=argnums)(*args) is None


@pytest.mark.parametrize("modes, which", [("fwd", "the jvp"), ("rev", "the vjp")])
def test_check_grads_finds_a_wrong_rule(modes, which):
    @bn.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (1.01 * c * g,))   # 1 % off
    with pytest.raises(bn.GradientCheckError, match=f"{which} of f.*worst element"):
        bn.check_grads(f, modes=modes, order=1)(np.array([0.3, -0.4]))
    with pytest.raises(AssertionError):                      # autograd's exception type
        bn.check_grads(f, (np.array([0.3, -0.4]),), modes=modes, order=1)


def test_check_grads_order_two_checks_second_derivatives():
    """A rule right at first order and wrong at second: its residual is wrong."""
    @bn.custom_vjp
    def f(x):
        return x ** 3
    f.defvjp(lambda x: (x ** 3, x), lambda x, g: (3.0 * x ** 2 * g,))
    bn.check_grads(f, modes="rev", order=2)(np.array([0.3, 0.8]))      # correct
    # the residual's own derivative stopped: the second derivative is lost
    f.defvjp(lambda x: (x ** 3, bn.stop_gradient(x)), lambda x, g: (3.0 * x ** 2 * g,))
    bn.check_grads(f, modes="rev", order=1)(np.array([0.3, 0.8]))
    with pytest.raises(bn.GradientCheckError, match="the vjp of the vjp of f"):
        bn.check_grads(f, modes="rev", order=2)(np.array([0.3, 0.8]))


def test_check_grads_argument_errors():
    with pytest.raises(bn.InputError, match="modes"):
        bn.check_grads(np.sin, modes=("backward",))
    with pytest.raises(bn.InputError, match="order"):
        bn.check_grads(np.sin, order=0)


# -- flatten -------------------------------------------------------------------------------------
TREES = {
    "dict of arrays": {"w": np.arange(6.0).reshape(2, 3), "b": np.array([0.5, -1.0])},
    "nested": ({"a": 1.5, "b": [np.ones(2), np.zeros((1, 2))]}, np.array([3.0])),
    "one array": np.arange(4.0).reshape(2, 2),
}


@pytest.mark.parametrize("name", TREES)
def test_flatten_matches_autograd(name):
    from autograd.misc import flatten as ag_flatten
    tree = TREES[name]
    vec, unflatten = bn.flatten(tree)
    ag_vec, ag_unflatten = ag_flatten(tree)
    np.testing.assert_array_equal(vec, ag_vec)
    new = np.arange(vec.size, dtype=float) * 0.5
    ours, theirs = bn.flatten(unflatten(new))[0], ag_flatten(ag_unflatten(new))[0]
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, new)


def test_flatten_under_a_transformation(rng):
    params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=3)}
    vec, unflatten = bn.flatten(params)
    x = rng.normal(size=2)

    def loss(p):
        return np.sum(np.tanh(p["W"] @ x + p["b"]) ** 2)
    g_tree = bn.grad(loss)(params)
    g_vec = bn.grad(lambda v: loss(unflatten(v)))(vec)
    np.testing.assert_allclose(g_vec, bn.flatten(g_tree)[0], rtol=1e-14)
    g_traced = bn.grad(lambda p: np.sum(bn.flatten(p)[0] ** 3))(params)
    np.testing.assert_allclose(bn.flatten(g_traced)[0], 3 * vec ** 2, rtol=1e-14)
    with pytest.raises(bn.InputError, match=r"\(9,\)"):
        unflatten(np.ones(4))


@pytest.mark.parametrize("inner", [lambda w, x: np.sum(w * x), lambda w, x: np.sum(x * w),
                                   lambda w, x: np.sum(np.stack([w, w]) @ x)])
def test_an_outer_value_on_either_side_of_an_inner_one(inner):
    """The inner function closes over the outer trace's w: with w as the left operand, the
    inner trace was named as the one to run in (a leaked internal NestedTrace)."""
    d = bn.grad(lambda w: np.sum(bn.grad(lambda x: inner(w, x))(np.ones(2))))(1.5)
    assert d == 2.0


# -- autograd.misc.flatten's flatten_func, and numpy's order=None in autograd's own vjps ---------
def test_flatten_func_as_autograd_gives_it(rng):
    from autograd.misc.flatten import flatten_func as ag_flatten_func
    params = {"w": rng.normal(size=(2, 3)), "b": rng.normal(size=3), "s": 0.5}

    def objective(p, scale):
        return scale * np.sum(np.tanh(p["w"] @ p["b"]) ** 2) + p["s"] ** 2

    def ag_objective(p, scale):
        return scale * anp.sum(anp.tanh(anp.dot(p["w"], p["b"])) ** 2) + p["s"] ** 2
    f, unflatten, x0 = bn.flatten_func(objective, params)
    fa, unflatten_a, xa = ag_flatten_func(ag_objective, params)
    np.testing.assert_array_equal(x0, xa)
    np.testing.assert_allclose(f(x0, 2.0), fa(xa, 2.0), rtol=1e-14)
    np.testing.assert_allclose(bn.grad(f)(x0, 2.0), ag.grad(fa)(xa, 2.0), rtol=1e-13)
    np.testing.assert_array_equal(unflatten(x0)["w"], params["w"])


def test_reshape_and_ravel_take_order_none_as_c(rng):
    x = rng.normal(size=(2, 3))
    g = bn.grad(lambda x: np.sum(np.reshape(x, (3, 2), order=None)[0]
                                 * np.ravel(x, order=None)[:2]))
    ref = ag.grad(lambda x: anp.sum(anp.reshape(x, (3, 2))[0] * anp.ravel(x)[:2]))
    np.testing.assert_allclose(g(x), ref(x), rtol=1e-14)


# -- multivariate_normal: scipy's shapes, and the same number on plain and traced values ----------
def test_multivariate_normal_shapes_and_plain_values_match_scipy_and_the_trace(rng):
    import scipy.stats as st
    from burnumba.scipy.stats import multivariate_normal as mvn
    A = rng.normal(size=(3, 3))
    C = A @ A.T + 0.1 * np.eye(3)
    x, mu = rng.normal(size=(5, 3)), rng.normal(size=3)
    cases = [(x, mu, C), (x[0], mu, C), (x[0], mu, 2.0), (x, None, C), (x, mu, np.ones(3) * 2),
             (x[:, 0], 0.0, 1.5), (x[:, 0], None, 1.5), (1.3, 0.2, 2.0),
             (x[:, 0], np.array([0.1]), np.array([[2.0]]))]
    for point, mean, cov in cases:
        ref = st.multivariate_normal.logpdf(point, mean, cov)
        plain = mvn.logpdf(point, mean, cov)
        assert np.shape(plain) == np.shape(ref)
        np.testing.assert_allclose(plain, ref, rtol=1e-13)
        value = bn.value_and_grad(lambda p: np.sum(mvn.logpdf(p, mean, cov)))(
            np.asarray(point, dtype=float))[0]
        np.testing.assert_allclose(value, np.sum(ref), rtol=1e-13)
    # a cov that scipy's eigenvalue test calls singular but that has a Cholesky factor: a
    # number on both paths (scipy raises); not positive definite: NaN on both
    near = np.diag([1.0, 1e-17 + 1e-16])
    assert np.isfinite(mvn.logpdf(np.zeros(2), None, near))
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.isnan(mvn.logpdf(np.zeros(2), None, bad))
    assert np.isnan(bn.value_and_grad(lambda p: mvn.logpdf(p, None, bad))(np.zeros(2))[0])
