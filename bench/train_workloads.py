"""Training-step workloads: one full step (forward, backward, AdamW update) per system.

Two models, as in the training contract (``burnumba.nn``) and the BurTorch paper:

* ``gpt``: the paper's mini GPT (Karpathy's nanoGPT-lecture ``gpt.py``): n_embd 24, 6 heads,
  6 layers, block size 8, pre-LayerNorm blocks with a fused qkv projection (no bias), causal
  softmax attention and a ReLU MLP (C -> 4C -> C), final LayerNorm and an lm_head with bias;
  mean cross-entropy over every position. 46,337 parameters for the 65-character vocabulary
  of tiny shakespeare. Batches are random windows of a character corpus.
* ``makemore``: Karpathy's makemore MLP with a 16-character context: embedding 27 x 64,
  hidden 1024 -> 1024 tanh, output 1024 -> 27; mean cross-entropy. 1,079,003 parameters.
  Batches are random rows of the name windows (``name_windows``).

``make_step(system, model, batch, dtype, seed=0)`` returns ``(step, info)``. ``step()``
performs ONE training step on the next of a list of batches drawn in advance (cycled, so data
sampling is not timed): forward, backward and an AdamW update (lr 1e-3, betas (0.9, 0.999),
eps 1e-8, decoupled weight decay 0.01 on every parameter, no clipping), and returns the loss
of that batch before the update, as a Python float. ``info`` holds the parameter count, the
batches, ``eval_loss(x, y)`` (forward only, at the current parameters) and ``params()`` (the
current parameters as float64 numpy arrays in the contract's layout, to compare systems).

Every system starts from the same float64 parameters (``init_params``: ``burnumba.nn``'s init,
normal(0, 0.02) for every weight and embedding, biases 0, LayerNorm weight 1, drawn from
``np.random.default_rng(seed)``) cast to ``dtype``, and sees the same batches
(``sample_batches``). ``reference_loss`` is a float64 numpy forward
pass of either model, to check each system's first loss against.

* burnumba: ``optim.Trainer(net.loss, params, optim.AdamW(...), x0, y0)``;
  ``step = lambda: trainer.step(x, y)``.
* torch: conventional ``nn.Module`` models (``nn.Embedding``, ``nn.Linear``, ``nn.LayerNorm``,
  ``F.cross_entropy``), heads batched as (B, H, T, d), attention either written out (masked
  softmax, ``attention="explicit"``) or ``F.scaled_dot_product_attention(is_causal=True)``
  (``attention="sdpa"``, the default); ``torch.optim.AdamW(fused=True)`` (the fastest of the
  CPU implementations here: 0.24 ms per update of the GPT's 50 small tensors against 0.74 ms
  for ``foreach`` and 1.26 ms for the default per-tensor loop), ``zero_grad(set_to_none=True)``.
  Eager, one thread.
* torch.compile: the same ``nn.Module`` and the same AdamW, with the WHOLE step compiled as one
  graph (default mode, inductor, CPU, one thread, ``dynamic=False, fullgraph=True``):
  ``torch.compile(train_step)`` where ``train_step(params, m, v, hyper, x, y)`` takes
  ``torch.func.grad_and_value`` of ``functional_call(net, params, (x, y))`` and then updates
  the parameters and the moments in place with AdamW written out in torch ops (torch's AdamW
  formulas: ``p *= 1 - lr wd``, ``m.lerp_(g, 1 - b1)``, ``v = b2 v + (1 - b2) g g``,
  ``p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``). The two bias-correction
  scalars are computed on the host in float64 from a Python step counter and written into a
  0-d-pair tensor (``hyper``) that is an input of the graph, as jax's step does with ``t``:
  a Python float would be a constant (a recompile per step), and a step tensor inside the
  graph makes inductor recompute ``pow`` in every vector iteration of every fused update loop
  (1.6 ms for the makemore MLP's 1.08 M parameters, against 0.43 ms with the scalars as
  inputs and 0.59 ms for eager ``AdamW(fused=True)``). Attention: explicit masked softmax
  (``attention="explicit"``, the default for this system), which inductor fuses into its
  neighbours, was the faster compiled in float32 (GPT, ms/step, sdpa vs explicit: batch 1
  0.99 vs 0.91, batch 8 1.85 vs 1.81, batch 64 10.1 vs 9.5 in one run; 1.06 vs 0.96, 3.09
  vs 2.56, 18.9 vs 14.6 in a run on a busier machine), but not always in float64 (same busy
  run: 1.50 vs 1.17, 2.83 vs 2.99, 16.2 vs 18.1), so ``report_train.py`` runs both, as it
  does for torch eager, except with --quick.
  Measured alternatives, float32, ms/step on the 2-core benchmark VM while other jobs ran
  (eager / compiled model + eager fused AdamW / compiled model + ``torch.compile(opt.step)``
  (foreach) / compiled model + compiled ``fused=True`` step / compiled ``grad_and_value`` +
  eager fused AdamW / this whole-step graph): GPT batch 1: 2.59 / 1.92 / 1.89 / 1.99 / 1.31 /
  1.02; GPT batch 64: 11.6-12.2 / 13.3 / 13.2 / 13.8 / 10.1 / 10.1; makemore batch 1: 1.23-1.39
  / 1.45 / 3.05 / 1.61 / 1.11 / 0.90; makemore batch 64: 7.3-7.5 / 8.2 / 8.8 / 8.2 / 6.6 / 6.7.
  Compiling the module alone leaves the autograd engine and AOTAutograd's runtime wrappers
  on every step (slower than eager at batch 64), and ``torch.compile(opt.step)`` on CPU was
  slower than the eager fused kernel (and its foreach form hit "Expected scalars to be on
  CPU, got meta" when a second optimiser was compiled in the same process). Compiled
  autograd (``torch._dynamo.config.compiled_autograd``) was 2-4x slower than eager on the
  tensor workloads. ``make_step`` calls ``torch._dynamo.reset()`` first, so that every step
  function compiles afresh (Dynamo's caches are per code object, shared by every step made in
  one process, and capped at 8 entries).
* jax: the same models in ``jax.numpy`` on a dict of parameters, and one ``jax.jit``-ed step
  (``value_and_grad`` and AdamW written out) that donates the parameters and the optimiser
  state; the loss is ``block_until_ready``-ed.

Data: ``load_data(model, data_dir)`` reads ``tinyshakespeare.txt`` / ``names.txt`` from
``data_dir``; ``data_dir=None`` takes burnumba's embedded corpus and generated names
(``burnumba.data.load_text(None)`` / ``load_names(None)``). The GPT corpus is split 90/10
into train and validation (as nanoGPT); makemore trains on every window.

A peer that is not installed raises ImportError. ``MODULES`` maps a system to the module it
needs (torch.compile is torch's).
"""
import itertools
import math
import os
from dataclasses import dataclass, field

