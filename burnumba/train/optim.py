"""Optimisers that update one flat parameter buffer in place, and the Trainer that keeps a
model's parameters inside its tape.

>>> import burnumba as bn, numpy as np
>>> from burnumba import nn, optim
>>> model = nn.GPT(vocab_size=65)
>>> x = y = np.zeros((4, 8), np.int32)
>>> trainer = optim.Trainer(model.loss, model.init(seed=0), optim.AdamW(lr=1e-3), x, y)
>>> loss = trainer.step(x, y)          # forward, backward, update: one njit call each

The update formulas are torch.optim's (SGD with momentum and Nesterov, Adam with L2 weight
decay, AdamW with decoupled weight decay), so a model trained here and in torch from the
same start follows the same path up to rounding.
"""
import contextlib
import math
import threading

import numpy as np

from .checkpoint import load_checkpoint, save_checkpoint
from .._errors import (CheckpointError, ConcurrencyError, GuardError, InputError,
                      NonFiniteError, ShapeError)
from ..ir.tape import check_integer_data
from ..kernels import layout, update_kernels
from ..tracing.signature import Signature
from ..transforms.core import TapeCache

__all__ = ["SGD", "Adam", "AdamW", "cosine", "clip_grad_norm", "Trainer"]


# -- schedules -----------------------------------------------------------------------------
def cosine(lr, total_steps, warmup=0, min_lr=0.0):
    """A learning-rate schedule: linear warm-up over ``warmup`` steps, then a cosine decay
    from ``lr`` to ``min_lr`` at ``total_steps`` (and ``min_lr`` after). ``step`` is the
    number of updates already done (0 for the first).

    >>> sched = cosine(1e-3, 1000, warmup=100)
    >>> opt = AdamW(lr=sched)
    """
    lr, min_lr, total_steps, warmup = float(lr), float(min_lr), int(total_steps), int(warmup)

    def schedule(step):
        if step < warmup:
            return lr * (step + 1) / warmup
        if step >= total_steps:
            return min_lr
        t = (step - warmup) / max(1, total_steps - warmup)
        return min_lr + 0.5 * (lr - min_lr) * (1.0 + math.cos(math.pi * t))
    return schedule


def _flat(a, what):
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype not in (np.float32, np.float64) \
            or not a.flags.c_contiguous:
        raise InputError(f"{what} must be a contiguous 1-D float32 or float64 numpy array, got "
                         f"{type(a).__name__} {getattr(a, 'dtype', '')} "
                         f"{getattr(a, 'shape', '')}: use np.ascontiguousarray(x.ravel())")
    return a


def clip_grad_norm(flat_grads, max_norm):
    """Scale ``flat_grads`` in place so that its 2-norm is at most ``max_norm`` (by
    ``max_norm / (norm + 1e-6)``, as torch.nn.utils.clip_grad_norm_). Returns the norm
    before clipping."""
    g = _flat(flat_grads, "clip_grad_norm: flat_grads")
    kern = update_kernels(g.dtype)
    norm = math.sqrt(kern["sum_squares"](g, 0, g.size))
    coef = float(max_norm) / (norm + 1e-6)
    if coef < 1.0:
        kern["scale"](g, 0, g.size, coef)
    return norm


@contextlib.contextmanager
def _exclusive(lock, what):
    """Hold ``lock`` for one use of a stateful object; a second thread gets a clear error
    instead of corrupting the state (parameters, moments, step counts)."""
    if not lock.acquire(blocking=False):
        raise ConcurrencyError(
            f"{what} is already running in another thread: it holds one set of parameters "
            "and optimiser state, which two threads would corrupt. Give each thread its own "
            "(or serialise the calls with a lock)")
    try:
        yield
    finally:
        lock.release()


