"""Optimiser updates, in place, over a flat parameter buffer.

Each kernel reads the parameters from ``P[p0:p0+n]`` and the gradients from ``G[g0:g0+n]``.
A Trainer passes its run state's packed float buffer twice (parameters and gradients are
the first elements of its ``val`` and ``grad`` sections), so nothing is copied; a caller
with separate arrays passes offsets 0. Hyper-parameters come in one array ``hp`` so the
signature holds arrays and ints only. The formulas are torch.optim's, so the two agree step
for step.

These are plain Python functions: ``_build.py`` compiles them (``SIGNATURES``) into a shared
library like the sweeps, and the Python engine runs them as they are. Compiled with
``error_model="numpy"``: Python's ZeroDivisionError check on ``/`` otherwise keeps LLVM from
vectorizing the loops (4x slower Adam).
"""
import numpy as np

# hp layouts: hp has the parameters' dtype, so float32 buffers are updated in float32
# arithmetic, as torch does (8 values a SIMD register instead of 4: 3.3x faster for a
# 1M-parameter Adam step).
SGD_LR, SGD_MOMENTUM, SGD_WD, SGD_NESTEROV, SGD_SCALE = range(5)
(ADAM_STEP_SIZE, ADAM_B1, ADAM_1MB1, ADAM_B2, ADAM_1MB2, ADAM_ROOT_BC2, ADAM_EPS, ADAM_DECAY,
 ADAM_L2, ADAM_SCALE) = range(10)


def sum_squares(G, g0, n):
    """sum(G[g0:g0+n] ** 2) in float64, for the global gradient norm."""
    s = 0.0
    for i in range(n):
        x = np.float64(G[np.uintp(g0 + i)])
        s += x * x
    return s


def scale(G, g0, n, c):
    """G[g0:g0+n] *= c (gradient clipping)."""
    for i in range(n):
        j = np.uintp(g0 + i)
        G[j] = G[j] * c


def sgd(P, p0, G, g0, n, buf, hp):
    """torch.optim.SGD (dampening 0): d = scale*g + wd*p; with momentum mu,
    buf = mu*buf + d (buf starts at 0, so the first step gives buf = d, as torch), and
    d = buf, or d + mu*buf with Nesterov; then p -= lr * d."""
    lr, mu, wd, c = hp[SGD_LR], hp[SGD_MOMENTUM], hp[SGD_WD], hp[SGD_SCALE]
    nesterov = hp[SGD_NESTEROV] != 0
    if mu == 0:
        for i in range(n):
            jp, jg = np.uintp(p0 + i), np.uintp(g0 + i)
            p = P[jp]
            P[jp] = p - lr * (c * G[jg] + wd * p)
    elif nesterov:
        for i in range(n):
            jp, jg = np.uintp(p0 + i), np.uintp(g0 + i)
            p = P[jp]
            d = c * G[jg] + wd * p
            b = mu * buf[i] + d
            buf[i] = b
            P[jp] = p - lr * (d + mu * b)
    else:
        for i in range(n):
            jp, jg = np.uintp(p0 + i), np.uintp(g0 + i)
            p = P[jp]
            b = mu * buf[i] + (c * G[jg] + wd * p)
            buf[i] = b
            P[jp] = p - lr * b


def adam(P, p0, G, g0, n, m, v, hp):
    """torch.optim.Adam / AdamW at step t, with the step-dependent numbers computed by the
    caller: g = scale*grad + l2*p (Adam's L2; 0 for AdamW); p *= decay (AdamW's
    1 - lr*wd; 1 for Adam); m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2;
    p -= step_size * m / (sqrt(v) / sqrt(1-b2^t) + eps), step_size = lr / (1-b1^t)."""
    step, b1, b1c, b2, b2c = hp[ADAM_STEP_SIZE], hp[ADAM_B1], hp[ADAM_1MB1], hp[ADAM_B2], \
        hp[ADAM_1MB2]
    root_bc2, eps, decay, l2, c = hp[ADAM_ROOT_BC2], hp[ADAM_EPS], hp[ADAM_DECAY], \
        hp[ADAM_L2], hp[ADAM_SCALE]
    for i in range(n):
        jp, jg = np.uintp(p0 + i), np.uintp(g0 + i)
        p = P[jp]
        g = c * G[jg] + l2 * p
        mi = b1 * m[i] + b1c * g
        vi = b2 * v[i] + b2c * g * g
        m[i] = mi
        v[i] = vi
        P[jp] = p * decay - step * mi / (np.sqrt(vi) / root_bc2 + eps)


# Argument kinds of each kernel, for the compiler: "F" a pointer to the buffer's float type,
# "i" int64, "d" float64; and the return kind ("d" or "" for none).
SIGNATURES = {
    "sum_squares": ("Fii", "d"),
    "scale": ("Fiid", ""),
    "sgd": ("FiFiiFF", ""),
    "adam": ("FiFiiFFF", ""),
}
