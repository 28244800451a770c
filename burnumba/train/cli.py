"""The ``burnumba`` command: train the paper's two models and sample from a checkpoint.

    burnumba train gpt --steps 1000 --out runs/gpt      # the embedded corpus, no download
    burnumba train makemore --data names.txt --json     # last stdout line: one JSON object
    burnumba sample runs/gpt --n 3 --temperature 0.8
    burnumba info                                       # versions, cache, BLAS, CPU

``python -m burnumba ...`` is the same. Training prints a progress bar on stderr (tqdm when it
is installed, a plain line every 10% otherwise) and, at the end, a summary and a few samples
on stdout. Sampling runs the model eagerly in numpy on the trained parameters.
"""
import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np

from .._version import __version__
from . import data
from . import nn
from . import optim
from .checkpoint import load_checkpoint
from .._errors import BurnumbaError, CheckpointError, NonFiniteError, ShapeError
from ..tools.info import add_parser as _add_info
from ..transforms.core import trace

CHECKPOINT = "checkpoint.npz"
VAL_BATCHES = 20            # fixed validation batches for the final (and --eval-every) val loss
VAL_SEED = 1234             # their seed: the same batches whatever --seed, so runs compare
LAST_STEPS = 50             # the final train loss is the mean over this many last steps
WARMUP_STEPS = 10           # ms/step is the median over the steps after these
GPT_CONFIG = {"n_embd": 24, "n_head": 6, "n_layer": 6, "block_size": 8}   # the paper's GPT
SAMPLE_CHARS = 200          # characters per GPT sample
SNAPSHOTS = 100             # keep a copy of the parameters this many times per run
DIVERGED = 3                # the exit code of a run whose loss became NaN or infinite


# -- argument types: bad values are argparse usage errors (exit 2) -------------------------------
def _int_at_least(lo):
    def parse(s):
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {s!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {v}")
        return v
    return parse


def _positive_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {s}")
    return v


def build_parser():
    parser = argparse.ArgumentParser(
        prog="burnumba", description="Train the BurTorch paper's small models with burnumba, "
        "and sample from them.",
        epilog="burnumba's own matrix products run on one BLAS thread "
        "(BURNUMBA_BLAS_THREADS, default 1): a multi-threaded BLAS only adds overhead on "
        "these small matrices.")
    parser.add_argument("--version", action="version", version=f"burnumba {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{train,sample,info}", required=True)

    t = sub.add_parser(
        "train", help="train a model and print its losses, speed and samples",
        description="Train the paper's GPT (character level, 6 layers, 24 wide, context 8) or "
        "its makemore MLP (names, context 16) with AdamW, then print the final train and val "
        "loss, the median ms/step, the parameter count and a few samples.",
        epilog="gpt reads a UTF-8 text file (default: the language reference that ships with "
        "Python); makemore reads one name per line (default: words of that text).")
    t.add_argument("model", choices=sorted(nn.MODELS), help="which model to train")
    t.add_argument("--data", metavar="FILE", help="training data (default: embedded)")
    t.add_argument("--batch", type=_int_at_least(1), default=32, metavar="N",
                   help="batch size (default 32)")
    t.add_argument("--steps", type=_int_at_least(1), default=1000, metavar="N",
                   help="optimisation steps (default 1000)")
    t.add_argument("--lr", type=_positive_float, default=1e-3, metavar="X",
                   help="AdamW learning rate (default 1e-3)")
    t.add_argument("--seed", type=_int_at_least(0), default=0, metavar="N",
                   help="seed of the initialisation, the batches and the samples (default 0)")
    t.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                   help="parameter and compute dtype (default float32)")
    t.add_argument("--out", metavar="DIR", help=f"save DIR/{CHECKPOINT} at the end (a new "
                   "folder, or one without a checkpoint unless --force)")
    t.add_argument("--force", action="store_true",
                   help=f"overwrite an existing DIR/{CHECKPOINT}")
    t.add_argument("--eval-every", type=_int_at_least(0), default=0, metavar="N",
                   help=f"also report the val loss ({VAL_BATCHES} batches) every N steps "
                   "(default 0: only at the end)")
    t.add_argument("--clip", type=_positive_float, default=None, metavar="X",
                   help="clip the global gradient norm to X (default: no clipping)")
    t.add_argument("--json", action="store_true",
                   help="end with one line of JSON holding the results")
    t.set_defaults(run=cmd_train)

    s = sub.add_parser("sample", help="print samples from a saved checkpoint",
                       description=f"Load DIR/{CHECKPOINT} (written by `burnumba train --out "
                       "DIR`), rebuild its model and print samples: names for makemore, "
                       f"{SAMPLE_CHARS}-character passages for gpt.")
    s.add_argument("dir", metavar="DIR", help=f"a directory holding {CHECKPOINT} (or the file)")
    s.add_argument("--n", type=_int_at_least(1), default=5, metavar="N",
                   help="number of samples (default 5)")
    s.add_argument("--seed", type=_int_at_least(0), default=0, metavar="S",
                   help="sampling seed (default 0)")
    s.add_argument("--temperature", type=_positive_float, default=1.0, metavar="T",
                   help="divide the logits by T before the softmax (default 1)")
    s.set_defaults(run=cmd_sample)
    _add_info(sub)
    return parser


