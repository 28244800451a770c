import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Deterministic example generation, so that CI runs are repeatable; the points are still
# spread at random over each op's domain. BURNUMBA_HYPOTHESIS=thorough samples more.
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("BURNUMBA_HYPOTHESIS", "ci"))


def central_diff(f, args, k, h=1e-6):
    """d f / d args[k] by central differences in float64, elementwise for array args."""
    x = np.asarray(args[k], dtype=np.float64)
    g = np.zeros_like(x)
    flat = g.reshape(-1)
    for j in range(x.size):
        step = h * max(1.0, abs(x.reshape(-1)[j]))
        xp, xm = x.copy(), x.copy()
        xp.reshape(-1)[j] += step
        xm.reshape(-1)[j] -= step
        ap, am = list(args), list(args)
        ap[k] = xp if x.shape else float(xp)
        am[k] = xm if x.shape else float(xm)
        flat[j] = (float(f(*ap)) - float(f(*am))) / (2 * step)
    return g if x.shape else float(g)


@pytest.fixture
def rng():
    return np.random.default_rng(20250529)


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """Compile the kernel of every op once per dtype (about a minute on an empty cache;
    nothing on a warm one). Tapes use only the ops they need, so without this, the suite's
    hundreds of op combinations would each build a small kernel; with it, each finds this
    one, which covers them. tests/test_cache.py checks per-program builds separately."""
    from burnumba import kernels
    kernels.precompile()
