"""burnumba.nn: the paper's models, their parameter counts, and their gradients against an
independent implementation (HIPS autograd) and central differences."""
import math

import numpy as np
import pytest

import burnumba as bn
from burnumba import nn

anp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")

SMALL_GPT = dict(vocab_size=11, n_embd=12, n_head=3, n_layer=2, block_size=5)


def scrambled(model, seed, scale=0.3):
    """Parameters away from the init (std 0.3 weights, non-trivial LayerNorm weights and
    biases), so that every term of the gradient is exercised, in float64."""
    rng = np.random.default_rng(seed)
    return {k: rng.normal(1.0 if k.endswith("ln1.w") or k.endswith("ln2.w") or k == "ln_f.w"
                          else 0.0, scale, size=v.shape)
            for k, v in model.init(seed, np.float64).items()}


# -- an independent forward pass in autograd.numpy ------------------------------------------
def ag_layer_norm(x, w, b, eps=1e-5):
    mu = anp.mean(x, axis=-1, keepdims=True)
    var = anp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / anp.sqrt(var + eps) * w + b


def ag_log_softmax(z):
    m = anp.max(z, axis=-1, keepdims=True)
    return z - m - anp.log(anp.sum(anp.exp(z - m), axis=-1, keepdims=True))


def ag_cross_entropy(logits, targets):
    lp = ag_log_softmax(logits).reshape(-1, logits.shape[-1])
    return -anp.mean(lp[np.arange(lp.shape[0]), targets.reshape(-1)])


def ag_gpt_loss(p, idx, targets, cfg):
    B, T = idx.shape
    C, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    d = C // H
    x = p["wte"][idx] + p["wpe"][:T]
    future = np.triu(np.ones((T, T), bool), 1)
    for layer in range(L):
        h = f"h.{layer}."
        a = ag_layer_norm(x, p[h + "ln1.w"], p[h + "ln1.b"])
        qkv = anp.dot(a, p[h + "attn.qkv.w"])
        heads = []
        for j in range(H):                                  # one head at a time, no batching
            q = qkv[:, :, j * d:(j + 1) * d]
            k = qkv[:, :, C + j * d:C + (j + 1) * d]
            v = qkv[:, :, 2 * C + j * d:2 * C + (j + 1) * d]
            s = anp.einsum("btd,bsd->bts", q, k) / math.sqrt(d)
            s = anp.where(future, -1e30, s)
            w = anp.exp(ag_log_softmax(s))
            heads.append(anp.einsum("bts,bsd->btd", w, v))
        y = anp.concatenate(heads, axis=-1)
        x = x + anp.dot(y, p[h + "attn.proj.w"]) + p[h + "attn.proj.b"]
        a = ag_layer_norm(x, p[h + "ln2.w"], p[h + "ln2.b"])
        f = anp.maximum(anp.dot(a, p[h + "mlp.fc.w"]) + p[h + "mlp.fc.b"], 0.0)
        x = x + anp.dot(f, p[h + "mlp.proj.w"]) + p[h + "mlp.proj.b"]
    x = ag_layer_norm(x, p["ln_f.w"], p["ln_f.b"])
    return ag_cross_entropy(anp.dot(x, p["lm_head.w"]) + p["lm_head.b"], targets)


def ag_makemore_loss(p, idx, targets, tanh_logits):
    e = p["emb"][idx].reshape(idx.shape[0], -1)
    h = anp.tanh(anp.dot(e, p["hidden.w"]) + p["hidden.b"])
    logits = anp.dot(h, p["out.w"]) + p["out.b"]
    return ag_cross_entropy(anp.tanh(logits) if tanh_logits else logits, targets)


# -- parameter counts and initialisation ----------------------------------------------------
def test_paper_parameter_counts():
    assert nn.GPT(vocab_size=65).n_params(nn.GPT(vocab_size=65).init()) == 46_337
    mm = nn.MakemoreMLP()
    assert mm.n_params(mm.init()) == 1_079_003


def test_init_is_seeded_and_follows_the_papers_rule():
    model = nn.GPT(vocab_size=65)
    a, b, c = model.init(3, np.float64), model.init(3, np.float64), model.init(4, np.float64)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["wte"], c["wte"])
    f32 = model.init(3, np.float32)
    assert all(f32[k].dtype == np.float32 and np.array_equal(f32[k], a[k].astype(np.float32))
               for k in a)
    weights = np.concatenate([a[k].ravel() for k in a if k.endswith(".w") and "ln" not in k]
                             + [a["wte"].ravel(), a["wpe"].ravel()])
    assert abs(weights.std() - 0.02) < 5e-4 and abs(weights.mean()) < 5e-4
    assert all(not a[k].any() for k in a if k.endswith(".b"))
    assert all((a[k] == 1.0).all() for k in a if k.endswith("ln1.w") or k == "ln_f.w")
    assert "h.0.attn.qkv.b" not in a and a["h.0.attn.qkv.w"].shape == (24, 72)


def test_gpt_rejects_a_context_longer_than_block_size():
    model = nn.GPT(**SMALL_GPT)
    with pytest.raises(bn.ShapeError, match="block_size"):
        model.apply(model.init(), np.zeros((1, 6), np.int32))
    with pytest.raises(bn.ShapeError, match="multiple"):
        nn.GPT(vocab_size=5, n_embd=10, n_head=3)


