"""``burnumba.scipy.integrate``: odeint, solve_ivp and quad on traced values; trapezoid,
simpson and cumulative_trapezoid of traced samples.

**quad** is QUADPACK's 21-point Gauss-Kronrod rule (qk21: its nodes, weights and error
estimate) with global adaptive bisection (QAG: the interval of largest error is halved
until the estimate is within max(epsabs, epsrel |result|), at most ``limit`` intervals),
the integrand called on one traced point at a time as scipy calls it. Which interval is
halved, and when to stop, are decisions on traced values, so guards of the tape: a replay
whose integrand would refine differently traces a new variant. QAGS's epsilon-algorithm
extrapolation is not done, so the value differs from scipy's by up to the tolerance; an
infinite bound is mapped to [0, 1) by x = a + t / (1 - t) (QAGI maps (0, 1]).

**The sample rules** (trapezoid, simpson, cumulative_trapezoid) are linear in y: each
result is a weighted sum of y's samples along ``axis``, whose weights depend on x / dx
alone. For traced y and plain x the weights are scipy's own function applied to the unit
vectors (so the result is scipy's, Simpson's end correction for an even count of samples
included, to rounding) and the result is y's product with them; a traced x is refused for
simpson and cumulative_trapezoid, and trapezoid takes it (numpy's formula, traced).

**Method: the classical fixed-step Runge-Kutta (RK4) traced as ops, differentiated through.**
Each interval between consecutive output times is cut into ``substeps`` equal steps (32 by
default) of RK4, and every stage is recorded on the tape like any other numpy code. The
gradient is then the exact derivative of the discrete solution (discretise, then
differentiate), with respect to y0, the output times t (through the step sizes) and every
parameter the right-hand side reads (its ``args`` or values it closes over); reverse mode
runs the tape backwards, which is the discrete adjoint of the scheme, and forward mode (jvp)
gives the forward sensitivities. Nothing is integrated a second time, and the gradient is
consistent with the value returned to the last bit.

Why not scipy's adaptive LSODA / RK45: a step size chosen from the values is a decision of
the trace. Written in Python, each accept / reject would be a guard, so almost every new input
(a new iterate of an optimiser) would take another step sequence and trace again. With a fixed
number of steps the tape is correct for every input it replays, with no guard. The price is
accuracy control: RK4's global error is O(h^4) (h the step), so with 32 substeps
per interval the error is about 1e-8 of the solution's scale for a smooth problem with
unit time constants over unit intervals; stiff problems need many more steps (RK4 is
explicit: stable only for h |lambda| < 2.8). Raise ``substeps`` until the answer stops moving.

**With rtol / atol** (``odeint(..., rtol=0.01)``, as autograd's ode_net example passes), the
step count is chosen to meet them, the way a program written by hand would: RK4 with n and 2n
steps per interval, n = 1, 2, 4, ... (from ``substeps`` if given), until Richardson's estimate
of the finer run's error, |y_2n - y_n| / 15 (RK4's error falls 16-fold when h halves), is
within atol + rtol |y_2n| at every output time and component; the finer run is returned. Each
"within?" is a Python decision on a traced value, so it is a guard of the tape: a replay
whose inputs need another step count traces a new variant, and every other replay runs the
recorded steps (each attempted n stays on the tape, about 4x the steps of the last). This is
not LSODA's step sequence, so the values differ from scipy's by up to the tolerance; the
gradient is exact for the returned discrete solution.
"""
import numpy as np

from .._errors import InputError, UnsupportedOpError, at_user_site
from ..numpy import elementwise as ew
from ..numpy import reductions, shapes
from ..numpy._common import _builder, namesake
from ..numpy.calculus import trapezoid as _trapezoid
from ..numpy.products import matmul

__all__ = ["odeint", "solve_ivp", "quad", "trapezoid", "simpson", "cumulative_trapezoid"]

SUBSTEPS = 32
MAX_SUBSTEPS = 2 ** 10          # tolerance mode: the most steps per interval tried
ATOL = RTOL = 1.49012e-8        # scipy.integrate.odeint's defaults


def _rk4(f, y, t0, t1, substeps):
    """y at t1 from y at t0 by ``substeps`` RK4 steps of f(t, y)."""
    h = (t1 - t0) / substeps
    t = t0
    for _ in range(substeps):
        k1 = f(t, y)
        k2 = f(t + 0.5 * h, y + (0.5 * h) * k1)
        k3 = f(t + 0.5 * h, y + (0.5 * h) * k2)
        k4 = f(t + h, y + h * k3)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + h
    return y


