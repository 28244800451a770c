"""What guards cost: the cases of ``guard_workloads.py``, timed with a plain loop; a table.

    .venv/bin/python bench/report_guards.py [--quick]

Each figure is the best of 7 repeats of (loop time / N), N chosen so that a repeat takes
about 0.2 s (0.02 s with --quick): the best, not the median, because the figures that matter
are differences of a few percent, and on a shared machine other processes only add time.
The ratio column compares each guarded case with the same tape without guards, and the Adam
loop's peers with burnumba.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)
import argparse
import importlib.util
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guard_workloads as gw  # noqa: E402


def per_call(call, target):
    n, t = 1, 0.0
    while t < target / 10:
        start = time.perf_counter()
        for _ in range(n):
            call()
        t = time.perf_counter() - start
        n *= 4
    n = max(1, int(n / 4 * target / max(t, 1e-9) / 4))
    times = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(n):
            call()
        times.append((time.perf_counter() - start) / n)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    target = 0.02 if args.quick else 0.2
    results = {}
    for case, make in gw.CASES.items():
        module = gw.MODULES.get(case)
        if module and importlib.util.find_spec(module) is None:
            print(f"{case:28s} skipped ({module} not installed)")
            continue
        results[case] = per_call(make(), target)
    base = {"guarded-small-if-relu": "unguarded-small-if-relu",
            "guarded-mlp-huber": "unguarded-mlp-huber",
            "adam-counter-autograd": "adam-counter-burnumba",
            "adam-counter-jax": "adam-counter-burnumba"}
    print(f"{'case':28s} {'per call':>12s}  ratio")
    for case, t in results.items():
        unit = f"{t * 1e6:10.3f} us" if t < 1e-3 else f"{t * 1e3:10.3f} ms"
        ref = base.get(case)
        ratio = f"  {t / results[ref]:.3f} x {ref}" if ref in results else ""
        print(f"{case:28s} {unit}{ratio}")


if __name__ == "__main__":
    main()
