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
from numpy import copysign, cos, fabs, float64, log, sin, sqrt

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


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"j0": j0, "j1": j1, "y0": y0, "y1": y1}
