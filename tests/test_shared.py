"""Tape caches shared by equal functions (transforms/shared.py): a lambda made again on each
call traces once, and never computes with values other than its own."""
import functools
import threading

import numpy as np
import pytest

import burnumba as bn
from burnumba.transforms import core, shared

SCALE = 2.0          # a global the functions below read


@pytest.fixture
def traces(monkeypatch):
    """A fresh table, and the count of traces made."""
    monkeypatch.setattr(shared, "TABLE", shared.Table())
    count = [0]
    trace = core._trace

    def counting(*args, **kwargs):
        count[0] += 1
        return trace(*args, **kwargs)
    monkeypatch.setattr(core, "_trace", counting)
    return count


def test_a_recreated_lambda_traces_once(traces):
    x = np.linspace(0.1, 1.0, 5)
    for _ in range(5):
        g = bn.grad(lambda x: np.sum(np.tanh(x) ** 2))(x)
    np.testing.assert_allclose(g, 2 * np.tanh(x) / np.cosh(x) ** 2, rtol=1e-13)
    for _ in range(5):
        assert bn.grad(lambda a: a * a * 3.0)(1.5) == 9.0          # the scalar fast path
    assert traces[0] == 2


def test_a_lambda_calling_library_functions_traces_once(traces):
    """A library's own functions (numpy's, scipy's, burnumba's: module-level, no closure)
    are compared by identity: a lambda that calls burnumba.scipy.stats.lognorm.logcdf (whose
    helpers read more values than a key holds) or a numpy function imported by name is
    shared, where it was traced again on every call."""
    from numpy import sum as np_sum
    from burnumba.scipy import stats
    from scipy import stats as st
    logcdf = stats.lognorm.logcdf
    for x in (1.5, 1.5, 2.5, 2.5):
        value, g = bn.value_and_grad(lambda v: logcdf(v, 0.7))(x)
        assert value == pytest.approx(st.lognorm.logcdf(x, 0.7), rel=1e-13)
    assert traces[0] == 1
    x = np.linspace(0.1, 1.0, 5)
    for _ in range(3):
        np.testing.assert_allclose(bn.grad(lambda x: np_sum(x ** 3))(x), 3 * x ** 2)
    assert traces[0] == 2
    # another function of the same code reading another library function: its own result
    for fn, want in ((np.sin, np.cos(0.5)), (np.cos, -np.sin(0.5))):
        assert bn.grad(lambda v: fn(v))(0.5) == want
    assert traces[0] == 4


def test_a_nested_def_made_per_call_traces_once(traces):
    def step(x, w):
        def loss(x):
            return np.sum(np.sin(x * w))
        return bn.value_and_grad(loss)(x)
    w = np.array([1.0, 2.0, 3.0])
    x = np.array([0.3, -0.2, 0.5])
    for _ in range(4):
        value, g = step(x, w)
    np.testing.assert_allclose(g, w * np.cos(x * w), rtol=1e-14)
    assert traces[0] == 1


def test_transformations_with_other_parameters_are_not_shared(traces):
    def make():
        return lambda a, b: a * a * b
    assert bn.grad(make())(2.0, 3.0) == 12.0
    assert bn.grad(make(), argnums=1)(2.0, 3.0) == 4.0
    assert bn.grad(make(), argnums=(0, 1))(2.0, 3.0) == (12.0, 4.0)
    assert bn.grad(make(), argnums=[0, 1])(2.0, 3.0) == (12.0, 4.0)
    assert bn.value_and_grad(make())(2.0, 3.0) == (12.0, 12.0)
    assert traces[0] == 4


def test_a_captured_scalar_of_another_value_or_type_gets_its_own_result(traces):
    for c in (2.0, 3.0, 2.0):
        assert bn.grad(lambda x: x * c)(1.5) == c
    for c in (0.0, -0.0, 0.0, -0.0):                 # equal, yet of other signs
        assert bn.grad(lambda x: x * np.copysign(1.0, c))(1.5) == np.copysign(1.0, c)
    kinds = {int: 2.0, float: 3.0, bool: 4.0, np.float64: 5.0, np.float32: 6.0}
    for c in (1, 1.0, True, np.float64(1.0), np.float32(1.0), 1):      # equal, other types
        assert bn.grad(lambda x: x * kinds[type(c)])(1.5) == kinds[type(c)]
    nan = float("nan")
    for c in (nan, nan, float("nan")):                # NaN: the same object only
        assert np.isnan(bn.grad(lambda x: x * c)(1.5))
    assert traces[0] == 2 + 2 + 5 + 2


def test_a_captured_array_of_another_content_gets_its_own_result(traces):
    x = np.array([0.5, 1.5])
    for w in [np.array([1.0, 2.0]), np.array([1.0, 2.0]), np.array([3.0, -1.0]),
              np.array([1.0, 2.0], dtype=np.float32), np.array([[1.0, 2.0]])]:
        g = bn.grad(lambda x: np.sum(x * x * w))(x)
        np.testing.assert_array_equal(g, 2 * x * w.reshape(-1).astype(float))
    assert traces[0] == 4       # the second array equals the first