# -- optimisers ----------------------------------------------------------------------------
class _Optimizer:
    """Hyper-parameters, the state arrays (allocated on the first step, one entry per
    parameter) and the number of steps taken. ``lr`` may be a schedule: a function of the
    number of steps already taken."""

    state_names = ()

    def __init__(self, lr):
        self.lr = lr
        self.t = 0
        self.state = None
        self._kernels = {}              # dtype -> compiled update kernel (a lookup costs 15 us)
        self._lock = threading.Lock()

    def _kernel(self, dtype):
        k = self._kernels.get(dtype)
        if k is None:
            k = self._kernels[dtype] = update_kernels(dtype)[self.kernel_name]
        return k

    def current_lr(self):
        return float(self.lr(self.t)) if callable(self.lr) else float(self.lr)

    def _ensure_state(self, n, dtype):
        if self.state is None:
            self.state = {k: np.zeros(n, dtype) for k in self.state_names}
        for k, a in self.state.items():
            if a.shape != (n,) or a.dtype != dtype:
                raise ShapeError(
                    f"{type(self).__name__}: its state '{k}' has {a.size} {a.dtype} entries, "
                    f"the parameters {n} {np.dtype(dtype)}: use a new optimiser per model")

    def step(self, flat_params, flat_grads):
        """One update of ``flat_params`` in place from ``flat_grads`` (same size and dtype)."""
        p = _flat(flat_params, f"{type(self).__name__}.step: flat_params")
        g = _flat(flat_grads, f"{type(self).__name__}.step: flat_grads")
        if g.shape != p.shape or g.dtype != p.dtype:
            raise ShapeError(f"{type(self).__name__}.step: flat_grads {g.dtype} {g.shape} do "
                             f"not match flat_params {p.dtype} {p.shape}")
        with _exclusive(self._lock, f"{type(self).__name__}.step"):
            self._update(p, 0, g, 0, p.size, 1.0)

    def state_dict(self):
        """The hyper-parameters, the step count and copies of the state arrays."""
        d = {"t": self.t, "lr": self.current_lr()}
        d.update(self.hyper())
        for k, a in (self.state or {}).items():
            d[k] = a.copy()
        return d

    def load_state_dict(self, d):
        """Restore the step count and state arrays saved by ``state_dict``."""
        try:
            self.t = int(d["t"])
            if self.state_names and self.state_names[0] in d:
                self.state = {k: np.array(d[k]) for k in self.state_names}
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"{type(self).__name__}: optimiser state is missing or "
                                  f"malformed ({e}); was it saved by another optimiser?") from None


