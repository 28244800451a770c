"""Time burnumba and its peers on the BurTorch paper's scalar graphs; print a table per workload.

    .venv/bin/python bench/report_scalar.py  # full run
    .venv/bin/python bench/report_scalar.py  --quick  # smoke test: few calls, one short repeat
    .venv/bin/python bench/report_scalar.py  --markdown --json results.json
    .venv/bin/python bench/report_scalar.py  --systems burnumba,micrograd

Methodology
-----------
* What one call is, per system, is defined in ``workloads.py``: one value-and-gradient
  evaluation at a fixed point, until the result is available in the system's own types.
* Each system is first warmed up (``warm_up``: numba / jax compile, caches filled), untimed.
* A repeat is one plain Python loop of N calls timed with ``time.perf_counter``; the figure
  reported is the median over the repeats of (loop time / N). The loop costs ~20-30 ns per
  iteration on top of the call, for every system alike. The garbage collector stays on, as
  in a user's program (micrograd's graphs hold reference cycles, so collection is part of
  its cost).
* N is ``--calls`` (default 100,000, the paper's count) for burnumba. A peer gets the same N
  unless a repeat would then take longer than ~0.5 s: then N is cut so that it takes ~0.5 s
  (estimated from a short calibration loop). Times are per call either way.
* Cold compile: a subprocess with a fresh, empty kernel cache (BURNUMBA_CACHE_DIR, and
  NUMBA_CACHE_DIR) times ``import burnumba`` and the first value_and_grad of the tiny graph,
  which compiles the kernel of its ops. Warm first call: the same in a second subprocess
  reusing that now-filled cache directory; it loads the kernel without importing numba.
  Both exclude the interpreter's own start-up; the parent also reports each process's wall
  time, which includes it.
* One thread per system, on one core: the libraries are pinned to one thread through the
  environment (bench/_single_thread.py, imported first), and this process pins itself to
  one CPU before any system is imported (jax's dispatch and XLA's pool included); the
  start-up processes are not pinned.
"""
import _single_thread  # noqa: I001  (first: pins every library to one thread)
import argparse
import gc
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _child import time_per_call  # noqa: E402
from workloads import MODULES, SYSTEMS, WORKLOADS, burnumba_tape, make, warm_up  # noqa: E402

TARGET_S = 0.5          # a peer's repeat is cut to about this long
QUICK_TARGET_S = 0.05


def calls_within(call, calls, target_s):
    """The largest N <= calls whose loop should take about target_s or less (at least 1: a
    call that alone takes longer than target_s is timed one at a time, and estimated by one
    call, as a micrograd MLP step of 0.8 s is)."""
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min(0.1, target_s / 5) or n < 3:
        call()
        n += 1
        if time.perf_counter() - t0 > target_s:
            break
    est = (time.perf_counter() - t0) / n
    return max(1, min(calls, math.floor(target_s / est)))


def measure(system, workload, calls, repeats, target_s):
    """One table row: timings and the numbers the system computed."""
    call, to_floats = make(system, workload)
    value, da, db = to_floats(warm_up(call))
    n = calls if system == "burnumba" else calls_within(call, calls, target_s)
    gc.collect()
    median, each = time_per_call(call, n, repeats)
    expected = WORKLOADS[workload][2]
    ok = all(math.isclose(x, e, rel_tol=1e-10) for x, e in zip((value, da, db), expected))
    return {"status": "ok", "calls": n, "repeats": repeats, "ns_per_call": median * 1e9,
            "repeat_ns_per_call": [t * 1e9 for t in each], "value": value, "da": da, "db": db,
            "correct": ok}


# -- compile time, in fresh processes ----------------------------------------------------
CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
from workloads import make
t0 = time.perf_counter()
import burnumba
t1 = time.perf_counter()
call, to_floats = make("burnumba", "tiny-graph")
result = to_floats(call())
t2 = time.perf_counter()
# a warm process loads the compiled kernel with ctypes and never imports numba
numba_loaded = "numba" in sys.modules
print(json.dumps({{"import_s": t1 - t0, "first_call_s": t2 - t1, "total_s": t2 - t0,
                   "result": result, "numba_imported": numba_loaded}}))
"""


def compile_times():
    """Cold (an empty kernel cache) and warm (the same cache, now filled) first-call times."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="burnumba-bench-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, BURNUMBA_CACHE_DIR=cache)
        for name in ("cold", "warm"):
            t0 = time.perf_counter()
            with _single_thread.pinned(_single_thread.CPUS):
                proc = subprocess.run([sys.executable, "-c", CHILD.format(here=HERE)],
                                      env=env, capture_output=True, text=True)
            if proc.returncode:
                raise RuntimeError(f"the {name} start-up process failed:\n{proc.stderr}")
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            r["process_s"] = time.perf_counter() - t0
            out[name] = r
    return out


