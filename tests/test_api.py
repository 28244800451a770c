"""grad / value_and_grad / trace / vjp: arguments, structures, dtypes and the trace cache."""
import collections
import dataclasses
import typing

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
import burnumba.numpy as bnp


def f3(x, y, z):
    return np.sum(x * y) + z ** 2 * np.sum(x)


def test_argnums_int_tuple_negative_and_order(rng):
    x, y, z = rng.normal(size=3), rng.normal(size=3), 0.7
    gx, gy, gz = y + z ** 2, x, 2 * z * np.sum(x)
    np.testing.assert_allclose(bn.grad(f3)(x, y, z), gx)
    np.testing.assert_allclose(bn.grad(f3, argnums=1)(x, y, z), gy)
    np.testing.assert_allclose(bn.grad(f3, argnums=-1)(x, y, z), gz)
    got = bn.grad(f3, argnums=(2, 0))(x, y, z)
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_allclose(got[0], gz)
    np.testing.assert_allclose(got[1], gx)
    (single,) = bn.grad(f3, argnums=(1,))(x, y, z)
    np.testing.assert_allclose(single, gy)


def test_scalar_argument_order_on_the_fast_path():
    vg = bn.value_and_grad(lambda a, b: a * b ** 2, argnums=(1, 0))
    for _ in range(3):                          # the first call traces, the rest run fast
        value, (gb, ga) = vg(3.0, 2.0)
        assert (value, gb, ga) == (12.0, 12.0, 4.0)
    assert bn.grad(lambda a, b: a * b ** 2, argnums=1)(3.0, 2.0) == 12.0


def test_pytrees_come_back_with_the_same_structure(rng):
    params = {"w": rng.normal(size=(2, 3)), "b": [0.5, np.float64(-1.0)], "s": (np.ones(2),)}
    x = rng.normal(size=3)

    def loss(p, x):
        h = np.tanh(np.sum(p["w"] * x, axis=None) + p["b"][0]) * p["b"][1]
        return h + np.sum(p["s"][0] ** 2)

    value, g = bn.value_and_grad(loss)(params, x)
    assert set(g) == {"w", "b", "s"}
    assert g["w"].shape == (2, 3) and g["w"].dtype == np.float64
    assert isinstance(g["b"], list) and isinstance(g["s"], tuple)
    assert type(g["b"][0]) is float                       # a Python float stays one
    assert isinstance(g["b"][1], np.float64)              # a numpy scalar gives a numpy scalar
    t = np.tanh(np.sum(params["w"] * x) + 0.5)
    np.testing.assert_allclose(g["w"], -(1 - t ** 2) * np.broadcast_to(x, (2, 3)))
    np.testing.assert_allclose(g["s"][0], 2 * np.ones(2))


Layer = collections.namedtuple("Layer", "w b")


class Adam(typing.NamedTuple):
    step: float
    layers: list


def test_namedtuples_are_pytree_nodes(rng):
    """As in JAX: a namedtuple (collections or typing) is a node, and the gradient comes back
    as the same namedtuple; under vmap, has_aux, jvp and the fast path too."""
    p = Adam(2.0, [Layer(rng.normal(size=(3, 2)), np.zeros(2)), Layer(rng.normal(size=2), 0.5)])
    x = rng.normal(size=3)

    def loss(p, x):
        h = np.tanh(x @ p.layers[0].w + p.layers[0].b)
        return p.step * (h @ p.layers[1].w + p.layers[1].b) ** 2

    def plain(p, x):                    # the same loss, on a tuple of tuples
        return loss(Adam(p[0], [Layer(*layer) for layer in p[1]]), x)

    vg = bn.value_and_grad(loss)
    for _ in range(3):                  # traced, then the fast path
        value, g = vg(p, x)
    assert type(g) is Adam and type(g.layers) is list and type(g.layers[0]) is Layer
    want = bn.grad(plain)((p.step, [tuple(layer) for layer in p.layers]), x)
    np.testing.assert_array_equal(g.layers[0].w, want[1][0][0])
    assert g.layers[1].b == want[1][1][1] and g.step == want[0]
    G = bn.vmap(bn.grad(loss), in_axes=(None, 0))(p, np.stack([x, 2 * x]))
    assert type(G) is Adam and G.layers[0].w.shape == (2, 3, 2)
    np.testing.assert_allclose(G.layers[0].w[0], g.layers[0].w, rtol=1e-14)
    out, aux = bn.grad(lambda p: (loss(p, x), Layer(p.step, 1.0)), has_aux=True)(p)
    assert type(aux) is Layer and aux.w == 2.0
    _, tangent = bn.jvp(lambda p: loss(p, x), (p,), (g,))
    assert tangent == pytest.approx(float(np.sum(bn.flatten(g)[0] ** 2)), rel=1e-12)


