"""Arrays built from traced parts: np.array / np.asarray / np.stack / vstack / hstack /
concatenate / column_stack of lists and tuples (nested too) of traced scalars, traced arrays
and numbers; x[None], 0-d indexing. Each case is written once against a numpy namespace and
run by burnumba (numpy's own names, traced through its protocols) and by HIPS autograd
(autograd.numpy), values and gradients at rtol 1e-9, under grad, jvp, hessian and vmap.
"""
import threading

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numpy import asarray as np_asarray

import burnumba as bn

RTOL, ATOL = 1e-9, 1e-12

# each case: f(np_, x) with x a float vector of 4; np_ is numpy or autograd.numpy
CASES = {
    "array of traced scalars": lambda np_, x: np_.array([x[0], x[1] * x[2], np_.sin(x[3])]),
    "array mixed with numbers": lambda np_, x: np_.array([x[0], 1.5, np.float64(2.0), x[2]]),
    "array of a tuple": lambda np_, x: np_.array((x[1], x[0])),
    "array of traced arrays": lambda np_, x: np_.array([x, x * x, np_.cos(x)]),
    "array of arrays and numpy": lambda np_, x: np_.array([x, np.arange(4.0)]),
    "nested lists": lambda np_, x: np_.array([[x[0], x[1]], [2.0, x[3] ** 2]]),
    # (autograd's asarray drops the gradient of a list of boxes; its array is the reference)
    "asarray of a list": lambda np_, x: _asarray(np_)([x[2], x[3], 0.5]),
    "asarray of a traced value": lambda np_, x: _asarray(np_)(x) * 2.0,
    # a float dtype= (numpy's compiled constructors asked for numbers: a stand-in while
    # tracing, transforms/library_calls.py)
    "array with dtype=float": lambda np_, x: np_.array([x[0], x[1] * x[2], 1.5], dtype=float),
    "asarray with dtype=float64": lambda np_, x: _asarray(np_)(x, dtype=np.float64) * 2.0,
    "asarray of a list with dtype=float": lambda np_, x: _asarray(np_)([x[2], x[3], 0.5],
                                                                      dtype=float),
    "ascontiguousarray with dtype": lambda np_, x: (
        np.ascontiguousarray if np_ is np else anp.array)(x[::-1], dtype=float),
    "array of a traced value": lambda np_, x: np_.array(x) + 1.0,
    "stack of scalars": lambda np_, x: np_.stack([x[0], x[1], np_.exp(x[2])]),
    "stack with numpy": lambda np_, x: np_.stack([x, np.ones(4)], axis=1),
    "vstack": lambda np_, x: np_.vstack([x, x ** 2, np.linspace(0.0, 1.0, 4)]),
    "hstack of arrays and a list": lambda np_, x: np_.hstack([x, np_.array([x[0], 3.0])]),
    "concatenate": lambda np_, x: np_.concatenate([x[2:], np_.array([x[0] * x[1]]), x]),
    "column_stack": lambda np_, x: np_.column_stack([x, np_.sin(x), np.arange(4.0)]),
    "ufunc of a built array": lambda np_, x: np_.exp(np_.array([x[0], x[1]])),
    "matmul of a built array": lambda np_, x: np_.dot(np_.array([x[0], x[1], x[2]]),
                                                      np.arange(6.0).reshape(3, 2)),
    "sum of a built array": lambda np_, x: np_.sum(np_.array([x[0], x[3] * 2.0])),
    "x[None]": lambda np_, x: x[None] * np.ones((2, 1)),
    "x[..., None]": lambda np_, x: x[..., None] * np.arange(3.0),
    "s[()] and s[...]": lambda np_, x: np_.array([np_.sum(x)[()] * 2.0,
                                                  np_.sum(x * x)[...] + 1.0]),
    "s[None]": lambda np_, x: np_.concatenate([np_.sum(x)[None], x[0][None, None][0]]),
}

def _asarray(np_):
    return np.asarray if np_ is np else anp.array


WEIGHTS = np.random.default_rng(7).uniform(-1.0, 1.0, 64)


