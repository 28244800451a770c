"""The scalar special functions that the special map rows (``maps_special.py``) call: log|Gamma|,
the polygamma functions (digamma at n = 0), erfinv, ndtri, log_ndtr and the modified Bessel
functions i0, i1, each to float64 accuracy (checked against scipy.special in
tests/test_scipy_special.py, edges, poles, +-0, +-inf and NaN included).

One code serves both engines. The compiled kernels call these functions compiled with numba
(``compiled()``, inlined into the row's loops and the dispatcher's scalar cases); the Python
engine and the reference (``reference.py``) call them as they are, on numpy scalars, so that
the math follows IEEE there too (numpy's exp, log, ... return inf or NaN where Python's math
raises). So they use numpy's scalar functions and ``math.lgamma`` / ``erf`` / ``erfc`` (which
raise only at the poles, handled first), convert their argument with ``float64`` (a float32
kernel calls them too) and never raise.

A rule names them as it names the math functions (``kernels/rules.py: SPECIAL``). The code is
part of the key of every compiled object that calls it (``keys.py``), so an edit here rebuilds
those and nothing else.
"""
import math

from numpy import copysign, exp, fabs, float64, floor, log, log1p, power, sqrt, tan

inf = float("inf")
nan = float("nan")
PI = 3.141592653589793
# B_2j / (2j)!, j = 1..12: the Euler-Maclaurin coefficients of the Hurwitz zeta tail
_EM = (0.08333333333333333, -0.001388888888888889, 3.306878306878307e-05,
       -8.267195767195768e-07, 2.08767569878681e-08, -5.284190138687493e-10,
       1.3382536530684679e-11, -3.3896802963225827e-13, 8.586062056277845e-15,
       -2.174868698558062e-16, 5.5090028283602295e-18, -1.3954464685812522e-19)


def lgamma(x):
    """log |Gamma(x)| (scipy.special.gammaln): libm's lgamma. Its poles (0, -0 and the
    negative integers) give +inf, +inf gives +inf and -inf gives -inf (as scipy), NaN NaN."""
    x = float64(x)
    if x != x or x == inf or x == -inf:
        return x
    if x <= 0.0 and floor(x) == x:
        return inf
    if x > 2.5e305:                      # log Gamma(x) ~ x (log x - 1) > max double
        return inf
    return float64(math.lgamma(x))


def _digamma(x):
    """psi(x) = d/dx log Gamma(x). For x > 0 the recurrence psi(x) = psi(x + 1) - 1/x up to
    x >= 10, then the asymptotic series log x - 1/(2x) - sum B_2k / (2k x^2k) (7 terms: the
    next is below 5e-17 at x = 10). For x < 0 the reflection psi(x) = psi(1 - x) - pi cot(pi x),
    with cot reduced by its period 1 to [-1/2, 1/2] exactly. Poles: psi(+0) = -inf,
    psi(-0) = +inf, NaN at the negative integers (scipy's values)."""
    if x == inf:
        return x
    if x == -inf:
        return nan
    if x == 0.0:
        return -copysign(inf, x)
    if x < 0.0 and floor(x) == x:
        return nan
    r = 0.0
    if x < 0.0:
        f = x - floor(x + 0.5)           # x minus its nearest integer: exact
        r = -PI / tan(PI * f)
        x = 1.0 - x
    while x < 10.0:
        r -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return r + (log(x) - 0.5 / x - s)


def _zeta(s, q):
    """Hurwitz zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2 and q not 0 or a negative
    integer: the first terms summed until q + N >= s + 10, then the Euler-Maclaurin tail
    w^(1-s) / (s - 1) + w^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1),
    w = q + N, 12 terms (the remainder is below 1e-18 relative there)."""
    total = 0.0
    w = q
    while w < s + 10.0:
        total += power(w, -s)
        w += 1.0
    ws = power(w, -s)
    total += w * ws / (s - 1.0) + 0.5 * ws
    fac = s
    wp = ws / w
    w2 = 1.0 / (w * w)
    for j in range(12):
        total += _EM[j] * fac * wp
        fac *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0)
        wp *= w2
    return total


