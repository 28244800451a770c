"""The regularized incomplete gamma functions that the gammainc / gammaincc map rows
(``maps_special.py``) call: P(a, x) = gamma(a, x) / Gamma(a) (scipy.special.gammainc) and
Q(a, x) = 1 - P(a, x) (scipy.special.gammaincc), checked against scipy.special in
tests/test_scipy.py.

As Numerical Recipes' gammp / gammq and Cephes' igam / igamc: both start from the
prefactor x^a e^-x / Gamma(a), taken in log space; then

* where x <= 1 or x <= a, the series P = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a+1)..(a+n))
  (its terms positive: no cancellation), and Q = 1 - P;
* elsewhere the continued fraction Q = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) /
  (x + 3 - a - 2 (2 - a) / ...)), by Lentz's method, and P = 1 - Q.

For a > 10 the log of the prefactor, a log x - x - log Gamma(a), is the difference of
numbers of size a log a; it is taken instead as a (log1p(t) - t) + log(a / (2 pi)) / 2 -
s(a), t = (x - a) / a (a log(x / a) + a - x for |t| >= 1/4), with Stirling's series
s(a) = log Gamma(a) - (a - 1/2) log a + a - log(2 pi) / 2 (the terms cancel in closed form,
so the error stays that of a number of size a t^2 rather than of a log a).

Special values as scipy's: NaN for a < 0, x < 0, a = x = 0 and a NaN; P(0, x) = 1 for
x > 0; P(a, 0) = 0; P(a, inf) = 1 and P(inf, x) = 0 for a finite x; NaN at a = x = inf.

As ``special.py``'s, one code serves both engines (numpy's scalar functions, IEEE results,
never a raise). Its code keys only the compiled objects whose rules call it (``keys.py``).
"""
import math

from numpy import exp, fabs, float64, log, log1p

inf = float("inf")
nan = float("nan")
HALF_LOG_2PI = 0.9189385332046728


def _log1pmx(t):
    """log(1 + t) - t, accurate for small t (the series -t^2/2 + t^3/3 - ... for |t| < 0.25,
    whose 40 terms reach 1e-25 there)."""
    if fabs(t) >= 0.25:
        return log1p(t) - t
    term = t
    s = 0.0
    k = 2.0
    while k < 60.0:
        term *= -t
        s += term / k
        if fabs(term) < 1e-18 * fabs(s):
            break
        k += 1.0
    return s


def _stirling(a):
    """log Gamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2) for a > 10: the series
    1/(12a) - 1/(360a^3) + 1/(1260a^5) - ... (6 terms: the next is below 1e-17 there)."""
    z = 1.0 / (a * a)
    return (1.0 / 12.0 - z * (1.0 / 360.0 - z * (1.0 / 1260.0 - z * (
        1.0 / 1680.0 - z * (1.0 / 1188.0 - z * (691.0 / 360360.0)))))) / a


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a)) for a > 0, x > 0."""
    if a <= 10.0:
        return a * log(x) - x - float64(math.lgamma(a))
    t = (x - a) / a
    # a (log(x / a) - t): through log1p(t) - t near x = a, through log(x / a) itself
    # elsewhere (1 + t would lose the digits of a small x / a)
    main = a * _log1pmx(t) if fabs(t) < 0.25 else a * log(x / a) + (a - x)
    return main + 0.5 * log(a) - HALF_LOG_2PI - _stirling(a)


def _series(a, x):
    """P(a, x) by its series (x <= 1 or x <= a)."""
    ap = a
    term = 1.0 / a
    s = term
    n = 0.0
    while n < 5000.0:
        ap += 1.0
        term *= x / ap
        s += term
        if term < 1e-17 * s:
            break
        n += 1.0
    return exp(_log_prefactor(a, x)) * s


def _fraction(a, x):
    """Q(a, x) by its continued fraction, Lentz's method (x > 1 and x > a)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    i = 1.0
    while i < 5000.0:
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if fabs(d) < tiny:
            d = tiny
        c = b + an / c
        if fabs(c) < tiny:
            c = tiny
        d = 1.0 / d
        delta = d * c
        h *= delta
        if fabs(delta - 1.0) < 1e-16:
            break
        i += 1.0
    return exp(_log_prefactor(a, x)) * h


def _edge(a, x):
    """The value of P at the special points (NaN, negative, zero, infinite operands), or -1
    where the series or the fraction applies."""
    if a != a or x != x or a < 0.0 or x < 0.0:
        return nan
    if a == inf:
        return nan if x == inf else 0.0
    if a == 0.0:
        return nan if x == 0.0 else 1.0
    if x == 0.0:
        return 0.0
    if x == inf:
        return 1.0
    return -1.0


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) (scipy.special.gammainc)."""
    a = float64(a)
    x = float64(x)
    e = _edge(a, x)
    if e != -1.0:
        return e
    if x <= 1.0 or x <= a:
        return _series(a, x)
    return 1.0 - _fraction(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (scipy.special.gammaincc)."""
    a = float64(a)
    x = float64(x)
    e = _edge(a, x)
    if e != -1.0:
        return e if e != e else 1.0 - e
    if x <= 1.0 or x <= a:
        return 1.0 - _series(a, x)
    return _fraction(a, x)


