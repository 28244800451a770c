"""Data-parallel gradients and training on Dask distributed.

The dataset lives on the workers as shards: row blocks of one or more arrays (X, y, ...) split
alike along axis 0. A step is

    driver: trace the loss once per shard signature (shapes, dtypes) and ship the Tape to every
            worker, once; scatter the flat parameters to every worker (one message per step)
    worker: run the Tape on each shard it holds -> (value_i, grad_i), without retracing
    worker: add the partial results pairwise, in a tree of depth ceil(log2 shards)
    driver: gather the one reduced (value, grad); the optimiser updates here, and only here

    >>> from dask.distributed import Client, LocalCluster
    >>> import dask.array as da, numpy as np, burnumba as bn
    >>> from burnumba import distributed as bnd
    >>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))   # doctest: +SKIP
    >>> X = da.from_array(np.random.rand(1000, 8), chunks=250)
    >>> y = da.from_array(np.random.rand(1000), chunks=250)
    >>> vg = bnd.value_and_grad(lambda p, X, y: np.sum((X @ p - y) ** 2), client)  # doctest: +SKIP
    >>> value, grad = vg(np.zeros(8), (X, y))                           # doctest: +SKIP

Conventions:

* ``reduce="sum"``: the loss of a shard is a sum over its rows, and the result is
  ``sum_i loss(params, shard_i)``. ``reduce="mean"``: the loss is a mean over rows, and the
  result is ``sum_i n_i * loss(params, shard_i) / N``: each shard's mean weighted by its rows
  ``n_i`` (``N = sum_i n_i``). Either way it is the loss of the whole dataset, as one process
  would compute it, up to the order of the additions. A term that is not per row (a
  regulariser) would be counted once per shard: add it on the driver instead.
* Empty shards (0 rows) are skipped: they add 0 to a sum and weigh 0 in a mean. A dataset with
  no rows at all is an error.
* Cost: a step is one scatter, one task per shard and ceil(log2 shards) levels of additions,
  each level a scheduler round trip (1 to 10 ms): chunk the data into about one shard per
  worker thread. Shard tasks are pinned (loosely) to the workers holding their shards; Dask's
  work stealing may still copy a shard to an idle worker to balance the load.
* Resilience: if a worker dies during a step, Dask recomputes what it held on the survivors
  and the step returns the same result (the reduction tree is fixed when the dataset is first
  seen, so even the order of the additions is unchanged). This needs shards Dask can rebuild:
  dask arrays (their chunks are recomputed from the graph: ``da.from_array``, ``da.from_zarr``,
  ``da.random``, ...), or futures of tasks (``client.submit``/``client.compute``). Futures of
  ``client.scatter`` have no graph: replicate them (``client.replicate(futures, n=2)``), or a
  lost one fails the step with Dask's error.
"""
import functools
import math
import threading

import numpy as np

from ..transforms.core import CACHE_SIZE, TapeCache
from .._errors import GuardError, InputError, MissingExtraError, NonFiniteError, ShapeError
from ..kernels import layout
from ..tracing.pytree import flatten
from ..tracing.signature import structure
from .optim import Checkpoints, _exclusive, clip_grad_norm

__all__ = ["value_and_grad", "Trainer", "MissingExtraError"]

REDUCTIONS = ("sum", "mean")


def _dask():
    """(dask, dask.array, distributed), imported on first use: ``import burnumba`` never
    needs dask."""
    try:
        import dask
        import dask.array
        import distributed
    except ImportError as e:
        raise MissingExtraError(
            f"burnumba.distributed needs Dask distributed, which is not installed ({e}): "
            "pip install 'burnumba[distributed]'") from None
    return dask, dask.array, distributed


# -- worker side: module-level functions, pickled by reference ---------------------------------
def _pack(*blocks):
    """One shard: the blocks of X, y, ... with the same rows."""
    return tuple(blocks)


