"""Owen's T function, which the owens_t map row (``maps_special.py``) calls:

    T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx

(scipy.special.owens_t), to float64 accuracy relative to T itself (checked against mpmath
and scipy.special in tests/test_scipy_owens.py).

The method is Patefield and Tandy's (2000, J. Stat. Softw. 5(5)), as Boost and scipy use it:
T is even in h and odd in a, so h >= 0 and a >= 0 are computed and the sign put back; a > 1
is taken to 0 < 1/a < 1 by the reflection

    T(h, a) = (Q(h) + Q(ah)) / 2 - Q(h) Q(ah) - T(ah, 1/a),    Q the normal upper tail,

written for ah <= 0.67 as 1/4 - P0(h) P0(ah) - T(ah, 1/a), P0(x) = Phi(x) - 1/2 = erf(x /
sqrt 2) / 2 (the two forms are equal: the first keeps digits where Q is small, the second
where P0 is). In 0 <= a <= 1 a table of 8 ranges of a by 15 of h picks one of six methods
and its order: T1 (the series in powers of a, for small h), T2 and T3 (the series in powers
of 1/h, T3 with Chebyshev-economised coefficients, for large h), T4 (the series in h^2 at
a fixed exponent), T5 (13-point Gauss-Legendre quadrature of the integral) and T6 (near a =
1, from T(h, 1) = Q(h)(1 - Q(h))/2). Their table aims at 1e-16 absolute, which is not
1e-16 relative where T is small: from h = 3.36 on (T < 3e-4) T is instead the integral in s
= h x, e^(-h^2/2) / (2 pi h) int_0^ah e^(-s^2/2) / (1 + s^2/h^2) ds, by 10-point
Gauss-Legendre panels (positive terms; the poles s = +-ih are far from the panels), and
the factors e^(-h^2/2) and Q(h) carry the rounding of h^2 and h / sqrt 2 back, which
would cost them h^2 ulps. Measured against mpmath (40 digits) at 6,000 random points (|h|
up to 40, |a| from 1e-4 to 1e4): 1.6e-15 relative at most (scipy 1.17's: 1.9e-13).

Special values as scipy's: NaN for a NaN operand; T(h, +-inf) = +-Q(|h|)/2 (so +-1/4 at h =
0); T(+-inf, a) = 0 (signed as a, 0 at a = +-inf too); T(h, +-0) = 0; T(0, a) = atan(a) /
(2 pi).

As ``special.py``'s, one code serves both engines (numpy's scalar functions and math's erf /
erfc, IEEE results, never a raise). Its code keys only the compiled objects whose rules call
it (``keys.py``).
"""
import math

from numpy import arctan, arctan2, exp, expm1, fabs, float64

inf = float("inf")
nan = float("nan")
INV_2PI = 0.15915494309189535        # 1 / (2 pi)
INV_SQRT_2PI = 0.3989422804014327    # 1 / sqrt(2 pi)
INV_SQRT2 = 0.7071067811865476
INV_SQRT2_LO = -4.833646656726457e-17      # 1 / sqrt 2 - INV_SQRT2
TWO_OVER_SQRT_PI = 1.1283791670955126

# Patefield and Tandy's table: the upper ends of the ranges of h and of a, and for each
# (range of a, range of h) cell the code (0-based) of the method and order below
_H_RANGE = (0.02, 0.06, 0.09, 0.125, 0.26, 0.4, 0.6, 1.6, 1.7, 2.33, 2.4, 3.36, 3.4, 4.8)
_A_RANGE = (0.025, 0.09, 0.15, 0.36, 0.5, 0.9, 0.99999)
_SELECT = (0, 0, 1, 12, 12, 12, 12, 12, 12, 12, 12, 15, 15, 15, 8,
           0, 1, 1, 2, 2, 4, 4, 13, 13, 14, 14, 15, 15, 15, 8,
           1, 1, 2, 2, 2, 4, 4, 14, 14, 14, 14, 15, 15, 15, 9,
           1, 1, 2, 4, 4, 4, 4, 6, 6, 15, 15, 15, 15, 15, 9,
           1, 2, 2, 4, 4, 5, 5, 7, 7, 16, 16, 16, 11, 11, 10,
           1, 2, 4, 4, 4, 5, 5, 7, 7, 16, 16, 16, 11, 11, 11,
           1, 2, 3, 3, 5, 5, 7, 7, 16, 16, 16, 16, 16, 11, 11,
           1, 2, 3, 3, 5, 5, 17, 17, 17, 17, 16, 16, 16, 11, 11)
