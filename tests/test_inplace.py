"""In-place updates on traced arrays (burnumba/numpy/inplace.py), table-driven.

Every program is plain numpy that writes in place. The references run the same source with
numpy itself: the value on float64 inputs, the gradient by the complex step (the program run
on complex inputs x + i h e_k: Im f / h is the derivative to rounding, so the comparison is
at rtol 1e-9), which follows numpy's own in-place semantics (views, repeated indices, masks)
by construction. autograd refuses in-place assignment; it checks the functional rewrites at
the end of this file. Each program runs under bn.value_and_grad, bn.jvp, bn.hessian (against
central differences of the complex-step gradient) and bn.vmap.
"""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn

RTOL, ATOL = 1e-9, 1e-12
SHAPE = (4, 3)
WEIGHTS = np.linspace(-1.0, 2.0, 12).reshape(SHAPE)

# index kinds: every kind the tracer reads, as numpy keys into a (4, 3) array
KEYS = {
    "int": 1,
    "negative int": -1,
    "two ints": (2, -1),
    "slice": slice(1, 3),
    "slice with step": slice(None, None, 2),
    "negative step": slice(None, None, -3),
    "column": (slice(None), 1),
    "ellipsis": (Ellipsis, 0),
    "new axis": (None, 2),
    "row mask": np.array([True, False, True, True]),
    "full mask": np.arange(12).reshape(SHAPE) % 5 < 2,
    "int array": np.array([3, 0]),
    "repeated ints": np.array([0, 2, 0]),
    "negative ints": np.array([-1, 1]),
    "fancy pairs": (np.array([0, 3, 0]), np.array([2, 1, 2])),
    "fancy and slice": (np.array([1, 1]), slice(0, 2)),
}
OPS = ["=", "+=", "-=", "*=", "/=", "**="]


def _target(key):
    return np.zeros(SHAPE)[key].shape


def write_program(key, op):
    """x[key] op= v, v made from w (a second input), then a smooth function of x."""
    shape = _target(key)
    size = int(np.prod(shape))

    def f(x, w):
        v = np.sin(w[:size]).reshape(shape) + 1.5
        if op == "=":
            x[key] = v
        elif op == "+=":
            x[key] += v
        elif op == "-=":
            x[key] -= v
        elif op == "*=":
            x[key] *= v
        elif op == "/=":
            x[key] /= v
        else:
            x[key] **= v
        return np.sum(np.cos(x) * WEIGHTS)
    return f


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, SHAPE), rng.uniform(-1.0, 1.0, 12)


def complex_step(f, args, k, h=1e-30):
    """d f / d args[k] by the complex step, on fresh copies (f may write into its inputs)."""
    g = np.zeros(np.shape(args[k]))
    for i in np.ndindex(g.shape):
        a = [np.array(v, dtype=complex) for v in args]
        a[k][i] += 1j * h
        g[i] = f(*a).imag / h
    return g


def reference(f, args):
    value = f(*[np.array(a) for a in args])
    return value, tuple(complex_step(f, args, k) for k in range(len(args)))


def close(ours, ref, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)


PROGRAMS = {f"x[{name}] {op} v": write_program(key, op) for name, key in KEYS.items()
            for op in OPS}


def _views_program(x, w):
    r = x[1]                      # a view: writes through it reach x, writes to x reach it
    r *= w[0]
    c = x[:, 2]
    x[1, 2] = np.exp(w[1])        # seen by c (and r) as in numpy
    t = x.T                       # a view of x's memory as well
    t[0, 3] += w[2]
    return np.sum(c * w[3]) + np.sum(np.cos(x) * WEIGHTS) + np.sum(r ** 2)


def _copy_program(x, w):
    y = x.copy()                  # copies stay apart from later writes
    z = np.array(x)
    x[0] = w[:3]
    y[1] += 1.0
    return np.sum(np.sin(x) * WEIGHTS) + np.sum(y * z)


def _alias_program(x, w):
    y = x                         # the same object: numpy's in-place ops update both names
    y += w[:3]
    x[2:] *= 2.0
    return np.sum(np.cos(y) * WEIGHTS) + np.sum(x)