def _loss(np_, name):
    f = CASES[name]

    def loss(x):
        # + 0 * x[0]: numpy's object array of traced values and numbers (np.array([x[0],
        # 1.5])) becomes one traced array at its first traced op (a ufunc on it alone would
        # ask the number 1.5 for a .sin method: see test_object_arrays)
        y = np_.ravel(f(np_, x)) + 0.0 * x[0]
        return np_.sum(np_.sin(y) * WEIGHTS[:y.shape[0]])
    return loss


def _x(seed=0):
    return np.random.default_rng(seed).uniform(0.5, 1.5, 4)


def close(ours, ref, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_autograd(name):
    x = _x()
    v, g = bn.value_and_grad(_loss(np, name))(x)
    close(v, _loss(anp, name)(x))
    close(g, autograd.grad(_loss(anp, name))(x))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_built_array_itself(name):
    """The array built (not a loss of it): its value and its Jacobian, against autograd."""
    x = _x(1)
    f = CASES[name]
    out = bn.jacobian(lambda x: f(np, x))(x)
    ref = autograd.jacobian(lambda x: f(anp, x))(x)
    close(out, ref)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp(name):
    x, t = _x(2), _x(3)
    value, tangent = bn.jvp(_loss(np, name), (x,), (t,))
    close(value, _loss(anp, name)(x))
    close(tangent, autograd.grad(_loss(anp, name))(x) @ t)


@pytest.mark.parametrize("name", ["array of traced scalars", "nested lists", "vstack",
                                  "ufunc of a built array", "s[None]", "asarray of a list"])
def test_hessian(name):
    x = _x(4)
    close(bn.hessian(_loss(np, name))(x), autograd.hessian(_loss(anp, name))(x))


@pytest.mark.parametrize("name", ["array of traced scalars", "array of traced arrays",
                                  "column_stack", "x[None]", "s[()] and s[...]"])
def test_vmap(name):
    X = np.stack([_x(s) for s in range(3)])
    values = bn.vmap(_loss(np, name))(X)
    grads = bn.vmap(bn.grad(_loss(np, name)))(X)
    for k in range(3):
        close(values[k], _loss(anp, name)(X[k]))
        close(grads[k], autograd.grad(_loss(anp, name))(X[k]))


def test_asarray_and_array_of_a_traced_value():
    """bnp.asarray(x) and np.asarray(x, like=x) are x itself; numpy's own np.asarray(x)
    (compiled, no protocol without like=) gives a read-only object array of x's elements,
    np.array(x) a writable one (a copy). np.array(x, like=x) copies too: later writes to
    either stay apart."""
    import burnumba.numpy as bnp

    def f(x):
        assert bnp.asarray(x) is x and np.asarray(x, like=x) is x
        y = np.array(x, like=x)
        assert y is not x and isinstance(y, type(x))
        y[0] = 10.0
        z = np.asarray(x)               # numpy would return x itself: read-only objects
        assert z.dtype == object and z.shape == x.shape and not z.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            z[1] = 5.0                  # could not reach x: refused, never silently apart
        c = np.array(x)                 # numpy's copy: a writable object array
        c[1] = 5.0
        built = np.array([x, x * 2.0])  # numpy copies the elements into a new array
        built[0, 0] = 0.0
        return np.sum(x * y) + np.sum(z * x) + np.sum(c * x) + np.sum(built)
    x = np.array([1.0, 2.0, 3.0])
    v, g = bn.value_and_grad(f)(x)
    close(v, (10.0 + 4.0 + 9.0) + 14.0 + (1.0 + 10.0 + 9.0) + (5.0 + 12.0))
    close(g, [10.0 + 2.0 + 2.0 + 2.0, 4.0 + 4.0 + 5.0 + 3.0, 6.0 + 6.0 + 6.0 + 3.0])


def test_like_creation_gives_traced_arrays():
    def f(x):
        made = [np.zeros(3, like=x), np.ones((3,), like=x), np.empty(3, like=x),
                np.zeros_like(x), np.ones_like(x), np.empty_like(x), np.full(3, 2.0, like=x)]
        for m in made:
            assert isinstance(m, type(x)) and m.shape == (3,)
            m[1] = x[0]
        assert isinstance(np.zeros_like(x, dtype=bool), np.ndarray)     # data, not traced
        return sum(np.sum(m * x) for m in made)
    x = np.array([1.0, 2.0, 3.0])
    v, g = bn.value_and_grad(f)(x)
    fills = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 2.0]
    close(v, sum(c * (x[0] + x[2]) + x[0] * x[1] for c in fills))
    close(g, [sum(fills) + 7 * x[1], 7 * x[0], sum(fills)])      # m = [c, x0, c]