_METHOD = (1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 5, 6)
_ORDER = (2, 3, 4, 5, 7, 10, 12, 18, 10, 20, 30, 0, 4, 7, 8, 20, 0, 0)
# T3's coefficients: the Chebyshev-economised series of (1 + x)^-1 (31 terms)
_C3 = (1.0, -1.0, 1.0, -0.9999999999999998, 0.9999999999999839, -0.9999999999993063,
       0.9999999999797337, -0.9999999995749584, 0.9999999933226235, -0.9999999188923242,
       0.9999992195143483, -0.9999939351372067, 0.9999613559769055, -0.9997955636651394,
       0.9990927896296171, -0.9965938374119182, 0.9891001713838613, -0.9700785580406933,
       0.9291143868326319, -0.8542058695956156, 0.737965260330301, -0.585234698828374,
       0.4159977761456763, -0.25882108752419436, 0.13755358251638927, -0.060795276632595575,
       0.021633768329987153, -0.005934056934551867, 0.0011743414818332946,
       -0.0001489155613350369, 9.072354320794358e-06)
# T5's 13-point Gauss-Legendre rule on (0, 1) for an even integrand: the squares of the
# positive nodes of the 26-point rule on (-1, 1), and their weights over 2 pi
_PTS5 = (0.35082039676451715489e-02, 0.31279042338030753740e-01, 0.85266826283219451090e-01,
         0.16245071730812277011, 0.25851196049125434828, 0.36807553840697533536,
         0.48501092905604697475, 0.60277514152618576821, 0.71477884217753226516,
         0.81475510988760098605, 0.89711029755948965867, 0.95723808085944261843,
         0.99178832974629703586)
_WTS5 = (0.18831438115323502887e-01, 0.18567086243977649478e-01, 0.18042093461223385584e-01,
         0.17263829606398753364e-01, 0.16243219975989856730e-01, 0.14994592034116704829e-01,
         0.13535474469662088392e-01, 0.11886351605820165233e-01, 0.10070377242777431897e-01,
         0.81130545742299586629e-02, 0.60419009528470238773e-02, 0.38862217010742057883e-02,
         0.16793031084546090448e-02)


# the 10-point Gauss-Legendre rule on (-1, 1): its positive nodes and their weights
_X10 = (0.14887433898163122, 0.4333953941292472, 0.6794095682990244, 0.8650633666889845,
        0.9739065285171717)
_W10 = (0.29552422471475287, 0.26926671930999635, 0.21908636251598204, 0.1494513491505806,
        0.06667134430868814)
# from this h on (a boundary of their table), T is the quadrature _large_h: Patefield and
# Tandy's methods there (T2, T3, T4) are accurate to 1e-16 absolute, only 1e-13 relative to
# T ~ e^(-h^2/2) at h = 3.4 (1e-10 from h = 15 on)
H_LARGE = 3.36


def _product_error(a, b, p):
    """a b - p exactly for p = fl(a b) (Dekker's split; |a|, |b| < 1e150)."""
    t = 134217729.0 * a
    ah = t - (t - a)
    al = a - ah
    t = 134217729.0 * b
    bh = t - (t - b)
    bl = b - bh
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _p0(x):
    """Phi(x) - 1/2 = erf(x / sqrt 2) / 2."""
    return 0.5 * math.erf(x * INV_SQRT2)