def _overlap_program(x, w):
    x[1:] = x[:-1] * w[0]         # overlapping source and destination: numpy buffers
    x[:, ::-1] = x                # reversed onto itself
    return np.sum(np.cos(x) * WEIGHTS)


def _loop_program(x, w):
    out = np.zeros_like(x)        # a traced array that writes fill
    for i in range(SHAPE[0]):
        out[i] = np.sin(x[i]) * w[i]
        out[i, i % 3] += x[i].sum()
    return np.sum(out * WEIGHTS)


def _functions_program(x, w):
    y = np.zeros_like(x)
    np.copyto(y, np.sin(x))
    np.copyto(y, w[:3], where=np.array([True, False, True]))
    np.put(y, [0, 5, -1], w[3:6])
    np.place(y, WEIGHTS > 1.0, w[6:8])
    np.putmask(y, WEIGHTS < -0.5, w[8:10] * 3.0)
    d = y[:3, :3]
    np.fill_diagonal(d, w[10])    # through a view, as numpy
    return np.sum(np.cos(y) * WEIGHTS)


def _out_program(x, w):
    y = np.empty_like(x)
    np.add(x, w[:3], out=y)
    np.multiply(y, 2.0, out=y, where=WEIGHTS > 0.0)
    s = np.zeros_like(x[0])
    np.sum(y, axis=0, out=s)
    p = np.zeros_like(x[:3])
    np.dot(x[:3], y[:3].T, out=p)
    np.exp(w[:3], out=y[0])       # into a view: reaches y
    return np.sum(np.sin(y) * WEIGHTS) + np.sum(s * w[:3]) + np.sum(p)


def _methods_program(x, w):
    y = x * w[0]
    y.sort(axis=1)                # in place, as numpy
    z = np.zeros_like(x)
    z.fill(w[1])
    z.put([1, 4], w[2:4])
    z[2:] = y[:2]
    return np.sum(np.cos(y) * WEIGHTS) + np.sum(z * z)


def _reshape_program(x, w):
    flat = x.reshape(-1)          # a view of a contiguous array
    flat[::4] = w[:3]
    sq = x[None]                  # expand: a view
    sq[0, 0] = w[3:6]
    rev = np.flip(x, axis=0)
    rev[0] *= 2.0                 # x's last row
    return np.sum(np.sin(x) * WEIGHTS)


def _flat_program(x, w):
    t = x.T                       # not contiguous: numpy's flat still writes through
    t.flat[[1, 4, 1]] = w[:3]
    t.flat[0] += w[3]
    return np.sum(np.sin(x) * WEIGHTS) + sum(v * v for v in x.flat)


def _copy_then_view_program(x, w):
    y = x.T.reshape(-1)           # numpy copies here (x.T is not contiguous) ...
    z = y[1:5]                    # ... and z views the copy
    q = x[:, ::2]
    z[0] = w[0]                   # reaches y, not x
    x[0, 0] = w[1]                # reaches x and q, not y or z
    r = x[1]                      # a view made after the first write
    r *= w[2]
    q[2] += 1.0
    return np.sum(np.cos(x) * WEIGHTS) + np.sum(y * np.arange(12.0)) + np.sum(z[:2] * q[:2, 0])


PROGRAMS.update({
    "copies and views after writes": _copy_then_view_program,
    "x.flat writes": _flat_program,
    "views write through": _views_program,
    "copies stay apart": _copy_program,
    "one object, two names": _alias_program,
    "overlapping writes": _overlap_program,
    "loop filling zeros_like": _loop_program,
    "copyto put place putmask fill_diagonal": _functions_program,
    "out= arguments": _out_program,
    "sort fill put methods": _methods_program,
    "reshape flatten flip views": _reshape_program,
})


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_value_and_grad(name):
    f = PROGRAMS[name]
    x, w = _inputs()
    value, grads = reference(f, (x, w))
    ours, g = bn.value_and_grad(f, argnums=(0, 1))(x.copy(), w.copy())
    close(ours, value)
    close(g[0], grads[0])
    close(g[1], grads[1])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp(name):
    f = PROGRAMS[name]
    x, w = _inputs(1)
    tx, tw = _inputs(2)
    value, grads = reference(f, (x, w))
    out, tangent = bn.jvp(f, (x.copy(), w.copy()), (tx, tw))
    close(out, value)
    close(tangent, np.sum(grads[0] * tx) + np.sum(grads[1] * tw))