def test_an_array_changed_in_place_is_never_served_stale(traces):
    x = np.array([0.5, 1.5])
    w = np.array([1.0, 2.0])
    for k in range(4):
        w[:] = [k, k + 1.0]
        g = bn.grad(lambda x: np.sum(np.sin(x) * w))(x)
        np.testing.assert_allclose(g, np.cos(x) * w, rtol=1e-15)
    w[:] = [1.0, 2.0]               # back to a value traced before: that tape is right
    np.testing.assert_allclose(bn.grad(lambda x: np.sum(np.sin(x) * w))(x), np.cos(x) * w)


def test_a_value_changed_between_transforming_and_calling_is_read(traces):
    x = np.array([0.5, 1.5])
    w = np.array([1.0, 2.0])
    s = 2.0
    bn.grad(lambda x: np.sum(x * w) * s)(x)
    g = bn.grad(lambda x: np.sum(x * w) * s)          # finds the cache traced with these
    w[:] = 5.0                                         # in place, before the first call
    np.testing.assert_array_equal(g(x), [10.0, 10.0])
    g = bn.grad(lambda x: np.sum(x * w) * s)
    s = 3.0                                            # rebound, before the first call
    np.testing.assert_array_equal(g(x), [15.0, 15.0])
    h = bn.grad(lambda x: np.sum(x * w) * s)
    s = 2.0
    np.testing.assert_array_equal(h.trace(x).run_value_and_grad([x])[1], [10.0, 10.0])


def test_a_trace_made_with_other_values_stays_out_of_the_shared_cache(traces):
    def make(w):
        return lambda x: np.sum(x * w)
    w1, w2 = np.ones(2), np.ones(2)
    g1 = bn.grad(make(w1))
    g1(np.zeros(2))
    g2 = bn.grad(make(w2))                             # equal: g1's cache
    g2(np.zeros(2))
    w1[:] = 7.0
    np.testing.assert_array_equal(g1(np.zeros((1, 2))), [[7.0, 7.0]])   # traced now
    np.testing.assert_array_equal(g2(np.zeros((1, 2))), [[1.0, 1.0]])
    np.testing.assert_array_equal(bn.grad(make(np.ones(2)))(np.zeros((1, 2))), [[1.0, 1.0]])
    np.testing.assert_array_equal(bn.grad(make(w1))(np.zeros((1, 2))), [[7.0, 7.0]])


def test_a_global_rebound_is_read(traces):
    global SCALE
    try:
        for s in (2.0, 3.0, 2.0):
            SCALE = s
            assert bn.grad(lambda x: x * SCALE)(1.0) == s
        assert traces[0] == 2
    finally:
        SCALE = 2.0


def test_a_builtin_shadowed_by_a_global_is_read(traces):
    ns = {"np": np}
    exec("def make():\n    return lambda x: abs(x) * 2.0\n", ns)
    assert bn.grad(ns["make"]())(-1.5) == -2.0
    ns["abs"] = lambda x: x * x
    assert bn.grad(ns["make"]())(-1.5) == -6.0


def test_defaults_and_keyword_defaults_are_read(traces):
    for s in (2.0, 3.0, 2.0):
        assert bn.grad(lambda x, s=s: x * s)(1.0) == s
        assert bn.grad(lambda x, *, s=s: x * s * s)(1.0) == s * s
    assert traces[0] == 4


def test_helpers_and_containers_are_compared_by_content(traces):
    params = {"w": np.array([1.0, 2.0]), "b": [0.5]}

    def helper(x):
        return np.sum(x * params["w"]) + params["b"][0] * np.sum(x)
    x = np.array([1.0, 1.0])
    for k in range(3):
        params["b"][0] = float(k)
        g = bn.grad(lambda x: helper(x) * 2.0)(x)
        np.testing.assert_array_equal(g, 2.0 * (params["w"] + k))
    scaled = functools.partial(np.multiply, 3.0)
    assert bn.grad(lambda x: scaled(x))(1.0) == 3.0
    scaled = functools.partial(np.multiply, 4.0)
    assert bn.grad(lambda x: scaled(x))(1.0) == 4.0


def test_a_function_reading_an_object_is_not_shared(traces):
    class Model:
        w = 2.0
    m = Model()
    for w in (2.0, 3.0):
        m.w = w
        assert bn.grad(lambda x: x * m.w)(1.0) == w
    assert len(shared.TABLE) == 0


def test_guards_of_a_shared_cache(traces):
    def make():
        return lambda x: x * x if x > 0 else -x
    assert bn.grad(make())(2.0) == 4.0
    assert bn.grad(make())(-2.0) == -1.0
    assert bn.grad(make())(3.0) == 6.0
    assert traces[0] == 2


def test_threads_recreating_closures_get_their_own_values(traces):
    errors = []

    def worker(k):
        try:
            x = np.array([0.5, 1.0])
            for i in range(60):
                c = float((k + i) % 3)
                w = np.full(2, c + 1.0)
                g = bn.grad(lambda x: np.sum(x * w) * c)(x)
                np.testing.assert_array_equal(g, (c + 1.0) * c)
                assert bn.grad(lambda a: a * c)(2.0) == c
        except Exception as e:                # noqa: BLE001 (reported below)
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(shared.TABLE) <= shared.TABLE.size


