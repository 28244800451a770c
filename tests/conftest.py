import collections
import os
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Deterministic example generation, so that CI runs are repeatable; the points are still
# spread at random over each op's domain. BURNUMBA_HYPOTHESIS=thorough samples more.
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("BURNUMBA_HYPOTHESIS", "ci"))


def mpmath_gammainc_da(a, x):
    """dP(a, x)/da by mpmath (40 digits: mpmath.diff of P, or of -Q where Q is the smaller,
    so that no digits go to a value near 1), elementwise: the independent reference of the
    gammainc_da row (scipy and autograd have none)."""
    import mpmath

    def one(a, x):
        with mpmath.workdps(40):
            a, x = mpmath.mpf(float(a)), mpmath.mpf(float(x))
            if mpmath.gammainc(a, 0, x, regularized=True) < 0.5:
                d = mpmath.diff(lambda s: mpmath.gammainc(s, 0, x, regularized=True), a)
            else:
                d = -mpmath.diff(lambda s: mpmath.gammainc(s, x, mpmath.inf, regularized=True),
                                 a)
            return float(d)
    out = np.vectorize(one, otypes=[np.float64])(a, x)
    return out if out.shape else float(out)


def _autograd_incomplete_gamma():
    """autograd.scipy's gammainc / gammaincc have no derivative in a, and it has no
    gammaincinv / gammainccinv: the independent references are scipy's values with d/da
    mpmath's (``mpmath_gammainc_da``; the inverses' by the implicit function theorem, times
    the reciprocal slope Gamma(a) e^x x^(1-a)) and d/dx written in autograd's numpy (so its
    derivatives of any order in x are autograd's). dP/da itself (the gammainc_da row) is
    mpmath's, with d/dx the density's derivative in a, x^(a-1) e^-x / Gamma(a) (log x -
    psi(a)), in autograd's numpy; no d/da."""
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    import scipy.special
    from autograd.extend import defvjp, primitive
    from autograd.numpy.numpy_vjps import unbroadcast_f

    def slope(a, x):
        return anp.exp(asp.gammaln(a) + x + (1.0 - a) * anp.log(x))

    def density(a, x):
        return anp.exp((a - 1.0) * anp.log(x) - x - asp.gammaln(a))

    def da(sign):
        return lambda y, a, x: unbroadcast_f(a, lambda g: sign * g * mpmath_gammainc_da(a, x))

    p = primitive(lambda a, x: scipy.special.gammainc(a, x))
    q = primitive(lambda a, x: scipy.special.gammaincc(a, x))
    defvjp(p, da(1.0), lambda y, a, x: unbroadcast_f(x, lambda g: g * density(a, x)))
    defvjp(q, da(-1.0), lambda y, a, x: unbroadcast_f(x, lambda g: -g * density(a, x)))
    dp = primitive(lambda a, x: mpmath_gammainc_da(a, x))
    defvjp(dp, None, lambda y, a, x: unbroadcast_f(
        x, lambda g: g * density(a, x) * (anp.log(x) - asp.digamma(a))))

    def inv_da(x, a, p):
        return unbroadcast_f(a, lambda g: -g * mpmath_gammainc_da(a, x) * slope(a, x))
    inv = primitive(lambda a, p: scipy.special.gammaincinv(a, p))
    cinv = primitive(lambda a, q: scipy.special.gammainccinv(a, q))
    defvjp(inv, inv_da, lambda x, a, p: unbroadcast_f(p, lambda g: g * slope(a, x)))
    defvjp(cinv, inv_da, lambda x, a, q: unbroadcast_f(q, lambda g: -g * slope(a, x)))
    return p, q, dp, inv, cinv


(AG_GAMMAINC, AG_GAMMAINCC, AG_GAMMAINC_DA, AG_GAMMAINCINV,
 AG_GAMMAINCCINV) = _autograd_incomplete_gamma()


def _autograd_owens_t():
    """autograd has no Owen's T: scipy's values, with its derivatives' closed forms written in
    autograd's numpy (so that derivatives of any order are autograd's): dT/dh = -phi(h)
    erf(a h / sqrt 2) / 2, dT/da = e^(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))."""
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    import scipy.special
    from autograd.extend import defvjp, primitive
    from autograd.numpy.numpy_vjps import unbroadcast_f

    t = primitive(lambda h, a: scipy.special.owens_t(h, a))
    defvjp(t, lambda y, h, a: unbroadcast_f(h, lambda g: -g * anp.exp(-0.5 * h * h) / anp.sqrt(
                2.0 * anp.pi) * asp.erf(a * h / anp.sqrt(2.0)) * 0.5),
           lambda y, h, a: unbroadcast_f(a, lambda g: g * anp.exp(-0.5 * h * h * (1.0 + a * a))
                                         / (2.0 * anp.pi * (1.0 + a * a))))
    return t


