"""The Bessel functions of real order that the jv, yv, iv, ive, kv, kve map rows
(``maps_special.py``) call, and their derivatives in x (the ``*_dx`` functions, one pass of
the same code each, so a row's derivative costs one evaluation).

For an order v >= 0 and 0 < x < inf, with n = floor(v + 1/2) and mu = v - n in [-1/2, 1/2):

* I and K. K_mu e^x and K_mu+1 e^x are the integral K_nu(x) = int_0^inf e^(-x cosh t)
  cosh(nu t) dt by the trapezoidal rule in t (positive terms; the integrand is analytic
  and even, so the rule converges like e^(-2 pi d / h) for a strip of half-width d: the step
  h = min(1/6, 0.5 / sqrt(x)) keeps that below 1e-18 relative for every x: at large x
  the integrand's bump has width 1 / sqrt(x), the error e^(-2 pi^2 / (h^2 x))), then the
  forward recurrence K_k+1 = K_k-1 + 2k/x K_k (stable: K grows with k). I_v is the power
  series (x/2)^v / Gamma(v + 1) sum (x^2/4)^k / (k! (v + 1)_k) (positive terms) where x^2/4
  < v + 1 or x <= 2, else the Wronskian I_v K_v+1 + I_v+1 K_v = 1/x with the ratio
  I_v+1 / I_v from its continued fraction 1 / (2(v+1)/x + 1 / (2(v+2)/x + ...)) (modified
  Lentz), all terms positive. Both carry the scaling e^-+x, so ive and kve are computed
  directly and iv, kv multiply e^+-x in two halves (no early overflow).
* J and Y. Y_mu, Y_mu+1 are Temme's series (N. M. Temme, J. Comput. Phys. 21, 1976) for x
  <= 2, with 1 / Gamma(1 +- mu) from the Taylor series of 1 / Gamma(z) at 0 (coefficients
  from mpmath at 50 digits); for x > 2, Steed's method: the continued fraction CF1 for
  J_v+1 / J_v (the sign of the unnormalised J_v counted from its denominators), the
  backward recurrence J_k-1 = 2k/x J_k - J_k+1 down to mu, and the complex continued
  fraction CF2 for (J' + iY') / (J + iY) at mu, which with the Wronskian
  J Y' - J' Y = 2 / (pi x) fixes J_mu, Y_mu, Y'_mu. Y goes up by the forward recurrence
  (stable: Y grows with k). J_v is the power series where x^2/4 < (v + 1)/2 (alternating,
  terms falling from the first: no loss beyond a digit), else the backward pass's
  normalised value. For x > max(25, v^2/2) Hankel's asymptotic expansions at orders v and
  v + 1 instead (its smallest term about e^-2x).
* Negative orders by the reflections J_-v = cos(v pi) J_v - sin(v pi) Y_v, Y_-v = sin(v pi)
  J_v + cos(v pi) Y_v, I_-v = I_v + 2/pi sin(v pi) K_v, K_-v = K_v (sin and cos of v pi
  reduced exactly: 0 at the integers and half-integers, so that no 0 * inf enters).

Special values as scipy's where it defines them: J_v and I_v at x < 0 for an integer v only
((-1)^v J_v(-x); NaN otherwise), Y and K NaN for x < 0; at x = 0 the limits (J_0 = I_0 = 1,
0 for v > 0, +-inf for a negative non-integer v signed as 1 / Gamma(v + 1); Y_v -inf for v >=
0, K_v +inf). Where scipy 1.17 gives NaN for a limit, the limit: J, Y, ive, kv, kve -> 0 and
iv -> inf at x = +inf (scipy: NaN for jv, yv, iv, kve of a non-integer order there), Y_-v(0)
= 0 at a negative half-integer order (Y_-1/2 = J_1/2; scipy: -inf), I_v(0) signed as 1 /
Gamma(v + 1) (scipy: +inf for every negative non-integer v), ive(v, 0) = iv(v, 0) (scipy:
NaN for v < 0). An infinite order: J, I, ive 0 and Y -inf at v = +inf, K, kve +inf at
v = +-inf; J, Y, I, ive NaN at v = -inf (no limit: scipy gives 0 for J and I).

A finite order beyond MAX_ORDER (1e5) in magnitude gives NaN: the recurrences take |v| steps.

As ``special.py``'s, one code serves both engines (numpy's scalar functions, IEEE results,
never a raise). Each public function calls each helper at one place (numba inlines every call
site), and its code keys only the compiled objects whose rules call it (``keys.py``).
"""
import math

