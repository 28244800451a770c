"""The main benchmark command: a representative part of the reports, one line per stage.

    .venv/bin/python bench/report.py            # a short part of 12 reports (about 2.5 min)
    .venv/bin/python bench/report.py --full     # all 17 reports in full (tens of minutes)
    .venv/bin/python bench/report.py --only scalar,tensor --out /tmp/run

Each stage runs one report (``bench/report_*.py``) in a process of its own, with the
arguments below, and writes its Markdown tables, its JSON and its printed output into the
output folder (default ``docs/benchmarks/data``, which the docs' benchmark page is built
from). ``run.json`` there records the date, the machine, the command and each stage's wall
time and exit status; ``headline.svg`` plots the headline ratios (median and range of the
repeats), and the README's table of them is rewritten from this run (bench/_headline.py).
Before the first stage, the kernels the short run uses (``bench/kernels.json``) that the
cache lacks are built on every core at once (``bench/_kernels.py``); on a warm cache that
takes a second. A stage that fails is reported on its line and does not stop the others. A
peer that is not installed (torch, jax, micrograd, autograd) is named at the start and
skipped by every report, which prints it as "not installed".
"""
import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "docs", "benchmarks", "data")
PEERS = ("micrograd", "autograd", "jax", "torch", "casadi")

# name: (report file, arguments of the short run (None: --full only), arguments of the full
# run, what it measures)
STAGES = {
    # the short run's cold starts: the tiny graph's first gradient (this report) and the GPT
    # training step's first result (report_train), each on an empty kernel cache and then on
    # the filled one. The tensor report's first results (cold: the MLP's kernels on an empty
    # cache, 13 s on the AMD VM) run with --full only
    "scalar": ("report_scalar.py", ["--calls", "20000", "--repeats", "3", "--target-s", "0.15"],
               [], "the paper's scalar graphs, per call; cold and warm start-up"),
    # the short run without the first-result processes (5 s; the README's start-up figures
    # are scalar's and train's)
    "tensor": ("report_tensor.py", ["--quick", "--repeats", "3", "--batches", "64",
                                   "--skip-first"],
               ["--dtype", "both"], "an MLP and a GPT block, value and gradient"),
    "transforms": ("report_transforms.py", ["--quick", "--repeats", "3"], [],
                   "hvp, Hessian, per-sample gradients, the njit handle"),
    "train": ("report_train.py", ["--quick", "--no-curve", "--dtype", "float32", "--cases",
                                  "gpt-b8,makemore-b64", "--embedded"], [],
              "training steps of the paper's GPT and makemore MLP"),
    "interp": ("report_interp.py", ["--ops", "6000", "--repeats", "3", "--seconds", "0.2"], [],
               "random scalar graphs against a C switch interpreter"),
    "tapefile": ("report_tapefile.py", ["--n", "500", "--repeats", "5"], [],
                 "saving and loading tapes"),
    "distributed": ("report_distributed.py", ["--quick"], ["--model", "makemore"],
                    "data-parallel gradients on a 2-worker Dask cluster"),
    # float64 only in the short run: its float32 GPT block would be the only user of the
    # float32 kernel's GPT rows (layer_norm, gelu_tanh, softmax, ...) in the default cache:
    # the prebuild on an empty cache took 36.8-37.0 s with them, 32.9-34.9 s without
    # (2026-12-07, two runs each, alternating)
    "threads": ("report_threads.py", ["--seconds", "0.3", "--dtypes", "float64"], [],
                "one function called from 1 and 2 threads"),
    "control_flow": ("report_control_flow.py", ["--quick"], [],
                     "programs as written: branches, a Newton loop, Adam passing i, VI draws"),
    "sparse": ("report_sparse.py", ["--quick"], [],
               "sparse Hessians and Jacobians against dense ones and CasADi; a solve"),
    "loops": ("report_loops.py", ["--quick"], [],
              "bn.fori_loop against the unrolled loop and jax.jit: time, trace, memory"),
    "jacobians": ("report_jacobians.py", ["--items", "2000", "--repeats", "5"], [],
                  "per-item Jacobians of a reprojection residual: jax.jit, hand C++ Jets"),
    # --full only, as the three below (or --only trace,guards,random,custom): issue #32's
    # targets 5 and 6, about a minute. With their short parts (trace with 3 repeats and one
    # LSTM process, guards --quick --cases-only, random --quick, custom --quick: 8 s
    # together) the main command took 178-192 s in five fresh clones (2026-12-07 22:55-23:14
    # UTC), against 172-179 s without them
    "trace": ("report_trace.py", None, [],
              "tracing us/node, recreated vs reused closures, an LSTM's first call"),
    # --full only: about 2 minutes of fresh processes; the short run's scalar and train
    # stages measure its figures for the README (cold and warm first results, peak RSS)
    "startup": ("report_startup.py", None, [],
                "cold and warm first gradients and training steps, peak memory"),
    # what burnumba's own machinery costs (A/B tables of best-of-7 loops), printed only (no
    # --json)
    "guards": ("report_guards.py", None, [],
               "what guards cost a replay; an Adam loop passing i against autograd and jax"),
    "random": ("report_random.py", None, [], "what random draws cost, and a VI step"),
    "custom": ("report_custom.py", None, [], "what a custom derivative rule costs"),
}
PRINTED_ONLY = {"guards", "random", "custom"}
MARKDOWN_FLAG = {"scalar": ["--markdown"], "tensor": ["--markdown"],
                 "transforms": ["--markdown"], "interp": ["--markdown"],
                 "tapefile": ["--markdown"], "distributed": ["--markdown", "{out}/distributed.md"],
                 "trace": ["--markdown"]}


