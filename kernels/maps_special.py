"""The map rows of scipy.special's functions that no composition of other rows computes to
float64 accuracy (burnumba.scipy.special builds the rest from rows): log|Gamma|, the
polygamma functions, erfc, erfinv, ndtri, log_ndtr, i0 and i1, and the Bessel functions
j0, j1, y0, y1. Their scalar functions are in ``special.py`` and ``special_bessel.py`` (rules
call them by the names in ``rules.SPECIAL``); each derivative is another of these rows, so
derivatives of any order stay rows:

    gammaln' = digamma = polygamma(0, .),  polygamma(n, .)' = polygamma(n + 1, .),
    i0' = i1,  i1' = i0 - i1 / a (1/2 at 0),
    j0' = -j1,  j1' = j0 - j1 / a (1/2 at 0),  y0' = -y1,  y1' = y0 - y1 / a,
    d/dx jn(n, x) = (jn(n - 1, x) - jn(n + 1, x)) / 2, the same for yn (+-inf at x = 0).

jn(n, x) and yn(n, x), of an integer order n (NaN for another), are binary rows whose order
n is ``refused`` (no derivative), as gammainc_da's a below.

The incomplete gamma functions gammainc(a, x) and gammaincc(a, x) (``special_gamma.py``)
are binary rows whose derivative in x is +-x^(a-1) e^-x / Gamma(a) and in a +-dP/da, the
row gammainc_da(a, x) (as JAX's igamma_grad_a; autograd has none): a series or a
continued fraction carried in forward mode (``special_gamma.py``). That row's own
derivative in x is d/da of the density, x^(a-1) e^-x / Gamma(a) (log x - psi(a)); its
derivative in a (P's second in a) is ``refused``: differentiating it is an error that names
it.

Their inverses in x, gammaincinv(a, p) and gammainccinv(a, q), are binary rows whose
derivative is the reciprocal slope, +-Gamma(a) e^x x^(1-a) at the output x, and in a, by
the implicit function theorem at the output x, -(dP/da) / (dP/dx) for both (P(a, x) = p and
Q(a, x) = q fix the same x).

Owen's T function owens_t(h, a) (``special_owens.py``) is a binary row whose derivatives
are closed forms of rows: dT/dh = -phi(h) erf(a h / sqrt 2) / 2 and dT/da = e^(-h^2 (1 +
a^2) / 2) / (2 pi (1 + a^2)) (scipy.stats.skewnorm's cdf is Phi(z) - 2 T(z, a)).

The Bessel functions of real order jv, yv, iv, kv and the scaled ive = iv e^-|x|, kve = kv
e^x (``special_bessel_real.py``) are binary rows whose order v is ``refused`` (no derivative
in v); each derivative in x is one function of the same module (one pass of the same code),
and on traced values the recurrences of the rows themselves (burnumba.scipy.special):

    jv' = (jv(v - 1, .) - jv(v + 1, .)) / 2, the same for yv,  iv' = (iv(v - 1, .) + iv(v + 1,
    .)) / 2,  kv' = -(kv(v - 1, .) + kv(v + 1, .)) / 2,  ive' = iv' e^-|x| - sign(x) ive,
    kve' = kv' e^x + kve.

Values follow scipy.special (the exceptions are in ``ieee_cases.py``), gradients JAX.
"""
from math import copysign, erf, erfc, exp, fabs, fmod, log

from .row import Op
from .special import erfinv, i0, i1, lgamma, log_ndtr, ndtri, polygamma  # noqa: F401
from .special_bessel import j0, j1, jn, y0, y1, yn  # noqa: F401
from .special_gamma import (gammainc, gammainc_da, gammaincc, gammainccinv,  # noqa: F401
                            gammaincinv)
from .special_bessel_real import (iv, iv_dx, ive, ive_dx, jv, jv_dx, kv,  # noqa: F401
                                  kv_dx, kve, kve_dx, yv, yv_dx)
from .special_owens import owens_t  # noqa: F401

nan = float("nan")
inf = float("inf")


# log_ndtr' = phi(a) / Phi(a) = exp(-a^2 / 2 - y) / sqrt(2 pi); below a = -38, where that
# difference of two large numbers loses digits, -a / S(a) with S the asymptotic series of
# Phi(a) a / phi(a) = 1 - 1/a^2 + 3/a^4 - ... (7 terms: the next is below 1e-17 there). Both
# branches are guarded, so that a traced second derivative never meets inf - inf; NaN takes
# the first (NaN through y).
def _log_ndtr_da(a, y, g):
    near = a if a > -38.0 else -38.0
    far = a if a < -38.0 else -38.0
    z = 1.0 / (far * far)
    s = 1.0 - z * (1.0 - z * (3.0 - z * (15.0 - z * (105.0 - z * (945.0 - z * 10395.0)))))
    return g * (exp(-0.5 * near * near - y) * 0.3989422804014327 if a > -38.0 or a != a
                else -far / s)


def _i1_da(a, y, g):
    finite = fabs(a) >= 1e-150 and fabs(a) < inf
    q = y / (a if finite else 1.0)
    return g * (i0(a) - (q if finite else (0.5 if fabs(a) < 1e-150 else 0.0)))