# -- machine and versions ---------------------------------------------------------------
def _version(module):
    try:
        return importlib.metadata.version(module)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        git = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--",
                                "../burnumba", "../kernels"],
                               capture_output=True, text=True).stdout.strip()
        git = (git + ("+uncommitted changes" if dirty else "")) or "?"
    except OSError:
        git = "?"
    info = {
        "python": platform.python_version(),
        "numba": _version("numba"),
        "numpy": _version("numpy"),
        "llvmlite": _version("llvmlite"),
        "burnumba": f"{_version('burnumba')} (git {git})",
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "load average (1, 5, 15 min) at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    from burnumba.kernels import engine
    info["burnumba's BLAS, float64"] = engine.blas("float64").what
    info["burnumba's BLAS, float32"] = engine.blas("float32").what
    info[f"burnumba's BLAS, float32, programs with a product of >= {engine.LARGE_PRODUCT:,} "
         "multiply-adds"] = engine.blas("float32", True).what
    for peer in SYSTEMS[1:]:
        info[peer] = _version(MODULES[peer])
    return info


# -- printing ---------------------------------------------------------------------------
HEAD = ("system", "calls/repeat", "ns/call", "x slower than burnumba", "value", "dg/da", "dg/db",
        "check")


def rows(results):
    base = results.get("burnumba", {}).get("ns_per_call")
    for system, r in results.items():
        if r["status"] != "ok":
            yield (system, r["status"]) + ("",) * (len(HEAD) - 2)
            continue
        ratio = f"{r['ns_per_call'] / base:.2f}" if base else "n/a"
        yield (system, f"{r['calls']} x {r['repeats']}", f"{r['ns_per_call']:,.0f}", ratio,
               repr(r["value"]), repr(r["da"]), repr(r["db"]),
               "ok" if r["correct"] else "WRONG")


def print_table(table, markdown):
    if markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "|".join("---" if i in (0, 7) else "---:" for i in range(len(HEAD))) + "|")
        for row in table:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(HEAD, *table)]
    for row in (HEAD, *table):
        print("  ".join(str(x).ljust(w) if i in (0, 7) else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(row, widths))).rstrip())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=None,
                   help="calls per repeat for burnumba, and at most that for the peers "
                        "(default 100000; 2000 with --quick)")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 5; 3 with --quick)")
    p.add_argument("--quick", action="store_true", help="a smoke test: few, short repeats")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help=f"comma-separated subset of {','.join(SYSTEMS)}")
    p.add_argument("--target-s", type=float, default=None,
                   help=f"a peer's repeat is cut to about this long (default {TARGET_S}; "
                        f"{QUICK_TARGET_S} with --quick)")
    p.add_argument("--skip-compile", action="store_true",
                   help="do not measure cold / warm compile times")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = p.parse_args(argv)

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system(s) {unknown}; choose from {list(SYSTEMS)}")
    _single_thread.pin(_single_thread.one_core())
    calls = args.calls or (2000 if args.quick else 100_000)
    repeats = args.repeats or (3 if args.quick else 5)
    target_s = args.target_s or (QUICK_TARGET_S if args.quick else TARGET_S)

    info = machine_info()
    h = "### " if args.markdown else ""
    print(f"{h}Machine and versions")
    for k, v in info.items():
        print(f"{'- ' if args.markdown else '  '}{k}: {v}")
    print(f"{'- ' if args.markdown else '  '}method: median of {repeats} repeats of a loop of "
          f"N calls (N = {calls} for burnumba; peers cut to ~{target_s} s per repeat)")

    report = {"machine": info, "calls": calls, "repeats": repeats, "workloads": {}}
    for workload, (_, point, expected) in WORKLOADS.items():
        results = {}
        for system in systems:
            try:
                results[system] = measure(system, workload, calls, repeats, target_s)
            except ImportError:
                if system == "burnumba":
                    raise
                results[system] = {"status": "not installed"}
            except Exception as e:              # a broken peer is reported, not fatal
                if system == "burnumba":
                    raise
                results[system] = {"status": f"error: {type(e).__name__}: {e}"[:120]}
        entry = {"point": point, "expected": expected, "systems": results}
        print(f"\n{h}{workload} at (a, b) = {point}; expected (g, dg/da, dg/db) = {expected}")
        if "burnumba" in systems:
            tape = burnumba_tape(workload)
            entry["tape"] = {"nodes": tape.n, "bytes": tape.nbytes,
                             "bytes_per_node": tape.nbytes / tape.n}
            print(f"burnumba tape: {tape.n} nodes, {tape.nbytes} bytes, "
                  f"{tape.nbytes / tape.n:.1f} bytes/node\n")
        print_table(list(rows(results)), args.markdown)
        report["workloads"][workload] = entry

    if "burnumba" in systems and not args.skip_compile:
        ct = compile_times()
        report["compile"] = ct
        print(f"\n{h}burnumba start-up (import + first value_and_grad of the tiny graph, "
              "in a fresh process)")
        for name, what in (("cold", "cold compile, empty kernel cache"),
                           ("warm", "warm first call, same cache dir, now filled")):
            r = ct[name]
            print(f"{'- ' if args.markdown else '  '}{what}: {r['total_s']:.2f} s "
                  f"(import {r['import_s']:.2f} s + first call {r['first_call_s']:.2f} s; "
                  f"whole process {r['process_s']:.2f} s; numba imported here: "
                  f"{'yes' if r['numba_imported'] else 'no'})")

    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
        print(f"\nwrote {args.json}")
    return report


if __name__ == "__main__":
    main()
