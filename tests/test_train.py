"""optim.Trainer and checkpoints: the in-tape training step against the plain path
(value_and_grad, then an optimiser step on separate arrays), falling losses, round trips."""
import math
import zipfile

import numpy as np
import pytest

import burnumba as bn
from burnumba import nn, optim

SMALL_GPT = dict(vocab_size=12, n_embd=12, n_head=3, n_layer=2, block_size=6)


def batches(rng, V, B, T, n):
    return [(rng.integers(0, V, (B, T)).astype(np.int32),
             rng.integers(0, V, (B, T)).astype(np.int32)) for _ in range(n)]


@pytest.mark.parametrize("make_opt, clip", [(lambda: optim.AdamW(1e-2), None),
                                            (lambda: optim.SGD(0.1, momentum=0.9), 0.5)])
def test_trainer_step_equals_value_and_grad_then_update(make_opt, clip):
    model = nn.GPT(**SMALL_GPT)
    p0 = model.init(1, np.float64)
    data = batches(np.random.default_rng(0), 12, 3, 6, 4)
    trainer = optim.Trainer(model.loss, p0, make_opt(), *data[0], clip=clip)
    names = sorted(p0)
    flat = np.concatenate([p0[k].ravel() for k in names])
    opt = make_opt()
    vg = bn.value_and_grad(model.loss)
    for x, y in data:
        params = {}
        at = 0
        for k in names:
            params[k] = flat[at:at + p0[k].size].reshape(p0[k].shape)
            at += p0[k].size
        value, g = vg(params, x, y)
        gflat = np.concatenate([g[k].ravel() for k in names])
        if clip is not None:
            optim.clip_grad_norm(gflat, clip)
        opt.step(flat, gflat)
        assert trainer.step(x, y) == pytest.approx(value, rel=1e-13)
    np.testing.assert_allclose(trainer.flat_params, flat, rtol=1e-12, atol=1e-15)
    assert trainer.steps == 4
    for k in names:                                    # the params dict views the tape
        assert np.shares_memory(trainer.params[k], trainer.flat_params)
    x, y = data[0]
    assert trainer.loss(x, y) == pytest.approx(float(model.loss(trainer.params, x, y)),
                                               rel=1e-12)


def test_gpt_loss_falls_on_a_small_corpus():
    text = "the quick brown fox jumps over the lazy dog. " * 40
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text], np.int32)
    model = nn.GPT(vocab_size=len(vocab), n_embd=24, n_head=6, n_layer=2, block_size=8)
    rng = np.random.default_rng(0)

    def batch():
        at = rng.integers(0, len(ids) - 9, 16)
        return (np.stack([ids[a:a + 8] for a in at]), np.stack([ids[a + 1:a + 9] for a in at]))

    trainer = optim.Trainer(model.loss, model.init(0), optim.AdamW(1e-2), *batch())
    first = np.mean([trainer.loss(*batch()) for _ in range(5)])
    for _ in range(300):
        trainer.step(*batch())
    last = np.mean([trainer.loss(*batch()) for _ in range(5)])
    assert first > 0.9 * np.log(len(vocab))            # starts near uniform
    assert last < 0.35 * first, (first, last)           # a memorisable text: far below


def test_makemore_loss_falls():
    model = nn.MakemoreMLP(context=3, n_embd=8, n_hidden=64)
    names = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"]
    X, Y = [], []
    for name in names:
        ctx = [0, 0, 0]
        for ch in name + ".":
            t = 0 if ch == "." else ord(ch) - 96
            X.append(ctx)
            Y.append(t)
            ctx = ctx[1:] + [t]
    X, Y = np.array(X, np.int32), np.array(Y, np.int32)
    trainer = optim.Trainer(model.loss, model.init(0), optim.AdamW(3e-3), X, Y)
    first = trainer.loss(X, Y)
    for _ in range(200):
        trainer.step(X, Y)
    assert trainer.loss(X, Y) < 0.5 * first


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_checkpoint_round_trip_gives_the_same_next_step(tmp_path, dtype):
    model = nn.GPT(**SMALL_GPT)
    data = batches(np.random.default_rng(1), 12, 2, 6, 6)
    trainer = optim.Trainer(model.loss, model.init(0, dtype), optim.AdamW(1e-2), *data[0])
    for x, y in data[:4]:
        trainer.step(x, y)
    path = tmp_path / "ckpt.npz"
    trainer.save(path, meta={"model": "gpt", "config": model.config})
    restored = optim.Trainer.restore(path, model.loss, optim.AdamW(1e-2), *data[0])
    assert restored.steps == 4 and restored.optimizer.t == 4
    assert restored.tape.dtype == dtype
    for x, y in data[4:]:
        assert restored.step(x, y) == trainer.step(x, y)    # bit for bit
    np.testing.assert_array_equal(restored.flat_params, trainer.flat_params)
    params, opt_state, meta = bn.load_checkpoint(path)
    assert meta["model"] == "gpt" and meta["config"] == model.config
    assert meta["trainer_steps"] == 4 and opt_state["t"] == 4
    assert sorted(params) == sorted(model.init())