def _returns_traced(call):
    """Whether the right-hand side gives a traced value at the first point: it closes over
    a traced parameter (lambda y, t: -k * y), so the solution depends on it although y0, t
    and args are plain. (One extra call of the right-hand side, on plain values.)"""
    try:
        return _builder(call()) is not None
    except Exception:                   # let scipy report its own errors on plain values
        return False


def _substeps(name, substeps, options):
    """The steps per interval to start from, and (rtol, atol) or None for a fixed count."""
    bad = sorted(k for k in options if options[k] is not None and k not in ("rtol", "atol"))
    if bad:
        raise UnsupportedOpError(at_user_site(
            f"{name}({', '.join(f'{k}=...' for k in bad)}) on traced values: burnumba "
            "integrates with RK4 traced as ops (see burnumba.scipy.integrate), with a step "
            "count per output interval (substeps=N) or one chosen to meet rtol / atol"))
    tol = None
    if options.get("rtol") is not None or options.get("atol") is not None:
        rtol = RTOL if options.get("rtol") is None else options["rtol"]
        atol = ATOL if options.get("atol") is None else options["atol"]
        for k, v in (("rtol", rtol), ("atol", atol)):
            if _builder(v) is not None or not np.all(np.asarray(v) >= 0):
                raise InputError(at_user_site(f"{name}: {k} must be a plain number >= 0 (or "
                                              f"one per component), got {v!r}"))
        if not np.any(np.asarray(rtol) > 0) and not np.any(np.asarray(atol) > 0):
            raise InputError(at_user_site(f"{name}: rtol and atol are both 0: no step count "
                                          "meets that"))
        tol = (rtol, atol)
    if substeps is None:
        substeps = 1 if tol is not None else SUBSTEPS
    if int(substeps) != substeps or substeps < 1:
        raise InputError(at_user_site(f"{name}: substeps must be an integer >= 1, got "
                                      f"{substeps!r}"))
    return int(substeps), tol


def _solve(name, f, y, ts, n, tol, start=None):
    """[y at each of ts] by RK4 with n steps per interval (from ``start`` to ts[0] first, if
    given), or, with tol = (rtol, atol), with the step count that meets them (module
    docstring): each test of the error estimate is a Python decision, a guard."""
    def run(steps):
        y0 = y if start is None else _rk4(f, y, start, ts[0], steps)
        out = [y0]
        for i in range(ts.shape[0] - 1):
            out.append(_rk4(f, out[-1], ts[i], ts[i + 1], steps))
        return shapes.stack(out)

    if tol is None:
        return run(n)
    rtol, atol = tol
    coarse = run(n)
    while True:
        fine = run(2 * n)
        # Richardson: fine's error is about (fine - coarse) / (2^4 - 1) for RK4
        ratio = ew.absolute(fine - coarse) / (15.0 * (atol + rtol * ew.absolute(fine)))
        if bool(ew.less_equal(reductions.max(ratio), 1.0)):
            return fine
        n, coarse = 2 * n, fine
        if 2 * n > MAX_SUBSTEPS:            # the finer run would pass the limit
            raise InputError(at_user_site(
                f"{name}: RK4 with {MAX_SUBSTEPS} steps per interval does not meet rtol="
                f"{rtol}, atol={atol} (a stiff problem, or a solution that blows up); loosen "
                "them, or split the output times finer"))


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, rtol=None,
           atol=None, tfirst=False, *, substeps=None, **unsupported):
    """y(t) for dy/dt = func(y, t, *args) (``tfirst``: func(t, y, *args)), y(t[0]) = y0, as
    scipy.integrate.odeint: an array of shape (len(t), len(y0)), its first row y0. Integrated
    with RK4, ``substeps`` steps per interval of t (32 by default), or with rtol / atol, the
    step count that meets them (the module's docstring: accuracy, guards, why).

    >>> decay = lambda k: odeint(lambda y, t: -k * y, 1.0, np.array([0.0, 1.0]))[1, 0]
    >>> bn.grad(decay)(0.5)                  # d/dk exp(-k) = -exp(-0.5) = -0.6065...
    """
    args = tuple(args)
    if _builder(y0, t, args) is None and not _returns_traced(
            lambda: func(t[0], y0, *args) if tfirst else func(y0, t[0], *args)):
        import scipy.integrate
        return scipy.integrate.odeint(func, y0, t, args=tuple(args), Dfun=Dfun,
                                      col_deriv=col_deriv, full_output=full_output, rtol=rtol,
                                      atol=atol, tfirst=tfirst, **unsupported)
    if full_output or Dfun is not None or unsupported:
        names = sorted(set(unsupported) | ({"full_output"} if full_output else set())
                       | ({"Dfun"} if Dfun is not None else set()))
        raise UnsupportedOpError(at_user_site(
            f"odeint({', '.join(n + '=...' for n in names)}) is not supported on traced "
            "values (burnumba traces a fixed-step RK4; its derivative needs no Dfun)"))
    n, tol = _substeps("odeint", substeps, {"rtol": rtol, "atol": atol})
    b = _builder(y0, t, args) or _builder(
        func(t[0], y0, *args) if tfirst else func(y0, t[0], *args))
    y = shapes.reshape(b.lift(y0), (-1,))
    ts = b.lift(t)
    if ts.ndim != 1 or ts.shape[0] < 1:
        raise InputError(at_user_site(f"odeint: t must be a 1-D sequence of times, got shape "
                                      f"{ts.shape}"))

    def f(tt, yy):
        out = func(tt, yy, *args) if tfirst else func(yy, tt, *args)
        return shapes.reshape(b.lift(out), (-1,))

    return _solve("odeint", f, y, ts, n, tol)


