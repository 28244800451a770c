"""Time the functional transformations (hvp, Hessian, per-sample gradients, an njit handle) of
burnumba and its peers; print a table per case.

    .venv/bin/python bench/report_transforms.py                  # full run, about 3 minutes
    .venv/bin/python bench/report_transforms.py --quick          # smoke test: short repeats
    .venv/bin/python bench/report_transforms.py --markdown --json transforms.json
    .venv/bin/python bench/report_transforms.py --cases hvp-rosenbrock --systems burnumba,jax

Methodology
-----------
* What one call is, per (case, system), is defined in ``transform_workloads.py``: one
  evaluation of the transformation (an hvp, a full Hessian, the per-sample gradients of a
  batch, a value and gradient), until the result is available in the system's own types.
  Every system starts from the same float64 data (a seeded numpy Generator; nothing is read
  from disk) and computes the same numbers.
* Every (case, system) runs in a fresh process (this file with ``--child``), so peers never
  share a process: no system's threads, allocator or JIT state affects another's. With
  ``--quick`` (bench/report.py's short run) each system runs its cases one after another
  in one process of its own instead (``--process system``; ``--process case`` is the
  default otherwise): peers still never share a process, and the imports (jax's take 2 s)
  are paid once per system, not once per case. The child
  builds the call, makes the first call (which traces and compiles: burnumba's kernel if
  numba's cache is cold, jax.jit, torch.compile; its time is the "1st call s" column) and
  checks the result against a closed-form float64 numpy reference (``reference``), to
  max |r - ref| / max |ref| <= 1e-10, before anything is timed. A result outside that is
  still timed and marked WRONG.
* Then, as ``report_scalar.py``: warm-up calls (untimed), then repeats of one plain Python loop of N
  calls timed with ``time.perf_counter``; the figure is the median over the repeats of
  (loop time / N). N is chosen per system so that a repeat takes about 0.5 s (0.05 s with
  --quick), estimated from a short calibration loop, and is at most --calls. The garbage
  collector stays on.
* The njit handle is called from a ``@numba.njit`` loop of 10,000 calls; one Python call of
  that loop is one timed call, and the figure is divided by 10,000 (the Python call into
  numba is then ~0.02 ns of each figure).
* One thread per system: OMP / OpenBLAS / MKL / numba pinned to one thread through the
  environment before anything is imported, torch with ``torch.set_num_threads(1)`` (which
  torch.compile's generated C++ also uses) and XLA with
  ``--xla_cpu_multi_thread_eigen=false`` (bench/_single_thread.py), and each child process
  pinned to one CPU from its start (``_single_thread.one_core``: XLA still uses a pool of
  its own under that flag). The one exception is the row labelled "burnumba (2 threads)":
  ``bn.vmap(..., threads=2)``, not pinned, BLAS still on one thread per vmap thread. The
  machine has 2 cores, so that row needs an idle machine: the load average at the start and
  at the end is printed.
* "cpu/wall" is the process's CPU time over the wall time of the timed loops, all threads
  counted: about 1 for a system that computes on one thread; above 1 for one that uses more
  (jax's default asynchronous dispatch hands each call to a second thread, and XLA may run
  independent parts of a computation on a pool of its own, which no flag pins, hence the
  pinning); below 1 when the process waited for a core because another process was
  running, so that its figure is inflated by the wait. jax runs twice: with synchronous dispatch
  (``jax_cpu_enable_async_dispatch`` off; the main row) and with its default.
* The ratio is peer / burnumba (one thread), so > 1 means burnumba is faster. For the njit
  case the base is the njit handle; BurTorch's 42-155 ns is the paper's figure for its C++
  engine, cited and not measured here.
* A torch.compile child that has not finished within 150 s is reported as failed, with the
  reason; any child's error is reported, not fatal.
"""
import _single_thread  # noqa: I001  (first: pins every library to one thread)
import os

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import transform_workloads as tw  # noqa: E402
from _child import installed, print_table, run_child, short_error  # noqa: E402

TARGET_S = 0.5
QUICK_TARGET_S = 0.05
CHILD_TIMEOUT_S = 300
COMPILE_TIMEOUT_S = 150          # torch.compile children: compile, check and timing together
NJIT_TARGET_NS = 300
ALL_SYSTEMS = tuple(dict.fromkeys(s for _, systems, _ in tw.CASES.values() for s in systems))


