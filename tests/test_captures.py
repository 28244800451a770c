"""Values a traced function reads from outside its arguments (globals, closures, objects'
attributes) and that the program rebinds between calls: each call computes with the values
it sees, as autograd does (transforms/captures.py), under every transformation."""
import functools
import types
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
from burnumba.optim import SGD, Trainer
from burnumba.transforms.core import VARIANT_LIMIT

X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
beta = 0.5
data = X


def kl(w):
    return np.sum(w ** 2)


def loss_global(w):                       # reads the globals beta and data
    return np.mean(np.tanh(data @ w) ** 2) + beta * kl(w)


config = types.SimpleNamespace(lam=1.0)


def helper(w):
    return config.lam * np.sum(w ** 2)


def top(w):
    return helper(w) + np.sum(w)


def want_grad(w, b, d):
    return autograd.grad(lambda w: anp.mean(anp.tanh(d @ w) ** 2) + b * anp.sum(w ** 2))(w)


@pytest.fixture
def restore_globals():
    yield
    globals().update(beta=0.5, data=X)


def counting(f):
    """``f`` with a count of its Python calls (its traces)."""
    calls = []

    @functools.wraps(f)
    def wrapper(*args):
        calls.append(1)
        return f(*args)
    wrapper.calls = calls
    return wrapper


