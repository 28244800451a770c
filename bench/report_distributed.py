"""burnumba.distributed on a LocalCluster: data-parallel gradient throughput, small-batch
overhead, and the per-message costs behind a scaling model.

    .venv/bin/python bench/report_distributed.py [--quick] [--json out.json] [--markdown out.md]

(a) Throughput: the gradient of logistic regression (summed negative log-likelihood) on
    ROWS rows x D float64 features, as rows per second: one plain process running
    bn.value_and_grad on the whole dataset, then burnumba.distributed on 1 and on 2 worker
    processes (threads_per_worker=1; BLAS, OpenMP and numba pinned to one thread in the driver
    and, by the environment they inherit, in the workers). The dataset is a dask array of
    SHARDS row blocks, computed onto the workers before timing; a step is scatter(params) ->
    one task per shard -> tree of additions -> gather.
(b) Overhead: one step on 2 shards of 64 rows (2 workers) against one process on the 128 rows.
(c) Message costs on the 2-worker cluster: scatter with broadcast of P float64 parameters
    (P = 1e3 .. 1e6), a tiny submit round trip, a copy of P floats between workers, one
    addition of two P-vectors held on different workers, the gather of P floats. From them,
    the bytes per step and a *prediction* of the step time on W = 8 and 64 workers.

Nothing is asserted; the figures depend on the machine and its load (printed first).
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _single_thread  # noqa: E402,F401  (BLAS and friends on one thread; workers inherit it)

import numpy as np  # noqa: E402

import burnumba as bn  # noqa: E402
from burnumba import distributed as bnd  # noqa: E402


def loss(p, X, y):
    """Logistic regression's negative log-likelihood, summed over rows (a stable softplus)."""
    z = X @ p["w"] + p["b"]
    return np.sum(np.maximum(z, 0.0) + np.log(1.0 + np.exp(-np.abs(z))) - y * z)


def _identity_len(x):
    return len(x)


def _add(a, b):
    return a + b


def machine_info():
    import dask
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh
                        if ln.startswith("model name")), "?")
    except OSError:
        pass
    git = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or "?"
    return {
        "python": platform.python_version(), "numpy": np.__version__,
        "dask": dask.__version__, "burnumba": f"{bn.__version__} (git {git})",
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu": cpu, "platform": platform.platform(),
        "load average (1, 5, 15 min) at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def timed(call, repeats):
    """Median seconds of ``repeats`` calls (after one warm-up call)."""
    call()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cluster(workers):
    from distributed import Client, LocalCluster
    c = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                     dashboard_address=None)
    return c, Client(c)


def dataset(rows, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, d))
    y = (rng.random(rows) < 0.5).astype(np.float64)
    p = {"w": 0.1 * rng.standard_normal(d), "b": np.array(0.1)}
    return X, y, p


def makemore_workload(rows):
    """The paper's makemore MLP (context 16, 64-d embeddings, 1,024 tanh units; 1.08 M
    float32 parameters) on ``rows`` windows of the embedded name list: its mean
    cross-entropy, so the distributed run uses reduce="mean"."""
    net = bn.nn.MakemoreMLP(vocab_size=27, context=16, n_embd=64, n_hidden=1024)
    X, Y = bn.data.name_windows(bn.data.default_names(), context=16)
    reps = math.ceil(rows / len(Y))
    X, Y = np.tile(X, (reps, 1))[:rows], np.tile(Y, reps)[:rows]
    return net.loss, net.init(seed=0, dtype=np.float32), (X, Y), "mean"


def throughput(args):
    import dask.array as da
    if args.model == "makemore":
        loss_fn, p, arrays, reduce = makemore_workload(args.rows)
    else:
        X, y, p = dataset(args.rows, args.d)
        loss_fn, arrays, reduce = loss, (X, y), "sum"
    single = bn.value_and_grad(loss_fn)
    t_single = timed(lambda: single(p, *arrays), args.repeats)
    value0 = single(p, *arrays)[0]
    single = None                                # its tape holds the whole dataset's values
    out = {"model": args.model, "rows": args.rows, "d": args.d, "shards": args.shards,
           "single": {"s_per_step": t_single, "rows_per_s": args.rows / t_single}}
    chunk = math.ceil(args.rows / args.shards)
    for workers in (1, 2):
        c, client = cluster(workers)
        try:
            threads = client.run(lambda: os.environ.get("OMP_NUM_THREADS"))
            shards = tuple(da.from_array(a, chunks=(chunk,) + a.shape[1:]) for a in arrays)
            vg = bnd.value_and_grad(loss_fn, client, reduce=reduce)
            t0 = time.perf_counter()
            value = vg(p, shards)[0]                  # computes the shards, traces, ships
            setup = time.perf_counter() - t0
            t = timed(lambda: vg(p, shards), args.repeats)
            out[f"{workers}w"] = {"s_per_step": t, "rows_per_s": args.rows / t,
                                  "setup_s": setup, "rel_diff_value": abs(value / value0 - 1),
                                  "worker_OMP_NUM_THREADS": sorted(set(threads.values()))}
        finally:
            client.close()
            c.close()
    return out


