"""``burnumba.optimize``: scipy's and IPOPT's solvers fed from one tape per function.

``minimize(fun, x0, ...)`` has the signature of ``scipy.optimize.minimize``. It builds what
the method can use from burnumba's transformations of ``fun`` and of the constraints, each
traced once per input signature and replayed at every solver call:

* the value and gradient together (``jac=True`` for scipy: one sweep per iterate);
* the Hessian where the method takes one: sparse (``bn.sparse_hessian``) for
  ``trust-constr``, a Hessian-vector product (``bn.hvp``) for ``Newton-CG``, ``trust-ncg``
  and ``trust-krylov``, dense (``bn.hessian``) for ``dogleg`` and ``trust-exact``;
* the constraints' Jacobians, sparse for ``trust-constr`` (with the Hessian of the
  Lagrangian's constraint part, ``sum_i v_i c_i(x)``, sparse too) and dense for ``SLSQP`` /
  ``COBYQA`` (which take dense ones).

``least_squares`` passes the sparse Jacobian (``bn.sparse_jacobian``) to scipy's
``trf`` / ``dogbox`` (dense for ``lm``). ``ipopt`` passes the same sparse structures to
cyipopt (the ``ipopt`` extra) when it is installed.

>>> import numpy as np
>>> from burnumba.optimize import minimize
>>> res = minimize(lambda x: np.sum((x - 3.0) ** 2), np.zeros(4), method="BFGS")
>>> np.round(res.x, 6)
array([3., 3., 3., 3.])
"""
import numpy as np

from .._errors import InputError, MissingExtraError
from ..transforms.core import value_and_grad
from ..transforms.forward import hessian, hvp, jacobian
from ..transforms.sparse import sparse_hessian, sparse_jacobian

__all__ = ["minimize", "least_squares", "ipopt"]

_HESS_SPARSE = {"trust-constr"}
_HESS_VECTOR = {"newton-cg", "trust-ncg", "trust-krylov"}
_HESS_DENSE = {"dogleg", "trust-exact"}
_DENSE_CONSTRAINTS = {"slsqp", "cobyqa", "cobyla"}


def _scipy_optimize():
    try:
        import scipy.optimize as so
    except ImportError:                                  # pragma: no cover (scipy is a dep)
        raise MissingExtraError("burnumba.optimize needs scipy: pip install scipy") from None
    return so


def _vector(x0):
    x = np.asarray(x0, dtype=float)
    if x.ndim != 1:
        raise InputError(f"x0 must be a 1-D array (scipy.optimize's convention), got shape "
                         f"{x.shape}: flatten it, e.g. with bn.flatten")
    return x


def _dense(m):
    return m.toarray() if hasattr(m, "toarray") else np.asarray(m)


def _constraint_dicts(constraints):
    if constraints is None:
        return []
    if isinstance(constraints, dict) or not isinstance(constraints, (list, tuple)):
        constraints = [constraints]
    return list(constraints)