# -- the child process -------------------------------------------------------------------------
def child(spec):
    """Build, check and time one (case, system), or with ``cases`` each of those cases of one
    system in turn; return the JSON-able result ({"cases": {case: result}} for several)."""
    from report_scalar import calls_within, time_per_call

    if "cases" in spec:
        out, one = {}, {k: v for k, v in spec.items() if k != "cases"}
        for case in spec["cases"]:
            t0 = time.perf_counter()
            try:
                r = dict(child(dict(one, case=case)), status="ok")
            except Exception as e:                  # this case only; the next one runs
                r = {"status": f"error: {short_error(e)}"}
            r["process_s"] = time.perf_counter() - t0   # this case's part of the process
            out[case] = r
        return {"cases": out}

    case, system = spec["case"], spec["system"]
    t0 = time.perf_counter()
    call, to_array, inner = tw.make(case, system)
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = to_array(call())
    first_call_s = time.perf_counter() - t0
    err = tw.rel_err(first, tw.reference(case))
    tw.warm_up(call, budget_s=4 * spec["target_s"])     # 2 s; 0.2 s with --quick
    n = calls_within(call, spec["max_calls"], spec["target_s"])
    gc.collect()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    median, each = time_per_call(call, n, spec["repeats"])
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    threads = {"vmap threads": tw.THREADS.get(system, 1)}
    if "torch" in sys.modules:
        threads["torch threads"] = sys.modules["torch"].get_num_threads()
    return {"calls": n, "inner": inner, "repeats": spec["repeats"],
            "us_per_call": median / inner * 1e6,
            "repeat_us_per_call": [t / inner * 1e6 for t in each],
            "setup_s": setup_s, "first_call_s": first_call_s, "rel_err": err,
            "correct": err <= tw.RTOL, "abs_sum": float(np.sum(np.abs(first))),
            "size": int(first.size), "cpu_per_wall": cpu / wall,
            "threads": tw.THREADS.get(system, 1), **threads}


# -- machine -----------------------------------------------------------------------------------
def machine_info():
    from report_scalar import _version
    from report_scalar import machine_info as scalar_info
    info = scalar_info()
    info.pop("micrograd", None)
    for m in ("jax", "jaxlib", "torch", "autograd"):
        info[m] = _version(m)
    info.update({k: os.environ.get(k, "(unset)") for k in
                 ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                  "NUMBA_NUM_THREADS", "XLA_FLAGS")})
    return info


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- printing ----------------------------------------------------------------------------------
def head(unit):
    return ("system", "threads", "calls/repeat", f"{unit}/call", "repeats min-max",
            "x slower than burnumba", "cpu/wall", "1st call s", "sum |result|",
            "rel err vs numpy", "check")


LEFT = (0, 10)


def rows(results, base, unit):
    scale = 1e3 if unit == "ns" else 1.0
    b = results.get(base, {}).get("us_per_call")
    for system, r in results.items():
        label = tw.LABELS[system]
        if r["status"] != "ok":
            yield (label, r["status"]) + ("",) * 9
            continue
        ratio = "(base)" if system == base else (f"{r['us_per_call'] / b:.2f}" if b else "n/a")
        lo, hi = min(r["repeat_us_per_call"]), max(r["repeat_us_per_call"])
        calls = f"{r['calls']} x {r['repeats']}" if r["inner"] == 1 else \
            f"{r['calls']}x{r['inner']} x {r['repeats']}"
        yield (label, str(r["threads"]), calls, f"{r['us_per_call'] * scale:,.1f}",
               f"{lo * scale:,.1f}-{hi * scale:,.1f}", ratio, f"{r['cpu_per_wall']:.2f}",
               f"{r['first_call_s']:.2f}",
               f"{r['abs_sum']:.12g}", f"{r['rel_err']:.1e}", "ok" if r["correct"] else "WRONG")


def _brief(r):
    if r["status"] != "ok":
        return r["status"][:100]
    return (f"{r['us_per_call']:,.3f} us/call, 1st call {r['first_call_s']:.2f} s, "
            f"rel err {r['rel_err']:.1e}, process {r['process_s']:.1f} s")


# -- main --------------------------------------------------------------------------------------
def _run(system, spec, n_cases):
    """One child process for ``spec`` (one case, or ``cases``) of ``system``."""
    timeout = (COMPILE_TIMEOUT_S if system == "torch-compile" else CHILD_TIMEOUT_S) * n_cases
    one = tw.THREADS.get(system, 1) == 1
    r = run_child(os.path.abspath(__file__), dict(spec, system=system), timeout,
                  cpus=_single_thread.one_core() if one else None)
    if r.get("timed_out"):
        r["status"] = (f"error: {tw.LABELS[system]} did not finish within {timeout} s "
                       "(first call = compile, check and timing together)")
    return r