class SGD(_Optimizer):
    """torch.optim.SGD: momentum (dampening 0), optional Nesterov and L2 weight decay."""

    state_names = ("momentum_buffer",)
    kernel_name = "sgd"

    def __init__(self, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(lr)
        self.momentum, self.weight_decay, self.nesterov = float(momentum), float(weight_decay), \
            bool(nesterov)

    def hyper(self):
        return {"momentum": self.momentum, "weight_decay": self.weight_decay,
                "nesterov": self.nesterov}

    def _update(self, P, p0, G, g0, n, scale):
        self._ensure_state(n if self.momentum else 0, P.dtype)
        hp = np.array([self.current_lr(), self.momentum, self.weight_decay, self.nesterov,
                       scale], P.dtype)
        self._kernel(P.dtype)(P, p0, G, g0, n, self.state["momentum_buffer"], hp)
        self.t += 1


class Adam(_Optimizer):
    """torch.optim.Adam: weight decay added to the gradient (L2)."""

    state_names = ("exp_avg", "exp_avg_sq")
    kernel_name = "adam"
    decoupled = False

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(lr)
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps, self.weight_decay = float(eps), float(weight_decay)

    def hyper(self):
        return {"beta1": self.betas[0], "beta2": self.betas[1], "eps": self.eps,
                "weight_decay": self.weight_decay}

    def _update(self, P, p0, G, g0, n, scale):
        self._ensure_state(n, P.dtype)
        lr, (b1, b2), t = self.current_lr(), self.betas, self.t + 1
        wd = self.weight_decay
        hp = np.array([lr / (1.0 - b1 ** t), b1, 1.0 - b1, b2, 1.0 - b2,
                       math.sqrt(1.0 - b2 ** t), self.eps,
                       1.0 - lr * wd if self.decoupled else 1.0,
                       0.0 if self.decoupled else wd, scale], P.dtype)
        self._kernel(P.dtype)(P, p0, G, g0, n, self.state["exp_avg"],
                              self.state["exp_avg_sq"], hp)
        self.t += 1


class AdamW(Adam):
    """torch.optim.AdamW: decoupled weight decay, ``p *= 1 - lr * weight_decay``."""

    decoupled = True

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(lr, betas, eps, weight_decay)



# -- the trainer ---------------------------------------------------------------------------
class Checkpoints:
    """``save`` / ``load`` / ``set_params`` of a trainer with ``params`` (a dict of writable
    views of its parameters), ``names`` (their sorted keys), ``optimizer``, ``steps`` and a
    ``_lock``: optim.Trainer and burnumba.distributed.Trainer."""

    def save(self, path, meta=None):
        """Write the parameters, the optimiser state and ``meta`` (JSON-able) to ``path``
        (.npz, no pickle)."""
        meta = dict(meta or {})
        meta.setdefault("trainer_steps", self.steps)
        meta.setdefault("optimizer", type(self.optimizer).__name__)
        save_checkpoint(path, self.params, self.optimizer.state_dict(), meta)

    def load(self, path):
        """Read parameters and optimiser state saved by ``save`` into this trainer. Returns
        the checkpoint's meta dict."""
        params, opt_state, meta = load_checkpoint(path)
        with _exclusive(self._lock, "Trainer.load"):
            self.set_params(params, where=str(path))
            if opt_state is not None:
                self.optimizer.load_state_dict(opt_state)
            self.steps = int(meta.get("trainer_steps", 0))
        return meta

    def set_params(self, params, where=None):
        """Copy ``params`` (the same names and shapes) into this trainer's parameters.
        ``where`` names the checkpoint they came from, for the error message."""
        error = CheckpointError if where else ShapeError
        where = where or "Trainer.set_params"
        if sorted(params) != self.names:
            missing = sorted(set(self.names) - set(params))
            extra = sorted(set(params) - set(self.names))
            raise error(f"{where}: parameter names differ from the model's (missing "
                        f"{missing[:5]}, unexpected {extra[:5]}): wrong model?")
        for k, dst in self.params.items():
            if np.shape(params[k]) != dst.shape:
                raise error(f"{where}: parameter '{k}' has shape {np.shape(params[k])}, the "
                            f"model's is {dst.shape}: wrong model config?")
            dst[...] = params[k]


class _Variants(TapeCache):
    """A trainer's tapes: one signature (its parameters and batch shapes) and the variants
    the loss's Python decisions made (``if`` on a traced value), each with the trainer's own
    run state, bounded as any transformation's (``core.VARIANT_LIMIT``)."""

    def __init__(self, loss_fn):
        super().__init__(loss_fn, 0)
        self.loops = True          # its runs step through structured loops (ir/loops.py)
        self.states = {}           # tape -> the trainer's State of it

    def dropped(self, tape):
        self.states.pop(tape, None)

    def detach(self):
        super().detach()
        self.states = {}


class Trainer(Checkpoints):
    """Trains ``loss_fn(params, *data)`` with ``optimizer``, the parameters living in the tape.

    The loss is traced once, for the shapes of ``example_data``. From then on the parameters
    are the first elements of the tape's value buffer and their gradients the first elements
    of its gradient buffer; the optimiser updates them there in place, so a step copies only
    the batch in. ``clip`` (optional) is a maximum global gradient norm.

    A loss that decides in Python on a traced value (``if loss > 1: ...``) is a tape per
    branch: when a step's decision goes another way, the trainer moves its parameters to the
    variant traced for that branch (tracing it at this step's parameters and batch the
    first time) and runs the step there, as bn.value_and_grad does. ``params``,
    ``flat_params`` and ``flat_grads`` then view the new variant's buffers: read them from
    the trainer after a step rather than keeping the arrays.
    """

    def __init__(self, loss_fn, params, optimizer, *example_data, clip=None):
        if not isinstance(params, dict) or not params or not all(
                isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in params.values()):
            raise InputError("Trainer: params must be a non-empty flat dict {name: float "
                             "array} (a model's init(), for example); nest names with dots")
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.clip = None if clip is None else float(clip)
        self._tapes = _Variants(loss_fn)
        tape = self._tapes.tape_for((params, *example_data), {})[0]
        state = self._tapes.states[tape] = tape.new_state()      # this trainer's own values
        self._lock = threading.Lock()
        self.names = sorted(params)                    # pytree order: sorted keys
        self.params = {}
        self._bind(tape, state)
        if len(self._data) != len(example_data):
            raise InputError("Trainer: every data argument must be one array (no pytrees, no "
                             "Python numbers: pass constants through a closure)")
        self.data_shapes = [shape for _, shape in self._data]
        # integer data stays integer data: a float array of token ids would be truncated
        self._kinds = ["i" if np.asarray(x).dtype.kind in "iu" else np.asarray(x).dtype.kind
                       for x in example_data]
        self._sum_squares = update_kernels(tape.dtype)["sum_squares"]
        self.set_params(params)
        self.steps = 0
        self.last_grad_norm = None      # the gradient norm before clipping, when clipping

    def _bind(self, tape, state):
        """Run ``tape`` on ``state`` from now on: the parameters, gradients and data slots
        become views of its buffers (``params`` is updated in place)."""
        self.tape, self._state = tape, state
        n = tape.n_diff_elems
        self.flat_params = state.val[:n]
        self.flat_grads = state.grad[:n]
        slots = tape.in_slots
        for k, (s, size, shape, _) in zip(self.names, slots[:tape.n_diff]):
            self.params[k] = state.val[s:s + size].reshape(shape)
        self._data = [(state.val[s:s + size].reshape(shape), shape)
                      for s, size, shape, _ in slots[tape.n_diff:]]
        self._out = int(tape.off[tape.out])

    def _run(self, mode, data):
        """Write the batch and run ``mode``; on another branch, on that branch's variant."""
        if self._tapes.captures is not None and not self._tapes.fresh():
            self._retrace(data)          # a value the loss reads was rebound since its trace
        self._write(data)
        try:
            return self._state.run(mode)
        except GuardError as e:
            if e.tape is not self.tape:
                raise
            failed = e
        flat = self.flat_params.copy()
        params = {k: v.copy() for k, v in self.params.items()}
        args = (params, *data)
        tapes = self._tapes

        def run(tape):
            state = tapes.states.get(tape)
            new = state is None          # just traced at these arguments: numpy's branches
            if new:
                state = tapes.states[tape] = tape.new_state()
            self._bind(tape, state)
            self.flat_params[...] = flat
            self._write(data)
            state.unguarded = new
            try:
                return state.run(mode)
            finally:
                state.unguarded = False
        return tapes.guarded(self.tape, Signature(args, {}, (0,)), (0,), args, {}, run,
                             failed)

    def _retrace(self, data):
        """The loss traced again at the current parameters and this batch (its tapes were
        dropped: ``TapeCache.fresh``), the parameters moved to the new tape."""
        flat = self.flat_params.copy()
        params = {k: v.copy() for k, v in self.params.items()}
        tape = self._tapes.tape_for((params, *data), {})[0]
        state = self._tapes.states[tape] = tape.new_state()
        self._bind(tape, state)
        self.flat_params[...] = flat

    def _write(self, data):
        if len(data) != len(self._data):
            raise InputError(f"Trainer: expected {len(self._data)} data arrays, got {len(data)}")
        for k, ((dst, shape), x, kind) in enumerate(zip(self._data, data, self._kinds)):
            if getattr(x, "shape", None) != shape:
                raise ShapeError(
                    f"Trainer: data argument {k} has shape {getattr(x, 'shape', type(x))}, the "
                    f"tape was traced for {shape}: keep the batch shape fixed (drop the last "
                    f"partial batch) or make another Trainer for the new shape")
            if ("i" if x.dtype.kind in "iu" else x.dtype.kind) != kind:
                raise InputError(
                    f"Trainer: data argument {k} is {x.dtype}, the tape was traced with "
                    f"{'integer' if kind == 'i' else 'float' if kind == 'f' else kind!r} data "
                    f"there: pass the same kind of array (e.g. token ids as integers)")
            dst[...] = x
            check_integer_data(x, self.tape.dtype)
        if self.tape.draws:             # a loss with random draws (dropout): fresh ones
            self._state.draw()

    def step(self, *data):
        """One training step on this batch: forward, backward, clipping, update. Returns the
        loss before the update, as a float.

        A loss that is NaN or infinite raises ``bn.NonFiniteError`` and leaves the
        parameters and the optimiser as they were: a diverging run stops where it diverged
        instead of writing NaN into every parameter."""
        with _exclusive(self._lock, "Trainer.step"):
            loss = self._run(layout.MODE_VALUE_AND_GRAD, data)
            state = self._state
            if not math.isfinite(loss):
                raise NonFiniteError(
                    f"Trainer.step: the loss is {loss} at step {self.steps + 1}; the "
                    f"parameters are left as after step {self.steps} (not updated). The run "
                    "diverged: try a smaller learning rate or gradient clipping; "
                    "bn.debug_nans() finds the first non-finite node")
            scale = 1.0
            n = self.flat_params.size
            if self.clip is not None:       # the update scales the gradient; flat_grads stay
                norm = math.sqrt(self._sum_squares(self.flat_grads, 0, n))
                self.last_grad_norm = norm
                scale = min(1.0, self.clip / (norm + 1e-6))
            F, tape = state.F, self.tape
            self.optimizer._update(F, tape.n, F, tape.n + int(tape.off[-1]), n, scale)
            self.steps += 1
            return float(loss)

    def loss(self, *data):
        """The loss on this batch with the current parameters; no gradient, no update."""
        with _exclusive(self._lock, "Trainer.loss"):
            self._run(layout.MODE_FORWARD, data)
            return float(self._state.val[self._out])

    @classmethod
    def restore(cls, path, loss_fn, optimizer, *example_data, clip=None):
        """A Trainer from a checkpoint written by ``save``: the parameters as saved (names,
        shapes and dtype) and the optimiser state. To check the file against a model's own
        parameters, make the Trainer from ``model.init()`` and call ``load`` instead."""
        params, opt_state, meta = load_checkpoint(path)
        trainer = cls(loss_fn, params, optimizer, *example_data, clip=clip)
        if opt_state is not None:
            optimizer.load_state_dict(opt_state)
        trainer.steps = int(meta.get("trainer_steps", 0))
        return trainer