def _constraints(constraints, method):
    """scipy's constraints, each with its derivatives from burnumba. Dicts {'type', 'fun',
    'args'} and ``NonlinearConstraint`` objects are accepted; a constraint that already has a
    ``jac`` keeps it; linear constraints pass through."""
    so = _scipy_optimize()
    out = []
    for c in _constraint_dicts(constraints):
        if isinstance(c, so.LinearConstraint):
            out.append(c)
            continue
        if isinstance(c, so.NonlinearConstraint):
            fun, args = c.fun, ()
            lb, ub = c.lb, c.ub
            kind = None
        elif isinstance(c, dict):
            if "fun" not in c or c.get("type") not in ("eq", "ineq"):
                raise InputError("a constraint dict needs 'type' ('eq' or 'ineq') and 'fun', "
                                 f"as scipy.optimize.minimize's; got keys {sorted(c)}")
            fun, args, kind = c["fun"], tuple(c.get("args", ())), c["type"]
            lb, ub = 0.0, (0.0 if kind == "eq" else np.inf)
        else:
            raise InputError(f"constraints: expected dicts or scipy.optimize constraint "
                             f"objects, got {type(c).__name__}")
        if method in _HESS_SPARSE:
            jac = c.jac if isinstance(c, so.NonlinearConstraint) and callable(c.jac) else None
            sj = sparse_jacobian(lambda x, *a, _f=fun: np.atleast_1d(_f(x, *a)))
            sh = sparse_hessian(lambda x, v, *a, _f=fun: np.sum(v * np.atleast_1d(_f(x, *a))))
            out.append(so.NonlinearConstraint(
                lambda x, _f=fun, _a=args: np.atleast_1d(_f(x, *_a)), lb, ub,
                jac=jac or (lambda x, _j=sj, _a=args: _j(x, *_a)),
                hess=lambda x, v, _h=sh, _a=args: _h(x, np.asarray(v, dtype=float), *_a)))
        else:
            dj = jacobian(lambda x, *a, _f=fun: np.atleast_1d(_f(x, *a)))
            if kind is None:
                out.append(so.NonlinearConstraint(
                    lambda x, _f=fun, _a=args: np.atleast_1d(_f(x, *_a)), lb, ub,
                    jac=lambda x, _j=dj, _a=args: _dense(_j(x, *_a))))
            else:
                out.append({"type": kind, "fun": fun, "args": args,
                            "jac": (lambda x, *a, _j=dj: _dense(_j(x, *a))) if "jac" not in c
                            else c["jac"]})
    return out


def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
             constraints=(), tol=None, callback=None, options=None):
    """``scipy.optimize.minimize`` with ``fun``'s gradient, Hessian (sparse, dense or as
    products, as the method takes it) and the constraints' Jacobians from burnumba.

    Arguments are scipy's. ``jac``, ``hess`` and ``hessp`` given by the caller are used as
    given; left as None, burnumba supplies them. ``fun(x, *args)`` is traced once per
    signature of ``(x, *args)``; array ``args`` are data (new values do not retrace).
    Returns scipy's ``OptimizeResult``.
    """
    so = _scipy_optimize()
    x0 = _vector(x0)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    m = (method or ("SLSQP" if constraints else "L-BFGS-B" if bounds is not None
                    else "BFGS")).lower()
    kwargs = {}
    if jac is None:
        fun_run, jac = value_and_grad(fun), True
    else:
        fun_run = fun
    if m in _HESS_SPARSE | _HESS_VECTOR | _HESS_DENSE and hess is None and hessp is None:
        if m in _HESS_SPARSE:
            sh = sparse_hessian(fun)
            hess = lambda x, *a: sh(x, *a)             # noqa: E731
        elif m in _HESS_VECTOR:
            # one function per solve (hvp keeps its tapes per function object)
            fixed = fun if not args else (lambda y: fun(y, *args))
            hessp = lambda x, p, *a: hvp(fixed, x, p)   # noqa: E731
        else:
            dh = hessian(fun)
            hess = lambda x, *a: np.asarray(dh(x, *a))  # noqa: E731
    if hess is not None:
        kwargs["hess"] = hess
    if hessp is not None:
        kwargs["hessp"] = hessp
    cons = _constraints(constraints, m)
    if cons:
        kwargs["constraints"] = cons
    return so.minimize(fun_run, x0, args=args, method=method or m, jac=jac, bounds=bounds,
                       tol=tol, callback=callback, options=options, **kwargs)