HESSIAN = ["x[slice with step] *= v", "x[repeated ints] += v", "x[full mask] **= v",
           "x[fancy pairs] = v", "views write through", "loop filling zeros_like",
           "out= arguments", "copyto put place putmask fill_diagonal"]


@pytest.mark.parametrize("name", HESSIAN)
def test_hessian(name):
    """Against central differences of the complex-step gradient (O(h^2) = 1e-10)."""
    f = PROGRAMS[name]
    x, w = _inputs(3)
    H = bn.hessian(f)(x.copy(), w)
    h = 1e-5
    ref = np.zeros(SHAPE + SHAPE)
    for i in np.ndindex(SHAPE):
        e = np.zeros(SHAPE)
        e[i] = h
        ref[(Ellipsis,) + i] = (complex_step(f, (x + e, w), 0) -
                                complex_step(f, (x - e, w), 0)) / (2 * h)
    close(H, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["x[row mask] -= v", "x[negative step] = v",
                                  "views write through", "loop filling zeros_like",
                                  "out= arguments"])
def test_vmap(name):
    f = PROGRAMS[name]
    X = np.stack([_inputs(s)[0] for s in range(3)])
    W = np.stack([_inputs(s)[1] for s in range(3)])
    values = bn.vmap(f)(X.copy(), W.copy())
    grads = bn.vmap(bn.grad(f, argnums=(0, 1)))(X.copy(), W.copy())
    for k in range(3):
        value, g = reference(f, (X[k], W[k]))
        close(values[k], value)
        close(grads[0][k], g[0])
        close(grads[1][k], g[1])


def _indexed_program(x, w, i):
    """Writes at traced integer indices (an int array argument, read when the tape runs),
    and numpy's unbuffered np.add.at / np.subtract.at."""
    x[i] = np.sin(w[:3, None]) * np.ones(3)
    x[i[:2]] += w[3:5, None]
    x[i[1:]] *= 1.5
    np.add.at(x, i, w[5:8, None] ** 2)        # unbuffered: a repeated index adds each time
    np.subtract.at(x, (np.array([0, 0, 3]), np.array([1, 1, 2])), w[8:11])
    return np.sum(np.cos(x) * WEIGHTS)


INDICES = [np.array([1, -1, 2]), np.array([0, 0, 3]), np.array([3, 3, 3]),
           np.array([-4, 2, 1])]


def test_traced_integer_indices_follow_numpy():
    """One tape for every index array (repeats: the last write wins, += adds once), under
    value_and_grad, jvp and vmap; an index out of range raises DataError when it runs."""
    x, w = _inputs(6)
    tx, tw = _inputs(7)
    vg = bn.value_and_grad(_indexed_program, argnums=(0, 1))
    for i in INDICES:
        value, grads = reference(lambda x, w: _indexed_program(x, w, i), (x, w))
        ours, g = vg(x.copy(), w.copy(), i)
        close(ours, value)
        close(g[0], grads[0])
        close(g[1], grads[1])
        out, tangent = bn.jvp(lambda x, w: _indexed_program(x, w, i), (x, w), (tx, tw))
        close(tangent, np.sum(grads[0] * tx) + np.sum(grads[1] * tw))
    X = np.stack([_inputs(s)[0] for s in range(3)])
    W = np.stack([_inputs(s)[1] for s in range(3)])
    I = np.stack(INDICES[:3])
    values = bn.vmap(_indexed_program)(X.copy(), W.copy(), I)
    for k in range(3):
        close(values[k], _indexed_program(X[k].copy(), W[k].copy(), I[k]))
    with pytest.raises(bn.DataError, match="out of"):
        vg(x.copy(), w.copy(), np.array([0, 4, 1]))
    i = INDICES[1]
    H = bn.hessian(_indexed_program)(x.copy(), w, i)
    f = lambda x, w: _indexed_program(x, w, i)      # noqa: E731
    h, ref = 1e-5, np.zeros(SHAPE + SHAPE)
    for j in np.ndindex(SHAPE):
        e = np.zeros(SHAPE)
        e[j] = h
        ref[(Ellipsis,) + j] = (complex_step(f, (x + e, w), 0) -
                                complex_step(f, (x - e, w), 0)) / (2 * h)
    close(H, ref, rtol=1e-6, atol=1e-7)