def _q(x):
    """The normal upper tail Q(x) = 1 - Phi(x) = erfc(x / sqrt 2) / 2. The rounding d of x /
    sqrt 2 to t would cost Q about x^2 ulps for large x (1e-13 relative at x = 36): it is put
    back to first order, erfc(t + d) = erfc(t) - d 2/sqrt(pi) e^(-t^2)."""
    t = x * INV_SQRT2
    if not fabs(x) < 40.0:
        return 0.5 * math.erfc(t)
    d = _product_error(x, INV_SQRT2, t) + x * INV_SQRT2_LO
    return 0.5 * (math.erfc(t) - d * TWO_OVER_SQRT_PI * exp(-t * t))


def _exp_half_square(h):
    """e^(-h^2/2), with the rounding of h^2 put back (h^2/2 ulps of it otherwise), h < 40."""
    hh = h * h
    return exp(-0.5 * hh) * (1.0 - 0.5 * _product_error(h, h, hh))


def _t1(h, a, m):
    """T1: atan(a) / (2 pi) + 1/(2 pi) sum_j (-1)^j a^(2j+1) / (2j+1) (1 - e^(-h^2/2)
    sum_{i<j} (h^2/2)^i / i!), for small h; the bracket is carried by its recurrence
    (expm1 for the first)."""
    hs = -0.5 * h * h
    dhs = exp(hs)
    aa = a * a
    aj = a * INV_2PI
    dj = expm1(hs)
    gj = hs * dhs
    val = arctan(a) * INV_2PI
    jj = 1.0
    j = 1.0
    while True:
        val += dj * aj / jj
        if m <= j:
            break
        j += 1.0
        jj += 2.0
        aj *= aa
        dj = gj - dj
        gj *= hs / j
    return val


def _t2(h, a, ah, m):
    """T2: phi(h) sum_i z_i, the series in 1/h^2 whose terms z_{i+1} = (v_i - (2i+1) z_i) /
    h^2 start at z_0 = P0(ah) / h, for large h."""
    hs = h * h
    naa = -a * a
    y = 1.0 / hs
    vi = a * exp(-0.5 * ah * ah) * INV_SQRT_2PI
    z = _p0(ah) / h
    val = 0.0
    i = 1.0
    top = 2.0 * m + 1.0
    while True:
        val += z
        if top <= i:
            break
        z = y * (vi - i * z)
        vi *= naa
        i += 2.0
    return val * exp(-0.5 * hs) * INV_SQRT_2PI


def _t3(h, a, ah):
    """T3: T2's series with the Chebyshev-economised coefficients _C3 (31 terms)."""
    aa = a * a
    hh = h * h
    y = 1.0 / hh
    vi = a * exp(-0.5 * ah * ah) * INV_SQRT_2PI
    zi = _p0(ah) / h
    val = 0.0
    for i in range(31):
        val += zi * _C3[i]
        zi = y * ((2.0 * i + 1.0) * zi - vi)
        vi *= aa
    return val * exp(-0.5 * hh) * INV_SQRT_2PI


def _t4(h, a, m):
    """T4: a e^(-h^2 (1 + a^2) / 2) / (2 pi) sum_i (-a^2)^i y_i, y_i = (1 - h^2 y_{i-1}) /
    (2i + 1), y_0 = 1."""
    hh = h * h
    naa = -a * a
    ai = a * exp(-0.5 * hh * (1.0 - naa)) * INV_2PI
    yi = 1.0
    val = 0.0
    i = 1.0
    top = 2.0 * m + 1.0
    while True:
        val += ai * yi
        if top <= i:
            break
        i += 2.0
        yi = (1.0 - hh * yi) / i
        ai *= naa
    return val


def _t5(h, a):
    """T5: Gauss-Legendre quadrature of the integral in x = a t, t in (0, 1)."""
    aa = a * a
    nhh = -0.5 * h * h
    val = 0.0
    for i in range(13):
        r = 1.0 + aa * _PTS5[i]
        val += _WTS5[i] * exp(nhh * r) / r
    return val * a


