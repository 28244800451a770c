"""Tensor workloads: forward + backward of small models, per system.

Two workloads, each at batch 1 and batch 64:

* ``mlp``: micrograd's "moons" demo. An MLP 2 -> 16 -> 16 -> 1 (relu hidden layers, linear
  output) on two-moons data (made here with numpy: sklearn is not needed), loss = the mean
  over the batch of the hinge loss ``relu(1 - y * score)`` (y in {-1, +1}) plus the demo's L2
  term ``1e-4 * sum(p * p)`` over every parameter (biases included, as in micrograd).
  Weights are uniform(-1, 1) and biases 0, as micrograd's ``Neuron`` initialises them.
* ``gpt-block``: one pre-LayerNorm GPT-2 block of the BurTorch paper's mini GPT-3
  (n_embd C = 24, 6 heads of size 4, context T = 8):
  ``x = x + attn(ln1(x)); x = x + mlp(ln2(x))`` with a fused qkv projection (C -> 3C, bias),
  heads batched as (B, H, T, d), causal mask (masked fill with -inf), softmax, output
  projection (C -> C, bias); mlp = Linear(C, 4C) -> gelu (tanh approximation) -> Linear(4C, C);
  LayerNorm eps 1e-5. Loss = ``sum(block(x) * w_out)`` with fixed random x and w_out of
  shape (B, T, C). Weights normal(0, 0.02), biases 0, LayerNorm weight 1 and bias 0.

``make(system, workload, batch, dtype)`` returns ``(call, to_summary)``:

* ``call()`` takes no arguments and performs ONE evaluation of the loss and its gradient with
  respect to every parameter, until the result is available in the system's own types: numpy
  arrays for burnumba and autograd, device arrays (``block_until_ready()``-ed) for jax, tensors
  (the ``.grad`` of every leaf) for torch, the gradient tensors torch.compile's graph returns,
  Python floats for micrograd. This is what is timed.
* ``to_summary(result)`` gives ``(loss, sum of |grad| over all parameters)`` as Python floats,
  for display. It is not timed.

``make_case`` returns the same plus ``to_grads`` (the gradients as a dict of float64 numpy
arrays, keyed like the parameters) and ``grad_dtype`` (the dtype the system returned).

Every system computes the same function from the same parameters: they are drawn once in
numpy (float64, seeded) by ``params_for`` and converted; the data likewise (``data_for``).
The model is written once in numpy style (``mlp_loss``, ``gpt_block_loss``) over a small
table of ops (``Ops``) for numpy (the reference), burnumba, autograd and jax; torch gets a
conventional ``nn.Module`` (nanoGPT's Block, explicit attention) with the same weights, and
micrograd its own ``MLP`` with the same weights.

torch.compile (``make_torch_compile``) runs that same module and loss, compiled (default
mode, inductor, CPU, one thread): ``torch.compile(torch.func.grad_and_value(loss),
dynamic=False, fullgraph=True)`` where ``loss(params, *data)`` calls the module through
``torch.func.functional_call`` with ``params`` (our keys, torch's layout). Forward and backward
are then one graph that AOTAutograd and inductor compile together, and a call is one guarded
dispatch into generated C++ with no autograd engine: the fastest way found to get a value and
gradient out of torch.compile here. Measured alternatives (median us per call, on the 2-core
benchmark VM while other jobs ran, so +-10 %; eager / ``torch.compile`` of the loss closure +
``loss.backward()`` (AOTAutograd's compiled backward under the autograd engine) / this):
MLP b1 float64 305 / 184 / 58; MLP b64 float64 323 / 257 / 109; GPT block b1 float64
608 / 480 / 218; GPT block b64 float32 2650-2760 / 1900-2200 / 1520-1570. At the GPT block's
batch 64 in float64 the three were within the noise of each other (2.8-3.6 ms). Compiling
only the module (``torch.compile(model)``) was slower than eager for the MLP (621 us), and
compiled autograd (``torch._dynamo.config.compiled_autograd``) took 1.0-8.6 ms, 2-3.5x eager.
Inductor's ``cpp_wrapper`` option (the graph's wrapper in C++) was up to ~25 % faster still
at batch 1 (GPT block float64 152 against 199 us), within the noise elsewhere; it is not the
default configuration and adds a C++ compile to the first call, so it is not used.
``make_torch_compile`` calls ``torch._dynamo.reset()`` first: Dynamo caches compiled code per
code object (shared by every case built in one process) with at most 8 entries, after which
it falls back to running eagerly with only a logged warning.

Errors: a peer that is not installed raises ImportError; a combination a system does not do
(micrograd's GPT block, autograd / micrograd in float32) raises ``Unsupported``. burnumba's
own failures (an op it cannot trace yet, ...) propagate as they are.
"""
import math
from types import SimpleNamespace

