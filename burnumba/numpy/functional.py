"""Ops that numpy does not have, with the names jax.nn / scipy.special / torch use.

Each is one row of the op table (softmax, log_softmax, logsumexp, cross_entropy, layer_norm,
gelu) or a composite of rows (masked_fill). On plain numpy arrays they compute with numpy.
"""
import math

import numpy as np

from .._errors import InputError, ShapeError, UnsupportedOpError, at_user_site
from ..tracing.dispatch import implements_reduce
from ..tracing.tracer import Var, normalize_axis
from .elementwise import where
from .shapes import expand_dims, reshape


def _np_logsumexp(x, axis, keepdims):
    mx = np.max(x, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    out = np.log(np.sum(np.exp(x - mx), axis=axis, keepdims=True)) + mx
    return out if keepdims else np.squeeze(out, axis=axis)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``, computed stably (one fused node).

    >>> bn.softmax(np.array([1.0, 2.0, 3.0]))              # doctest: +SKIP
    """
    if not isinstance(x, Var):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)
    return x._b.axis("softmax", x, axis, x.shape)


def causal_softmax(x, scale=1.0):
    """Attention weights: ``softmax(scale * x)`` over the last axis of x (..., T, T), where
    row t sees only columns j <= t (the rest are 0). One fused node: the same as
    ``softmax(masked_fill(scale * x, np.triu(ones((T, T), bool), 1), -inf))``, without the
    mask's passes and without exponentiating the masked half. ``scale`` > 0, e.g. 1/sqrt(d).
    """
    scale = float(scale)
    shape = getattr(x, "shape", ())
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(at_user_site(
            f"causal_softmax needs (..., T, T) scores, got shape {shape}"))
    if not scale > 0.0:
        raise InputError(at_user_site(
            f"causal_softmax: scale must be > 0, got {scale}; pass 1 / sqrt(head size)"))
    if not isinstance(x, Var):
        # the row's semantics: the future is never read (exactly 0, whatever it holds), as
        # jax.nn.softmax(scale * x, where=~future)
        future = np.triu(np.ones(shape[-2:], dtype=bool), 1)
        z = np.where(future, -np.inf, np.asarray(x, dtype=float) * scale)
        with np.errstate(invalid="ignore"):
            e = np.where(future, 0.0, np.exp(z - np.max(z, axis=-1, keepdims=True)))
            return np.where(future, 0.0, e / np.sum(e, axis=-1, keepdims=True))
    return x._b.axis("causal_softmax", x, -1, x.shape, imm=scale)


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along ``axis`` (one fused node)."""
    if not isinstance(x, Var):
        # shifted by the raw maximum, as the row and jax.nn.log_softmax: an +inf logit makes
        # the line NaN (scipy.special's finite-shift form would give -inf beside it)
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore"):
            shifted = x - np.max(x, axis=axis, keepdims=True)
            return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return x._b.axis("log_softmax", x, axis, x.shape)


def logsumexp(x, axis=-1, keepdims=False):
    """log(sum(exp(x))) over ``axis``, by default the last one, like softmax and log_softmax
    here (scipy.special.logsumexp and jax default to every element: pass axis=None)."""
    if not isinstance(x, Var):
        return _np_logsumexp(np.asarray(x), axis, keepdims)
    if axis is None:
        y = x._b.axis("logsumexp", reshape(x, (x.size,)), 0, ())
        return reshape(y, (1,) * x.ndim) if keepdims else y
    ax = normalize_axis(axis, x.ndim, "logsumexp")
    y = x._b.axis("logsumexp", x, ax, x.shape[:ax] + x.shape[ax + 1:])
    return expand_dims(y, ax) if keepdims else y


@implements_reduce(np.logaddexp)
def _logaddexp_reduce(a, axis=0, keepdims=False):
    """np.logaddexp.reduce: log(sum(exp(a))) over ``axis`` (reduce's default 0; None: every
    element), one fused logsumexp node."""
    if isinstance(axis, tuple):
        raise UnsupportedOpError(at_user_site(
            "numpy.logaddexp.reduce over a tuple of axes of a traced value: reduce one axis "
            "at a time, or reshape first"))
    return logsumexp(a, axis=axis, keepdims=keepdims)


@implements_reduce(np.logaddexp2)
def _logaddexp2_reduce(a, axis=0, keepdims=False):
    """np.logaddexp2.reduce: log2(sum(2 ** a)) = logsumexp(a ln 2) / ln 2."""
    return _logaddexp_reduce(a * math.log(2.0), axis, keepdims) / math.log(2.0)


def cross_entropy(logits, targets):
    """Mean over rows of ``-log_softmax(logits)[target]``; fused and numerically stable.

    ``logits`` has shape (..., classes), ``targets`` holds integer class indices with the
    shape of ``logits`` without its last axis. Pass targets as an argument outside argnums:
    they are then tape inputs, so new targets do not retrace.
    """
    if not isinstance(logits, Var) and not isinstance(targets, Var):
        lp = log_softmax(np.asarray(logits, dtype=float))
        t = np.asarray(targets)
        return -np.mean(np.take_along_axis(lp, t[..., None], axis=-1))
    b = (logits if isinstance(logits, Var) else targets)._b
    logits, targets = b.lift(logits), b.lift(targets)
    if b.need[targets.node]:
        raise UnsupportedOpError(at_user_site(
            "cross_entropy: targets must be integer data (an argument outside argnums or a "
            "constant array), not a value gradients flow through"))
    if logits.ndim == 0 or targets.shape != logits.shape[:-1]:
        raise ShapeError(at_user_site(
            f"cross_entropy: logits of shape {logits.shape} need targets of shape "
            f"{logits.shape[:-1]}, got {targets.shape}"))
    rows, classes = math.prod(logits.shape[:-1]), logits.shape[-1]
    if rows == 0 or classes == 0:
        raise ShapeError(at_user_site(f"cross_entropy of empty logits {logits.shape}"))
    node = b.add("cross_entropy", (), logits.node, targets.node, params=[rows, classes],
                 imm=1.0 / rows, need=b.need[logits.node])
    return Var(b, node, ())


def layer_norm(x, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) over the last axis, then ``* weight + bias`` if given."""
    if not isinstance(x, Var):
        mu = np.mean(x, axis=-1, keepdims=True)
        y = (x - mu) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps)
    else:
        y = x._b.axis("layer_norm", x, -1, x.shape, imm=eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def gelu(x, approximate=True):
    """GELU: the tanh form when ``approximate`` (GPT-2's and jax.nn.gelu's default), else
    the exact ``0.5 * x * (1 + erf(x / sqrt(2)))`` (torch's default)."""
    name = "gelu_tanh" if approximate else "gelu_erf"
    if not isinstance(x, Var):
        if approximate:
            return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
        from math import erf
        return 0.5 * x * (1.0 + np.vectorize(erf)(np.asarray(x) / math.sqrt(2.0)))
    return x._b.map(name, x)


def masked_fill(x, mask, value):
    """``x`` with ``value`` where ``mask`` is true (torch's masked_fill), e.g. a causal mask:
    ``masked_fill(scores, np.triu(np.ones((T, T), bool), 1), -np.inf)``."""
    return where(mask, value, x)