import numpy as np

SYSTEMS = ("burnumba", "torch", "torch.compile", "jax")
MODULES = {"burnumba": "burnumba", "torch": "torch", "torch.compile": "torch", "jax": "jax"}
MODELS = ("gpt", "makemore")
DTYPES = ("float32", "float64")
CASES = (("gpt", 1), ("gpt", 8), ("gpt", 64), ("makemore", 1), ("makemore", 64))

# -- hyper-parameters (the training contract) ----------------------------------------------------
GPT_CONFIG = {"n_embd": 24, "n_head": 6, "n_layer": 6, "block_size": 8}
MAKEMORE_CONFIG = {"context": 16, "n_embd": 64, "n_hidden": 1024}
LN_EPS = 1e-5
INIT_STD = 0.02
ADAMW = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}
N_PARAMS = {("gpt", 65): 46_337, ("makemore", 27): 1_079_003}

GPT_FILE, NAMES_FILE = "tinyshakespeare.txt", "names.txt"
VAL_FRACTION = 0.1
NAMES_VOCAB = "." + "abcdefghijklmnopqrstuvwxyz"     # '.' (id 0) starts and ends a name
N_BATCHES = 64          # batches drawn in advance and cycled by step()
SEED_BATCHES = 1


# -- parameters --------------------------------------------------------------------------------
def init_params(model, seed=0, vocab_size=None):
    """The contract's initial parameters in float64, ``{name: array}``: burnumba.nn's own init,
    ``nn.GPT(vocab_size).init(seed, np.float64)`` (normal(0, 0.02) for every weight and
    embedding in the contract's name order from ``np.random.default_rng(seed)``; biases 0,
    LayerNorm weights 1). Every system starts from these, rounded to its dtype."""
    from burnumba import nn

    vocab_size = vocab_size or default_vocab(model)
    params = _burnumba_net(nn, model, vocab_size).init(seed, np.float64)
    return {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}