@dataclasses.dataclass
class DLayer:
    W: np.ndarray
    b: np.ndarray


@dataclasses.dataclass(frozen=True)
class DParams:
    layers: list
    scale: float

    def __post_init__(self):             # a user's check, not written for traced values
        if not isinstance(self.scale, float):
            raise TypeError("scale must be a float")


def test_dataclasses_are_pytree_nodes(rng):
    """Better than JAX, which needs them registered: a dataclass instance is a node (its
    fields in order), rebuilt without running __init__ / __post_init__; frozen ones too,
    under vmap, jvp and bn.tree_map."""
    p = DParams([DLayer(rng.normal(size=(3, 2)), np.zeros(2)),
                 DLayer(rng.normal(size=(2, 1)), np.zeros(1))], 0.5)
    X = rng.normal(size=(5, 3))

    def loss(p, X):
        h = X
        for layer in p.layers:
            h = np.tanh(h @ layer.W + layer.b)
        return p.scale * np.sum(h ** 2)

    def plain(t, X):                    # the same loss on tuples, for autograd
        h = X
        for W, b in t[0]:
            h = anp.tanh(anp.dot(h, W) + b)
        return t[1] * anp.sum(h ** 2)

    vg = bn.value_and_grad(loss)
    for _ in range(3):                  # traced, then the fast path
        value, g = vg(p, X)
    assert type(g) is DParams and type(g.layers[1]) is DLayer
    want = autograd.grad(plain)(([(q.W, q.b) for q in p.layers], 0.5), X)
    np.testing.assert_allclose(g.layers[0].W, want[0][0][0], rtol=1e-12)
    assert g.scale == pytest.approx(want[1], rel=1e-12)
    G = bn.vmap(bn.grad(loss), in_axes=(None, 0))(p, X[:, None, :])
    assert type(G) is DParams and G.layers[0].W.shape == (5, 3, 2)
    step = bn.tree_map(lambda a, b: a - 0.1 * b, p, g)
    assert type(step) is DParams and np.allclose(step.layers[1].b, -0.1 * g.layers[1].b)
    assert len(bn.tree_leaves(p)) == 5
    _, tangent = bn.jvp(lambda p: loss(p, X), (p,), (g,))
    assert tangent == pytest.approx(sum(float(np.sum(v ** 2)) for v in bn.tree_leaves(g)),
                                    rel=1e-12)
    with pytest.raises(bn.PytreeError, match=r"DParams\(layers=\[DLayer"):
        bn.trace(loss, p, X)(DParams(p.layers[:1], 0.5), X)


def test_none_is_an_empty_subtree(rng, tmp_path):
    """As in JAX: None inside a differentiated argument (a layer without its bias) is a node
    without leaves, and comes back as None in the gradient; under vmap, jacrev, jvp, has_aux,
    a saved tape, and as an argument or an output of its own."""
    W, x = rng.normal(size=(2, 3)), rng.normal(size=3)

    def loss(p, x):
        y = p["W"] @ x
        if p["b"] is not None:
            y = y + p["b"]
        return np.sum(np.tanh(y) ** 2)

    p = {"W": W, "b": None}
    want = autograd.grad(lambda W: loss({"W": W, "b": None}, x))(W)
    vg = bn.value_and_grad(loss)
    for _ in range(3):                  # traced, then the fast path
        value, g = vg(p, x)
    assert g.keys() == {"W", "b"} and g["b"] is None
    np.testing.assert_allclose(g["W"], want, rtol=1e-13)
    with_bias = bn.grad(loss)({"W": W, "b": np.zeros(2)}, x)   # another structure: retraced
    np.testing.assert_allclose(with_bias["W"], want, rtol=1e-13)
    assert with_bias["b"].shape == (2,)
    G = bn.vmap(bn.grad(loss), in_axes=(None, 0))(p, np.stack([x, 2 * x]))
    assert G["b"] is None and G["W"].shape == (2, 2, 3)
    np.testing.assert_allclose(G["W"][0], want, rtol=1e-13)
    J = bn.jacrev(lambda p: np.tanh(p["W"] @ x))(p)
    assert J["b"] is None and J["W"].shape == (2, 2, 3)
    _, tangent = bn.jvp(lambda p: loss(p, x), (p,), ({"W": want, "b": None},))
    assert tangent == pytest.approx(float(np.sum(want ** 2)), rel=1e-12)
    (v, aux), g2 = bn.value_and_grad(lambda p: (loss(p, x), None), has_aux=True)(p)
    assert aux is None and g2["b"] is None
    assert bn.grad(lambda a, b: np.sum(a), argnums=(0, 1))(x, None)[1] is None
    tape = bn.trace(loss, p, x)
    tape.save(tmp_path / "t.npz")
    assert bn.load_tape(tmp_path / "t.npz")(p, x) == pytest.approx(value, rel=1e-15)
    with pytest.raises(bn.PytreeError, match=r"from \{'W': \*, 'b': None\}"):
        tape({"W": W, "b": np.zeros(2)}, x)