# j1' = j0 - j1 / a: 1/2 at 0 (the limit) and below |a| = 1e-150, where j1(a) / a = 1/2 -
# a^2/16 is 1/2 to rounding but j1(a) itself is subnormal (5e-324 gave 1, not 1/2); 0 at
# +-inf (both terms vanish); the division guarded (traced derivatives)
def _j1_da(a, y, g):
    finite = fabs(a) >= 1e-150 and fabs(a) < inf
    q = y / (a if finite else 1.0)
    return g * (j0(a) - (q if finite else (0.5 if fabs(a) < 1e-150 else 0.0)))


# y1' = y0 - y1 / a for a > 0: +inf at 0 (y1 ~ -2 / (pi a)), 0 at +inf, NaN below 0 (y0's)
def _y1_da(a, y, g):
    finite = a != 0.0 and fabs(a) < inf
    q = y / (a if finite else 1.0)
    return g * (y0(a) - q if finite else (inf if a == 0.0 else y0(a)))


# d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), in log space: exp((a - 1) log x - x - lgamma(a)).
# Its limits: at x = 0, 1 for a = 1 (where (a - 1) log x would be 0 * -inf), +inf below 1
# and 0 above; 0 at x = +inf and at a = +inf (where the exponent would be inf - inf); 0 for
# a = 0 (P(0, x) = 1 for x > 0: lgamma(0) = inf); NaN where P is NaN (a < 0, x < 0, a = x =
# 0, a = x = inf). (autograd
# writes g exp(-x) x^(a-1) / gamma(a), the same numbers; JAX gives NaN at a = 1, x = 0.)
def _gammainc_db(a, b, g):
    t = (a - 1.0) * log(b) if a != 1.0 else 0.0
    d = exp(t - b - lgamma(a)) if b < inf and a < inf else 0.0
    return g * (d if a >= 0.0 and b >= 0.0 and (a < inf or b < inf) else nan)


def _gammaincc_db(a, b, g):
    t = (a - 1.0) * log(b) if a != 1.0 else 0.0
    d = exp(t - b - lgamma(a)) if b < inf and a < inf else 0.0
    return -g * (d if a >= 0.0 and b >= 0.0 and (a < inf or b < inf) else nan)


# d/dp gammaincinv(a, p) = 1 / P'(a, x) = Gamma(a) e^x x^(1-a) at the output x = y (its limits
# at p = 0: inf for a > 1, 1 for a = 1, 0 for a < 1; inf at p = 1, where e^x wins, so the
# log is left out there: no inf - inf); gammainccinv's is its negative
def _gammaincinv_db(a, y, g):
    t = (1.0 - a) * log(y) if a != 1.0 and y < inf else 0.0
    return g * exp(lgamma(a) + y + t)


def _gammainccinv_db(a, y, g):
    t = (1.0 - a) * log(y) if a != 1.0 and y < inf else 0.0
    return -g * exp(lgamma(a) + y + t)


# d/da of either inverse, by the implicit function theorem at the output x = y: P(a, x) = p
# (or Q(a, x) = q, the same x) gives dx/da = -(dP/da) / (dP/dx) = -gammainc_da(a, x) Gamma(a)
# e^x x^(1-a). Its limits: 0 at x = 0 (p = 0: x = 0 for every a > 0), +inf at x = inf (p =
# 1, where x ~ log x grows); NaN for a NaN or a = 0 (the inverse is NaN nearby). The operands
# of the logs guarded (traced derivatives).
def _gammaincinv_da(a, y, g):
    inside = y > 0.0 and y < inf
    yi = y if inside else 1.0
    t = (1.0 - a) * log(yi) if a != 1.0 else 0.0
    s = -gammainc_da(a, yi) * exp(lgamma(a) + yi + t)
    edge = (0.0 if y == 0.0 else (inf if y == inf else nan)) if a > 0.0 else nan
    return g * (s if inside else edge)


# d/dx dP/da = d/da of the density x^(a-1) e^-x / Gamma(a), written with 1 / Gamma(a) = a /
# Gamma(a + 1) so that a = 0 is no pole: D (1 + a (log x - psi(a + 1))), D = x^(a-1) e^-x /
# Gamma(a + 1) (e^-x / x at a = 0, the derivative of -E1(x)). Its limits: at x = 0, 0 for a
# > 1 and -inf for 0 < a <= 1 (the density's log x); 0 at x = inf and a = inf; NaN where P
# is (a < 0, x < 0, a = x = 0, a = x = inf). Logs and lgamma are taken of guarded operands,
# so that a traced second derivative never meets inf - inf or 0 * inf.
def _gammainc_da_db(a, b, g):
    inside = b > 0.0 and b < inf and a < inf
    lb = log(b) if inside else 1.0
    ai = a if inside else 1.0
    t = (ai - 1.0) * lb if ai != 1.0 else 0.0
    d = exp(t - b - lgamma(ai + 1.0)) * (1.0 + ai * (lb - polygamma(0.0, ai + 1.0)))
    edge = 0.0 if a > 1.0 or b == inf or a == inf else -inf
    ok = a >= 0.0 and b >= 0.0 and (a < inf or b < inf) and (a > 0.0 or b > 0.0)
    return g * ((d if inside else edge) if ok else nan)


