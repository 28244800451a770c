"""What a custom derivative rule costs: bn.grad of a function with a rule against bn.grad of
the same function without it (the rule's maths is the autodiff's own, so the two compute
the same numbers); a table.

    .venv/bin/python bench/report_custom.py [--quick]

Standalone, as report_guards.py (not a stage of bench/report.py: the main command's time
is kept for the comparisons with the other engines). Each figure is the best of 7 repeats
of (loop time / N), N chosen so that a repeat takes about 0.2 s (0.02 s with --quick): the
best, not the median, because the figures compared differ by a few percent and other
processes on a shared machine only add time. The ratio column is the with-rule time over
the without-rule time: 1 means the rule is free.

The cases:

* ``mlp-softplus``: an MLP loss (64 x 16 batch, 16 -> 32 -> 1) whose activation is a
  softplus with a custom_vjp (the stable sigmoid rule), through the call-plan path (arrays).
* ``mlp-logsumexp``: a softmax cross-entropy over 10 classes whose logsumexp is an
  ``extend.primitive`` with ``defvjp``, autograd's style.
* ``scalar-softplus``: the small scalar graph of Python floats with one custom_jvp.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def per_call(call, target):
    n, t = 1, 0.0
    while t < target / 10:
        start = time.perf_counter()
        for _ in range(n):
            call()
        t = time.perf_counter() - start
        n *= 4
    n = max(1, int(n / 4 * target / max(t, 1e-9) / 4))
    times = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(n):
            call()
        times.append((time.perf_counter() - start) / n)
    return min(times)


def _softplus(with_rule):
    import burnumba as bn

    def softplus(x):
        return np.logaddexp(0.0, x)
    if not with_rule:
        return softplus
    f = bn.custom_vjp(softplus)
    f.defvjp(lambda x: (softplus(x), x), lambda x, g: (g / (1.0 + np.exp(-x)),))
    return f


def _logsumexp(with_rule):
    from burnumba.extend import defvjp, primitive

    def logsumexp(z):
        m = np.max(z, axis=1, keepdims=True)
        return m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    if not with_rule:
        return logsumexp
    f = primitive(logsumexp)
    defvjp(f, lambda ans, z: lambda g: g * np.exp(z - ans))
    return f


def mlp_softplus(with_rule):
    import burnumba as bn
    act = _softplus(with_rule)

    def loss(params, X, y):
        W1, b1, W2 = params
        r = act(X @ W1 + b1) @ W2 - y
        return np.mean(r * r)
    rng = np.random.default_rng(0)
    params = [rng.normal(size=(16, 32)) * 0.3, np.zeros(32), rng.normal(size=(32,)) * 0.3]
    X, y = rng.normal(size=(64, 16)), rng.normal(size=64)
    g = bn.grad(loss)
    g(params, X, y)
    return lambda: g(params, X, y), lambda: loss(params, X, y)


def mlp_logsumexp(with_rule):
    import burnumba as bn
    lse = _logsumexp(with_rule)

    def loss(W, X, onehot):
        z = X @ W
        return np.mean(lse(z)[:, 0] - np.sum(z * onehot, axis=1))
    rng = np.random.default_rng(1)
    W, X = rng.normal(size=(16, 10)) * 0.3, rng.normal(size=(64, 16))
    onehot = np.eye(10)[rng.integers(0, 10, size=64)]
    g = bn.grad(loss)
    g(W, X, onehot)
    return lambda: g(W, X, onehot), lambda: loss(W, X, onehot)


def scalar_softplus(with_rule):
    import burnumba as bn
    act = _softplus(with_rule)

    def f(a, b):
        c = a * b + np.sin(a)
        return act(c) * b + c * c
    g = bn.grad(f, argnums=(0, 1))
    g(0.3, -1.2)
    return lambda: g(0.3, -1.2), lambda: f(0.3, -1.2)


CASES = {"mlp-softplus": mlp_softplus, "mlp-logsumexp": mlp_logsumexp,
         "scalar-softplus": scalar_softplus}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    args = parser.parse_args()
    target = 0.02 if args.quick else 0.2
    print(f"{'case':18s} {'with rule':>12s} {'without':>12s}  ratio   value (both)")
    for case in args.cases:
        with_call, with_value = CASES[case](True)
        without_call, without_value = CASES[case](False)
        t_with, t_without = per_call(with_call, target), per_call(without_call, target)
        # both functions compute the same value; the gradients agree (tests/test_custom.py)
        print(f"{case:18s} {t_with * 1e6:9.2f} us {t_without * 1e6:9.2f} us  "
              f"{t_with / t_without:5.2f}   {float(with_value()):.6g} "
              f"{float(without_value()):.6g}")


if __name__ == "__main__":
    main()
