"""Structured loops (bn.fori_loop) against the Python loop and jax.jit: time per gradient
call, trace time, tape size and memory against the number of steps, with and without
checkpointing.

    .venv/bin/python bench/report_loops.py [--quick] [--out bench/results]

Parts (float64, one thread each, bench/_single_thread.py, all in this process):

* ``ode``: issue #32's workload, 10 Euler steps of small vector ops on a state of 1000, the
  gradient with respect to the initial state (``loop_workloads.py``): burnumba's Python loop
  (unrolled into the tape), bn.fori_loop (with checkpoint=True too), jax.jit of the Python
  loop and of lax.fori_loop. Per call: the median of 7 repeats of a loop of calls, the
  systems interleaved in two rounds and the better kept (with --quick: one round of 5; the
  long table's repeats 3).
* ``overhead``: the per-step cost of bn.fori_loop's runner with almost no arithmetic (a
  state of one element): (time at 2000 steps - time at 20 steps) / 1980.
* ``long``: the step on a state of 100 for 10 .. 10^4 steps: the trace time (burnumba: the
  trace alone, ``bn.grad(loss).trace(...)`` on a new function, the kernel already built;
  jax.jit: its first call, trace and XLA compile), the tape's nodes, the time per call and
  the peak memory of a run. burnumba's memory is tracemalloc's peak over one call in a new thread
  (its run state is made there: values, gradients and what the loop keeps for the reverse
  sweep); jax.jit's is XLA's ``memory_analysis()`` (temporaries, arguments and outputs).

Writes ``loops.json`` and ``loops.svg`` (memory and time against steps) to ``--out`` and
prints the tables. Every system's gradient is checked against burnumba's Python loop
before it is timed. Nothing asserts on time.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import burnumba as bn  # noqa: E402,F401
import loop_workloads as lw  # noqa: E402


def timed(call, budget, repeats=7):
    call()
    t = time.perf_counter()
    call()
    one = max(time.perf_counter() - t, 1e-7)
    n = max(1, int(budget / one))
    reps = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            call()
        reps.append((time.perf_counter() - t) / n)
    return float(np.median(reps)), min(reps), max(reps)


def _check(name, got, want):
    err = float(np.max(np.abs(np.asarray(got) - want)) / max(1.0, np.max(np.abs(want))))
    if err > 1e-9:
        raise SystemExit(f"{name}: the gradient differs from burnumba's Python loop by {err}")
    return err


def ode(budget, rounds=2, repeats=7):
    want = lw.make_bn(lw.bn_python(lw.ODE_STEPS), lw.ODE_N)[1]
    makers = {
        "burnumba python loop": lambda: lw.make_bn(lw.bn_python(lw.ODE_STEPS), lw.ODE_N),
        "burnumba fori_loop": lambda: lw.make_bn(lw.bn_fori(lw.ODE_STEPS), lw.ODE_N),
        "burnumba fori_loop checkpoint=True":
            lambda: lw.make_bn(lw.bn_fori(lw.ODE_STEPS, True), lw.ODE_N),
        "jax.jit python loop": lambda: lw.make_jax(lw.ODE_STEPS, lw.ODE_N, "python"),
        "jax.jit fori_loop": lambda: lw.make_jax(lw.ODE_STEPS, lw.ODE_N, "fori"),
    }
    calls = {}
    for name, make in makers.items():
        if "jax" in name and not _has_jax():
            continue
        made = make()
        _check(name, made[1], want)
        calls[name] = made[0]
    # interleaved: each system timed in turn, ``rounds`` times, the best median kept
    rows = {name: None for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            t = timed(call, budget, repeats)
            if rows[name] is None or t[0] < rows[name][0]:
                rows[name] = t
    return rows


def overhead(budget):
    out = {}
    for steps in (20, 2000):
        call = lw.make_bn(lw.bn_fori(steps), 1)[0]
        out[steps] = timed(call, budget)[0]
    return (out[2000] - out[20]) / 1980, out


def _first_call(make):
    t = time.perf_counter()
    made = make()
    return time.perf_counter() - t, made


def _run_memory(call):
    """tracemalloc's peak over one call in a new thread (its run state is made there)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    worker = threading.Thread(target=call)
    worker.start()
    worker.join()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def long(steps_list, budget, unrolled_max, repeats):
    rows = []
    for steps in steps_list:
        want = None
        fori, fori_ck, python = lw.bn_fori(steps), lw.bn_fori(steps, True), lw.bn_python(steps)
        systems = [("burnumba fori_loop", lambda: lw.make_bn(fori, lw.LONG_N), fori),
                   ("burnumba fori_loop checkpoint=True",
                    lambda: lw.make_bn(fori_ck, lw.LONG_N), fori_ck)]
        if steps <= unrolled_max:
            systems.insert(0, ("burnumba python loop", lambda: lw.make_bn(python, lw.LONG_N),
                               python))
        if _has_jax():
            systems.append(("jax.jit fori_loop", lambda: lw.make_jax(steps, lw.LONG_N, "fori"),
                            None))
        for name, make, loss in systems:
            first, made = _first_call(make)
            if loss is not None:                  # the trace alone, on a new function
                y0, x = lw._state(lw.LONG_N)
                fresh = bn.grad(lambda *a: loss(*a))
                t = time.perf_counter()
                fresh.trace(y0, x)
                first = time.perf_counter() - t
            want = made[1] if want is None else want
            _check(f"{name} ({steps} steps)", made[1], want)
            per_call = timed(made[0], budget, repeats)[0]
            if name.startswith("burnumba"):
                tape = next(iter(made[2].tapes.values()))
                nodes, memory = len(tape), _run_memory(made[0])
            else:
                g, args = made[2], made[3]
                m = g.lower(*args).compile().memory_analysis()
                nodes = None
                memory = (m.temp_size_in_bytes + m.argument_size_in_bytes
                          + m.output_size_in_bytes)
            rows.append({"system": name, "steps": steps, "trace_s": first,
                         "nodes": nodes, "per_call_s": per_call, "memory_bytes": memory})
            print(f"  {steps:>6} {name:<36} trace {first * 1e3:9.1f} ms  "
                  f"{'' if nodes is None else nodes:>7} nodes  {per_call * 1e6:11.1f} us  "
                  f"{memory / 1e6:9.2f} MB", flush=True)
    return rows