# -- forward values and gradients -----------------------------------------------------------
@pytest.mark.parametrize("B", [1, 3])
def test_gpt_loss_and_gradient_match_autograd(B):
    model = nn.GPT(**SMALL_GPT)
    p = scrambled(model, 1)
    rng = np.random.default_rng(B)
    idx = rng.integers(0, 11, (B, 5)).astype(np.int32)
    tgt = rng.integers(0, 11, (B, 5)).astype(np.int32)
    value, g = bn.value_and_grad(model.loss)(p, idx, tgt)
    ref_value, ref_g = autograd.value_and_grad(ag_gpt_loss)(p, idx, tgt, model.config)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    assert np.isclose(model.loss(p, idx, tgt), ref_value, rtol=1e-10)       # eager numpy too
    for k in p:
        np.testing.assert_allclose(g[k], ref_g[k], rtol=1e-8, atol=1e-11, err_msg=k)


def test_paper_gpt_gradient_matches_central_differences():
    """The whole 46,337-parameter GPT loss, along random directions, in float64. The step is
    small (1e-6) because a larger one moves some ReLU input across its kink along a
    direction in all 46,337 coordinates (at 1e-5 one of these directions does)."""
    model = nn.GPT(vocab_size=65)
    p = scrambled(model, 2, scale=0.1)
    rng = np.random.default_rng(7)
    idx = rng.integers(0, 65, (2, 8)).astype(np.int32)
    tgt = rng.integers(0, 65, (2, 8)).astype(np.int32)
    _, g = bn.value_and_grad(model.loss)(p, idx, tgt)
    for _ in range(3):
        d = {k: rng.normal(size=v.shape) for k, v in p.items()}
        h = 1e-6
        plus = model.loss({k: p[k] + h * d[k] for k in p}, idx, tgt)
        minus = model.loss({k: p[k] - h * d[k] for k in p}, idx, tgt)
        fd = (plus - minus) / (2 * h)
        exact = sum(float(np.sum(g[k] * d[k])) for k in p)
        assert abs(fd - exact) <= 1e-6 * max(1.0, abs(exact)), (fd, exact)


@pytest.mark.parametrize("tanh_logits", [False, True])
def test_makemore_loss_and_gradient_match_autograd(tanh_logits):
    model = nn.MakemoreMLP(vocab_size=27, context=4, n_embd=5, n_hidden=16,
                           tanh_logits=tanh_logits)
    p = scrambled(model, 3, scale=0.5)
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 27, (6, 4)).astype(np.int32)
    tgt = rng.integers(0, 27, (6,)).astype(np.int32)
    value, g = bn.value_and_grad(model.loss)(p, idx, tgt)
    ref_value, ref_g = autograd.value_and_grad(ag_makemore_loss)(p, idx, tgt, tanh_logits)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    for k in p:
        np.testing.assert_allclose(g[k], ref_g[k], rtol=1e-8, atol=1e-12, err_msg=k)


def test_attention_is_causal():
    """Changing a future token changes no logit at an earlier position."""
    model = nn.GPT(**SMALL_GPT)
    p = scrambled(model, 4)
    idx = np.array([[1, 2, 3, 4, 5]], np.int32)
    late = idx.copy()
    late[0, 3] = 9
    f = bn.trace(lambda params, i: model.apply(params, i), p, idx)   # traced forward
    for run in (lambda i: model.apply(p, i), lambda i: f(p, i)):
        a, b = run(idx), run(late)
        np.testing.assert_array_equal(a[0, :3], b[0, :3])
        assert not np.allclose(a[0, 3:], b[0, 3:])


def test_float32_model_traces_a_float32_tape():
    model = nn.GPT(**SMALL_GPT)
    p32 = model.init(0, np.float32)
    idx = np.ones((2, 5), np.int32)
    value, g = bn.value_and_grad(model.loss)(p32, idx, idx)
    assert all(v.dtype == np.float32 for v in g.values())
    p64 = {k: v.astype(np.float64) for k, v in p32.items()}
    assert np.isclose(value, model.loss(p64, idx, idx), rtol=1e-5)


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_mlp_loss_and_gradient_match_autograd(activation):
    model = nn.MLP((3, 7, 5, 4), activation=activation)
    p = scrambled(model, 5, scale=0.7)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 3))
    y = rng.integers(0, 4, 6).astype(np.int32)
    act = (lambda z: anp.maximum(z, 0.0)) if activation == "relu" else anp.tanh

    def ref(p, x, y):
        h = act(anp.dot(x, p["layers.0.w"]) + p["layers.0.b"])
        h = act(anp.dot(h, p["layers.1.w"]) + p["layers.1.b"])
        return ag_cross_entropy(anp.dot(h, p["layers.2.w"]) + p["layers.2.b"], y)

    value, g = bn.value_and_grad(model.loss)(p, x, y)
    ref_value, ref_g = autograd.value_and_grad(ref)(p, x, y)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    for k in p:
        np.testing.assert_allclose(g[k], ref_g[k], rtol=1e-8, atol=1e-12, err_msg=k)
    assert model.n_params(p) == 3 * 7 + 7 + 7 * 5 + 5 + 5 * 4 + 4
    with pytest.raises(bn.ShapeError, match="activation"):
        nn.MLP((3, 4), activation="swish")