def default_vocab(model):
    return {"gpt": 65, "makemore": len(NAMES_VOCAB)}[model]


def n_params(params):
    return int(sum(a.size for a in params.values()))


def check_n_params(model, params, vocab_size):
    n = n_params(params)
    expected = N_PARAMS.get((model, vocab_size))
    assert expected is None or n == expected, (model, vocab_size, n, expected)
    return n


# -- data ----------------------------------------------------------------------------------------
@dataclass
class Data:
    """Token data for one model. gpt: ``train``/``val`` are 1-D uint8 token streams;
    makemore: ``train`` is ``(X (N, context) uint8, Y (N,) uint8)`` and ``val`` is None."""
    model: str
    vocab_size: int
    train: object
    val: object = None
    source: str = ""
    vocab: str = ""
    extra: dict = field(default_factory=dict)


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def load_data(model, data_dir=None):
    """The model's data from ``data_dir``, or burnumba's embedded data when it is None."""
    if model == "gpt":
        if data_dir is None:
            from burnumba.data import load_text
            text, source = load_text(None), "burnumba embedded corpus"
        else:
            path = os.path.join(data_dir, GPT_FILE)
            text, source = _read(path), path
        vocab = "".join(sorted(set(text)))
        lut = np.zeros(max(map(ord, vocab)) + 1, dtype=np.uint8)
        lut[[ord(c) for c in vocab]] = np.arange(len(vocab))
        assert len(vocab) <= 256
        ids = lut[np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)]
        n = int((1.0 - VAL_FRACTION) * len(ids))            # as nanoGPT: first 90 % train
        return Data("gpt", len(vocab), ids[:n], ids[n:], source, vocab,
                    {"characters": len(text)})
    if model == "makemore":
        if data_dir is None:
            from burnumba.data import load_names
            names, source = load_names(None), "burnumba generated names"
        else:
            path = os.path.join(data_dir, NAMES_FILE)
            names = [w.strip() for w in _read(path).splitlines() if w.strip()]
            source = path
        X, Y = name_windows(names, MAKEMORE_CONFIG["context"])
        return Data("makemore", len(NAMES_VOCAB), (X, Y), None, source, NAMES_VOCAB,
                    {"names": len(names)})
    raise KeyError(model)


def name_windows(names, context):
    """Makemore's (X, Y): per name, the context starts as all '.', then each character of
    ``name + '.'`` is a target and slides into the context (Karpathy's ``build_dataset``)."""
    stoi = {c: i for i, c in enumerate(NAMES_VOCAB)}
    X, Y = [], []
    for w in names:
        ctx = [0] * context
        for ch in w + ".":
            ix = stoi[ch]
            X.append(ctx)
            Y.append(ix)
            ctx = ctx[1:] + [ix]
    return np.array(X, dtype=np.uint8), np.array(Y, dtype=np.uint8)