# d/dx yn(n, x) = (yn(n - 1, x) - yn(n + 1, x)) / 2; at x = 0 (where that is -inf + inf)
# the limit: +inf for n >= 0 or even, -inf for a negative odd n (a constant of n alone, so
# that a traced second derivative never multiplies inf by the 0 of the unused branch)
def _yn_db(a, b, g):
    return g * ((yn(a - 1.0, b) - yn(a + 1.0, b)) * 0.5 if b != 0.0 else (
        inf if a >= 0.0 or fmod(a, 2.0) == 0.0 else -inf))


# Owen's T's derivatives, with h = a and a = b: dT/dh = -phi(h) erf(a h / sqrt 2) / 2 and
# dT/da = exp(-h^2 / 2 - (a h)^2 / 2) / (2 pi (1 + a^2)). The factors of the product a h are
# held below 1e300 in size (NaN kept), so that h = 0 with a = +-inf, or h = +-inf with a = 0,
# gives a finite product (their limits: 0 for dT/dh, 1 / (2 pi (1 + a^2)) for dT/da) rather
# than 0 * inf; the rest of each formula has the limits at +-inf by itself.
def _owens_t_da(a, b, g):
    hi = a if not fabs(a) > 1e300 else copysign(1e300, a)
    ai = b if not fabs(b) > 1e300 else copysign(1e300, b)
    return -g * 0.19947114020071635 * exp(-0.5 * a * a) * erf(0.7071067811865476 * (hi * ai))


def _owens_t_db(a, b, g):
    hi = a if not fabs(a) > 1e300 else copysign(1e300, a)
    ai = b if not fabs(b) > 1e300 else copysign(1e300, b)
    p = hi * ai
    return g * 0.15915494309189535 * exp(-0.5 * a * a - 0.5 * p * p) / (1.0 + b * b)