import numpy as np

SYSTEMS = ("burnumba", "micrograd", "autograd", "jax", "torch", "torch.compile")
MODULES = {"burnumba": "burnumba", "micrograd": "micrograd", "autograd": "autograd",
           "jax": "jax", "torch": "torch", "torch.compile": "torch"}
WORKLOADS = ("mlp", "gpt-block")
BATCHES = (1, 64)
DTYPES = ("float64", "float32")

# -- hyper-parameters -------------------------------------------------------------------------
MLP_SIZES = (2, 16, 16, 1)
MLP_ALPHA = 1e-4                 # micrograd's demo L2 coefficient
MLP_KEYS = ("W1", "b1", "W2", "b2", "W3", "b3")
MOONS_NOISE = 0.1
MOONS_SAMPLES = 100              # the demo's data set size; a batch is its first B samples

N_EMBD, N_HEAD, BLOCK_SIZE = 24, 6, 8
LN_EPS = 1e-5
MASK_VALUE = -np.inf
GPT_KEYS = ("ln1_w", "ln1_b", "attn_w", "attn_b", "proj_w", "proj_b",
            "ln2_w", "ln2_b", "fc_w", "fc_b", "fc2_w", "fc2_b")

SEED_PARAMS, SEED_DATA = 0, 1


class Unsupported(Exception):
    """This system does not do this (workload, dtype)."""


# -- parameters and data, once, in float64 numpy -----------------------------------------------
def make_moons(n, noise=MOONS_NOISE, seed=SEED_DATA):
    """sklearn.datasets.make_moons(n, noise=noise, shuffle=True), with numpy's Generator.

    Returns X (n, 2) float64 and y (n,) in {-1.0, +1.0} (micrograd's demo: y * 2 - 1).
    """
    rng = np.random.default_rng(seed)
    n_out = n // 2
    n_in = n - n_out
    t_out = np.linspace(0.0, np.pi, n_out)
    t_in = np.linspace(0.0, np.pi, n_in)
    X = np.concatenate([np.stack([np.cos(t_out), np.sin(t_out)], axis=1),
                        np.stack([1.0 - np.cos(t_in), 1.0 - np.sin(t_in) - 0.5], axis=1)])
    y = np.concatenate([np.zeros(n_out), np.ones(n_in)])
    order = rng.permutation(n)
    X, y = X[order], y[order]
    X = X + rng.normal(0.0, noise, size=X.shape)
    return X, y * 2.0 - 1.0


def params_for(workload):
    """The parameters, a dict of float64 arrays, the same for every batch and system."""
    rng = np.random.default_rng(SEED_PARAMS)
    if workload == "mlp":
        p = {}
        for i, (nin, nout) in enumerate(zip(MLP_SIZES[:-1], MLP_SIZES[1:]), start=1):
            p[f"W{i}"] = rng.uniform(-1.0, 1.0, size=(nin, nout))
            p[f"b{i}"] = np.zeros(nout)
        return p
    if workload == "gpt-block":
        C = N_EMBD

        def normal(*shape):
            return rng.normal(0.0, 0.02, size=shape)

        return {"ln1_w": np.ones(C), "ln1_b": np.zeros(C),
                "attn_w": normal(C, 3 * C), "attn_b": np.zeros(3 * C),
                "proj_w": normal(C, C), "proj_b": np.zeros(C),
                "ln2_w": np.ones(C), "ln2_b": np.zeros(C),
                "fc_w": normal(C, 4 * C), "fc_b": np.zeros(4 * C),
                "fc2_w": normal(4 * C, C), "fc2_b": np.zeros(C)}
    raise KeyError(workload)


