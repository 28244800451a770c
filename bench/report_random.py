"""Random draws inside traced functions (docs/guide/randomness.md): what they cost.

1. A variational-inference step, run as written: the gradient of a reparameterised ELBO
   estimate (mean-field Gaussian posterior of a Bayesian logistic regression) with fresh
   noise on every call, by burnumba (traced once, the draws replayed from the user's
   generator), HIPS autograd (traced on every call) and jax.jit (explicit keys, split on
   every call, as JAX asks).
2. What the draw machinery costs where there is no draw: a small graph's replay (the call
   plan and the scalar fast path) and a trace. Run it on this branch and on the commit before
   (``git stash`` / another worktree) to compare.

    python bench/report_random.py [--quick]

Prints times (best of 7 repeats, microseconds per call); asserts nothing.
"""
import timeit

import numpy as np

import burnumba as bn

D, N, S = 10, 200, 16           # weights, data points, Monte Carlo samples per step


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    y = (X @ rng.normal(size=D) + 0.5 * rng.normal(size=N) > 0).astype(float)
    return X, y


def make_burnumba(X, y, rng):
    def neg_elbo(mu, log_sigma):
        w = mu + np.exp(log_sigma) * rng.standard_normal((S, D))     # fresh every call
        logits = w @ X.T                                             # (S, N)
        loglik = np.sum(y * logits - np.logaddexp(0.0, logits)) / S
        logprior = -0.5 * np.sum(w ** 2) / S
        return -(loglik + logprior + np.sum(log_sigma))
    return bn.grad(neg_elbo, argnums=(0, 1))


def make_autograd(X, y, rng):
    import autograd
    import autograd.numpy as anp

    def neg_elbo(mu, log_sigma):
        w = mu + anp.exp(log_sigma) * rng.standard_normal((S, D))
        logits = anp.dot(w, X.T)
        loglik = anp.sum(y * logits - anp.logaddexp(0.0, logits)) / S
        logprior = -0.5 * anp.sum(w ** 2) / S
        return -(loglik + logprior + anp.sum(log_sigma))
    g = autograd.grad(lambda params: neg_elbo(*params))      # one call of f per step
    return lambda mu, log_sigma: g((mu, log_sigma))


def make_jax(X, y):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def neg_elbo(mu, log_sigma, key):
        w = mu + jnp.exp(log_sigma) * jax.random.normal(key, (S, D))
        logits = w @ Xj.T
        loglik = jnp.sum(yj * logits - jnp.logaddexp(0.0, logits)) / S
        logprior = -0.5 * jnp.sum(w ** 2) / S
        return -(loglik + logprior + jnp.sum(log_sigma))
    g = jax.jit(jax.grad(neg_elbo, argnums=(0, 1)))
    state = {"key": jax.random.PRNGKey(0)}

    def step(mu, log_sigma):
        state["key"], sub = jax.random.split(state["key"])
        return jax.block_until_ready(g(mu, log_sigma, sub))
    return step


def timer(quick):
    """best(fn, *args, number=): microseconds per call, the best of 7 loops of ``number``
    calls (with ``quick``: of 3 loops a fifth as long)."""
    repeats, scale = (3, 0.2) if quick else (7, 1.0)

    def best(fn, *args, number=200):
        fn(*args)                                      # trace / compile
        n = max(1, int(number * scale))
        return min(timeit.repeat(lambda: fn(*args), number=n, repeat=repeats)) / n * 1e6
    return best


def vi_step(best):
    X, y = data()
    mu, log_sigma = np.zeros(D), np.full(D, -1.0)
    print(f"VI step (D={D}, N={N}, S={S} samples), the ELBO gradient with fresh noise per call:")
    rows = [("burnumba", make_burnumba(X, y, np.random.default_rng(1)))]
    try:
        rows.append(("autograd", make_autograd(X, y, np.random.default_rng(1))))
    except ImportError:
        pass
    try:
        rows.append(("jax.jit (explicit keys)", make_jax(X, y)))
    except ImportError:
        pass
    times = {}
    for name, fn in rows:
        times[name] = best(fn, mu, log_sigma, number=50 if name == "autograd" else 500)
        print(f"  {name:26s} {times[name]:9.1f} us/step")
    if "autograd" in times:        # the same seed: the untraced program's gradients
        a = make_burnumba(X, y, np.random.default_rng(5))
        b = make_autograd(X, y, np.random.default_rng(5))
        same = all(np.allclose(u, v, rtol=1e-10) for _ in range(3)
                   for u, v in zip(a(mu, log_sigma), b(mu, log_sigma)))
        print(f"  burnumba's gradients equal autograd's on the same seed, 3 calls: {same}")


def overhead(best):
    x = np.linspace(-1.0, 1.0, 8)
    g = bn.grad(lambda x: np.sum(np.tanh(x) * x))
    s = bn.grad(lambda a, b: a * b + np.sin(a), argnums=(0, 1))
    print("No draws (the paths this branch must not slow down):")
    print(f"  grad, 8-vector, call plan   {best(g, x, number=20000):7.2f} us/call")
    print(f"  grad, two floats, fast path {best(s, 0.3, 0.7, number=20000):7.2f} us/call")
    f = lambda x: np.sum(np.tanh(x) * x)                               # noqa: E731
    print(f"  bn.trace of a 3-node graph  {best(lambda: bn.trace(f, x), number=200):7.2f} "
          "us/trace")
    h = bn.grad(lambda x: np.sum(np.tanh(x) * np.random.standard_normal(8)))
    print(f"  the same grad with one draw {best(h, x, number=20000):7.2f} us/call")


if __name__ == "__main__":
    import sys
    timed = timer("--quick" in sys.argv[1:])
    vi_step(timed)
    overhead(timed)