def test_the_caller_sees_no_write_and_retracing_is_not_needed():
    f = PROGRAMS["x[slice] += v"]
    x, w = _inputs()
    keep = x.copy()
    vg = bn.value_and_grad(f, argnums=(0, 1))
    vg(x, w)
    np.testing.assert_array_equal(x, keep)          # the tape never writes its inputs
    x2, w2 = _inputs(5)
    value, grads = reference(f, (x2, w2))
    ours, g = vg(x2, w2)
    close(ours, value)
    close(g[0], grads[0])


def test_repeated_index_adds_once_and_last_write_wins():
    def f(x):
        x[[0, 0, 2]] += 1.0
        x[[1, 1]] = np.stack([x[0] * 2.0, x[0] * 3.0])
        return x
    x = np.arange(3.0)
    ref = f(x.copy())
    assert ref.tolist() == [1.0, 3.0, 3.0]
    np.testing.assert_array_equal(bn.jacobian(lambda x: f(x))(x) @ np.ones(3),
                                  [1.0, 3.0, 1.0])   # d out_i / d x, summed
    out, _ = bn.jvp(f, (x,), (np.ones(3),))
    np.testing.assert_array_equal(out, ref)


def test_traced_mask_with_a_scalar_value_is_where():
    def f(x):
        x[x > 1.0] = 0.5 * x[0]
        x[np.sin(x) < 0.2] += 0.5     # reads x[mask]: the mask is decided (guards)
        return np.sum(x * x)
    x = np.array([0.5, 2.0, 3.0])

    def g(x):
        x[x > 1.0] = 0.5 * x[0]
        return np.sum(x * x)
    v, gr = bn.value_and_grad(g)(x)
    ref = np.where(x > 1.0, 0.25, x)
    close(v, np.sum(ref ** 2))
    close(gr, complex_step(g, (x,), 0))
    v, gr = bn.value_and_grad(f)(x)
    close(v, f(x.copy()))
    close(gr, complex_step(f, (x,), 0))

    def h(x, m):                        # a boolean array argument as the mask
        x[m] = x[0] * 3.0
        return np.sum(x * x)
    for m in (np.array([False, True, True]), np.array([True, False, True])):
        v, gr = bn.value_and_grad(h)(x, m)
        close(v, h(x.copy(), m))
        close(gr, complex_step(lambda x: h(x, m), (x,), 0))


# -- what stays refused, with its error -------------------------------------------------------

REFUSED = {
    "numpy destination": (lambda x: _into_numpy(x), bn.InplaceError, "np.zeros_like"),
    "traced index and more": (lambda x, i: x.__setitem__((i, 0), 1.0), bn.InplaceError,
                              "traced indices next to"),
    "traced mask, wrong length": (lambda x: x.__setitem__(x > 0, x), bn.ShapeError,
                                  "cannot assign 3 input values"),
    "read-only diagonal": (lambda x: np.diagonal(x.reshape(1, 3)).__setitem__(0, 1.0),
                           bn.InplaceError, "read-only"),
    "broadcast shape": (lambda x: x.__setitem__(slice(None), np.ones(4)), bn.ShapeError,
                        "broadcast"),
    "resize": (lambda x: x.resize(4), bn.UnsupportedMethodError, "concatenate"),
    "setting shape": (lambda x: setattr(x, "shape", (3, 1)), bn.InplaceError, "reshape"),
    "scalar item": (lambda x: x[0].__setitem__((), 1.0), bn.InplaceError, "immutable"),
    "out into numpy": (lambda x: np.add(x, 1.0, out=np.zeros(3)), bn.InplaceError,
                       "np.zeros_like"),
    "reduction out shape": (lambda x: np.sum(x, out=np.zeros_like(x)), bn.ShapeError,
                            "out has shape"),
    "pickle": (lambda x: __import__("pickle").dumps(x), bn.ConcretizationError, "pickl"),
}