ROWS = (
    # log |Gamma(a)|; its derivative digamma is polygamma with n = 0
    Op("gammaln", 1, "map", lambda a: lgamma(a), da=lambda a, g: g * polygamma(0.0, a),
       domain=((0.2, 6.0),), doc="log |Gamma(a)| (scipy.special.gammaln)", opcode=102),
    # psi^(c)(a) for the integer order c >= 0 in the immediate (c = 0: digamma)
    Op("polygamma", 1, "map", lambda a, c: polygamma(c, a),
       da=lambda a, c, g: g * polygamma(c + 1.0, a), domain=((0.2, 6.0),),
       doc="psi^(c)(a), the c-th derivative of digamma, the integer c >= 0 the immediate",
       opcode=103),
    Op("erfc", 1, "map", lambda a: erfc(a), da=lambda a, g: -g * 1.1283791670955126 * exp(-a * a),
       opcode=104),
    # erfinv' = sqrt(pi) / 2 exp(y^2); ndtri' = sqrt(2 pi) exp(y^2 / 2)
    Op("erfinv", 1, "map", lambda a: erfinv(a), da=lambda y, g: g * 0.886226925452758 * exp(y * y),
       domain=((-0.95, 0.95),), doc="the inverse of erf (scipy.special.erfinv)", opcode=105),
    Op("ndtri", 1, "map", lambda a: ndtri(a),
       da=lambda y, g: g * 2.5066282746310002 * exp(0.5 * y * y), domain=((0.02, 0.98),),
       doc="the standard normal quantile (scipy.special.ndtri, norm.ppf)", opcode=106),
    Op("log_ndtr", 1, "map", lambda a: log_ndtr(a), da=_log_ndtr_da, domain=((-8.0, 8.0),),
       doc="log of the standard normal CDF (scipy.special.log_ndtr)", opcode=107),
    Op("i0", 1, "map", lambda a: i0(a), da=lambda a, g: g * i1(a),
       doc="the modified Bessel function of order 0 (scipy.special.i0)", opcode=108),
    # i1' = i0 - i1 / a, whose limit is 1/2 at 0 (and below |a| = 1e-150, as j1's) and +inf
    # at +-inf (i1 / a -> inf more slowly than i0); the division guarded (traced derivatives)
    # (random points avoid the subnormals, where autograd's i1' = i0 - i1 / x, the tests'
    # reference, is NaN: the row gives the limit 1/2 there, its IEEE cases check it)
    Op("i1", 1, "map", lambda a: i1(a), da=_i1_da, avoid="abs(a) < 1e-150",
       doc="the modified Bessel function of order 1 (scipy.special.i1)", opcode=109),
    # the Bessel functions of orders 0 and 1 (scipy.special.j0, j1, y0, y1); y0 and y1 are
    # -inf at 0 and NaN below, as scipy's
    Op("j0", 1, "map", lambda a: j0(a), da=lambda a, g: -g * j1(a), domain=((-12.0, 12.0),),
       doc="the Bessel function of the first kind of order 0 (scipy.special.j0)", opcode=110),
    Op("j1", 1, "map", lambda a: j1(a), da=_j1_da, domain=((-12.0, 12.0),),
       doc="the Bessel function of the first kind of order 1 (scipy.special.j1)", opcode=111),
    Op("y0", 1, "map", lambda a: y0(a), da=lambda a, g: -g * y1(a), domain=((0.2, 12.0),),
       doc="the Bessel function of the second kind of order 0 (scipy.special.y0)", opcode=112),
    Op("y1", 1, "map", lambda a: y1(a), da=_y1_da, domain=((0.2, 12.0),),
       doc="the Bessel function of the second kind of order 1 (scipy.special.y1)", opcode=113),
    # the regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x)
    # (scipy.special.gammainc, gammaincc); d/da = +-gammainc_da(a, x), as JAX
    Op("gammainc", 2, "map", lambda a, b: gammainc(a, b),
       da=lambda a, b, g: g * gammainc_da(a, b), db=_gammainc_db,
       domain=((0.3, 6.0), (0.05, 10.0)),
       doc="the regularized lower incomplete gamma function P(a, x) (scipy.special.gammainc)",
       opcode=114),
    Op("gammaincc", 2, "map", lambda a, b: gammaincc(a, b),
       da=lambda a, b, g: -g * gammainc_da(a, b), db=_gammaincc_db,
       domain=((0.3, 6.0), (0.05, 10.0)),
       doc="the regularized upper incomplete gamma function Q(a, x) (scipy.special.gammaincc)",
       opcode=115),
    # the Bessel functions of integer order n (the first operand, refused: no derivative);
    # the tests sample n = 3 and 2 (their domains), x in the rows' ranges
    Op("jn", 2, "map", lambda a, b: jn(a, b),
       db=lambda a, b, g: g * ((jn(a - 1.0, b) - jn(a + 1.0, b)) * 0.5),
       domain=((3.0, 3.0), (-12.0, 12.0)), refused=("n",),
       doc="the Bessel function of the first kind of integer order n (scipy.special.jn)",
       opcode=116),
    Op("yn", 2, "map", lambda a, b: yn(a, b), db=_yn_db, domain=((2.0, 2.0), (0.3, 12.0)),
       refused=("n",),
       doc="the Bessel function of the second kind of integer order n (scipy.special.yn)",
       opcode=117),
    # the inverses in x of the incomplete gamma functions (scipy.special.gammaincinv,
    # gammainccinv); d/da by the implicit function theorem (the same rule for both)
    Op("gammaincinv", 2, "map", lambda a, b: gammaincinv(a, b), da=_gammaincinv_da,
       db=_gammaincinv_db, domain=((0.3, 6.0), (0.05, 0.95)),
       doc="the inverse of gammainc in x: P(a, x) = p (scipy.special.gammaincinv)",
       opcode=124),
    Op("gammainccinv", 2, "map", lambda a, b: gammainccinv(a, b), da=_gammaincinv_da,
       db=_gammainccinv_db, domain=((0.3, 6.0), (0.05, 0.95)),
       doc="the inverse of gammaincc in x: Q(a, x) = q (scipy.special.gammainccinv)",
       opcode=125),
    # dP(a, x)/da, gammainc's and gammaincc's derivative in a (no scipy name: a traced
    # derivative appends it); its own derivative in a, P's second, is refused
    Op("gammainc_da", 2, "map", lambda a, b: gammainc_da(a, b), db=_gammainc_da_db,
       domain=((0.3, 6.0), (0.05, 10.0)), refused=("a",),
       doc="dP(a, x)/da, the derivative of gammainc in a (JAX's igamma_grad_a)",
       opcode=126),
    # Owen's T function T(h, a) (scipy.special.owens_t): even in h, odd in a; its domain
    # crosses a = +-1, where the computation reflects (special_owens.py)
    Op("owens_t", 2, "map", lambda a, b: owens_t(a, b), da=_owens_t_da, db=_owens_t_db,
       domain=((-3.5, 3.5), (-4.0, 4.0)),
       doc="Owen's T function T(h, a) = 1/(2 pi) int_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx "
           "(scipy.special.owens_t)",
       opcode=131),
    # the Bessel functions of real order v (the first operand, refused: no derivative in v);
    # the tests sample one non-integer (or negative: the reflections) order each, x in range
    Op("jv", 2, "map", lambda a, b: jv(a, b), db=lambda a, b, g: g * jv_dx(a, b),
       domain=((2.3, 2.3), (0.3, 12.0)), refused=("v",),
       doc="the Bessel function of the first kind of real order v (scipy.special.jv)",
       opcode=132),
    Op("yv", 2, "map", lambda a, b: yv(a, b), db=lambda a, b, g: g * yv_dx(a, b),
       domain=((-1.7, -1.7), (0.3, 12.0)), refused=("v",),
       doc="the Bessel function of the second kind of real order v (scipy.special.yv)",
       opcode=133),
    Op("iv", 2, "map", lambda a, b: iv(a, b), db=lambda a, b, g: g * iv_dx(a, b),
       domain=((1.6, 1.6), (0.2, 8.0)), refused=("v",),
       doc="the modified Bessel function of the first kind of real order v (scipy.special.iv)",
       opcode=134),
    Op("ive", 2, "map", lambda a, b: ive(a, b), db=lambda a, b, g: g * ive_dx(a, b),
       domain=((-0.7, -0.7), (0.2, 8.0)), refused=("v",),
       doc="the exponentially scaled modified Bessel function iv(v, x) e^-|x| "
           "(scipy.special.ive)",
       opcode=135),
    Op("kv", 2, "map", lambda a, b: kv(a, b), db=lambda a, b, g: g * kv_dx(a, b),
       domain=((0.7, 0.7), (0.2, 8.0)), refused=("v",),
       doc="the modified Bessel function of the second kind of real order v "
           "(scipy.special.kv)",
       opcode=136),
    Op("kve", 2, "map", lambda a, b: kve(a, b), db=lambda a, b, g: g * kve_dx(a, b),
       domain=((-2.3, -2.3), (0.2, 8.0)), refused=("v",),
       doc="the exponentially scaled modified Bessel function kv(v, x) e^x (scipy.special.kve)",
       opcode=137),
)


