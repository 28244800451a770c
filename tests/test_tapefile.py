"""Tapes as data (burnumba/_tapefile.py): pickling, tape files, their validation, pictures.

A tape that travels runs elsewhere without its function: the subprocess tests load tapes in
a fresh interpreter whose tracer raises if called, and compare results bit for bit. Damaged
and hostile tapes must raise TapeFormatError; the fuzz tests run in a subprocess, so that a
crash fails the test instead of killing pytest.
"""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import burnumba as bn
from burnumba import _forward, _tapefile, nn
from burnumba.kernels import layout


def small(a, b):
    """micrograd's README graph (bench/workloads.py), with relu from burnumba."""
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + bn.relu(b + a)
    d = d + 3 * d + bn.relu(b - a)
    e = c - d
    f = e ** 2
    g = f / 2.0
    return g + 10.0 / f


def with_aux(x, w):
    y = np.tanh(x @ w)
    return np.sum(y ** 2), {"y": y, "scale": 2.5, "name": "layer"}


def gpt_case(dtype=np.float32):
    model = nn.GPT(vocab_size=11, n_embd=8, n_head=2, n_layer=1, block_size=4)
    params = model.init(seed=0, dtype=dtype)
    idx = np.random.default_rng(0).integers(0, 11, (2, 4))
    return model.loss, (params, idx, np.roll(idx, 1, axis=1))


def cases():
    """name -> (tape, args): scalar and tensor tapes, float64 and float32, aux, forward."""
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    loss, gargs = gpt_case()
    out = {
        "small": (bn.trace(small, -4.0, 2.0, argnums=(0, 1)), (-4.0, 2.0)),
        "gpt32": (bn.value_and_grad(loss).trace(*gargs), gargs),
        "gpt64": (bn.value_and_grad(gpt_case(np.float64)[0]).trace(*gpt_case(np.float64)[1]),
                  gpt_case(np.float64)[1]),
        "aux": (bn.value_and_grad(with_aux, has_aux=True).trace(x, w), (x, w)),
        "mlp32": (bn.trace(lambda x, w: np.sum(np.tanh(x @ w)), x.astype(np.float32),
                           w.astype(np.float32)), (x.astype(np.float32), w.astype(np.float32))),
    }
    fwd = _forward._forward_cache(lambda x: np.sin(x) * np.sum(x ** 2), (0,))
    out["forward"] = (fwd.trace(x), (x,))
    return out


def results(tape, args):
    """Everything a tape computes for args: output, value and gradient, a VJP, aux, and the
    tangent sweep for forward-mode tapes (as bn.jvp runs it)."""
    _, leaves = tape._leaves(args, {})
    res = {"call": tape(*args)}
    if tape.out_shape == ():
        value, flat = tape.run_value_and_grad(leaves)
        res["vg"] = (value, flat)
        res["aux"] = tape.aux_values(tape.state())
        if tape.aux is None:
            res["value_and_grad"] = tape.value_and_grad(*args)
    seed = np.linspace(-1.0, 1.0, int(np.prod(tape.out_shape))).reshape(tape.out_shape)
    res["vjp"] = tape.run_vjp(leaves, seed)
    if tape.forward_mode:
        state = tape.state()
        state.write(leaves)
        _forward._write_tangents(tape, state, [np.ones(np.shape(x)) for x in leaves])
        state.run(layout.MODE_JVP)
        res["jvp"] = _forward._out(tape, state, "grad")
    return res


def same(a, b):
    """Bit-identical, through dicts, tuples and arrays."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic, float)):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b


# A fresh interpreter whose tracer raises: a tape that retraced would fail here.
CHILD = textwrap.dedent("""
    import pickle, sys
    import burnumba as bn
    from burnumba import _tracer, _api
    def no_trace(*a, **k):
        raise AssertionError("the tape was traced again")
    _tracer.Builder.__init__ = no_trace
    _api._trace = no_trace
    sys.path.insert(0, sys.argv[3])
    from test_tapefile import results
    with open(sys.argv[1], "rb") as fh:
        blob = pickle.load(fh)
    out = {name: results(bn.load_tape(tape) if isinstance(tape, str) else tape, args)
           for name, (tape, args) in blob.items()}
    with open(sys.argv[2], "wb") as fh:
        pickle.dump(out, fh)
""")


def run_child(tmp_path, blob):
    src, dst = tmp_path / "in.pkl", tmp_path / "out.pkl"
    src.write_bytes(pickle.dumps(blob))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst),
                           os.path.dirname(__file__)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return pickle.loads(dst.read_bytes())


# -- pickling ----------------------------------------------------------------------------------
def test_pickle_roundtrip_in_process():
    for name, (tape, args) in cases().items():
        back = pickle.loads(pickle.dumps(tape))
        assert back is not tape and back.key == tape.key, name
        assert np.array_equal(back.I, tape.I) and back.F0.tobytes() == tape.F0.tobytes()
        assert not back.I.flags.writeable and not back.F0.flags.writeable
        assert same(results(back, args), results(tape, args)), name


def test_pickle_runs_in_another_process_without_tracing(tmp_path):
    blob = cases()
    expected = {name: results(tape, args) for name, (tape, args) in blob.items()}
    got = run_child(tmp_path, blob)
    for name in expected:
        assert same(got[name], expected[name]), name


def test_pickle_has_no_function_thread_state_or_kernel():
    def local_function(a):                      # not importable: pickle would fail on it
        return a * a + 1.0
    tape = bn.trace(local_function, 3.0)
    tape.value_and_grad(3.0)                    # makes this thread's State
    blob = pickle.dumps(tape)
    assert b"local_function" not in blob and b"_thread" not in blob
    back = pickle.loads(blob)
    assert back.value_and_grad(3.0) == (10.0, 6.0)


def test_pickled_tape_threads_get_their_own_state():
    from concurrent.futures import ThreadPoolExecutor
    tape = pickle.loads(pickle.dumps(bn.trace(small, -4.0, 2.0, argnums=(0, 1))))
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda k: tape.value_and_grad(-4.0 + k, 2.0), range(8)))
    assert outs == [bn.value_and_grad(small, argnums=(0, 1))(-4.0 + k, 2.0) for k in range(8)]


def test_pickle_from_another_burnumba_is_refused():
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    arrays, meta = _tapefile.tape_state(tape)
    for field, value in (("digest", "0123456789abcdef"), ("format", "burnumba-tape-0")):
        bad = dict(meta, **{field: value, "burnumba": "0.0.1"})
        with pytest.raises(bn.TapeFormatError, match=f"{field}.*0.0.1|0.0.1.*{field}") as e:
            pickle.loads(pickle.dumps(_Reduced(arrays, bad)))
        assert "retrace" in str(e.value)


class _Reduced:
    """Pickles as a tape with these arrays and meta (a tape from elsewhere)."""

    def __init__(self, arrays, meta):
        self.state = (arrays, meta)

    def __reduce__(self):
        return _tapefile.from_pickle, self.state


def test_unpickling_validates():
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    arrays, meta = _tapefile.tape_state(tape)
    I = arrays["I"].copy()
    n = int(I[0])
    I[layout.H + n + 5] = 7                                # node 5's a0 after node 5
    with pytest.raises(bn.TapeFormatError, match="node %5"):
        pickle.loads(pickle.dumps(_Reduced({"I": I, "F0": arrays["F0"]}, meta)))