from numpy import cos, cosh, exp, fabs, float64, floor, fmod, log, power, sin, sinh, sqrt

inf = float("inf")
nan = float("nan")
PI = 3.141592653589793
# the largest finite |order| computed: the recurrences take |v| steps (and past 2^53, v - 1
# is v: a loop that never ends), so a larger finite order gives NaN, not an answer
MAX_ORDER = 1e5
TINY = 1e-300
# 1 / Gamma(1 + z) = sum_k _RG[k] z^k (the Taylor coefficients of 1 / Gamma at 0 shifted by
# one; mpmath.taylor(mpmath.rgamma, 0, 28) at 50 digits): |z| <= 1/2 needs 26 terms
_RG = (1.0, 0.5772156649015329, -0.6558780715202539, -0.04200263503409524,
       0.16653861138229148, -0.04219773455554433, -0.009621971527876973, 0.0072189432466631,
       -0.0011651675918590652, -0.00021524167411495098, 0.0001280502823881162,
       -2.013485478078824e-05, -1.2504934821426706e-06, 1.133027231981696e-06,
       -2.056338416977607e-07, 6.116095104481416e-09, 5.002007644469223e-09,
       -1.18127457048702e-09, 1.0434267116911005e-10, 7.782263439905071e-12,
       -3.696805618642206e-12, 5.100370287454476e-13, -2.0583260535665066e-14,
       -5.348122539423018e-15, 1.2267786282382608e-15, -1.1812593016974588e-16,
       1.1866922547516004e-18, 1.4123806553180319e-18)


def _sinpi(v):
    """sin(pi v), the argument reduced exactly (0 at the integers)."""
    r = fmod(fabs(v), 2.0)
    if r == 0.0 or r == 1.0:
        s = 0.0
    elif r == 0.5:
        s = 1.0
    elif r == 1.5:
        s = -1.0
    elif r < 0.5:
        s = sin(PI * r)
    elif r < 1.5:
        s = sin(PI * (1.0 - r))
    else:
        s = sin(PI * (r - 2.0))
    return s if v >= 0.0 else -s


def _cospi(v):
    """cos(pi v), the argument reduced exactly (0 at the half-integers)."""
    r = fmod(fabs(v), 2.0)
    if r == 0.5 or r == 1.5:
        return 0.0
    if r == 0.0:
        return 1.0
    if r == 1.0:
        return -1.0
    if r < 0.5:
        return cos(PI * r)
    if r < 1.5:
        return -cos(PI * (1.0 - r))
    return cos(PI * (2.0 - r))


def _gamma_sign(z):
    """The sign of Gamma(z) at a non-pole z: -1 where z < 0 and floor(z) is odd."""
    return -1.0 if z < 0.0 and fmod(floor(z), 2.0) != 0.0 else 1.0


def _odd(v):
    """Whether the integer v is odd."""
    return fmod(v, 2.0) != 0.0


def _gamma1p(v):
    """Gamma(v + 1) for 0 <= v < 170: Gamma(1 + z) (z = v - n in [-1/2, 1/2], the Taylor
    series of 1 / Gamma(1 + z)) times v (v - 1) ... (z + 1), factors that are exact (v - m
    for an integer m is a multiple of v's ulp): n roundings in all (numba's math.gamma is a
    call the kernels may not make)."""
    n = floor(v + 0.5)
    z = v - n
    r = 0.0
    k = 27
    while k >= 0:
        r = r * z + _RG[k]
        k -= 1
    g = 1.0 / r
    m = 0.0
    while m < n:
        g *= v - m
        m += 1.0
    return g


