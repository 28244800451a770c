"""What every distribution module uses: scipy on plain values, the standardised variable, and
scipy's conventions for bad parameters (NaN, never a number computed from them)."""
import numpy as np

from ...numpy import elementwise as ew
from ...numpy._common import _builder

NAN = float("nan")
LOG_2PI = 1.8378770664093453        # log(2 pi)
LOG_PI = 1.1447298858494002


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
    return ew.log(scale) if traced(scale) else np.log(scale)