def _describe(shard):
    """What a shard holds, as ((shape, dtype str), ...) or a type name if it is not arrays."""
    arrays = (shard,) if isinstance(shard, np.ndarray) else shard
    if not isinstance(arrays, (tuple, list)) or not arrays or not all(
            isinstance(a, np.ndarray) for a in arrays):
        inner = ", ".join(type(a).__name__ for a in arrays) \
            if isinstance(arrays, (tuple, list)) else ""
        return f"{type(shard).__name__}({inner})" if inner else type(shard).__name__
    return tuple((a.shape, a.dtype.str) for a in arrays)


def _partial(tape, flat_params, shard, weight, drawn=()):
    """(weight * loss, weight * gradient) of one shard, by the shipped tape (no retracing).
    The parameters are the tape's first (differentiated) inputs, in pytree order, so the
    flat vector splits into them as the gradient does. ``drawn``: the loss's random draws
    for this shard, made on the driver, as (start, values) of their nodes."""
    arrays = (shard,) if isinstance(shard, np.ndarray) else tuple(shard)
    leaves = tape.split_grads(flat_params) + list(arrays)
    if drawn:
        state = tape.state()
        state.write(leaves)
        for start, x in drawn:
            state.val[start:start + x.size] = x.ravel()
        value = state.run(layout.MODE_VALUE_AND_GRAD)
        grad = state.grad[:tape.n_diff_elems].copy()
    else:
        value, grad = tape.run_value_and_grad(leaves)
    if weight != 1:
        value, grad = value * weight, grad * weight
    return value, grad


def _shipped(tape):
    """A tape sent to the workers in a task, so that Dask can rebuild it where it is lost."""
    return tape


def _add(a, b):
    return a[0] + b[0], a[1] + b[1]


# -- driver side -------------------------------------------------------------------------------
class _Dataset:
    """The shards of one dataset on the workers: per non-empty shard a future (a tuple of numpy
    arrays) and its signature ((shape, dtype str) per array), in the order of the reduction
    tree: grouped by the worker holding them, so that the first additions are local."""

    def __init__(self, key, futures, metas, holders, positions):
        self.key = key
        self.futures = futures
        self.metas = metas
        self.holders = holders          # per shard, the workers that held it when first seen
        self.positions = positions      # per shard, its place in the dataset as given
        self.rows = [meta[0][0][0] for meta in metas]


def _classify(shards):
    """('dask', arrays) or ('futures', futures); anything else is an InputError."""
    _, da, distributed = _dask()
    items = list(shards) if isinstance(shards, (tuple, list)) else [shards]
    if items and all(isinstance(a, da.Array) for a in items):
        return "dask", items
    if items and all(isinstance(f, distributed.Future) for f in items):
        return "futures", items
    got = ", ".join(sorted({type(a).__name__ for a in items})) or "nothing"
    raise InputError(
        f"shards must be a dask array, a tuple of dask arrays chunked alike along axis 0 (X, y), "
        f"or a list of futures each holding a tuple of numpy arrays; got {got}. Numpy data "
        "must be put on the workers first: da.from_array(X, chunks=rows) (recomputable if a "
        "worker dies) or client.scatter([(X0, y0), (X1, y1)])")


def _dataset(client, shards):
    kind, items = _classify(shards)
    if kind == "dask":
        return _from_dask(client, items)
    return _from_futures(client, items)