def test_the_table_is_bounded(monkeypatch):
    table = shared.Table(size=5, per_code=2)
    monkeypatch.setattr(shared, "TABLE", table)
    for c in range(6):
        assert bn.grad(lambda x: x * c)(1.0) == c
    assert len(table) == 2                       # per code
    fs = [eval(f"lambda x: x * {k}.0") for k in range(8)]    # 8 codes
    for k, f in enumerate(fs):
        assert bn.grad(f)(1.0) == k
    assert len(table) == 5
    assert sum(len(es) for es in table.by_code.values()) == 5
    table.clear()
    assert len(table) == 0


def test_a_branch_switch_never_runs_another_functions_variants(traces):
    def make(w):
        return lambda x: x * w[0] if x > 0 else -x * w[0]
    w1, w2 = np.array([1.0]), np.array([1.0])
    g1 = bn.grad(make(w1))
    assert g1(1.0) == 1.0
    g2 = bn.grad(make(w2))                  # shares g1's cache (its scalar runner too)
    assert g2(1.0) == 1.0
    w1[0] = 5.0
    assert g1(-1.0) == -5.0                 # a new branch, traced with w1 as it is now
    assert g2(-1.0) == -1.0                 # not g1's variant: traced with w2
    assert g2(1.0) == 1.0


def test_a_function_made_again_reuses_only_what_nothing_holds(traces):
    import weakref
    x = np.array([0.5, 1.0])
    held = [bn.grad(lambda x: np.sum(x * x))]
    for _ in range(3):
        g = bn.grad(lambda x: np.sum(x * x))
        np.testing.assert_array_equal(g(x), 2 * x)
        held.append(g)                          # each kept: never lent again
    assert len({id(g) for g in held}) == 4
    assert all(g.__wrapped__ is not h.__wrapped__ for g, h in zip(held, held[1:]))
    ref = weakref.ref(held.pop())
    again = bn.grad(lambda x: np.sum(x * x))
    assert again is not ref()                   # a weak reference holds it too
    np.testing.assert_array_equal(again(x), 2 * x)
    s = 1.0
    for k in range(4):                          # dropped each time: lent again, reset
        s = float(k)
        np.testing.assert_array_equal(bn.grad(lambda x: np.sum(x * x) * s)(x), 2 * x * k)
    assert traces[0] == 2 + 4                   # three codes, the first never called


def test_the_same_function_made_again_gets_the_wrapper_nothing_holds(traces, monkeypatch):
    """A lambda made again in one scope (its code, globals, cells and defaults the same
    objects) gets the wrapper made for the last one when nothing holds that: no view is
    made or reset, and no comparison of values waits for its first call. What it computes
    is still read from the cells as they are at the call."""
    firsts = [0]
    first_call = core._Transformed.first_call

    def counting(self):
        firsts[0] += 1
        return first_call(self)
    monkeypatch.setattr(core._Transformed, "first_call", counting)
    s = 1.0
    for _ in range(6):
        assert bn.grad(lambda a: a * a * s)(3.0) == 6.0
    assert firsts[0] == 1 and traces[0] == 1   # the first is the entry's own, one view lent
    got = []
    for _ in range(4):
        g = bn.grad(lambda a: a * a * s)
        s = s + 1.0                            # rebound between bn.grad and the call
        got.append(float(g(1.0)))
        del g
    assert got == [4.0, 6.0, 8.0, 10.0]

    cfg, w, got = [2.0], np.array([1.0]), []
    for k in range(6):                         # compared by content: changed in place
        if k == 3:
            cfg[0], w[0] = 3.0, 5.0
        got.append((bn.grad(lambda x: x * cfg[0])(1.0),
                    bn.grad(lambda x: np.sum(x * w))(np.ones(1))[0]))
    assert got == [(2.0, 1.0)] * 3 + [(3.0, 5.0)] * 3

    def scope(v):                              # a new frame: other cells, the view reset
        return bn.grad(lambda a: a * v)(1.0)
    assert [scope(2.0), scope(3.0), scope(3.0)] == [2.0, 3.0, 3.0]
    assert [bn.grad(lambda a, c=c: a * c)(1.0) for c in (2.0, 5.0)] == [2.0, 5.0]


def test_made_again_compares_every_part(traces):
    def maker(v, d=1.0):
        return lambda a, b=d: a * v * b

    f = maker(2.0)
    assert shared.made_again(f, f)
    assert not shared.made_again(f, maker(2.0))          # other cells, equal values
    g = lambda a: a                                      # noqa: E731
    h = lambda a: a                                      # noqa: E731  (other code)
    assert not shared.made_again(g, h)
    same = [lambda a: a for _ in range(2)]               # noqa: E731
    assert shared.made_again(*same)
    same[1].attr = 1
    assert not shared.made_again(*same)                  # attributes of its own
