"""Functional layers, the paper's two models and a plain MLP, over flat parameter dicts.

Parameters are flat dicts ``{dotted name: array}``. Weights are stored (in, out) and used as
``x @ w + b``. Every function here is plain numpy-style code: it runs eagerly on numpy arrays
(used for sampling) and is traced into a tape when burnumba differentiates it.

Initialisation follows the paper's GPT (Karpathy's gpt.py): every Linear and Embedding
weight ~ normal(0, 0.02), biases 0, LayerNorm weight 1 and bias 0. The draws come from
``np.random.default_rng(seed)`` in float64, in the order the parameters are declared, and
are then cast to the requested dtype, so float32 and float64 models start from the same
numbers.

>>> model = GPT(vocab_size=65)
>>> params = model.init(seed=0)
>>> model.n_params(params)
46337
"""
import math

import numpy as np

from .._errors import ShapeError
from ..numpy.functional import causal_softmax, cross_entropy, layer_norm as _layer_norm
from ..numpy import relu

INIT_STD = 0.02
LN_EPS = 1e-5


# -- layers: functions of (params, the prefix of their names, input); models declare shapes
def linear(p, prefix, x):
    """``x @ w + b`` with ``p[prefix + '.w']`` (in, out) and, if present, ``p[prefix + '.b']``."""
    y = x @ p[prefix + ".w"]
    b = p.get(prefix + ".b")
    return y if b is None else y + b


def layer_norm(p, prefix, x, eps=LN_EPS):
    """LayerNorm over the last axis with weight ``prefix.w`` and bias ``prefix.b``."""
    return _layer_norm(x, p[prefix + ".w"], p[prefix + ".b"], eps)


def embedding(p, name, idx):
    """Rows ``p[name][idx]``: idx is an integer array (data, not differentiated)."""
    return p[name][idx]


def mlp(p, prefix, x, activation=relu):
    """``activation(x @ fc.w + fc.b) @ proj.w + proj.b`` (the transformer's feed-forward)."""
    return linear(p, prefix + ".proj", activation(linear(p, prefix + ".fc", x)))


def causal_self_attention(p, prefix, x, n_head):
    """Multi-head causal self-attention on x (B, T, C) with one fused qkv projection.

    ``qkv.w`` (C, 3C) gives columns [q | k | v]; head j owns columns j*d:(j+1)*d of each,
    d = C / n_head. Scores are scaled by 1/sqrt(d) and future positions masked out, in one
    fused node (``burnumba.causal_softmax``). The heads run batched as (B, H, T, d) and are
    merged back in order.
    """
    B, T, C = x.shape
    d = C // n_head
    qkv = linear(p, prefix + ".qkv", x)                               # (B, T, 3C)

    def heads(t):                                                     # (B, T, C) -> (B, H, T, d)
        return np.transpose(np.reshape(t, (B, T, n_head, d)), (0, 2, 1, 3))

    q, k, v = heads(qkv[:, :, :C]), heads(qkv[:, :, C:2 * C]), heads(qkv[:, :, 2 * C:])
    att = causal_softmax(q @ np.transpose(k, (0, 1, 3, 2)), 1.0 / math.sqrt(d))  # (B, H, T, T)
    y = np.reshape(np.transpose(att @ v, (0, 2, 1, 3)), (B, T, C))
    return linear(p, prefix + ".proj", y)


def gpt_block(p, prefix, x, n_head, activation=relu):
    """Pre-LayerNorm transformer block: x + attn(ln1(x)), then + mlp(ln2(x))."""
    x = x + causal_self_attention(p, prefix + ".attn", layer_norm(p, prefix + ".ln1", x), n_head)
    return x + mlp(p, prefix + ".mlp", layer_norm(p, prefix + ".ln2", x), activation)


# -- models -------------------------------------------------------------------------------
class _Model:
    """A model: its config, its parameter declarations, ``init``, ``apply`` and ``loss``."""

    def shapes(self):
        """[(name, shape, kind)] in declaration (= random draw) order; kind is "normal"
        (weights, embeddings), "zeros" (biases, LayerNorm bias) or "ones" (LayerNorm weight)."""
        raise NotImplementedError

    def init(self, seed=0, dtype=np.float32):
        """Fresh parameters: a flat dict of arrays of ``dtype``.

        >>> params = MakemoreMLP().init(seed=0, dtype=np.float64)
        """
        rng = np.random.default_rng(seed)
        params = {}
        for name, shape, kind in self.shapes():
            if kind == "normal":
                w = rng.normal(0.0, INIT_STD, size=shape)
            else:
                w = (np.zeros if kind == "zeros" else np.ones)(shape)
            params[name] = w.astype(dtype)
        return params

    @staticmethod
    def n_params(params):
        return int(sum(np.size(v) for v in params.values()))

    def loss(self, params, idx, targets):
        """Mean cross-entropy of the next-token logits against integer ``targets``."""
        return cross_entropy(self.apply(params, idx), targets)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{type(self).__name__}({args})"


