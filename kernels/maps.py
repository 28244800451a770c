"""The map rows of the op table: elementwise ops, one row each, with their rules (the
contract is in ``ops.py``'s docstring; ``rules.py`` reads the rules back as code), the
domain their gradient tests sample and their kinks.

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
from math import (acos, acosh, asin, asinh, atan, atan2, atanh, copysign, cos, cosh, erf, erfc,
                  exp, expm1, fabs, hypot, log, log10, log1p, log2, sin, sinh, sqrt, tan)
from numpy import cbrt, ceil, exp2, floor, fmod, rint, trunc

from .row import Op

nan = float("nan")
inf = float("inf")


_POS = ((0.2, 4.0),)          # strictly positive domain for log, sqrt, ...


# tanh through one exp, faster than libm's tanh (which is a call, so its loops never
# vectorize): tanh|a| = 2 / (1 + exp(-2|a|)) - 1, which never overflows and is within 5e-15
# relative for |a| >= 0.05; below that, the odd Taylor series to a^9 (truncation < 1e-15
# relative). With the map loops' own exp (kernels/_prims.py) LLVM turns the choice into a
# select and the loop vectorizes (65,536 doubles: 116 us, against 335 us through libm).
def _tanh(a):
    mag = fabs(a)
    sq = a * a
    small = mag * (1.0 + sq * (-1.0 / 3.0 + sq * (2.0 / 15.0 + sq * (
        -17.0 / 315.0 + sq * (62.0 / 2835.0)))))
    big = 2.0 / (1.0 + exp(-2.0 * mag)) - 1.0
    return copysign(big if mag >= 0.05 else small, a)


# sigmoid with one exp that never overflows: e = exp(-|a|), then 1 / (1 + e) for a >= 0 and
# e / (1 + e) below (exp(a) / (1 + exp(a)) there, without cancellation)
def _sigmoid(a):
    e = exp(-fabs(a))
    return (1.0 if a >= 0.0 else e) / (1.0 + e)


# gelu's tanh form: a * sigmoid(2u), u = sqrt(2 / pi) (a + 0.044715 a^3); its derivative
# sg + 2 a sg (1 - sg) u', u' = sqrt(2 / pi) (1 + 3 * 0.044715 a^2)
def _gelu_tanh(a):
    return a / (1.0 + exp(-2.0 * 0.7978845608028654 * (a + 0.044715 * a * a * a)))


def _gelu_tanh_da(a, y, g):
    # sg = y / a, the forward's output over its input, so the backward runs no exp and its
    # loop vectorizes. Near 0, where y = a sg may underflow, sg = 1/2 + u/2 instead (exact
    # in double for |a| < 1e-8: the next term, u^3 / 6, is below 1e-24). Both branches are
    # guarded, so a traced second derivative never differentiates 0 / 0
    big = fabs(a) >= 1e-8
    sg = (y if big else 0.5 + 0.3989422804014327 * a) / (a if big else 1.0)
    return g * (sg + 2.0 * a * sg * (1.0 - sg) * 0.7978845608028654 * (1.0 + 0.134145 * a * a))

# logaddexp and logaddexp2 (numpy's npy_logaddexp / npy_logaddexp2, step for step)
def _logaddexp(a, b):
    d = a - b
    return a + 0.6931471805599453 if a == b else (
        a + log1p(exp(-d)) if d > 0.0 else (b + log1p(exp(d)) if d <= 0.0 else d))


def _logaddexp_da(a, b, y, g):
    return g * (exp(a - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if a > b else (0.0 if a < b else nan))))


def _logaddexp_db(a, b, y, g):
    return g * (exp(b - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if b > a else (0.0 if b < a else nan))))


def _logaddexp2(a, b):
    d = a - b
    return a + 1.0 if a == b else (
        a + 1.4426950408889634 * log1p(exp2(-d)) if d > 0.0 else (
            b + 1.4426950408889634 * log1p(exp2(d)) if d <= 0.0 else d))


def _logaddexp2_da(a, b, y, g):
    return g * (exp2(a - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if a > b else (0.0 if a < b else nan))))


def _logaddexp2_db(a, b, y, g):
    return g * (exp2(b - y) if y > -inf and y < inf else (
        0.5 if a == b else (1.0 if b > a else (0.0 if b < a else nan))))


# remainder and its d/db: minus the quotient q that numpy's remainder used, y = a - q b.
# t = trunc(a / b) is fmod's quotient; fmod's result m (the sign of a, or 0, or NaN) was
# moved by b (q = t - 1) when it was not 0 and its sign differs from b's: then y != 0 and a,
# b differ in sign, or y is NaN. That is JAX's rule (trunc and its correction) written with
# y instead of a second fmod, so that traced derivatives need no fmod row.
def _remainder(a, b):
    m = fmod(a, b)
    return m if b == 0.0 else (
        (m + b if (b < 0.0) != (m < 0.0) else m) if m != 0.0 else copysign(0.0, b))


def _remainder_db(a, b, y, g):
    q = a / b
    t = floor(q) if q >= 0.0 else ceil(q)
    return -g * (t - (1.0 if y != y or (y != 0.0 and (a < 0.0) != (b < 0.0)) else 0.0))


# -- more ufuncs (#11): fmod's d/db and floor_divide, as numpy's npy_divmod step for step.
# fmod(a, b) = a - t b with t = trunc(a / b): d/db = -t, which JAX writes -sign(q) floor(|q|)
def _fmod_db(a, b, g):
    q = a / b
    t = floor(q) if q >= 0.0 else ceil(q)
    return -g * t


# numpy's floor_divide: b = 0 gives a / b (+-inf, or NaN for 0 / 0); otherwise the quotient
# of a - fmod(a, b), moved down by 1 where fmod's sign differs from b's, floored and snapped
# to the nearest integer (1 // 0.1 is 9.0, not floor(1 / 0.1) = 10.0); a zero quotient takes
# the sign of a / b
def _floor_divide(a, b):
    m = fmod(a, b)
    d0 = (a - m) / b
    d = d0 - 1.0 if m != 0.0 and (b < 0.0) != (m < 0.0) else d0
    f = floor(d)
    return a / b if b == 0.0 else (
        (f + 1.0 if d - f > 0.5 else f) if d != 0.0 else copysign(0.0, a / b))


ROWS = (
    # -- arithmetic
    Op("add", 2, "map", lambda a, b: a + b, da=lambda g: g, db=lambda g: g, opcode=2),
    Op("subtract", 2, "map", lambda a, b: a - b, da=lambda g: g, db=lambda g: -g, opcode=3),
    Op("multiply", 2, "map", lambda a, b: a * b, da=lambda b, g: g * b, db=lambda a, g: g * a,
       opcode=4),
    Op("divide", 2, "map", lambda a, b: a / b,
       da=lambda b, g: g / b, db=lambda b, y, g: -g * y / b,
       avoid="abs(b) < 0.3", opcode=5),
    Op("negative", 1, "map", lambda a: -a, da=lambda g: -g, opcode=6),

    # -- powers. The tracer picks the row: x**2 -> square, x**3 -> cube, other integer
    # exponents -> powi (pow with an integral exponent: negative bases too), real exponents
    # -> pow_c, x**y -> power.
    Op("square", 1, "map", lambda a: a * a, da=lambda a, g: 2.0 * a * g, opcode=7),
    Op("cube", 1, "map", lambda a: a * a * a, da=lambda a, g: 3.0 * a * a * g, opcode=8),
    Op("powi", 1, "map", lambda a, c: a ** c, da=lambda a, c, g: c * a ** (c - 1.0) * g,
       domain=((0.3, 3.0),), doc="a ** c for an integer c != 0 stored as the immediate", opcode=9),
    Op("pow_c", 1, "map", lambda a, c: a ** c,
       da=lambda a, c, g: c * a ** (c - 1.0) * g, domain=_POS,
       doc="a ** c for a real constant c; a > 0", opcode=10),
    # d/db a ** b = y log a; at a = 0 the log factor is taken as 0 (JAX's _replace_zero), so
    # the true derivative 0 comes out instead of 0 * -inf = NaN
    Op("power", 2, "map", lambda a, b: a ** b, da=lambda a, b, g: b * a ** (b - 1.0) * g,
       db=lambda a, y, g: g * ((log(a) if a != 0.0 else 0.0) * y),
       domain=((0.2, 3.0), (-2.0, 2.0)), doc="a ** b with both traced; a > 0", opcode=11),

    # -- transcendental
    Op("exp", 1, "map", lambda a: exp(a), da=lambda y, g: g * y, opcode=12),
    Op("log", 1, "map", lambda a: log(a), da=lambda a, g: g / a, domain=_POS, opcode=13),
    Op("sqrt", 1, "map", lambda a: sqrt(a), da=lambda y, g: 0.5 * g / y, domain=_POS, opcode=14),
    Op("reciprocal", 1, "map", lambda a: 1.0 / a, da=lambda y, g: -g * y * y,
       avoid="abs(a) < 0.3", opcode=15),
    # -0.5 y / a rather than -0.5 y^3: at a = -0.0, y = -inf and the derivative is -inf (JAX)
    Op("rsqrt", 1, "map", lambda a: 1.0 / sqrt(a),
       da=lambda a, y, g: g * (-0.5 * (y / a)), domain=_POS, opcode=16),
    # tanh through one exp (_tanh)
    Op("tanh", 1, "map", _tanh,
       da=lambda y, g: g * (1.0 - y * y), opcode=17),
    Op("sigmoid", 1, "map", _sigmoid,
       da=lambda y, g: g * y * (1.0 - y), opcode=18),
    # gelu: the tanh form (GPT-2's, jax.nn.gelu's default), through 0.5 (1 + tanh(u)) =
    # sigmoid(2u), which needs one exp instead of a tanh (2.5x faster in numba), and the
    # exact erf form
    Op("gelu_tanh", 1, "map", _gelu_tanh, da=_gelu_tanh_da, opcode=19),
    # 1 + erf(a / sqrt 2) written erfc(-a / sqrt 2): no cancellation for a < -6 (JAX's form)
    Op("gelu_erf", 1, "map", lambda a: 0.5 * a * erfc(a * -0.7071067811865476),
       da=lambda a, g: g * (0.5 * erfc(a * -0.7071067811865476)
                            + a * 0.3989422804014327 * exp(-0.5 * a * a)), opcode=20),
    Op("sin", 1, "map", lambda a: sin(a), da=lambda a, g: g * cos(a), opcode=21),
    Op("cos", 1, "map", lambda a: cos(a), da=lambda a, g: -g * sin(a), opcode=22),

    # erf, which the traced derivatives of gelu_erf need (erfc z = 1 - erf z there)
    Op("erf", 1, "map", lambda a: erf(a), da=lambda a, g: g * 1.1283791670955126 * exp(-a * a),
       opcode=23),
    # stop_gradient(a) = a with no derivative: a constant for every transformation, as
    # jax.lax.stop_gradient
    Op("stop_gradient", 1, "map", lambda a: a,
       doc="the value of a, seen as a constant by grad, jvp and the rest", opcode=24),

    # -- piecewise. Conventions at kinks: relu'(0) = 0 (torch, JAX); abs'(0) = 0 (torch,
    # autograd; JAX gives 1); maximum / minimum split the gradient evenly at a tie (JAX). At
    # NaN: relu and maximum / minimum give NaN values (numpy) and gradient 0 (JAX);
    # abs'(NaN) is NaN, as autograd (JAX gives -1, torch 0): a NaN is shown, not hidden.
    Op("relu", 1, "map", lambda a: a if a > 0.0 or a != a else 0.0,
       da=lambda a, g: g if a > 0.0 else 0.0,
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0),), opcode=25),
    Op("absolute", 1, "map", lambda a: fabs(a),
       da=lambda a, g: g if a > 0.0 else (-g if a < 0.0 else (0.0 if a == 0.0 else a)),
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0),), opcode=26),
    Op("maximum", 2, "map", lambda a, b: a if a > b or a != a else b,
       da=lambda a, b, g: g if a > b else (0.5 * g if a == b else 0.0),
       db=lambda a, b, g: g if b > a else (0.5 * g if a == b else 0.0),
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.5, 0.5), (-0.7, -0.7, 0.5, 0.5)), opcode=27),
    Op("minimum", 2, "map", lambda a, b: a if a < b or a != a else b,
       da=lambda a, b, g: g if a < b else (0.5 * g if a == b else 0.0),
       db=lambda a, b, g: g if b < a else (0.5 * g if a == b else 0.0),
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.5, 0.5), (-0.7, -0.7, 0.5, 0.5)), opcode=28),

    # -- comparisons give 0.0 / 1.0 masks and carry no gradient
    Op("greater", 2, "map", lambda a, b: 1.0 if a > b else 0.0, opcode=29),
    Op("greater_equal", 2, "map", lambda a, b: 1.0 if a >= b else 0.0, opcode=30),
    Op("less", 2, "map", lambda a, b: 1.0 if a < b else 0.0, opcode=31),
    Op("less_equal", 2, "map", lambda a, b: 1.0 if a <= b else 0.0, opcode=32),
    Op("equal", 2, "map", lambda a, b: 1.0 if a == b else 0.0, opcode=33),
    Op("not_equal", 2, "map", lambda a, b: 1.0 if a != b else 0.0, opcode=34),
    # -- more numpy ufuncs (issue #11). Appended, so that the opcodes of the rows above (and
    # the kernels of programs that do not use these) stay as they were.
    # sign, floor and ceil are flat almost everywhere and jump at 0 / the integers: they have
    # no gradient rule, so their gradient is 0 everywhere, at the jumps too (JAX's and
    # HIPS autograd's convention: both treat them as constants), and at NaN (JAX: 0).
    Op("sign", 1, "map",
       lambda a: 1.0 if a > 0.0 else (-1.0 if a < 0.0 else (0.0 if a == 0.0 else a)),
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.0), (-0.0, 0.0)),
       doc="-1, 0 or 1 (NaN for NaN; +0.0 for -0.0, as numpy); gradient 0", opcode=52),
    Op("sinh", 1, "map", lambda a: sinh(a), da=lambda a, g: g * cosh(a), opcode=53),
    Op("cosh", 1, "map", lambda a: cosh(a), da=lambda a, g: g * sinh(a), opcode=54),
    # tan' = 1 + tan^2, from the output
    Op("tan", 1, "map", lambda a: tan(a), da=lambda y, g: g * (1.0 + y * y),
       domain=((-1.2, 1.2),), opcode=55),
    # arcsin' = 1 / sqrt(1 - a^2): +inf at +-1 (JAX), NaN outside [-1, 1]
    Op("arcsin", 1, "map", lambda a: asin(a), da=lambda a, g: g / sqrt(1.0 - a * a),
       domain=((-0.9, 0.9),), opcode=56),
    Op("arccos", 1, "map", lambda a: acos(a), da=lambda a, g: -g / sqrt(1.0 - a * a),
       domain=((-0.9, 0.9),), opcode=57),
    Op("arctan", 1, "map", lambda a: atan(a), da=lambda a, g: g / (1.0 + a * a), opcode=58),
    # arctan2(a, b), the angle of (b, a): d/da = b / r^2, d/db = -a / r^2 (NaN at the
    # origin, as JAX). The angle jumps by 2 pi across a = 0 for b < 0: avoided in tests.
    Op("arctan2", 2, "map", lambda a, b: atan2(a, b),
       da=lambda a, b, g: g * b / (a * a + b * b), db=lambda a, b, g: -g * a / (a * a + b * b),
       avoid="abs(a) < 0.3 and b < 0.3", opcode=59),
    # hypot' = a / y, as JAX also where an operand is infinite (NaN: inf / inf, and JAX's
    # NaN for the finite one) and at the origin, where the gradient is split evenly (0.5,
    # JAX's maximum / minimum rule inside its hypot)
    Op("hypot", 2, "map", lambda a, b: hypot(a, b),
       da=lambda a, y, g: g * ((a / y if y < inf else nan) if y != 0.0 else 0.5),
       db=lambda b, y, g: g * ((b / y if y < inf else nan) if y != 0.0 else 0.5),
       avoid="abs(a) + abs(b) < 0.3", kinks=((0.0, 0.0, 0.5, 0.5),), opcode=60),
    Op("exp2", 1, "map", lambda a: exp2(a), da=lambda y, g: g * y * 0.6931471805599453, opcode=61),
    # expm1' = y + 1; log1p' = 1 / (1 + a)
    Op("expm1", 1, "map", lambda a: expm1(a), da=lambda y, g: g * (y + 1.0), opcode=62),
    Op("log1p", 1, "map", lambda a: log1p(a), da=lambda a, g: g / (1.0 + a),
       domain=((-0.8, 3.0),), opcode=63),
    # log2' = 1 / (a ln 2), log10' = 1 / (a ln 10)
    Op("log2", 1, "map", lambda a: log2(a), da=lambda a, g: g / (a * 0.6931471805599453),
       domain=_POS, opcode=64),
    Op("log10", 1, "map", lambda a: log10(a), da=lambda a, g: g / (a * 2.302585092994046),
       domain=_POS, opcode=65),
    # logaddexp as numpy's npy_logaddexp (so values agree bit for bit): a + log 2 at a tie
    # (exact for equal infinities), else the larger plus log1p(exp(-|a - b|)); NaN
    # propagates. The gradients are the softmax weights exp(a - y), exp(b - y), and at
    # infinite y their limits: 1 to the larger operand and 0 to the other, 1/2 each at a
    # tie (so logaddexp(-inf, -inf) = -inf with gradients 0.5, 0.5, finite). JAX differs
    # there: its _replace_inf gives NaN at (-inf, -inf), (1, 1) at (inf, inf) and exp(b)
    # (not 0) to a finite b beside a = +inf.
    Op("logaddexp", 2, "map", _logaddexp, da=_logaddexp_da, db=_logaddexp_db, opcode=66),
    # the same in base 2 (numpy's npy_logaddexp2: a + 1 at a tie, log2(1 + 2^-|d|) through
    # log1p); gradients 2^(a - y), 2^(b - y)
    Op("logaddexp2", 2, "map", _logaddexp2, da=_logaddexp2_da, db=_logaddexp2_db, opcode=67),
    # fmax / fmin ignore a NaN operand (numpy's semantics; maximum / minimum propagate it):
    # the result is the other operand, which gets the gradient. A tie goes to b, value and
    # gradient, as numpy's array loops (fmax(0.0, -0.0) is -0.0; its scalar path returns a)
    # and JAX's where(a > b | isnan(b), a, b); NaN with NaN is NaN with gradient to a (JAX).
    Op("fmax", 2, "map", lambda a, b: a if a > b or b != b else b,
       da=lambda a, b, g: g if a > b or b != b else 0.0,
       db=lambda a, b, g: 0.0 if a > b or b != b else g,
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.0, 1.0), (-0.7, -0.7, 0.0, 1.0)), opcode=68),
    Op("fmin", 2, "map", lambda a, b: a if a < b or b != b else b,
       da=lambda a, b, g: g if a < b or b != b else 0.0,
       db=lambda a, b, g: 0.0 if a < b or b != b else g,
       avoid="abs(a - b) < 1e-3", kinks=((1.5, 1.5, 0.0, 1.0), (-0.7, -0.7, 0.0, 1.0)), opcode=69),
    Op("floor", 1, "map", lambda a: floor(a), avoid="abs(a - round(a)) < 1e-3",
       kinks=((2.0, 0.0), (-1.0, 0.0), (0.0, 0.0)), doc="floor(a); gradient 0", opcode=70),
    Op("ceil", 1, "map", lambda a: ceil(a), avoid="abs(a - round(a)) < 1e-3",
       kinks=((2.0, 0.0), (-1.0, 0.0), (0.0, 0.0)), doc="ceil(a); gradient 0", opcode=71),
    # remainder (numpy's %, the sign of b) as numpy's npy_divmod: m = fmod(a, b), moved
    # into b's sign by adding b; an exact multiple gives +-0 with b's sign; b = 0 gives NaN.
    # d/da = 1 (JAX and autograd: at the jumps too); d/db = -(the quotient), which JAX
    # writes -(trunc(a / b) - 1 when its fmod was moved); autograd -floor(a / b), the same
    # but where a / b rounds: remainder(1.5, -inf) = -inf has quotient -1, d/db = 1.
    Op("remainder", 2, "map", _remainder, da=lambda g: g, db=_remainder_db,
       domain=((-3.0, 3.0), (-2.0, 2.0)),
       avoid="abs(b) < 0.5 or abs(a / b - round(a / b)) < 1e-3",
       kinks=((4.0, 2.0, 1.0, -2.0), (-4.0, 2.0, 1.0, 2.0), (3.0, -1.5, 1.0, 2.0)), opcode=72),
    # -- more ufuncs (#11) --
    # the inverse hyperbolic functions (libm's, as numpy's); derivatives as JAX writes them:
    # asinh' = 1 / sqrt(a^2 + 1), acosh' = 1 / sqrt(a^2 - 1) (NaN below 1, inf at 1),
    # atanh' = 1 / (1 + a) * 1 / (1 - a) (inf at +-1, NaN outside [-1, 1])
    Op("arcsinh", 1, "map", lambda a: asinh(a), da=lambda a, g: g / sqrt(a * a + 1.0), opcode=76),
    Op("arccosh", 1, "map", lambda a: acosh(a), da=lambda a, g: g / sqrt(a * a - 1.0),
       domain=((1.2, 4.0),), opcode=77),
    Op("arctanh", 1, "map", lambda a: atanh(a),
       da=lambda a, g: 1.0 / (1.0 + a) * (g / (1.0 - a)), domain=((-0.9, 0.9),), opcode=78),
    # cbrt' = 1 / (3 y^2), from the output (JAX): inf at 0
    Op("cbrt", 1, "map", lambda a: cbrt(a), da=lambda y, g: g * (0.3333333333333333 / (y * y)),
       avoid="abs(a) < 0.05", opcode=79),
    # copysign(a, b) = |a| with b's sign bit: d/da = +-1, + where a and the result agree in
    # sign (a >= 0 counts +, as JAX's where(signbit(b), -abs(a), abs(a)) with abs'(0) = 1);
    # NaN for a NaN a, as absolute (JAX: -1 there); d/db = 0 (no rule)
    Op("copysign", 2, "map", lambda a, b: copysign(a, b),
       da=lambda a, b, g: g * (copysign(1.0, b) if a >= 0.0 else (
           -copysign(1.0, b) if a < 0.0 else a)),
       avoid="abs(a) < 1e-3 or abs(b) < 1e-3",
       kinks=((0.0, 1.5, 1.0, 0.0), (0.0, -1.5, -1.0, 0.0), (-0.0, -1.5, -1.0, 0.0)), opcode=80),
    # fmod (C's remainder, the sign of a): d/da = 1, d/db = -trunc(a / b) (JAX)
    Op("fmod", 2, "map", lambda a, b: fmod(a, b), da=lambda g: g, db=_fmod_db,
       domain=((-3.0, 3.0), (-2.0, 2.0)),
       avoid="abs(b) < 0.5 or abs(a / b - round(a / b)) < 1e-3",
       kinks=((4.0, 2.0, 1.0, -2.0), (-4.0, 2.0, 1.0, 2.0), (3.0, -1.5, 1.0, 2.0)), opcode=81),
    # heaviside(a, b): 0 below 0, 1 above, b at a = +-0, NaN for a NaN a (numpy). d/da = 0;
    # d/db = 1 where the output is b (a == 0), as JAX's where(a < 0, 0, where(a > 0, 1, b))
    # (JAX also passes 1 at a NaN a, whose output numpy makes NaN: 0 here)
    Op("heaviside", 2, "map",
       lambda a, b: 0.0 if a < 0.0 else (1.0 if a > 0.0 else (b if a == 0.0 else a)),
       db=lambda a, g: g if a == 0.0 else 0.0,
       avoid="abs(a) < 1e-3", kinks=((0.0, 0.5, 0.0, 1.0), (-0.0, 2.0, 0.0, 1.0)), opcode=82),
    # rint (round half to even, as numpy) and trunc are flat with jumps: gradient 0, as
    # floor and ceil (JAX: round and trunc have zero derivatives)
    Op("rint", 1, "map", lambda a: rint(a), avoid="abs(a - round(a)) > 0.499",
       kinks=((0.5, 0.0), (1.5, 0.0), (-2.5, 0.0)), doc="rint(a); gradient 0", opcode=83),
    Op("trunc", 1, "map", lambda a: trunc(a), avoid="abs(a - round(a)) < 1e-3",
       kinks=((2.0, 0.0), (-1.0, 0.0), (0.0, 0.0)), doc="trunc(a); gradient 0", opcode=84),
    # floor_divide (numpy's //): gradient 0 for both operands (JAX)
    Op("floor_divide", 2, "map", _floor_divide, domain=((-3.0, 3.0), (-2.0, 2.0)),
       avoid="abs(b) < 0.5 or abs(a / b - round(a / b)) < 1e-3",
       kinks=((4.0, 2.0, 0.0, 0.0), (-4.0, 2.0, 0.0, 0.0)),
       doc="floor(a / b) as numpy's floor_divide; gradient 0", opcode=85),
    # predicates: 0.0 / 1.0 masks without gradient, as the comparisons; a nonzero operand
    # (NaN too) is true for the logical ones, as numpy's
    Op("isnan", 1, "map", lambda a: 1.0 if a != a else 0.0, opcode=86),
    Op("isinf", 1, "map", lambda a: 1.0 if fabs(a) == inf else 0.0, opcode=87),
    Op("isfinite", 1, "map", lambda a: 1.0 if fabs(a) < inf else 0.0, opcode=88),
    Op("signbit", 1, "map", lambda a: 1.0 if copysign(1.0, a) < 0.0 else 0.0, opcode=89),
    Op("logical_not", 1, "map", lambda a: 1.0 if a == 0.0 else 0.0, opcode=90),
    Op("logical_and", 2, "map", lambda a, b: 1.0 if a != 0.0 and b != 0.0 else 0.0, opcode=91),
    Op("logical_or", 2, "map", lambda a, b: 1.0 if a != 0.0 or b != 0.0 else 0.0, opcode=92),
    Op("logical_xor", 2, "map", lambda a, b: 1.0 if (a != 0.0) != (b != 0.0) else 0.0, opcode=93),
)