def small_batch(client, repeats):
    import dask.array as da
    X, y, p = dataset(128, 32, seed=1)
    single = bn.value_and_grad(loss)
    t_single = timed(lambda: single(p, X, y), repeats * 20)
    shards = (da.from_array(X, chunks=(64, 32)), da.from_array(y, chunks=64))
    vg = bnd.value_and_grad(loss, client)
    t_dist = timed(lambda: vg(p, shards), repeats)
    return {"rows": 128, "shards": 2, "single_s": t_single, "distributed_s": t_dist,
            "overhead_s": t_dist - t_single}


def message_costs(client, sizes, repeats):
    workers = sorted(client.scheduler_info()["workers"])
    rt = timed(lambda: client.submit(_identity_len, [0], pure=False).result(), repeats)
    rows = []
    for n in sizes:
        v = np.zeros(n)
        bcast = timed(lambda: client.scatter(v, broadcast=True, hash=False), repeats)
        a = client.scatter(v, workers=[workers[0]], hash=False)
        b = client.scatter(v, workers=[workers[-1]], hash=False)
        # a task on the other worker reading a: one copy between workers plus a round trip
        copy = timed(lambda: client.submit(_identity_len, a, workers=[workers[-1]],
                                           pure=False).result(), repeats) - rt
        add = timed(lambda: client.submit(_add, a, b, pure=False), repeats)   # submit only
        add_rt = timed(lambda: client.submit(_add, a, b, pure=False).result(), repeats)
        gather = timed(lambda: a.result(), repeats)
        rows.append({"params": n, "bytes": 8 * n, "scatter_broadcast_s": bcast,
                     "copy_between_workers_s": max(copy, 0.0), "submit_s": add,
                     "add_and_gather_s": add_rt, "gather_s": gather})
    return {"round_trip_s": rt, "sizes": rows}


def scaling_model(costs, t_single, rows_single):
    """Predicted step time on W workers for N = rows_single rows (strong scaling):

        compute / W                                   (perfect split of the per-row work)
      + scatter_broadcast(P, 2) + (W - 2) * copy(P)   (dask replicates from the holders:
                                                       counted serial, a pessimistic bound)
      + 2W * submit                                   (W shard tasks + W - 1 additions)
      + ceil(log2 W) * (round trip + copy(P))          (levels of the reduction tree)
      + gather(P)

    Bytes per step: 8P to each worker, 8P per addition across workers (W - 1), 8P back."""
    out = []
    for c in costs["sizes"]:
        for W in (2, 8, 64):
            t = (t_single / W + c["scatter_broadcast_s"] + (W - 2) * c["copy_between_workers_s"]
                 + 2 * W * c["submit_s"]
                 + math.ceil(math.log2(W)) * (costs["round_trip_s"] + c["copy_between_workers_s"])
                 + c["gather_s"])
            out.append({"params": c["params"], "workers": W, "bytes_per_step": 8 * c["params"]
                        * (2 * W), "predicted_step_s": t,
                        "predicted_speedup_vs_single": t_single / t,
                        "rows": rows_single})
    return out


def markdown(report):
    a, b = report["throughput"], report["small_batch"]
    lines = [f"Machine: {report['machine']['cpu']}, {report['machine']['nproc']} CPUs, load "
             f"{report['machine']['load average (1, 5, 15 min) at start']}", "",
             f"(a) logistic regression gradient, {a['rows']} rows x {a['d']} float64, "
             f"{a['shards']} shards", "",
             "| run | ms/step | rows/s | vs one process |", "|---|---:|---:|---:|"]
    for k in ("single", "1w", "2w"):
        r = a[k]
        lines.append(f"| {k} | {1e3 * r['s_per_step']:.1f} | {r['rows_per_s']:.3g} | "
                     f"{a['single']['s_per_step'] / r['s_per_step']:.2f}x |")
    lines += ["", f"(b) 2 shards x 64 rows: one process {1e6 * b['single_s']:.0f} us, "
              f"distributed {1e3 * b['distributed_s']:.2f} ms, overhead "
              f"{1e3 * b['overhead_s']:.2f} ms/step", "",
              f"(c) round trip {1e3 * report['costs']['round_trip_s']:.2f} ms",
              "", "| params | scatter bcast ms | copy ms | submit ms | add+gather ms | "
              "gather ms |", "|---:|---:|---:|---:|---:|---:|"]
    for c in report["costs"]["sizes"]:
        lines.append(f"| {c['params']:.0e} | {1e3 * c['scatter_broadcast_s']:.2f} | "
                     f"{1e3 * c['copy_between_workers_s']:.2f} | {1e3 * c['submit_s']:.2f} | "
                     f"{1e3 * c['add_and_gather_s']:.2f} | {1e3 * c['gather_s']:.2f} |")
    lines += ["", "Predictions from the measured costs (not measurements):", "",
              "| params | workers | MB/step | predicted ms/step | predicted vs one process |",
              "|---:|---:|---:|---:|---:|"]
    for m in report["model"]:
        lines.append(f"| {m['params']:.0e} | {m['workers']} | {m['bytes_per_step'] / 1e6:.2f} "
                     f"| {1e3 * m['predicted_step_s']:.1f} | "
                     f"{m['predicted_speedup_vs_single']:.2f}x |")
    return "\n".join(lines)