def test_a_rebound_global_is_read_again_by_each_transformation(restore_globals):
    global beta, data
    w, v = np.array([0.3, -0.2, 0.1]), np.array([1.0, 0.0, -1.0])
    g, vg = bn.grad(loss_global), bn.value_and_grad(loss_global)
    hv, jac = bn.hvp(loss_global), bn.jacrev(loss_global)
    per_sample = bn.vmap(bn.grad(lambda w, x: np.tanh(x @ w) ** 2 + beta * kl(w)),
                         in_axes=(None, 0))
    for b, d in [(0.5, X), (2.0, X), (2.0, 3 * X), (-1.0, 3 * X), (0.5, X)]:
        beta, data = b, d
        want = want_grad(w, b, d)
        for _ in range(2):                # the first call after a change, then a replay
            np.testing.assert_allclose(g(w), want, rtol=1e-13)
            np.testing.assert_allclose(vg(w)[1], want, rtol=1e-13)
            np.testing.assert_allclose(jac(w), want, rtol=1e-13)
            H = autograd.hessian(lambda w: anp.mean(anp.tanh(d @ w) ** 2)
                                 + b * anp.sum(w ** 2))(w)
            np.testing.assert_allclose(hv(w, v), H @ v, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(bn.hvp(loss_global, w, v), H @ v, rtol=1e-12,
                                       atol=1e-14)
            _, tangent = bn.jvp(loss_global, (w,), (v,))
            assert tangent == pytest.approx(want @ v, rel=1e-12)
            G = per_sample(w, d)
            np.testing.assert_allclose(G[1], autograd.grad(
                lambda w: anp.tanh(d[1] @ w) ** 2 + b * anp.sum(w ** 2))(w), rtol=1e-13)


def test_traced_again_only_when_a_value_changes(restore_globals):
    global beta
    f = counting(loss_global)
    g = bn.grad(f)
    w = np.ones(3)
    for _ in range(5):
        g(w)
    assert len(f.calls) == 1
    beta = 0.25
    for _ in range(5):
        g(w)
    assert len(f.calls) == 2


def test_closures_objects_helpers_and_decorators():
    w = np.array([0.3, -0.2, 0.1])
    scale = 1.0

    def closure(w):
        return scale * np.sum(w ** 3)

    g = bn.grad(closure)
    assert g(w) == pytest.approx(3 * w ** 2)
    scale = 4.0                                        # a nonlocal rebinding
    np.testing.assert_allclose(g(w), 12 * w ** 2, rtol=1e-15)

    class Model:
        def __init__(self):
            self.W, self.temperature = np.eye(3), 1.0

        def loss(self, w):
            return np.sum(np.exp(self.W @ w / self.temperature))

    m = Model()
    gm = bn.grad(m.loss)
    np.testing.assert_allclose(gm(w), np.exp(w), rtol=1e-15)
    m.temperature = 2.0                                # an annealed attribute
    np.testing.assert_allclose(gm(w), np.exp(w / 2) / 2, rtol=1e-15)
    m.W = 2 * np.eye(3)
    np.testing.assert_allclose(gm(w), np.exp(w), rtol=1e-15)

    gt = bn.grad(top)                                  # a global object, via a helper
    np.testing.assert_allclose(gt(w), 2 * w + 1, rtol=1e-15)
    config.lam = 3.0
    try:
        np.testing.assert_allclose(gt(w), 6 * w + 1, rtol=1e-15)
    finally:
        config.lam = 1.0

    @counting                                          # functools.wraps: __wrapped__
    def decorated(w):
        return scale * np.sum(w)

    gd = bn.grad(decorated)
    np.testing.assert_allclose(gd(w), 4.0)
    scale = -1.0
    np.testing.assert_allclose(gd(w), -1.0)


def test_a_rebound_generator_draws_as_numpy_would():
    rng = np.random.default_rng(1)

    def noisy(w):
        return np.sum(w * rng.normal(size=3))

    g = bn.grad(noisy)
    first = g(np.ones(3))
    np.testing.assert_array_equal(first, np.random.default_rng(1).normal(size=3))
    rng = np.random.default_rng(7)                    # a new generator, rebound
    np.testing.assert_array_equal(g(np.ones(3)), np.random.default_rng(7).normal(size=3))


def test_a_value_rebound_on_every_call_warns_once_and_stays_right():
    w = np.ones(3)
    lam = 0.0

    def loss(w):
        return lam * np.sum(w ** 2)

    g = bn.grad(loss)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(VARIANT_LIMIT + 3):
            lam = float(k)
            np.testing.assert_allclose(g(w), 2 * k * w)
    found = [w for w in caught if issubclass(w.category, bn.VariantWarning)]
    assert len(found) == 1
    message = str(found[0].message)
    assert "'lam'" in message and "argument" in message
    assert found[0].filename == __file__


def test_trainer_follows_a_rebound_global(restore_globals):
    global beta
    params = {"w": np.array([0.3, -0.2, 0.1])}

    def loss(p, x):
        return np.mean(np.tanh(x @ p["w"]) ** 2) + beta * kl(p["w"])

    t = Trainer(loss, params, SGD(lr=0.1), X)
    for b in (0.5, 3.0):
        beta = b
        w = t.params["w"].copy()
        t.step(X)
        np.testing.assert_allclose(t.params["w"], w - 0.1 * want_grad(w, b, X), rtol=1e-12)


def test_in_place_changes_stay_frozen_as_documented():
    """An array changed in place keeps its identity: as under jax.jit, the tape keeps the
    values it was traced with (docs/sharp-bits.md); pass the array as an argument."""
    scale = np.array([1.0, 1.0])
    h = bn.grad(lambda x: np.sum(scale * x))
    h(np.zeros(2))
    scale[:] = 5.0
    np.testing.assert_array_equal(h(np.zeros(2)), [1.0, 1.0])


def test_a_name_rebound_to_an_equal_number_is_not_traced_again():
    """``n = X.shape[0]`` in a loop makes a new int object of the same value each time (above
    256): equal numbers, strings and None are compared by value, not identity."""
    w = np.ones(3)
    n = int("1000")

    def loss(w):
        return np.sum(w) * n

    f = counting(loss)
    g = bn.grad(f)
    for _ in range(5):
        n = int("1000")                     # a new object, the same value
        np.testing.assert_allclose(g(w), 1000.0)
    assert len(f.calls) == 1
    n = 1001
    np.testing.assert_allclose(g(w), 1001.0)
    assert len(f.calls) == 2


def _factory(a):
    return lambda w: a * np.sum(w ** 2)


def _with_decay():
    lr = 0.5

    def loss(w):
        return lr * np.sum(w ** 2)

    def decay():
        nonlocal lr
        lr *= 0.5
    return loss, decay


def test_cells_no_code_can_rebind_cost_nothing_and_the_others_are_checked():
    """A factory's parameter (no STORE_DEREF of it anywhere in the factory) holds its
    object for good: no check per call. A cell a sibling closure rebinds (nonlocal) is
    checked, and the rebinding is followed."""
    g = bn.grad(_factory(3.0))
    w = np.array([1.0, -2.0])
    np.testing.assert_allclose(g(w), 6.0 * w)
    assert g._transformed.captures is None
    loss, decay = _with_decay()
    h = bn.grad(loss)
    np.testing.assert_allclose(h(w), w)
    assert h._transformed.captures is not None
    decay()
    np.testing.assert_allclose(h(w), 0.5 * w)


def test_an_attribute_of_an_attribute_is_followed():
    """self.cfg.lr rebound on the configuration object a method reads through self."""
    class Model:
        def __init__(self):
            self.cfg = types.SimpleNamespace(lam=1.0)

        def loss(self, w):
            return self.cfg.lam * np.sum(w ** 2)

    m = Model()
    g = bn.grad(m.loss)
    w = np.array([1.0, -1.0])
    np.testing.assert_allclose(g(w), 2 * w)
    m.cfg.lam = 3.0
    np.testing.assert_allclose(g(w), 6 * w)
    m.cfg = types.SimpleNamespace(lam=0.5)
    np.testing.assert_allclose(g(w), w)


def test_two_methods_of_one_object_each_have_their_attributes_followed():
    class Model:
        def __init__(self):
            self.W, self.lam = np.eye(2), 1.0

        def reg(self, w):
            return self.lam * np.sum(w ** 2)

        def loss(self, w):
            return np.sum(self.W @ w) + self.reg(w)

    m = Model()
    g = bn.grad(m.loss)
    w = np.array([1.0, -1.0])
    np.testing.assert_allclose(g(w), 1.0 + 2 * w)
    m.lam = 2.0                              # read by reg, reached through loss's self
    np.testing.assert_allclose(g(w), 1.0 + 4 * w)


class Settings:                          # a class used as a namespace of settings
    lam = 1.0


class Scaled:
    factor = 2.0                         # a class attribute, read through the instance

    def loss(self, w):
        return self.factor * np.sum(w ** 2)


def _settings_loss(w):
    return Settings.lam * np.sum(w ** 2)


def test_class_attributes_and_a_users_module_are_followed(tmp_path, monkeypatch):
    w = np.array([1.0, -1.0])
    g = bn.grad(_settings_loss)
    np.testing.assert_allclose(g(w), 2 * w)
    Settings.lam = 3.0
    try:
        np.testing.assert_allclose(g(w), 6 * w)
    finally:
        Settings.lam = 1.0
    s = Scaled()
    h = bn.grad(s.loss)
    np.testing.assert_allclose(h(w), 4 * w)
    Scaled.factor = 0.5                  # the class's value
    try:
        np.testing.assert_allclose(h(w), w)
        s.factor = 3.0                   # the instance's own now shadows it
        np.testing.assert_allclose(h(w), 6 * w)
    finally:
        Scaled.factor = 2.0
    (tmp_path / "my_config.py").write_text("BETA = 0.5\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import my_config
    namespace = {"np": np, "my_config": my_config}
    exec("def f(w):\n    return my_config.BETA * np.sum(w ** 2)\n", namespace)
    k = bn.grad(namespace["f"])
    np.testing.assert_allclose(k(w), w)
    my_config.BETA = 2.0                 # import config; config.BETA = ... in a script
    np.testing.assert_allclose(k(w), 4 * w)


ACT = np.tanh                   # a global holding a library's function (rebound below)


def act_loss(w):
    return np.sum(ACT(w))


@pytest.fixture
def restore_act():
    yield
    globals().update(ACT=np.tanh)
    globals().pop("abs", None)


def test_a_rebound_library_function_is_read_again(restore_act):
    """A name holding numpy's (or another library's) function is checked as any other
    value, not read through: `act = np.sin` after `np.tanh` traces again. (A ufunc was
    skipped as a library's object before, a silently stale function.)"""
    w = np.array([0.3, 0.6])
    g = bn.grad(act_loss)
    np.testing.assert_allclose(g(w), 1 / np.cosh(w) ** 2, rtol=1e-14)
    globals()["ACT"] = np.sin
    np.testing.assert_allclose(g(w), np.cos(w), rtol=1e-14)
    act = np.sin
    h = bn.grad(lambda w: np.sum(act(w)))
    np.testing.assert_allclose(h(w), np.cos(w), rtol=1e-14)
    act = np.cos                                     # a closure cell, rebound
    np.testing.assert_allclose(h(w), -np.sin(w), rtol=1e-14)
    out = []
    for f in (np.sin, np.cos, np.sin):              # a lambda made again per pass
        out.append([bn.grad(lambda w: np.sum(f(w)))(w) for _ in range(3)])
    for got, f in zip(out, (np.cos, lambda w: -np.sin(w), np.cos)):
        np.testing.assert_allclose(got, [f(w)] * 3, rtol=1e-14)


def test_a_global_shadowing_a_builtin_later_is_read(restore_act):
    """A global made after the trace with the name of a builtin the code calls replaces
    the builtin for the next call, as Python's lookup would."""
    def f(x):
        return abs(x) * 2.0
    g = bn.grad(f)
    assert g(-1.5) == -2.0
    globals()["abs"] = lambda x: x * x
    assert g(-1.5) == -6.0
    del globals()["abs"]
    assert g(-1.5) == -2.0


CONFIG = {"lam": 1.0, "opt": {"scale": 2.0}, "step": 0}


def loss_config(w):                       # reads CONFIG["lam"] and CONFIG["opt"]["scale"]
    return CONFIG["lam"] * np.sum(w ** 2) + CONFIG["opt"]["scale"] * np.sum(np.tanh(w))


def test_an_item_set_again_in_a_dict_is_read_again():
    """A configuration dict whose item the program sets between calls (``CONFIG["lam"] =
    ...``, an annealing schedule): the next call uses the new value, as autograd does, by
    every transformation; a nested dict's item too; a closure's and an attribute's dict;
    an item the function writes itself is its output, not checked (no trace per call)."""
    w, v = np.array([0.3, -0.2, 0.1]), np.array([1.0, 0.0, -1.0])
    f = counting(loss_config)
    g, hv, jac = bn.grad(f), bn.hvp(loss_config), bn.jacrev(loss_config)
    per_sample = bn.vmap(bn.grad(lambda w, x: CONFIG["lam"] * np.sum((w * x) ** 2)),
                         in_axes=(None, 0))
    try:
        for lam, scale in [(1.0, 2.0), (0.5, 2.0), (0.5, -3.0), (1.0, 2.0)]:
            CONFIG["lam"] = lam
            CONFIG["opt"]["scale"] = scale
            want = autograd.grad(
                lambda w: lam * anp.sum(w ** 2) + scale * anp.sum(anp.tanh(w)))(w)
            H = autograd.hessian(
                lambda w: lam * anp.sum(w ** 2) + scale * anp.sum(anp.tanh(w)))(w)
            for _ in range(2):            # the first call after a change, then a replay
                np.testing.assert_allclose(g(w), want, rtol=1e-13)
                np.testing.assert_allclose(jac(w), want, rtol=1e-13)
                np.testing.assert_allclose(hv(w, v), H @ v, rtol=1e-12, atol=1e-14)
                np.testing.assert_allclose(per_sample(w, X)[2], 2 * lam * X[2] ** 2 * w,
                                           rtol=1e-13)
        assert len(f.calls) == 4          # one trace per change, none per replay
        CONFIG["opt"] = {"scale": 1.0}    # the nested dict itself replaced
        np.testing.assert_allclose(g(w), 2 * w + 1 / np.cosh(w) ** 2, rtol=1e-13)
    finally:
        CONFIG.update(lam=1.0, opt={"scale": 2.0}, step=0)

    settings = {"k": 2.0}
    box = types.SimpleNamespace(cfg={"k": 1.0})

    def closure(w):
        return settings["k"] * np.sum(w ** 2) + box.cfg["k"] * np.sum(w)

    def counts_its_calls(w):              # writes its own item: an output, not an input
        CONFIG["step"] = CONFIG["step"] + 1
        return np.sum(w ** 2)

    h, c = bn.grad(closure), counting(counts_its_calls)
    hc = bn.grad(c)
    for k in (2.0, 3.0):
        settings["k"] = k
        for b in (1.0, -1.0):
            box.cfg["k"] = b
            np.testing.assert_allclose(h(w), 2 * k * w + b, rtol=1e-14)
            hc(w)
    assert len(c.calls) == 1


def test_a_deleted_item_traces_again_and_raises_as_numpy():
    d = {"a": 2.0}
    g = bn.grad(lambda x: d["a"] * x)
    assert g(1.0) == 2.0
    del d["a"]
    with pytest.raises(KeyError):
        g(1.0)
    d["a"] = 5.0
    assert g(1.0) == 5.0


WEIGHTS = [1.0, 2.0]
KEY = "lr"


def test_list_items_get_and_a_global_key_are_read_again():
    """``WEIGHTS[0]``, ``d.get("lr", 0.1)`` (an item there, or absent and added later) and
    ``d[KEY]`` with KEY a global string: each item set again between calls is read again."""
    d = {"lr": 2.0}
    cases = [(lambda x: WEIGHTS[0] * x, lambda: WEIGHTS.__setitem__(0, 5.0), 1.0, 5.0),
             (lambda x: WEIGHTS[-1] * x, lambda: WEIGHTS.__setitem__(1, 7.0), 2.0, 7.0),
             (lambda x: d.get("lr", 0.1) * x, lambda: d.__setitem__("lr", 3.0), 2.0, 3.0),
             (lambda x: d.get("mu", 0.5) * x, lambda: d.__setitem__("mu", 4.0), 0.5, 4.0),
             (lambda x: d[KEY] * x, lambda: d.__setitem__("lr", 6.0), 3.0, 6.0)]
    try:
        for f, change, before, after in cases:
            g = bn.grad(f)
            assert g(1.0) == before and g(1.0) == before
            change()
            assert g(1.0) == after and g(1.0) == after
        short = [1.0, 2.0]
        h = bn.grad(lambda x: short[1] * x)
        assert h(1.0) == 2.0
        short.pop()                       # the item gone: traced again, numpy's IndexError
        with pytest.raises(IndexError):
            h(1.0)
    finally:
        WEIGHTS[:] = [1.0, 2.0]
