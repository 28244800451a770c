"""autograd's ``misc.optimizers``: ``sgd``, ``rmsprop`` and ``adam`` as plain loops over a
gradient function, with autograd's signatures and defaults, so a program written for autograd
runs with only its import changed.

Each takes ``grad(params, i)`` (the gradient of the objective at ``params`` on iteration
``i``, typically ``bn.grad(objective)`` of an ``objective(params, i)``), the initial
parameters as a pytree (dicts, lists and tuples of arrays), an optional
``callback(params, i, g)`` called before each step with the current parameters and gradient,
and returns the final parameters in the same pytree. The parameters are flattened into one
vector (``bn.flatten``), so each step is a few vector operations.

An iteration counter passed to a ``bn.grad`` function is data, not part of its signature: the
objective is traced once, not once per ``i``. For training loops with batches, weight decay,
schedules and checkpoints, ``burnumba.optim`` (``Adam``, ``SGD``, ``Trainer``) is the
fuller tool.
"""
import functools

import numpy as np

from ..tools.check import flatten

__all__ = ["sgd", "rmsprop", "adam"]


def _on_vectors(optimize):
    """Run ``optimize``, written for 1-D float vectors, on a pytree of parameters."""
    @functools.wraps(optimize)
    def run(grad, x0, callback=None, *args, **kwargs):
        x, unflatten = flatten(x0)

        def vector_grad(v, i):
            return np.asarray(flatten(grad(unflatten(v), i))[0], dtype=np.float64)

        vector_callback = None
        if callback:
            def vector_callback(v, i, g):
                return callback(unflatten(v), i, unflatten(g))
        return unflatten(optimize(vector_grad, np.asarray(x, dtype=np.float64),
                                  vector_callback, *args, **kwargs))
    return run


@_on_vectors
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Gradient descent with momentum: ``v <- mass v - (1 - mass) g``, ``x <- x + step v``."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@_on_vectors
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """RMSprop: a running mean of g^2 (started at 1) scales each step,
    ``x <- x - step g / (sqrt(mean g^2) + eps)``."""
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@_on_vectors
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999,
         eps=10**-8):
    """Adam (Kingma and Ba, 2015): moment estimates m, v of g and g^2, bias-corrected by
    ``1 - b^(i+1)``, and ``x <- x - step mhat / (sqrt(vhat) + eps)``."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1**(i + 1))
        vhat = v / (1 - b2**(i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x
