"""Custom derivative rules (bn.custom_vjp, bn.custom_jvp, burnumba.extend): the rule is the
derivative, under every transformation.

Table-driven: each CASE is a function with a rule in one of the styles, the same function
written for autograd (its body, whose autodiff the correct rule must equal) and a scale.
With scale 2 the rule is deliberately twice the true derivative, so the transformations
must give twice autograd's first derivatives: a rule that were bypassed fails."""
import functools

import numpy as np
import pytest

import burnumba as bn
from burnumba.extend import def_linear, defjvp, defjvp_argnum, defvjp, defvjp_argnum, primitive
from conftest import central_diff

ag = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


# -- the functions with rules, in each style --------------------------------------------------
def vjp_sin(scale):
    @bn.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (scale * c * g,))
    return f


def jvp_softplus(scale):
    @bn.custom_jvp
    def f(x):
        return np.log1p(np.exp(x))
    f.defjvp(lambda p, t: (f(p[0]), scale * t[0] / (1.0 + np.exp(-p[0]))))
    return f


def vjp_power(scale):
    """nondiff_argnums: the exponent is static, the rule gets it first."""
    @functools.partial(bn.custom_vjp, nondiff_argnums=(0,))
    def power(k, x):
        return x ** k
    power.defvjp(lambda k, x: (x ** k, x),
                 lambda k, x, g: (scale * k * x ** (k - 1) * g,))
    return lambda x: power(3, x)


def jvp_mul_tanh(scale):
    """Two differentiated arguments, custom_jvp."""
    @bn.custom_jvp
    def f(x, y):
        return np.tanh(x) * y
    f.defjvp(lambda p, t: (f(*p), scale * ((1.0 - np.tanh(p[0]) ** 2) * p[1] * t[0]
                                           + np.tanh(p[0]) * t[1])))
    return lambda x: f(x, np.cos(x))


def vjp_pytree(scale):
    """A dict argument, a tuple output."""
    @bn.custom_vjp
    def f(d):
        return np.exp(d["a"]), d["a"] * d["b"]
    f.defvjp(lambda d: (f(d), d),
             lambda d, g: ({"a": scale * (g[0] * np.exp(d["a"]) + g[1] * d["b"]),
                            "b": scale * g[1] * d["a"]},))

    def use(x):
        e, p = f({"a": x, "b": np.sin(x)})
        return e + p
    return use


def jvps_hypot(scale):
    """custom_jvp.defjvps: one rule per argument."""
    @bn.custom_jvp
    def f(x, y):
        return np.sqrt(x * x + y * y)
    f.defjvps(lambda t, ans, x, y: scale * t * x / ans, lambda t, ans, x, y: scale * t * y / ans)
    return lambda x: f(x, np.exp(x))


def primitive_logsumexp(scale):
    """autograd's own example of extend.primitive, with defvjp."""
    @primitive
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))
    defvjp(logsumexp, lambda ans, x: lambda g: scale * g * np.exp(x - ans))
    return lambda x: np.stack([logsumexp(x[:2]), logsumexp(x[2:]), logsumexp(x),
                               logsumexp(-x)])


def primitive_jvp(scale):
    """extend.defjvp, argument by argument, reverse mode by transposition."""
    @primitive
    def mul(x, y):
        return x * y
    defjvp(mul, lambda g, ans, x, y: scale * g * y, lambda g, ans, x, y: scale * x * g)
    return lambda x: mul(np.sin(x), x)


def primitive_vjp_argnum(scale):
    """extend.defvjp_argnum: one maker for every argument, given its number."""
    @primitive
    def f(x, y):
        return np.sin(x) * y
    defvjp_argnum(f, lambda k, ans, args, kwargs: (
        (lambda g: scale * g * np.cos(args[0]) * args[1]) if k == 0
        else (lambda g: scale * g * np.sin(args[0]))))
    return lambda x: f(x, np.cos(x))


def primitive_jvp_argnum(scale):
    """extend.defjvp_argnum, reverse mode by transposition."""
    @primitive
    def f(x, y):
        return np.sin(x) * y
    defjvp_argnum(f, lambda k, g, ans, args, kwargs: scale * g * (
        np.cos(args[0]) * args[1] if k == 0 else np.sin(args[0])))
    return lambda x: f(x, np.cos(x))


