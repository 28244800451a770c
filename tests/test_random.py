"""Random draws inside traced functions are drawn again on every call (issue #30 item 3).

Each source kind (numpy's global RNG, a captured RandomState, a captured Generator, a
generator reached through a helper, a Generator argument, ``self.rng``) under each
transformation: two calls give different samples; re-seeding gives the numbers of the
untraced program (values, and gradients from HIPS autograd on the same draws), call after
call. Then the reparameterised VI estimator, the refused sources, and threads.
"""
import pickle
import threading
import time
import types

import numpy as np
import pytest

import burnumba as bn

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")


class _Model:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def noise(self, n):
        return self.rng.normal(size=n)


def _global(seed):
    np.random.seed(seed)
    return lambda r, n: np.random.randn(n), ()


def _random_state(seed):
    rs = np.random.RandomState(seed)
    return lambda r, n: rs.standard_normal(n), ()


def _generator(seed):
    gen = np.random.default_rng(seed)
    return lambda r, n: gen.normal(0.0, 1.0, size=n), ()


def _helper_closure(seed):
    gen = np.random.default_rng(seed)

    def helper(n):                     # the generator sits in a helper's closure
        return gen.uniform(-1.0, 1.0, size=n)
    return lambda r, n: helper(n), ()


def _argument(seed):
    return lambda r, n: r.standard_normal(n), (np.random.default_rng(seed),)


def _self_rng(seed):
    model = _Model(seed)
    return lambda r, n: model.noise(n), ()


SOURCES = {"global np.random": _global, "captured RandomState": _random_state,
           "captured Generator": _generator, "generator in a helper": _helper_closure,
           "Generator argument": _argument, "self.rng": _self_rng}


def scalar_f(m, noise):
    """A scalar function of x with two draws (m: numpy or autograd.numpy)."""
    return lambda x, *r: m.sum(m.sin(x) * noise(r[0] if r else None, 3)
                               + (x * noise(r[0] if r else None, 3)) ** 2)


def vector_f(m, noise):
    return lambda x, *r: m.tanh(x) * noise(r[0] if r else None, 3) + x ** 2


X = np.array([0.3, -1.2, 0.8])
V = np.array([1.0, -0.5, 2.0])

# transformation -> (burnumba's call, the reference: autograd / plain numpy on the same draws)
TRANSFORMS = {
    "grad": (lambda nz, x, e: bn.grad(scalar_f(np, nz))(x, *e),
             lambda nz, x, e: autograd.grad(scalar_f(anp, nz))(x, *e)),
    "value_and_grad": (lambda nz, x, e: bn.value_and_grad(scalar_f(np, nz))(x, *e),
                       lambda nz, x, e: autograd.value_and_grad(scalar_f(anp, nz))(x, *e)),
    "vjp": (lambda nz, x, e: bn.vjp(_bound(vector_f(np, nz), e), x)[1](V)[0],
            lambda nz, x, e: autograd.make_vjp(vector_f(anp, nz))(x, *e)[0](V)),
    "jvp": (lambda nz, x, e: bn.jvp(_bound(vector_f(np, nz), e), (x,), (V,)),
            lambda nz, x, e: (lambda J, y: (y, J @ V))(
                *_jacobian_and_value(vector_f(anp, nz), x, e))),
    "jacobian": (lambda nz, x, e: bn.jacobian(vector_f(np, nz))(x, *e),
                 lambda nz, x, e: autograd.jacobian(vector_f(anp, nz))(x, *e)),
    "hessian": (lambda nz, x, e: bn.hessian(scalar_f(np, nz))(x, *e),
                lambda nz, x, e: autograd.hessian(scalar_f(anp, nz))(x, *e)),
    "nested grad": (lambda nz, x, e: _nested(_bound(scalar_f(np, nz), e), x),
                    lambda nz, x, e: autograd.grad(lambda x: anp.sum(
                        autograd.grad(scalar_f(anp, nz))(x, *e) ** 2))(x)),
    "trace + Tape call": (None, None),          # _calls and _reference: one tape, called
}