def main(argv=None):
    """Entry point of the ``burnumba`` script and of ``python -m burnumba``; returns the exit
    code. Errors in the data or a checkpoint print one line on stderr and return 2."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (BurnumbaError, OSError) as e:
        print(f"burnumba {args.command}: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"burnumba {args.command}: interrupted", file=sys.stderr)
        return 130


def _one_line(e):
    msg = str(e) if not isinstance(e, OSError) or not e.filename else \
        f"{e.filename}: {e.strerror or e}"
    return " ".join(msg.split())


# -- the two tasks -----------------------------------------------------------------------------
class _Task:
    """What differs between the two models: the data, the tokenizer, the model and the
    train and val samplers (with the sizes to report)."""

    def __init__(self, kind, data_path, batch, seed):
        self.kind = kind
        if kind == "gpt":
            text = data.load_text(data_path)
            self.tokenizer = data.CharTokenizer.from_text(text)
            train, val = data.split(self.tokenizer.encode(text), 0.1)
            self.model = nn.GPT(len(self.tokenizer), **GPT_CONFIG)
            T = self.model.block_size
            if len(val) <= T:
                raise data.DataError(
                    f"the text has {len(text)} characters: its 10% validation tail ({len(val)}) "
                    f"is shorter than one window of block_size {T} + 1; use a longer text")
            self.train = data.BatchSampler(train, batch, T, seed)
            self.val = data.BatchSampler(val, batch, T, VAL_SEED)
            self.sizes = {"train_tokens": len(train), "val_tokens": len(val)}
        else:
            names = data.load_names(data_path)
            self.tokenizer = data.CharTokenizer(data.NAMES_VOCAB)
            self.model = nn.MakemoreMLP()
            # split by name, as makemore does: validation names are never seen in training
            order = np.random.default_rng(seed).permutation(len(names))
            n_val = len(names) // 10
            if n_val == 0:
                raise data.DataError(f"{len(names)} names are too few for a 10% validation "
                                     "split; use at least 10 names")
            val_names = [names[k] for k in order[:n_val]]
            train_names = [names[k] for k in order[n_val:]]
            Xtr, Ytr = data.name_windows(train_names, self.model.context)
            Xva, Yva = data.name_windows(val_names, self.model.context)
            self.train = data.WindowSampler(Xtr, Ytr, batch, seed)
            self.val = data.WindowSampler(Xva, Yva, batch, VAL_SEED)
            self.sizes = {"names": len(names), "train_windows": len(Xtr),
                          "val_windows": len(Xva)}


# a batch above this is checked against the tape's limit before it is traced
_CHECKED_BATCH = 512
_VALUES = np.iinfo(np.int32).max      # a tape's value buffer (tracing/tracer.py's limit)


def _refuse_a_batch_too_large(model, params, batch_xy, batch):
    """Raise the tape's ShapeError for a batch whose values would pass 2**31 elements, from
    traces of its first one and two samples: a tape's values grow linearly with the batch,
    and tracing the whole batch only to meet the limit took 48 s at --batch 100000."""
    if batch <= _CHECKED_BATCH:
        return
    x, y = batch_xy
    one, two = (int(trace(model.loss, params, x[:k], y[:k]).off[-1]) for k in (1, 2))
    values = one + (two - one) * (batch - 1)
    if values > _VALUES:
        fits = max(1, int(0.9 * (_VALUES - one) / max(two - one, 1)))
        raise ShapeError(f"--batch {batch} is too large for one tape (its value buffer would "
                         f"hold about {values:,} elements, past 2**31); use a smaller --batch, "
                         f"e.g. {min(fits, batch // 2)}")


def cmd_train(args):
    dtype = np.dtype(args.dtype)
    task = _Task(args.model, args.data, args.batch, args.seed)
    model = task.model
    params = model.init(seed=args.seed, dtype=dtype)
    n_params = model.n_params(params)
    first = task.train.next()
    _refuse_a_batch_too_large(model, params, first, args.batch)
    val_batches = [task.val.next() for _ in range(VAL_BATCHES)]
    out = _out_dir(args.out, args.force) if args.out else None

    t0 = time.perf_counter()
    try:
        trainer = optim.Trainer(model.loss, params, optim.AdamW(lr=args.lr), *first,
                                clip=args.clip)
    except ShapeError as e:
        if "2**31" not in str(e):
            raise
        raise ShapeError(f"--batch {args.batch} is too large for one tape ({_one_line(e)}); "
                         f"use a smaller --batch, e.g. {max(1, args.batch // 8)}") from None
    trace_s = time.perf_counter() - t0

    def val_loss():
        return float(np.mean([trainer.loss(x, y) for x, y in val_batches]))

    progress = _Progress(args.steps, f"train {args.model}")
    losses, times, history = [], [], []
    every = max(1, args.steps // SNAPSHOTS)
    # the last two copies of the parameters and optimiser state: a copy taken after step s
    # is known good once step s + 1's loss came out finite
    snapshots = [_copy(trainer)]
    diverged = None
    t0 = time.perf_counter()
    try:
        for step in range(1, args.steps + 1):
            x, y = task.train.next()
            t = time.perf_counter()
            try:
                loss = trainer.step(x, y)
            except NonFiniteError:
                diverged = step
                break
            times.append(time.perf_counter() - t)
            losses.append(loss)
            progress.update(step, _running(losses), history[-1][1] if history else None)
            if step % every == 0:
                snapshots = (snapshots + [_copy(trainer)])[-2:]
            if args.eval_every and step % args.eval_every == 0 and step < args.steps:
                history.append((step, val_loss()))
                progress.write(f"step {step}: val loss {history[-1][1]:.4f}")
    finally:
        progress.close()
    train_s = time.perf_counter() - t0
    if diverged is not None:
        return _diverged(args, task, model, trainer, snapshots, diverged, losses, out)
    final_val = val_loss()
    history.append((args.steps, final_val))

    last = losses[-LAST_STEPS:]
    timed = times[WARMUP_STEPS:] if len(times) > WARMUP_STEPS else times
    results = {
        "model": args.model, "params": n_params, "steps": trainer.steps, "batch": args.batch,
        "lr": args.lr, "clip": args.clip, "dtype": args.dtype, "seed": args.seed,
        "vocab_size": len(task.tokenizer), **task.sizes,
        "ms_per_step": 1e3 * float(np.median(timed)),
        "final_train_loss": float(np.mean(last)), "final_val_loss": final_val,
        "trace_s": trace_s, "train_s": train_s, "peak_rss_mb": _peak_rss_mb(),
        "val_history": [[s, v] for s, v in history],
    }
    if not math.isfinite(final_val):
        print("burnumba train: warning: the validation loss is not finite: try a smaller "
              "--lr or --clip 1.0", file=sys.stderr)

    if out is not None:
        meta = {"model": args.model, "config": model.config, "tokenizer":
                task.tokenizer.to_dict(), "dtype": args.dtype, "steps": trainer.steps,
                "seed": args.seed, "batch": args.batch, "lr": args.lr, "clip": args.clip,
                "final_train_loss": _finite(results["final_train_loss"]),
                "final_val_loss": _finite(final_val), "burnumba_version": __version__}
        results["checkpoint"] = str(out / CHECKPOINT)
        trainer.save(out / CHECKPOINT, meta=meta)

    weights = {k: v.copy() for k, v in trainer.params.items()}
    rng = np.random.default_rng(args.seed)
    samples = _samples(args.model, model, weights, task.tokenizer, rng,
                       n=5 if args.model == "makemore" else 1)
    results["samples"] = samples

    _print_summary(results, len(last), len(timed), model)
    print("samples:")
    for s in samples:
        print(s if args.model == "makemore" else s.rstrip("\n"))
    if args.json:
        print(json.dumps({k: _finite(v) for k, v in results.items()}))
    return 0


def _out_dir(path, force):
    """The --out folder, made now (not after training); refuses to overwrite a checkpoint
    without --force, and a file where a folder is expected."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise CheckpointError(f"--out {path}: this is a file; --out takes a folder, where "
                              f"burnumba writes {CHECKPOINT}")
    if (out / CHECKPOINT).exists() and not force:
        raise CheckpointError(f"--out {path}: {out / CHECKPOINT} already exists; choose "
                              "another folder, or pass --force to overwrite it")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _copy(trainer):
    """(step, parameters, optimiser state) of a trainer, copied, if every value is finite."""
    params = {k: v.copy() for k, v in trainer.params.items()}
    finite = all(np.isfinite(v).all() for v in params.values())
    return (trainer.steps, params, trainer.optimizer.state_dict()) if finite else None