def _into_numpy(x):
    out = np.zeros(3)
    kept = [out]                    # a second reference: the array cannot be replaced
    out[:2] = x[:2]
    return kept[0]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_writes_name_the_fix(name):
    f, error, words = REFUSED[name]
    x = np.array([1.0, -2.0, 3.0])
    args = (x, np.array([0, 1])) if f.__code__.co_argcount == 2 else (x,)
    with pytest.raises(error, match=words) as e:
        bn.grad(lambda *a: (f(*a), np.sum(a[0]))[1])(*args)
    assert "test_inplace.py" in str(e.value)          # points at the user's line


def test_writing_a_traced_scalar_into_a_shared_numpy_array_names_the_fix():
    def f(x):
        out = np.zeros(3)
        alias = out                 # two names: replacing one would not change the other
        out[0] = x[0]               # numpy asks float(x[0]): refused, the cause names the fix
        return np.sum(alias)
    with pytest.raises(bn.InplaceError, match="np.zeros_like"):   # not numpy's ValueError
        bn.grad(f)(np.ones(3))


# -- writes into numpy arrays the function holds itself (tracing/promote.py) ------------------

def _spring(k, steps=40, dt=0.05):
    """Explicit Euler with a collision, written on a numpy state array in place."""
    state = np.array([1.0, 0.0])
    for _ in range(steps):
        a = -k * state[0]
        state[1] += dt * a
        state[0] += dt * state[1]
        if state[0] < -0.5:
            state[0] = -0.5
            state[1] = -0.8 * state[1]
    return state[0] ** 2


def _filled(x):
    out = np.zeros((3, 2))          # preallocated, then filled: rows, elements, columns
    for i in range(3):
        out[i] = x * i
        out[i, 1] = x[0] ** 2
    out[:, 0] += x[1]
    out[-1, ::-1] *= x
    return np.sum(out ** 2)


def _in_closure(x):
    acc = np.zeros(2)               # a cell: the inner function reads the same variable

    def add(v):
        acc[0] += v                 # the store in the inner function's frame

    add(x[0])
    add(x[1] ** 2)
    acc[1] = x[0] * x[1]
    return acc[0] * acc[1]


_PERM, _MASK = np.array([2, 0, 3, 1]), np.array([True, False, True, False])


def _scattered(x):
    """Advanced keys: index arrays, a boolean mask, lists, a subscript of a permutation."""
    out = np.zeros((4, 4))
    i = np.arange(4)
    out[i, i] = x ** 2                   # every axis by arrays: numpy holds no view
    out[[0, 2], [1, 3]] = x[:2]
    out[_MASK, 0] = x[2:] * 3.0
    flat = np.zeros(4)
    for k in range(4):
        flat[_PERM[k]] = x[k] * (k + 1)
    flat[_MASK] = np.sin(flat[_MASK])
    return np.sum(np.sin(out)) + np.sum(flat * np.arange(1.0, 5.0))


@pytest.mark.parametrize("f, x", [(_spring, 2.0), (_spring, 7.0), (_filled, [1.0, 2.0]),
                                  (_filled, [-0.5, 3.0]), (_in_closure, [0.7, -1.2]),
                                  (_scattered, [0.3, -0.7, 1.2, 0.5])])
