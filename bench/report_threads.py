"""Throughput of one transformed function called from 1 and from 2 threads at once.

    .venv/bin/python bench/report_threads.py [--seconds 3] [--json out.json]

Each thread runs its own state of the same tape, and the kernel releases the GIL, so calls on
different threads run on different cores. The figure is calls per second over a fixed wall
time: 1 thread, then 2 threads sharing the function; the speed-up is their ratio. BLAS (used
by the larger products) is pinned to one thread per call by burnumba, as everywhere else.
Workloads: the GPT block of report_tensor.py and the moons MLP, at batch 64, float64 and
float32.
"""
import argparse
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _single_thread  # noqa: E402,F401  (BLAS and friends on one thread each)

import numpy as np  # noqa: E402

import tensor_workloads as tw  # noqa: E402


def throughput(call, threads, seconds):
    """Calls per second of ``threads`` threads each calling ``call`` for ``seconds``."""
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def worker(k):
        start.wait()
        n = 0
        while not stop.is_set():
            call()
            n += 1
        counts[k] = n
    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--dtypes", default="float64,float32",
                    help="comma-separated dtypes (default float64,float32)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'workload':<28} {'1 thread':>12} {'2 threads':>12} {'speed-up':>9}")
    for workload in ("gpt-block", "mlp"):
        for dtype in args.dtypes.split(","):
            call = tw.make_burnumba(workload, 64, dtype)[0]
            for _ in range(20):
                call()
            one = throughput(call, 1, args.seconds)
            two = throughput(call, 2, args.seconds)
            rows.append({"workload": f"{workload}-b64-{dtype}", "one": one, "two": two,
                         "speedup": two / one})
            print(f"{workload + ' b64 ' + dtype:<28} {one:>10.0f}/s {two:>10.0f}/s "
                  f"{two / one:>8.2f}x")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cpus": os.cpu_count(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