def test_float32_inputs_give_a_float32_tape_and_gradients():
    """As in JAX and torch: float32 in, float32 arithmetic and gradients out. Python floats
    and integer data adapt; one float64 array makes the whole tape float64."""
    x = np.array([0.5, 1.5], dtype=np.float32)
    g = bn.grad(lambda x: np.sum(x ** 3) * 2.0)(x)
    assert g.dtype == np.float32 and g.shape == (2,)
    np.testing.assert_allclose(g, 6 * x.astype(np.float64) ** 2, rtol=1e-6)
    assert bn.trace(lambda x: np.sum(x ** 3), x).dtype == np.float32
    gs = bn.grad(lambda x: x * 2.0)(np.float32(1.5))
    assert isinstance(gs, np.float32)
    mixed = bn.grad(lambda x, y: np.sum(x * y), argnums=(0, 1))(x, np.ones(2))
    assert mixed[0].dtype == np.float64 and mixed[1].dtype == np.float64
    assert bn.grad(lambda x: x * 2.0)(1.5) == 2.0                # Python floats: float64


def test_trace_cache_per_signature(rng):
    calls = []

    def f(x, scale):
        calls.append(1)
        return np.sum(x ** 2) * scale

    g = bn.grad(f)
    g(rng.normal(size=3), 2.0)
    g(rng.normal(size=3), 3.0)
    assert len(calls) == 1                       # same shapes; a float is an input
    g(rng.normal(size=4), 2.0)                   # new shape
    g(rng.normal(size=3), 3)                     # an int is static: a new value retraces
    g(rng.normal(size=3).astype(np.float32), 2.0)  # new dtype
    assert len(calls) == 4 and len(g.tapes) == 4


def test_static_arguments_change_the_result():
    g = bn.grad(lambda x, n: x ** n)
    assert g(2.0, 3) == 12.0
    assert g(2.0, 2) == 4.0


def test_data_arguments_are_inputs_not_constants(rng):
    """A non-differentiated array is a tape input: new data, no retrace, right answer."""
    g = bn.grad(lambda w, x: np.sum(np.tanh(w * x)))
    w = rng.normal(size=5)
    for _ in range(3):
        x = rng.normal(size=5)
        np.testing.assert_allclose(g(w, x), x * (1 - np.tanh(w * x) ** 2), rtol=1e-13)
    assert len(g.tapes) == 1


def test_keyword_arguments(rng):
    g = bn.grad(lambda w, *, x, power: np.sum((w * x) ** power))
    w, x = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(g(w, x=x, power=2), 2 * w * x * x, rtol=1e-13)
    np.testing.assert_allclose(g(w, x=x, power=3), 3 * w ** 2 * x ** 3, rtol=1e-13)


def test_captured_arrays_are_stored_once(rng):
    data = rng.normal(size=1000)
    tape = bn.trace(lambda w: np.sum(w * data) + np.sum(w / data), 0.5)
    consts = [i for i in range(tape.n) if tape.op[i] == 1 and tape.off[i + 1] - tape.off[i] > 1]
    assert len(consts) == 1