def least_squares(fun, x0, jac=None, bounds=(-np.inf, np.inf), method="trf", args=(),
                  **kwargs):
    """``scipy.optimize.least_squares`` with the residuals' Jacobian from burnumba: sparse
    (``bn.sparse_jacobian``, a CSR matrix) for ``trf`` and ``dogbox``, so scipy's sparse
    trust-region solver (``tr_solver='lsmr'``) is used; dense for ``lm``. Other keyword
    arguments are scipy's."""
    so = _scipy_optimize()
    x0 = _vector(x0)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if jac is None:
        if method == "lm":
            dj = jacobian(fun)
            jac = lambda x, *a: np.asarray(dj(x, *a))   # noqa: E731
        else:
            sj = sparse_jacobian(fun)
            jac = lambda x, *a: sj(x, *a)               # noqa: E731
            kwargs.setdefault("tr_solver", "lsmr")
    return so.least_squares(fun, x0, jac=jac, bounds=bounds, method=method, args=args,
                            **kwargs)


def _constraint_parts(constraints, args):
    """(functions of x, lower bounds, upper bounds) of scipy-style constraints (dicts with
    'type' and 'fun', or NonlinearConstraint), for IPOPT's cl <= c(x) <= cu."""
    so = _scipy_optimize()
    funs, lows, highs = [], [], []
    for c in _constraint_dicts(constraints):
        if isinstance(c, so.NonlinearConstraint):
            fun, a, lb, ub = c.fun, (), c.lb, c.ub
        elif isinstance(c, dict):
            if "fun" not in c or c.get("type") not in ("eq", "ineq"):
                raise InputError("a constraint dict needs 'type' ('eq' or 'ineq') and 'fun', "
                                 f"as scipy.optimize.minimize's; got keys {sorted(c)}")
            fun, a = c["fun"], tuple(c.get("args", ()))
            lb, ub = 0.0, (0.0 if c["type"] == "eq" else np.inf)
        else:
            raise InputError(f"ipopt's constraints: dicts or NonlinearConstraint objects, got "
                             f"{type(c).__name__} (write a LinearConstraint as a function)")
        funs.append((fun, a))
        lows.append(lb)
        highs.append(ub)
    return funs, lows, highs


class _IpoptProblem:
    """cyipopt's problem object: value, gradient, constraints, their sparse Jacobian and
    the Lagrangian's sparse Hessian ``sigma f + sum lam_i c_i`` (lower triangle), each from
    one burnumba transformation traced once; the structures are the patterns read off the
    tapes, fixed for the solve."""

    def __init__(self, fun, funs, args, x0):
        self.args = args
        self.vg = value_and_grad(fun)
        self.last = (None, None, None)
        self.iterations = 0

        def cons(x, *a):
            parts = [np.atleast_1d(f(x, *ca)) for f, ca in funs]     # their own args
            return np.concatenate(parts) if len(parts) > 1 else parts[0]

        def lagrangian(x, sigma, lam, *a):
            value = sigma * fun(x, *a)
            return value + np.sum(lam * cons(x, *a)) if funs else value
        self.cons = cons if funs else None
        self.m = int(np.size(cons(x0, *args))) if funs else 0
        lam0 = np.ones(self.m)
        empty = np.zeros(0, dtype=np.int64)
        self.jac_structure = (empty, empty)          # no constraints: an empty Jacobian
        if funs:
            self.jac = sparse_jacobian(cons)
            jp = self.jac.sparsity(x0, *args)
            self.jac_structure = (np.repeat(np.arange(jp.shape[0]), np.diff(jp.indptr)),
                                  jp.indices.copy())
        self.hess = sparse_hessian(lagrangian)
        hp = self.hess.sparsity(x0, np.array(1.0), lam0, *args)
        rows = np.repeat(np.arange(hp.shape[0]), np.diff(hp.indptr))
        self.lower = rows >= hp.indices                 # IPOPT reads the lower triangle
        self.hess_structure = (rows[self.lower], hp.indices[self.lower].copy())

    def _value_and_grad(self, x):
        if self.last[0] is None or not np.array_equal(self.last[0], x):
            v, g = self.vg(x, *self.args)
            self.last = (np.array(x), float(v), np.asarray(g, dtype=float))
        return self.last[1], self.last[2]

    def objective(self, x):
        return self._value_and_grad(x)[0]

    def gradient(self, x):
        return self._value_and_grad(x)[1]

    def constraints(self, x):
        if self.cons is None:
            return np.zeros(0)
        return np.asarray(self.cons(x, *self.args), dtype=float)

    def jacobianstructure(self):
        return self.jac_structure

    def jacobian(self, x):
        if self.cons is None:
            return np.zeros(0)
        return self.jac(x, *self.args).data

    def hessianstructure(self):
        return self.hess_structure

    def intermediate(self, alg_mod, iter_count, *rest):
        self.iterations = int(iter_count)
        return True

    def hessian(self, x, lagrange, obj_factor):
        H = self.hess(x, np.array(float(obj_factor)), np.asarray(lagrange, dtype=float),
                      *self.args)
        return H.data[self.lower]