def test_trainer_load_into_an_existing_trainer(tmp_path):
    model = nn.GPT(**SMALL_GPT)
    x, y = batches(np.random.default_rng(2), 12, 2, 6, 1)[0]
    a = optim.Trainer(model.loss, model.init(0), optim.Adam(1e-2), x, y)
    a.step(x, y)
    a.save(tmp_path / "a.npz")
    b = optim.Trainer(model.loss, model.init(5), optim.Adam(1e-2), x, y)
    b.load(tmp_path / "a.npz")
    assert b.step(x, y) == a.step(x, y)


def test_corrupt_and_foreign_checkpoints_raise_checkpoint_error(tmp_path):
    model = nn.GPT(**SMALL_GPT)
    x, y = batches(np.random.default_rng(3), 12, 2, 6, 1)[0]
    trainer = optim.Trainer(model.loss, model.init(0), optim.AdamW(), x, y)
    good = tmp_path / "good.npz"
    trainer.save(good)
    raw = good.read_bytes()
    cases = {
        "missing.npz": None,
        "text.npz": b"this is not a checkpoint",
        "truncated.npz": raw[: len(raw) // 2],
    }
    for name, content in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        with pytest.raises(bn.CheckpointError, match=name) as info:
            bn.load_checkpoint(tmp_path / name)
        assert "pickle" not in str(info.value)         # never advise unpickling
    np.savez(tmp_path / "plain.npz", w=np.zeros(3))                    # not ours
    with pytest.raises(bn.CheckpointError, match="not a burnumba"):
        bn.load_checkpoint(tmp_path / "plain.npz")
    np.savez(tmp_path / "pickled.npz", format=np.array([{"a": 1}], dtype=object))
    with pytest.raises(bn.CheckpointError, match="pickled.npz"):
        bn.load_checkpoint(tmp_path / "pickled.npz")
    with zipfile.ZipFile(tmp_path / "flipped.npz", "w") as z:          # a damaged member
        z.writestr("format.npy", b"\x93NUMPY garbage")
    with pytest.raises(bn.CheckpointError, match="flipped.npz"):
        bn.load_checkpoint(tmp_path / "flipped.npz")
    with pytest.raises(bn.CheckpointError, match="folder exists"):
        trainer.save(tmp_path / "no" / "such" / "dir.npz")
    assert not (tmp_path / "no").exists()
    other = nn.GPT(**dict(SMALL_GPT, n_layer=1))
    with pytest.raises(bn.CheckpointError, match="names differ"):
        optim.Trainer(other.loss, other.init(), optim.AdamW(), x, y).load(good)
    wider = nn.GPT(**dict(SMALL_GPT, vocab_size=13))
    with pytest.raises(bn.CheckpointError, match="shape"):
        optim.Trainer(wider.loss, wider.init(), optim.AdamW(), x, y).load(good)


def test_trainer_errors_name_the_fix():
    model = nn.GPT(**SMALL_GPT)
    x, y = batches(np.random.default_rng(4), 12, 2, 6, 1)[0]
    trainer = optim.Trainer(model.loss, model.init(), optim.AdamW(), x, y)
    with pytest.raises(bn.ShapeError, match="keep the batch shape fixed"):
        trainer.step(x[:1], y[:1])
    with pytest.raises(bn.InputError, match="expected 2 data arrays"):
        trainer.step(x)
    for bad in ([], {}, {"a": {"w": np.zeros(3)}}, {"w": np.zeros(3, np.int32)}):
        with pytest.raises(bn.InputError, match="flat dict"):
            optim.Trainer(model.loss, bad, optim.AdamW(), x, y)
    with pytest.raises(bn.InputError, match="integer"):  # float token ids would truncate
        trainer.step(x + 0.5, y)
    with pytest.raises(IndexError):                     # a token id beyond the vocabulary
        trainer.step(x + 100, y)


def test_integer_data_must_be_exact_in_the_tape():
    """Token ids of 2**24 and above are not exact in float32: the Trainer and a tape call
    refuse them instead of looking up a neighbouring row."""
    table = np.zeros((3, 2), np.float32)
    loss = lambda p, idx: np.sum(p["t"][idx])               # noqa: E731
    idx = np.array([0, 1], np.int64)
    trainer = optim.Trainer(loss, {"t": table}, optim.SGD(0.1), idx)
    big = np.array([2 ** 24 + 1, 0], np.int64)
    with pytest.raises(bn.InputError, match="does not fit exactly"):
        trainer.step(big)
    vg = bn.value_and_grad(loss)
    vg({"t": table}, idx)
    with pytest.raises(bn.InputError, match="does not fit exactly"):
        vg({"t": table}, -big)


def test_a_nonfinite_loss_raises_and_leaves_the_trainer_as_it_was():
    """The step whose loss is NaN raises NonFiniteError before the update: parameters,
    optimiser state and step count are those of the step before."""
    loss = lambda p, x: np.sum(np.log(p["w"] * x))          # noqa: E731  NaN for w * x < 0
    trainer = optim.Trainer(loss, {"w": np.array([1.0, 2.0])}, optim.AdamW(lr=0.1),
                            np.array([1.0, 1.0]))
    trainer.step(np.array([1.0, 1.0]))
    before = trainer.params["w"].copy(), trainer.optimizer.state_dict(), trainer.steps
    with pytest.raises(bn.NonFiniteError, match="step 2.*not updated"):
        trainer.step(np.array([-1.0, 1.0]))
    np.testing.assert_array_equal(trainer.params["w"], before[0])
    assert trainer.steps == before[2]
    after = trainer.optimizer.state_dict()
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_array_equal(after[k], before[1][k])
    assert math.isfinite(trainer.step(np.array([1.0, 1.0])))


# -- a loss with Python branches: the trainer follows the branch each step takes ------------
def _branchy_loss(np_, params, X, y):
    r = X @ params["w"] + params["b"] - y
    mse = np_.mean(r * r)
    if np_.mean(y) > 0.0:                 # decided by the batch: changes from step to step
        mse = mse * 2.0
    if mse > 0.5:                         # decided by the parameters: changes as it trains
        return np_.sqrt(mse)
    return mse + 0.01 * np_.sum(params["w"] ** 2)


@pytest.mark.parametrize("make_opt", [lambda: optim.SGD(0.05, momentum=0.9),
                                      lambda: optim.Adam(0.05)])
def test_trainer_retraces_when_a_branch_changes_and_matches_autograd(make_opt):
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    rng = np.random.default_rng(3)
    D, B = 4, 8
    w_true = 0.5 * rng.normal(size=D)
    batches = []
    for k in range(40):
        X = rng.normal(size=(B, D))
        y = X @ w_true + 0.1 * rng.normal(size=B)
        batches.append((X, y - y.mean() + (0.1 if k % 3 == 0 else -0.1)))
    p0 = {"b": np.array([0.0]), "w": np.zeros(D)}
    trainer = optim.Trainer(lambda p, X, y: _branchy_loss(np, p, X, y), p0, make_opt(),
                            *batches[0])
    # the reference: autograd's gradient, the same optimiser on separate flat arrays
    vg = autograd.value_and_grad(lambda p, X, y: _branchy_loss(anp, p, X, y))
    flat, opt = np.concatenate([p0["b"], p0["w"]]), make_opt()
    taken = set()
    for X, y in batches:
        params = {"b": flat[:1], "w": flat[1:]}
        value, g = vg(params, X, y)
        taken.add((float(np.mean(y)) > 0.0, float(np.mean(
            (X @ params["w"] + params["b"] - y) ** 2)) * (2.0 if np.mean(y) > 0 else 1.0) > 0.5))
        assert trainer.step(X, y) == pytest.approx(value, rel=1e-12)
        opt.step(flat, np.concatenate([g["b"], g["w"]]))
        np.testing.assert_allclose(trainer.flat_params, flat, rtol=1e-10, atol=1e-13)
        assert trainer.loss(X, y) == pytest.approx(
            _branchy_loss(np, {"b": flat[:1], "w": flat[1:]}, X, y), rel=1e-12)
    assert len(taken) == 4                   # the branches did change during training
    key = next(iter(trainer._tapes.tapes))
    variants = trainer._tapes.variants[key]
    assert len(variants) == 4 and trainer._tapes.traces[key] == 4
    assert trainer.steps == len(batches)
    for k in ("b", "w"):                     # the params dict views the variant in use
        assert np.shares_memory(trainer.params[k], trainer.flat_params)