def test_has_aux(rng):
    x = rng.normal(size=3)

    def f(x):
        y = np.tanh(x)
        return np.sum(y ** 2), {"y": y, "tag": "hello", "n": 3}

    (value, aux), g = bn.value_and_grad(f, has_aux=True)(x)
    np.testing.assert_allclose(aux["y"], np.tanh(x))
    assert aux["tag"] == "hello" and aux["n"] == 3
    g2, aux2 = bn.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, g2)
    np.testing.assert_allclose(value, np.sum(np.tanh(x) ** 2))
    # aux is a copy, not a view into the tape's buffer that the next call overwrites
    y_before = aux2["y"].copy()
    bn.grad(f, has_aux=True)(x + 1)
    np.testing.assert_array_equal(aux2["y"], y_before)


def test_grad_results_are_not_views_of_the_tape(rng):
    g = bn.grad(lambda x: np.sum(x ** 2))
    a = g(np.ones(3))
    g(np.full(3, 5.0))
    np.testing.assert_array_equal(a, 2 * np.ones(3))


def test_trace_returns_an_inspectable_tape():
    tape = bn.trace(lambda a, b: (a + b) * b, 1.0, 2.0, argnums=(0, 1))
    assert isinstance(tape, bn.Tape)
    assert tape.n == 4 and len(tape) == 4
    assert tape.val[tape.off[tape.out]] == 6.0
    text = str(tape)
    assert "add(%0, %1)" in text and "multiply(%2, %1)" in text
    assert repr(tape).startswith("<burnumba.Tape: 4 nodes")


def test_vjp_of_a_vector_function(rng):
    x = rng.normal(size=4)
    y, pull = bn.vjp(lambda x: np.sin(x) * x[0], x)
    np.testing.assert_allclose(y, np.sin(x) * x[0])
    u = rng.normal(size=4)
    (gx,) = pull(u)
    jac = np.diag(np.cos(x) * x[0])
    jac[:, 0] += np.sin(x)
    np.testing.assert_allclose(gx, u @ jac, rtol=1e-13)


def test_bnp_without_traced_values_is_numpy():
    assert bnp.exp(0.0) == 1.0
    np.testing.assert_array_equal(bnp.stack([np.ones(2), np.zeros(2)]), np.array([[1, 1], [0, 0]]))
    assert bnp.sum([1.0, 2.0]) == 3.0


def test_works_on_an_unchanged_numpy_function(rng):
    def numpy_loss(w, x, y):           # written for numpy, knows nothing of burnumba
        pred = np.tanh(np.dot(x, w))
        return np.mean((pred - y) ** 2) + 0.01 * np.sum(np.abs(w))

    w, x, y = rng.normal(size=3), rng.normal(size=3), 0.3
    import autograd
    import autograd.numpy as anp
    ref = autograd.grad(lambda w: anp.mean((anp.tanh(anp.dot(x, w)) - y) ** 2)
                        + 0.01 * anp.sum(anp.abs(w)))(w)
    np.testing.assert_allclose(bn.grad(numpy_loss)(w, x, y), ref, rtol=1e-12)


def test_repeated_calls_take_the_plan_path_and_fall_back_on_any_change(rng):
    """After the first call, arguments shaped like the traced ones skip the signature
    (tape.plan); anything else must still retrace or pick the right tape."""
    def loss(p, x, scale):
        return np.sum(np.tanh(x @ p["w"] + p["b"]) ** 2) * scale + p["s"] ** 2

    def expected(p, x, scale):
        t = np.tanh(x @ p["w"] + p["b"])
        dpre = 2 * t * (1 - t ** 2) * scale
        return {"w": x.T @ dpre, "b": dpre.sum(axis=0), "s": 2 * p["s"]}

    g = bn.grad(loss)
    p = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2), "s": 0.5}
    results = []
    for step in range(4):
        x = rng.normal(size=(4, 3))
        got = g(p, x, 2.0)
        results.append((got, expected(p, x, 2.0)))
        p = {k: v - 0.1 * got[k] for k, v in p.items()}
    assert len(g.tapes) == 1 and next(iter(g.tapes.values())) in g.plans
    for got, want in results:                  # earlier results were not overwritten
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
    assert type(results[-1][0]["s"]) is float
    # a new float (a tape input: the plan path, same tape), then a static int, a batch size
    # or a structure: the general path
    x = rng.normal(size=(4, 3))
    for args, n_tapes in (((p, x, 3.0), 1), ((p, x, 3), 2), ((p, x[:2], 2.0), 3),
                          (({**p, "s": np.float64(0.5)}, x, 2.0), 4)):
        got = g(*args)
        want = expected(*args)
        for k in ("w", "b"):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
        assert len(g.tapes) == n_tapes
    got = g(p, x, 2.0)                         # back to the first signature
    np.testing.assert_allclose(got["w"], expected(p, x, 2.0)["w"], rtol=1e-12)
    assert len(g.tapes) == 4