class OdeResult(dict):
    """solve_ivp's result, as scipy's: t, y (shape (n, len(t))), status, message, success."""
    __getattr__ = dict.__getitem__


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, *, substeps=None, **options):
    """The solution of dy/dt = fun(t, y, *args), y(t_span[0]) = y0, at ``t_eval`` (default:
    the two ends of t_span), as scipy.integrate.solve_ivp: a result with ``.t`` and ``.y``
    (shape (len(y0), len(t_eval))). Every ``method`` name is accepted and the integration is
    the RK4 of this module: ``substeps`` steps per interval of t_eval (32 by default), or,
    when rtol / atol are passed, the step count that meets them (see the module's
    docstring: accuracy, guards, why no adaptive step)."""
    if _builder(y0, t_span, t_eval, args) is None and not _returns_traced(
            lambda: fun(t_span[0], y0, *(args or ()))):
        import scipy.integrate
        return scipy.integrate.solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval,
                                         dense_output=dense_output, events=events,
                                         vectorized=vectorized, args=args, **options)
    if dense_output or events is not None:
        raise UnsupportedOpError(at_user_site(
            "solve_ivp(dense_output=..., events=...) is not supported on traced values: "
            "pass the times you need as t_eval"))
    n, tol = _substeps("solve_ivp", substeps, {k: options.pop(k, None)
                                               for k in ("rtol", "atol", "max_step",
                                                         "first_step")})
    if options:
        raise UnsupportedOpError(at_user_site(
            f"solve_ivp: options {sorted(options)} are not supported on traced values"))
    args = tuple(args) if args is not None else ()
    t0, t1 = t_span
    times = [t0, t1] if t_eval is None else t_eval
    b = _builder(y0, t_span, t_eval, args) or _builder(fun(t0, y0, *args))
    ts = b.lift(times) if not isinstance(times, list) else shapes.stack(
        [b.lift(v) for v in times])
    y = shapes.reshape(b.lift(y0), (-1,))

    def f(tt, yy):
        return shapes.reshape(b.lift(fun(tt, yy, *args)), (-1,))

    # t_eval's first time may lie after t0: integrate up to it first
    rows = _solve("solve_ivp", f, y, ts, n, tol, start=None if t_eval is None else b.lift(t0))
    return OdeResult(t=ts, y=shapes.transpose(rows), status=0, success=True,
                     message="RK4 (burnumba.scipy.integrate)")

# QUADPACK's qk21: the Kronrod nodes (descending; the Gauss nodes are every second one,
# from the second), the Kronrod weights, and the 10-point Gauss rule's weights
_XGK = (0.995657163025808080735527280689003, 0.973906528517171720077964012084452,
        0.930157491355708226001207180059508, 0.865063366688984510732096688423493,
        0.780817726586416897063717578345042, 0.679409568299024406234327365114874,
        0.562757134668604683339000099272694, 0.433395394129247190799265943165784,
        0.294392862701460198131126603103866, 0.148874338981631210884826001129720, 0.0)
_WGK = (0.011694638867371874278064396062192, 0.032558162307964727478818972459390,
        0.054755896574351996031381300244580, 0.075039674810919952767043140916190,
        0.093125454583697605535065465083366, 0.109387158802297641899210590325805,
        0.123491976262065851077958109831074, 0.134709217311473325928054001771707,
        0.142775938577060080797094273138717, 0.147739104901338491374841515972068,
        0.149445554002916905664936468389821)
_WG = (0.066671344308688137593568809893332, 0.149451349150580593145776339657697,
       0.219086362515982043995534934228163, 0.269266719309996355091226921569469,
       0.295524224714752870173892994651338)