def data_for(workload, batch):
    """The non-differentiated inputs, a tuple of float64 arrays."""
    if workload == "mlp":
        X, y = make_moons(max(batch, MOONS_SAMPLES))
        return X[:batch], y[:batch]
    if workload == "gpt-block":
        rng = np.random.default_rng(SEED_DATA)
        shape = (batch, BLOCK_SIZE, N_EMBD)
        return rng.normal(size=shape), rng.normal(size=shape)
    raise KeyError(workload)


def causal_mask(T=BLOCK_SIZE):
    """(T, T) bool, True above the diagonal: the positions masked out (the future)."""
    return ~np.tril(np.ones((T, T), dtype=bool))


# -- the models, written once in numpy style over a table of ops -------------------------------
def mlp_loss(p, X, y, ops):
    xp = ops.xp
    h = ops.relu(X @ p["W1"] + p["b1"])
    h = ops.relu(h @ p["W2"] + p["b2"])
    score = xp.reshape(h @ p["W3"] + p["b3"], (X.shape[0],))
    data_loss = xp.mean(ops.relu(1.0 - y * score))
    reg_loss = xp.sum(p["W1"] * p["W1"])
    for k in MLP_KEYS[1:]:
        reg_loss = reg_loss + xp.sum(p[k] * p[k])
    return data_loss + MLP_ALPHA * reg_loss