def _has_jax():
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax_m, ax_t) = plt.subplots(1, 2, figsize=(10, 4))
    for name in dict.fromkeys(r["system"] for r in rows):
        pts = [r for r in rows if r["system"] == name]
        steps = [r["steps"] for r in pts]
        ax_m.plot(steps, [r["memory_bytes"] / 1e6 for r in pts], "o-", label=name)
        ax_t.plot(steps, [r["per_call_s"] * 1e3 for r in pts], "o-", label=name)
    for ax, label in ((ax_m, "peak memory of a run (MB)"), (ax_t, "time per gradient (ms)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("steps")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.legend(fontsize=8)
    fig.suptitle(f"Euler steps on a state of {lw.LONG_N}: gradient w.r.t. the initial state")
    fig.tight_layout()
    fig.savefig(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--json", help="write the JSON here (the SVG beside it), as the other "
                        "reports do for bench/report.py")
    args = parser.parse_args()
    if args.json:
        args.out = os.path.dirname(os.path.abspath(args.json))
    budget = 0.05 if args.quick else 0.2
    print(f"load {os.getloadavg()}, {platform.processor() or platform.machine()}")
    print(f"ode: {lw.ODE_STEPS} Euler steps on a state of {lw.ODE_N}, gradient")
    ode_rows = ode(budget, *((1, 5) if args.quick else (2, 7)))
    peer = ode_rows.get("jax.jit fori_loop")
    for name, (med, lo, hi) in ode_rows.items():
        ratio = f"{med / peer[0]:5.2f}x jax.jit fori_loop" if peer else ""
        print(f"  {name:<36} {med * 1e6:9.1f} us  ({lo * 1e6:.1f} .. {hi * 1e6:.1f})  {ratio}")
    per_step, ends = overhead(budget)
    print(f"overhead: bn.fori_loop's runner, per step, forward and reverse: "
          f"{per_step * 1e6:.2f} us (a call: {ends[20] * 1e6:.1f} us at 20 steps, "
          f"{ends[2000] * 1e6:.1f} us at 2000, state of 1)")
    steps_list = (10, 100, 1000) if args.quick else (10, 100, 1000, 10000)
    print(f"long: Euler steps on a state of {lw.LONG_N}")
    long_rows = long(steps_list, budget, unrolled_max=1000 if args.quick else 10000,
                     repeats=3 if args.quick else 7)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "loops.json"), "w") as fh:
        json.dump({"load": os.getloadavg(), "ode_us": {k: v[0] * 1e6 for k, v in
                                                       ode_rows.items()},
                   "overhead_us_per_step": per_step * 1e6, "long": long_rows}, fh, indent=1)
    plot(long_rows, os.path.join(args.out, "loops.svg"))
    print(f"wrote {args.out}/loops.json and loops.svg; load now {os.getloadavg()}")


if __name__ == "__main__":
    main()
