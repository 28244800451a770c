"""Tapes as data (burnumba/ir/tapefile.py): pickling, tape files, their validation, pictures.

A tape that travels runs elsewhere without its function: the subprocess tests load tapes in
a fresh interpreter whose tracer raises if called, and compare results bit for bit. Damaged
and hostile tapes must raise TapeFormatError; the fuzz tests run in a subprocess, so that a
crash fails the test instead of killing pytest.
"""
import copy
import io
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import burnumba as bn
from burnumba import kernels, nn
from burnumba.transforms import forward as _forward
from burnumba.ir import tapefile as _tapefile
from burnumba.ir.tape import from_pickle
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
        res["jvp"] = _forward._out(tape, None, state, "grad")
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
    from burnumba.tracing import tracer as _tracer
    from burnumba.transforms import core as _api
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


def _old_f(w, x):
    """The function tests/data/tape_e48d701.pkl was traced from (make_tape_e48d701.py)."""
    p = bn.softmax(np.tanh(x @ w), axis=-1)
    return np.sum(p * p) + 0.5 * np.sum(w * w)


def test_a_tape_pickled_before_the_layout_change_loads_and_runs():
    # pickled by the burnumba of e48d701, whose Tape reduced to burnumba._tapefile.from_pickle
    # (now burnumba.ir.tape's; burnumba/_tapefile.py keeps the old path)
    blob = (Path(__file__).parent / "data" / "tape_e48d701.pkl").read_bytes()
    assert b"burnumba._tapefile" in blob and b"from_pickle" in blob
    tape = pickle.loads(blob)
    assert isinstance(tape, bn.Tape) and len(tape) == 12
    w = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    x = np.linspace(0.5, -0.5, 8).reshape(2, 4)
    for k in range(3):                                   # other points than the traced one
        wk, xk_ = w * (1.0 + 0.3 * k) - 0.1 * k, x + 0.2 * k
        value, grad = tape.value_and_grad(wk, xk_)
        want_value, want_grad = bn.value_and_grad(_old_f)(wk, xk_)
        assert value == want_value and grad.tobytes() == want_grad.tobytes()
        # and against the formula in numpy: d/dw of sum(p^2) + |w|^2 / 2
        h = np.tanh(xk_ @ wk)
        e = np.exp(h - h.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        gp = 2.0 * p
        gh = p * (gp - np.sum(gp * p, axis=-1, keepdims=True))
        np.testing.assert_allclose(value, np.sum(p * p) + 0.5 * np.sum(wk * wk), rtol=1e-13)
        np.testing.assert_allclose(grad, xk_.T @ (gh * (1.0 - h * h)) + wk, rtol=1e-12)
    import burnumba._tape as old_tape
    assert old_tape.Tape is bn.Tape


class _Reduced:
    """Pickles as a tape with these arrays and meta (a tape from elsewhere)."""

    def __init__(self, arrays, meta):
        self.state = (arrays, meta)

    def __reduce__(self):
        return from_pickle, self.state


def test_unpickling_validates():
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    arrays, meta = _tapefile.tape_state(tape)
    I = arrays["I"].copy()
    n = int(I[0])
    I[layout.H + n + 5] = 7                                # node 5's a0 after node 5
    with pytest.raises(bn.TapeFormatError, match="node %5"):
        pickle.loads(pickle.dumps(_Reduced({"I": I, "F0": arrays["F0"]}, meta)))


# -- files -------------------------------------------------------------------------------------
def test_file_roundtrip_path_and_file_object(tmp_path):
    for name, (tape, args) in cases().items():
        path = tmp_path / f"{name}.npz"
        tape.save(path)
        buf = io.BytesIO()
        tape.save(buf)
        buf.seek(0)
        for back in (bn.load_tape(path), bn.load_tape(str(path)), bn.load_tape(buf)):
            assert back.key == tape.key and back.aux == tape.aux if tape.aux is None else True
            assert same(results(back, args), results(tape, args)), name
        with np.load(path, allow_pickle=False) as z:      # a plain npz, no pickle inside
            assert sorted(z.files) in (["F0", "I", "format", "meta"],       # dense, or runs
                                       ["F0_runs", "F0_size", "F0_values", "I", "format",
                                        "meta"])
            assert json.loads(z["meta"].tobytes())["format"] == _tapefile.FORMAT


def test_file_runs_in_another_process_without_tracing(tmp_path):
    blob = cases()
    expected = {name: results(tape, args) for name, (tape, args) in blob.items()}
    for name, (tape, args) in blob.items():
        tape.save(tmp_path / f"{name}.npz")
    files = {name: (str(tmp_path / f"{name}.npz"), args) for name, (_, args) in blob.items()}
    got = run_child(tmp_path, files)
    for name in expected:
        assert same(got[name], expected[name]), name


class Opaque:
    """A static argument or aux value that JSON cannot hold (pickle can)."""

    def __hash__(self):
        return 1

    def __eq__(self, other):
        return type(other) is Opaque


def test_save_refuses_values_json_cannot_hold(tmp_path):
    tape = bn.trace(lambda x, s: x * 2.0, 1.0, Opaque(), static_argnums=1)
    with pytest.raises(bn.TapeFormatError, match="signature.*Opaque"):
        tape.save(tmp_path / "t.npz")
    assert not (tmp_path / "t.npz").exists()
    f = bn.value_and_grad(lambda x: (x * x, {"obj": Opaque()}), has_aux=True)
    with pytest.raises(bn.TapeFormatError, match="aux.*Opaque"):
        f.trace(1.0).save(io.BytesIO())
    pickle.loads(pickle.dumps(tape))                       # pickle keeps any picklable value


def test_signature_with_static_values_and_structures_survives(tmp_path):
    def f(params, x, n, *, scale):
        return np.sum(params["w"] * x[0]) * n + scale

    args = ({"w": np.ones(3), "b": (np.zeros(2), [1.5])}, (np.arange(3.0),), 3)
    tape = bn.value_and_grad(f).trace(*args, scale=np.float32(2.0))
    tape.save(tmp_path / "t.npz")
    back = bn.load_tape(tmp_path / "t.npz")
    assert back.key == tape.key
    assert same(back.value_and_grad(*args, scale=np.float32(2.0)),
                tape.value_and_grad(*args, scale=np.float32(2.0)))
    # a small int is data (a tape input), a big one static
    assert same(back.value_and_grad(args[0], args[1], 4, scale=np.float32(2.0)),
                bn.value_and_grad(f)(args[0], args[1], 4, scale=np.float32(2.0)))
    args = args[:2] + (2 ** 30,)
    tape = bn.value_and_grad(f).trace(*args, scale=np.float32(2.0))
    tape.save(tmp_path / "t.npz")
    back = bn.load_tape(tmp_path / "t.npz")
    with pytest.raises(bn.ShapeError):
        back.value_and_grad(args[0], args[1], 4, scale=np.float32(2.0))


# -- damaged and hostile files -----------------------------------------------------------------
def write(path, I, F0, meta, fmt=_tapefile.FORMAT):
    """A tape file with these arrays and meta (a dict, as tape_state gives it, or text)."""
    text = meta if isinstance(meta, str) else _tapefile.meta_json(meta)
    np.savez(path, format=np.array(fmt), I=I, F0=F0,
             meta=np.frombuffer(text.encode(), np.uint8))
    return path


def parts(tape):
    arrays, meta = _tapefile.tape_state(tape)
    return arrays["I"].copy(), arrays["F0"].copy(), copy.deepcopy(meta)


def col(I, name, n):
    """The writable column ``name`` of a copy of I."""
    k = layout.COLUMNS.index(name) if name in layout.COLUMNS else 5
    return I[layout.H + k * n:layout.H + (k + 1) * n + (name == "off")]


def first(tape, name):
    return next(i for i in range(tape.n) if kernels.ROWS[tape.op[i]].name == name)


def refused(path, *words):
    with pytest.raises(bn.TapeFormatError) as e:
        bn.load_tape(path)
    msg = str(e.value)
    assert str(path) in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


def test_hostile_columns(tmp_path):
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    n = tape.n
    mul = first(tape, "multiply")

    def case(name, edit, *words):
        I, F0, meta = parts(tape)
        edit(I, F0, meta)
        refused(write(tmp_path / f"{name}.npz", I, F0, meta), *words)

    case("operand_after", lambda I, F, m: col(I, "a0", n).__setitem__(mul, mul), f"%{mul}", "a0")
    case("operand_far", lambda I, F, m: col(I, "a1", n).__setitem__(mul, 10 ** 6), "a1")
    case("opcode_big", lambda I, F, m: col(I, "op", n).__setitem__(3, 999), "%3", "opcode")
    case("opcode_neg", lambda I, F, m: col(I, "op", n).__setitem__(3, -1), "%3", "opcode")
    case("offsets_past_end", lambda I, F, m: col(I, "off", n).__setitem__(n, 10 ** 6), "F0")
    case("offsets_decrease", lambda I, F, m: col(I, "off", n).__setitem__(4, 0), "off[")
    case("need", lambda I, F, m: col(I, "need", n).__setitem__(2, 7), "need")
    case("node_count", lambda I, F, m: I.__setitem__(0, 10 ** 6), "node count")
    case("pp_on_map", lambda I, F, m: col(I, "pp", n).__setitem__(mul, 0), "pp")
    case("out", lambda I, F, m: m.__setitem__("out", n + 3), "out")
    case("out_shape", lambda I, F, m: m.__setitem__("out_shape", (2,)), "out_shape")
    case("shape", lambda I, F, m: m["shapes"].__setitem__(2, (3,)), "%2", "shape")
    case("in_slots", lambda I, F, m: m.__setitem__(
        "in_slots", [(5, 1, (), True)] + list(m["in_slots"][1:])), "in_slots[0]")
    case("short_F0", lambda I, F, m: m.__setitem__("dtype", "float32"), "F0")
    I, F0, meta = parts(tape)
    refused(write(tmp_path / "digest.npz", I, F0, dict(meta, digest="0" * 16)), "digest",
            "retrace")
    refused(write(tmp_path / "format.npz", I, F0, meta, fmt="burnumba-tape-0"),
            "burnumba-tape-0", "retrace")
    refused(write(tmp_path / "I_dtype.npz", I.astype(np.int64), F0, meta), "array I")
    refused(write(tmp_path / "no_F0.npz", I, F0[:0], meta), "F0")



def test_files_written_under_a_shorter_op_table_still_load(tmp_path):
    """Rows are only appended to the op table, so a file whose digest is an earlier
    table's (its first k rows) loads and runs the same; an opcode of a row that table did
    not have yet is refused."""
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    used = int(np.max(tape.op)) + 1
    older = next(d for d, k in _tapefile.prefixes().items() if k == used)
    I, F0, meta = parts(tape)
    back = bn.load_tape(write(tmp_path / "older.npz", I, F0, dict(meta, digest=older)))
    assert same(back.value_and_grad(-4.0, 2.0), tape.value_and_grad(-4.0, 2.0))
    shorter = next(d for d, k in _tapefile.prefixes().items() if k == used - 1)
    refused(write(tmp_path / "shorter.npz", I, F0, dict(meta, digest=shorter)), "opcode")

def test_hostile_parameters(tmp_path):
    loss, gargs = gpt_case()
    tape = bn.value_and_grad(loss).trace(*gargs)
    P0 = len(tape.I) - len(tape.P)

    def case(row, k, value, *words):
        i = first(tape, row)
        I, F0, meta = parts(tape)
        I[P0 + int(tape.pp[i]) + k] = value(int(tape.P[tape.pp[i] + k]), i)
        refused(write(tmp_path / f"{row}{k}.npz", I, F0, meta), f"%{i}", row, *words)

    case("matmul", 1, lambda v, i: v * 2, "need")              # M larger than the node
    case("matmul", 3, lambda v, i: v + 1, "need")              # N
    case("matmul", 4, lambda v, i: 2, "(nb, M, K, N, sa, sb)")
    case("gather", 0, lambda v, i: int(tape.off[i]), "position")   # reads its own slice
    case("gather", 3, lambda v, i: -1, "position")
    case("cross_entropy", 1, lambda v, i: v + 1, "classes")
    case("take", 1, lambda v, i: v * 3, "rows of")
    case("layer_norm", 2, lambda v, i: 2, "axis view")
    case("causal_softmax", 1, lambda v, i: v + 1, "axis view")
    case("sum_axis", 0, lambda v, i: v + 5, "axis view") if "sum_axis" in tape.ops else None

    for row, edit in (("where", 10 ** 5), ("sum", 10 ** 5), ("inner", 10 ** 5)):
        f = {"where": lambda x: np.sum(bn.numpy.where(x > 0, x, 2.0 * x)),
             "sum": lambda x: bn.numpy.sum(x * x),
             "inner": lambda x: bn.inner([x[0], x[1]], [x[1], x[2]])}[row]
        t = bn.trace(f, np.arange(3.0) - 1.0)
        i = first(t, row)
        I, F0, meta = parts(t)
        I[len(I) - len(t.P) + int(t.pp[i]) + (0 if row == "where" else 1)] = edit
        refused(write(tmp_path / f"{row}.npz", I, F0, meta), f"%{i}", row)
        I[len(I) - len(t.P) + int(t.pp[i])] = 10 ** 6                # a count past P
        refused(write(tmp_path / f"{row}_count.npz", I, F0, meta), f"%{i}")


def test_hostile_position_patterns(tmp_path):
    """A gather's immediate tells the kernel its positions are one run (1) or one position
    repeated (2), and the kernel then trusts it: a file whose immediate says so falsely is
    refused, as is any other value."""
    t = bn.trace(lambda x: np.sum(x[1:] * bn.numpy.broadcast_to(x[0], (3,))), np.arange(4.0))
    run, rep = (next(i for i in range(t.n)
                     if kernels.ROWS[t.op[i]].name == "gather" and t.imm[i] == k)
                for k in (1.0, 2.0))
    for name, i, k, value in (("run", run, 1, None), ("repeat", rep, 1, None),
                              ("imm", run, None, 3.0), ("imm_rep", run, None, 2.0)):
        I, F0, meta = parts(t)
        if value is None:                    # a position that breaks the pattern, in range
            I[len(I) - len(t.P) + int(t.pp[i]) + k] = int(t.P[t.pp[i]]) + 2
        else:
            F0[i] = value
        refused(write(tmp_path / f"{name}.npz", I, F0, meta), f"%{i}", "gather", "immediate")
    I, F0, meta = parts(t)
    loaded = bn.load_tape(write(tmp_path / "fine.npz", I, F0, meta))
    np.testing.assert_array_equal(loaded.value_and_grad(np.arange(4.0) + 1.0)[1],
                                  t.value_and_grad(np.arange(4.0) + 1.0)[1])


def test_not_a_tape_file(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("hello")
    refused(text, "not a .npz")
    refused(tmp_path / "missing.npz", "no such")
    checkpoint = tmp_path / "ckpt.npz"
    bn.save_checkpoint(checkpoint, {"w": np.ones(2)})
    refused(checkpoint, "not a burnumba-tape-1")
    # a pickle inside the npz: an object array is refused, never unpickled
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    I, F0, meta = parts(tape)
    evil = tmp_path / "pickle.npz"
    np.savez(evil, format=np.array(_tapefile.FORMAT), I=I, F0=F0,
             meta=np.array([{"__reduce__": "os.system"}], dtype=object))
    refused(evil, "not a readable tape file")
    np.savez(evil, format=np.array(_tapefile.FORMAT), I=np.array([print], dtype=object), F0=F0,
             meta=np.frombuffer(_tapefile.meta_json(meta).encode(), np.uint8))
    refused(evil, "not a readable tape file")
    bad_json = write(tmp_path / "json.npz", I, F0, '{"key": {"tuple": [{"type": "os"}]}')
    refused(bad_json, "meta")


def test_truncated_files(tmp_path):
    loss, gargs = gpt_case()
    for tape in (bn.trace(small, -4.0, 2.0, argnums=(0, 1)),
                 bn.value_and_grad(loss).trace(*gargs)):
        buf = io.BytesIO()
        tape.save(buf)
        data = buf.getvalue()
        for cut in sorted({0, 1, 30, len(data) // 3, len(data) // 2, len(data) - 30,
                           len(data) - 1}):
            path = tmp_path / "cut.npz"
            path.write_bytes(data[:cut])
            refused(path)


def test_every_row_has_a_validation_rule():
    missing = [r.name for r in kernels.ROWS if r.name not in _tapefile.RULES]
    assert not missing, f"rows without a tape-file validation rule: {missing}"
    assert set(_tapefile.RULES) == {r.name for r in kernels.ROWS}


# Random damage, in a subprocess: every load must either raise TapeFormatError or give a tape
# whose runs raise only burnumba errors (a flipped opcode or immediate may still be valid).
FUZZ = textwrap.dedent("""
    import io, sys, zipfile
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import burnumba as bn
    import test_tapefile as T
    from burnumba.ir import tapefile as _tapefile
    rng = np.random.default_rng(int(sys.argv[2]))
    flips = int(sys.argv[3])
    counts = {"refused": 0, "ran": 0, "run_error": 0}
    def attempt(load):
        try:
            tape = load()
        except bn.TapeFormatError:
            counts["refused"] += 1
            return
        try:
            T.results(tape, args)
            counts["ran"] += 1
        except bn.BurnumbaError:
            counts["run_error"] += 1
    for name in ("small", "aux", "gpt32"):
        tape, args = T.cases()[name]
        arrays, meta = _tapefile.tape_state(tape)
        text = _tapefile.meta_json(meta).encode()
        buf = io.BytesIO(); tape.save(buf); data = buf.getvalue()
        for _ in range(flips):
            for what in ("I", "F0", "meta", "file", "ints"):
                I, F0, m = arrays["I"].copy(), arrays["F0"].copy(), bytearray(text)
                raw = bytearray(data)
                if what == "ints":              # small plausible values: harder to refuse
                    for _ in range(int(rng.integers(1, 3))):
                        I[int(rng.integers(len(I)))] = int(rng.integers(-1, 2 * tape.n))
                target = {"I": I.view(np.uint8), "F0": F0.view(np.uint8), "meta": m,
                          "file": raw, "ints": bytearray(1)}[what]
                for _ in range(int(rng.integers(1, 4))):
                    k = int(rng.integers(len(target)))
                    target[k] ^= 1 << int(rng.integers(8))
                if what == "file":
                    attempt(lambda: bn.load_tape(io.BytesIO(bytes(raw))))
                    continue
                out = io.BytesIO()
                np.savez(out, format=np.array(_tapefile.FORMAT), I=I, F0=F0,
                         meta=np.frombuffer(bytes(m), np.uint8))
                out.seek(0)
                attempt(lambda: bn.load_tape(out))
    print(counts)
""")


def test_random_bit_flips_never_crash(tmp_path):
    proc = subprocess.run([sys.executable, "-c", FUZZ, os.path.dirname(__file__), "12",
                           os.environ.get("BURNUMBA_TAPE_FLIPS", "150")],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    counts = eval(proc.stdout.strip().splitlines()[-1])
    assert counts["refused"] > 0 and counts["ran"] > 0, counts


# -- pictures ----------------------------------------------------------------------------------
def dot_graph(text):
    """(declared node ids, edges) of DOT text, checking that every edge's ends are declared."""
    import re
    assert text.startswith("digraph tape {") and text.rstrip().endswith("}")
    declared = re.findall(r"^  (\w+) \[label=", text, re.M)
    edges = re.findall(r"^  (\w+) -> (\w+);", text, re.M)
    assert len(set(declared)) == len(declared)
    for a, b in edges:
        assert a in declared and b in declared, (a, b)
    assert text.count("{") == text.count("}")
    return declared, edges


def test_to_dot():
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    value, _ = tape.value_and_grad(-4.0, 2.0)
    text = tape.to_dot()
    declared, edges = dot_graph(text)
    assert len(declared) == tape.n and len(edges) >= tape.n - 3
    for name in ("input", "multiply", "relu", "divide", "(output)", "diff input 0"):
        assert name in text
    assert "val" not in text and "grad" not in text
    shown = tape.to_dot(values=True, grads=True)
    assert f"val {value:.4g}" in shown and "grad 138.8" in shown and "grad 645.6" in shown
    big = bn.value_and_grad(gpt_case()[0]).trace(*gpt_case()[1])
    declared, _ = dot_graph(big.to_dot(max_nodes=12))
    assert len(declared) == 13 and "hidden" in declared
    declared, edges = dot_graph(big.to_dot())
    assert len(declared) == big.n
    assert ("n0", f"n{big.n - 1}") not in edges


# -- F0 as non-zero runs -----------------------------------------------------------------------
def test_compact_f0_keeps_every_bit_and_only_the_nonzero_entries():
    for dtype in (np.float64, np.float32):
        tape = bn.trace(lambda x: np.sum(np.tanh(x) * 3.0), np.zeros(12, dtype))
        arrays, _ = _tapefile.tape_state(tape)
        F0 = arrays["F0"].copy()
        n = len(F0)
        F0[[n - 1, n - 2, n - 5, n - 9]] = [-0.0, np.nan, np.inf, -2.5]
        packed = _tapefile.compact(dict(arrays, F0=F0), always=True)
        assert len(packed["F0_values"]) == np.count_nonzero(F0) + 1      # -0.0 is stored
        assert int(packed["F0_size"]) == n
        back = _tapefile.expand(packed)["F0"]
        assert back.dtype == dtype and back.tobytes() == F0.tobytes()     # -0.0, NaN too


def test_a_tape_of_a_large_shard_pickles_without_its_zero_values():
    w = np.arange(8.0) / 8
    X = np.ones((20_000, 8))
    tape = bn.value_and_grad(lambda w, X: np.sum(np.tanh(X @ w) ** 2)).trace(w, X)
    blob = pickle.dumps(tape)
    assert tape.F0.nbytes > 600_000 and len(blob) < 20_000, (tape.F0.nbytes, len(blob))
    back = pickle.loads(blob)
    assert back.F0.tobytes() == tape.F0.tobytes()
    assert same(back.value_and_grad(w, X), tape.value_and_grad(w, X))


def test_hostile_f0_runs(tmp_path):
    tape = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    arrays, meta = _tapefile.tape_state(tape)
    good = _tapefile.compact(arrays, always=True)
    runs, values = good["F0_runs"], good["F0_values"]
    cases = {
        "overlapping": dict(F0_runs=np.array([0, 4, 2, 6], np.int64)),
        "past_the_end": dict(F0_runs=np.concatenate([runs[:-1], [10 ** 6]])),
        "empty_run": dict(F0_runs=np.array([3, 3], np.int64)),
        "negative": dict(F0_runs=np.concatenate([[-5], runs[1:]])),
        "odd": dict(F0_runs=runs[:-1]),
        "int32_runs": dict(F0_runs=runs.astype(np.int32)),
        "count": dict(F0_values=values[:-1]),
        "huge_size": dict(F0_size=np.array(2 ** 62, np.int64)),
        "size_not_scalar": dict(F0_size=np.array([5, 6], np.int64)),
        "int_values": dict(F0_values=values.astype(np.int64)),
    }
    for name, change in cases.items():
        entries = dict(good, **change)
        path = tmp_path / f"{name}.npz"
        np.savez(path, format=np.array(_tapefile.FORMAT), meta=np.frombuffer(
            _tapefile.meta_json(meta).encode(), np.uint8), **entries)
        refused(path, "F0")
        with pytest.raises(bn.TapeFormatError, match="F0"):
            pickle.loads(pickle.dumps(_Reduced(entries, meta)))


def test_a_tape_with_a_rule_is_format_3_and_formats_1_and_2_still_load(tmp_path):
    """A tape holding a custom derivative rule is written as its value-and-gradient tape
    (format 3, meta by_ops); a tape without guards is still format 1 and one with guards
    format 2, read as before. The by_ops flag and the format must agree, and a format-3
    output must be the value and the gradients."""
    f = bn.custom_vjp(lambda x: np.sin(x))
    f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (3.0 * c * g,))
    x = np.array([0.25, 0.5])
    ruled = bn.trace(lambda x: np.sum(f(x) * x), x)
    guarded = bn.trace(lambda a: a * a if a > 0 else -a, 2.0)
    plain = bn.trace(small, -4.0, 2.0, argnums=(0, 1))
    for tape, fmt in ((plain, _tapefile.FORMAT), (guarded, _tapefile.FORMAT_GUARDS),
                      (ruled, _tapefile.FORMAT_BY_OPS)):
        tape.save(tmp_path / "t.npz")
        with np.load(tmp_path / "t.npz", allow_pickle=False) as z:
            assert str(z["format"]) == fmt
            assert ("by_ops" in json.loads(z["meta"].tobytes())) == (fmt == "burnumba-tape-3")
    back = bn.load_tape(tmp_path / "t.npz")
    value, g = back.value_and_grad(x)
    assert value == pytest.approx(np.sum(np.sin(x) * x), rel=1e-15)
    np.testing.assert_allclose(g, 3.0 * np.cos(x) * x + np.sin(x), rtol=1e-15)
    I, F0, meta = parts(ruled.by_ops)
    assert meta["format"] == _tapefile.FORMAT_BY_OPS and meta["by_ops"] is True
    refused(write(tmp_path / "flag.npz", I, F0, dict(meta, by_ops=False),
                  _tapefile.FORMAT_BY_OPS), "by_ops")
    refused(write(tmp_path / "fmt.npz", I, F0, dict(meta, format=_tapefile.FORMAT_GUARDS),
                  _tapefile.FORMAT_GUARDS), "by_ops")
    refused(write(tmp_path / "type.npz", I, F0, dict(meta, by_ops=1),
                  _tapefile.FORMAT_BY_OPS), "by_ops")
    I2, F02, meta2 = parts(plain)
    refused(write(tmp_path / "shape.npz", I2, F02,
                  dict(meta2, format=_tapefile.FORMAT_BY_OPS, by_ops=True),
                  _tapefile.FORMAT_BY_OPS), "value-and-gradient", "shape ()")
