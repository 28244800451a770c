"""burnumba.optimize: scipy's solvers fed burnumba's derivatives reach the optima scipy
reaches with finite differences, and the derivatives handed over are the exact ones."""
import numpy as np
import pytest
import scipy.optimize as so

import burnumba as bn
from burnumba.optimize import ipopt, least_squares, minimize
from burnumba import MissingExtraError


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "CG", "Newton-CG", "trust-ncg",
                                    "trust-krylov", "trust-exact", "trust-constr"])
def test_unconstrained_methods_reach_the_minimum(method):
    res = minimize(rosen, np.full(10, -0.5), method=method, options={"maxiter": 3000})
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.ones(10), atol=2e-4)


def test_dogleg_on_a_convex_function():
    # dogleg needs a positive definite Hessian everywhere (Rosenbrock's is not)
    f = lambda x: np.sum((x - 2.0) ** 2 + 0.1 * x ** 4)              # noqa: E731
    res = minimize(f, np.zeros(6), method="dogleg")
    ref = so.minimize(f, np.zeros(6), method="BFGS")
    assert res.success
    np.testing.assert_allclose(res.x, ref.x, atol=1e-5)


def test_gradient_is_exact_and_args_are_data():
    target = np.arange(6.0)
    f = lambda x, t: np.sum((x - t) ** 2 * (1.0 + 0.1 * x ** 2))      # noqa: E731
    res = minimize(f, np.zeros(6), args=(target,), method="BFGS")
    ref = so.minimize(f, np.zeros(6), args=(target,), method="BFGS")
    np.testing.assert_allclose(res.x, ref.x, atol=1e-5)
    assert res.njev == res.nfev                  # value and gradient from one sweep each


def _convex_problem():
    c = np.array([1.0, -2.0, 0.5, 3.0, -1.0])
    obj = lambda x: np.sum((x - c) ** 2) + 0.1 * np.sum(x ** 4)        # noqa: E731
    cons = [{"type": "eq", "fun": lambda x: np.sum(x) - 1.0},
            {"type": "ineq", "fun": lambda x: 2.0 - x[0] ** 2 - x[3] ** 2}]
    return obj, cons


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
def test_constrained_optimum_matches_finite_differences(method):
    obj, cons = _convex_problem()
    ours = minimize(obj, np.zeros(5), constraints=cons, method=method)
    ref = so.minimize(obj, np.zeros(5), constraints=cons, method="SLSQP")
    assert ours.success and ref.success
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-4)
    assert abs(np.sum(ours.x) - 1.0) < 1e-6


def test_nonlinear_constraint_object_and_bounds():
    obj, _ = _convex_problem()
    nl = so.NonlinearConstraint(lambda x: np.stack([x[0] * x[1], np.sum(x)]), [-np.inf, 1.0],
                                [0.5, 1.0])
    bounds = [(-1.0, 1.0)] * 5
    ours = minimize(obj, np.zeros(5), constraints=[nl], bounds=bounds, method="trust-constr")
    ref = so.minimize(obj, np.zeros(5), constraints=[nl], bounds=bounds, method="trust-constr")
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-4)


def test_least_squares_sparse_jacobian():
    res = lambda x: np.concatenate([10.0 * (x[1:] - x[:-1] ** 2), 1.0 - x[:-1]])   # noqa: E731
    x0 = np.full(200, -0.5)
    out = least_squares(res, x0)
    assert out.success and out.cost < 1e-12
    assert "sparse" in type(out.jac).__module__
    lm = least_squares(res, np.full(20, -0.5), method="lm")
    assert lm.cost < 1e-12


def test_sparse_constraint_jacobian_is_what_scipy_gets():
    seen = []
    c = lambda x: x[1:] ** 2 - x[:-1]           # noqa: E731
    obj = lambda x: np.sum(x ** 2)              # noqa: E731

    def callback(xk, state=None):
        seen.append(state.jac[0] if state is not None else None)
    minimize(obj, np.ones(30), constraints=[{"type": "eq", "fun": c}], method="trust-constr",
             callback=callback, options={"maxiter": 5})
    J = seen[-1]
    assert hasattr(J, "toarray") and J.nnz == 2 * 29


def test_bad_input_is_named():
    with pytest.raises(bn.InputError, match="1-D"):
        minimize(rosen, np.zeros((2, 2)))
    with pytest.raises(bn.InputError, match="'type'"):
        minimize(rosen, np.zeros(3), constraints=[{"fun": lambda x: x[0]}])


def test_ipopt_needs_its_extra():
    try:
        import cyipopt  # noqa: F401
    except ImportError:
        with pytest.raises(MissingExtraError, match="cyipopt"):
            ipopt(rosen, np.zeros(3))
        return
    obj, cons = _convex_problem()
    res = ipopt(obj, np.zeros(5), constraints=cons, tol=1e-12)
    ref = so.minimize(obj, np.zeros(5), constraints=cons, method="SLSQP",
                      options={"ftol": 1e-14})
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)


def test_ipopt_gets_sparse_structures_and_matches_trust_constr():
    pytest.importorskip("cyipopt")
    n = 400

    def obj(x):
        return np.sum((x - 0.3) ** 2) + np.sum((x[1:] - x[:-1]) ** 2) + 0.1 * np.sum(x ** 4)
    cons = [{"type": "eq", "fun": lambda x: x[0::2] ** 2 + x[1::2] ** 2 - 1.0},
            {"type": "ineq", "fun": lambda x: x[:10] - 0.05}]
    bounds = [(-2.0, 2.0)] * n
    import burnumba.optimize as bo
    from burnumba.optimize import _constraint_parts
    funs, _, _ = _constraint_parts(cons, ())
    problem = bo._IpoptProblem(obj, funs, (), np.full(n, 0.5))
    rows, cols = problem.hessianstructure()
    assert (rows >= cols).all() and rows.size <= 3 * n      # tridiagonal's lower triangle
    assert problem.jacobianstructure()[0].size == n + 10
    res = ipopt(obj, np.full(n, 0.5), constraints=cons, bounds=bounds, tol=1e-10)
    ref = minimize(obj, np.full(n, 0.5), constraints=cons, bounds=bounds,
                   method="trust-constr", options={"gtol": 1e-10, "xtol": 1e-12})
    assert res.success, res.message
    np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-7)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-5)


def test_ipopt_without_constraints():
    pytest.importorskip("cyipopt")
    res = ipopt(rosen, np.zeros(6), bounds=[(-2.0, 2.0)] * 6, tol=1e-12)
    assert res.success and res.nit > 0
    np.testing.assert_allclose(res.x, np.ones(6), atol=1e-6)