def gpt_block(p, x, ops, mask):
    """One pre-LayerNorm GPT-2 block on x (B, T, C); mask (T, T) bool, True = masked."""
    xp = ops.xp
    B, T, C = x.shape
    H = N_HEAD
    d = C // H

    def heads(t):                                           # (B, T, C) -> (B, H, T, d)
        return xp.transpose(xp.reshape(t, (B, T, H, d)), (0, 2, 1, 3))

    h = ops.layer_norm(x, p["ln1_w"], p["ln1_b"])
    qkv = h @ p["attn_w"] + p["attn_b"]                     # (B, T, 3C)
    q, k, v = heads(qkv[:, :, :C]), heads(qkv[:, :, C:2 * C]), heads(qkv[:, :, 2 * C:])
    att = (q @ xp.transpose(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(d))   # (B, H, T, T)
    att = ops.masked_fill(att, mask, MASK_VALUE)
    att = ops.softmax(att, axis=-1)
    y = xp.reshape(xp.transpose(att @ v, (0, 2, 1, 3)), (B, T, C))
    x = x + (y @ p["proj_w"] + p["proj_b"])
    h = ops.layer_norm(x, p["ln2_w"], p["ln2_b"])
    h = ops.gelu(h @ p["fc_w"] + p["fc_b"])
    return x + (h @ p["fc2_w"] + p["fc2_b"])


def gpt_block_loss(p, x, w_out, ops, mask):
    return ops.xp.sum(gpt_block(p, x, ops, mask) * w_out)


LOSSES = {"mlp": mlp_loss, "gpt-block": gpt_block_loss}

_GELU_C = math.sqrt(2.0 / math.pi)


def _ops_from(xp, where):
    """The ops written out with an array module's primitives (numpy, autograd.numpy)."""

    def relu(x):
        return xp.maximum(x, 0.0)

    def gelu(x):
        return 0.5 * x * (1.0 + xp.tanh(_GELU_C * (x + 0.044715 * x * x * x)))

    def softmax(x, axis=-1):
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return e / xp.sum(e, axis=axis, keepdims=True)

    def layer_norm(x, w, b, eps=LN_EPS):
        mu = xp.mean(x, axis=-1, keepdims=True)
        xc = x - mu
        var = xp.mean(xc * xc, axis=-1, keepdims=True)
        return xc / xp.sqrt(var + eps) * w + b

    def masked_fill(x, mask, value):
        return where(mask, value, x)

    return SimpleNamespace(xp=xp, relu=relu, gelu=gelu, softmax=softmax,
                           layer_norm=layer_norm, masked_fill=masked_fill)


NUMPY_OPS = _ops_from(np, np.where)


def burnumba_ops():
    import burnumba as bn

    # Plain numpy calls on traced arrays (np.reshape, np.transpose, np.sum, @ ...) dispatch to
    # burnumba; the nn functions are burnumba's own.
    return SimpleNamespace(
        xp=np, relu=bn.relu,
        gelu=lambda x: bn.gelu(x, approximate=True),
        softmax=lambda x, axis=-1: bn.softmax(x, axis=axis),
        layer_norm=lambda x, w, b: bn.layer_norm(x, weight=w, bias=b, eps=LN_EPS),
        masked_fill=bn.masked_fill)


def jax_ops():
    import jax
    import jax.numpy as jnp

    def layer_norm(x, w, b, eps=LN_EPS):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean(jnp.square(x - mu), axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + eps) * w + b

    return SimpleNamespace(
        xp=jnp, relu=jax.nn.relu,
        gelu=lambda x: jax.nn.gelu(x, approximate=True),
        softmax=lambda x, axis=-1: jax.nn.softmax(x, axis=axis),
        layer_norm=layer_norm,
        masked_fill=lambda x, mask, value: jnp.where(mask, value, x))


def reference_loss(workload, batch, dtype="float64"):
    """(loss, scale): the numpy float64 forward pass, and the sum of the absolute values of
    the terms summed into the loss (a yardstick for float32 rounding)."""
    p = params_for(workload)
    data = data_for(workload, batch)
    if dtype == "float32":      # the float32 systems start from the float32-rounded numbers
        p = {k: v.astype(np.float32).astype(np.float64) for k, v in p.items()}
        data = tuple(a.astype(np.float32).astype(np.float64) for a in data)
    if workload == "mlp":
        loss = mlp_loss(p, *data, NUMPY_OPS)
        X, y = data
        h = np.maximum(np.maximum(X @ p["W1"] + p["b1"], 0) @ p["W2"] + p["b2"], 0)
        s = (h @ p["W3"] + p["b3"])[:, 0]
        scale = np.mean(np.abs(1.0 - y * s)) + MLP_ALPHA * sum(np.sum(v * v) for v in p.values())
    else:
        loss = gpt_block_loss(p, *data, NUMPY_OPS, causal_mask())
        scale = np.sum(np.abs(gpt_block(p, data[0], NUMPY_OPS, causal_mask()) * data[1]))
    return float(loss), float(scale)


def loss_tolerance(dtype, scale):
    """Absolute tolerance for comparing a system's loss with ``reference_loss``."""
    return (1e-8 if dtype == "float64" else 1e-4) * scale


# -- results ---------------------------------------------------------------------------------
def _summary(value, grads):
    return float(value), float(sum(np.sum(np.abs(np.asarray(g, dtype=np.float64)))
                                   for g in grads.values()))


def _np_case(call, keys):
    """to_summary, to_grads, grad_dtype for a call returning (value, {key: array})."""
    def to_summary(r):
        return _summary(r[0], r[1])

    def to_grads(r):
        return {k: np.asarray(r[1][k], dtype=np.float64) for k in keys}

    def grad_dtype(r):
        return str(np.asarray(r[1][keys[0]]).dtype)

    return call, to_summary, to_grads, grad_dtype


# -- systems -----------------------------------------------------------------------------------
def workload_loss(workload, ops):
    """The workload's loss(params, *data) over a table of ops (numpy, burnumba, autograd, jax)."""
    if workload == "mlp":
        def loss(p, X, y):
            return mlp_loss(p, X, y, ops)
        return loss
    mask = causal_mask()

    def loss(p, x, w_out):
        return gpt_block_loss(p, x, w_out, ops, mask)
    return loss


def make_burnumba(workload, batch, dtype):
    import burnumba as bn

    ops = burnumba_ops()
    params = {k: v.astype(dtype) for k, v in params_for(workload).items()}
    data = tuple(a.astype(dtype) for a in data_for(workload, batch))
    loss = workload_loss(workload, ops)

    vg = bn.value_and_grad(loss, argnums=0)

    def call():
        return vg(params, *data)

    return _np_case(call, tuple(params))


def make_autograd(workload, batch, dtype):
    if dtype != "float64":
        raise Unsupported("float64 only")
    import autograd
    import autograd.numpy as anp

    ops = _ops_from(anp, anp.where)
    params = params_for(workload)
    data = data_for(workload, batch)
    loss = workload_loss(workload, ops)

    vg = autograd.value_and_grad(loss, 0)

    def call():
        # autograd records a fresh graph on every call: that is how it is used.
        return vg(params, *data)

    return _np_case(call, tuple(params))


def make_jax(workload, batch, dtype):
    import jax
    import jax.numpy as jnp

    # x64 on, so float64 arrays stay float64; float32 arrays still compute in float32.
    jax.config.update("jax_enable_x64", True)
    ops = jax_ops()
    jdt = jnp.float64 if dtype == "float64" else jnp.float32
    params = {k: jnp.asarray(v, dtype=jdt) for k, v in params_for(workload).items()}
    data = tuple(jnp.asarray(a, dtype=jdt) for a in data_for(workload, batch))
    loss = workload_loss(workload, ops)   # the causal mask is a numpy constant, folded in

    vg = jax.jit(jax.value_and_grad(loss, argnums=0))

    def call():
        # Inputs are device arrays made once; the timed call is the jitted dispatch plus
        # block_until_ready(), so the numbers are computed (not copied back to numpy).
        return jax.block_until_ready(vg(params, *data))

    return _np_case(call, tuple(params))


def _torch_mlp(torch, params, tdt):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 1)).to(tdt)      # before copying in the float64 values
    layers = [model[0], model[2], model[4]]
    names = {}
    with torch.no_grad():
        for i, lin in enumerate(layers, start=1):
            lin.weight.copy_(torch.from_numpy(params[f"W{i}"].T.copy()))
            lin.bias.copy_(torch.from_numpy(params[f"b{i}"]))
            names[f"W{i}"], names[f"b{i}"] = lin.weight, lin.bias
    return model, names


