"""The regularized incomplete beta function that the betainc / betaincc / betainc_dx block
rows (``blocks_beta.py``) call: I_x(a, b) = B(x; a, b) / B(a, b) (scipy.special.betainc),
its complement 1 - I_x(a, b) (scipy.special.betaincc) and its derivative in x, the beta
density x^(a-1) (1-x)^(b-1) / B(a, b). Checked against scipy.special in tests/test_scipy.py.

As Numerical Recipes' betai / betacf and Cephes' incbet:

    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * 1 / (1 + d1 / (1 + d2 / (1 + ...))),
    d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
    d_{2m}   = m (b - m) x / ((a + 2m - 1)(a + 2m)),

evaluated by Lentz's method, which converges fast for x < (a + 1) / (a + b + 2); above
that point the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) swaps the arguments, so that the
fraction always runs on the side where it converges, and the complement is the fraction
itself there (no 1 - p cancellation in betaincc).

The prefactor x^a (1-x)^b / B(a, b) is taken directly with pow and Gamma where nothing
overflows or underflows (a + b < 170, the powers normal numbers: a few ulp), else in log
space through lgamma. (1-x)^b is exp(b log1p(-x)) below x = 1/2, where 1 - x would round.

Special values as scipy's (1.17): NaN for a NaN, a < 0, b < 0, x outside [0, 1],
a = b = 0 and a = b = inf; I = 0 at x = 0 and 1 at x = 1; inside, I = 1 for a = 0 or
b = inf, and 0 for b = 0 or a = inf.

As ``special.py``'s, one code serves both engines (numpy's scalar functions, IEEE results,
never a raise). Its code keys only the compiled objects whose rules call it (``keys.py``).
"""
import math

from numpy import exp, fabs, float64, log, log1p

inf = float("inf")
nan = float("nan")
TINY = 1e-300


def _gamma(x):
    """Gamma(x) for 0 < x < 171: the recurrence Gamma(x) = (x - 1) Gamma(x - 1) down to
    [1, 2), where exp(lgamma) is good to an ulp or two (|lgamma| < 0.13 there); below 1,
    Gamma(x + 1) / x. (numba's math.gamma calls a helper a kernel must not link.)"""
    r = 1.0
    while x >= 2.0:
        x -= 1.0
        r *= x
    if x < 1.0:
        return r * exp(float64(math.lgamma(x + 1.0))) / x
    return r * exp(float64(math.lgamma(x)))


def _lbeta(a, b):
    """log B(a, b) for a, b > 0 finite: through Gamma itself where a + b < 170 (no
    overflow; the ratio is then good to a few ulp, where the difference of lgammas loses
    digits of size log Gamma(a + b)), else through lgamma."""
    if a + b < 170.0 and a > 1e-300 and b > 1e-300:
        return log(_gamma(a) / _gamma(a + b) * _gamma(b))
    return float64(math.lgamma(a)) + float64(math.lgamma(b)) - float64(math.lgamma(a + b))


def _log_power(a, b, x):
    """a log x + b log(1 - x) for 0 < x < 1: log1p(-x) below 1/2, where 1 - x rounds."""
    lx = log(x)
    ly = log1p(-x) if x < 0.5 else log(1.0 - x)
    return a * lx + b * ly


def _prefactor(a, b, x):
    """x^a (1-x)^b / B(a, b) for a, b > 0 finite, 0 < x < 1."""
    t = _log_power(a, b, x) - _lbeta(a, b)
    if a + b < 170.0 and t > -700.0 and t < 700.0:
        y = 1.0 - x
        pb = exp(b * log1p(-x)) if x < 0.5 else y ** b
        pa = x ** a
        if pa > 1e-290 and pb > 1e-290:
            g = _gamma(a + b) / _gamma(a) / _gamma(b)
            return pa * pb * g
    return exp(t)


def _fraction(a, b, x):
    """The continued fraction of I_x(a, b) (x below (a + 1) / (a + b + 2)), by Lentz's
    method: 1 / (1 + d1 / (1 + d2 / ...))."""
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if fabs(d) < TINY:
        d = TINY
    d = 1.0 / d
    h = d
    m = 1.0
    while m < 10000.0:
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        if fabs(d) < TINY:
            d = TINY
        c = 1.0 + aa / c
        if fabs(c) < TINY:
            c = TINY
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        if fabs(d) < TINY:
            d = TINY
        c = 1.0 + aa / c
        if fabs(c) < TINY:
            c = TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if fabs(delta - 1.0) < 1e-16:
            break
        m += 1.0
    return h


def _edge(a, b, x):
    """I_x(a, b) at the special points (NaN, negative, zero or infinite operands, x at 0 or
    1), or -1 where the fraction applies."""
    if a != a or b != b or x != x or a < 0.0 or b < 0.0 or x < 0.0 or x > 1.0:
        return nan
    if (a == 0.0 and b == 0.0) or (a == inf and b == inf):
        return nan
    if x == 0.0:
        return 0.0
    if x == 1.0:
        return 1.0
    if a == 0.0 or b == inf:
        return 1.0
    if b == 0.0 or a == inf:
        return 0.0
    return -1.0


def _lower(a, b, x):
    """I_x(a, b) for a, b > 0 finite, x below the swap point."""
    return _prefactor(a, b, x) * _fraction(a, b, x) / a


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (scipy.special.betainc)."""
    a = float64(a)
    b = float64(b)
    x = float64(x)
    e = _edge(a, b, x)
    if e != -1.0:
        return e
    if x * (a + b + 2.0) < a + 1.0:
        return _lower(a, b, x)
    return 1.0 - _lower(b, a, 1.0 - x)


def betaincc(a, b, x):
    """The complement 1 - I_x(a, b) (scipy.special.betaincc)."""
    a = float64(a)
    b = float64(b)
    x = float64(x)
    e = _edge(a, b, x)
    if e != -1.0:
        return e if e != e else 1.0 - e
    if x * (a + b + 2.0) < a + 1.0:
        return 1.0 - _lower(a, b, x)
    return _lower(b, a, 1.0 - x)


def betainc_dx(a, b, x):
    """d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b), in log space. Its limits: at x = 0,
    +inf for a < 1, b for a = 1 (1 / B(1, b)), 0 for a > 1; at x = 1 the same with a and b
    swapped; 0 inside where I is constant there (a = 0, b = 0, an infinite a or b); NaN
    where I is NaN."""
    a = float64(a)
    b = float64(b)
    x = float64(x)
    e = _edge(a, b, 0.5 if x == x and x >= 0.0 and x <= 1.0 else x)
    if e == e and e != -1.0:
        return 0.0                    # I constant in x: a or b 0 or infinite
    if e != e:
        return nan
    if x == 0.0:
        return inf if a < 1.0 else (b if a == 1.0 else 0.0)
    if x == 1.0:
        return inf if b < 1.0 else (a if b == 1.0 else 0.0)
    return exp(_log_power(a - 1.0, b - 1.0, x) - _lbeta(a, b))


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"betainc": betainc, "betaincc": betaincc, "betainc_dx": betainc_dx}