def test_a_numpy_array_the_function_holds_becomes_traced_at_its_first_traced_write(f, x):
    """state = np.array(...); state[1] += dt * a: the local is rebound to a traced copy with
    the value written, so the program runs as written, with numpy's values and the
    gradients of its finite differences (autograd and JAX refuse the line)."""
    x = np.asarray(x, dtype=float) if isinstance(x, list) else x
    g = bn.value_and_grad(f)
    for _ in range(2):                                  # traced, then replayed
        value, grad = g(x)
        assert value == pytest.approx(f(x), rel=1e-13)
        xs = np.atleast_1d(np.asarray(x, dtype=float))
        fd = [(f(_moved(x, j, 1e-6)) - f(_moved(x, j, -1e-6))) / 2e-6 for j in range(xs.size)]
        np.testing.assert_allclose(np.atleast_1d(grad), fd, rtol=1e-6, atol=1e-8)


def _moved(x, j, h):
    if np.ndim(x) == 0:
        return x + h
    y = np.array(x, dtype=float)
    y[j] += h
    return y


@pytest.mark.parametrize("key", ["J", "M", "[1, 3]"])
def test_an_array_a_list_also_holds_is_refused_at_an_advanced_key(key):
    """numpy's assignment at an advanced key holds no view of the array, so the list's
    reference must not be taken for one (at 9fc5147: promoted, the value NaN and the
    gradient 4.0 where numpy's is 44)."""
    source = ("def f(x):\n    J, M = np.array([1, 3]), np.array([False, True, False, True])\n"
              "    buf = np.zeros(4)\n    kept = [buf]\n"
              f"    buf[{key}] = x * 2.0\n    return np.sum(buf) + np.sum(kept[0]) * 10.0\n")
    namespace = {"np": np}
    exec(source, namespace)
    with pytest.raises(bn.InplaceError, match="np.zeros_like"):
        bn.value_and_grad(namespace["f"])(0.7)


def test_a_key_with_a_call_is_refused_with_the_fix():
    def f(x):
        out = np.zeros(4)
        out[np.arange(2)] = x[:2]          # the key would run again: refused
        return np.sum(out)
    with pytest.raises(bn.InplaceError, match="no call in it"):
        bn.grad(f)(np.ones(4))


def test_a_promoted_array_under_jvp_and_vmap():
    xs = np.array([[1.0, 2.0], [-0.5, 3.0], [0.2, 0.1]])
    G = bn.vmap(bn.grad(_filled))(xs)
    for x, got in zip(xs, G):
        np.testing.assert_allclose(got, bn.grad(_filled)(x), rtol=1e-13)
    _, t = bn.jvp(_spring, (2.0,), (1.0,))
    assert t == pytest.approx(bn.grad(_spring)(2.0), rel=1e-12)


_BUFFER = np.zeros(2)


class _Holder:
    def __init__(self):
        self.buf = np.zeros(2)


_HOLDER = _Holder()


def _view_then_write(x):
    out = np.zeros((2, 2))
    row = out[0]                    # a view: it would keep reading the old array
    out[0, 1] = x
    return np.sum(row)


def _global_buffer(x):
    _BUFFER[0] = x
    return np.sum(_BUFFER)


def _attribute(x):
    _HOLDER.buf[0] = x
    return np.sum(_HOLDER.buf)


def _integer_array(x):
    out = np.zeros(2, dtype=int)
    out[0] = x
    return np.sum(out)


def _view_of_another(x):
    big = np.zeros(6)
    buf = big[:4]                   # a view: numpy's write reaches big
    buf[0] = x
    return np.sum(big)


def _listed(x):
    out = np.zeros(2)
    both = [out, out]
    out[0] = x
    return both[1][0]


@pytest.mark.parametrize("f", [_view_then_write, _global_buffer, _attribute, _integer_array,
                               _listed, _view_of_another])
def test_a_numpy_array_seen_from_elsewhere_is_not_replaced(f):
    """Another name, a list, a view, a global or an attribute would keep the old array:
    the write is refused, with the fix, rather than computed with a stale copy."""
    with pytest.raises(bn.InplaceError, match="np.zeros_like"):
        bn.grad(f)(0.5)


# -- autograd: the functional rewrites agree --------------------------------------------------