def _lse(x):
    m = anp.max(x)
    return m + anp.log(anp.sum(anp.exp(x - m)))


# name: (maker, the body for autograd (vector -> vector))
CASES = {
    "custom_vjp": (vjp_sin, anp.sin),
    "custom_jvp": (jvp_softplus, lambda x: anp.log1p(anp.exp(x))),
    "nondiff_argnums": (vjp_power, lambda x: x ** 3),
    "custom_jvp two arguments": (jvp_mul_tanh, lambda x: anp.tanh(x) * anp.cos(x)),
    "pytree in and out": (vjp_pytree, lambda x: anp.exp(x) + x * anp.sin(x)),
    "defjvps": (jvps_hypot, lambda x: anp.sqrt(x * x + anp.exp(x) ** 2)),
    "primitive defvjp": (primitive_logsumexp, lambda x: anp.stack(
        [_lse(x[:2]), _lse(x[2:]), _lse(x), _lse(-x)])),
    "primitive defjvp": (primitive_jvp, lambda x: anp.sin(x) * x),
    "primitive defvjp_argnum": (primitive_vjp_argnum, lambda x: anp.sin(x) * anp.cos(x)),
    "primitive defjvp_argnum": (primitive_jvp_argnum, lambda x: anp.sin(x) * anp.cos(x)),
}


def _point(rng):
    return rng.uniform(-1.5, 1.5, 4)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_first_derivatives_are_the_rules(name, scale, rng):
    make, body = CASES[name]
    f = make(scale)
    x, v = _point(rng), rng.normal(size=4)
    J = ag.jacobian(body)(x)
    want = scale * J
    np.testing.assert_allclose(f(x), body(x), rtol=1e-12)            # plain call: the body
    w = rng.normal(size=4)
    loss = lambda x: np.sum(w * f(x))                                # noqa: E731
    np.testing.assert_allclose(bn.grad(loss)(x), want.T @ w, rtol=1e-10)
    value, g = bn.value_and_grad(loss)(x)
    np.testing.assert_allclose(value, np.sum(w * body(x)), rtol=1e-12)
    np.testing.assert_allclose(g, want.T @ w, rtol=1e-10)
    y, t = bn.jvp(f, (x,), (v,))
    np.testing.assert_allclose(y, body(x), rtol=1e-12)
    np.testing.assert_allclose(t, want @ v, rtol=1e-10)
    y, pull = bn.vjp(f, x)
    np.testing.assert_allclose(pull(v)[0], want.T @ v, rtol=1e-10)
    np.testing.assert_allclose(bn.jacfwd(f)(x), want, rtol=1e-10)
    np.testing.assert_allclose(bn.jacrev(f)(x), want, rtol=1e-10)
    _, f_jvp = bn.linearize(f, x)
    np.testing.assert_allclose(f_jvp(v), want @ v, rtol=1e-10)
    X = np.stack([x, -x, 0.5 * x])
    per_sample = np.stack([scale * ag.jacobian(body)(s).T @ w for s in X])
    np.testing.assert_allclose(bn.vmap(bn.grad(loss))(X), per_sample, rtol=1e-10)
    h = bn.njit_value_and_grad(loss, x)
    out = np.empty(4)
    assert h(x, out) == pytest.approx(np.sum(w * body(x)), rel=1e-12)
    np.testing.assert_allclose(out, want.T @ w, rtol=1e-10)