def _tail(a, x, lower):
    """P(a, x) if ``lower`` else Q(a, x), for 0 < a < inf and 0 < x (one call site for
    both: numba inlines these functions wherever they are called, so the inverses' loop
    calls this once rather than gammainc and gammaincc, which compiled 4 times slower)."""
    if x == inf:
        return 1.0 if lower else 0.0
    if x <= 1.0 or x <= a:
        s = _series(a, x)
        return s if lower else 1.0 - s
    f = _fraction(a, x)
    return 1.0 - f if lower else f


# -- the derivative in a: dP/da (the gammainc_da row; gammainc's and gammaincc's d/da) ----------
def _psi_minus_log(a):
    """psi(a) - log a for a > 0, without the cancellation of two numbers of size log a: the
    recurrence psi(a) = psi(a + 1) - 1/a up to z = a + n >= 10, then the asymptotic series
    psi(z) - log z = -1/(2z) - sum B_2k / (2k z^2k) (7 terms, the next below 5e-17 at z =
    10), so psi(a) - log a = -sum_{k<n} 1/(a + k) + log(z / a) - 1/(2z) - S(z)."""
    r = 0.0
    z = a
    while z < 10.0:
        r -= 1.0 / z
        z += 1.0
    w = 1.0 / (z * z)
    s = w * (1.0 / 12 - w * (1.0 / 120 - w * (1.0 / 252 - w * (1.0 / 240 - w * (
        1.0 / 132 - w * (691.0 / 32760 - w / 12.0))))))
    return r + (log(z / a) if z != a else 0.0) - 0.5 / z - s


def _log_x_minus_psi(a, x):
    """log x - psi(a) for a > 0, x > 0, as log(x / a) - (psi(a) - log a): near x = a (the
    bulk of the distribution, for a large a) log x and psi(a) would cancel."""
    return log(x / a) - _psi_minus_log(a)


def _series_da(a, x):
    """dP/da where P is its series (x <= 1 or x <= a): P = sum_n t_n, t_0 = x^a e^-x /
    Gamma(a + 1), t_n = t_{n-1} x / (a + n) = x^(a+n) e^-x / Gamma(a + n + 1), so dt_n/da =
    t_n (log x - psi(a + n + 1)) with psi(a + n + 1) = psi(a + 1) + sum_{k=1..n} 1/(a + k).
    The weights fall with n through 0 near n = x - a, and dP/da < 0: the few positive terms
    cancel a few digits at most. Here a >= 0: at a = 0 (t_0 = e^-x) it is the one-sided
    limit -E1(x)."""
    if a > 10.0:
        # t_0 = (x^a e^-x / Gamma(a)) / a, the prefactor in its Stirling form
        t0 = exp(_log_prefactor(a, x)) / a
        w = _log_x_minus_psi(a, x) - 1.0 / a           # log x - psi(a + 1)
    else:
        t0 = exp(a * log(x) - x - float64(math.lgamma(a + 1.0)))
        w = log(x) - (_psi_minus_log(a + 1.0) + log(a + 1.0))
    term = 1.0                      # t_n / t_0
    s = 1.0
    ds = w                          # sum_n (t_n / t_0) (log x - psi(a + n + 1))
    ap = a
    n = 0.0
    while n < 5000.0:
        ap += 1.0
        term *= x / ap
        w -= 1.0 / ap
        s += term
        d = term * w
        ds += d
        if term < 1e-17 * s and fabs(d) < 1e-17 * fabs(ds):
            break
        n += 1.0
    return t0 * ds


def _fraction_da(a, x):
    """dQ/da where Q is the continued fraction (x > 1 and x > a): Q = pre h, pre = x^a e^-x /
    Gamma(a), h Lentz's fraction of _fraction, differentiated in forward mode: each Lentz
    quantity carries its derivative in a (b_i = x + 2i + 1 - a, b' = -1; a_i = -i (i - a),
    a_i' = i), until both the step and its derivative have converged. Then dQ/da = pre (h
    (log x - psi(a)) + h'). Up to a = 10 with 1 / Gamma(a) = a / Gamma(a + 1): dQ/da = R (h
    (1 + a (log x - psi(a + 1))) + a h'), R = x^a e^-x / Gamma(a + 1), which has no pole at
    a = 0 (there dQ/da = e^-x h = E1(x)); above, pre in its Stirling form. Both weights of h
    are positive (x > a), so no cancellation there."""
    if a > 10.0:
        m = exp(_log_prefactor(a, x))
        k = _log_x_minus_psi(a, x)
        wa = 1.0
    else:
        m = exp(a * log(x) - x - float64(math.lgamma(a + 1.0)))
        k = 1.0 + a * (log(x) - (_psi_minus_log(a + 1.0) + log(a + 1.0)))
        wa = a
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    dc = 0.0
    d = 1.0 / b
    dd = d * d                      # (1 / b)' = -b' / b^2 = 1 / b^2
    h = d
    dh = dd
    i = 1.0
    while i < 5000.0:
        an = -i * (i - a)
        b += 2.0
        e = an * d + b              # the next denominator, before its reciprocal
        de = i * d + an * dd - 1.0
        if fabs(e) < tiny:
            e = tiny
            de = 0.0
        dc = -1.0 + i / c - an * dc / (c * c)
        c = b + an / c
        if fabs(c) < tiny:
            c = tiny
            dc = 0.0
        d = 1.0 / e
        dd = -de * d * d
        delta = d * c
        ddelta = dd * c + d * dc
        dh = dh * delta + h * ddelta
        h *= delta
        if fabs(delta - 1.0) < 1e-16 and wa * fabs(ddelta) <= 1e-17 * fabs(k + wa * dh / h):
            break
        i += 1.0
    return m * (h * k + wa * dh)