def _diverged(args, task, model, trainer, snapshots, step, losses, out):
    """The loss became NaN or infinite at ``step``: report it, save the last parameters known
    to be good (a snapshot whose next loss was finite), print the JSON line with the failure,
    and exit with DIVERGED."""
    good = [s for s in snapshots if s is not None and s[0] <= step - 2]
    print(f"burnumba train: the loss became NaN or infinite at "
          f"step {step} (it diverged): try a smaller --lr or --clip 1.0", file=sys.stderr)
    results = {"model": args.model, "status": "diverged", "diverged_at_step": step,
               "steps": step - 1, "batch": args.batch, "lr": args.lr, "clip": args.clip,
               "dtype": args.dtype, "seed": args.seed,
               "last_finite_train_loss": _finite(losses[-1]) if losses else None,
               "peak_rss_mb": _peak_rss_mb(), "checkpoint": None, "checkpoint_step": None}
    if good and out is not None:
        saved_step, params, opt_state = good[-1]
        trainer.set_params(params)
        trainer.optimizer.load_state_dict(opt_state)
        trainer.steps = saved_step
        meta = {"model": args.model, "config": model.config, "tokenizer":
                task.tokenizer.to_dict(), "dtype": args.dtype, "steps": saved_step,
                "seed": args.seed, "batch": args.batch, "lr": args.lr, "clip": args.clip,
                "diverged_at_step": step, "burnumba_version": __version__}
        trainer.save(out / CHECKPOINT, meta=meta)
        results["checkpoint"], results["checkpoint_step"] = str(out / CHECKPOINT), saved_step
        print(f"burnumba train: saved the parameters of step {saved_step}, the last known to "
              f"be good, to {out / CHECKPOINT}", file=sys.stderr)
    elif out is not None:
        print("burnumba train: no checkpoint saved: no earlier parameters are known to be "
              "good (the loss was not finite from the start)", file=sys.stderr)
    if args.json:
        print(json.dumps({k: _finite(v) for k, v in results.items()}))
    return DIVERGED


