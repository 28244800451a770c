"""The Bessel functions of integer order that the Bessel map rows (``maps_special.py``)
call: j0, j1, y0, y1 (scipy.special's), each to float64 accuracy in the absolute sense of
scipy's own (about 1e-16 of the function's scale; relative digits are lost only next to the
zeros, as in every double-precision code). Checked against scipy.special in
tests/test_scipy.py.

Three ranges, the same for all four functions:

* |x| < 1: the power series (q = x^2 / 4, every term below the one before):
  J0 = sum (-q)^k / k!^2, J1 = x/2 sum (-q)^k / (k! (k+1)!),
  Y0 = 2/pi (L J0 - sum_{k>=1} H_k (-q)^k / k!^2), L = log(x/2) + euler,
  Y1 = -2/(pi x) + 2/pi log(x/2) J1 - x/(2 pi) sum (psi(k+1) + psi(k+2)) (-q)^k / (k! (k+1)!);
* 1 <= |x| <= 25: Miller's backward recurrence J_{n-1} = 2n/x J_n - J_{n+1} from an even
  order m ~ 1.2 x + 40, normalised by 1 = J0 + 2 sum J_2k; the same pass sums the Neumann
  series Y0 = 2/pi (L J0 - 2 sum_{k>=1} (-1)^k J_2k / k) and its derivative
  Y1 = 2/pi (L J1 - J0 / x + sum_{k>=1} (-1)^k (J_{2k-1} - J_{2k+1}) / k), whose terms are
  bounded by 1 (no cancellation beyond the functions' own scale);
* |x| > 25: Hankel's asymptotic expansion, J = sqrt(2 / (pi x)) (P cos chi - Q sin chi),
  Y = sqrt(2 / (pi x)) (P sin chi + Q cos chi), chi = x - pi/4 (order 0) or x - 3pi/4 (order
  1) taken as (cos x +- sin x) / sqrt 2 (libm reduces x exactly); its smallest term is about
  e^-2x, below 1e-21 from 25 on.

As ``special.py``'s, one code serves both engines (numpy's scalar functions, IEEE results,
never a raise); the rules call the functions by the names in ``FUNCTIONS``. The code is part
of the key of the compiled objects that call it and of no other (``keys.py``).
"""
import math

from numpy import copysign, cos, exp, fabs, float64, log, sin, sqrt

inf = float("inf")
nan = float("nan")
PI = 3.141592653589793
EULER = 0.5772156649015329


def _series(x):
    """(J0, J1, Y0, Y1) for 0 < x < 1, the power series (18 terms reach 1e-17 at x = 1)."""
    q = 0.25 * x * x
    t = 1.0                      # (-q)^k / k!^2
    u = 1.0                      # (-q)^k / (k! (k+1)!)
    h = 0.0                      # H_k
    j0 = 1.0
    s1 = 1.0
    y0 = 0.0
    p = -2.0 * EULER + 1.0       # psi(k+1) + psi(k+2) = -2 euler + H_k + H_{k+1}
    y1 = p
    k = 1.0
    while k < 30.0:
        t *= -q / (k * k)
        u *= -q / (k * (k + 1.0))
        h += 1.0 / k
        j0 += t
        s1 += u
        y0 += h * t
        p = -2.0 * EULER + 2.0 * h + 1.0 / (k + 1.0)
        y1 += p * u
        if fabs(t) < 1e-18:
            break
        k += 1.0
    j1 = 0.5 * x * s1
    lx = log(0.5 * x)
    y0v = 2.0 / PI * ((lx + EULER) * j0 - y0)
    y1v = -2.0 / (PI * x) + 2.0 / PI * lx * j1 - x / (2.0 * PI) * y1
    return j0, j1, y0v, y1v