def _t6(h, a):
    """T6, near a = 1: Q(h)(1 - Q(h)) / 2 - r e^(-(1 - a) h^2 / (2 r)) / (2 pi), r =
    atan2(1 - a, 1 + a)."""
    normh = _q(h)
    y = 1.0 - a
    r = arctan2(y, 1.0 + a)
    val = 0.5 * normh * (1.0 - normh)
    if r != 0.0:
        val -= r * exp(-0.5 * y * h * h / r) * INV_2PI
    return val


def _gauss(h, lo, hi):
    """int_lo^hi e^(-s^2/2) / (1 + s^2/h^2) ds by the 10-point rule on panels of width
    <= 1.25 (the integrand's poles at s = +-ih lie far from them: 1e-20 relative error)."""
    n = float64(int((hi - lo) / 1.25) + 1)
    w = (hi - lo) / n
    ih2 = 1.0 / (h * h)
    total = 0.0
    k = 0.0
    while k < n:
        mid = lo + (k + 0.5) * w
        for i in range(5):
            for sgn in (-1.0, 1.0):
                s = mid + sgn * 0.5 * w * _X10[i]
                total += _W10[i] * exp(-0.5 * s * s) / (1.0 + s * s * ih2)
        k += 1.0
    return total * 0.5 * w


def _large_h(h, ah):
    """T(h, a) for h >= H_LARGE, 0 < a <= 1: in s = h x, e^(-h^2/2) / (2 pi h) int_0^ah
    e^(-s^2/2) / (1 + s^2/h^2) ds, a sum of positive terms (relative accuracy), the
    integral cut at s = 10 (e^-50 of it is left)."""
    if h > 40.0:
        return 0.0                       # below e^-800: T underflows
    hi = ah if ah < 10.0 else 10.0
    return _exp_half_square(h) * INV_2PI / h * _gauss(h, 0.0, hi)


def _dispatch(h, a, ah):
    """T(h, a) for h >= 0 and 0 <= a <= 1 (ah = a h): the method of Patefield and Tandy's
    table."""
    if h == 0.0:
        return arctan(a) * INV_2PI
    if a == 0.0:
        return 0.0
    if a == 1.0:
        return 0.5 * _q(-h) * _q(h)
    if h >= H_LARGE:
        return _large_h(h, ah)
    ih = 14
    for i in range(14):
        if h <= _H_RANGE[i]:
            ih = i
            break
    ia = 7
    for i in range(7):
        if a <= _A_RANGE[i]:
            ia = i
            break
    code = _SELECT[ia * 15 + ih]
    m = float64(_ORDER[code])
    method = _METHOD[code]
    if method == 1:
        return _t1(h, a, m)
    if method == 2:
        return _t2(h, a, ah, m)
    if method == 3:
        return _t3(h, a, ah)
    if method == 4:
        return _t4(h, a, m)
    if method == 5:
        return _t5(h, a)
    return _t6(h, a)


def owens_t(h, a):
    """Owen's T function T(h, a) (scipy.special.owens_t)."""
    h = float64(h)
    a = float64(a)
    if h != h or a != a:
        return nan
    h = fabs(h)
    fa = fabs(a)
    fah = fa * h
    if fa == inf:
        val = 0.5 * _q(h)
    elif h == inf:
        val = 0.0
    elif fa <= 1.0:
        val = _dispatch(h, fa, fah)
    elif fah <= 0.67:
        val = 0.25 - _p0(h) * _p0(fah) - _dispatch(fah, 1.0 / fa, h)
    else:
        nh = _q(h)
        nah = _q(fah)
        val = 0.5 * (nh + nah) - nh * nah - _dispatch(fah, 1.0 / fa, h)
    return -val if a < 0.0 else val


FUNCTIONS = {"owens_t": owens_t}