@pytest.mark.parametrize("name", CASES)
def test_second_derivatives_compose(name, rng):
    """A correct rule: every second derivative is autograd's of the body, by grad of grad,
    hessian (forward over reverse), hvp, and grad of a traced jvp."""
    make, body = CASES[name]
    f = make(1.0)
    x, v, w = _point(rng), rng.normal(size=4), rng.normal(size=4)
    loss = lambda x: np.sum(w * f(x)) + 0.5 * np.sum(f(x) ** 2)                  # noqa: E731
    ref = lambda x: anp.sum(w * body(x)) + 0.5 * anp.sum(body(x) ** 2)           # noqa: E731
    H = ag.hessian(ref)(x)
    np.testing.assert_allclose(bn.hessian(loss)(x), H, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(bn.hvp(loss, x, v), H @ v, rtol=1e-9, atol=1e-12)
    gg = bn.grad(lambda x: np.sum(v * bn.grad(loss)(x)))(x)
    np.testing.assert_allclose(gg, H @ v, rtol=1e-9, atol=1e-12)
    jj = bn.grad(lambda x: np.sum(bn.jvp(f, (x,), (v,))[1] * w))(x)
    ref_jj = ag.grad(lambda x: anp.sum(ag.make_jvp(body)(x)(v)[1] * w))(x)
    np.testing.assert_allclose(jj, ref_jj, rtol=1e-9, atol=1e-12)


def test_a_vjp_rule_is_differentiated_through_its_residuals(rng):
    """JAX's semantics: the second derivative of a custom_vjp function differentiates the
    rule's residuals (the body is not). With bwd = 2 cos(x) g, the gradient of
    sum(f(x)^2) is 4 f(x) cos(x), and its derivative uses the rule again for f(x):
    8 cos^2 - 4 f sin."""
    f = vjp_sin(2.0)
    x = rng.uniform(-1, 1, 3)
    H = bn.hessian(lambda x: np.sum(f(x) ** 2))(x)
    np.testing.assert_allclose(np.diag(H), 8 * np.cos(x) ** 2 - 4 * np.sin(x) ** 2,
                               rtol=1e-12)


def test_a_stable_rule_beats_autodiff_of_the_body():
    x = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    with np.errstate(over="ignore"):
        sigmoid = 1.0 / (1.0 + np.exp(-x))
    plain = bn.grad(lambda x: np.sum(np.log1p(np.exp(x))))(x)
    assert np.isnan(plain[-1])                       # exp overflows: inf / inf
    stable = jvp_softplus(1.0)
    np.testing.assert_allclose(bn.grad(lambda x: np.sum(stable(x)))(x), sigmoid, rtol=1e-15)
    np.testing.assert_allclose(bn.jvp(stable, (x,), (np.ones(5),))[1], sigmoid, rtol=1e-15)


def test_gradients_match_central_differences(rng):
    for name, (make, body) in CASES.items():
        f = make(1.0)
        x = _point(rng)
        loss = lambda x: np.sum(np.cos(f(x)))                       # noqa: E731
        np.testing.assert_allclose(bn.grad(loss)(x),
                                   central_diff(lambda x: np.sum(np.cos(body(x))), [x], 0),
                                   rtol=1e-6, atol=1e-8, err_msg=name)


def test_functions_with_rules_nest_inside_other_functions(rng):
    """A rule called from a function called from the differentiated one; two calls of one
    rule in one trace; a rule whose input is a view (x[1:])."""
    f = vjp_sin(2.0)
    x = rng.uniform(-1, 1, 5)

    def inner(z):
        return f(z) * 3.0

    loss = lambda x: np.sum(inner(x[1:])) + np.sum(f(x))             # noqa: E731
    want = 2.0 * np.cos(x) + np.concatenate([[0.0], 6.0 * np.cos(x[1:])])
    np.testing.assert_allclose(bn.grad(loss)(x), want, rtol=1e-12)


def test_scalar_python_floats_and_has_aux():
    f = jvp_softplus(2.0)
    g, aux = bn.grad(lambda x: (f(x), x * 2.0), has_aux=True)(0.5)
    assert g == pytest.approx(2.0 / (1.0 + np.exp(-0.5)), rel=1e-14)
    assert aux == pytest.approx(1.0)


# -- errors --------------------------------------------------------------------------------------
def test_a_wrong_cotangent_shape_names_the_rule_and_the_shapes():
    @bn.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), x), lambda x, g: (np.sum(g) * np.ones(2),))
    with pytest.raises(bn.ShapeError, match=r"custom_vjp rule of .*f.*\(2,\).*\(3,\)"):
        bn.grad(lambda x: np.sum(f(x)))(np.ones(3))