def sample_batches(data, batch, n, seed=SEED_BATCHES, split="train"):
    """``n`` batches drawn in advance: ``(X, Y)`` int64 arrays of shape (n, batch, ...).

    gpt: windows at offsets drawn uniformly in ``[0, len - block_size)`` (nanoGPT's
    ``get_batch``), targets shifted by one; makemore: rows drawn uniformly.
    """
    rng = np.random.default_rng(seed)
    src = data.train if split == "train" else data.val
    if data.model == "gpt":
        T = GPT_CONFIG["block_size"]
        offsets = rng.integers(0, len(src) - T, size=(n, batch))
        rows = offsets[..., None] + np.arange(T)
        return src[rows].astype(np.int64), src[rows + 1].astype(np.int64)
    X, Y = src
    rows = rng.integers(0, len(X), size=(n, batch))
    return X[rows].astype(np.int64), Y[rows].astype(np.int64)


# -- the float64 numpy reference forward pass ----------------------------------------------------
def _layer_norm(x, w, b, eps=LN_EPS):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)        # biased, as torch
    return (x - mu) / np.sqrt(var + eps) * w + b


def _cross_entropy(logits, targets):
    """Mean over rows of logsumexp(row) - row[target]; logits (N, V), targets (N,)."""
    m = logits.max(axis=-1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=-1))
    return float(np.mean(lse - logits[np.arange(len(targets)), targets]))


