"""``burnumba.scipy.stats.t``: Student's t distribution, as scipy.stats.t (df, loc, scale):
logpdf and pdf, with gradients to x, df (through digamma), loc and scale; cdf, sf, logcdf
and logsf from the incomplete beta rows (special.betainc / betaincc), with gradients to x,
df, loc and scale (df enters betainc's a or b and its x: the rows betainc_da / betainc_db
and the density; at z = 0 the slope of 1/2 + z pdf(0) through gammaln); a second derivative
in df is an error that names betainc_da's or betainc_db's argument. (df = inf, scipy's normal
limit, is not special-cased: a finite df only.)"""
from ...numpy import elementwise as ew
from .. import special
from ._common import LOG_2PI, LOG_PI, entropy_of, log_scale, method, positive, standard, valid


@method("t")
def logpdf(x, df, loc=0.0, scale=1.0):
    """gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log scale - (df+1)/2 log1p(z^2/df)"""
    z = standard(x, loc, scale)
    half = (df + 1.0) * 0.5
    out = (special.gammaln(half) - special.gammaln(df * 0.5)
           - 0.5 * log_scale(df) - 0.5 * LOG_PI
           - log_scale(scale) - half * ew.log1p(z * z / df))
    return valid(out, positive(scale), positive(df))


@method("t")
def pdf(x, df, loc=0.0, scale=1.0):
    return ew.exp(logpdf(x, df, loc, scale))


def _tail(z, df):
    """P(T < -|z|) = I_{df / (df + z^2)}(df / 2, 1 / 2) / 2, through its complement
    I_{z^2 / (df + z^2)}(1 / 2, df / 2) where z^2 < df (there df / (df + z^2) rounds near 1
    and the complement keeps the digits). Each branch's argument held at a safe value where
    the other is used (the density is infinite at the ends: no inf * 0 in a gradient)."""
    z2 = z * z
    near = ew.less(z2, df)
    s = df + z2
    far_x = ew.where(near, 0.5, df / s)
    near_x = ew.where(near, z2 / s, 0.5)
    half = df * 0.5
    return 0.5 * ew.where(near, special.betaincc(0.5, half, near_x),
                          special.betainc(half, 0.5, far_x))


def _cdf(z, df, upper, log=False):
    """P(T <= z) (``upper``: P(T > z); ``log``: its log, log1p(-tail) on the far side, where
    the probability is 1 - tiny). At z = 0 exactly, where the tail's argument sits at the
    density's pole, 1/2 + z pdf(0) (-): the value and its slope."""
    tail = _tail(ew.where(ew.equal(z, 0.0), 1.0, z), df)
    low = ew.less(z, 0.0) if not upper else ew.greater(z, 0.0)
    if log:
        out = ew.where(low, ew.log(tail), ew.log1p(-tail))
    else:
        out = ew.where(low, tail, 1.0 - tail)
    slope = ew.exp(logpdf(0.0, df))
    at0 = 0.5 - z * slope if upper else 0.5 + z * slope
    return ew.where(ew.equal(z, 0.0), ew.log(at0) if log else at0, out)


@method("t")
def cdf(x, df, loc=0.0, scale=1.0):
    """P(T <= z), z = (x - loc) / scale: I_{df/(df+z^2)}(df/2, 1/2) / 2 below 0, 1 minus it
    above (scipy's stdtr).

    >>> bn.grad(lambda x: cdf(x, 3.0))(0.5)      # the pdf: 0.3220649...
    """
    z = standard(x, loc, scale)
    return valid(_cdf(z, df, False), positive(scale), positive(df))


@method("t")
def sf(x, df, loc=0.0, scale=1.0):
    """P(T > z): the tail itself above 0 (accurate far out)."""
    z = standard(x, loc, scale)
    return valid(_cdf(z, df, True), positive(scale), positive(df))


@method("t")
def logcdf(x, df, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    return valid(_cdf(z, df, False, log=True), positive(scale), positive(df))


@method("t")
def logsf(x, df, loc=0.0, scale=1.0):
    z = standard(x, loc, scale)
    return valid(_cdf(z, df, True, log=True), positive(scale), positive(df))


@method("t")
def entropy(df, loc=0.0, scale=1.0):
    """(df + 1) / 2 (digamma((df + 1) / 2) - digamma(df / 2)) + log(sqrt(df) B(df / 2, 1 / 2))
    + log scale; from df = 100 on (df = inf included: the normal's), scipy's asymptotic
    series (the exact form loses its digits to cancellation there)."""
    small = ew.less(df, 100.0)
    r = ew.where(small, df, 1.0)                  # each branch read at a point of its own
    g = ew.where(small, 100.0, df)
    half, half1 = 0.5 * r, 0.5 * (r + 1.0)
    regular = (half1 * (special.digamma(half1) - special.digamma(half))
               + 0.5 * log_scale(r) + special.betaln(half, 0.5))
    series = (0.5 * (1.0 + LOG_2PI) + 1.0 / g + g ** -2.0 / 4.0 - g ** -3.0 / 6.0
              - g ** -4.0 / 8.0 + 0.3 * g ** -5.0 + g ** -6.0 / 4.0)
    return entropy_of(ew.where(small, regular, series), loc, scale, positive(df))