def _power_over_gamma(h, v):
    """h^v / Gamma(v + 1) for h > 0, v >= 0: by pow and _gamma1p where both stay in range (a
    few ulps), else in log space."""
    if v < 170.0:
        p = power(h, v)
        if p > 1e-290 and p < 1e290:
            return p / _gamma1p(v)
    lg = float64(math.lgamma(v)) + log(v) if v >= 1.0 else float64(math.lgamma(v + 1.0))
    return exp(v * log(h) - lg)


# -- I and K --------------------------------------------------------------------------------
def _k_pair(mu, x):
    """(K_mu e^x, K_mu+1 e^x) for |mu| <= 1/2, 0 < x < inf: the trapezoidal rule on
    int_0^inf e^(-x (cosh t - 1)) cosh(nu t) dt (cosh t - 1 = 2 sinh(t/2)^2)."""
    h = 0.5 / sqrt(x)
    if h > 1.0 / 6.0:
        h = 1.0 / 6.0
    s0 = 0.5
    s1 = 0.5
    t = h
    while t < 1500.0:
        sh = sinh(0.5 * t)
        e = exp(-2.0 * x * sh * sh)
        a = e * cosh(mu * t)
        b = e * cosh((mu + 1.0) * t)
        s0 += a
        s1 += b
        if b < 1e-18 * s1 and a < 1e-18 * s0:
            break
        t += h
    return h * s0, h * s1


def _i_ratio(v, x):
    """I_v+1 / I_v for v >= 0, x > 0: the continued fraction 1 / (b1 + 1 / (b2 + ...)),
    b_j = 2 (v + j) / x, by the modified Lentz method (positive terms)."""
    f = TINY
    c = f
    d = 0.0
    j = 1.0
    while j < 1e6:
        b = 2.0 * (v + j) / x
        d = 1.0 / (b + d)
        c = b + 1.0 / c
        delta = c * d
        f *= delta
        if fabs(delta - 1.0) < 1e-16:
            break
        j += 1.0
    return f


def _k_scaled(v, x):
    """(K_v e^x, K_v+1 e^x) for v >= 0, 0 < x < inf."""
    if x > 25.0 and x > 0.5 * v * v:
        # Hankel's expansion at v and v + 1: K ~ sqrt(pi / (2 x)) e^-x sum a_k / x^k,
        # a_k = a_k-1 (4 v^2 - (2k - 1)^2) / (8k), to its smallest term (about e^-2x)
        m0 = 4.0 * v * v
        m1 = 4.0 * (v + 1.0) * (v + 1.0)
        t0 = 1.0
        t1 = 1.0
        s0 = 1.0
        s1 = 1.0
        k = 1.0
        while k < 500.0:
            w = (2.0 * k - 1.0) * (2.0 * k - 1.0)
            n0 = t0 * (m0 - w) / (8.0 * k * x)
            n1 = t1 * (m1 - w) / (8.0 * k * x)
            if fabs(n1) > fabs(t1) and k > v + 2.0:
                break
            t0 = n0
            t1 = n1
            s0 += t0
            s1 += t1
            if fabs(t0) < 1e-17 * fabs(s0) and fabs(t1) < 1e-17 * fabs(s1):
                break
            k += 1.0
        f = sqrt(PI / (2.0 * x))
        return f * s0, f * s1
    n = floor(v + 0.5)
    mu = v - n
    km, km1 = _k_pair(mu, x)
    k = mu + 1.0
    while k <= v + 0.5:                        # K_k+1 = K_k-1 + 2k/x K_k, up to K_v, K_v+1
        kn = km + 2.0 * k / x * km1
        km = km1
        km1 = kn
        k += 1.0
    return km, km1