def test_a_rule_that_returns_no_tuple_is_refused():
    @bn.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), x), lambda x, g: g * np.cos(x))
    with pytest.raises(bn.OutputError, match="one cotangent per differentiated argument"):
        bn.grad(lambda x: np.sum(f(x)))(np.ones(3))


def test_a_jvp_tangent_of_the_wrong_shape_is_refused():
    @bn.custom_jvp
    def f(x):
        return np.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), np.sum(t[0])))      # a scalar is broadcast ...
    assert bn.jvp(f, (np.ones(3),), (np.ones(3),))[1].shape == (3,)

    @bn.custom_jvp
    def h(x):
        return np.sin(x)
    h.defjvp(lambda p, t: (h(p[0]), t[0][:2]))          # ... another shape is an error
    with pytest.raises(bn.ShapeError, match=r"custom_jvp rule of .*h.*\(2,\).*\(3,\)"):
        bn.jvp(h, (np.ones(3),), (np.ones(3),))


def test_misuse_is_refused_with_the_fix():
    @bn.custom_vjp
    def f(x):
        return x
    with pytest.raises(bn.InputError, match="defvjp"):
        bn.grad(lambda x: f(x))(1.0)

    @bn.custom_vjp
    def g(x):
        return x
    g.defvjp(lambda x: (x, None), lambda r, c: (c,))
    with pytest.raises(bn.InputError, match="by position"):
        bn.grad(lambda x: g(x=x))(1.0)

    @functools.partial(bn.custom_vjp, nondiff_argnums=(0,))
    def p(k, x):
        return x * k
    p.defvjp(lambda k, x: (x * k, None), lambda k, r, c: (c * k,))
    with pytest.raises(bn.InputError, match="nondiff_argnums"):
        bn.grad(lambda x: p(x, x))(1.0)
    with pytest.raises(bn.InputError, match="not a primitive"):
        defvjp(lambda x: x, lambda ans, x: lambda g: g)


def test_a_primitive_argument_without_a_rule_is_refused_when_differentiated():
    """autograd raises for a vjp it was not given; a zero would be a silently wrong number."""
    @primitive
    def scaled(x, s):
        return x * s
    defvjp(scaled, lambda ans, x, s: lambda g: g * s)            # argument 0 only
    x, s = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(bn.grad(lambda x, s: np.sum(scaled(x, s)))(x, s), s)
    for how in (lambda: bn.grad(lambda x, s: np.sum(scaled(x, s)), argnums=1)(x, s),
                lambda: bn.jvp(lambda s: scaled(x, s), (s,), (np.ones(2),))):
        with pytest.raises(bn.InputError, match="argument 1 is differentiated.*no rule"):
            how()


def test_a_none_rule_is_a_zero_derivative_as_autograds():
    """defvjp(f, rule, None) / defjvp(f, rule, None): autograd's translate_vjp makes None a
    zero derivative (it is how autograd marks an argument such as where's condition)."""
    import autograd.extend as ae
    x, s = np.array([1.0, 2.0]), np.array([3.0, 4.0])

    @ae.primitive
    def theirs(x, s):
        return x * s
    ae.defvjp(theirs, lambda ans, x, s: lambda g: g * s, None)
    want = ag.grad(lambda x, s: anp.sum(theirs(x, s)), (0, 1))(x, s)
    for define in (lambda f: defvjp(f, lambda ans, x, s: lambda g: g * s, None),
                   lambda f: defjvp(f, lambda g, ans, x, s: g * s, None)):
        @primitive
        def ours(x, s):
            return x * s
        define(ours)
        got = bn.grad(lambda x, s: np.sum(ours(x, s)), argnums=(0, 1))(x, s)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(bn.jvp(ours, (x, s), (np.ones(2), np.ones(2)))[1], s)
    with pytest.raises(bn.InputError, match="a function, None"):
        defvjp(ours, 3.0)


def test_a_primitive_body_that_needs_plain_values_says_why_and_what_instead():
    """autograd runs a primitive's body on plain values; here it is traced."""
    import scipy.special

    @primitive
    def ndtri(p):
        return float(scipy.special.ndtri(float(p)))
    defvjp(ndtri, lambda ans, p: lambda g: g * np.sqrt(2 * np.pi) * np.exp(ans ** 2 / 2))
    assert ndtri(0.3) == scipy.special.ndtri(0.3)
    with pytest.raises(bn.ConcretizationError, match="ndtri: the body .*bn.njit_op"):
        bn.grad(ndtri)(0.3)


