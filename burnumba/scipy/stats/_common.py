"""What every distribution module uses: scipy on plain values, the standardised variable, and
scipy's conventions for bad parameters (NaN, never a number computed from them)."""
import functools
import inspect

import numpy as np

from ..._errors import UnsupportedMethodError, at_user_site
from ...numpy import elementwise as ew
from ...numpy._common import _builder

NAN = float("nan")
LOG_2PI = 1.8378770664093453        # log(2 pi)
LOG_PI = 1.1447298858494002
LOG2 = 0.6931471805599453
EULER = 0.5772156649015329          # Euler-Mascheroni
# the functions a distribution module may have (scipy's method names)
METHODS = ("logpdf", "pdf", "logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf",
           "entropy")


def missing(module):
    """A distribution module's ``__getattr__``: a function scipy has and this module does not
    (skewnorm.cdf, halfnorm.isf) is an error that names it and what the module has, and the
    way on plain values (scipy's own), not a bare AttributeError. An AttributeError still,
    so that ``hasattr`` answers False."""
    dist = module.__name__.rsplit(".", 1)[1]

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        have = sorted(n for n in vars(module) if n in METHODS)   # not its helpers
        raise UnsupportedMethodError(at_user_site(
            f"burnumba.scipy.stats.{dist} has no {name!r}: it defines {', '.join(have)}. "
            f"scipy.stats.{dist}.{name} is not available on traced values (docs: the "
            f"support table lists what is refused and why); on plain numpy values call "
            f"scipy.stats.{dist}.{name} itself"))
    return __getattr__


def traced(*xs):
    return _builder(*xs) is not None


def eager(dist, method, *args, **kwargs):
    """scipy.stats.<dist>.<method>(*args) on plain values (scipy is imported here only)."""
    import scipy.stats
    return getattr(getattr(scipy.stats, dist), method)(*args, **kwargs)


def valid(value, *conditions):
    """``value`` where every condition holds, NaN elsewhere (scipy gives NaN for a scale <= 0,
    a shape <= 0, p outside [0, 1], ...). A condition that is plain True adds no node."""
    ok = None
    for c in conditions:
        if c is True or (not traced(c) and bool(np.all(c))):
            continue
        ok = c if ok is None else ew.logical_and(ok, c)
    return value if ok is None else ew.where(ok, value, NAN)


def positive(v):
    return True if not traced(v) and bool(np.all(np.asarray(v) > 0)) else ew.greater(v, 0.0)


def standard(x, loc, scale):
    """(x - loc) / scale, with no node for loc = 0 or scale = 1."""
    z = x if (not traced(loc) and np.all(np.asarray(loc) == 0)) else x - loc
    return z if (not traced(scale) and np.all(np.asarray(scale) == 1)) else z / scale


def log_scale(scale):
    if traced(scale):
        return ew.log(scale)
    with np.errstate(divide="ignore", invalid="ignore"):   # scale <= 0: NaN by valid(), later
        return np.log(scale)


def method(dist):
    """A distribution's function, written for traced values: on plain values the call goes to
    scipy.stats.<dist>.<the function's name> with the same arguments instead.

    >>> @method("lognorm")
    ... def logpdf(x, s, loc=0.0, scale=1.0): ...
    """
    def wrap(body):
        where = [n for i, n in enumerate(inspect.signature(body).parameters)
                 if i == 0 or n == "loc"]

        @functools.wraps(body)
        def call(*args, **kwargs):
            if not traced(*args, *kwargs.values()):
                return eager(dist, body.__name__, *args, **kwargs)
            bound = inspect.signature(body).bind(*args, **kwargs).arguments
            return nan_from(body(*args, **kwargs), *(bound[n] for n in where if n in bound))
        return call
    return wrap


def entropy_of(standard_entropy, loc, scale, *conditions):
    """A location-scale distribution's differential entropy, as scipy.stats' ``entropy``:
    its standard form's (a function of the shape parameters) + log(scale), NaN where the
    scale is not positive or a condition fails, in the shape of every parameter broadcast
    together, loc included (on which it does not depend)."""
    return in_loc_shape(valid(standard_entropy + log_scale(scale), positive(scale),
                              *conditions), loc)


def in_loc_shape(out, loc):
    """``out`` broadcast with a plain array ``loc``'s shape, for a function that does not
    depend on loc (a traced loc broadcasts in ``nan_from``)."""
    if not traced(loc) and np.ndim(loc) > 0:
        out = out + np.zeros(np.shape(loc))
    return out


def nan_from(out, *xs):
    """``out`` with NaN wherever x or loc is NaN, as scipy gives: a body's support tests
    (z >= 0, 0 <= k <= n) are False at NaN and would put a plain 0, 1 or -inf there, a
    silently wrong number. The NaN is tanh(x): NaN with a NaN derivative at NaN x, a bounded
    derivative (1 - tanh^2) at every other x, inf included, where the branch is not taken (its
    adjoint there is 0: no inf * 0 in a gradient)."""
    for x in xs:
        if traced(x):
            out = ew.where(ew.isnan(x), ew.tanh(x), out)
        elif np.any(np.isnan(np.asarray(x, dtype=float))):
            out = ew.where(np.isnan(np.asarray(x, dtype=float)), NAN, out)
    return out


def support(inside, z, fill):
    """(inside, z where inside and ``fill`` elsewhere): the value in the branch not taken is
    a point of the domain, so that branch's derivative is finite (no inf * 0 in a gradient)."""
    return inside, ew.where(inside, z, fill)


def above(x, loc, scale, low=0.0, strict=False, finite=False):
    """(inside, z) for z = (x - loc) / scale on a support [low, inf) ((low, inf) if
    ``strict``; without +inf if ``finite``, where a density's log would be inf - inf), z held
    at 1 outside it (``support``)."""
    z = standard(x, loc, scale)
    inside = (ew.greater if strict else ew.greater_equal)(z, low)
    if finite:
        inside = ew.logical_and(inside, ew.less(z, float("inf")))
    return support(inside, z, 1.0)


def log1mexp(a):
    """log(1 - exp(a)) for a <= 0: log(-expm1(a)) near 0, log1p(-exp(a)) far below (Maechler's
    split at -log 2, both accurate)."""
    near = ew.greater(a, -LOG2)
    # each branch reads a held at a point of its own domain where it is not taken (no inf * 0)
    return ew.where(near, ew.log(-ew.expm1(ew.where(near, a, -1.0))),
                    ew.log1p(-ew.exp(ew.where(near, -1.0, a))))
