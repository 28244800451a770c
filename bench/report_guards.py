"""What guards cost: the cases of ``guard_workloads.py``, timed with a plain loop; a table.

    .venv/bin/python bench/report_guards.py [--quick] [--readme-only | --cases-only]

Each figure is the best of 7 repeats of (loop time / N), N chosen so that a repeat takes
about 0.2 s (0.02 s with --quick): the best, not the median, because the figures that matter
are differences of a few percent, and on a shared machine other processes only add time.
The ratio column compares each guarded case with the same tape without guards, and the Adam
loop's peers with burnumba.

The second table is what one guard costs each of the README's headline workloads
(``guard_workloads.README``): the workload wrapped in a function with one Python ``if`` that
holds, on the first element of its first argument (the guard's own cost) or on the loss's
value (which also needs every forward value), against the same wrapper without the ``if``
(the same names read, the same values computed): the ratio is the guard's cost alone. The
wrapper reads a global (and the helper it holds calls six builtins), whose check on every
call (transforms/captures.py) is a cost of its own, not the guard's: the "reads" column
pairs that wrapper without the ``if`` with the bare loss. Each pair is timed in alternating
blocks (A B, then B A, ...; ``ROUNDS`` rounds of blocks of about 20 ms), and the table gives
the median of the rounds' ratios with the middle half of them (quartiles) and the extremes:
pairing the blocks cancels the slow drifts of a shared machine, which the best-of-7 figures
above cannot tell from a few percent.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)
import argparse
import importlib.util
import os
import sys
import time

import numpy as np

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


ROUNDS = 31


def block_size(call, seconds):
    """Calls per block so that a block takes about ``seconds``."""
    n, t = 1, 0.0
    while t < seconds / 4:
        start = time.perf_counter()
        for _ in range(n):
            call()
        t = time.perf_counter() - start
        n *= 2
    return max(1, int(n / 2 * seconds / max(t, 1e-9)))


def paired(a, b, rounds=ROUNDS, seconds=0.02):
    """Blocks of ``a`` and ``b`` in alternating order: (median, quartiles, extremes) of the
    per-round ratio time(b) / time(a), and the median per-call times of a and b."""
    n = min(block_size(a, seconds), block_size(b, seconds))
    ta, tb = [], []
    for r in range(rounds):
        for call, out in ((a, ta), (b, tb)) if r % 2 == 0 else ((b, tb), (a, ta)):
            start = time.perf_counter()
            for _ in range(n):
                call()
            out.append((time.perf_counter() - start) / n)
    ratio = np.asarray(tb) / np.asarray(ta)
    q1, med, q3 = np.percentile(ratio, [25, 50, 75])
    return med, (q1, q3), (ratio.min(), ratio.max()), np.median(ta), np.median(tb)


def _unit(t):
    return f"{t * 1e6:10.3f} us" if t < 1e-3 else f"{t * 1e3:10.3f} ms"


def readme_table(rounds):
    print(f"\none holding guard on each README workload ({rounds} alternating rounds; ratio: "
          "median [quartiles] (extremes)):")
    print("  guard: the wrapper with its Python `if` against the same wrapper without it (the "
          "same reads, the same values computed)")
    print("  reads: that wrapper without the `if` against the bare loss: the rebinding check "
          "of what it reads (the global _first_element, and the builtins that function "
          "calls, which no global may shadow)")
    print(f"{'workload':20s} {'where':>6s} {'bare loss':>13s} {'no if':>13s} {'holding if':>13s}"
          f"  {'guard':24s}  reads")
    for name, make in gw.README.items():
        plain = make(False)
        r_med, (r1, r3), _, r_plain, _ = paired(plain, make("loss", False), rounds)
        reads = f"{r_med:.3f} [{r1:.3f}-{r3:.3f}]"
        for on in ("input", "loss"):
            med, (q1, q3), (lo, hi), ta, tb = paired(make(on, False), make(on), rounds)
            print(f"{name:20s} {on:>6s} {_unit(r_plain)} {_unit(ta)} {_unit(tb)}  {med:.3f} "
                  f"[{q1:.3f}-{q3:.3f}] ({lo:.3f}-{hi:.3f})  {reads if on == 'loss' else ''}",
                  flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--readme-only", action="store_true",
                        help="only the table of one guard on each README workload")
    parser.add_argument("--cases-only", action="store_true",
                        help="only the table of the guarded cases (2 s with --quick)")
    args = parser.parse_args()
    if args.readme_only:
        readme_table(11 if args.quick else ROUNDS)
        return
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
    if not args.cases_only:
        readme_table(11 if args.quick else ROUNDS)


if __name__ == "__main__":
    main()