def test_def_linear_and_same_give_the_function_as_its_own_tangent():
    """def_linear (autograd defines only its jvp; here reverse mode is its transpose) and
    defjvp(f, "same")."""
    @primitive
    def dot(a, v):
        return np.dot(a, v)
    def_linear(dot)
    a, v = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 2.0])
    ga, gv = bn.grad(lambda a, v: np.sum(dot(a, v) ** 2), argnums=(0, 1))(a, v)
    np.testing.assert_allclose(ga, 2 * np.outer(a @ v, v), rtol=1e-14)
    np.testing.assert_allclose(gv, 2 * a.T @ (a @ v), rtol=1e-14)

    @primitive
    def scale(c, x):
        return c * x
    defjvp(scale, "same", "same")
    assert bn.grad(scale, argnums=(0, 1))(2.0, 3.0) == (3.0, 2.0)
    assert bn.hessian(lambda x: scale(x, x))(2.0) == 2.0


def test_plain_calls_run_the_function_itself():
    f = vjp_sin(2.0)
    assert f(0.5) == np.sin(0.5)
    assert f.__name__ == "f"


# -- implicit differentiation: custom_root, fixed_point ----------------------------------------
def _newton(f, x):
    for _ in range(40):
        x = x - f(x) / bn.grad(f)(x)
    return x


def _sqrt(a, tangent_solve=None):
    return bn.custom_root(lambda x: x * x - a, 1.0, _newton, tangent_solve)


@pytest.mark.parametrize("tangent_solve", [None, lambda g, y: y / g(1.0)])
@pytest.mark.parametrize("a", [0.3, 4.0, 17.0])
def test_sqrt_by_newton_has_the_derivatives_of_sqrt(a, tangent_solve):
    f = lambda a: _sqrt(a, tangent_solve)                      # noqa: E731
    assert f(a) == pytest.approx(np.sqrt(a), rel=1e-14)
    assert bn.grad(f)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-12)
    assert bn.jvp(f, (a,), (1.0,))[1] == pytest.approx(0.5 / np.sqrt(a), rel=1e-12)
    assert bn.grad(bn.grad(f))(a) == pytest.approx(-0.25 * a ** -1.5, rel=1e-10)


_W = np.array([[0.5, -0.2, 0.1], [0.1, 0.3, -0.4], [0.2, 0.0, 0.25]])


def _equilibrium(W, b):
    """z = tanh(W z + b), a deep-equilibrium layer, reduced to a loss."""
    z = bn.fixed_point(lambda z, W, b: np.tanh(W @ z + b), np.zeros(3), W, b, iters=80)
    return np.sum(z ** 2) + z[0]


def test_fixed_point_gradients_match_central_differences(rng):
    b = rng.normal(size=3) * 0.5
    gW, gb = bn.grad(_equilibrium, argnums=(0, 1))(_W, b)
    np.testing.assert_allclose(gb, central_diff(_equilibrium, [_W, b], 1), rtol=1e-6)
    np.testing.assert_allclose(gW, central_diff(_equilibrium, [_W, b], 0), rtol=1e-6)
    H = bn.hessian(lambda b: _equilibrium(_W, b))(b)
    H_num = np.stack([central_diff(lambda b: bn.grad(lambda b: _equilibrium(_W, b))(b)[j],
                                   [b], 0) for j in range(3)])
    np.testing.assert_allclose(H, H_num, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-14)


def test_fixed_point_closed_over_and_under_vmap(rng):
    """Parameters closed over instead of passed; per-sample gradients."""
    B = rng.normal(size=(4, 3)) * 0.5

    def loss(b):
        z = bn.fixed_point(lambda z: np.tanh(_W @ z + b), np.zeros(3), iters=80)
        return np.sum(z ** 2) + z[0]
    per = bn.vmap(bn.grad(loss))(B)
    for k in range(4):
        np.testing.assert_allclose(per[k], bn.grad(lambda b: _equilibrium(_W, b))(B[k]),
                                   rtol=1e-12)