class _TorchBlock:
    """Built lazily (torch is optional): nanoGPT's Block, explicit (not fused-kernel) attention."""

    @staticmethod
    def build(torch):
        nn, F = torch.nn, torch.nn.functional

        class CausalSelfAttention(nn.Module):
            def __init__(self, C, H, T):
                super().__init__()
                self.c_attn = nn.Linear(C, 3 * C)
                self.c_proj = nn.Linear(C, C)
                self.n_head, self.n_embd = H, C
                self.register_buffer("mask", torch.from_numpy(causal_mask(T)))

            def forward(self, x):
                B, T, C = x.shape
                H = self.n_head
                q, k, v = self.c_attn(x).split(C, dim=2)
                q = q.view(B, T, H, C // H).transpose(1, 2)           # (B, H, T, d)
                k = k.view(B, T, H, C // H).transpose(1, 2)
                v = v.view(B, T, H, C // H).transpose(1, 2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.mask[:T, :T], MASK_VALUE)
                att = F.softmax(att, dim=-1)
                y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
                return self.c_proj(y)

        class MLP(nn.Module):
            def __init__(self, C):
                super().__init__()
                self.c_fc = nn.Linear(C, 4 * C)
                self.gelu = nn.GELU(approximate="tanh")
                self.c_proj = nn.Linear(4 * C, C)

            def forward(self, x):
                return self.c_proj(self.gelu(self.c_fc(x)))

        class Block(nn.Module):
            def __init__(self, C, H, T):
                super().__init__()
                self.ln_1 = nn.LayerNorm(C, eps=LN_EPS)
                self.attn = CausalSelfAttention(C, H, T)
                self.ln_2 = nn.LayerNorm(C, eps=LN_EPS)
                self.mlp = MLP(C)

            def forward(self, x):
                x = x + self.attn(self.ln_1(x))
                return x + self.mlp(self.ln_2(x))

        return Block


def _torch_gpt(torch, params, tdt):
    Block = _TorchBlock.build(torch)
    model = Block(N_EMBD, N_HEAD, BLOCK_SIZE).to(tdt)   # before copying in the float64 values
    # our key -> (the torch parameter, whether it is stored transposed: nn.Linear is (out, in))
    where = {"ln1_w": (model.ln_1.weight, False), "ln1_b": (model.ln_1.bias, False),
             "attn_w": (model.attn.c_attn.weight, True), "attn_b": (model.attn.c_attn.bias, False),
             "proj_w": (model.attn.c_proj.weight, True), "proj_b": (model.attn.c_proj.bias, False),
             "ln2_w": (model.ln_2.weight, False), "ln2_b": (model.ln_2.bias, False),
             "fc_w": (model.mlp.c_fc.weight, True), "fc_b": (model.mlp.c_fc.bias, False),
             "fc2_w": (model.mlp.c_proj.weight, True), "fc2_b": (model.mlp.c_proj.bias, False)}
    with torch.no_grad():
        for k, (t, transposed) in where.items():
            t.copy_(torch.from_numpy(params[k].T.copy() if transposed else params[k]))
    return model, {k: t for k, (t, _) in where.items()}


def _torch_setup(workload, batch, dtype):
    """The torch module with the workload's weights, the data tensors, the parameters by our
    key, and ``loss_of(module_call, leaves, *data)`` (the workload's loss around a module)."""
    import torch

    torch.set_num_threads(1)
    tdt = torch.float64 if dtype == "float64" else torch.float32
    params = params_for(workload)
    if workload == "mlp":
        model, names = _torch_mlp(torch, params, tdt)
    else:
        model, names = _torch_gpt(torch, params, tdt)
    data = tuple(torch.from_numpy(a).to(tdt) for a in data_for(workload, batch))

    if workload == "mlp":
        def loss_of(module_call, leaves, X, y):
            score = module_call(X).view(-1)
            data_loss = torch.relu(1.0 - y * score).mean()
            reg_loss = sum((p * p).sum() for p in leaves)
            return data_loss + MLP_ALPHA * reg_loss
    else:
        def loss_of(module_call, leaves, x, w_out):
            return (module_call(x) * w_out).sum()
    return model, names, data, loss_of


def _torch_results(torch, workload, keys):
    """to_summary, to_grads, grad_dtype for a torch call returning (loss, [grad per key])."""
    transposed = {k for k in keys if k.startswith("W")} if workload == "mlp" else \
        {"attn_w", "proj_w", "fc_w", "fc2_w"}

    def to_grads(r):
        out = {}
        for k, g in zip(keys, r[1]):
            g = g.detach().to(torch.float64).numpy()
            out[k] = g.T.copy() if k in transposed else g
        return out

    def to_summary(r):
        return _summary(r[0].item(), to_grads(r))

    def grad_dtype(r):
        return str(r[1][0].dtype).replace("torch.", "")

    return to_summary, to_grads, grad_dtype


def make_torch(workload, batch, dtype):
    import torch

    model, names, data, loss_of = _torch_setup(workload, batch, dtype)
    leaves = list(names.values())

    def call():
        # Eager, CPU, one thread. Each call: drop the old grads, forward, backward, and the
        # .grad of every parameter (leaf tensors with requires_grad).
        for p in leaves:
            p.grad = None
        loss = loss_of(model, leaves, *data)
        loss.backward()
        return loss.detach(), [p.grad for p in leaves]

    return (call, *_torch_results(torch, workload, tuple(names)))


def make_torch_compile(workload, batch, dtype):
    import torch
    from torch.func import functional_call, grad_and_value

    model, names, data, loss_of = _torch_setup(workload, batch, dtype)
    torch._dynamo.reset()           # a fresh compile: no cache entries from earlier cases
    keys = tuple(names)
    module_name = {id(t): n for n, t in model.named_parameters()}
    torch_names = {k: module_name[id(t)] for k, t in names.items()}
    params = {k: t.detach() for k, t in names.items()}

    def loss(p, *data):
        def module_call(x):
            return functional_call(model, {torch_names[k]: p[k] for k in keys}, (x,))
        return loss_of(module_call, [p[k] for k in keys], *data)

    # forward + backward as one graph; default mode, static shapes, no graph breaks allowed
    value_and_grad = torch.compile(grad_and_value(loss), dynamic=False, fullgraph=True)

    def call():
        grads, value = value_and_grad(params, *data)
        return value, [grads[k] for k in keys]

    return (call, *_torch_results(torch, workload, keys))


def make_micrograd(workload, batch, dtype):
    if workload != "mlp":
        raise Unsupported("scalar engine: MLP only")
    if dtype != "float64":
        raise Unsupported("float64 only")
    from micrograd.engine import Value
    from micrograd.nn import MLP

    params = params_for(workload)
    X, y = data_for(workload, batch)
    model = MLP(MLP_SIZES[0], list(MLP_SIZES[1:]))
    for i, layer in enumerate(model.layers, start=1):
        W, b = params[f"W{i}"], params[f"b{i}"]
        for j, neuron in enumerate(layer.neurons):
            for r, w in enumerate(neuron.w):
                w.data = float(W[r, j])
            neuron.b.data = float(b[j])
    Xl, yl = X.tolist(), y.tolist()
    parameters = model.parameters()

    def call():
        # micrograd's demo loss(), verbatim but for the fixed batch; the graph is rebuilt
        # per call. Returns the loss and every parameter's gradient as Python floats.
        model.zero_grad()
        inputs = [list(map(Value, xrow)) for xrow in Xl]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yl, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = MLP_ALPHA * sum((p * p for p in parameters))
        total = data_loss + reg_loss
        total.backward()
        return total.data, [p.grad for p in parameters]

    def to_grads(r):
        flat = iter(r[1])
        out = {}
        for i, layer in enumerate(model.layers, start=1):
            W = np.empty_like(params[f"W{i}"])
            b = np.empty_like(params[f"b{i}"])
            for j in range(len(layer.neurons)):     # per neuron: its weights, then its bias
                for r_ in range(W.shape[0]):
                    W[r_, j] = next(flat)
                b[j] = next(flat)
            out[f"W{i}"], out[f"b{i}"] = W, b
        return {k: out[k] for k in MLP_KEYS}

    def to_summary(r):
        return _summary(r[0], to_grads(r))

    return call, to_summary, to_grads, lambda r: "float64"


MAKERS = {"burnumba": make_burnumba, "micrograd": make_micrograd, "autograd": make_autograd,
          "jax": make_jax, "torch": make_torch, "torch.compile": make_torch_compile}


def make_case(system, workload, batch, dtype="float64"):
    """(call, to_summary, to_grads, grad_dtype); ImportError / Unsupported as documented."""
    if workload not in WORKLOADS:
        raise KeyError(workload)
    if dtype not in DTYPES:
        raise KeyError(dtype)
    return MAKERS[system](workload, batch, dtype)


def make(system, workload, batch, dtype="float64"):
    """(call, to_summary) for this system, workload, batch and dtype."""
    call, to_summary, _, _ = make_case(system, workload, batch, dtype)
    return call, to_summary


def warm_up(call, n=20, budget_s=2.0):
    """Untimed calls: numba / jax compile on the first, caches fill on the next ones. At least
    3 calls, at most n, and no new call once budget_s has passed after the first."""
    import time

    result = call()
    t0 = time.perf_counter()
    for i in range(1, n):
        if i >= 3 and time.perf_counter() - t0 > budget_s:
            break
        result = call()
    return result



def burnumba_tape(workload, batch, dtype="float64"):
    """burnumba's tape for this workload (for its node count and bytes)."""
    import burnumba as bn

    ops = burnumba_ops()
    params = {k: v.astype(dtype) for k, v in params_for(workload).items()}
    data = tuple(a.astype(dtype) for a in data_for(workload, batch))
    if workload == "mlp":
        return bn.trace(lambda p, X, y: mlp_loss(p, X, y, ops), params, *data)
    mask = causal_mask()
    return bn.trace(lambda p, x, w: gpt_block_loss(p, x, w, ops, mask), params, *data)