def _nested(inner, x):
    return bn.grad(lambda x: np.sum(bn.grad(inner)(x) ** 2))(x)


def _bound(f, e):
    """f of x alone, the generator argument (if any) captured in a closure cell (a tuple of
    generators in a cell is a container, which burnumba refuses rather than replays)."""
    if not e:
        return f
    gen = e[0]
    return lambda x: f(x, gen)


def _jacobian_and_value(f, x, e):
    """autograd's Jacobian and value from one call of f (one set of draws)."""
    vjp, y = autograd.make_vjp(f)(x, *e)
    return np.stack([vjp(row) for row in np.eye(y.size)]), y


def _close(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            _close(u, v)
        return
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def _calls(transform, make_source, seed, calls=3):
    """``calls`` calls of one transformed function, the source seeded with ``seed``."""
    ours, _ = TRANSFORMS[transform]
    noise, extra = make_source(seed)
    if transform == "trace + Tape call":
        f = scalar_f(np, noise)
        tape = bn.trace(f, X, *extra)            # the trace's run draws once
        return [tape(X, *extra) for _ in range(calls)]
    fn = {"grad": lambda: bn.grad(scalar_f(np, noise)),
          "value_and_grad": lambda: bn.value_and_grad(scalar_f(np, noise)),
          "jacobian": lambda: bn.jacobian(vector_f(np, noise)),
          "hessian": lambda: bn.hessian(scalar_f(np, noise))}.get(transform)
    if fn is not None:                             # one transformed function, called again
        g = fn()
        return [g(X, *extra) for _ in range(calls)]
    return [ours(noise, X, extra) for _ in range(calls)]


def _reference(transform, make_source, seed, calls=3):
    _, ref = TRANSFORMS[transform]
    noise, extra = make_source(seed)
    if transform == "trace + Tape call":
        f = scalar_f(np, noise)
        f(X, *extra)                               # the trace's own run
        return [f(X, *extra) for _ in range(calls)]
    return [ref(noise, X, extra) for _ in range(calls)]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_fresh_draws_equal_the_untraced_program(source, transform):
    make = SOURCES[source]
    got = _calls(transform, make, 7)
    want = _reference(transform, make, 7)
    for g, w in zip(got, want):          # seeded alike: numpy's numbers, call after call
        _close(g, w)
    first = np.concatenate([np.ravel(p) for p in (got[0] if isinstance(got[0], tuple)
                                                  else (got[0],))])
    second = np.concatenate([np.ravel(p) for p in (got[1] if isinstance(got[1], tuple)
                                                   else (got[1],))])
    assert not np.array_equal(first, second)      # a new sample on every call
    again = _calls(transform, make, 7)
    for g, w in zip(again, got):                  # the same seed, the same numbers
        _close(g, w)


@pytest.mark.parametrize("source", list(SOURCES))
def test_vmap_draws_per_sample_in_loop_order(source):
    """vmap of grad and of a plain function: per-sample draws in the order of a Python loop
    over the samples; the wide (lanes) form at 200 samples too."""
    for size in (5, 200):
        xs = np.linspace(-1.0, 1.0, 3 * size).reshape(size, 3)
        noise, extra = SOURCES[source](3)
        in_axes = (0,) + (None,) * len(extra)
        got = bn.vmap(bn.grad(scalar_f(np, noise)), in_axes=in_axes)(xs, *extra)
        noise, extra = SOURCES[source](3)
        want = np.stack([autograd.grad(scalar_f(anp, noise))(x, *extra) for x in xs])
        np.testing.assert_allclose(got, want, rtol=1e-12)
        noise, extra = SOURCES[source](3)
        got = bn.vmap(vector_f(np, noise), in_axes=in_axes)(xs, *extra)
        noise, extra = SOURCES[source](3)
        want = np.stack([vector_f(np, noise)(x, *extra) for x in xs])
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert not np.allclose(got[0], got[1] - xs[1] ** 2 + xs[0] ** 2)


@pytest.mark.parametrize("kind", ["Generator", "RandomState"])
@pytest.mark.parametrize("method, params, grads", [
    ("normal", (0.4, 1.7), lambda z, loc, scale: (1.0, z)),
    ("uniform", (-0.5, 2.0), lambda u, low, high: (1.0 - u, u)),
    ("exponential", (1.3,), lambda e, scale: (e,)),
    ("lognormal", (0.2, 0.6), lambda z, mean, sigma: (np.exp(mean + sigma * z),
                                                      np.exp(mean + sigma * z) * z)),
])
def test_traced_parameters_are_reparameterised_with_numpys_bits(kind, method, params, grads):
    """rng.normal(mu, sigma) with traced mu, sigma: numpy's very numbers (the standard
    variate drawn with the same stream consumption, numpy's formula as traced ops) and the
    reparameterisation gradients."""
    make = (lambda: np.random.default_rng(11)) if kind == "Generator" else \
        (lambda: np.random.RandomState(11))
    standard = {"normal": "standard_normal", "lognormal": "standard_normal",
                "exponential": "standard_exponential",
                "uniform": "random" if kind == "Generator" else "random_sample"}[method]
    gen = make()
    f = bn.value_and_grad(lambda *p: np.sum(getattr(gen, method)(*p, size=4)),
                          argnums=tuple(range(len(params))))
    plain, ref = make(), make()
    for _ in range(3):
        value, g = f(*params)
        want = np.sum(getattr(plain, method)(*params, size=4))
        # bit for bit, but for lognormal's exp (burnumba's kernel and libm may differ by
        # an ulp)
        np.testing.assert_allclose(value, want, rtol=0 if method != "lognormal" else 1e-15)
        z = getattr(ref, standard)(size=4)
        for got, want in zip(g, grads(z, *params)):
            np.testing.assert_allclose(got, np.sum(want * np.ones(4)), rtol=1e-12)


@pytest.mark.parametrize("kind", ["Generator", "RandomState", "global"])
def test_choice_from_traced_probabilities_is_numpys_draw(kind):
    """REINFORCE as written: a = rng.choice(n, p=softmax(theta)), the loss -r(a) log p[a].
    Each call draws numpy's very action (one uniform per sample, numpy's cdf search), the
    index is read at run time (p[a] takes no guard; the Python list of rewards does), and
    the gradient is the score function's."""
    make = {"Generator": lambda: np.random.default_rng(5),
            "RandomState": lambda: np.random.RandomState(5),
            "global": lambda: (np.random.seed(5), np.random)[1]}[kind]
    rewards = [1.0, 0.0, -1.0, 0.5]

    def softmax(theta):
        e = np.exp(theta - np.max(theta))
        return e / np.sum(e)

    gen = make()

    def loss(theta):
        p = softmax(theta)
        a = gen.choice(4, p=p)
        b = gen.choice(np.array([10.0, 20.0, 30.0, 40.0]), size=(2, 3),
                       p=[p[0], p[1], p[2], p[3]])
        return -rewards[a] * np.log(p[a]) + 1e-3 * np.sum(b) * np.sum(theta)

    g = bn.value_and_grad(loss)
    theta = np.array([0.3, -0.1, 0.2, 0.0])
    plain = make() if kind != "global" else np.random.RandomState(5)   # the global's stream
    for _ in range(12):
        value, grad = g(theta)
        p = softmax(theta)
        a = plain.choice(4, p=p)
        b = plain.choice(np.array([10.0, 20.0, 30.0, 40.0]), size=(2, 3), p=p)
        want = -rewards[a] * (np.eye(4)[a] - p) + 1e-3 * np.sum(b)
        assert value == pytest.approx(-rewards[a] * np.log(p[a]) + 1e-3 * np.sum(b)
                                      * np.sum(theta), rel=1e-12)
        np.testing.assert_allclose(grad, want, rtol=1e-12, atol=1e-15)
    assert len(g.variants[next(iter(g.variants))]) <= 4        # one per reward read


@pytest.mark.parametrize("kind", ["Generator", "RandomState", "global"])
def test_shuffle_inside_the_function_is_numpys_order_on_every_call(kind):
    """np.random.shuffle(idx) of a local index array (a minibatch drawn inside the loss):
    a permutation draw with the same stream consumption, the local rebound to the traced
    permutation (promote.rebind_local), so each call shuffles anew in numpy's order; a
    traced array shuffled in place too."""
    make = {"Generator": lambda: np.random.default_rng(8),
            "RandomState": lambda: np.random.RandomState(8),
            "global": lambda: (np.random.seed(8), np.random)[1]}[kind]
    data = np.linspace(-1.0, 1.0, 30).reshape(10, 3)
    gen = make()

    def loss(w):
        idx = np.arange(10)
        gen.shuffle(idx)
        v = w * np.arange(1.0, 4.0)
        gen.shuffle(v)
        return np.sum((data[idx[:4]] @ w) ** 2) + v[0]

    g = bn.grad(loss)
    plain = make() if kind != "global" else np.random.RandomState(8)
    w = np.array([0.5, -1.0, 2.0])
    grads = []
    for _ in range(4):
        idx = np.arange(10)
        plain.shuffle(idx)
        order = np.arange(3)
        plain.shuffle(order)
        batch = data[idx[:4]]
        want = 2 * batch.T @ (batch @ w)
        want[order[0]] += order[0] + 1.0
        got = g(w)
        np.testing.assert_allclose(got, want, rtol=1e-13)
        grads.append(got)
    assert not np.allclose(grads[0], grads[1]) or not np.allclose(grads[1], grads[2])


def test_variational_estimator_converges_to_the_true_gradient():
    """ELBO-style estimator: E_{z ~ N(mu, sigma^2)}[(z - 2)^2] = (mu - 2)^2 + sigma^2, whose
    gradient is (2 (mu - 2), 2 sigma). One reparameterised sample per call; the average
    of the per-call estimates converges to it (a frozen draw would converge to nothing)."""
    rng = np.random.default_rng(2024)

    def loss(mu, log_sigma):
        z = rng.normal(mu, np.exp(log_sigma))
        return (z - 2.0) ** 2

    g = bn.grad(loss, argnums=(0, 1))
    mu, log_sigma = 0.5, np.log(0.8)
    est = np.array([g(mu, log_sigma) for _ in range(20000)])
    true = (2 * (mu - 2.0), 2 * 0.8 ** 2)               # d/dlog_sigma sigma^2 = 2 sigma^2
    stderr = est.std(axis=0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - true) < 4 * stderr)
    assert est[:, 0].std() > 0.1                        # the samples do differ