def _ik(v, x, need_k):
    """(I_v e^-x, I_v+1 e^-x, K_v e^x, K_v+1 e^x) for v >= 0, 0 < x < inf (K: 0 when not
    ``need_k`` and the series or the expansion gives I without it)."""
    q = 0.25 * x * x
    hankel = x > 25.0 and x > 0.5 * v * v
    series = not hankel and (x <= 2.0 or q < v + 1.0)
    km = 0.0
    km1 = 0.0
    if need_k or not (hankel or series):       # one call site (numba inlines each)
        km, km1 = _k_scaled(v, x)
    if hankel:
        # Hankel's expansion: I ~ e^x / sqrt(2 pi x) sum (-1)^k a_k / x^k (the e^-x K term
        # left out: below e^-2x relative)
        m0 = 4.0 * v * v
        m1 = 4.0 * (v + 1.0) * (v + 1.0)
        t0 = 1.0
        t1 = 1.0
        s0 = 1.0
        s1 = 1.0
        k = 1.0
        while k < 500.0:
            w = (2.0 * k - 1.0) * (2.0 * k - 1.0)
            n0 = -t0 * (m0 - w) / (8.0 * k * x)
            n1 = -t1 * (m1 - w) / (8.0 * k * x)
            if fabs(n1) > fabs(t1) and k > v + 2.0:
                break
            t0 = n0
            t1 = n1
            s0 += t0
            s1 += t1
            if fabs(t0) < 1e-17 * fabs(s0) and fabs(t1) < 1e-17 * fabs(s1):
                break
            k += 1.0
        f = 1.0 / sqrt(2.0 * PI * x)
        return f * s0, f * s1, km, km1
    if series:
        # the power series of I_v and I_v+1 (positive terms), scaled by e^-x
        t0 = 1.0
        t1 = 1.0
        s0 = 1.0
        s1 = 1.0
        k = 1.0
        while k < 1000.0:
            t0 *= q / (k * (v + k))
            t1 *= q / (k * (v + 1.0 + k))
            s0 += t0
            s1 += t1
            if t0 < 1e-17 * s0 and t1 < 1e-17 * s1:
                break
            k += 1.0
        p = _power_over_gamma(0.5 * x, v) * exp(-x)
        return p * s0, p * (0.5 * x / (v + 1.0)) * s1, km, km1
    r = _i_ratio(v, x)
    iv = 1.0 / (x * (km1 + r * km))
    return iv, r * iv, km, km1


# -- J and Y --------------------------------------------------------------------------------
def _temme_y(mu, x):
    """(Y_mu, Y_mu+1) for |mu| <= 1/2, 0 < x <= 2: Temme's series."""
    m2 = mu * mu
    g2 = 0.0                                   # (1/Gamma(1-mu) + 1/Gamma(1+mu)) / 2
    g1 = 0.0                                   # (1/Gamma(1-mu) - 1/Gamma(1+mu)) / (2 mu)
    k = 26
    while k >= 0:
        g2 = g2 * m2 + _RG[k]
        g1 = g1 * m2 - _RG[k + 1]
        k -= 2
    rp = g2 - mu * g1                          # 1 / Gamma(1 + mu)
    rm = g2 + mu * g1                          # 1 / Gamma(1 - mu)
    lx = log(2.0 / x)
    s = mu * lx
    shs = sinh(s) / s if fabs(s) > 1e-4 else 1.0 + s * s / 6.0
    pm = PI * mu
    fac = pm / sin(pm) if fabs(pm) > 1e-4 else 1.0 + pm * pm / 6.0
    f = 2.0 / PI * fac * (cosh(s) * g1 + shs * lx * g2)
    e = exp(s)                                 # (x/2)^-mu
    p = e / (PI * rp)                          # (x/2)^-mu Gamma(1 + mu) / pi
    qq = 1.0 / (e * PI * rm)                   # (x/2)^mu Gamma(1 - mu) / pi
    hp = 0.5 * pm
    sc = sin(hp) / hp if fabs(hp) > 1e-8 else 1.0
    g = 0.5 * PI * PI * mu * sc * sc           # (2 / mu) sin(mu pi / 2)^2
    c = 1.0
    d = -0.25 * x * x
    sum0 = f + g * qq
    sum1 = p
    k = 1.0
    while k < 100.0:
        f = (k * f + p + qq) / (k * k - m2)
        c *= d / k
        p /= k - mu
        qq /= k + mu
        gk = f + g * qq
        t0 = c * gk
        t1 = c * (p - k * gk)
        sum0 += t0
        sum1 += t1
        if fabs(t0) < 1e-17 * fabs(sum0) and fabs(t1) < 1e-17 * fabs(sum1):
            break
        k += 1.0
    return -sum0, -2.0 / x * sum1