def cmd_sample(args):
    path = Path(args.dir)
    if path.is_dir() or not path.suffix:
        path = path / CHECKPOINT
    params, _, meta = load_checkpoint(path)
    kind = meta.get("model")
    if kind not in nn.MODELS or not isinstance(meta.get("config"), dict):
        raise CheckpointError(f"{path}: its meta names no known model ({kind!r}; expected one "
                              f"of {sorted(nn.MODELS)} with a config): was it written by "
                              "`burnumba train --out`?")
    try:
        model = nn.MODELS[kind](**meta["config"])
        tokenizer = data.CharTokenizer.from_dict(meta.get("tokenizer"))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: cannot rebuild the {kind} model from its meta: "
                              f"{_one_line(e)}") from None
    expected = {name: tuple(shape) for name, shape, _ in model.shapes()}
    got = {name: tuple(np.shape(v)) for name, v in params.items()}
    if got != expected:
        bad = sorted(k for k in expected.keys() | got.keys() if expected.get(k) != got.get(k))
        raise CheckpointError(f"{path}: its parameters do not fit the {kind} model of its meta "
                              f"(first differences: {bad[:3]})")
    if len(tokenizer) != model.vocab_size:
        raise CheckpointError(f"{path}: the tokenizer has {len(tokenizer)} characters, the "
                              f"model's vocab_size is {model.vocab_size}")
    rng = np.random.default_rng(args.seed)
    samples = _samples(kind, model, params, tokenizer, rng, args.n, args.temperature)
    for i, s in enumerate(samples):
        if kind == "makemore":
            print(s)
        else:
            print(f"--- sample {i + 1} ---")
            print(s.rstrip("\n"))
    return 0