def measure_all(cases, systems, process, spec):
    """{case: {system: result}}: one process per (case, system), or per system for all its
    cases (``process`` "system")."""
    wanted = {case: [s for s in tw.CASES[case][1] if s in systems] for case in cases}
    out = {case: {} for case in cases}
    for case in cases:
        for system in wanted[case]:
            if not installed(tw.MODULES[system]):
                out[case][system] = {"status": "not installed"}
    if process == "system":
        for system in dict.fromkeys(s for c in cases for s in wanted[c]):
            mine = [c for c in cases if system in wanted[c] and system not in out[c]]
            if not mine:
                continue
            r = _run(system, dict(spec, cases=mine), len(mine))
            for case in mine:
                one = r["cases"][case] if r["status"] == "ok" else r
                out[case][system] = one
                print(f"  . {case} {system}: {_brief(one)}", file=sys.stderr, flush=True)
    else:
        for case in cases:
            for system in wanted[case]:
                if system not in out[case]:
                    out[case][system] = r = _run(system, dict(spec, case=case), 1)
                    print(f"  . {case} {system}: {_brief(r)}", file=sys.stderr, flush=True)
    # each case's systems in the order of its table
    return {case: {s: out[case][s] for s in wanted[case]} for case in cases}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=100_000,
                   help="upper bound on calls per repeat (default 100000)")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 5; 3 with --quick)")
    p.add_argument("--quick", action="store_true", help="a smoke test: short repeats")
    p.add_argument("--cases", default=",".join(tw.CASES),
                   help=f"comma-separated subset of {','.join(tw.CASES)}")
    p.add_argument("--systems", default=",".join(ALL_SYSTEMS),
                   help=f"comma-separated subset of {','.join(ALL_SYSTEMS)}")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.add_argument("--process", choices=("case", "system"), default=None,
                   help="a fresh process per (case, system) (default), or per system for all "
                        "its cases (default with --quick)")
    p.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return None

    def listed(text, allowed, what):
        items = [s.strip() for s in text.split(",") if s.strip()]
        bad = [s for s in items if s not in allowed]
        if bad:
            p.error(f"unknown {what} {bad}; choose from {list(allowed)}")
        return items

    cases = listed(args.cases, tw.CASES, "case(s)")
    systems = listed(args.systems, ALL_SYSTEMS, "system(s)")
    repeats = args.repeats or (3 if args.quick else 5)
    target_s = QUICK_TARGET_S if args.quick else TARGET_S
    process = args.process or ("system" if args.quick else "case")

    t_start = time.perf_counter()
    info = machine_info()
    h = "### " if args.markdown else ""
    li = "- " if args.markdown else "  "
    print(f"{h}Machine and versions")
    for k, v in info.items():
        print(f"{li}{k}: {v}")
    where = ("each (case, system) in a fresh process" if process == "case" else
             "each system in a fresh process of its own, its cases one after another")
    print(f"{li}method: {where}; result checked against a "
          f"closed-form numpy float64 reference (rel. {tw.RTOL:g}) before timing; median of "
          f"{repeats} repeats of a loop of N calls, N per system so that a repeat takes "
          f"~{target_s} s (at most {args.calls}); one thread per system except the row "
          "labelled 2 threads")

    report = {"machine": info, "repeats": repeats, "target_s": target_s,
              "process": process, "cases": {}}
    measured = measure_all(cases, systems, process, {"repeats": repeats,
                                                     "target_s": target_s,
                                                     "max_calls": args.calls})
    for case in cases:
        description, case_systems, base = tw.CASES[case]
        results = measured[case]

        unit = "ns" if case == "njit-tiny" else "us"
        ref = tw.reference(case)
        print(f"\n{h}{case}: {description}, float64")
        print(f"numpy reference: {ref.size} numbers, sum |result| = "
              f"{float(np.sum(np.abs(ref))):.12g}; rel err = max |r - ref| / max |ref|")
        if case == "njit-tiny":
            print(f"one call = value = h(a, b, grad), h = bn.njit_value_and_grad(tiny, 1.0, 2.0, "
                  f"argnums=(0, 1)), from a @numba.njit loop of {tw.NJIT_INNER:,} calls")
        print()
        table = list(rows(results, base, unit))
        if case == "njit-tiny":
            lo, hi = tw.BURTORCH_PAPER_NS
            table.append(("BurTorch C++ (the paper's figure, not measured here)", "1", "-",
                          f"{lo}-{hi}", "-", "-", "-", "-", "-", "-", "cited"))
        print_table(head(unit), table, args.markdown, LEFT, lead=1)
        entry = {"description": description, "base": base, "unit": unit,
                 "reference_abs_sum": float(np.sum(np.abs(ref))),
                 "systems": {tw.LABELS[s]: {"system": s, **r} for s, r in results.items()}}
        if case == "njit-tiny":
            r = results.get("burnumba-njit", {})
            ns = r["us_per_call"] * 1e3 if r.get("status") == "ok" else None
            verdict = "n/a" if ns is None else ("met" if ns <= NJIT_TARGET_NS else "missed")
            print(f"\ntarget: njit handle <= {NJIT_TARGET_NS} ns per call: {verdict}"
                  + ("" if ns is None else f" ({ns:.1f} ns)")
                  + f"; BurTorch's C++ takes {lo}-{hi} ns (the paper's figure)")
            entry["target_ns"] = NJIT_TARGET_NS
            entry["target_met"] = None if ns is None else ns <= NJIT_TARGET_NS
            entry["burtorch_paper_ns"] = list(tw.BURTORCH_PAPER_NS)
        failed = [(s, r) for s, r in results.items() if r.get("stderr")]
        for s, r in failed[:2]:
            print(f"\n{tw.LABELS[s]} failed; its stderr ends with:\n```\n"
                  f"{r['stderr'][-1200:]}\n```")
        report["cases"][case] = entry

    report["load_average_end"] = load_average()
    report["wall_s"] = time.perf_counter() - t_start
    print(f"\n{li}load average (1, 5, 15 min) at the end: {report['load_average_end']}; "
          f"whole run {report['wall_s']:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
        print(f"\nwrote {args.json}")
    return report


if __name__ == "__main__":
    main()