def reference_logits(model, p, idx):
    p = {k: np.asarray(v, dtype=np.float64) for k, v in p.items()}
    if model == "makemore":
        B = idx.shape[0]
        e = p["emb"][idx].reshape(B, -1)
        return np.tanh(e @ p["hidden.w"] + p["hidden.b"]) @ p["out.w"] + p["out.b"]
    C, H, L = GPT_CONFIG["n_embd"], GPT_CONFIG["n_head"], GPT_CONFIG["n_layer"]
    d = C // H
    B, T = idx.shape
    x = p["wte"][idx] + p["wpe"][:T]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    for layer in range(L):
        def g(k, pre=f"h.{layer}."):
            return p[pre + k]
        h = _layer_norm(x, g("ln1.w"), g("ln1.b"))
        qkv = h @ g("attn.qkv.w")                                # (B, T, 3C): [q | k | v]
        q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, H, d).transpose(0, 2, 1, 3)
                   for i in range(3))
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)         # (B, H, T, T)
        att = np.where(future, -np.inf, att)
        att = np.exp(att - att.max(axis=-1, keepdims=True))
        att /= att.sum(axis=-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + y @ g("attn.proj.w") + g("attn.proj.b")
        h = _layer_norm(x, g("ln2.w"), g("ln2.b"))
        x = x + np.maximum(h @ g("mlp.fc.w") + g("mlp.fc.b"), 0.0) @ g("mlp.proj.w") \
            + g("mlp.proj.b")
    return _layer_norm(x, p["ln_f.w"], p["ln_f.b"]) @ p["lm_head.w"] + p["lm_head.b"]


def reference_loss(model, params, x, y):
    """The float64 numpy loss of ``params`` on one batch."""
    logits = reference_logits(model, params, np.asarray(x))
    return _cross_entropy(logits.reshape(-1, logits.shape[-1]), np.asarray(y).reshape(-1))


def rounded(params, dtype):
    """The params as a system of this dtype starts from them, back in float64."""
    return {k: v.astype(dtype).astype(np.float64) for k, v in params.items()}


LOSS_RTOL = {"float64": 1e-6, "float32": 1e-4}


# -- systems -------------------------------------------------------------------------------------
def _cycle(n):
    return itertools.cycle(range(n)).__next__


def make_burnumba(model, batch, dtype, params, batches, vocab_size, **_):
    from burnumba import nn, optim

    net = _burnumba_net(nn, model, vocab_size)
    X, Y = batches
    p = {k: v.astype(dtype) for k, v in params.items()}
    opt = optim.AdamW(lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"],
                      weight_decay=ADAMW["weight_decay"])
    trainer = optim.Trainer(net.loss, p, opt, X[0], Y[0])
    xs, ys = list(X), list(Y)
    nxt = _cycle(len(xs))

    def step():
        i = nxt()
        return trainer.step(xs[i], ys[i])

    def params_now():
        return {k: np.array(v, dtype=np.float64) for k, v in trainer.params.items()}

    return step, {"eval_loss": lambda x, y: float(trainer.loss(x, y)), "params": params_now,
                  "variant": "optim.Trainer + optim.AdamW"}


def _burnumba_net(nn, model, vocab_size):
    if model == "gpt":
        return nn.GPT(vocab_size, **GPT_CONFIG)
    return nn.MakemoreMLP(vocab_size, **MAKEMORE_CONFIG)


class _Torch:
    """The torch models, built on first use (torch is optional)."""
    classes = None

    @classmethod
    def build(cls):
        if cls.classes:
            return cls.classes
        import torch
        from torch import nn
        from torch.nn import functional as F

        class CausalSelfAttention(nn.Module):
            def __init__(self, C, H, T, attention):
                super().__init__()
                self.qkv = nn.Linear(C, 3 * C, bias=False)
                self.proj = nn.Linear(C, C)
                self.n_head, self.attention = H, attention
                self.register_buffer("future", torch.ones(T, T, dtype=torch.bool).triu(1),
                                     persistent=False)

            def forward(self, x):
                B, T, C = x.shape
                H = self.n_head
                q, k, v = (t.view(B, T, H, C // H).transpose(1, 2)      # (B, H, T, d)
                           for t in self.qkv(x).split(C, dim=2))
                if self.attention == "sdpa":
                    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                else:
                    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
                    att = att.masked_fill(self.future[:T, :T], float("-inf"))
                    y = F.softmax(att, dim=-1) @ v
                return self.proj(y.transpose(1, 2).reshape(B, T, C))

        class MLP(nn.Module):
            def __init__(self, C):
                super().__init__()
                self.fc = nn.Linear(C, 4 * C)
                self.proj = nn.Linear(4 * C, C)

            def forward(self, x):
                return self.proj(F.relu(self.fc(x)))

        class Block(nn.Module):
            def __init__(self, C, H, T, attention):
                super().__init__()
                self.ln1 = nn.LayerNorm(C, eps=LN_EPS)
                self.attn = CausalSelfAttention(C, H, T, attention)
                self.ln2 = nn.LayerNorm(C, eps=LN_EPS)
                self.mlp = MLP(C)

            def forward(self, x):
                x = x + self.attn(self.ln1(x))
                return x + self.mlp(self.ln2(x))

        class GPT(nn.Module):
            def __init__(self, vocab_size, n_embd, n_head, n_layer, block_size, attention):
                super().__init__()
                self.wte = nn.Embedding(vocab_size, n_embd)
                self.wpe = nn.Embedding(block_size, n_embd)
                self.h = nn.ModuleList(Block(n_embd, n_head, block_size, attention)
                                       for _ in range(n_layer))
                self.ln_f = nn.LayerNorm(n_embd, eps=LN_EPS)
                self.lm_head = nn.Linear(n_embd, vocab_size)

            def forward(self, idx, targets):
                T = idx.shape[1]
                x = self.wte(idx) + self.wpe.weight[:T]
                for block in self.h:
                    x = block(x)
                logits = self.lm_head(self.ln_f(x))
                return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

        class MakemoreMLP(nn.Module):
            def __init__(self, vocab_size, context, n_embd, n_hidden):
                super().__init__()
                self.emb = nn.Embedding(vocab_size, n_embd)
                self.hidden = nn.Linear(context * n_embd, n_hidden)
                self.out = nn.Linear(n_hidden, vocab_size)

            def forward(self, idx, targets):
                e = self.emb(idx).view(idx.shape[0], -1)
                return F.cross_entropy(self.out(torch.tanh(self.hidden(e))), targets)

        cls.classes = {"gpt": GPT, "makemore": MakemoreMLP}
        return cls.classes


def _torch_name(name):
    """Contract name -> (torch state name, stored transposed). nn.Linear keeps (out, in)."""
    if name.endswith(".w"):
        return name[:-2] + ".weight", True
    if name.endswith(".b"):
        return name[:-2] + ".bias", False
    return name + ".weight", False                  # wte, wpe, emb: nn.Embedding (V, C)


def _torch_setup(model, dtype, params, batches, vocab_size, attention):
    """The torch model with ``params`` copied in, its parameters by torch name, the batches as
    tensors, and the info callables shared by torch eager and torch.compile."""
    import torch

    torch.set_num_threads(1)
    tdt = getattr(torch, dtype)
    classes = _Torch.build()
    if model == "gpt":
        net = classes["gpt"](vocab_size, **GPT_CONFIG, attention=attention)
    else:
        net = classes["makemore"](vocab_size, **MAKEMORE_CONFIG)
    net = net.to(tdt)
    state = dict(net.named_parameters())
    assert len(state) == len(params), (sorted(state), sorted(params))
    with torch.no_grad():
        for name, value in params.items():
            tname, transposed = _torch_name(name)
            state[tname].copy_(torch.from_numpy(value.T if transposed else value))
    X, Y = batches
    data = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in zip(X, Y)]

    def eval_loss(x, y):
        with torch.inference_mode():
            return net(torch.as_tensor(x), torch.as_tensor(y)).item()

    def params_now():
        out = {}
        for name in params:
            tname, transposed = _torch_name(name)
            a = state[tname].detach().to(torch.float64).numpy()
            out[name] = a.T.copy() if transposed else a.copy()
        return out

    return net, state, data, {"eval_loss": eval_loss, "params": params_now}


def make_torch(model, batch, dtype, params, batches, vocab_size, attention="sdpa", **_):
    import torch

    net, _, data, info = _torch_setup(model, dtype, params, batches, vocab_size, attention)
    opt = torch.optim.AdamW(net.parameters(), lr=ADAMW["lr"], betas=ADAMW["betas"],
                            eps=ADAMW["eps"], weight_decay=ADAMW["weight_decay"], fused=True)
    nxt = _cycle(len(data))

    def step():
        x, y = data[nxt()]
        loss = net(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    info["variant"] = (f"attention={attention}, " if model == "gpt" else "") + "AdamW(fused=True)"
    return step, info


def make_torch_compile(model, batch, dtype, params, batches, vocab_size, attention="explicit",
                       **_):
    """One ``torch.compile``-d graph per step: grad_and_value + AdamW (see the module doc)."""
    import torch
    from torch.func import functional_call, grad_and_value

    net, state, data, info = _torch_setup(model, dtype, params, batches, vocab_size, attention)
    torch._dynamo.reset()           # a fresh compile: no cache entries from earlier steps
    names = list(state)
    ps = [state[n].detach() for n in names]     # the module's storage: updated in place
    ms = [torch.zeros_like(p) for p in ps]
    vs = [torch.zeros_like(p) for p in ps]
    hyper = torch.zeros(2, dtype=ps[0].dtype)   # lr / (1 - b1^t), sqrt(1 - b2^t)
    hyper_np = hyper.numpy()                    # shares hyper's memory: a cheap host write
    lr, (b1, b2), eps, wd = (ADAMW[k] for k in ("lr", "betas", "eps", "weight_decay"))

    def loss_of(plist, x, y):
        return functional_call(net, dict(zip(names, plist)), (x, y))

    value_and_grads = grad_and_value(loss_of)

    def train_step(ps, ms, vs, hyper, x, y):
        grads, loss = value_and_grads(ps, x, y)
        step_size, bias_correction2_sqrt = hyper[0], hyper[1]
        for p, g, m, v in zip(ps, grads, ms, vs):
            p.mul_(1.0 - lr * wd)
            m.lerp_(g, 1.0 - b1)
            v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
            p.sub_(step_size * m / (v.sqrt() / bias_correction2_sqrt + eps))
        return loss

    compiled = torch.compile(train_step, dynamic=False, fullgraph=True)
    nxt = _cycle(len(data))
    t = [0]

    def step():
        x, y = data[nxt()]
        t[0] += 1
        hyper_np[0] = lr / (1.0 - b1 ** t[0])
        hyper_np[1] = math.sqrt(1.0 - b2 ** t[0])
        return compiled(ps, ms, vs, hyper, x, y).item()

    info["variant"] = ((f"attention={attention}, " if model == "gpt" else "")
                       + "compiled step: grad_and_value + AdamW")
    return step, info


def _jax_layer_norm(jnp, x, w, b):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + LN_EPS) * w + b


def jax_loss(model):
    """loss(params, idx, targets) in jax.numpy."""
    import jax
    import jax.numpy as jnp

    def cross_entropy(logits, targets):
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[:, None], axis=-1))

    if model == "makemore":
        def loss(p, idx, targets):
            e = p["emb"][idx].reshape(idx.shape[0], -1)
            logits = jnp.tanh(e @ p["hidden.w"] + p["hidden.b"]) @ p["out.w"] + p["out.b"]
            return cross_entropy(logits, targets)
        return loss

    C, H, L = GPT_CONFIG["n_embd"], GPT_CONFIG["n_head"], GPT_CONFIG["n_layer"]
    d = C // H

    def loss(p, idx, targets):
        B, T = idx.shape
        x = p["wte"][idx] + p["wpe"][:T]
        past = jnp.tril(jnp.ones((T, T), dtype=bool))
        for layer in range(L):
            def g(k, pre=f"h.{layer}."):
                return p[pre + k]
            h = _jax_layer_norm(jnp, x, g("ln1.w"), g("ln1.b"))
            q, k, v = (t.reshape(B, T, H, d).transpose(0, 2, 1, 3)
                       for t in jnp.split(h @ g("attn.qkv.w"), 3, axis=-1))
            att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(d))
            att = jax.nn.softmax(jnp.where(past, att, -jnp.inf), axis=-1)
            y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
            x = x + y @ g("attn.proj.w") + g("attn.proj.b")
            h = _jax_layer_norm(jnp, x, g("ln2.w"), g("ln2.b"))
            x = x + jax.nn.relu(h @ g("mlp.fc.w") + g("mlp.fc.b")) @ g("mlp.proj.w") \
                + g("mlp.proj.b")
        logits = _jax_layer_norm(jnp, x, p["ln_f.w"], p["ln_f.b"]) @ p["lm_head.w"] \
            + p["lm_head.b"]
        return cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
    return loss