REWRITES = [
    # (in-place program, the same computation without writes, for autograd)
    (lambda x: _set(x, (slice(None), 1), x[:, 0] ** 2),
     lambda x: anp.stack([x[:, 0], x[:, 0] ** 2, x[:, 2]], axis=1)),
    (lambda x: _add(x, np.array([0, 0, 2]), 1.5 * x[3]),
     lambda x: anp.concatenate([x[:1] + 1.5 * x[3], x[1:2], x[2:3] + 1.5 * x[3], x[3:]])),
    (lambda x: _set(x, KEYS["full mask"], 2.0 * x[0, 0]),
     lambda x: anp.where(KEYS["full mask"], 2.0 * x[0, 0], x)),
]


def _set(x, key, v):
    x[key] = v
    return x


def _add(x, key, v):
    x[key] += v
    return x


@pytest.mark.parametrize("k", range(len(REWRITES)))
def test_functional_rewrites_under_autograd(k):
    program, rewrite = REWRITES[k]
    x, _ = _inputs(k)

    def loss(f, np_):
        return lambda x: np_.sum(np_.sin(f(x * 1.0)) * WEIGHTS)
    close(loss(program, np)(x.copy()), loss(rewrite, anp)(x))
    close(bn.grad(loss(program, np))(x.copy()), autograd.grad(loss(rewrite, anp))(x))


# functions whose result numpy makes a new array, though burnumba's value is the operand's own
# node (x * 1, x ** 1, +x, a scan or sort along an axis of length 1, flatten): a write into
# the result must leave the operand as it was (they shared it, a silently wrong number)
NEW_ARRAYS = {
    "x * 1": lambda x: x * 1.0, "1 * x": lambda x: 1.0 * x,
    "np.multiply": lambda x: np.multiply(x, 1.0),
    "x ** 1": lambda x: x ** 1, "np.power": lambda x: np.power(x, 1.0), "+x": lambda x: +x,
    "np.positive": lambda x: np.positive(x), "np.conjugate": lambda x: np.conjugate(x),
    "flatten": lambda x: x.flatten(), "x * ones": lambda x: x * np.ones(4),
    "cumsum": lambda x: np.cumsum(x[:, None], axis=1)[:, 0],
    "cumprod": lambda x: np.cumprod(x[:, None], axis=1)[:, 0],
    "sort": lambda x: np.sort(x[:, None], axis=1)[:, 0],
}


@pytest.mark.parametrize("name", sorted(NEW_ARRAYS))
def test_a_write_into_a_new_array_leaves_its_operand_alone(name):
    def f(x):
        y = NEW_ARRAYS[name](x)
        y[0] = 5.0
        return np.sum(x) + 10.0 * np.sum(y)
    x = np.array([0.5, -1.0, 2.0, 0.25])
    value, g = bn.value_and_grad(f)(x)
    assert value == f(x.copy())
    np.testing.assert_array_equal(g, [1.0, 11.0, 11.0, 11.0])


# -- x.at[idx].set(v) and its kin (JAX's functional updates, burnumba/numpy/at.py): each
# against numpy's equivalent on a copy (JAX's semantics for these keys), by the complex step
AT_KEYS = {name: KEYS[name] for name in ("int", "two ints", "slice with step", "column",
                                         "new axis", "int array", "negative ints",
                                         "fancy and slice")}
AT_REFERENCES = {
    "set": lambda y, key, v: y.__setitem__(key, v),
    "add": lambda y, key, v: np.add.at(y, key, v),
    "multiply": lambda y, key, v: y.__setitem__(key, y[key] * v),
    "divide": lambda y, key, v: y.__setitem__(key, y[key] / v),
    "power": lambda y, key, v: y.__setitem__(key, y[key] ** v),
}