AG_OWENS_T = _autograd_owens_t()


def _autograd_bessel():
    """autograd has no jv, yv, kv, kve (its jn / yn are scipy's, whose yn takes integer
    orders only): scipy's values, with their derivatives in x written in autograd's numpy by
    the recurrences (so that derivatives of any order are autograd's): jv' = (jv(v - 1) -
    jv(v + 1)) / 2, the same for yv, kv' = -(kv(v - 1) + kv(v + 1)) / 2, kve' = kv' e^x +
    kve; no derivative in v."""
    import scipy.special
    from autograd.extend import defvjp, primitive
    from autograd.numpy.numpy_vjps import unbroadcast_f

    jv = primitive(lambda v, x: scipy.special.jv(v, x))
    yv = primitive(lambda v, x: scipy.special.yv(v, x))
    kv = primitive(lambda v, x: scipy.special.kv(v, x))
    kve = primitive(lambda v, x: scipy.special.kve(v, x))
    for f in (jv, yv):
        defvjp(f, None, lambda y, v, x, f=f: unbroadcast_f(
            x, lambda g: 0.5 * g * (f(v - 1.0, x) - f(v + 1.0, x))))
    defvjp(kv, None, lambda y, v, x: unbroadcast_f(
        x, lambda g: -0.5 * g * (kv(v - 1.0, x) + kv(v + 1.0, x))))
    defvjp(kve, None, lambda y, v, x: unbroadcast_f(
        x, lambda g: g * (kve(v, x) - 0.5 * (kve(v - 1.0, x) + kve(v + 1.0, x)))))
    return jv, yv, kv, kve


AG_JV, AG_YV, AG_KV, AG_KVE = _autograd_bessel()


def _mpmath_betainc_dab(a, b, x, dps):
    """(dI/da, dI/db) by mpmath.diff at ``dps`` digits: of I_x(a, b) where it is below 1/2,
    else of -I_{1-x}(b, a) (1 - x exact in mpmath: a lower integral alone, where mpmath's
    upper tail betainc(a, b, x, 1) is a difference that loses digits)."""
    import mpmath
    with mpmath.workdps(dps):
        a, b, x = (mpmath.mpf(float(v)) for v in (a, b, x))
        if mpmath.betainc(a, b, 0, x, regularized=True) < 0.5:
            def f(s, t):
                return mpmath.betainc(s, t, 0, x, regularized=True)
        else:
            y = 1 - x

            def f(s, t):
                return -mpmath.betainc(t, s, 0, y, regularized=True)
        return mpmath.diff(lambda s: f(s, b), a), mpmath.diff(lambda t: f(a, t), b)


def mpmath_betainc_dab(a, b, x):
    """(dI_x(a, b)/da, dI_x(a, b)/db) by mpmath, elementwise: 50 digits, doubled until two
    agree to 1e-25 (40 were not enough at (0.145, 10.1, 1 - 2e-8)). The independent
    reference of the betainc_da / betainc_db rows (scipy, autograd and JAX have none)."""
    def one(a, b, x):
        last = None
        for dps in (50, 100, 200, 400):
            got = _mpmath_betainc_dab(a, b, x, dps)
            if last is not None and all(abs(g - w) <= 1e-25 * abs(g)
                                        for g, w in zip(got, last)):
                break
            last = got
        return float(got[0]), float(got[1])
    da, db = np.vectorize(one, otypes=[np.float64, np.float64])(a, b, x)
    return (da, db) if da.shape else (float(da), float(db))


def _autograd_betainc_dab():
    """dI/da and dI/db as autograd primitives of x (a, b data): mpmath's values, with d/dx
    the density's derivative in a or b, x^(a-1) (1-x)^(b-1) / B(a, b) (log x - psi(a) +
    psi(a + b)) or (log(1 - x) - psi(b) + psi(a + b)), in autograd's numpy (so its
    derivatives of any order in x are autograd's)."""
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    from autograd.extend import defvjp, primitive

    def density(a, b, x):
        return anp.exp((a - 1.0) * anp.log(x) + (b - 1.0) * anp.log1p(-x) - asp.betaln(a, b))

    out = []
    for k in (0, 1):
        f = primitive(lambda x, a, b, k=k: mpmath_betainc_dab(a, b, x)[k])
        if k == 0:
            def dx(y, x, a, b):
                return lambda g: g * density(a, b, x) * (anp.log(x) - asp.digamma(a)
                                                         + asp.digamma(a + b))
        else:
            def dx(y, x, a, b):
                return lambda g: g * density(a, b, x) * (anp.log1p(-x) - asp.digamma(b)
                                                         + asp.digamma(a + b))
        defvjp(f, dx)
        out.append(f)
    return tuple(out)


AG_BETAINC_DA, AG_BETAINC_DB = _autograd_betainc_dab()