_EPS = float(np.finfo(np.float64).eps)


def _qk21(f, a, b):
    """(integral, error estimate) of f over [a, b] by qk21, its error formula included
    (written with minimum / maximum / where, so that it decides nothing)."""
    centr, hlgth = 0.5 * (a + b), 0.5 * (b - a)
    fc = f(centr)
    resg, resk = 0.0, fc * _WGK[10]
    values = []
    for j in range(10):
        absc = hlgth * _XGK[j]
        f1, f2 = f(centr - absc), f(centr + absc)
        values.append((j, f1, f2))
        resk = resk + _WGK[j] * (f1 + f2)
        if j % 2 == 1:
            resg = resg + _WG[j // 2] * (f1 + f2)
    reskh = resk * 0.5
    resabs = _WGK[10] * ew.absolute(fc)
    resasc = _WGK[10] * ew.absolute(fc - reskh)
    for j, f1, f2 in values:
        resabs = resabs + _WGK[j] * (ew.absolute(f1) + ew.absolute(f2))
        resasc = resasc + _WGK[j] * (ew.absolute(f1 - reskh) + ew.absolute(f2 - reskh))
    scale = ew.absolute(hlgth)
    err = ew.absolute((resk - resg) * hlgth)
    resasc = resasc * scale
    safe = ew.where(resasc > 0.0, resasc, 1.0)
    err = ew.where(resasc > 0.0, resasc * ew.minimum(1.0, (200.0 * err / safe) ** 1.5), err)
    err = ew.maximum(50.0 * _EPS * resabs * scale, err)
    return resk * hlgth, err


def quad(func, a, b, args=(), full_output=0, epsabs=1.49e-8, epsrel=1.49e-8, limit=50,
         points=None, weight=None, wvar=None, wopts=None, maxp1=50, limlst=50,
         complex_func=False):
    """scipy.integrate.quad of an integrand, bounds or args that are (or close over) traced
    values: (integral, error estimate), by qk21 with adaptive bisection (see the module's
    text). Reversed bounds give the negated integral, as scipy's. ``points`` (break points
    where the integrand has a kink, a jump or a peak) split a finite interval, each piece
    integrated to the tolerance, as QUADPACK's qagp starts from them; those outside the
    interval are ignored, as scipy's. ``weight``, ``full_output`` and ``complex_func`` are
    refused."""
    import scipy.integrate

    def f(x):
        return func(x, *args)
    if (_builder(a, b, args, *(() if points is None else points)) is None
            and _builder(f(_inside(a, b))) is None):
        # plain bounds, args and points, and an integrand that closes over no traced value
        return scipy.integrate.quad(func, a, b, args=args, full_output=full_output,
                                    epsabs=epsabs, epsrel=epsrel, limit=limit, points=points,
                                    weight=weight, wvar=wvar, wopts=wopts, maxp1=maxp1,
                                    limlst=limlst, complex_func=complex_func)
    if weight is not None or full_output or complex_func:
        raise UnsupportedOpError(at_user_site(
            "scipy.integrate.quad with weight=, full_output or complex_func on traced values: "
            "write the weight into the integrand (for weight='cos', multiply by cos(wvar x))"))
    if points is not None:
        if _infinity(a) or _infinity(b):
            raise ValueError("Infinity inputs cannot be used with break points.")   # scipy's
        if bool(b < a):                               # a decision (a guard if traced)
            value, error = quad(func, b, a, args, epsabs=epsabs, epsrel=epsrel, limit=limit,
                                points=points)
            return -value, error
        # the break points strictly inside (a, b), in order: decisions (guards if traced)
        inner = sorted(p for p in points if bool(a < p) and bool(p < b))
        edges = [a, *inner, b]
        value, error = 0.0, 0.0
        for left, right in zip(edges[:-1], edges[1:]):
            if bool(left < right):                    # repeated points: no empty piece
                v, e = quad(func, left, right, args, epsabs=epsabs, epsrel=epsrel,
                            limit=limit)
                value, error = value + v, error + e
        return value, error
    lo, hi = _infinity(a), _infinity(b)
    if lo > 0 or hi < 0:                          # from +inf, or down to -inf: reversed
        value, error = quad(func, b, a, args, epsabs=epsabs, epsrel=epsrel, limit=limit)
        return -value, error
    if lo and hi:                                 # (-inf, inf): two half-lines from 0
        left = quad(lambda x, *r: func(-x, *r), 0.0, np.inf, args, epsabs=epsabs / 2,
                    epsrel=epsrel, limit=limit)
        right = quad(func, 0.0, np.inf, args, epsabs=epsabs / 2, epsrel=epsrel, limit=limit)
        return left[0] + right[0], left[1] + right[1]
    g, finite = f, (a if hi else b)
    if hi:                                        # x = a + t / (1 - t), t in [0, 1)
        def g(t):
            return f(finite + t / (1.0 - t)) / (1.0 - t) ** 2
    elif lo:                                      # x = b - t / (1 - t): the reversed map
        def g(t):
            return f(finite - t / (1.0 - t)) / (1.0 - t) ** 2
    if lo or hi:
        a, b = 0.0, 1.0
    pieces = [(a, b, *_qk21(g, a, b))]
    total, error = pieces[0][2], pieces[0][3]
    while len(pieces) < limit and not bool(
            error <= ew.maximum(epsabs, epsrel * ew.absolute(total))):
        worst = max(range(len(pieces)), key=lambda k: pieces[k][3])      # decisions
        left_end, right_end, r, e = pieces.pop(worst)
        mid = 0.5 * (left_end + right_end)
        halves = [(left_end, mid, *_qk21(g, left_end, mid)),
                  (mid, right_end, *_qk21(g, mid, right_end))]
        pieces += halves
        total = total - r + halves[0][2] + halves[1][2]
        error = error - e + halves[0][3] + halves[1][3]
    return total, error


def _infinity(v):
    """+1 / -1 for a plain infinite bound, else 0 (a traced bound is a finite number)."""
    if isinstance(v, (int, float, np.floating, np.integer)) and np.isinf(v):
        return 1 if v > 0 else -1
    return 0


def _inside(a, b):
    """A point of the plain interval between a and b, to ask the integrand once whether it
    reads traced values."""
    lo, hi = _infinity(a), _infinity(b)
    if not lo and not hi:
        return 0.5 * (a + b)
    if not lo:
        return a + hi
    if not hi:
        return b - lo
    return 0.0


def _plain_x(name, x, dx):
    if _builder(x, dx) is not None:
        raise UnsupportedOpError(at_user_site(
            f"scipy.integrate.{name} with traced sample points x or spacing dx: pass them as "
            "numpy data (the weights are computed from them), or use np.trapezoid, which "
            "takes traced x and dx"))


def _weighted(name, y, axis, weights):
    """A linear sample rule of traced y along ``axis``: y's samples times ``weights`` (a
    plain (n,) vector, or an (n, m) matrix whose columns give m results)."""
    y = _builder(y).lift(y)
    if y.ndim == 0:
        raise InputError(at_user_site(f"scipy.integrate.{name}: y must have an axis"))
    moved = shapes.moveaxis(y, axis, -1)
    out = matmul(moved, weights)
    return out if np.ndim(weights) == 1 else shapes.moveaxis(out, -1, axis)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """scipy.integrate.trapezoid: numpy's trapezoid (traced y and x alike)."""
    import scipy.integrate
    if _builder(y, x, dx) is None:
        return scipy.integrate.trapezoid(y, x, dx, axis)
    return _trapezoid(y, x, dx, axis)


def simpson(y, *, x=None, dx=1.0, axis=-1):
    """scipy.integrate.simpson of traced y (plain x): scipy's weights, from the unit
    vectors, times y's samples."""
    import scipy.integrate
    if _builder(y, x, dx) is None:
        return scipy.integrate.simpson(y, x=x, dx=dx, axis=axis)
    _plain_x("simpson", x, dx)
    weights = scipy.integrate.simpson(np.eye(np.shape(y)[axis]), x=x, dx=dx, axis=0)
    return _weighted("simpson", y, axis, weights)


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """scipy.integrate.cumulative_trapezoid of traced y (plain x): scipy's weights, from
    the unit vectors, times y's samples."""
    import scipy.integrate
    if _builder(y, x, dx, initial) is None:
        return scipy.integrate.cumulative_trapezoid(y, x, dx, axis, initial)
    if _builder(initial) is not None:
        raise UnsupportedOpError(at_user_site(
            "scipy.integrate.cumulative_trapezoid with a traced initial: add it to the result "
            "instead (initial=0 and + value)"))
    _plain_x("cumulative_trapezoid", x, dx)
    # row i: the i-th result's weight of each unit vector; as columns for the product
    weights = scipy.integrate.cumulative_trapezoid(np.eye(np.shape(y)[axis]), x, dx, axis=0,
                                                   initial=initial)
    return _weighted("cumulative_trapezoid", y, axis, weights.T)


__getattr__ = namesake(__name__, "scipy.integrate")    # what burnumba does not define: scipy's own