def polygamma(n, x):
    """psi^(n)(x), the n-th derivative of digamma, for an integer n >= 0 (n = 0: digamma):
    (-1)^(n+1) n! zeta(n + 1, x). At the poles (0 and the negative integers) +inf for odd n
    and -inf for even n >= 2 (the sign from both sides); 0 at +inf, NaN at -inf."""
    x = float64(x)
    n = float64(n)
    if x != x or n != n:
        return x + n
    if n == 0.0:
        return _digamma(x)
    sign = 1.0 if floor(n * 0.5) * 2.0 != n else -1.0       # (-1)^(n+1)
    if x == inf:
        return 0.0 * sign
    if x == -inf:
        return nan
    if x <= 0.0 and floor(x) == x:
        return sign * inf
    fact = 1.0
    k = 2.0
    while k <= n:
        fact *= k
        k += 1.0
    return sign * fact * _zeta(n + 1.0, x)


def _giles(y):
    """Giles' single-precision erfinv (2010), the start of the Newton steps (relative error
    about 1e-7 for |y| < 1 - 1e-16; rougher beyond, where Newton still converges)."""
    w = -log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    return p * y


def _erfinv_small(y):
    """erfinv(y) for |y| <= 1/2: Newton's steps on erf(x) = y from Giles' start (quadratic:
    two steps reach full precision, the third confirms it)."""
    x = _giles(y)
    for _ in range(3):
        x -= (math.erf(x) - y) / (1.1283791670955126 * exp(-x * x))
    return x


def _erfcinv_tail(z):
    """erfcinv(z) for 0 < z <= 1/2 (a result >= 0.47): Newton's steps on log erfc(x) = log z,
    which stay well scaled in the far tail (z down to the subnormals), from Giles' start at
    1 - z computed as z (2 - z) inside its logarithm."""
    w = -log(z * (2.0 - z))
    if w < 5.0:
        x = _giles(1.0 - z)
    elif w < 36.0:
        x = _giles_tail(w)
    else:
        # beyond Giles' range: erfc x ~ exp(-x^2) / (x sqrt pi), so x^2 = -log z - log(x
        # sqrt pi), iterated from x^2 = -log z (within 1e-3 after three passes)
        x = sqrt(-log(z))
        for _ in range(3):
            x = sqrt(-log(z) - log(x * 1.7724538509055159))
    lz = log(z)
    for _ in range(8):
        if x < 25.0:
            e = math.erfc(x)
            step = (log(e) - lz) * e / (-1.1283791670955126 * exp(-x * x))
        else:
            # erfc x = exp(-x^2) / (x sqrt pi) S, S = sum_k (-1)^k (2k-1)!! / (2x^2)^k (its
            # terms fall below 1e-17 within 12 at x >= 25), where erfc itself is near the
            # subnormals; d/dx log erfc x = -2x / S
            t = 1.0
            sr = 1.0
            h = 0.5 / (x * x)
            for k in range(1, 14):
                t *= -(2.0 * k - 1.0) * h
                sr += t
            step = (-x * x - log(x * 1.7724538509055159) + log(sr) - lz) * sr / (-2.0 * x)
        x -= step
        if fabs(step) <= 1e-17 * x:
            break
    return x


def _giles_tail(w):
    """Giles' tail branch (5 <= w = -log(1 - y^2) < 36), for y near 1 (its factor y = 1)."""
    w = sqrt(w) - 3.0
    p = -0.000200214257
    p = 0.000100950558 + p * w
    p = 0.00134934322 + p * w
    p = -0.00367342844 + p * w
    p = 0.00573950773 + p * w
    p = -0.0076224613 + p * w
    p = 0.00943887047 + p * w
    p = 1.00167406 + p * w
    p = 2.83297682 + p * w
    return p


def erfinv(y):
    """The inverse of erf on [-1, 1] (scipy.special.erfinv): +-inf at +-1, NaN outside, and
    -0 for -0. Near +-1 through 1 - |y| (exact there) and the erfc tail."""
    y = float64(y)
    if y != y:
        return y
    if y == 1.0:
        return inf
    if y == -1.0:
        return -inf
    if y > 1.0 or y < -1.0:
        return nan
    if y == 0.0:
        return y
    if fabs(y) <= 0.5:
        return _erfinv_small(y)
    return copysign(_erfcinv_tail(1.0 - fabs(y)), y)