def _cf2(mu, x):
    """(p, q) with p + iq = (J'_mu + i Y'_mu) / (J_mu + i Y_mu), x > 2: Steed's complex
    continued fraction -1/(2x) + i + (i/x) a_1 / (b_1 + a_2 / (b_2 + ...)), a_k = (k -
    1/2)^2 - mu^2, b_k = 2 (x + k i), by the modified Lentz method in real pairs."""
    # S = b_1 + a_2 / (b_2 + ...) by Lentz from f = C = b_1 (b_1 != 0), D = 0; f = a_1 / S
    fr = 2.0 * x
    fi = 2.0
    cr = fr
    ci = fi
    dr = 0.0
    di = 0.0
    k = 2.0
    while k < 100000.0:
        a = (k - 0.5) * (k - 0.5) - mu * mu
        br = 2.0 * x
        bi = 2.0 * k
        # D = 1 / (b + a D)
        ur = br + a * dr
        ui = bi + a * di
        den = ur * ur + ui * ui
        dr = ur / den
        di = -ui / den
        # C = b + a / C
        den = cr * cr + ci * ci
        cr, ci = br + a * cr / den, bi - a * ci / den
        er = cr * dr - ci * di
        ei = cr * di + ci * dr
        fr, fi = fr * er - fi * ei, fr * ei + fi * er
        if fabs(er - 1.0) + fabs(ei) < 1e-16:
            break
        k += 1.0
    a = 0.25 - mu * mu
    den = fr * fr + fi * fi
    fr, fi = a * fr / den, -a * fi / den
    # p + iq = -1/(2x) + i + (i/x) f
    return -0.5 / x - fi / x, 1.0 + fr / x