def make_jax(model, batch, dtype, params, batches, vocab_size, **_):
    import jax
    import jax.numpy as jnp

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    jdt = jnp.dtype(dtype)
    loss_fn = jax_loss(model)
    lr, (b1, b2), eps, wd = (ADAMW[k] for k in ("lr", "betas", "eps", "weight_decay"))

    def adamw(p, g, m, v, t):
        # torch.optim.AdamW: p <- p (1 - lr wd); then p <- p - lr m_hat / (sqrt(v_hat) + eps)
        m = b1 * m + (1.0 - b1) * g
        v = b2 * v + (1.0 - b2) * g * g
        step_size = lr / (1.0 - b1 ** t)
        denom = jnp.sqrt(v) / jnp.sqrt(1.0 - b2 ** t) + eps
        return p * (1.0 - lr * wd) - step_size * m / denom, m, v

    def train_step(p, m, v, t, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        t = t + 1.0                                      # a float of dtype jdt: no promotion
        new = {k: adamw(p[k], g[k], m[k], v[k], t) for k in p}
        return ({k: a[0] for k, a in new.items()}, {k: a[1] for k, a in new.items()},
                {k: a[2] for k, a in new.items()}, t, loss)

    jstep = jax.jit(train_step, donate_argnums=(0, 1, 2))
    jloss = jax.jit(loss_fn)
    state = {"p": {k: jnp.asarray(a, dtype=jdt) for k, a in params.items()}}
    state["m"] = {k: jnp.zeros_like(a) for k, a in state["p"].items()}
    state["v"] = {k: jnp.zeros_like(a) for k, a in state["p"].items()}
    state["t"] = jnp.zeros((), dtype=jdt)
    X, Y = batches
    idt = np.int64 if jax.config.jax_enable_x64 else np.int32
    data = [(jnp.asarray(x.astype(idt)), jnp.asarray(y.astype(idt))) for x, y in zip(X, Y)]
    nxt = _cycle(len(data))

    def step():
        x, y = data[nxt()]
        s = state
        s["p"], s["m"], s["v"], s["t"], loss = jstep(s["p"], s["m"], s["v"], s["t"], x, y)
        return float(loss.block_until_ready())

    def params_now():
        return {k: np.asarray(a, dtype=np.float64) for k, a in state["p"].items()}

    def eval_loss(x, y):
        return float(jloss(state["p"], jnp.asarray(x.astype(idt)), jnp.asarray(y.astype(idt))))

    return step, {"eval_loss": eval_loss,
                  "params": params_now, "variant": "jax.jit(value_and_grad + AdamW), donated"}


MAKERS = {"burnumba": make_burnumba, "torch": make_torch, "torch.compile": make_torch_compile,
          "jax": make_jax}
DEFAULT_ATTENTION = {"torch": "sdpa", "torch.compile": "explicit"}


def make_step(system, model, batch, dtype, seed=0, *, data=None, data_dir=None, params=None,
              batches=None, n_batches=N_BATCHES, attention=None):
    """``(step, info)`` for one training step of ``model`` at ``batch`` in ``dtype``.

    ``data`` (a :class:`Data`) defaults to ``load_data(model, data_dir)``; ``params`` (float64,
    contract layout) to ``init_params(model, seed, vocab)``; ``batches`` (``(X, Y)`` int64
    arrays of shape (n, batch, ...)) to ``n_batches`` batches from ``sample_batches``.
    ``info``: ``n_params``, ``vocab_size``, ``batches``, ``params0`` (the float64 start),
    ``eval_loss(x, y)``, ``params()`` and ``variant`` (what the system runs). ``attention``
    ("sdpa" or "explicit", the GPT's torch attention) defaults to the system's faster one
    (``DEFAULT_ATTENTION``); burnumba and jax ignore it.
    """
    if system not in MAKERS:
        raise KeyError(system)
    if dtype not in DTYPES:
        raise KeyError(dtype)
    if data is None and (params is None or batches is None):
        data = load_data(model, data_dir)
    vocab_size = data.vocab_size if data is not None else params["wte" if model == "gpt"
                                                                 else "emb"].shape[0]
    if params is None:
        params = init_params(model, seed, vocab_size)
    n = check_n_params(model, params, vocab_size)
    if batches is None:
        batches = sample_batches(data, batch, n_batches)
    assert batches[0].shape[1] == batch, (batches[0].shape, batch)
    attention = attention or DEFAULT_ATTENTION.get(system, "sdpa")
    step, info = MAKERS[system](model, batch, dtype, params, batches, vocab_size,
                                attention=attention)
    info.update(n_params=n, vocab_size=vocab_size, batches=batches, params0=params)
    return step, info


def first_loss_check(model, dtype, params, batches, loss):
    """(reference loss, relative error, ok) for a system's first step loss."""
    ref = reference_loss(model, rounded(params, dtype), batches[0][0], batches[1][0])
    rel = abs(loss - ref) / abs(ref)
    return ref, rel, rel <= LOSS_RTOL[dtype]
