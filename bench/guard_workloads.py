"""Workloads of the guards' benchmarks (bench/test_guards.py, bench/report_guards.py).

* ``replay-*``: a tape without guards, as before guards existed (the README's tiny and small
  scalar graphs, bn.relu as a row): their time must not change.
* ``guarded-*``: a tape whose guards all hold, against the very same tape (same arrays, same
  kernel) with its guards removed, so the difference is the guards' check alone: the small
  graph with relu written as Python ``if`` (two guards), through the scalar fast path; an
  MLP loss whose Huber-like switch is a Python ``if`` (one guard), through the CallPlan path.
* ``adam-counter``: an optimiser loop that passes its step number ``i`` to the objective (an
  annealed penalty 0.99 ** i), as written, 100 steps: burnumba (``i`` is data: one trace),
  autograd (a trace every call, as always) and jax.jit (``i`` traced, as jax does) when jax
  is importable.
* ``readme-*``: each of the README's headline workloads (bench/workloads.py,
  tensor_workloads.py, transform_workloads.py, train_workloads.py), built exactly as its own
  report builds it, ``plain`` and ``holding-if``: the same loss with one Python decision on
  its value that always holds (``if value == value``: one NaN guard on the value, whose
  comparison leaves the tape). The pair's ratio is what a guard costs that workload: the
  guard's check after the forward sweep, as a program written with an ``if`` pays it.
"""
import functools

import numpy as np

from workloads import small, tiny


def python_relu(v):
    """relu as a program written for numpy: a Python branch (a guard under burnumba)."""
    return v if v > 0 else v * 0.0


def _scalar_replay(fn, point, relu):
    import burnumba as bn
    vg = bn.value_and_grad(functools.partial(fn, relu=relu), argnums=(0, 1))
    a, b = point
    vg(a, b)
    return lambda: vg(a, b)


def _without_guards(tape):
    """The same tape (its arrays, its kernel) with no guards."""
    import burnumba as bn
    from burnumba.ir import tapefile
    arrays, meta = tapefile.tape_state(tape)
    meta.pop("guards", None)
    return bn.Tape.from_arrays(arrays["I"], arrays["F0"], meta)


def _scalar_guarded(with_guards):
    import burnumba as bn
    vg = bn.value_and_grad(functools.partial(small, relu=python_relu), argnums=(0, 1))
    point = (-4.0, 2.0)
    tape = vg.trace(*point)
    assert tape.guards is not None and len(tape.guards[0]) == 2
    if not with_guards:
        tape = _without_guards(tape)
    run = tape.scalar_runner((0, 1), True, False)
    run(point)
    return lambda: run(point)


def mlp_loss(params, X, y):
    W1, b1, W2 = params
    h = np.tanh(X @ W1 + b1)
    r = h @ W2 - y
    loss = np.mean(r * r)
    if loss > 0.01:                 # Huber-like: the square root above a threshold
        loss = np.sqrt(loss) * 0.2
    return loss


def mlp_data(seed=0):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(256, 32)), rng.normal(size=256)
    params = (rng.normal(size=(32, 64)) / 6, np.zeros(64), rng.normal(size=64) / 8)
    return params, X, y


def _mlp(with_guards):
    import burnumba as bn
    from burnumba.tracing.plan import CallPlan
    from burnumba.tracing.signature import Signature
    params, X, y = mlp_data()
    tape = bn.value_and_grad(mlp_loss).trace(params, X, y)
    assert tape.guards is not None
    if not with_guards:
        tape = _without_guards(tape)
    sig = Signature((params, X, y), {}, (0,))
    plan = CallPlan(tape, sig, (0,), True, True, False)
    leaves = plan.match((params, X, y))
    plan.run(leaves)
    return lambda: plan.run(leaves)


def adam_loss(np_, w, i, X, y):
    z = X @ w
    nll = np_.mean(np_.logaddexp(0.0, z) - y * z)
    return nll + 1e-2 * 0.99 ** i * np_.sum(w * w)


def adam_data(seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(500, 20))
    y = (X @ rng.normal(size=20) > 0).astype(float)
    return np.zeros(20), X, y


STEPS = 100


def adam_loop(value_and_grad, w, X, y, steps=STEPS, lr=0.05):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for i in range(1, steps + 1):
        value, g = value_and_grad(w, i, X, y)
        g = np.asarray(g)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - lr * (m / (1 - 0.9 ** i)) / (np.sqrt(v / (1 - 0.999 ** i)) + 1e-8)
    return float(value), w


def _adam(system):
    w, X, y = adam_data()
    if system == "burnumba":
        import burnumba as bn
        vg = bn.value_and_grad(functools.partial(adam_loss, np))
    elif system == "autograd":
        import autograd
        import autograd.numpy as anp
        vg = autograd.value_and_grad(functools.partial(adam_loss, anp))
    else:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        vg = jax.jit(jax.value_and_grad(functools.partial(adam_loss, jnp)))
    adam_loop(vg, w, X, y, steps=3)
    return lambda: adam_loop(vg, w, X, y)


def holding_if(loss, on="loss", decide=True):
    """``loss`` with one Python decision that holds (NaN aside), a guard: on its value
    (``on="loss"``: the decision needs the whole forward sweep's values), or on the first
    element of its first argument (``on="input"``: the guard's own cost, nearly alone).
    ``decide=False``: the same wrapper, reading the same names and computing the same
    ``first``, without the decision (no guard): the pair's ratio is the guard's cost alone,
    and this one against the bare loss is what the check of the values a wrapper reads
    costs (transforms/captures.py: here the global ``_first_element``, and the builtins it
    calls, checked to stay unshadowed)."""
    @functools.wraps(loss)
    def guarded(*args, **kwargs):
        if on == "input":
            first = _first_element(args[0])
            if decide and not first == first:
                return loss(*args, **kwargs) * 1.0
            return loss(*args, **kwargs)
        value = loss(*args, **kwargs)
        if not decide or value == value:
            return value
        return value * 1.0
    return guarded