def _from_dask(client, arrays):
    dask, _, _ = _dask()
    rows = arrays[0].chunks[0] if arrays[0].ndim else ()
    for k, a in enumerate(arrays):
        name = f"shards[{k}]" if len(arrays) > 1 else "shards"
        if a.ndim == 0:
            raise ShapeError(f"{name} is a 0-d dask array: shards are split along axis 0, so "
                             "every array needs rows")
        if any(math.isnan(c) for c in a.chunks[0]):
            raise ShapeError(f"{name} has unknown chunk sizes along axis 0: call "
                             f"{name}.compute_chunk_sizes() first")
        for axis, c in enumerate(a.chunks[1:], 1):
            if len(c) != 1:
                raise ShapeError(f"{name} is chunked along axis {axis} too ({len(c)} chunks): "
                                 f"a shard holds whole rows; rechunk({{{axis}: -1}})")
        if a.chunks[0] != rows:
            raise ShapeError(
                f"{name} is chunked along axis 0 as {a.chunks[0]}, shards[0] as {rows}: the "
                f"arrays of a shard need the same rows; {name}.rechunk({{0: shards[0].chunks[0]}})")
    blocks = [a.to_delayed().reshape(-1) for a in arrays]
    keep = [i for i, n in enumerate(rows) if n > 0]                 # empty shards are skipped
    if not keep:
        raise InputError("shards: the dataset has no rows")
    futures = client.compute([dask.delayed(_pack, pure=True)(*[b[i] for b in blocks])
                              for i in keep])
    metas = [tuple(((rows[i],) + a.shape[1:], a.dtype.str) for a in arrays) for i in keep]
    key = ("dask",) + tuple(a.name for a in arrays)
    return _ordered(client, key, futures, metas)


def _from_futures(client, futures):
    descs = client.gather(client.map(_describe, futures, pure=False))
    keep, metas = [], []
    for i, desc in enumerate(descs):
        if isinstance(desc, str):
            raise InputError(f"shards[{i}] holds {desc}: each future must hold a tuple of numpy "
                             "arrays (X, y, ...) with the same rows")
        if any(len(shape) == 0 or shape[0] != desc[0][0][0] for shape, _ in desc):
            raise ShapeError(f"shards[{i}] holds arrays of shapes {[s for s, _ in desc]}: the "
                             "arrays of a shard need the same number of rows (axis 0)")
        if [d for _, d in desc] != [d for _, d in descs[0]]:
            raise InputError(f"shards[{i}] holds dtypes {[d for _, d in desc]}, shards[0] "
                             f"{[d for _, d in descs[0]]}: the shards of a dataset hold the same "
                             "arrays")
        if desc[0][0][0] > 0:                                      # empty shards are skipped
            keep.append(i)
            metas.append(desc)
    if not keep:
        raise InputError("shards: the dataset has no rows")
    key = ("futures",) + tuple(f.key for f in futures)
    return _ordered(client, key, [futures[i] for i in keep], metas)


def _ordered(client, key, futures, metas):
    """The dataset with its shards in tree order: by holding worker, then position."""
    _, _, distributed = _dask()
    distributed.wait(futures)
    who = client.who_has(futures)
    order = sorted(range(len(futures)), key=lambda i: (sorted(who[futures[i].key]), i))
    return _Dataset(key, [futures[i] for i in order], [metas[i] for i in order],
                    [sorted(who[futures[i].key]) for i in order], order)


def _param_key(leaves, treedef):
    return treedef, tuple(float if type(x) is float else (np.shape(x), np.asarray(x).dtype.str)
                          for x in leaves)