def _jy(v, x):
    """(J_v, J_v+1, Y_v, Y_v+1) for v >= 0, 0 < x < inf."""
    if x > 25.0 and x > 0.5 * v * v:
        # Hankel's expansions at v and v + 1: J = sqrt(2/(pi x)) (P cos chi - Q sin chi),
        # Y = sqrt(2/(pi x)) (P sin chi + Q cos chi), chi = x - (v/2 + 1/4) pi
        m0 = 4.0 * v * v
        m1 = 4.0 * (v + 1.0) * (v + 1.0)
        t0 = 1.0
        t1 = 1.0
        p0 = 1.0
        p1 = 1.0
        q0 = 0.0
        q1 = 0.0
        k = 1.0
        while k < 500.0:
            w = (2.0 * k - 1.0) * (2.0 * k - 1.0)
            n0 = t0 * (m0 - w) / (8.0 * k * x)
            n1 = t1 * (m1 - w) / (8.0 * k * x)
            if fabs(n1) > fabs(t1) and k > v + 2.0:
                break
            t0 = n0
            t1 = n1
            r = k - 4.0 * floor(0.25 * k)      # i^k: Q takes the odd k, P the even, signed
            if r == 1.0:
                q0 += t0
                q1 += t1
            elif r == 2.0:
                p0 -= t0
                p1 -= t1
            elif r == 3.0:
                q0 -= t0
                q1 -= t1
            else:
                p0 += t0
                p1 += t1
            if fabs(t0) < 1e-17 and fabs(t1) < 1e-17:
                break
            k += 1.0
        sx = sin(x)
        cx = cos(x)
        a = 0.5 * v + 0.25
        ca = _cospi(a)
        sa = _sinpi(a)
        c0 = cx * ca + sx * sa                 # cos(x - a pi)
        s0 = sx * ca - cx * sa
        c1 = s0                                # chi at v + 1 is chi - pi/2
        s1 = -c0
        f = sqrt(2.0 / (PI * x))
        return (f * (p0 * c0 - q0 * s0), f * (p1 * c1 - q1 * s1),
                f * (p0 * s0 + q0 * c0), f * (p1 * s1 + q1 * c1))
    n = floor(v + 0.5)
    mu = v - n
    q = 0.25 * x * x
    series = q < 0.5 * (v + 1.0)
    ym = 0.0
    ym1 = 0.0
    jmu_scale = 0.0
    sign = 1.0
    f = 0.0
    if x <= 2.0:
        ym, ym1 = _temme_y(mu, x)
    if x > 2.0 or not series:
        # CF1: r = J_v+1 / J_v = 1 / (b1 - 1 / (b2 - ...)), b_j = 2 (v + j) / x; the sign of
        # J_v (J at a large order is positive) is the product of the denominators' signs
        f = TINY
        c = f
        d = 0.0
        sign = 1.0
        j = 1.0
        while j < 1e6:
            b = 2.0 * (v + j) / x
            a = 1.0 if j == 1.0 else -1.0
            d = b + a * d
            if d == 0.0:
                d = TINY
            d = 1.0 / d
            c = b + a / c
            if c == 0.0:
                c = TINY
            delta = c * d
            f *= delta
            if d < 0.0:
                sign = -sign
            if fabs(delta - 1.0) < 1e-16:
                break
            j += 1.0
        # the backward recurrence from (J_v, J_v+1) = (sign, sign r) down to mu, rescaled by
        # 1e-250 when it grows (scale counts the rescalings: J_v is 1e-250^scale of it)
        jc = sign
        jn = sign * f
        scale = 0.0
        k = v
        while k >= mu + 0.5:
            jm = 2.0 * k / x * jc - jn
            jn = jc
            jc = jm
            if fabs(jc) > 1e250:
                jc *= 1e-250
                jn *= 1e-250
                scale += 1.0
            k -= 1.0
        w = 2.0 / (PI * x)
        if x <= 2.0:
            # the Wronskian J_mu+1 Y_mu - J_mu Y_mu+1 = 2 / (pi x)
            cn = w / (jn * ym - jc * ym1)
        else:
            p, qq = _cf2(mu, x)
            jp = mu / x * jc - jn              # J'_mu, unnormalised
            yu = (p * jc - jp) / qq            # Y_mu, unnormalised
            cn = sqrt(w / qq / (jc * jc + yu * yu))
            ymu = cn * yu
            yp = p * ymu + qq * cn * jc        # Y'_mu
            ym = ymu
            ym1 = mu / x * ymu - yp
        jmu_scale = cn * (1e-250 ** scale if scale < 3.0 else 0.0)
    if series:
        # the power series of J_v and J_v+1: (x/2)^v / Gamma(v + 1) sum (-q)^k / (k! (v+1)_k)
        t0 = 1.0
        t1 = 1.0
        s0 = 1.0
        s1 = 1.0
        k = 1.0
        while k < 1000.0:
            t0 *= -q / (k * (v + k))
            t1 *= -q / (k * (v + 1.0 + k))
            s0 += t0
            s1 += t1
            if fabs(t0) < 1e-17 * fabs(s0) and fabs(t1) < 1e-17 * fabs(s1):
                break
            k += 1.0
        pf = _power_over_gamma(0.5 * x, v)
        jv = pf * s0
        jv1 = pf * (0.5 * x / (v + 1.0)) * s1
    else:
        jv = jmu_scale * sign
        jv1 = jmu_scale * sign * f
    # Y up from mu: Y_k+1 = 2k/x Y_k - Y_k-1
    k = mu + 1.0
    while k <= v + 0.5:
        yn = 2.0 * k / x * ym1 - ym
        ym = ym1
        ym1 = yn
        if yn == -inf:
            break
        k += 1.0
    return jv, jv1, ym, ym1


# -- the public functions -------------------------------------------------------------------
def _at_zero(v, modified):
    """J_v(0) (I_v(0) when ``modified``): 1 at v = 0, 0 for v > 0, (-1)^v 0 (J) or 0 (I) at
    a negative integer, +-inf signed as 1 / Gamma(v + 1) at a negative non-integer."""
    if v == 0.0:
        return 1.0
    if v > 0.0:
        return 0.0
    if v == floor(v):
        return -0.0 if _odd(v) and not modified else 0.0
    return _gamma_sign(v + 1.0) * inf


def _dx_at_zero(v, modified):
    """d/dx J_v at x = 0 (of I_v when ``modified``): the limits of (x/2)^v / Gamma(v + 1)'s
    derivative, 0 at v = 0 and v > 1, 1/2 at v = 1, +inf for 0 < v < 1, -inf signed as
    1 / Gamma(v + 1) at a negative non-integer; at a negative integer (-1)^v (J) or 1 (I)
    times the value at -v."""
    if v < 0.0 and v == floor(v):
        w = -v
        sg = -1.0 if _odd(w) and not modified else 1.0
        return sg * (0.5 if w == 1.0 else 0.0)
    if v < 0.0:
        return -_gamma_sign(v + 1.0) * inf
    if v == 1.0:
        return 0.5
    return inf if v > 0.0 and v < 1.0 else 0.0