def gammainc_da(a, x):
    """dP(a, x)/da, the derivative of the regularized lower incomplete gamma function in a
    (as JAX's igamma_grad_a); gammaincc's is its negative. Its special values: NaN where P
    is NaN (a NaN, a < 0, x < 0, a = x = 0, a = x = inf); 0 at x = 0, x = inf and a = inf
    (P constant there, to all orders in a); at a = 0 the one-sided limit -E1(x) (P is 1
    there and NaN below)."""
    a = float64(a)
    x = float64(x)
    if a != a or x != x or a < 0.0 or x < 0.0:
        return nan
    if a == inf:
        return nan if x == inf else 0.0
    if x == 0.0:
        return nan if a == 0.0 else 0.0
    if x == inf:
        return 0.0
    if x <= 1.0 or x <= a:
        return _series_da(a, x)
    return -_fraction_da(a, x)


# -- the inverses: x with P(a, x) = p (gammaincinv) or Q(a, x) = q (gammainccinv) --------------
def _inverse_edge(a, p, q):
    """The inverse at the special points (as scipy: NaN for a NaN, a < 0, a = inf or p
    outside [0, 1]; 0 where p = 0, a = 0 included; inf where q = 0; NaN at a = 0 otherwise),
    or -1 where the iteration applies."""
    if a != a or p != p or q != q or a < 0.0 or a == inf or p < 0.0 or q < 0.0:
        return nan
    if p == 0.0:
        return 0.0
    if q == 0.0:
        return inf
    if a == 0.0:
        return nan
    return -1.0


def _inverse(a, p, q):
    """x with P(a, x) = p and Q(a, x) = q (p + q = 1, the smaller one given exactly): the
    first guess of Numerical Recipes' invgammp (Wilson-Hilferty for a > 1, the series' first
    term or the tail's exponential below), then Halley's steps on P - p where p < 1/2 and on
    q - Q elsewhere, so that each tail keeps its digits; both have the slope x^(a-1) e^-x /
    Gamma(a)."""
    if a > 1.0:
        t = (-2.0 * log(p if p < 0.5 else q)) ** 0.5
        z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        if p < 0.5:
            z = -z
        w = 1.0 - 1.0 / (9.0 * a) - z / (3.0 * a ** 0.5)
        x = a * w * w * w
        if x < 1e-3:
            x = 1e-3
    else:
        t = 1.0 - a * (0.253 + a * 0.12)
        x = (p / t) ** (1.0 / a) if p < t else 1.0 - log(q / (1.0 - t))
    if x <= 0.0:                        # the series' first term underflowed
        return 0.0
    lower = p < 0.5
    k = 0
    while k < 100:
        t = _tail(a, x, lower)
        f = t - p if lower else q - t
        slope = exp(_log_prefactor(a, x)) / x
        if slope == 0.0 or slope != slope or f == 0.0:
            break
        u = f / slope
        c = u * ((a - 1.0) / x - 1.0)
        step = u / (1.0 - 0.5 * (c if c < 1.0 else 1.0))
        nx = x - step
        if nx <= 0.0:
            nx = 0.5 * x                 # a step past 0: halve instead
        if fabs(nx - x) <= 1e-15 * nx:
            x = nx
            break
        x = nx
        k += 1
    return x


def gammaincinv(a, p):
    """x with P(a, x) = p, the inverse of gammainc in x (scipy.special.gammaincinv)."""
    a = float64(a)
    p = float64(p)
    q = 1.0 - p
    e = _inverse_edge(a, p, q if p == p and p <= 1.0 else nan)
    if e != -1.0:
        return e
    return _inverse(a, p, q)


def gammainccinv(a, q):
    """x with Q(a, x) = q, the inverse of gammaincc in x (scipy.special.gammainccinv)."""
    a = float64(a)
    q = float64(q)
    p = 1.0 - q
    e = _inverse_edge(a, p if q == q and q <= 1.0 else nan, q)
    if e != -1.0:
        return e
    return _inverse(a, p, q)


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"gammainc": gammainc, "gammaincc": gammaincc, "gammaincinv": gammaincinv,
             "gammainccinv": gammainccinv, "gammainc_da": gammainc_da}