# -- sampling: eager numpy on plain arrays -------------------------------------------------------
def _draw(logits, rng, temperature):
    """One token from softmax(logits / temperature), in float64."""
    z = np.asarray(logits, dtype=np.float64) / temperature
    p = np.exp(z - z.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def sample_text(model, params, tokenizer, rng, length=SAMPLE_CHARS, temperature=1.0,
                start="\n"):
    """``length`` characters from a GPT, starting from the context ``start``; the context is
    cropped to the last ``block_size`` tokens."""
    ids = list(tokenizer.encode(start)) if all(c in tokenizer.vocab for c in start) else [0]
    n0 = len(ids)
    for _ in range(length):
        ctx = np.array([ids[-model.block_size:]], dtype=np.int32)
        ids.append(_draw(model.apply(params, ctx)[0, -1], rng, temperature))
    return tokenizer.decode(ids[n0:])


def sample_names(model, params, rng, n, temperature=1.0, max_len=64):
    """``n`` names from a makemore model: a rolling context that starts all '.', stopping at
    the next '.' (or after ``max_len`` characters)."""
    names = []
    for _ in range(n):
        ctx, out = [0] * model.context, []
        while len(out) < max_len:
            ix = _draw(model.apply(params, np.array([ctx], dtype=np.int32))[0], rng, temperature)
            if ix == 0:
                break
            out.append(ix)
            ctx = ctx[1:] + [ix]
        names.append("".join(data.NAMES_VOCAB[i] for i in out))
    return names


def _samples(kind, model, params, tokenizer, rng, n, temperature=1.0):
    if kind == "makemore":
        return sample_names(model, params, rng, n, temperature)
    return [sample_text(model, params, tokenizer, rng, SAMPLE_CHARS, temperature)
            for _ in range(n)]


# -- reporting ---------------------------------------------------------------------------------
class _Progress:
    """A tqdm bar on stderr with the running loss, or without tqdm a line every 10%."""

    def __init__(self, total, desc):
        self.total, self.desc = total, desc
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
            self.every = max(1, total // 10)
        else:
            self.bar = tqdm(total=total, desc=desc, unit="step", file=sys.stderr,
                            mininterval=0.25, dynamic_ncols=True)
        self.t0 = time.perf_counter()

    def update(self, step, loss, val):
        if self.bar is not None:
            if step % 10 == 0 or step == self.total:
                post = f"loss={loss:.4f}" + (f", val={val:.4f}" if val is not None else "")
                self.bar.set_postfix_str(post, refresh=False)
            self.bar.update(1)
        elif step % self.every == 0 or step == self.total:
            rate = 1e3 * (time.perf_counter() - self.t0) / step
            print(f"{self.desc}: step {step}/{self.total} ({100 * step // self.total}%), "
                  f"loss {loss:.4f}, {rate:.2f} ms/step", file=sys.stderr, flush=True)

    def write(self, line):
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _running(losses):
    return float(np.mean(losses[-LAST_STEPS:]))


def _peak_rss_mb():
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024   # bytes vs KiB


def _finite(v):
    """NaN and inf as None (also inside lists), so the JSON line stays valid JSON."""
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _print_summary(r, n_last, n_timed, model):
    data_desc = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in r.items()
                          if k in ("names", "train_tokens", "val_tokens", "train_windows",
                                   "val_windows"))
    print(f"model             {model!r}: {r['params']:,} parameters, {r['dtype']}")
    print(f"data              vocab {r['vocab_size']}, {data_desc}")
    print(f"training          {r['steps']} steps x batch {r['batch']}, AdamW lr {r['lr']:g}"
          + (f", clip {r['clip']:g}" if r["clip"] else "") + f", seed {r['seed']}")
    print(f"final train loss  {r['final_train_loss']:.4f}  (mean of the last {n_last} steps)")
    print(f"final val loss    {r['final_val_loss']:.4f}  (mean of {VAL_BATCHES} fixed batches)")
    print(f"ms/step           {r['ms_per_step']:.3f}  (median of {n_timed} steps; trace "
          f"{r['trace_s']:.2f} s, train {r['train_s']:.2f} s)")
    print(f"peak RSS          {r['peak_rss_mb']:.0f} MB")
    if "checkpoint" in r:
        print(f"checkpoint        {r['checkpoint']}")