class _DataParallel:
    """The driver's state: the tapes (one per shard signature) and their futures on the
    workers, and the dataset last used (reused while the same shards are passed)."""

    def __init__(self, loss, client, reduce):
        _, _, distributed = _dask()
        if not isinstance(client, distributed.Client):
            raise InputError(f"client must be a dask.distributed.Client, got "
                             f"{type(client).__name__}: Client(LocalCluster()) or "
                             "Client('tcp://scheduler:8786')")
        if reduce not in REDUCTIONS:
            raise InputError(f"reduce must be 'sum' (the loss sums over rows) or 'mean' (it "
                             f"averages them), got {reduce!r}")
        self.loss, self.client, self.reduce = loss, client, reduce
        self.tapes = TapeCache(loss, argnums=0)
        self.shipped = {}               # (params key, shard signature) -> (tape, sig, future)
        self.dataset = None

    def dataset_for(self, shards):
        kind, items = _classify(shards)
        key = (kind,) + tuple(a.name if kind == "dask" else a.key for a in items)
        if self.dataset is None or self.dataset.key != key:
            self.dataset = _dataset(self.client, shards)
        return self.dataset

    def tape_for(self, params, leaves, treedef, meta):
        """The tape for this shard signature, traced on the driver (on zeros of the shard's
        shapes: a trace does not depend on the data's values) and shipped to every worker."""
        key = (_param_key(leaves, treedef), meta)
        hit = self.shipped.get(key)
        if hit is None:
            zeros = [np.zeros(shape, dtype) for shape, dtype in meta]
            tape, sig, _ = self.tapes.tape_for((params, *zeros), {})
            # a loss with random draws: the workers get the tape without its recipes (they
            # cannot reach the driver's generators), and the driver draws for each shard
            # in turn (``run``), as a loop over the shards calling the loss would
            shipped = tape.without_draws() if tape.draws else tape
            # the Tape itself travels (I, F0 and metadata; never the loss function), as the
            # result of a task: scattered data has no graph, so a worker that died holding the
            # only copy (a scatter made before every worker had joined) failed every later
            # step; a task's result the scheduler recomputes on a survivor
            future = self.client.submit(_shipped, shipped, pure=False)
            while len(self.shipped) >= CACHE_SIZE:
                self.shipped.pop(next(iter(self.shipped)))
            hit = self.shipped[key] = (tape, sig, future)
        return hit

    def _submit(self, plans, flat, ds, drawn, mean):
        """The future of one step's (value, gradient): the parameters scattered to every
        worker (hash=False: a new key per step), one task per shard where the shard is
        (elsewhere only if those workers are gone), and a pairwise tree of additions on the
        workers (ceil(log2 shards) levels)."""
        client = self.client
        where = client.scatter(flat, broadcast=True, hash=False)
        parts = [client.submit(_partial, plan[2], where, shard, n if mean else 1, draws,
                               pure=False, workers=held, allow_other_workers=True,
                               key=f"burnumba-partial-{where.key}-{i}")
                 for i, (plan, shard, n, held, draws) in enumerate(zip(
                     plans, ds.futures, ds.rows, ds.holders, drawn))]
        while len(parts) > 1:
            pairs = [parts[j:j + 2] for j in range(0, len(parts), 2)]
            parts = [client.submit(_add, *p, pure=False) if len(p) == 2 else p[0] for p in pairs]
        return parts[0]

    def run(self, params, shards, flat=None):
        """(value, flat gradient, tape, sig) over the whole dataset. ``flat``: the parameters
        already as one vector in the tape's dtype (a Trainer's)."""
        ds = self.dataset_for(shards)
        leaves, treedef = flatten(params)
        plans = [self.tape_for(params, leaves, treedef, meta) for meta in ds.metas]
        tape, sig = plans[0][:2]
        if flat is None:
            flat = np.concatenate([np.ravel(x) for x in leaves]).astype(tape.dtype)
        mean = self.reduce == "mean"
        # random draws from the driver's generators, shard by shard in the dataset's order
        # (the reduction tree's order groups the shards by worker)
        drawn = [()] * len(plans)
        for j in sorted(range(len(plans)), key=ds.positions.__getitem__):
            drawn[j] = [(d.start, np.asarray(d(), dtype=plans[j][0].dtype))
                        for d in plans[j][0].draws]
        from distributed.client import FutureCancelledError
        for attempt in (1, 2):
            try:
                value, grad = self._submit(plans, flat, ds, drawn, mean).result()
                break
            except FutureCancelledError:
                # the parameters are scattered data, which Dask cannot recompute, and its
                # memory manager drops the replicas no waiting task needs: a worker that died
                # mid-step may have held the only copy, and the step's tasks were cancelled.
                # The step runs again with the parameters scattered anew, once: each task is
                # a pure function of (tape, parameters, shard, draws), so the result and the
                # update (applied by the caller, after this returns) are the same
                if attempt == 2:
                    raise
            except GuardError as e:
                # one tape, traced on the driver, runs every shard: it cannot take another
                # branch
                raise GuardError(
                    "distributed value_and_grad: the loss makes a Python decision on a traced "
                    "value (an `if`, int() or an index) that went another way on a shard than "
                    "when the tape was traced on the driver; every shard runs that one tape. "
                    "Write the choice as data (bnp.where, bnp.maximum), or make the deciding "
                    f"argument static. The decision:\n{e}") from None
        if mean:
            total = sum(ds.rows)
            value, grad = value / total, grad / total
        return float(value), grad, tape, sig