def peers():
    """{peer: version or None} without importing them."""
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for name in PEERS:
        try:
            out[name] = version(name) if importlib.util.find_spec(name) else None
        except PackageNotFoundError:
            out[name] = None
    return out


def machine():
    sys.path.insert(0, HERE)
    from report_scalar import machine_info
    return machine_info()


def run_stage(name, full, out):
    script, short, long_args, _ = STAGES[name]
    args = long_args if full or short is None else short
    cmd = [sys.executable, os.path.join(HERE, script), *args]
    if name not in PRINTED_ONLY:
        cmd += ["--json", os.path.join(out, f"{name}.json")]
    cmd += [a.format(out=out) for a in MARKDOWN_FLAG.get(name, [])]
    t0 = time.perf_counter()
    with open(os.path.join(out, f"{name}.out"), "w") as log:
        done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    return {"command": " ".join(["python", f"bench/{script}", *args]),
            "seconds": round(time.perf_counter() - t0, 1), "returncode": done.returncode}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="every report in full")
    p.add_argument("--only", help=f"comma-separated stages, of {','.join(STAGES)}")
    p.add_argument("--out", default=OUT, help="output folder (default docs/benchmarks/data)")
    p.add_argument("--no-prebuild", action="store_true",
                   help="do not build bench/kernels.json's kernels before the stages")
    args = p.parse_args(argv)
    stages = [s.strip() for s in args.only.split(",")] if args.only else [
        name for name, stage in STAGES.items() if args.full or stage[1] is not None]
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        p.error(f"unknown stages {unknown}; choose from {list(STAGES)}")
    os.makedirs(args.out, exist_ok=True)
    for name in STAGES:                      # one run per folder: no stale stage of another
        for ext in ("json", "out", "md"):
            if name not in stages and os.path.exists(os.path.join(args.out, f"{name}.{ext}")):
                os.unlink(os.path.join(args.out, f"{name}.{ext}"))

    found = peers()
    missing = [k for k, v in found.items() if v is None]
    print("peers: " + ", ".join(f"{k} {v}" for k, v in found.items() if v)
          + (f"; not installed, skipped: {', '.join(missing)}" if missing else ""), flush=True)
    run = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "command": "python bench/report.py" + (" --full" if args.full else ""),
           "machine": machine(), "peers": found, "stages": {}}
    t0 = time.perf_counter()
    if not args.no_prebuild:
        # the kernels the short run's stages use (bench/kernels.json), on every core at once,
        # so no stage waits on a compile of one core (nothing to do on a warm cache)
        print("[0] kernels      the short run's kernels, built on every core at once ...",
              end=" ", flush=True)
        import _kernels
        t1 = time.perf_counter()
        built = _kernels.prebuild()
        run["prebuild"] = {"kernels": built, "seconds": round(time.perf_counter() - t1, 1)}
        print(f"{run['prebuild']['seconds']:.0f} s ({built} built)", flush=True)
    for k, name in enumerate(stages, 1):
        print(f"[{k}/{len(stages)}] {name:<12} {STAGES[name][3]} ...", end=" ", flush=True)
        r = run_stage(name, args.full, args.out)
        run["stages"][name] = r
        status = "ok" if r["returncode"] == 0 else f"FAILED (exit {r['returncode']}; see " \
            f"{os.path.join(args.out, name + '.out')})"
        print(f"{r['seconds']:.0f} s {status}", flush=True)
    run["seconds"] = round(time.perf_counter() - t0, 1)
    with open(os.path.join(args.out, "run.json"), "w") as fh:
        json.dump(run, fh, indent=1, default=str)
    import _headline
    try:
        _headline.plot(args.out)
    except ImportError as e:                 # matplotlib missing: tables only
        print(f"no plot ({e})")
    if os.path.abspath(args.out) == os.path.abspath(OUT):
        _headline.write()                    # the README's table is this run's
    print(f"done in {run['seconds']:.0f} s; tables and plots in {args.out}")
    return 0 if all(r["returncode"] == 0 for r in run["stages"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