class MLP(_Model):
    """A plain multi-layer perceptron: ``sizes = (n_in, h1, ..., n_out)``, ``activation``
    ("relu" or "tanh") between layers, linear output. Parameters ``layers.{i}.w`` (in, out)
    and ``layers.{i}.b``. ``loss`` is the mean cross-entropy of the outputs as logits.

    >>> model = MLP((2, 16, 16, 3))
    >>> logits = model.apply(model.init(seed=0), np.zeros((5, 2), np.float32))   # (5, 3)
    """

    ACTIVATIONS = {"relu": relu, "tanh": np.tanh}

    def __init__(self, sizes, activation="relu"):
        if len(sizes) < 2 or activation not in self.ACTIVATIONS:
            raise ShapeError(f"MLP: needs at least (n_in, n_out) sizes and an activation in "
                             f"{sorted(self.ACTIVATIONS)}; got {sizes}, {activation!r}")
        self.config = dict(sizes=[int(n) for n in sizes], activation=activation)
        self.sizes, self.activation = self.config["sizes"], self.ACTIVATIONS[activation]

    def shapes(self):
        out = []
        for i, (n_in, n_out) in enumerate(zip(self.sizes[:-1], self.sizes[1:])):
            out += [(f"layers.{i}.w", (n_in, n_out), "normal"),
                    (f"layers.{i}.b", (n_out,), "zeros")]
        return out

    def apply(self, params, x):
        """Outputs (..., n_out) for inputs x (..., n_in)."""
        last = len(self.sizes) - 2
        for i in range(last + 1):
            x = linear(params, f"layers.{i}", x)
            if i < last:
                x = self.activation(x)
        return x


class GPT(_Model):
    """The BurTorch paper's miniature GPT-3 (Karpathy's gpt.py): token and position
    embeddings, ``n_layer`` pre-LayerNorm blocks (fused qkv without bias, ReLU MLP of width
    4C), a final LayerNorm and a linear head with bias. 46,337 parameters for vocab 65.

    >>> model = GPT(vocab_size=65)
    >>> logits = model.apply(model.init(), np.zeros((2, 8), np.int32))   # (2, 8, 65)
    """

    def __init__(self, vocab_size, n_embd=24, n_head=6, n_layer=6, block_size=8):
        if n_embd % n_head:
            raise ShapeError(f"GPT: n_embd={n_embd} must be a multiple of n_head={n_head}")
        self.config = dict(vocab_size=int(vocab_size), n_embd=int(n_embd), n_head=int(n_head),
                           n_layer=int(n_layer), block_size=int(block_size))
        self.vocab_size, self.n_embd, self.n_head = int(vocab_size), int(n_embd), int(n_head)
        self.n_layer, self.block_size = int(n_layer), int(block_size)

    def shapes(self):
        V, C, T = self.vocab_size, self.n_embd, self.block_size
        out = [("wte", (V, C), "normal"), ("wpe", (T, C), "normal")]
        for layer in range(self.n_layer):
            h = f"h.{layer}"
            out += [(f"{h}.ln1.w", (C,), "ones"), (f"{h}.ln1.b", (C,), "zeros"),
                    (f"{h}.attn.qkv.w", (C, 3 * C), "normal"),
                    (f"{h}.attn.proj.w", (C, C), "normal"), (f"{h}.attn.proj.b", (C,), "zeros"),
                    (f"{h}.ln2.w", (C,), "ones"), (f"{h}.ln2.b", (C,), "zeros"),
                    (f"{h}.mlp.fc.w", (C, 4 * C), "normal"),
                    (f"{h}.mlp.fc.b", (4 * C,), "zeros"),
                    (f"{h}.mlp.proj.w", (4 * C, C), "normal"),
                    (f"{h}.mlp.proj.b", (C,), "zeros")]
        return out + [("ln_f.w", (C,), "ones"), ("ln_f.b", (C,), "zeros"),
                      ("lm_head.w", (C, V), "normal"), ("lm_head.b", (V,), "zeros")]

    def apply(self, params, idx):
        """Logits (B, T, vocab) for token ids ``idx`` (B, T) with T <= block_size."""
        T = idx.shape[-1]
        if T > self.block_size:
            raise ShapeError(f"GPT: a context of {T} tokens is longer than block_size "
                             f"{self.block_size}; crop it to the last {self.block_size}")
        x = embedding(params, "wte", idx) + params["wpe"][:T]
        for layer in range(self.n_layer):
            x = gpt_block(params, f"h.{layer}", x, self.n_head)
        return linear(params, "lm_head", layer_norm(params, "ln_f", x))


class MakemoreMLP(_Model):
    """The paper's makemore MLP (Bengio et al. 2003 style): ``context`` characters, each
    embedded in ``n_embd`` numbers and concatenated, one tanh hidden layer, linear logits
    (``tanh_logits=True`` puts a tanh on them, as the paper's version does).
    1,079,003 parameters with the defaults.

    >>> MakemoreMLP().n_params(MakemoreMLP().init())
    1079003
    """

    def __init__(self, vocab_size=27, context=16, n_embd=64, n_hidden=1024, tanh_logits=False):
        self.config = dict(vocab_size=int(vocab_size), context=int(context), n_embd=int(n_embd),
                           n_hidden=int(n_hidden), tanh_logits=bool(tanh_logits))
        self.vocab_size, self.context, self.n_embd = int(vocab_size), int(context), int(n_embd)
        self.n_hidden, self.tanh_logits = int(n_hidden), bool(tanh_logits)

    def shapes(self):
        V, E, H = self.vocab_size, self.n_embd, self.n_hidden
        return [("emb", (V, E), "normal"),
                ("hidden.w", (self.context * E, H), "normal"), ("hidden.b", (H,), "zeros"),
                ("out.w", (H, V), "normal"), ("out.b", (V,), "zeros")]

    def apply(self, params, idx):
        """Logits (B, vocab) for context windows ``idx`` (B, context)."""
        B = idx.shape[0]
        e = np.reshape(embedding(params, "emb", idx), (B, self.context * self.n_embd))
        logits = linear(params, "out", np.tanh(linear(params, "hidden", e)))
        return np.tanh(logits) if self.tanh_logits else logits


MODELS = {"gpt": GPT, "makemore": MakemoreMLP}      # the models the CLI trains