REFUSED = {
    "dtype=int": (lambda x: np.array([x[0], x[1]], dtype=int), bn.ConcretizationError,
                  "int"),
    "len of 0-d": (lambda x: len(np.sum(x)), bn.UnsupportedOpError, "x.size"),
    "iterating a 0-d": (lambda x: list(np.sum(x)), bn.UnsupportedOpError, "0-d"),
    "round to int": (lambda x: round(x[0]), bn.ConcretizationError, "round"),
    "format an array": (lambda x: f"{x:.3f}", bn.ConcretizationError, "formatting"),
    "hash an array": (lambda x: {x: 1}, bn.UnsupportedOpError, "unhashable"),
    "tolist": (lambda x: x.tolist(), bn.UnsupportedMethodError, "return the value"),
    "strides": (lambda x: x.strides, bn.UnsupportedMethodError, "no memory"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_constructs_name_the_fix(name):
    f, error, words = REFUSED[name]
    x = np.array([1.0, 2.0, 3.0])
    args = (x, np.array([0, 1])) if f.__code__.co_argcount == 2 else (x,)
    with pytest.raises(error, match=words) as e:
        bn.grad(lambda *a: (f(*a), np.sum(a[0]))[1])(*args)
    assert "test_numpy_build.py" in str(e.value)


def test_plain_python_protocols_on_traced_values():
    def f(x):
        s = np.sum(x)
        assert x in [x] and x.dtype.type is np.float64
        with pytest.raises(TypeError, match="unhashable"):      # as numpy's arrays
            hash(x)
        assert np.ndim(x) == 1 and np.shape(x) == (3,) and np.result_type(x, 1.0) == np.float64
        import copy
        y = copy.copy(x)
        y[0] = 0.0                  # a copy
        return s + np.sum(y) + np.sum(copy.deepcopy(x))
    x = np.array([1.0, 2.0, 3.0])
    v, g = bn.value_and_grad(f)(x)
    close(v, 6.0 + 5.0 + 6.0)
    close(g, [2.0, 3.0, 3.0])


def test_object_arrays():
    """np.array(list) holding traced values is numpy's object array of traced scalars: numpy's
    object loops call the elements' operators and methods (np.exp calls x.exp(), traced), and
    the first op with a traced operand stacks the array into one traced array. A ufunc applied
    to it alone when it also holds plain numbers fails in numpy's loop (1.5 has no .exp):
    bnp.array(list) or np.array(list, like=x) build a traced array directly."""
    import burnumba.numpy as bnp

    def f(x):
        built = np.array([x[0], x[1] * 2.0])
        assert built.dtype == object
        return np.sum(np.exp(built)) + np.sum(np.exp(np.array([x[0], 1.5], like=x))) + \
            np.sum(np.exp(bnp.array([x[1], 1.5])))
    x = np.array([0.5, 0.25])
    v, g = bn.value_and_grad(f)(x)
    close(v, np.exp(0.5) + np.exp(0.5) + np.exp(0.5) + np.exp(0.25) + 2 * np.exp(1.5))
    close(g, [2 * np.exp(0.5), 2 * np.exp(0.5) + np.exp(0.25)])
    with pytest.raises(TypeError, match="exp"):
        bn.grad(lambda x: np.sum(np.exp(np.array([x[0], 1.5]))))(x)


def test_numpy_array_indexed_by_traced_integer_data_is_a_guard():
    # the index is integer data: its value is a guard of the tape (a new index traces a
    # new variant), and no gradient flows through it
    f = bn.value_and_grad(lambda x, i: x[0] * np.arange(3.0)[i[0]])
    x = np.array([1.5, 2.0])
    for k in (2, 1, 2):
        value, g = f(x, np.array([k]))
        assert value == 1.5 * k and g.tolist() == [float(k), 0.0]


def test_float_dtype_constructors_run_as_written():
    """numpy's constructors asked for a float dtype inside a traced function (its first
    line, a dtype argument by position) build one
    traced array; numpy stays numpy, and its functions are its own again after the trace.
    An integer dtype stays numpy's, which refuses it with the fix, as does a name bound to
    numpy's function before the trace."""
    seen = {}

    def rosen(x, xp=np):
        seen["module"] = xp is np
        x = np.asarray(x, dtype=float)
        y = np.ascontiguousarray(x[1:], float)
        return np.sum(100.0 * (y - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    x = np.array([1.3, 0.7, 0.8, 1.9])
    ref = autograd.grad(lambda x: anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2
                                          + (1 - x[:-1]) ** 2))(x)
    close(bn.grad(rosen)(x), ref)
    assert seen["module"] and np.asarray.__module__ == "numpy"
    assert getattr(np.asarray, "_burnumba_original", None) is None

    def bound(x):                      # a name bound before the trace: its stand-in too
        return np.sum(100.0 * (np_asarray(x, float)[1:] - x[:-1] ** 2) ** 2
                      + (1 - x[:-1]) ** 2)
    close(bn.grad(bound)(x), ref)
    assert np_asarray is np.__dict__["asarray"]         # numpy's again after the trace
    held = {"asarray": np.asarray}     # reached through a dict: numpy's own, refused

    def in_a_dict(x):
        return np.sum(held["asarray"](x, float))
    with pytest.raises(bn.ConcretizationError, match=r"np.asarray\(x, dtype=float\) works"):
        bn.grad(in_a_dict)(x)

    def pick(x, k):                    # k: float data, cast to int indices
        return np.sum(x[np.asarray(k, dtype=int)] ** 2)
    with pytest.raises(bn.ConcretizationError, match="integer data is computed with numpy"):
        bn.grad(pick)(x, np.array([0.0, 2.0]))


def test_a_thread_calling_numpy_during_traces_gets_numpys_results():
    stop, bad = threading.Event(), []

    def other():
        while not stop.is_set():
            a = np.asarray([1, 2], dtype=float)
            if type(a) is not np.ndarray or a.dtype != np.float64 or a.tolist() != [1.0, 2.0]:
                bad.append(a)
    t = threading.Thread(target=other)
    t.start()
    try:
        for k in range(30):
            f = (lambda k: lambda x: np.sum(np.asarray(x, dtype=float) ** k))(k % 3 + 1)
            bn.grad(f)(np.array([1.0, 2.0]))
    finally:
        stop.set()
        t.join()
    assert not bad


# numpy functions given Python lists of traced values (a stand-in while tracing,
# transforms/numpy_calls.py): f(np_, x) against autograd on anp.array of the same list
LIST_CASES = {
    "sum of a comprehension": lambda np_, x: np_.sum(_l(np_, [v ** 2 for v in x])),
    "mean": lambda np_, x: np_.mean(_l(np_, [x[0] * x[1], np_.sin(x[2]), 1.5])),
    "prod of a tuple": lambda np_, x: np_.prod(_l(np_, (x[0], x[3] + 2.0))),
    "max with a number": lambda np_, x: np_.max(_l(np_, [x[0], x[2] * 3.0, 0.25])),
    "std": lambda np_, x: np_.std(_l(np_, [x[0], x[1] ** 2, x[2]])),
    "var ddof": lambda np_, x: np_.var(_l(np_, [x[0], x[1], x[3]]), ddof=1),
    # (autograd has no derivative of average or polyval: written out for it)
    "average weights": lambda np_, x: np.average([x[0], x[1]], weights=[1.0, 3.0])
    if np_ is np else (x[0] + 3.0 * x[1]) / 4.0,
    "cumsum": lambda np_, x: np_.cumsum(_l(np_, [x[0], x[1] * x[2]])),
    "diff": lambda np_, x: np_.diff(_l(np_, [x[0], x[1] ** 2, x[2]])),
    "outer of two lists": lambda np_, x: np_.outer(_l(np_, [x[0], x[1]]),
                                                   _l(np_, [x[2], 1.0, x[3]])),
    "polyval coefficients": lambda np_, x: np.polyval([x[0], x[1], 2.0], x[2])
    if np_ is np else x[0] * x[2] ** 2 + x[1] * x[2] + 2.0,
    "sum of nested lists, axis": lambda np_, x: np_.sum(_l(np_, [[x[0], x[1]], [x[2], 1.0]]),
                                                        axis=0),
    "linalg.norm": lambda np_, x: np_.linalg.norm(_l(np_, [x[0], x[1] * 2.0])),
    "linalg.det": lambda np_, x: np_.linalg.det(_l(np_, [[x[0] + 2.0, x[1]], [x[2], x[3]]])),
    "linalg.solve": lambda np_, x: np_.linalg.solve(_l(np_, [[x[0] + 2.0, x[1]],
                                                             [x[2], x[3] + 2.0]]), [1.0, 2.0]),
    "linalg.eigvalsh": lambda np_, x: np.linalg.eigvalsh([[x[0] + 2.0, x[1]], [x[1], x[3]]])
    if np_ is np else anp.linalg.eigh(anp.array([[x[0] + 2.0, x[1]], [x[1], x[3]]]))[0],
    "nanmean": lambda np_, x: np_.nanmean(_l(np_, [x[0], x[1] * x[2]])) if np_ is np
    else anp.mean(anp.array([x[0], x[1] * x[2]])),
    "gradient": lambda np_, x: np.gradient([x[0], x[1] ** 2, x[2], 1.0]) if np_ is np
    else anp.array([x[1] ** 2 - x[0], (x[2] - x[0]) / 2, (1.0 - x[1] ** 2) / 2, 1.0 - x[2]]),
    "kron": lambda np_, x: np_.kron(_l(np_, [x[0], x[1]]), _l(np_, [x[2], 2.0])),
    "roll": lambda np_, x: np_.roll(_l(np_, [x[0], x[1] * 2.0, x[2]]), 1) * np.arange(3.0),
    # numpy's functions of array_like arguments, given lists
    "trace": lambda np_, x: np_.trace(_l(np_, [[x[0], x[1]], [x[2], x[3]]])),
    "dot": lambda np_, x: np_.dot(_l(np_, [x[0], x[3]]), _l(np_, [x[1], 2.0])),
    "matmul": lambda np_, x: np_.matmul(_l(np_, [[x[0], 1.0], [x[3], x[2]]]),
                                        _l(np_, [x[1], x[2]])),
    "einsum": lambda np_, x: np_.einsum("i,i->", _l(np_, [x[0], x[3]]), _l(np_, [x[1], 3.0])),
    "ravel": lambda np_, x: np_.ravel(_l(np_, [[x[0], x[3]]])) * np.arange(1.0, 3.0),
    "transpose": lambda np_, x: np_.transpose(_l(np_, [[x[0], x[1]]])) * np.arange(2.0)[:, None],
    "reshape": lambda np_, x: np_.reshape(_l(np_, [x[0], x[1], x[2], x[3]]), (2, 2)) @
    np.array([1.0, -2.0]),
    "diag": lambda np_, x: np_.diag(_l(np_, [x[0], x[2]])) @ np.array([1.0, 2.0]),
    "where": lambda np_, x: np_.where(np.array([True, False]), _l(np_, [x[0], x[1]]),
                                      _l(np_, [x[2], x[3]])),
    # (autograd has no derivative of cov: written out for it)
    "cov": lambda np_, x: np.cov([[x[0], x[1], x[2]], [x[3], 1.0, x[2] * x[0]]]) if np_ is np
    else _cov(anp.array([[x[0], x[1], x[2]], [x[3], 1.0, x[2] * x[0]]])),
    "expand_dims": lambda np_, x: np_.expand_dims(_l(np_, [x[0], x[1] * x[2]]), 0) * 2.0,
}


def _cov(rows):
    d = rows - anp.mean(rows, axis=1, keepdims=True)
    return anp.dot(d, d.T) / (rows.shape[1] - 1)


def _l(np_, parts):
    """The list as written for numpy; autograd's reference stacks it (anp.array)."""
    return parts if np_ is np else anp.array(parts)


@pytest.mark.parametrize("name", sorted(LIST_CASES))
def test_numpy_functions_of_lists_of_traced_values(name):
    f = LIST_CASES[name]
    x = _x(3)
    loss = lambda np_: lambda x: np_.sum(np_.sin(np_.ravel(f(np_, x))) * 0.7)  # noqa: E731
    value, g = bn.value_and_grad(loss(np))(x)
    close(value, loss(np)(x))
    close(g, autograd.grad(loss(anp))(x))


def test_numba_compiles_numpy_calls_while_a_trace_stands_in_for_them():
    """The stand-ins are given to the tracing thread's own code only: numba compiling a
    function in another thread meanwhile, or in the tracing thread itself (a plain helper
    called by the traced function), resolves np.sum / np.asarray to numpy's."""
    numba = pytest.importorskip("numba")
    import types
    started, release, out = threading.Event(), threading.Event(), {}

    @numba.njit
    def inside(a):                         # first compiled inside the trace
        return np.sum(np.asarray(a) * 2.0) + np.linalg.norm(a)

    def loss(x):
        started.set()
        release.wait(30)
        c = inside(np.arange(3.0))
        return np.sum(np.asarray(x, dtype=float) ** 2) * c + np.sum([x[0], x[1]])
    t = threading.Thread(target=lambda: out.update(g=bn.grad(loss)(np.array([1.0, 2.0]))))
    t.start()
    try:
        assert started.wait(30)
        assert type(np) is not types.ModuleType        # a trace is on: numpy's class swapped

        @numba.njit
        def other(a):                      # compiled in this thread during the trace
            return np.sum(a * a) + np.asarray(a).sum() + np.linalg.norm(a)
        assert other(np.array([3.0, 4.0])) == 25.0 + 7.0 + 5.0
        assert not hasattr(np.sum, "_burnumba_original")   # another thread: numpy's own
    finally:
        release.set()
        t.join()
    c = 6.0 + np.sqrt(5.0)
    close(out["g"], 2.0 * np.array([1.0, 2.0]) * c + 1.0)
    assert type(np) is types.ModuleType and type(np.linalg) is types.ModuleType


def test_two_threads_tracing_at_once_both_keep_the_stand_ins():
    """numpy's class is swapped once for all traces in progress: a trace that started while
    another had swapped it keeps the stand-ins after that one ends; the last puts numpy's
    class back."""
    import types
    a_in, b_in, a_done = threading.Event(), threading.Event(), threading.Event()
    out = {}

    def a_loss(x):
        a_in.set()
        assert b_in.wait(30)
        return np.sum(np.asarray(x, dtype=float) ** 2)

    def b_loss(x):
        assert a_in.wait(30)                 # a's trace swapped numpy's class first
        b_in.set()
        assert a_done.wait(30)               # ... and has ended
        return np.sum(np.asarray(x, dtype=float) ** 3) + np.mean([x[0], x[1]])

    def a():
        out["a"] = bn.grad(a_loss)(np.array([1.0, 2.0]))
        a_done.set()
    t = threading.Thread(target=a)
    t.start()
    try:
        out["b"] = bn.grad(b_loss)(np.array([1.0, 2.0]))
    finally:
        b_in.set()
        a_done.set()
        t.join()
    close(out["a"], [2.0, 4.0])
    close(out["b"], [3.5, 12.5])
    assert type(np) is types.ModuleType