def test_custom_root_errors():
    with pytest.raises(bn.ShapeError, match="custom_root.*shape \\(2,\\).*shape \\(\\)"):
        bn.grad(lambda a: bn.custom_root(lambda x: x - a, 1.0,
                                         lambda f, x: a * np.ones(2))[0])(1.0)
    with pytest.raises(bn.InputError, match="iters"):
        bn.fixed_point(np.tanh, 0.0, iters=0)


def test_a_traced_tape_with_a_rule_runs_its_gradient_by_ops(tmp_path):
    """bn.trace of a scalar function with a rule keeps its value and gradient traced as ops
    (tape.by_ops): the tape's value_and_grad and profile run it, and a file or a pickle
    holds it (format 3), so the loaded tape gives the rule's gradient (twice the true one
    here), never its body's."""
    import pickle
    f = vjp_sin(2.0)

    def loss(x, y):
        return np.sum(f(x) * y)
    x, y = np.array([0.5, 1.0]), np.array([1.0, 3.0])
    want = (float(np.sum(np.sin(x) * y)), 2.0 * np.cos(x) * y)
    tape = bn.trace(loss, x, y)
    assert tape(x, y) == pytest.approx(want[0], rel=1e-15)
    value, g = tape.value_and_grad(x, y)
    assert value == pytest.approx(want[0], rel=1e-15)
    np.testing.assert_allclose(g, want[1], rtol=1e-15)
    tape.save(tmp_path / "t.npz")
    assert str(np.load(tmp_path / "t.npz")["format"]) == "burnumba-tape-3"
    for other in (bn.load_tape(tmp_path / "t.npz"), pickle.loads(pickle.dumps(tape))):
        assert other(x, y) == pytest.approx(want[0], rel=1e-15)
        value, g = other.value_and_grad(x, y)
        np.testing.assert_allclose(g, want[1], rtol=1e-15)
        other.save(tmp_path / "again.npz")                     # and round again
        np.testing.assert_allclose(bn.load_tape(tmp_path / "again.npz").value_and_grad(
            x, y)[1], want[1], rtol=1e-15)
    for p in (tape.profile(x, y, repeats=2), bn.profile(loss, x, y, repeats=2)):
        assert "by ops" in p.mode and p.value == pytest.approx(want[0], rel=1e-15)
        np.testing.assert_allclose(p.grads, want[1], rtol=1e-15)
        assert "by ops" in str(p)
    # the tape bn.grad runs: its trace carries the by-ops tape too
    traced = bn.grad(loss, argnums=(0, 1)).trace(x, y)
    np.testing.assert_allclose(traced.value_and_grad(x, y)[1][0], want[1], rtol=1e-15)


def test_the_scalar_fast_path_of_a_rule_switches_branches():
    """Python floats: the by-ops tape's scalar path (one struct write, a forward run, one
    read), through a branch that alternates (a failed guard finds the other variant), with
    argnums in another order; the rule's derivative (twice the true one) every time."""
    f = jvp_softplus(2.0)

    def g(a, b):
        c = a * b
        return f(c) * b if c > 0.0 else c * c
    vg = bn.value_and_grad(g, argnums=(1, 0))
    for a, b in ((0.5, 2.0), (-0.5, 2.0), (0.25, 3.0), (-1.5, 0.5), (0.5, 2.0)):
        value, (db, da) = vg(a, b)
        c = a * b
        if c > 0:
            s = 1.0 / (1.0 + np.exp(-c))
            want = (np.log1p(np.exp(c)) * b, 2 * s * a * b + np.log1p(np.exp(c)),
                    2 * s * b * b)
        else:
            want = (c * c, 2 * c * a, 2 * c * b)
        assert value == pytest.approx(want[0], rel=1e-14)
        assert db == pytest.approx(want[1], rel=1e-14) and type(db) is float
        assert da == pytest.approx(want[2], rel=1e-14)
    state = vg._transformed
    assert state.fast is not None and state.fast[2].grads_in_output


