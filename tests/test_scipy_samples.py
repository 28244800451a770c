"""scipy.integrate's sample rules of traced values (burnumba/scipy/integrate.py: scipy's
own weights times the samples) and scipy's solvers given a right-hand side that closes over
traced values (transforms/library_calls.py: such a call goes to burnumba.scipy's)."""
import math

import numpy as np
import pytest
import scipy.integrate as si

import burnumba as bn
import burnumba.scipy.integrate as bi


def numeric(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h)
                     for e in np.eye(x.size)]).reshape(x.shape)


SAMPLES = {
    "trapezoid even spacing": lambda y, x: si.trapezoid(y, dx=0.3),
    "trapezoid with x": lambda y, x: si.trapezoid(y, x),
    "simpson odd count": lambda y, x: si.simpson(y, x=x),
    "simpson even count": lambda y, x: si.simpson(y[..., :-1], x=x[:-1]),
    "simpson dx": lambda y, x: si.simpson(y, dx=0.25),
    "cumulative_trapezoid": lambda y, x: si.cumulative_trapezoid(y, x),
    "cumulative_trapezoid initial": lambda y, x: si.cumulative_trapezoid(y, x, initial=0),
    "simpson axis 0": lambda y, x: si.simpson(y.reshape(7, 1) * np.ones((1, 2)), x=x, axis=0),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_rules_are_scipys_with_gradients(name):
    rule = SAMPLES[name]
    x = np.sort(np.random.default_rng(1).uniform(0.0, 2.0, 7))
    w = np.linspace(0.5, 1.5, 7)

    def f(w):
        return np.sum(np.sin(rule(np.exp(-w * x), x)))
    value, g = bn.value_and_grad(f)(w)
    assert value == pytest.approx(f(w), rel=1e-13)              # scipy's own result
    np.testing.assert_allclose(g, numeric(f, w), rtol=1e-6, atol=1e-9)


def test_traced_sample_points_name_the_fix():
    y = np.linspace(0.0, 1.0, 5)
    with pytest.raises(bn.UnsupportedOpError, match="pass them as numpy data"):
        bn.grad(lambda x: si.simpson(y, x=x))(np.linspace(0.0, 1.0, 5))
    with pytest.raises(bn.UnsupportedOpError, match="spacing dx"):
        bn.grad(lambda d: si.cumulative_trapezoid(y, dx=d)[-1])(0.5)
    # trapezoid takes a traced x (numpy's formula)
    g = bn.grad(lambda x: si.trapezoid(y ** 2, x))(np.linspace(0.0, 1.0, 5))
    np.testing.assert_allclose(g, numeric(lambda x: si.trapezoid(y ** 2, x),
                                          np.linspace(0.0, 1.0, 5)), rtol=1e-6, atol=1e-9)


def test_burnumba_scipy_names_them():
    assert {"trapezoid", "simpson", "cumulative_trapezoid"} <= set(bi.__all__)
    assert bi.simpson(np.ones(5), dx=0.5) == si.simpson(np.ones(5), dx=0.5)


def test_a_solver_whose_right_hand_side_closes_over_a_traced_value():
    """odeint(lambda y, t: -k * y, ...) with k traced: no argument is traced, the closure
    is; the call is burnumba.scipy's (RK4), whose value is exp(-k t) to its accuracy and
    whose gradient is the discrete solution's."""
    t = np.linspace(0.0, 1.0, 11)
    f = bn.value_and_grad(lambda k: si.odeint(lambda y, s: -k * y, 1.0, t)[-1, 0])
    value, g = f(0.7)
    assert value == pytest.approx(np.exp(-0.7), rel=1e-8)
    assert g == pytest.approx(-np.exp(-0.7), rel=1e-7)
    h = bn.grad(lambda k: si.solve_ivp(lambda s, y: -k * y, (0.0, 1.0), [1.0]).y[0, -1])
    assert h(0.7) == pytest.approx(-np.exp(-0.7), rel=1e-7)
    # with plain values scipy's own solver runs, also while a trace is open
    seen = {}

    def loss(k):
        seen["plain"] = si.odeint(lambda y, s: -0.5 * y, 1.0, t)[-1, 0]
        return k * 2.0
    bn.grad(loss)(1.0)
    assert seen["plain"] == si.odeint(lambda y, s: -0.5 * y, 1.0, t)[-1, 0]


QUADS = {
    "finite": (lambda k: si.quad(lambda x: np.exp(-k * x), 0.0, 1.0)[0],
               lambda k: (1 - np.exp(-k)) / k),
    "args, half-line, math": (lambda k: si.quad(lambda x, c: math.exp(-c * x), 0.0, np.inf,
                                                args=(k,))[0], lambda k: 1 / k),
    "whole line": (lambda k: si.quad(lambda x: np.exp(-k * x * x), -np.inf, np.inf)[0],
                   lambda k: np.sqrt(np.pi / k)),
    "down to -inf": (lambda k: si.quad(lambda x: np.exp(k * x), -np.inf, 0.0)[0],
                     lambda k: 1 / k),
    "traced upper bound": (lambda b: si.quad(lambda x: np.sin(x) ** 2, 0.3, b)[0],
                           lambda b: (b - 0.3) / 2 - (np.sin(2 * b) - np.sin(0.6)) / 4),
    "reversed bounds": (lambda b: si.quad(lambda x: np.sin(x) ** 2, b, 0.3)[0],
                        lambda b: -((b - 0.3) / 2 - (np.sin(2 * b) - np.sin(0.6)) / 4)),
    "a branch in the integrand": (
        lambda k: si.quad(lambda x: 1.0 / (1 + (k * x) ** 2) if x > 0.5 else k * x, 0, 3)[0],
        lambda k: k * 0.125 + (np.arctan(3 * k) - np.arctan(0.5 * k)) / k),
    # break points: a kink at a traced point, one outside the interval, one repeated
    "points at a traced kink": (
        lambda k: si.quad(lambda x: abs(x - k), 0.0, 3.0, points=[k, 5.0, k])[0],
        lambda k: (k * k + (3.0 - k) ** 2) / 2),
    "points, reversed bounds": (
        lambda k: si.quad(lambda x: np.maximum(x - 1.0, 0.0) * k, 2.5, 0.0, points=(1.0,))[0],
        lambda k: -k * 1.125),
}


@pytest.mark.parametrize("name", sorted(QUADS))
def test_quad_of_traced_values_against_the_closed_form(name):
    """quad of an integrand closing over a traced value, of traced args or bounds: the
    value within quad's tolerance of the closed form (and of scipy's), the gradient the
    closed form's, also on replays at other points (whose refinement may differ: guards)."""
    f, exact = QUADS[name]
    g = bn.value_and_grad(f)
    for k in (0.7, 1.3, 2.0):
        value, grad = g(k)
        assert value == pytest.approx(exact(k), rel=1e-9, abs=1e-12)
        assert value == pytest.approx(f(k), rel=1e-8, abs=1e-12)      # scipy's own quad
        assert grad == pytest.approx((exact(k + 1e-6) - exact(k - 1e-6)) / 2e-6, rel=1e-6)


def test_quad_what_is_refused_and_what_stays_scipys():
    with pytest.raises(bn.UnsupportedOpError, match="write the weight into the integrand"):
        bn.grad(lambda k: si.quad(lambda x: k * x, 0.0, 1.0, weight="cos", wvar=2.0)[0])(1.0)
    with pytest.raises(ValueError, match="Infinity inputs cannot be used with break points"):
        bn.grad(lambda k: si.quad(lambda x: np.exp(-k * x), 0.0, np.inf, points=[1.0])[0])(1.0)
    seen = {}

    def loss(k):
        seen["plain"] = si.quad(np.cos, 0.0, 1.0)
        return k * 2.0
    bn.grad(loss)(1.0)
    assert seen["plain"] == si.quad(np.cos, 0.0, 1.0)          # scipy's, value and error


def test_quad_points_split_where_the_integrand_kinks():
    """Break points at a traced kink: the pieces meet there, so the value is exact to the
    rule's digits on far fewer evaluations than bisection needs without them, and the
    gradient in the kink's position is the closed form's."""
    calls = {"n": 0}

    def integrand(x, k):
        calls["n"] += 1
        return abs(x - k)
    g = bn.value_and_grad(lambda k: si.quad(integrand, 0.0, 3.0, args=(k,), points=[k])[0])
    value, grad = g(1.1)
    with_points = calls["n"]
    assert value == pytest.approx((1.1 ** 2 + 1.9 ** 2) / 2, rel=1e-14)
    assert grad == pytest.approx(2 * 1.1 - 3.0, rel=1e-12)
    calls["n"] = 0
    bn.value_and_grad(lambda k: si.quad(integrand, 0.0, 3.0, args=(k,))[0])(1.1)
    assert with_points == 2 * 21 < calls["n"]          # two qk21 pieces, against bisection


def test_the_kronrod_constants_integrate_polynomials_exactly():
    """qk21's 21 Kronrod points integrate x^d over [-1, 1] exactly to degree 31 (and no
    further), its 10 Gauss points to degree 19: a typo in a constant breaks one of these."""
    xk = np.array(bi._XGK)
    nodes = np.concatenate([-xk[:-1], xk])
    weights = np.concatenate([bi._WGK[:-1], bi._WGK])
    gauss = np.concatenate([-xk[1:10:2], xk[1:10:2]])
    gw = np.concatenate([bi._WG, bi._WG])
    for d in range(32):
        exact = 2 / (d + 1) if d % 2 == 0 else 0.0
        assert abs(np.dot(weights, nodes ** d) - exact) < 1e-15
        if d < 20:
            assert abs(np.dot(gw, gauss ** d) - exact) < 1e-15
    assert abs(np.dot(weights, nodes ** 32) - 2 / 33) > 1e-13
    assert abs(np.dot(gw, gauss ** 20) - 2 / 21) > 1e-7