def _first_element(x):
    while isinstance(x, (dict, list, tuple)):
        x = next(iter(x.values())) if isinstance(x, dict) else x[0]
    return x if np.ndim(x) == 0 else x.reshape(-1)[0]


def _scalar_call(fn, guarded, decide=True):
    import burnumba as bn
    relu = bn.relu if fn is small else None
    loss = functools.partial(fn, relu=relu)
    vg = bn.value_and_grad(holding_if(loss, guarded, decide) if guarded else loss,
                           argnums=(0, 1))
    a, b = (-4.0, 2.0) if fn is small else (-41.0, 2.0)
    vg(a, b)
    return functools.partial(vg, a, b)


def _readme_tensor(workload, guarded, decide=True):
    import burnumba as bn
    import tensor_workloads as tw
    ops = tw.burnumba_ops()
    params = tw.params_for(workload)
    data = tw.data_for(workload, 64)
    loss = tw.workload_loss(workload, ops)
    vg = bn.value_and_grad(holding_if(loss, guarded, decide) if guarded else loss, argnums=0)
    vg(params, *data)
    return functools.partial(vg, params, *data)


def _readme_transform(case, guarded, decide=True):
    import burnumba as bn
    import transform_workloads as tw
    d = tw.data_for(case)
    wrap = functools.partial(holding_if, on=guarded, decide=decide) if guarded else (
        lambda f: f)
    if case == "hvp-rosenbrock":
        f = wrap(tw.rosenbrock)
        call = functools.partial(bn.hvp, f, d["x"], d["v"])
    elif case == "hessian-logreg":
        call = functools.partial(bn.hessian(wrap(tw.logreg_loss)), d["w"], d["X"], d["y"])
    elif case == "per-sample-mlp":
        per_sample = bn.vmap(bn.grad(wrap(tw.mlp_loss)), in_axes=(None, 0, 0))
        call = functools.partial(per_sample, tw.mlp_params(d), d["X"], d["y"])
    else:
        f = wrap(tw.kmeans)
        grad, hess = bn.grad(f), bn.hessian(f)
        c, x = d["c"], d["x"]

        def call():
            return grad(c, x), np.diag(hess(c, x).reshape(c.size, c.size))
    call()
    return call


def _readme_train(model, batch, guarded, decide=True):
    """One optim.Trainer step (AdamW) in float32, as report_train's burnumba row."""
    from burnumba import nn, optim
    import train_workloads as trw
    data = trw.load_data(model)
    params = trw.init_params(model, vocab_size=data.vocab_size)
    X, Y = trw.sample_batches(data, batch, 1)
    net = trw._burnumba_net(nn, model, data.vocab_size)
    opt = optim.AdamW(lr=trw.ADAMW["lr"], betas=trw.ADAMW["betas"], eps=trw.ADAMW["eps"],
                      weight_decay=trw.ADAMW["weight_decay"])
    p = {k: v.astype(np.float32) for k, v in params.items()}
    loss = holding_if(net.loss, guarded, decide) if guarded else net.loss
    trainer = optim.Trainer(loss, p, opt, X[0], Y[0])
    trainer.step(X[0], Y[0])
    return functools.partial(trainer.step, X[0], Y[0])


# the README's headline workloads: name -> make(guarded)
README = {
    "tiny": functools.partial(_scalar_call, tiny),
    "small": functools.partial(_scalar_call, small),
    "mlp-b64": functools.partial(_readme_tensor, "mlp"),
    "gpt-block-b64": functools.partial(_readme_tensor, "gpt-block"),
    "hvp-rosenbrock": functools.partial(_readme_transform, "hvp-rosenbrock"),
    "hessian-logreg": functools.partial(_readme_transform, "hessian-logreg"),
    "per-sample-mlp": functools.partial(_readme_transform, "per-sample-mlp"),
    "hessdiag-kmeans": functools.partial(_readme_transform, "hessdiag-kmeans"),
    "gpt-step-b8": functools.partial(_readme_train, "gpt", 8),
    "makemore-step-b64": functools.partial(_readme_train, "makemore", 64),
}

CASES = {
    "replay-tiny": lambda: _scalar_replay(tiny, (-41.0, 2.0), None),
    "replay-small": lambda: _scalar_replay(small, (-4.0, 2.0), __import__("burnumba").relu),
    "guarded-small-if-relu": lambda: _scalar_guarded(True),
    "unguarded-small-if-relu": lambda: _scalar_guarded(False),
    "guarded-mlp-huber": lambda: _mlp(True),
    "unguarded-mlp-huber": lambda: _mlp(False),
    "adam-counter-burnumba": lambda: _adam("burnumba"),
    "adam-counter-autograd": lambda: _adam("autograd"),
    "adam-counter-jax": lambda: _adam("jax"),
}
MODULES = {"adam-counter-autograd": "autograd", "adam-counter-jax": "jax"}
GROUPS = {"replay-tiny": "guards-a-replay", "replay-small": "guards-a-replay",
          "guarded-small-if-relu": "guards-b-small", "unguarded-small-if-relu": "guards-b-small",
          "guarded-mlp-huber": "guards-b-mlp", "unguarded-mlp-huber": "guards-b-mlp",
          "adam-counter-burnumba": "guards-c-adam", "adam-counter-autograd": "guards-c-adam",
          "adam-counter-jax": "guards-c-adam"}