def main(argv=None):
    # da.from_array puts the numpy dataset into the graph, once, by design of this benchmark
    warnings.filterwarnings("ignore", message="Sending large graph")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200k rows, fewer repeats and sizes")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--d", type=int, default=32, help="features of the logistic regression")
    ap.add_argument("--model", choices=("logistic", "makemore"), default="logistic",
                    help="the throughput workload (a): logistic regression on ROWS x D, or the "
                    "makemore MLP on ROWS windows (default 16,384)")
    ap.add_argument("--shards", type=int, default=2,
                    help="row blocks; one per worker has the least per-task overhead")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args(argv)
    args.rows = args.rows or ((2_048 if args.quick else 16_384) if args.model == "makemore"
                              else (200_000 if args.quick else 1_000_000))
    args.repeats = 3 if args.quick else 7
    sizes = [1_000, 100_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    report = {"machine": machine_info()}
    for k, v in report["machine"].items():
        print(f"{k}: {v}")
    report["throughput"] = a = throughput(args)
    what = (f"makemore MLP gradient (1.08 M float32 parameters), {a['rows']} windows"
            if args.model == "makemore" else
            f"logistic regression gradient, {a['rows']} rows x {a['d']} float64")
    print(f"\n(a) {what}, {a['shards']} shards")
    for k in ("single", "1w", "2w"):
        r = a[k]
        extra = "" if k == "single" else (
            f"  setup {r['setup_s']:.2f} s, |value/single - 1| {r['rel_diff_value']:.1e}, "
            f"worker OMP_NUM_THREADS {r['worker_OMP_NUM_THREADS']}")
        print(f"  {k:<7} {1e3 * r['s_per_step']:8.1f} ms/step {r['rows_per_s']:10.3g} rows/s "
              f"{a['single']['s_per_step'] / r['s_per_step']:5.2f}x one process{extra}")
    print(f"  2 workers vs 1 worker: {a['1w']['s_per_step'] / a['2w']['s_per_step']:.2f}x")
    c, client = cluster(2)
    try:
        report["small_batch"] = b = small_batch(client, 20 if args.quick else 50)
        print(f"\n(b) 2 shards x 64 rows: one process {1e6 * b['single_s']:.1f} us/step, "
              f"distributed {1e3 * b['distributed_s']:.2f} ms/step: overhead "
              f"{1e3 * b['overhead_s']:.2f} ms/step")
        report["costs"] = costs = message_costs(client, sizes, 5 if args.quick else 15)
    finally:
        client.close()
        c.close()
    print(f"\n(c) message costs, 2 workers: submit + result round trip "
          f"{1e3 * costs['round_trip_s']:.2f} ms")
    print(f"  {'params':>8} {'scatter bcast':>14} {'copy w->w':>10} {'submit':>8} "
          f"{'add+gather':>11} {'gather':>8}   (ms)")
    for r in costs["sizes"]:
        print(f"  {r['params']:>8.0e} {1e3 * r['scatter_broadcast_s']:>14.2f} "
              f"{1e3 * r['copy_between_workers_s']:>10.2f} {1e3 * r['submit_s']:>8.2f} "
              f"{1e3 * r['add_and_gather_s']:>11.2f} {1e3 * r['gather_s']:>8.2f}")
    report["model"] = scaling_model(costs, a["single"]["s_per_step"], a["rows"])
    print(f"\n  PREDICTIONS from the measured costs (not measured), {a['rows']} rows:")
    print("  " + scaling_model.__doc__.split("\n\n")[1].strip().replace("\n", "\n  "))
    print(f"  {'params':>8} {'workers':>8} {'MB/step':>9} {'ms/step':>9} {'vs one process':>15}")
    for m in report["model"]:
        print(f"  {m['params']:>8.0e} {m['workers']:>8} {m['bytes_per_step'] / 1e6:>9.2f} "
              f"{1e3 * m['predicted_step_s']:>9.1f} {m['predicted_speedup_vs_single']:>14.2f}x")
    report["machine"]["load average (1, 5, 15 min) at end"] = " ".join(
        f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload average (1, 5, 15 min) at end: "
          f"{report['machine']['load average (1, 5, 15 min) at end']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(markdown(report) + "\n")


if __name__ == "__main__":
    main()