def _from_import_helper():
    from numpy.random import mtrand
    return lambda n: mtrand._rand.normal(size=n)


UNRECORDED = {
    "Python's random module": (lambda: __import__("random").random(), "random module"),
    "numpy's hidden RandomState": (lambda: _from_import_helper()(3),
                                   "numpy's global random generator"),
}


@pytest.mark.parametrize("case", list(UNRECORDED))
def test_an_unrecorded_draw_is_refused(case):
    draw, named = UNRECORDED[case]
    with pytest.raises(bn.RandomSourceError, match=named) as err:
        bn.grad(lambda x: np.sum(x * draw()))(X)
    assert "Fix:" in str(err.value) and "test_random.py" in str(err.value)


def _shuffled_twice_held(x):
    idx = np.arange(3)
    kept = idx                      # a second name: replacing idx would not reach it
    np.random.shuffle(idx)
    return np.sum(x[kept])


REFUSED = {
    "shuffle of a temporary": (lambda x: np.sum(x * np.random.shuffle(np.arange(3.0))),
                               "permutation"),
    "shuffle of an array two names hold": (_shuffled_twice_held, "permutation"),
    "a traced gamma shape": (lambda x: np.sum(np.random.gamma(x)), "traced parameter"),
    "a choice without replacement from traced probabilities": (
        lambda x: np.sum(np.random.choice(3, 2, replace=False, p=x)), "replace=False"),
    "traced probabilities that do not sum to 1": (
        lambda x: np.sum(np.random.choice(3, p=2 * x)), "do not sum to 1"),
    "an unseeded generator made inside": (
        lambda x: np.sum(x * np.random.default_rng().normal(size=3)), "without a seed"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_draws_that_cannot_be_replayed_are_refused_at_trace_time(case):
    f, named = REFUSED[case]
    with pytest.raises(bn.RandomSourceError, match=named):
        bn.grad(f)(np.array([0.2, 0.3, 0.5]))


def test_tapes_with_draws_do_not_travel(tmp_path):
    tape = bn.trace(lambda x: np.sum(x * np.random.randn(3)), X)
    with pytest.raises(bn.RandomSourceError, match="pickled"):
        pickle.dumps(tape)
    with pytest.raises(bn.RandomSourceError, match="saved"):
        tape.save(tmp_path / "t.npz")
    with pytest.raises(bn.RandomSourceError, match="compiled handle"):
        bn.njit_value_and_grad(lambda x: np.sum(x * np.random.randn(3)), X)
    seeded = bn.grad(lambda x: np.sum(x * np.random.default_rng(3).normal(size=3)))
    np.testing.assert_array_equal(seeded(X), np.random.default_rng(3).normal(size=3))
    np.testing.assert_array_equal(seeded(X), seeded(X))   # the untraced program's numbers
    plain = bn.trace(lambda x: np.sum(x * 2.0), X)      # no draws: travels as before
    assert pickle.loads(pickle.dumps(plain))(X) == plain(X)


def test_the_fast_paths_stay_for_tapes_without_draws():
    g = bn.grad(lambda x: np.sum(x ** 2))
    g(X), g(X)
    assert len(g.plans) == 1
    h = bn.grad(lambda x: np.sum(x * np.random.randn(3)))
    np.random.seed(3)
    first, second = h(X), h(X)                          # the call plan draws too
    np.random.seed(3)
    np.testing.assert_array_equal(first, np.random.randn(3))
    np.testing.assert_array_equal(second, np.random.randn(3))
    assert len(h.tapes) == 1                            # traced once, drawn on every call
    s = bn.grad(lambda a: a * np.random.randn())
    np.random.seed(4)
    got = [s(1.5) for _ in range(3)]                    # the scalar fast path is skipped
    np.random.seed(4)
    assert got == [np.random.randn() for _ in range(3)]


def test_rebinding_a_captured_generator_is_followed():
    """Re-seeding by making a new generator in the same variable: the next call draws from
    the new one, as the untraced program does."""
    gen = np.random.default_rng(1)

    def f(x):
        return np.sum(x * gen.normal(size=3))
    g = bn.grad(f)
    first = g(X)
    gen = np.random.default_rng(1)                      # noqa: F841 (the closure reads it)
    np.testing.assert_array_equal(g(X), first)


def test_a_trainer_draws_fresh_dropout_masks():
    rng = np.random.default_rng(5)

    def loss(p, x):
        mask = rng.uniform(size=x.shape) > 0.5
        return np.mean((x * mask) @ p["w"]) ** 2
    params = {"w": np.ones(4)}
    x = np.arange(8.0).reshape(2, 4)
    trainer = bn.optim.Trainer(loss, params, bn.optim.SGD(0.0), x)
    got = [trainer.loss(x) for _ in range(4)]
    plain = np.random.default_rng(5)
    # the Trainer's trace drew nothing: its first step draws numpy's first mask
    want = [np.mean((x * (plain.uniform(size=x.shape) > 0.5)) @ params["w"]) ** 2
            for _ in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(set(got)) > 1


def test_another_threads_draws_from_the_global_rng_are_plain_numpys():
    """Thread B draws from numpy's global RNG while thread A traces a function with a
    captured Generator: B gets exactly the stream plain numpy gives, and A's trace (run
    again while B's draws make the check inconclusive) records its own draws."""
    inside, done = threading.Event(), threading.Event()
    got = []

    def other():
        np.random.seed(99)
        inside.wait(10)
        for _ in range(200):
            got.append(np.random.randn())
        done.set()

    gen = np.random.default_rng(8)

    def f(x):
        inside.set()
        done.wait(10)                        # the other thread draws during this trace
        return np.sum(x * gen.normal(size=3))

    t = threading.Thread(target=other)
    t.start()
    g = bn.grad(f)(X)
    t.join()
    np.testing.assert_array_equal(got, np.random.RandomState(99).randn(200))
    np.testing.assert_array_equal(g, np.random.default_rng(8).normal(size=3))


def test_threads_calling_one_function_each_draw_from_their_generator():
    gens = {}

    def f(x, r):
        return np.sum(x * r.normal(size=3))
    g = bn.grad(f)
    results = {}

    def work(k):
        gens[k] = np.random.default_rng(k)
        results[k] = [g(X, gens[k]) for _ in range(20)]
        time.sleep(0)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        ref = np.random.default_rng(k)
        for got in results[k]:
            np.testing.assert_array_equal(got, ref.normal(size=3))


CONFIG = {"rng": np.random.default_rng(0)}


def test_a_generator_in_a_dict_or_list_draws_as_numpy_would_and_in_a_tuple_is_refused():
    """CONFIG["rng"] and gens[0]: places found again by their key on each call (fresh draws,
    numpy's sequence; a generator set in their place since is followed). In a tuple, which
    cannot hold a stand-in: refused, never frozen."""
    saved = CONFIG["rng"]
    gens = [np.random.default_rng(3)]

    def f(x):
        return np.sum(x * CONFIG["rng"].normal(size=3)) + np.sum(x ** 2 * gens[0].random(3))
    try:
        g = bn.grad(f)
        for seeds in ((11, 3), (11, 3), (12, 4)):
            CONFIG["rng"], gens[0] = (np.random.default_rng(s) for s in seeds)
            got = [g(X) for _ in range(3)]
            CONFIG["rng"], gens[0] = (np.random.default_rng(s) for s in seeds)
            want = [CONFIG["rng"].normal(size=3) + 2 * X * gens[0].random(3) for _ in range(3)]
            np.testing.assert_allclose(got, want, rtol=1e-14)
            assert not np.allclose(got[0], got[1])
    finally:
        CONFIG["rng"] = saved
    held = (np.random.default_rng(0),)
    with pytest.raises(bn.RandomSourceError, match="tuple"):
        bn.grad(lambda x: np.sum(x * held[0].normal(size=3)))(X)


def _traced_in_two_threads(f, late_inside, early_done):
    """bn.grad(f) made and called in threads "early" and "late": "early" starts once
    ``late_inside`` is set (by f, in the late thread's trace) and sets ``early_done`` after
    its call. Their gradient functions, by thread name."""
    grads = {}

    def work(name):
        if name == "early":
            late_inside.wait(10)
        grads[name] = bn.grad(f)
        grads[name](X)
        if name == "early":
            early_done.set()

    threads = [threading.Thread(target=work, args=(n,), name=n) for n in ("early", "late")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return grads


def test_two_threads_tracing_one_function_both_record_its_draws():
    """Thread A traces and runs a function while thread B's trace of it is in progress
    (A's run draws from the captured generator under B's trace: B's check is inconclusive
    and B traces again), and A's proxy stays in place for B: both record both draws."""
    gen = np.random.default_rng(12)
    late_inside, early_done = threading.Event(), threading.Event()
    waited = []

    def f(x):
        a = gen.normal(size=3)
        if threading.current_thread().name == "late" and not waited:
            waited.append(1)
            late_inside.set()
            early_done.wait(10)                 # A traces and runs meanwhile
        return np.sum(x * a * gen.normal(size=3))

    grads = _traced_in_two_threads(f, late_inside, early_done)
    for name, g in grads.items():
        tape = next(iter(g.tapes.values()))
        assert len(tape.draws) == 2, name       # both draws recorded, none frozen
    a, b = grads["late"](X), grads["late"](X)
    assert not np.array_equal(a, b)


HELPER = types.ModuleType("random_helper")       # a helper module, as another file would be
exec("import numpy as np\n"
     "from numpy.random import randn\n"
     "RNG = np.random.default_rng(3)\n"
     "def noise(n):\n"
     "    return RNG.normal(size=n)\n"
     "def legacy_noise(n):\n"
     "    return randn(n)\n", HELPER.__dict__)


@pytest.mark.parametrize("f, reseed, plain", [
    (lambda x: np.sum(x * HELPER.noise(3)),
     lambda: setattr(HELPER, "RNG", np.random.default_rng(3)),
     lambda: np.random.default_rng(3).normal(size=(3, 3))),
    (lambda x: np.sum(x * HELPER.legacy_noise(3)), lambda: np.random.seed(3),
     lambda: np.random.RandomState(3).randn(3, 3)),
], ids=["module generator", "from numpy.random import randn"])
def test_draws_in_a_helper_modules_functions_are_recorded(f, reseed, plain):
    """A module-level generator of another module, and `from numpy.random import randn`
    there: both recorded (and the rebound HELPER.RNG followed)."""
    g = bn.grad(f)
    reseed()
    got = [g(X) for _ in range(3)]
    np.testing.assert_array_equal(got, plain())


def test_a_generator_reached_by_a_computed_name_is_refused_not_frozen():
    name = "noise"
    with pytest.raises(bn.RandomSourceError, match="random_helper.RNG"):
        bn.grad(lambda x: np.sum(x * getattr(HELPER, name)(3)))(X)


@bn.custom_vjp
def _square(x):
    return x * x


_square.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp", "sparse_jacobian"])
def test_draws_beside_a_custom_rule_are_the_untraced_programs(transform):
    """A tape holding a user's rule computes its derivatives by a second, traced-as-ops
    tape: it reuses the value's draws (vjp) or draws once per call, as the untraced
    program."""
    f = lambda x: np.sum(_square(x) * np.random.standard_normal(3))      # noqa: E731
    g = lambda x: _square(x) * np.random.standard_normal(3)              # noqa: E731
    run = {"grad": lambda: bn.grad(f)(X),
           "vjp": lambda: (lambda out, pull: (out, pull(1.0)[0]))(*bn.vjp(f, X)),
           "jvp": lambda: bn.jvp(f, (X,), (V,)),
           "sparse_jacobian": lambda: bn.sparse_jacobian(g)(X).toarray()}[transform]
    np.random.seed(21)
    got = [run() for _ in range(3)]
    np.random.seed(21)
    for result in got:
        z = np.random.standard_normal(3)
        want = {"grad": 2 * X * z, "vjp": (np.sum(X * X * z), 2 * X * z),
                "jvp": (np.sum(X * X * z), np.sum(2 * X * z * V)),
                "sparse_jacobian": np.diag(2 * X * z)}[transform]
        _close(result if not isinstance(want, tuple) else tuple(result), want)


def test_no_state_of_its_own_numpy_wrapped_once_places_restored():
    """The draws are seen without module state of burnumba's own: numpy.random's functions
    were wrapped once, at import (outside a trace they are numpy's, stream for stream); a
    generator in a closure is replaced for the trace only (the place holds it again after,
    also after traces of two threads that share it overlapped)."""
    from burnumba.tracing import randomness
    assert not hasattr(randomness, "_INSTALLS")
    assert np.random.randn.__wrapped__.__self__ is np.random.mtrand._rand
    np.random.seed(4)
    a = np.random.randn(5)
    np.random.seed(4)
    np.testing.assert_array_equal(a, np.random.mtrand._rand.randn(5))
    gen = np.random.default_rng(21)
    started, release = threading.Event(), threading.Event()

    def f(x):
        if threading.current_thread().name == "late":
            started.set()
            release.wait(10)                   # the other trace starts and ends meanwhile
        return np.sum(x * gen.normal(size=3))
    cell = f.__closure__[[c.cell_contents for c in f.__closure__].index(gen)]
    grads = _traced_in_two_threads(f, started, release)
    assert cell.cell_contents is gen                       # the real generator, back
    for g in grads.values():
        assert len(next(iter(g.tapes.values())).draws) == 1
    ref = np.random.default_rng(99)
    gen.bit_generator.state = np.random.default_rng(99).bit_generator.state
    np.testing.assert_array_equal(grads["early"](X), ref.normal(size=3))


def test_a_module_imported_inside_the_trace_draws_its_own_numbers(tmp_path, monkeypatch):
    """scipy.stats makes a generator at its first import: a module imported by the traced
    function runs its top-level draws as numpy does; the function's own draws stay fresh."""
    (tmp_path / "draws_at_import.py").write_text(
        "import numpy as np\nRNG = np.random.default_rng()\nNOISE = np.random.rand(2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def f(w):
        import draws_at_import
        return np.sum(w * np.random.rand(3)) + 0.0 * draws_at_import.NOISE[0]
    g = bn.grad(f)
    np.random.seed(3)
    first, second = g(np.ones(3)), g(np.ones(3))
    assert first.tolist() != second.tolist()


@pytest.mark.parametrize("source", ["RandomState", "Generator", "global"])
def test_a_retrace_consumes_no_extra_draws(source):
    """A call whose decisions fail (here a new int index: a guard) runs the tape, throws the
    run away and traces again; the thrown-away run's draws are put back, so each call
    consumes the generator once, as plain numpy: the same numbers call after call, and the
    same next draw after them (found by running autograd's variational-autoencoder example:
    every new batch index took two more draws)."""
    data = np.arange(1.0, 13.0).reshape(6, 2)

    def make():
        if source == "RandomState":
            rs = np.random.RandomState(0)
            return rs.randn, lambda: rs.randn()
        if source == "Generator":
            rng = np.random.default_rng(0)
            return lambda *s: rng.standard_normal(s), lambda: rng.standard_normal()
        np.random.seed(0)
        return np.random.randn, lambda: np.random.randn()

    def loss(randn):
        def f(x, it):
            d = data[it * 2:(it + 1) * 2]                  # slice bounds: guards
            return np.sum(x * d * randn(2, 2)) + (x[0, 0] if it > 1 else 0.0)
        return f
    its = [0, 1, 2, 1, 0, 2, 2]
    randn, nxt = make()
    want = []
    for it in its:
        noise = randn(2, 2)
        want.append(data[it * 2:(it + 1) * 2] * noise + (np.eye(2)[0][:, None] * np.array(
            [1.0, 0.0]) if it > 1 else 0.0))
    want_next = nxt()
    randn, nxt = make()
    g = bn.grad(loss(randn))
    for it, w in zip(its, want):
        np.testing.assert_allclose(g(np.ones((2, 2)), it), w, rtol=1e-14)
    assert nxt() == want_next


def test_a_decision_on_a_draw_takes_the_branch_of_the_numbers_drawn():
    """A Python decision after a draw (or on it) reads, while tracing, the numbers the run
    will draw (a twin of the generator, drawn in call order; it raised KeyError before): the
    branch is the one plain numpy takes at each call."""
    def run(randn, calls):
        out = []
        for _ in range(calls):
            z = randn(3)
            out.append(2.0 * z if z[0] > 0 else -z)
        return out
    rs = np.random.RandomState(5)
    want = run(rs.randn, 8) + [rs.randn()]
    rs = np.random.RandomState(5)

    def f(x):
        z = rs.randn(3)
        return np.sum(x * (2.0 * z if z[0] > 0 else -z))
    g = bn.grad(f)
    got = [g(np.ones(3)) for _ in range(8)] + [rs.randn()]
    np.testing.assert_array_equal(got[:8], want[:8])
    assert got[8] == want[8]