def test_one_array_argument_takes_the_short_plan_path(rng):
    """grad(f)(x) and value_and_grad(f)(x) of one array (a solver's fun and jac): the plan's
    one-array check and copy. Each result is a fresh copy; another shape, a float32 array, a
    non-contiguous view leave that path and still get their own gradient."""
    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    ag = autograd.grad(lambda x: anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2
                                         + (1.0 - x[:-1]) ** 2))
    g, vg = bn.grad(rosen), bn.value_and_grad(rosen)
    x = rng.uniform(-1, 1, 20)
    first = g(x)
    plan = next(iter(g.plans.values()))
    assert plan.match.one is not None and plan.one_array
    second = g(x + 1.0)
    assert first is not second and not np.shares_memory(first, second)
    np.testing.assert_allclose(first, ag(x), rtol=1e-12)
    np.testing.assert_allclose(second, ag(x + 1.0), rtol=1e-12)
    v, gv = vg(x)
    assert type(v) is float and v == pytest.approx(rosen(x), rel=1e-14)
    np.testing.assert_allclose(gv, first, rtol=0)
    for other in (rng.uniform(-1, 1, 7), x.astype(np.float32), rng.uniform(-1, 1, 40)[::2]):
        got = g(other)
        np.testing.assert_allclose(got, ag(other.astype(np.float64)),
                                   rtol=1e-5 if other.dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(g(x), first, rtol=0)


def test_python_float_arguments_are_tape_inputs_unless_static():
    """As under jax.jit: a non-differentiated Python float is an input of the tape, so new
    values do not retrace (2,000 temperatures used to leave 2,000 tapes); static_argnums
    makes one static, for code that needs its value while tracing."""
    g = bn.grad(lambda x, t: np.sum(np.tanh(x / t)))
    x = np.linspace(-1, 1, 5)
    for t in np.linspace(0.5, 2.0, 2000):
        got = g(x, float(t))
    np.testing.assert_allclose(got, (1 - np.tanh(x / 2.0) ** 2) / 2.0, rtol=1e-14)
    assert len(g.tapes) == 1

    def branchy(x, t):
        return np.sum(x * (2.0 if t > 1.0 else 3.0))
    d = bn.grad(branchy)                      # a decision on t: a guard, one variant a branch
    np.testing.assert_array_equal(d(x, 1.5), np.full(5, 2.0))
    np.testing.assert_array_equal(d(x, 0.5), np.full(5, 3.0))
    np.testing.assert_array_equal(d(x, 1.7), np.full(5, 2.0))
    assert len(d.tapes) == 1 and len(d._transformed.variants[next(iter(d.tapes))]) == 2
    s = bn.grad(branchy, static_argnums=1)
    np.testing.assert_array_equal(s(x, 1.5), np.full(5, 2.0))
    np.testing.assert_array_equal(s(x, 0.5), np.full(5, 3.0))
    assert len(s.tapes) == 2
    with pytest.raises(bn.InputError, match="both argnums and static_argnums"):
        bn.grad(branchy, argnums=1, static_argnums=1)
    n3 = bn.grad(lambda x, n: np.sum(x) * len(range(int(n))))
    np.testing.assert_array_equal(n3(x, 3.0), np.full(5, 3.0))
    np.testing.assert_array_equal(n3(x, 4.0), np.full(5, 4.0))
    ints = bn.grad(lambda x, n: np.sum(x) * n)           # small ints are data
    np.testing.assert_array_equal(ints(x, 2), np.full(5, 2.0))
    np.testing.assert_array_equal(ints(x, 3), np.full(5, 3.0))
    assert len(ints.tapes) == 1
    ints(x, 2 ** 40), ints(x, True)                       # big ints and bools stay static
    assert len(ints.tapes) == 3


def test_tracing_pauses_and_restores_the_garbage_collector():
    """The collector is off while the function is traced, and back as it was after: on after
    a trace, after a trace that raised, and still off when the user had turned it off."""
    import gc
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return np.sum(x * x)

    def bad(x):
        raise RuntimeError("the user's error")

    assert gc.isenabled()
    bn.grad(f)(np.ones(3))
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError, match="the user's error"):
        bn.grad(bad)(np.ones(3))
    assert gc.isenabled()
    gc.disable()
    try:
        bn.grad(f)(np.ones(4))               # a new shape: traced again
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_stays_paused_until_the_tape_is_built(monkeypatch):
    """Resumed while the trace's values were still alive, the collector's first pass walked
    them all (26-36 ms for a 10^5-node trace): the tape is built, and the builder dropped,
    before it is resumed."""
    import gc

    from burnumba.transforms import core as _api
    built = []
    tape_class = _api.Tape

    def recording(*args, **kwargs):
        built.append(gc.isenabled())
        return tape_class(*args, **kwargs)

    monkeypatch.setattr(_api, "Tape", recording)
    assert bn.grad(lambda x: np.sum(np.tanh(x)))(np.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    assert built == [False] and gc.isenabled()


def test_call_plans_take_leaves_only_from_the_traced_structure():
    """The plans' structure check (_pytree.ArgLeaves): a leaf, a flat dict of leaves (a
    model's parameters) and nested pytrees; anything else is None, and the call then takes
    the general path."""
    from burnumba.tracing.pytree import ArgLeaves, flatten
    a, b = np.ones(2), np.zeros(3)
    args = (1.5, {"w": a, "b": b}, ([a, (b,)], {"x": {"y": a}}))
    check = ArgLeaves([flatten(x)[1] for x in args])
    assert check(args) == [x for arg in args for x in flatten(arg)[0]]
    assert check(args[:2]) is None                                   # too few arguments
    assert check((1.5, {"w": a, "c": b}, args[2])) is None           # another key, same size
    assert check((1.5, {"w": a}, args[2])) is None                   # fewer keys
    assert check((1.5, [a, b], args[2])) is None                     # not a dict

    class Params(dict):
        pass
    assert check((1.5, Params(w=a, b=b), args[2])) is None           # a dict subclass
    assert check((1.5, {"w": a, "b": b}, ([a, [b]], {"x": {"y": a}}))) is None
    assert ArgLeaves([flatten({})[1]])(({},)) == []

    # through bn.grad: a dict with other keys of the same count is traced again
    f = bn.grad(lambda p: np.sum(p[next(iter(sorted(p)))] ** 2))
    np.testing.assert_array_equal(f({"a": a, "b": b})["a"], 2 * a)
    np.testing.assert_array_equal(f({"a": a, "b": b})["a"], 2 * a)
    g = f({"c": b, "d": a})
    np.testing.assert_array_equal(g["c"], 2 * b)
    np.testing.assert_array_equal(g["d"], 0 * a)


def test_tree_map_and_tree_leaves_as_jax_tree_util(rng):
    params = {"w": rng.normal(size=(2, 3)), "layers": [Layer(np.ones(2), 0.5)], "t": (1.0,)}
    grads = bn.grad(lambda p: np.sum(p["w"] ** 2) + np.sum(p["layers"][0].w) * p["t"][0]
                    + p["layers"][0].b)(params)
    params["layers"].append(None)        # None: an empty subtree, kept (JAX's rule)
    grads["layers"].append(None)
    new = bn.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    assert type(new["layers"][0]) is Layer and new["layers"][1] is None
    np.testing.assert_allclose(new["w"], params["w"] * 0.8)
    assert new["layers"][0].b == 0.4 and new["t"] == (1.0 - 0.1 * 2.0,)
    leaves = bn.tree_leaves(params)      # dict values by sorted key; None has no leaves
    assert [np.shape(x) for x in leaves] == [(2,), (), (), (2, 3)]
    with pytest.raises(bn.PytreeError, match="structure"):
        bn.tree_map(lambda a, b: a + b, params, {"w": 1.0})
    # inside a traced function too
    g = bn.grad(lambda p: sum(np.sum(x) for x in bn.tree_leaves(
        bn.tree_map(lambda x: x * x, p))))({"a": np.ones(2), "b": 3.0})
    assert g["a"].tolist() == [2.0, 2.0] and g["b"] == 6.0