def ipopt(fun, x0, args=(), constraints=(), bounds=None, tol=None, options=None):
    """Minimise ``fun`` with IPOPT (``cyipopt.Problem``, the ``ipopt`` extra), fed the
    gradient, the constraints' sparse Jacobian and the Lagrangian's sparse Hessian with
    their structures (the patterns read off the tapes), all from burnumba. ``constraints``:
    scipy-style dicts or ``NonlinearConstraint`` objects; ``bounds``: a list of (low, high)
    or None; ``options``: IPOPT's options by name. Returns scipy's ``OptimizeResult``
    (``info`` holds cyipopt's dictionary, multipliers included).

    >>> import numpy as np                                          # doctest: +SKIP
    >>> from burnumba.optimize import ipopt
    >>> ipopt(lambda x: np.sum((x - 1.0) ** 2), np.zeros(3)).x
    array([1., 1., 1.])
    """
    try:
        import cyipopt
    except ImportError:
        raise MissingExtraError(
            "burnumba.optimize.ipopt needs cyipopt and the IPOPT library: pip install "
            "cyipopt (with IPOPT and LAPACK installed, e.g. apt install coinor-libipopt-dev "
            "liblapack-dev libblas-dev), or use "
            "burnumba.optimize.minimize(..., method='trust-constr')") from None
    so = _scipy_optimize()
    x0 = _vector(x0)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    funs, lows, highs = _constraint_parts(constraints, args)
    problem = _IpoptProblem(fun, funs, args, x0)
    m = problem.m
    cl = np.concatenate([np.broadcast_to(np.asarray(lb, float), np.shape(np.atleast_1d(
        f(x0, *a)))) for (f, a), lb in zip(funs, lows)]) if m else np.zeros(0)
    cu = np.concatenate([np.broadcast_to(np.asarray(ub, float), np.shape(np.atleast_1d(
        f(x0, *a)))) for (f, a), ub in zip(funs, highs)]) if m else np.zeros(0)
    n = x0.size
    if bounds is None:
        lb, ub = np.full(n, -np.inf), np.full(n, np.inf)
    else:
        b = np.array([(-np.inf if lo is None else lo, np.inf if hi is None else hi)
                      for lo, hi in bounds], dtype=float)
        lb, ub = b[:, 0], b[:, 1]
    nlp = cyipopt.Problem(n=n, m=m, problem_obj=problem, lb=np.nan_to_num(lb, neginf=-1e20),
                          ub=np.nan_to_num(ub, posinf=1e20),
                          cl=np.nan_to_num(cl, neginf=-1e20, posinf=1e20),
                          cu=np.nan_to_num(cu, neginf=-1e20, posinf=1e20))
    opts = {"print_level": 0, "sb": "yes", **(options or {})}
    if tol is not None:
        opts["tol"] = tol
    for key, value in opts.items():
        nlp.add_option(key, value)
    x, info = nlp.solve(x0)
    return so.OptimizeResult(x=x, fun=float(info["obj_val"]), status=int(info["status"]),
                             success=int(info["status"]) in (0, 1), nit=problem.iterations,
                             message=info["status_msg"], info=info)