# -- special values (test data, tests/test_ieee.py): ((a, p), c, value, (d/da, d/dp)); values
# as scipy's; d/da 0 where x = 0 (p = 0: x = 0 for every a), +inf where x = inf (the limit,
# as d/dp's), NaN where the value is, the finite ones mpmath's
IEEE_CASES = {
    "gammaincinv": (
        ((nan, 0.5), 0.0, nan, (nan, nan)),
        ((inf, 0.5), 0.0, nan, (nan, nan)),
        ((-inf, 0.5), 0.0, nan, (nan, nan)),
        ((0.0, 0.5), 0.0, nan, (nan, nan)),
        ((-0.0, 0.5), 0.0, nan, (nan, nan)),
        ((-1.0, 0.5), 0.0, nan, (nan, nan)),
        ((1.5, nan), 0.0, nan, (nan, nan)),
        ((1.5, inf), 0.0, nan, (nan, nan)),
        ((1.5, -inf), 0.0, nan, (nan, nan)),
        ((1.5, 0.0), 0.0, 0.0, (0.0, inf)),
        ((1.5, -0.0), 0.0, 0.0, (0.0, inf)),
        ((1.5, 2.0), 0.0, nan, (nan, nan)),
        ((1.5, 1.0), 0.0, inf, (inf, inf)),
        ((0.0, 0.0), 0.0, 0.0, (nan, nan)),
        ((1.0, 0.0), 0.0, 0.0, (0.0, 1.0)),
        ((0.5, 0.0), 0.0, 0.0, (0.0, 0.0)),
        ((2.5, 0.3), 0.0, 1.4999540663799533, (0.8177800117760157, 3.2429558361175164)),
    ),
    "gammainccinv": (
        ((nan, 0.5), 0.0, nan, (nan, nan)),
        ((inf, 0.5), 0.0, nan, (nan, nan)),
        ((-inf, 0.5), 0.0, nan, (nan, nan)),
        ((0.0, 0.5), 0.0, nan, (nan, nan)),
        ((-0.0, 0.5), 0.0, nan, (nan, nan)),
        ((1.5, nan), 0.0, nan, (nan, nan)),
        ((1.5, inf), 0.0, nan, (nan, nan)),
        ((1.5, -inf), 0.0, nan, (nan, nan)),
        ((1.5, 0.0), 0.0, inf, (inf, -inf)),
        ((1.5, -0.0), 0.0, inf, (inf, -inf)),
        ((1.5, 1.0), 0.0, 0.0, (0.0, -inf)),
        ((1.0, 1.0), 0.0, 0.0, (0.0, -1.0)),
        ((0.5, 1.0), 0.0, 0.0, (0.0, -0.0)),
        ((2.5, 0.3), 0.0, 3.0322149920774524, (1.1753336492946025, -5.222403847800163)),
    ),
    # dP/da (the row's value; mpmath's where finite) and its d/dx, d/da of the density
    # (mpmath's); its d/da is refused (None). 0 where P is constant in a (x = 0, x = inf,
    # a = inf); at a = 0 the one-sided limits -E1(x) and e^-x / x; d/dx at x = 0 is -inf
    # for 0 < a <= 1 (the density's log x), 0 above. (JAX 0.10 gives NaN for dP/da at a =
    # 0, a = inf, x = inf, and has no derivative of igamma_grad_a in either operand.)
    "gammainc_da": (
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((inf, 1.5), 0.0, 0.0, (None, 0.0)),
        ((-inf, 1.5), 0.0, nan, (None, nan)),
        ((0.0, 1.5), 0.0, -0.10001958240663252, (None, 0.14875344009895322)),
        ((-0.0, 1.5), 0.0, -0.10001958240663252, (None, 0.14875344009895322)),
        ((-1.0, 1.5), 0.0, nan, (None, nan)),
        ((1.5, nan), 0.0, nan, (None, nan)),
        ((1.5, inf), 0.0, 0.0, (None, 0.0)),
        ((1.5, -inf), 0.0, nan, (None, nan)),
        ((1.5, 0.0), 0.0, 0.0, (None, 0.0)),
        ((1.5, -0.0), 0.0, 0.0, (None, 0.0)),
        ((1.5, -1.0), 0.0, nan, (None, nan)),
        ((0.0, 0.0), 0.0, nan, (None, nan)),
        ((inf, inf), 0.0, nan, (None, nan)),
        ((0.0, inf), 0.0, 0.0, (None, 0.0)),
        ((1.0, 0.0), 0.0, 0.0, (None, -inf)),
        ((0.5, 0.0), 0.0, 0.0, (None, -inf)),
        ((2.5, 0.0), 0.0, 0.0, (None, 0.0)),
        ((2.5, 3.5), 0.0, -0.1872354473407891, (None, 0.08174983869843047)),
        ((3.5, 2.5), 0.0, -0.21523416277915058, (None, -0.04561079958951886)),
        ((0.3, 40.0), 0.0, -7.616964685999791e-19, (None, 7.721352423299745e-19)),
        ((60.0, 45.0), 0.0, -0.006187285426152265, (None, -0.001996980183881547)),
        ((60.0, 75.0), 0.0, -0.00918891110021063, (None, 0.001901322790781207)),
        ((0.001, 1e-05), 0.0, -10.81839829908634, (None, 97829.48830436528)),
    ),
    # Owen's T at ((h, a), c, value, (dT/dh, dT/da)): values as scipy's (NaN for a NaN operand;
    # T(+-inf, a) = 0 signed as a; T(h, +-inf) = +-Q(|h|)/2, +-1/4 at h = 0; T(h, -0) = +0, as
    # scipy, whose sign step takes a < 0 only); the derivatives' limits 0 at h = +-inf and a =
    # +-inf, and at h = 0 in h (T is even), 1 / (2 pi) at a = 0 in a when h = 0; the finite
    # ones mpmath's
    "owens_t": (
        ((nan, 0.5), 0.0, nan, (nan, nan)),
        ((0.5, nan), 0.0, nan, (nan, nan)),
        ((inf, 0.5), 0.0, 0.0, (0.0, 0.0)),
        ((-inf, 0.5), 0.0, 0.0, (0.0, 0.0)),
        ((inf, -0.5), 0.0, -0.0, (0.0, 0.0)),
        ((inf, 0.0), 0.0, 0.0, (0.0, 0.0)),
        ((-inf, 0.0), 0.0, 0.0, (0.0, 0.0)),
        ((inf, inf), 0.0, 0.0, (0.0, 0.0)),
        ((inf, -inf), 0.0, -0.0, (0.0, 0.0)),
        ((0.5, inf), 0.0, 0.15426876936299345, (-0.17603266338214973, 0.0)),
        ((0.5, -inf), 0.0, -0.15426876936299345, (0.17603266338214973, 0.0)),
        ((-0.5, inf), 0.0, 0.15426876936299345, (0.17603266338214973, 0.0)),
        ((0.0, inf), 0.0, 0.25, (0.0, 0.0)),
        ((0.0, -inf), 0.0, -0.25, (0.0, 0.0)),
        ((0.0, 0.5), 0.0, 0.07379180882521664, (0.0, 0.12732395447351627)),
        ((-0.0, 0.5), 0.0, 0.07379180882521664, (0.0, 0.12732395447351627)),
        ((0.0, -0.5), 0.0, -0.07379180882521664, (0.0, 0.12732395447351627)),
        ((0.5, 0.0), 0.0, 0.0, (0.0, 0.1404537443096252)),
        ((0.5, -0.0), 0.0, 0.0, (0.0, 0.1404537443096252)),
        ((0.0, 0.0), 0.0, 0.0, (0.0, 0.15915494309189535)),
        ((-0.0, -0.0), 0.0, 0.0, (0.0, 0.15915494309189535)),
        ((1.5, -2.5), 0.0, -0.03340264823896032, (0.06474734623875135, 6.2989441410215145e-06)),
        ((-7.0, 30.0), 0.0, 6.399062719429175e-13, (4.567360204182297e-12, 0.0)),
        ((0.25, 1e6), 0.0, 0.20064683715853814, (-0.1933340584014246, 0.0)),
        ((40.0, 0.5), 0.0, 0.0, (0.0, 0.0)),
    ),
    # the Bessel functions of real order at ((v, x), c, value, (None, d/dx)) (v refused):
    # NaN for a NaN operand, for x < 0 at a non-integer v (J, I) and for every x < 0 (Y, K);
    # (-1)^v J_v(|x|) and I_v(|x|) at an integer v; at x = 0 the limits (signed as 1 /
    # Gamma(v + 1) at a negative non-integer v; Y_-v(0) = 0 at a half-integer -v, where Y_-1/2
    # = J_1/2), d/dx at 0 the limits of the leading power; at x = +inf 0 (J, Y, ive, kv, kve),
    # inf (iv); an infinite order 0 (J, I, ive), -inf (Y), +inf (K, kve), NaN at v = -inf for J,
    # Y, I (no limit); the finite ones mpmath's (40 digits, mpmath.diff for d/dx)
    "jv": (
        ((-0.0, 1.5), 0.0, 0.5118276717359184, (None, -0.5579365079100997)),   # v = -0: order 0
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((2.5, nan), 0.0, nan, (None, nan)),
        ((2.5, inf), 0.0, 0.0, (None, 0.0)),
        ((2.5, -inf), 0.0, nan, (None, nan)),
        ((2.0, -inf), 0.0, 0.0, (None, 0.0)),
        ((inf, 1.5), 0.0, 0.0, (None, 0.0)),
        ((-inf, 1.5), 0.0, nan, (None, nan)),
        ((2.5, 0.0), 0.0, 0.0, (None, 0.0)),
        ((2.5, -0.0), 0.0, 0.0, (None, 0.0)),
        ((0.0, 0.0), 0.0, 1.0, (None, 0.0)),
        ((1.0, 0.0), 0.0, 0.0, (None, 0.5)),
        ((0.5, 0.0), 0.0, 0.0, (None, inf)),
        ((-0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-1.5, 0.0), 0.0, -inf, (None, inf)),
        ((-2.0, 0.0), 0.0, 0.0, (None, 0.0)),
        ((-1.0, 0.0), 0.0, -0.0, (None, -0.5)),
        ((2.5, -1.5), 0.0, nan, (None, nan)),
        ((3.0, -1.5), 0.0, -0.06096395114113963, (None, 0.11015976986193547)),
        ((-3.0, -1.5), 0.0, 0.06096395114113963, (None, -0.11015976986193547)),
        ((2.0, 1e-300), 0.0, 0.0, (None, 0.0)),
        ((0.3, 2.0), 0.0, 0.42569406198141374, (None, -0.4728853106927409)),
        ((-2.7, 3.5), 0.0, -0.05078497149222574, (None, -0.34876724360838157)),
        ((40.0, 1.0), 0.0, 1.1079158511286327e-60, (None, 4.430312091412078e-59)),
        ((0.25, 60.0), 0.0, -0.06642673443898821, (None, -0.07817299274472812)),
    ),
    "yv": (
        ((-0.0, 1.5), 0.0, 0.38244892379775886, (None, 0.4123086269739112)),   # v = -0: order 0
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((2.5, nan), 0.0, nan, (None, nan)),
        ((2.5, inf), 0.0, 0.0, (None, 0.0)),
        ((2.5, -inf), 0.0, nan, (None, nan)),
        ((2.0, -inf), 0.0, nan, (None, nan)),
        ((inf, 1.5), 0.0, -inf, (None, inf)),
        ((-inf, 1.5), 0.0, nan, (None, nan)),
        ((2.5, 0.0), 0.0, -inf, (None, inf)),
        ((2.5, -0.0), 0.0, -inf, (None, inf)),
        ((0.0, 0.0), 0.0, -inf, (None, inf)),
        ((1.0, 0.0), 0.0, -inf, (None, inf)),
        ((0.5, 0.0), 0.0, -inf, (None, inf)),
        ((-0.5, 0.0), 0.0, 0.0, (None, inf)),
        ((-1.5, 0.0), 0.0, -0.0, (None, -0.0)),
        ((-2.0, 0.0), 0.0, -inf, (None, inf)),
        ((-1.0, 0.0), 0.0, inf, (None, -inf)),
        ((2.5, -1.5), 0.0, nan, (None, nan)),
        ((3.0, -1.5), 0.0, nan, (None, nan)),
        ((-3.0, -1.5), 0.0, nan, (None, nan)),
        ((2.0, 1e-300), 0.0, -6.366197723675813e+299, (None, inf)),
        ((0.3, 2.0), 0.0, 0.3634828078260922, (None, 0.34396581665231746)),
        ((-2.7, 3.5), 0.0, 0.4986083017895727, (None, -0.15739145348172404)),
        ((40.0, 1.0), 0.0, -7.184874796801384e+57, (None, 2.873028625484609e+59)),
        ((0.25, 60.0), 0.0, 0.07872447082267203, (None, -0.06708446667808624)),
    ),
    "iv": (
        ((-0.0, 1.5), 0.0, 1.646723189772891, (None, 0.9816664285779075)),   # v = -0: order 0
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((2.5, nan), 0.0, nan, (None, nan)),
        ((2.5, inf), 0.0, inf, (None, inf)),
        ((2.5, -inf), 0.0, nan, (None, nan)),
        ((2.0, -inf), 0.0, inf, (None, -inf)),
        ((inf, 1.5), 0.0, 0.0, (None, 0.0)),
        ((-inf, 1.5), 0.0, nan, (None, nan)),
        ((2.5, 0.0), 0.0, 0.0, (None, 0.0)),
        ((2.5, -0.0), 0.0, 0.0, (None, 0.0)),
        ((0.0, 0.0), 0.0, 1.0, (None, 0.0)),
        ((1.0, 0.0), 0.0, 0.0, (None, 0.5)),
        ((0.5, 0.0), 0.0, 0.0, (None, inf)),
        ((-0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-1.5, 0.0), 0.0, -inf, (None, inf)),
        ((-2.0, 0.0), 0.0, 0.0, (None, 0.0)),
        ((-1.0, 0.0), 0.0, 0.0, (None, 0.5)),
        ((2.5, -1.5), 0.0, nan, (None, nan)),
        ((3.0, -1.5), 0.0, -0.0807741130160923, (None, 0.17628639230349613)),
        ((-3.0, -1.5), 0.0, -0.0807741130160923, (None, 0.17628639230349613)),
        ((2.0, 1e-300), 0.0, 0.0, (None, 0.0)),
        ((0.3, 2.0), 0.0, 2.177637989553738, (None, 1.6174649135689407)),
        ((-2.7, 3.5), 0.0, 2.3624293214486856, (None, 2.7234118828678353)),
        ((40.0, 1.0), 0.0, 1.121509741331486e-60, (None, 4.487406461626776e-59)),
        ((0.25, 60.0), 0.0, 5.890981984681154e+24, (None, 5.841734432018649e+24)),
    ),
    "ive": (
        ((-0.0, 1.5), 0.0, 0.3674336090541583, (None, -0.14839422163323265)),   # v = -0: order 0
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((2.5, nan), 0.0, nan, (None, nan)),
        ((2.5, inf), 0.0, 0.0, (None, 0.0)),
        ((2.5, -inf), 0.0, nan, (None, nan)),
        ((2.0, -inf), 0.0, 0.0, (None, -0.0)),
        ((inf, 1.5), 0.0, 0.0, (None, 0.0)),
        ((-inf, 1.5), 0.0, nan, (None, nan)),
        ((2.5, 0.0), 0.0, 0.0, (None, 0.0)),
        ((2.5, -0.0), 0.0, 0.0, (None, 0.0)),
        ((0.0, 0.0), 0.0, 1.0, (None, 0.0)),
        ((1.0, 0.0), 0.0, 0.0, (None, 0.5)),
        ((0.5, 0.0), 0.0, 0.0, (None, inf)),
        ((-0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-1.5, 0.0), 0.0, -inf, (None, inf)),
        ((-2.0, 0.0), 0.0, 0.0, (None, 0.0)),
        ((-1.0, 0.0), 0.0, 0.0, (None, 0.5)),
        ((2.5, -1.5), 0.0, nan, (None, nan)),
        ((3.0, -1.5), 0.0, -0.018023140773128048, (None, 0.021311670173539972)),
        ((-3.0, -1.5), 0.0, -0.018023140773128048, (None, 0.021311670173539972)),
        ((2.0, 1e-300), 0.0, 0.0, (None, 0.0)),
        ((0.3, 2.0), 0.0, 0.294711254103063, (None, -0.0758111818999271)),
        ((-2.7, 3.5), 0.0, 0.07133918402791367, (None, 0.010900728815944706)),
        ((40.0, 1.0), 0.0, 4.125803769093559e-61, (None, 1.609566543721442e-59)),
        ((0.25, 60.0), 0.0, 0.05158444715171183, (None, -0.0004312367249256872)),
    ),
    "kv": (
        ((-0.0, 1.5), 0.0, 0.2138055626475257, (None, -0.27738780045684364)),   # v = -0: order 0
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((2.5, nan), 0.0, nan, (None, nan)),
        ((2.5, inf), 0.0, 0.0, (None, 0.0)),
        ((2.5, -inf), 0.0, nan, (None, nan)),
        ((2.0, -inf), 0.0, nan, (None, nan)),
        ((inf, 1.5), 0.0, inf, (None, -inf)),
        ((-inf, 1.5), 0.0, inf, (None, -inf)),
        ((2.5, 0.0), 0.0, inf, (None, -inf)),
        ((2.5, -0.0), 0.0, inf, (None, -inf)),
        ((0.0, 0.0), 0.0, inf, (None, -inf)),
        ((1.0, 0.0), 0.0, inf, (None, -inf)),
        ((0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-1.5, 0.0), 0.0, inf, (None, -inf)),
        ((-2.0, 0.0), 0.0, inf, (None, -inf)),
        ((-1.0, 0.0), 0.0, inf, (None, -inf)),
        ((2.5, -1.5), 0.0, nan, (None, nan)),
        ((3.0, -1.5), 0.0, nan, (None, nan)),
        ((-3.0, -1.5), 0.0, nan, (None, nan)),
        ((2.0, 1e-300), 0.0, inf, (None, -inf)),
        ((0.3, 2.0), 0.0, 0.11603697434811926, (None, -0.14341881745882853)),
        ((-2.7, 3.5), 0.0, 0.048214343379573206, (None, -0.0653593183202623)),
        ((40.0, 1.0), 0.0, 1.1142206511787828e+58, (None, -4.4583108518399115e+59)),
        ((0.25, 60.0), 0.0, 1.4146284045570554e-27, (None, -1.4263807339938598e-27)),
    ),
    "kve": (
        ((-0.0, 1.5), 0.0, 0.9582100532948964, (None, -0.284955820257656)),   # v = -0: order 0
        ((nan, 1.5), 0.0, nan, (None, nan)),
        ((2.5, nan), 0.0, nan, (None, nan)),
        ((2.5, inf), 0.0, 0.0, (None, 0.0)),
        ((2.5, -inf), 0.0, nan, (None, nan)),
        ((2.0, -inf), 0.0, nan, (None, nan)),
        ((inf, 1.5), 0.0, inf, (None, -inf)),
        ((-inf, 1.5), 0.0, inf, (None, -inf)),
        ((2.5, 0.0), 0.0, inf, (None, -inf)),
        ((2.5, -0.0), 0.0, inf, (None, -inf)),
        ((0.0, 0.0), 0.0, inf, (None, -inf)),
        ((1.0, 0.0), 0.0, inf, (None, -inf)),
        ((0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-0.5, 0.0), 0.0, inf, (None, -inf)),
        ((-1.5, 0.0), 0.0, inf, (None, -inf)),
        ((-2.0, 0.0), 0.0, inf, (None, -inf)),
        ((-1.0, 0.0), 0.0, inf, (None, -inf)),
        ((2.5, -1.5), 0.0, nan, (None, nan)),
        ((3.0, -1.5), 0.0, nan, (None, nan)),
        ((-3.0, -1.5), 0.0, nan, (None, nan)),
        ((2.0, 1e-300), 0.0, inf, (None, -inf)),
        ((0.3, 2.0), 0.0, 0.85740371300843, (None, -0.20232597483714854)),
        ((-2.7, 3.5), 0.0, 1.5966397719061514, (None, -0.5677635939813734)),
        ((40.0, 1.0), 0.0, 3.02876574899309e+58, (None, -1.181606879927889e+60)),
        ((0.25, 60.0), 0.0, 0.16155160918473285, (None, -0.0013421247064379267)),
    ),
}