def _miller(x):
    """(J0, J1, Y0, Y1) for 1 <= x <= 25: Miller's backward recurrence and the Neumann
    series of Y0, Y1 summed in the same pass (rescaled by 1e-250 when the values grow)."""
    m = 2.0 * float64(int(0.6 * x + 20.0))
    jp = 0.0                     # J_{n+1}, unnormalised
    jn = 1e-30                   # J_n
    norm = 0.0
    s0 = 0.0                     # sum_{k>=1} (-1)^k J_2k / k
    s1 = 0.0                     # sum_{j>=1} (-1)^(j+1) (1/j + 1/(j+1)) J_{2j+1}
    j1 = 0.0
    n = m
    while n > 0.0:
        # the terms of J_n, n >= 1
        if n == 1.0:
            j1 = jn
        else:
            half = 0.5 * n
            if half == float64(int(half)):               # n even
                sign = 1.0 if float64(int(0.5 * half)) * 2.0 == half else -1.0
                norm += 2.0 * jn
                s0 += sign * jn / half
            else:                                        # n = 2j + 1, j >= 1
                j = 0.5 * (n - 1.0)
                sign = 1.0 if float64(int(0.5 * j)) * 2.0 != j else -1.0
                s1 += sign * (1.0 / j + 1.0 / (j + 1.0)) * jn
        jm = 2.0 * n / x * jn - jp
        jp = jn
        jn = jm
        if fabs(jn) > 1e250:
            jn *= 1e-250
            jp *= 1e-250
            norm *= 1e-250
            s0 *= 1e-250
            s1 *= 1e-250
            j1 *= 1e-250
        n -= 1.0
    norm += jn                   # J_0
    j0 = jn / norm
    j1 = j1 / norm
    s0 = s0 / norm
    s1 = (s1 - j1 * norm) / norm
    lx = log(0.5 * x) + EULER
    y0 = 2.0 / PI * (lx * j0 - 2.0 * s0)
    y1 = 2.0 / PI * (lx * j1 - j0 / x + s1)
    return j0, j1, y0, y1


def _hankel(x, nu):
    """(J_nu, Y_nu) for x > 25, nu = 0 or 1: Hankel's expansion, P and Q summed until a term
    is below 1e-17 (or stops falling)."""
    mu = 4.0 * nu * nu
    t = 1.0
    p = 1.0
    q = 0.0
    k = 1.0
    while k < 80.0:
        nt = t * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x)
        if fabs(nt) > fabs(t):
            break
        t = nt
        r = k - 4.0 * float64(int(0.25 * k))               # k mod 4
        if r == 1.0:
            q += t
        elif r == 2.0:
            p -= t
        elif r == 3.0:
            q -= t
        else:
            p += t
        if fabs(t) < 1e-17:
            break
        k += 1.0
    s = sin(x)
    c = cos(x)
    if nu == 0.0:
        cc = (c + s) * 0.7071067811865476          # cos(x - pi/4)
        ss = (s - c) * 0.7071067811865476          # sin(x - pi/4)
    else:
        cc = (s - c) * 0.7071067811865476          # cos(x - 3 pi/4)
        ss = -(s + c) * 0.7071067811865476         # sin(x - 3 pi/4)
    f = sqrt(2.0 / (PI * x))
    return f * (p * cc - q * ss), f * (p * ss + q * cc)


def j0(x):
    """The Bessel function of the first kind of order 0 (scipy.special.j0); even; 0 at
    +-inf."""
    x = fabs(float64(x))
    if x != x:
        return x
    if x == inf:
        return 0.0
    if x < 1.0:
        return _series(x)[0] if x > 0.0 else 1.0
    if x <= 25.0:
        return _miller(x)[0]
    return _hankel(x, 0.0)[0]


def j1(x):
    """The Bessel function of the first kind of order 1 (scipy.special.j1); odd (-0 at -0,
    +-0 at +-inf)."""
    x = float64(x)
    ax = fabs(x)
    if ax != ax:
        return x
    if ax == inf:
        return copysign(0.0, x)
    if ax < 1.0:
        v = _series(ax)[1] if ax > 0.0 else 0.0
    elif ax <= 25.0:
        v = _miller(ax)[1]
    else:
        v = _hankel(ax, 1.0)[0]
    return v if copysign(1.0, x) > 0.0 else -v


def y0(x):
    """The Bessel function of the second kind of order 0 (scipy.special.y0): -inf at +-0,
    NaN for x < 0, 0 at +inf."""
    x = float64(x)
    if x != x:
        return x
    if x == 0.0:
        return -inf
    if x < 0.0:
        return nan
    if x == inf:
        return 0.0
    if x < 1.0:
        return _series(x)[2]
    if x <= 25.0:
        return _miller(x)[2]
    return _hankel(x, 0.0)[1]


def y1(x):
    """The Bessel function of the second kind of order 1 (scipy.special.y1): -inf at +-0,
    NaN for x < 0, 0 at +inf."""
    x = float64(x)
    if x != x:
        return x
    if x == 0.0:
        return -inf
    if x < 0.0:
        return nan
    if x == inf:
        return 0.0
    if x < 1.0:
        return _series(x)[3]
    if x <= 25.0:
        return _miller(x)[3]
    return _hankel(x, 1.0)[1]