def _j_common(v, x, deriv):
    """J_v(x), or its derivative in x when ``deriv`` (one code for jv and jv_dx)."""
    v = float64(v)
    x = float64(x)
    if v != v or x != x:
        return v + x
    if v == inf:
        return 0.0 if fabs(x) < inf else nan
    if v == -inf:
        return nan
    sg = 1.0
    if x < 0.0:
        if v != floor(v):
            return nan
        x = -x
        sg = -1.0 if _odd(v) else 1.0          # J_v(-x) = (-1)^v J_v(x)
        if deriv:
            sg = -sg
    if x == 0.0:
        return sg * (_dx_at_zero(v, False) if deriv else _at_zero(v, False))
    if x == inf:
        return 0.0
    if fabs(v) > MAX_ORDER and fabs(v) < inf:
        return nan
    w = fabs(v)
    j, j1, y, y1 = _jy(w, x)
    if deriv:
        j = w / x * j - j1                     # J'_w = (w/x) J_w - J_w+1, Y' the same
        y = w / x * y - y1 if fabs(y1) < inf else -y1      # (Y_w+1 overflowed: it wins)
    if v < 0.0:                                # J_-w = cos(w pi) J_w - sin(w pi) Y_w
        s = _sinpi(w)
        j = _cospi(w) * j - (s * y if s != 0.0 else 0.0)
    return sg * j


def _y_common(v, x, deriv):
    """Y_v(x), or its derivative in x when ``deriv``."""
    v = float64(v)
    x = float64(x)
    if v != v or x != x:
        return v + x
    if x < 0.0 or v == -inf:
        return nan
    if v == inf:
        return (inf if deriv else -inf) if x < inf else nan
    if fabs(v) > MAX_ORDER and fabs(v) < inf:
        return nan
    w = fabs(v)
    if x == inf:
        return 0.0
    if x == 0.0:
        if v >= 0.0:
            return inf if deriv else -inf
        c = _cospi(w)                          # Y_-w ~ cos(w pi) Y_w, or sin(w pi) J_w
        if c != 0.0:
            return (inf if c > 0.0 else -inf) if deriv else (-inf if c > 0.0 else inf)
        return _sinpi(w) * (_dx_at_zero(w, False) if deriv else 0.0)
    j, j1, y, y1 = _jy(w, x)
    if deriv:
        j = w / x * j - j1
        y = w / x * y - y1 if fabs(y1) < inf else -y1
    if v < 0.0:                                # Y_-w = sin(w pi) J_w + cos(w pi) Y_w
        c = _cospi(w)
        y = _sinpi(w) * j + (c * y if c != 0.0 else 0.0)
    return y


def _i_common(v, x, deriv, scaled):
    """I_v(x), or its derivative in x when ``deriv``; times e^-|x| when ``scaled``."""
    v = float64(v)
    x = float64(x)
    if v != v or x != x:
        return v + x
    if v == inf:
        return 0.0 if fabs(x) < inf else nan
    if v == -inf:
        return nan
    sg = 1.0
    if x < 0.0:
        if v != floor(v):
            return nan
        x = -x
        sg = -1.0 if _odd(v) else 1.0          # I_v(-x) = (-1)^v I_v(x)
        if deriv:
            sg = -sg
    if x == 0.0:                               # (ive's kink at 0: sign(0) = 0, I'(0))
        return sg * (_dx_at_zero(v, True) if deriv else _at_zero(v, True))
    if x == inf:
        return sg * (0.0 if scaled else inf)
    if fabs(v) > MAX_ORDER and fabs(v) < inf:
        return nan
    w = fabs(v)
    s = _sinpi(w) if v < 0.0 else 0.0
    i, i1, k, k1 = _ik(w, x, s != 0.0)
    if deriv:
        di = w / x * i + i1                    # I'_w = (w/x) I_w + I_w+1
        dk = w / x * k - k1 if k1 < inf else -k1   # K'_w = (w/x) K_w - K_w+1
        if scaled:                             # d/dx (f e^-x) = (f' - f) e^-x
            di -= i
            dk -= k
        i = di
        k = dk
    # I_-w = I_w + 2/pi sin(w pi) K_w, each scaled: I e^-x and K e^x
    if scaled:
        out = i + (0.6366197723675814 * s * k * exp(-2.0 * x) if s != 0.0 else 0.0)
    else:
        h = exp(0.5 * x)
        out = (i * h) * h + (0.6366197723675814 * s * ((k / h) / h) if s != 0.0 else 0.0)
    return sg * out