def value_and_grad(loss, client, reduce="sum"):
    """Return ``f(params, shards) -> (value, grads)``: ``loss(params, *shard)`` and its gradient
    with respect to ``params`` (a pytree, as for ``bn.value_and_grad``), over a dataset held
    by the Dask workers of ``client``, reduced on the workers.

    ``shards``: a dask array, a tuple of dask arrays chunked alike along axis 0 (X, y), or a
    list of futures each holding a tuple of numpy arrays (X_i, y_i). ``reduce``: "sum" when the
    loss sums over rows, "mean" when it averages them (each shard's mean is weighted by its
    rows). The gradient is only with respect to the first argument: the shards are data.

    >>> vg = value_and_grad(lambda w, X, y: np.sum((X @ w - y) ** 2), client)  # doctest: +SKIP
    >>> value, grad = vg(np.zeros(8), (X, y))                                 # doctest: +SKIP
    """
    state = _DataParallel(loss, client, reduce)

    def data_parallel(params, shards):
        value, flat, tape, sig = state.run(params, shards)
        return value, structure(tape, flat, sig, (0,), True)

    functools.update_wrapper(data_parallel, loss)
    data_parallel.tapes = state.tapes.tapes
    return data_parallel


class Trainer(Checkpoints):
    """Synchronous data-parallel training: each ``step()`` is the gradient of the whole dataset
    (reduced on the workers, as ``value_and_grad``), then one update by ``optimizer`` (a
    burnumba.optim optimiser) on the driver. The parameters live on the driver as one flat
    vector in the tape's dtype; the workers get them at the start of each step. Since the
    update happens only once the reduced gradient has arrived, a worker lost mid-step costs
    a recomputation, never a lost or doubled update.

    >>> trainer = Trainer(loss, params, optim.AdamW(lr=1e-2), client, (X, y))  # doctest: +SKIP
    >>> for _ in range(100):
    ...     loss_value = trainer.step()                                   # doctest: +SKIP
    """

    def __init__(self, loss, params, optimizer, client, shards, reduce="mean", clip=None):
        if not isinstance(params, dict) or not params or not all(
                isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in params.values()):
            raise InputError("Trainer: params must be a non-empty flat dict {name: float "
                             "array} (a model's init(), for example); nest names with dots")
        self._dp = _DataParallel(loss, client, reduce)
        self.shards = shards
        self.optimizer = optimizer
        self.clip = None if clip is None else float(clip)
        self.names = sorted(params)                  # pytree order: sorted keys
        leaves, treedef = flatten(params)
        ds = self._dp.dataset_for(shards)
        tape = self._dp.tape_for(params, leaves, treedef, ds.metas[0])[0]
        self.flat_params = np.concatenate([np.ravel(x) for x in leaves]).astype(tape.dtype)
        self.params = {k: self.flat_params[s:s + size].reshape(shape)       # views of it
                       for k, (s, size, shape, _) in zip(self.names, tape.in_slots)}
        self.steps = 0
        self.last_grad_norm = None
        self._lock = threading.Lock()

    def step(self):
        """One synchronous step over the whole dataset. Returns the loss before the update.
        A non-finite loss raises NonFiniteError and leaves the parameters as they were."""
        with _exclusive(self._lock, "Trainer.step"):
            value, grads = self._dp.run(self.params, self.shards, flat=self.flat_params)[:2]
            if not math.isfinite(value):
                raise NonFiniteError(
                    f"Trainer.step: the loss is {value} at step {self.steps + 1}; the "
                    f"parameters are left as after step {self.steps} (not updated): try a "
                    "smaller learning rate or gradient clipping")
            if self.clip is not None:
                self.last_grad_norm = clip_grad_norm(grads, self.clip)
            self.optimizer.step(self.flat_params, grads)
            self.steps += 1
            return value
