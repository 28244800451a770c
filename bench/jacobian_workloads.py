"""Per-item Jacobians (issue #32, target 4): the Jacobian of a small residual at each of N
items, by burnumba, jax and hand-written C++ (``cpp_jacobians.cpp``: Ceres-style Jets).

* ``reprojection``: the Bundle Adjustment in the Large camera model (Ceres's
  SnavelyReprojectionError). Item i is a 12-vector x = (angle-axis w (3), translation t (3),
  focal f, radial distortion k1, k2, point X (3)) and its observation (2,); the residual is
  f (1 + k1 |p|^2 + k2 |p|^4) p - observed, p = -P[0:2] / P[2], P = R(w) X + t, with
  Rodrigues' rotation written as Ceres's AngleAxisRotatePoint without its small-angle branch
  (the data keep |w| in [0.1, 1], so every system computes the same formula). The Jacobian
  of one item is (2, 12): the 24 numbers per item are the result.

``make_<system>(n, how)`` returns (call, result); ``how`` picks forward ("fwd": one tangent
per input direction) or reverse ("rev": one cotangent per output) mode, where the system
has both: a report times both and keeps each system's faster.
"""
import ctypes
import os
import shutil

import numpy as np

from _child import load_compiled

HERE = os.path.dirname(os.path.abspath(__file__))
N_ITEMS = 10_000
CXXFLAGS = "-O3 -march=native"


def data(n=N_ITEMS, seed=0):
    """(x (n, 12), observed (n, 2)): cameras and points with the point well in front of its
    camera (|P[2]| >= 2), observations near the predictions."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    w = axis * rng.uniform(0.1, 1.0, size=(n, 1))
    t = rng.normal(scale=0.3, size=(n, 3))
    focal = rng.uniform(400.0, 600.0, size=(n, 1))
    k = rng.normal(scale=0.01, size=(n, 2))
    X = rng.normal(size=(n, 3)) + np.array([0.0, 0.0, -8.0])
    x = np.concatenate([w, t, focal, k, X], axis=1)
    observed = residual_numpy(x, np.zeros((n, 2))) + rng.normal(scale=2.0, size=(n, 2))
    return x, observed


def residual(x, observed, xp=np):
    """One item's residual (2,) at x (12,), written as numpy code (``xp``: the array module)."""
    w, t, f, k1, k2, X = x[0:3], x[3:6], x[6], x[7], x[8], x[9:12]
    theta = xp.sqrt(xp.sum(w * w))
    k = w / theta
    c, s = xp.cos(theta), xp.sin(theta)
    kx = xp.stack([k[1] * X[2] - k[2] * X[1], k[2] * X[0] - k[0] * X[2],
                   k[0] * X[1] - k[1] * X[0]])
    P = X * c + kx * s + k * (xp.sum(k * X) * (1.0 - c)) + t
    p = -P[0:2] / P[2]
    r2 = xp.sum(p * p)
    return f * (1.0 + r2 * (k1 + k2 * r2)) * p - observed


def residual_numpy(x, observed):
    """Every item's residual at once (numpy, for the data and the checks)."""
    return np.stack([residual(xi, oi) for xi, oi in zip(x, observed)])


def central_differences(x, observed, h=1e-6):
    """(n, 2, 12) Jacobians by central differences, for the checks."""
    J = np.empty((len(x), 2, 12))
    for i, (xi, oi) in enumerate(zip(x, observed)):
        for k in range(12):
            e = np.zeros(12)
            e[k] = h * max(1.0, abs(xi[k]))
            J[i, :, k] = (residual(xi + e, oi) - residual(xi - e, oi)) / (2 * e[k])
    return J


def make_burnumba(n, how):
    import burnumba as bn
    x, observed = data(n)
    jac = (bn.jacfwd if how == "fwd" else bn.jacrev)(residual)
    per_item = bn.vmap(jac, in_axes=(0, 0), threads=1)

    def call():
        return per_item(x, observed)
    return call, call()


def make_jax(n, how):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    x, observed = data(n)
    xj, oj = jnp.asarray(x), jnp.asarray(observed)

    def res(xi, oi):
        return residual(xi, oi, jnp)
    jac = (jax.jacfwd if how == "fwd" else jax.jacrev)(res)
    fn = jax.jit(jax.vmap(jac))

    def call():
        return jax.block_until_ready(fn(xj, oj))
    return call, np.asarray(call())


def build_cpp(flags=CXXFLAGS):
    """The C++ function as ctypes, or (None, the reason)."""
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:
        return None, "no C++ compiler (c++, g++) on PATH"
    lib, err = load_compiled([cxx, *flags.split(), "-fPIC", "-shared",
                              os.path.join(HERE, "cpp_jacobians.cpp"), "-o", "{out}"],
                             "cpp_jacobians.so")
    if lib is None:
        return None, err
    fn = lib.reprojection_jacobians
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                   ctypes.c_void_p]
    return fn, " ".join([os.path.basename(cxx), *flags.split()])


def make_cpp(n, how=None, flags=CXXFLAGS):
    fn, what = build_cpp(flags)
    if fn is None:
        raise RuntimeError(what)
    x, observed = data(n)
    r, J = np.empty((n, 2)), np.empty((n, 2, 12))
    keep = (x, observed, r, J)        # the buffers the pointers below address stay alive
    args = (x.ctypes.data, observed.ctypes.data, n, r.ctypes.data, J.ctypes.data)

    def call():
        fn(*args)
        return keep[3]
    call()
    np.testing.assert_allclose(r[:50], residual_numpy(x[:50], observed[:50]), rtol=1e-12,
                               atol=1e-9)                # the C++ residual is numpy's
    return call, J.copy()