@pytest.mark.parametrize("method", sorted(AT_REFERENCES))
@pytest.mark.parametrize("name", sorted(AT_KEYS))
def test_jax_at_updates(method, name):
    key = AT_KEYS[name]
    shape = _target(key)
    size = int(np.prod(shape))

    def ours(x, w):
        v = np.sin(w[:size]).reshape(shape) + 1.5
        y = getattr(x.at[key], method)(v)
        return np.sum(np.cos(y) * WEIGHTS) + np.sum(x * x)     # x itself is unchanged

    def theirs(x, w):
        v = np.sin(w[:size]).reshape(shape) + 1.5
        y = x.copy()
        AT_REFERENCES[method](y, key, v)
        return np.sum(np.cos(y) * WEIGHTS) + np.sum(x * x)
    args = _inputs(3)
    if name == "fancy and slice" and method not in ("set", "add"):    # row 1 twice
        with pytest.raises(bn.UnsupportedOpError, match="repeated index"):
            bn.value_and_grad(ours, argnums=(0, 1))(*args)
        return
    value, grads = bn.value_and_grad(ours, argnums=(0, 1))(*args)
    ref_value, ref_grads = reference(theirs, args)
    close(value, ref_value)
    for g, r in zip(grads, ref_grads):
        close(g, r)


def test_jax_at_add_repeats_min_max_apply_get_and_refusals():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    # add: a repeated index adds every time (JAX's, numpy's add.at)
    g = bn.grad(lambda x: np.sum(x.at[np.array([0, 0, 2])].add(x[1:]) ** 2))(x)
    y = x.copy()
    np.add.at(y, [0, 0, 2], x[1:])
    np.testing.assert_allclose(g, [2 * y[0], 2 * y[1] + 2 * y[0], 2 * y[2] + 2 * y[0],
                                   2 * y[3] + 2 * y[2]])
    out = bn.trace(lambda x: x.at[1:3].min(2.5) + x.at[::2].max(2.0) + x.at[0].get()
                   + x.at[-1].apply(np.exp), x)(x)
    np.testing.assert_array_equal(out, np.array([1.0, 2.0, 2.5, 4.0]) + [2.0, 2.0, 3.0, 4.0]
                                  + 1.0 + np.array([1.0, 2.0, 3.0, np.exp(4.0)]))
    with pytest.raises(bn.UnsupportedOpError, match="repeated index"):
        bn.grad(lambda x: np.sum(x.at[np.array([1, 1])].multiply(2.0)))(x)
    with pytest.raises(bn.UnsupportedOpError, match="traced index"):
        bn.grad(lambda x, i: np.sum(x.at[i].max(0.0)))(x, np.array([1, 2]))
    with pytest.raises(bn.UnsupportedOpError, match="mode='drop'"):
        bn.grad(lambda x: np.sum(x.at[0].set(1.0, mode="drop")))(x)
    with pytest.raises(AttributeError, match="set, add, multiply"):
        bn.grad(lambda x: np.sum(x.at[0].scatter(1.0)))(x)


def _made_outside():
    buf = np.zeros(2)               # the enclosing scope outlives the trace
    holder = _Holder()              # an object: the trace cache does not key (hold) buf

    def loss(x):
        buf[0] = x * holder.buf[1]
        return np.sum(buf)
    return loss


def test_a_closure_array_from_outside_the_trace_is_not_replaced():
    """The cell belongs to a function that made the traced one: it outlives the trace, so a
    traced value must not be left in it; the write is refused with the fix."""
    with pytest.raises(bn.InplaceError, match="np.zeros_like"):
        bn.grad(_made_outside())(0.5)


def test_a_traced_index_into_a_functions_numpy_array():
    """numpy converts a traced key too; that conversion is never taken for the value's (the
    key written as the value): a constant value at a traced index keeps numpy's result, and
    a traced value at a traced index is refused with the fix."""
    def constant_value(x, i):
        buf = np.zeros(3)
        buf[i] = 5.0
        return np.sum(buf * np.arange(3.0)) * x

    for i in (0, 1, 2):
        assert bn.grad(constant_value)(1.0, np.array([i])) == 5.0 * i

    def traced_value(x, i):
        buf = np.zeros(3)
        buf[i[0]] = x
        return np.sum(buf)

    with pytest.raises(bn.InplaceError, match="np.zeros_like"):
        bn.grad(traced_value)(1.0, np.array([2]))
