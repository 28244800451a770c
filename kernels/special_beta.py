"""The regularized incomplete beta function that the betainc / betaincc / betainc_dx /
betainc_da / betainc_db block rows (``blocks_beta.py``) call: I_x(a, b) = B(x; a, b) /
B(a, b) (scipy.special.betainc), its complement 1 - I_x(a, b) (scipy.special.betaincc), its
derivative in x, the beta density x^(a-1) (1-x)^(b-1) / B(a, b), its derivatives in a and b
(betainc_dab, below) and the density's (betainc_dx_dab). Checked against scipy.special and
mpmath in tests/test_scipy.py.

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

The derivatives in a and b differentiate that same fraction in forward mode (each Lentz
quantity carries its derivatives in both shape parameters, as Boik and Robison-Cox (1998)
differentiate the fraction's convergents), on the side where it converges, the prefactor's
log derivatives log x - psi(a) + psi(a + b) taken against their own logs (no cancellation
of size log a near the bulk) and the prefactor in DiDonato and Morris' form for large a and
b. Where the derivative in the fraction's second parameter cancels (a small p against a
large q next to the swap point: its two terms 1:20 apart, 2.7e-12 lost), a second turn on
the other side, where that parameter is the first, gives it. Against mpmath (50+ digits)
over a, b log-uniform in [0.05, 500] and x near 0, near 1, in the bulk and at the swap
point: 4.4e-13 relative at most over 10000 points.

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


# -- the derivatives in a and b (the betainc_da / betainc_db rows; betainc's d/da, d/db) -------
HALF_LOG_2PI = 0.9189385332046728


def _psi_minus_log(a):
    """psi(a) - log a for a > 0, without the cancellation of two numbers of size log a: the
    recurrence psi(a) = psi(a + 1) - 1/a up to z = a + n >= 10, then the asymptotic series
    psi(z) - log z = -1/(2z) - sum B_2k / (2k z^2k) (7 terms, the next below 5e-17 at z =
    10). (special_gamma.py has the same; a special module compiles only its own helpers.)"""
    r = 0.0
    z = a
    while z < 10.0:
        r -= 1.0 / z
        z += 1.0
    w = 1.0 / (z * z)
    s = w * (1.0 / 12 - w * (1.0 / 120 - w * (1.0 / 252 - w * (1.0 / 240 - w * (
        1.0 / 132 - w * (691.0 / 32760 - w / 12.0))))))
    return r + (log(z / a) if z != a else 0.0) - 0.5 / z - s


def _stirling(a):
    """log Gamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2) for a >= 10 (6 terms; a copy of
    special_gamma.py's, as _psi_minus_log and _log1pmx: numba compiles a special module's own
    helpers only, and each module's digest keys its rows alone)."""
    z = 1.0 / (a * a)
    return (1.0 / 12.0 - z * (1.0 / 360.0 - z * (1.0 / 1260.0 - z * (
        1.0 / 1680.0 - z * (1.0 / 1188.0 - z * (691.0 / 360360.0)))))) / a


def _log1pmx(t):
    """log(1 + t) - t, by its series below |t| = 1/4 (no cancellation)."""
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


def _log_scaled(p, q, y, yc, ly, lyc):
    """log M, M = y^p (1-y)^q Gamma(p + q) / (Gamma(p + 1) Gamma(q + 1)) (= x^a (1-x)^b /
    (a b B(a, b))), for p, q >= 0 not both 0, 0 < y < 1; yc = 1 - y and the logs ly, lyc
    given exactly (the swapped side passes x itself as yc). Where p and q are both >= 10,
    DiDonato and Morris' form: with Stirling's series for the Gammas, p log(y (p+q) / p) +
    q log(yc (p+q) / q) = p log1pmx(u) + q log1pmx(v), u = (y q - yc p) / p, v = -p u / q
    (p u + q v = 0), so that no term of size p log p cancels near the bulk y = p / (p+q);
    elsewhere through Gamma itself (p + q < 170), or Stirling's series for the ratio of the
    two large Gammas."""
    if p >= 10.0 and q >= 10.0:
        u = (y * q - yc * p) / p
        v = -p * u / q
        s = p + q
        main = (p * _log1pmx(u) + q * _log1pmx(v) if fabs(u) < 0.25 and fabs(v) < 0.25 else
                p * (ly + log(s / p)) + q * (lyc + log(s / q)))
        return (main + 0.5 * log(s / (p * q)) - HALF_LOG_2PI - log(s) + _stirling(s)
                - _stirling(p) - _stirling(q))
    t = p * ly + q * lyc
    if p + q < 170.0:
        return t + log(_gamma(p + q) / (_gamma(p + 1.0) * _gamma(q + 1.0)))
    # one of them large (>= 160), the other below 10: log Gamma(big + small) - log Gamma(big
    # + 1) by Stirling's series, (z1 - 1/2) log(z1 / z2) + (z1 - z2)(log z2 - 1) + s(z1) -
    # s(z2), of size |small - 1| log big (the lgammas themselves are of size big log big)
    big = p if p > q else q
    small = q if p > q else p
    z1 = big + small
    z2 = big + 1.0
    r = ((z1 - 0.5) * log1p((small - 1.0) / z2) + (small - 1.0) * (log(z2) - 1.0)
         + _stirling(z1) - _stirling(z2))
    return t + r - float64(math.lgamma(small + 1.0))


def _fraction_dpq(p, q, y, yc, ly, lyc):
    """(dJ/dp, dJ/dq, how much each sum below cancels, whether the fraction converged) for J
    = I_y(p, q), best below the swap point (the fraction converges fast), p, q
    >= 0 not both 0. J = q M F with M = _log_scaled's and F the continued fraction of
    _fraction, carried in forward mode: each Lentz quantity holds its derivatives in p and
    q (the coefficients d_2m = m (q - m) y / ((p + 2m - 1)(p + 2m)), d_2m+1 = -(p + m)(p + q
    + m) y / ((p + 2m)(p + 2m + 1)) are rational in p, q), until the step and both its
    derivatives have converged. Then, with 1 / (p B(p, q)) = q Gamma(p + q) / (Gamma(p + 1)
    Gamma(q + 1)) and psi(q) / Gamma(q) = (q psi(q + 1) - 1) / Gamma(q + 1),

        dJ/dp = q M (F (log y - psi(p + 1) + psi(p + q)) + F_p),
        dJ/dq = M (F (1 + q (log(1 - y) - psi(q + 1) + psi(p + q))) + q F_q),

    finite at p = 0 and at q = 0 (the one-sided limits). Each log - psi is taken as
    log(y (p + q) / (p + 1)) - (psi(p + 1) - log(p + 1)) + (psi(p + q) - log(p + q)), so
    that near the bulk of a large p, q nothing of size log p cancels."""
    s = p + q
    wp = _weight(p + 1.0, s, ly)
    wq = _weight(q + 1.0, s, lyc)
    # Lentz's method with the derivatives (_p, _q) of every quantity; c starts at 1, d at
    # 1 / (1 + d_1), d_1 = -(p + q) y / (p + 1)
    c = 1.0
    cp = 0.0
    cq = 0.0
    e = 1.0 - s * y / (p + 1.0)
    ep = y * (q - 1.0) / ((p + 1.0) * (p + 1.0))
    eq = -y / (p + 1.0)
    if fabs(e) < TINY:
        e = TINY
        ep = 0.0
        eq = 0.0
    d = 1.0 / e
    dp = -ep * d * d
    dq = -eq * d * d
    h = d
    hp = dp
    hq = dq
    m = 1.0
    while m < 10000.0:
        k = 0
        while k < 2:
            if k == 0:                     # d_2m
                r1 = p + 2.0 * m - 1.0
                r2 = p + 2.0 * m
                aa = m * (q - m) * y / (r1 * r2)
                ap = -aa * (1.0 / r1 + 1.0 / r2)
                aq = m * y / (r1 * r2)
            else:                          # d_2m+1
                r1 = p + 2.0 * m
                r2 = p + 2.0 * m + 1.0
                aa = -(p + m) * (s + m) * y / (r1 * r2)
                ap = aa * (1.0 / (p + m) + 1.0 / (s + m) - 1.0 / r1 - 1.0 / r2)
                aq = aa / (s + m)
            e = 1.0 + aa * d
            ep = ap * d + aa * dp
            eq = aq * d + aa * dq
            if fabs(e) < TINY:
                e = TINY
                ep = 0.0
                eq = 0.0
            cp = ap / c - aa * cp / (c * c)
            cq = aq / c - aa * cq / (c * c)
            c = 1.0 + aa / c
            if fabs(c) < TINY:
                c = TINY
                cp = 0.0
                cq = 0.0
            d = 1.0 / e
            dp = -ep * d * d
            dq = -eq * d * d
            delta = d * c
            deltap = dp * c + d * cp
            deltaq = dq * c + d * cq
            hp = hp * delta + h * deltap
            hq = hq * delta + h * deltaq
            h *= delta
            k += 1
        if (fabs(delta - 1.0) < 1e-16 and fabs(deltap) <= 1e-17 * fabs(wp + hp / h)
                and q * fabs(deltaq) <= 1e-17 * fabs(1.0 + q * (wq + hq / h))):
            break
        m += 1.0
    mm = exp(_log_scaled(p, q, y, yc, ly, lyc))
    sp = h * wp + hp
    sq = h * (1.0 + q * wq) + q * hq
    # how much each sum cancels: (|first| + |second|) / |sum| (1: none)
    kp = (fabs(h * wp) + fabs(hp)) / fabs(sp) if sp != 0.0 else inf
    kq = (fabs(h * (1.0 + q * wq)) + fabs(q * hq)) / fabs(sq) if sq != 0.0 else inf
    return q * mm * sp, mm * sq, kp, kq, m < 10000.0


def _dab_edge(a, b, x):
    """(dI/da, dI/db) at the special points, or (-1, -1) where the fraction applies: NaN
    where I is NaN; 0 where I is constant in a and b (x = 0, x = 1, an infinite a or b).
    a = 0 or b = 0 with 0 < x < 1 go to the fraction (their one-sided limits)."""
    if a != a or b != b or x != x or a < 0.0 or b < 0.0 or x < 0.0 or x > 1.0:
        return nan, nan
    if (a == 0.0 and b == 0.0) or (a == inf and b == inf):
        return nan, nan
    if x == 0.0 or x == 1.0 or a == inf or b == inf:
        return 0.0, 0.0
    return -1.0, -1.0


def betainc_dab(a, b, x):
    """(dI/da, dI/db), the derivatives of I_x(a, b) in its shape parameters (betaincc's are
    their negatives). The fraction runs on the side where it converges, as betainc's: below
    the swap point on (a, b, x), above it on (b, a, 1 - x), where I = 1 - I_{1-x}(b, a)
    gives dI/da = -dJ/dq, dI/db = -dJ/dp (no 1 - p: each is computed directly; x itself
    and log x, log1p(-x) are passed, so 1 - x rounding costs nothing in the prefactor).
    dI/da < 0 < dI/db inside (the distribution moves right as a grows). Where either sum
    cancels by more than 4:1 (the derivative in the fraction's q for a large q against a
    small p, next to the swap point), a second turn runs the fraction on the other side,
    whose p that parameter is, and keeps whichever of the two cancelled less (8% of a
    log-uniform grid; the other side's fraction converges there, its count is checked). At
    a = 0 or b = 0 (0 < x < 1) the one-sided limits: I is 1 or 0 there and NaN below."""
    a = float64(a)
    b = float64(b)
    x = float64(x)
    ea, eb = _dab_edge(a, b, x)
    if ea != -1.0:
        return ea, eb
    lx = log(x)
    l1x = log1p(-x)
    swap = x * (a + b + 2.0) >= a + 1.0
    da = 0.0
    db = 0.0
    ka = inf
    kb = inf
    turn = 0
    while turn < 2:
        # one call of the fraction (numba inlines it at each call site), the operands swapped
        # on that side; a second turn on the other side where the first cancelled
        p = b if swap else a
        q = a if swap else b
        dp, dq, kp, kq, done = _fraction_dpq(p, q, 1.0 - x if swap else x,
                                             x if swap else 1.0 - x, l1x if swap else lx,
                                             lx if swap else l1x)
        # the first turn's always (its fraction converges), the second's where it converged
        # and cancelled less
        if turn == 0 or (done and (kq if swap else kp) < ka):
            da = -dq if swap else dp
            ka = kq if swap else kp
        if turn == 0 or (done and (kp if swap else kq) < kb):
            db = -dp if swap else dq
            kb = kp if swap else kq
        if ka < 4.0 and kb < 4.0:
            break
        swap = not swap
        turn += 1
    # I is 1 all along a = 0 and 0 all along b = 0: exact zeros there (not a rounded one)
    return da if b > 0.0 else 0.0, db if a > 0.0 else 0.0


def _weight(v, s, lv):
    """log t - psi(v) + psi(s) for t with log t = lv, v, s > 0, as (lv + log(s / v)) -
    (psi(v) - log v) + (psi(s) - log s): near the bulk of a large v the logs and the psis
    cancel to O(1 / sqrt(v)), so each is taken against its own log first."""
    return lv + log(s / v) - _psi_minus_log(v) + _psi_minus_log(s)


def betainc_dx_dab(a, b, x):
    """(d/da, d/db) of the density x^(a-1) (1-x)^(b-1) / B(a, b) (betainc_dx's derivatives in
    a and b, and betainc_da's / betainc_db's in x): the density times log x - psi(a) +
    psi(a + b), and times log(1 - x) - psi(b) + psi(a + b). Their limits at x = 0: 0 for a >
    1; for a = 1, -inf and 1 (the density b, log x -> -inf; b (psi(1 + b) - psi(b)) = 1);
    for a < 1, -inf and +inf; at x = 1 the same with a and b swapped and the pair reversed;
    0 inside where I is constant (a or b 0 or infinite); NaN where I is NaN."""
    a = float64(a)
    b = float64(b)
    x = float64(x)
    e = _edge(a, b, 0.5 if x == x and x >= 0.0 and x <= 1.0 else x)
    if e != e:
        return nan, nan
    if e != -1.0:
        return 0.0, 0.0                  # I constant: a or b 0 or infinite
    if x == 0.0:
        if a > 1.0:
            return 0.0, 0.0
        return -inf, (1.0 if a == 1.0 else inf)
    if x == 1.0:
        if b > 1.0:
            return 0.0, 0.0
        return (1.0 if b == 1.0 else inf), -inf
    d = exp(_log_power(a - 1.0, b - 1.0, x) - _lbeta(a, b))
    s = a + b
    return d * _weight(a, s, log(x)), d * _weight(b, s, log1p(-x))


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"betainc": betainc, "betaincc": betaincc, "betainc_dx": betainc_dx,
             "betainc_dab": betainc_dab, "betainc_dx_dab": betainc_dx_dab}