def _k_common(v, x, deriv, scaled):
    """K_v(x), or its derivative in x when ``deriv``; times e^x when ``scaled``."""
    v = float64(v)
    x = float64(x)
    if v != v or x != x:
        return v + x
    if x < 0.0:
        return nan
    if fabs(v) == inf:
        return (-inf if deriv else inf) if x < inf else nan
    if x == 0.0:
        return -inf if deriv else inf
    if x == inf:
        return 0.0
    if fabs(v) > MAX_ORDER and fabs(v) < inf:
        return nan
    w = fabs(v)
    k, k1 = _k_scaled(w, x)
    if deriv:
        dk = w / x * k - k1 if k1 < inf else -k1   # K'_w = (w/x) K_w - K_w+1
        k = dk + k if scaled and dk > -inf else dk   # d/dx (K e^x) = (K' + K) e^x
    if scaled:
        return k
    h = exp(-0.5 * x)
    return (k * h) * h


def jv(v, x):
    """J_v(x), the Bessel function of the first kind of real order v (scipy.special.jv)."""
    return _j_common(v, x, False)


def jv_dx(v, x):
    """d/dx J_v(x) = (J_v-1(x) - J_v+1(x)) / 2 (scipy.special.jvp)."""
    return _j_common(v, x, True)


def yv(v, x):
    """Y_v(x), the Bessel function of the second kind of real order v (scipy.special.yv)."""
    return _y_common(v, x, False)


def yv_dx(v, x):
    """d/dx Y_v(x) = (Y_v-1(x) - Y_v+1(x)) / 2 (scipy.special.yvp)."""
    return _y_common(v, x, True)


def iv(v, x):
    """I_v(x), the modified Bessel function of the first kind of real order v
    (scipy.special.iv)."""
    return _i_common(v, x, False, False)


def iv_dx(v, x):
    """d/dx I_v(x) = (I_v-1(x) + I_v+1(x)) / 2 (scipy.special.ivp)."""
    return _i_common(v, x, True, False)


def ive(v, x):
    """I_v(x) e^-|x| (scipy.special.ive)."""
    return _i_common(v, x, False, True)


def ive_dx(v, x):
    """d/dx (I_v(x) e^-|x|) = (I'_v(x) - sign(x) I_v(x)) e^-|x| (0 for sign(0))."""
    return _i_common(v, x, True, True)


def kv(v, x):
    """K_v(x), the modified Bessel function of the second kind of real order v
    (scipy.special.kv)."""
    return _k_common(v, x, False, False)


def kv_dx(v, x):
    """d/dx K_v(x) = -(K_v-1(x) + K_v+1(x)) / 2 (scipy.special.kvp)."""
    return _k_common(v, x, True, False)


def kve(v, x):
    """K_v(x) e^x (scipy.special.kve)."""
    return _k_common(v, x, False, True)


def kve_dx(v, x):
    """d/dx (K_v(x) e^x) = (K'_v(x) + K_v(x)) e^x."""
    return _k_common(v, x, True, True)


# the functions the rules call (kernels/rules.py: SPECIAL), by the name a rule uses
FUNCTIONS = {"jv": jv, "jv_dx": jv_dx, "yv": yv, "yv_dx": yv_dx, "iv": iv, "iv_dx": iv_dx,
             "ive": ive, "ive_dx": ive_dx, "kv": kv, "kv_dx": kv_dx, "kve": kve,
             "kve_dx": kve_dx}