def ndtri(p):
    """The standard normal quantile (scipy.special.ndtri, norm.ppf): -sqrt 2 erfcinv(2p),
    -inf at 0, +inf at 1, NaN outside [0, 1]. The tails go through erfc (exact for p down to
    the subnormals; near 1 through 1 - p, exact there)."""
    p = float64(p)
    if p != p:
        return p
    if p == 0.0:
        return -inf
    if p == 1.0:
        return inf
    if p < 0.0 or p > 1.0:
        return nan
    if p < 0.25:
        return -1.4142135623730951 * _erfcinv_tail(2.0 * p)
    if p > 0.75:
        return 1.4142135623730951 * _erfcinv_tail(2.0 * (1.0 - p))
    return 1.4142135623730951 * _erfinv_small(2.0 * p - 1.0)


def log_ndtr(a):
    """log Phi(a), the log of the standard normal CDF (scipy.special.log_ndtr). Above 0,
    log1p(-Phi(-a)) (no cancellation as Phi -> 1); down to -20, log(erfc(-a / sqrt 2) / 2);
    below, the asymptotic series log phi(a) - log(-a) + log(1 - 1/a^2 + 3/a^4 - ...)."""
    a = float64(a)
    if a != a:
        return a
    if a > 0.0:
        return log1p(-0.5 * math.erfc(a * 0.7071067811865476))
    if a > -20.0:
        return log(0.5 * math.erfc(-a * 0.7071067811865476))
    if a == -inf:
        return a
    z = 1.0 / (a * a)
    term = 1.0
    s = 0.0
    k = 1.0
    while k < 40.0:
        term *= -(2.0 * k - 1.0) * z
        s += term
        if fabs(term) < 1e-17:
            break
        k += 1.0
    return -0.5 * a * a - 0.9189385332046728 - log(-a) + log1p(s)


def _bessel_series(x, nu):
    """I_nu(x) for nu = 0, 1 and 0 <= x <= 30: sum_k (x/2)^(2k+nu) / (k! (k+nu)!), all terms
    positive (no cancellation)."""
    q = 0.25 * x * x
    t = 1.0 if nu == 0.0 else 0.5 * x
    s = t
    k = 1.0
    while t > 1e-17 * s:
        t *= q / (k * (k + nu))
        s += t
        k += 1.0
    return s


def _bessel_asymptotic(x, nu):
    """I_nu(x) for x > 30: e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k, a_k the product of
    (4 nu^2 - (2j - 1)^2) / (8 j), j = 1..k (the smallest term is about e^-2x, 1e-26 at 30).
    e^x is taken in two halves, so that I_nu stays finite up to where it overflows."""
    c = 1.0
    s = 1.0
    mu = 4.0 * nu * nu
    k = 1.0
    while k < 60.0:
        c *= -(mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x)
        s += c
        if fabs(c) < 1e-17 * fabs(s):
            break
        k += 1.0
    h = exp(0.5 * x)
    return h * (h / sqrt(2.0 * PI * x) * s)


def i0(x):
    """The modified Bessel function I0 (scipy.special.i0); even; +inf at +-inf (scipy's i0
    gives NaN there)."""
    x = fabs(float64(x))
    if x != x or x == inf:
        return x
    return _bessel_series(x, 0.0) if x <= 30.0 else _bessel_asymptotic(x, 0.0)


def i1(x):
    """The modified Bessel function I1 (scipy.special.i1); odd (i1(-0) = -0); +-inf at
    +-inf (scipy's i1 gives NaN there)."""
    x = float64(x)
    ax = fabs(x)
    if ax != ax or ax == inf:
        return x
    v = _bessel_series(ax, 1.0) if ax <= 30.0 else _bessel_asymptotic(ax, 1.0)
    return copysign(v, x)


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"lgamma": lgamma, "polygamma": polygamma, "erfinv": erfinv, "ndtri": ndtri,
             "log_ndtr": log_ndtr, "i0": i0, "i1": i1}


def compiled():
    """FUNCTIONS compiled with numba, inlined where a kernel calls them: each function's
    helpers are compiled first and bound in its globals (numba resolves a global call at
    compile time). Errors follow numpy's model (a division by zero gives inf, never raises)."""
    import types

    from numba import njit

    done = {}

    def compile_(fn):
        if fn.__name__ not in done:
            glob = dict(fn.__globals__)
            for name in fn.__code__.co_names:
                helper = globals().get(name)
                if isinstance(helper, types.FunctionType) and helper is not fn:
                    glob[name] = compile_(helper)
            done[fn.__name__] = njit(inline="always", error_model="numpy")(
                types.FunctionType(fn.__code__, glob, fn.__name__))
        return done[fn.__name__]

    return {name: compile_(fn) for name, fn in FUNCTIONS.items()}