def central_diff(f, args, k, h=1e-6):
    """d f / d args[k] by central differences in float64, elementwise for array args."""
    x = np.asarray(args[k], dtype=np.float64)
    g = np.zeros_like(x)
    flat = g.reshape(-1)
    for j in range(x.size):
        step = h * max(1.0, abs(x.reshape(-1)[j]))
        xp, xm = x.copy(), x.copy()
        xp.reshape(-1)[j] += step
        xm.reshape(-1)[j] -= step
        ap, am = list(args), list(args)
        ap[k] = xp if x.shape else float(xp)
        am[k] = xm if x.shape else float(xm)
        flat[j] = (float(f(*ap)) - float(f(*am))) / (2 * step)
    return g if x.shape else float(g)


@pytest.fixture
def rng():
    return np.random.default_rng(20250529)


@pytest.fixture(autouse=True)
def own_shared_table(monkeypatch):
    """Each test with a table of shared tape caches of its own (transforms/shared.py): an
    equal function of an earlier test lends no tapes to this one's (``len(g.tapes)``)."""
    from burnumba.transforms import shared
    monkeypatch.setattr(shared, "TABLE", shared.Table())


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """Compile the kernel of every op once per dtype (minutes on an empty cache; nothing on a
    warm one). Tapes use only the ops they need, so without this, the suite's hundreds of op
    combinations would each build a small kernel; with it, each finds this one, which covers
    them. tests/test_cache.py checks per-program builds separately. Under pytest-xdist the
    controller has built them already (``pytest_sessionstart``): the workers only load them."""
    from burnumba import kernels
    kernels.precompile()


# -- once per run: the kernels, before the xdist workers start; time per test file at the end
_SECONDS = {"kernels": None, "files": collections.defaultdict(float)}


def pytest_sessionstart(session):
    """Build the kernels in the process that starts the run (the xdist controller, or the
    only process), before any worker exists: the workers then find them in the cache
    instead of waiting on its build lock one after the other."""
    if hasattr(session.config, "workerinput"):          # an xdist worker
        return
    t0 = time.perf_counter()
    _build_dtypes_at_once()
    from burnumba import kernels
    kernels.precompile()
    _SECONDS["kernels"] = time.perf_counter() - t0


# One builder process per dtype, at once: on an empty cache the two kernels (every op, with
# forward mode) take about two minutes of one core each (the 191 row objects ~80 s, the
# dispatcher ~35 s: numba's front end, compiling the loop's ~280 branches one by one).
# The cache's build lock would make the second wait for the first; these two builders build
# disjoint files (keyed by dtype, written atomically), so each runs without it. They go
# through precompile's own path (the same keys); a failure leaves the build to precompile.
_BUILDER = """
import contextlib, sys
from burnumba.kernels import _build, cache, engine
cache.build_lock = contextlib.nullcontext
engine._run_builder = lambda request, *what: _build.serve(request)
engine.precompile(dtypes=[sys.argv[1]])
"""


def _build_dtypes_at_once():
    import subprocess
    import sys
    builders = [subprocess.Popen([sys.executable, "-c", _BUILDER, dtype])
                for dtype in ("float64", "float32")]
    for p in builders:
        p.wait()


# The test files that take longest, longest first (the "seconds per test file" summary of a
# clean-clone CI run). pytest-xdist hands each worker a whole file at a time in collection
# order (--dist loadfile, --no-loadscope-reorder), so these start first and the short files
# fill in after them: left to xdist's own order (most tests first), test_cache.py, with
# only 17 tests, started near the end and ran alone for minutes.
LONGEST_FIRST = ("test_cache.py", "test_notebooks.py", "test_scipy.py", "test_njit_op.py",
                 "test_guards_fuzz.py", "test_docs.py", "test_fuzz.py", "test_ieee.py",
                 "test_scipy_owens.py", "test_njit.py", "test_layers.py", "test_distributed.py",
                 "test_custom.py", "test_cli.py", "test_sparse.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))    # stable: in-file order


def pytest_runtest_logreport(report):
    _SECONDS["files"][report.nodeid.split("::")[0]] += report.duration


def pytest_terminal_summary(terminalreporter):
    """Seconds per test file (setup, call and teardown of its tests, summed over workers)."""
    files = _SECONDS["files"]
    if not files or hasattr(terminalreporter.config, "workerinput"):
        return
    tr = terminalreporter
    tr.section("seconds per test file")
    if _SECONDS["kernels"] is not None:
        tr.write_line(f"{_SECONDS['kernels']:8.1f}  (kernels built or loaded before the tests)")
    for name, s in sorted(files.items(), key=lambda kv: -kv[1]):
        tr.write_line(f"{s:8.1f}  {name}")
    tr.write_line(f"{sum(files.values()):8.1f}  total, all files")