def test_a_tape_with_a_rule_that_cannot_travel_says_why(tmp_path):
    """Without a value-and-gradient tape (a vector output: no scalar gradient), the tape
    refuses its kernel's own derivative sweeps (they would bypass the rule), files and
    pickles, each with the fix; its value still runs."""
    import pickle
    f = vjp_sin(2.0)
    tape = bn.trace(lambda x: f(x) * 2.0, np.ones(2))
    np.testing.assert_allclose(tape(np.array([0.5, 1.0])), 2 * np.sin([0.5, 1.0]))
    with pytest.raises(bn.OutputError, match="scalar output"):
        tape.value_and_grad(np.ones(2))
    with pytest.raises(bn.UnsupportedOpError, match="cannot be saved.*scalar output.*bn.vjp"):
        tape.save(tmp_path / "t.npz")
    with pytest.raises(bn.UnsupportedOpError, match="cannot be pickled"):
        pickle.dumps(tape)
    with pytest.raises(bn.UnsupportedOpError, match="custom derivative rule"):
        tape.state().run(1)                   # the kernel's value-and-gradient sweep


def test_grad_of_a_rule_takes_the_fast_path():
    """After the first call, bn.grad of a function with a rule runs its by-ops tape through
    a ByOpsPlan (no signature built again): same numbers as the general path, the rule's
    (twice the true derivative), with pytrees, has_aux and a branch that switches."""
    from burnumba.tracing.plan import ByOpsPlan
    f = vjp_sin(2.0)

    def loss(p, x):
        s = np.sum(f(p["w"] * x)) + p["b"] ** 2
        if s > 0.0:
            return s, {"s": s}
        return -s, {"s": s}
    g = bn.grad(loss, has_aux=True)
    p = {"w": np.array([0.5, 1.0]), "b": 0.25}
    for x in (np.array([1.0, 2.0]), np.array([-1.0, -2.0]), np.array([0.5, 0.7]),
              np.array([-1.0, -2.0])):
        grads, aux = g(p, x)
        sign = 1.0 if aux["s"] > 0 else -1.0
        np.testing.assert_allclose(grads["w"], sign * 2.0 * np.cos(p["w"] * x) * x,
                                   rtol=1e-14)
        assert grads["b"] == pytest.approx(sign * 0.5, rel=1e-15)
        assert type(grads["b"]) is float
    state = g._transformed
    assert isinstance(state.plan, ByOpsPlan)
    assert len(state.ops.variants[state.plan.tape.key]) == 2
    vg = bn.value_and_grad(lambda a, b: np.sum(f(a) * b), argnums=(0, 1))
    a, b = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    first = vg(a, b)
    again = vg(a, b)
    assert isinstance(vg._transformed.plan, ByOpsPlan)
    assert first[0] == again[0] == pytest.approx(np.sum(np.sin(a) * b), rel=1e-15)
    np.testing.assert_array_equal(first[1][0], again[1][0])
    np.testing.assert_allclose(again[1][0], 2 * np.cos(a) * b, rtol=1e-15)
    # a result is the caller's: the next call does not overwrite it
    again[1][0][0] = 99.0
    np.testing.assert_allclose(vg(a, b)[1][0], 2 * np.cos(a) * b, rtol=1e-15)


def test_threads_get_the_same_numbers(rng):
    """A tape with a rule and its traced-gradient tape are shared by threads; each run's
    state is the thread's own."""
    import concurrent.futures
    f = jvp_softplus(2.0)
    grad = bn.grad(lambda x: np.sum(f(x) * x))
    xs = [rng.normal(size=5) for _ in range(16)]
    alone = [grad(x) for x in xs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        together = list(pool.map(grad, xs))
    for a, t in zip(alone, together):
        np.testing.assert_array_equal(a, t)


def test_debug_nans_checks_the_traced_gradient():
    f = jvp_softplus(1.0)
    x = np.array([0.5, 30.0])
    with bn.debug_nans():
        np.testing.assert_allclose(bn.grad(lambda x: np.sum(f(x)))(x),
                                   1.0 / (1.0 + np.exp(-x)), rtol=1e-15)
        with pytest.raises(bn.NonFiniteError, match="log"):
            bn.grad(lambda x: np.sum(f(x) * np.log(x - 1.0)))(x)