def _jn_series(n, x):
    """J_n(x) for n >= 2 and x^2 / 4 < n + 1: (x/2)^n / n! sum (-q)^k / (k! (n+1)_k), the
    first term taken in log space (no overflow of n!, an underflow to 0 where J_n is below
    the subnormals); the terms fall from the first on."""
    q = 0.25 * x * x
    t = 1.0
    s = 1.0
    k = 1.0
    while k < 200.0:
        t *= -q / (k * (n + k))
        s += t
        if fabs(t) < 1e-18 * fabs(s):
            break
        k += 1.0
    return exp(n * log(0.5 * x) - float64(math.lgamma(n + 1.0))) * s


def _jn_miller(n, x):
    """J_n(x) for n >= 2 and 2 sqrt(n + 1) <= x <= n: Miller's backward recurrence from an
    even order m ~ n + sqrt(160 n) + x / 4, normalised by 1 = J0 + 2 sum J_2k."""
    m = 2.0 * float64(int(0.5 * (n + sqrt(160.0 * n) + 0.25 * x))) + 2.0
    jp = 0.0
    jc = 1e-30
    norm = 0.0
    out = 0.0
    k = m
    while k > 0.0:
        if k == n:
            out = jc
        half = 0.5 * k
        if half == float64(int(half)):
            norm += 2.0 * jc
        jm = 2.0 * k / x * jc - jp
        jp = jc
        jc = jm
        if fabs(jc) > 1e250:
            jc *= 1e-250
            jp *= 1e-250
            norm *= 1e-250
            out *= 1e-250
        k -= 1.0
    return out / (norm + jc)


def jn(n, x):
    """J_n(x), the Bessel function of the first kind of integer order n (scipy.special.jn at
    an integer n; NaN for a non-integer n, 0 at an infinite one). J_-n = (-1)^n J_n,
    J_n(-x) = (-1)^n J_n(x). Orders 0 and 1 are j0 and j1; for x > n the forward recurrence
    J_{k+1} = 2k/x J_k - J_{k-1} from them (stable while k < x); below, the series or
    Miller's recurrence."""
    n = float64(n)
    x = float64(x)
    if n != n or x != x:
        return n + x
    if fabs(n) == inf:                       # the limit in n (scipy's)
        return 0.0 if fabs(x) < inf else nan
    if n != float64(int(n)):
        return nan
    sign = 1.0
    if n < 0.0:
        n = -n
        if float64(int(0.5 * n)) * 2.0 != n:
            sign = -sign
    if x < 0.0:
        x = -x
        if float64(int(0.5 * n)) * 2.0 != n:
            sign = -sign
    if x == inf:
        return 0.0
    if x == 0.0 and n >= 2.0:
        return sign * 0.0
    # j0 and j1 are called at one place each: every call site is compiled (inlined) again,
    # and this function's own derivative rule calls it twice
    if n < 2.0 or x > n:
        a = j0(x)
        b = j1(x)
        if n == 0.0:
            return a
        k = 1.0
        while k < n:
            c = 2.0 * k / x * b - a
            a = b
            b = c
            k += 1.0
        return sign * b
    if 0.25 * x * x < n + 1.0:
        return sign * _jn_series(n, x)
    return sign * _jn_miller(n, x)


def yn(n, x):
    """Y_n(x), the Bessel function of the second kind of integer order n (scipy.special.yn;
    NaN for a non-integer n, -inf at an infinite one): the forward recurrence
    Y_{k+1} = 2k/x Y_k - Y_{k-1} from y0 and y1 (stable: Y_n grows with n),
    Y_-n = (-1)^n Y_n; -inf at 0 (+inf for a negative odd n), NaN for x < 0."""
    n = float64(n)
    x = float64(x)
    if n != n or x != x:
        return n + x
    if fabs(n) == inf:                       # the limit in n (scipy's)
        return -inf if x >= 0.0 and x < inf else nan
    if n != float64(int(n)):
        return nan
    sign = 1.0
    if n < 0.0:
        n = -n
        if float64(int(0.5 * n)) * 2.0 != n:
            sign = -1.0
    if x < 0.0:
        return nan
    if x == 0.0:
        return -inf if n == 0.0 else -sign * inf
    if x == inf:
        return 0.0
    a = y0(x)                                # one call site each (see jn)
    if n == 0.0:
        return a
    b = y1(x)
    k = 1.0
    while k < n:
        c = 2.0 * k / x * b - a
        a = b
        b = c
        if b == -inf:
            break
        k += 1.0
    return sign * b


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"j0": j0, "j1": j1, "y0": y0, "y1": y1, "jn": jn, "yn": yn}
