"""Time burnumba and its peers on tensor workloads (an MLP, a GPT block); print a table each.

    .venv/bin/python bench/report_tensor.py                 # full run, float64
    .venv/bin/python bench/report_tensor.py --quick         # smoke test: short repeats
    .venv/bin/python bench/report_tensor.py --dtype both --markdown --json tensor.json
    .venv/bin/python bench/report_tensor.py --systems burnumba,torch,torch.compile
    .venv/bin/python bench/report_tensor.py --skip-first     # steady state only

Methodology (as ``report_scalar.py``)
-------------------------------------
* What one call is, per system, is defined in ``tensor_workloads.py``: one evaluation of the
  loss and its gradient with respect to every parameter, until the result is available in the
  system's own types. All systems start from the same float64 parameters and data (drawn once
  in numpy, seeded) and compute the same function, so their loss values agree; the table
  prints them, with the sum of |grad| over all parameters, so that agreement is visible.
* Each system is first warmed up (numba / jax compile, caches filled), untimed.
* A repeat is one plain Python loop of N calls timed with ``time.perf_counter``; the figure is
  the median over the repeats of (loop time / N). The garbage collector stays on.
* N is chosen per system so that one repeat takes about 0.5 s (0.05 s with --quick),
  estimated from a short calibration loop, and is at most --calls. The per-call times here
  range from ~100 us to ~1 s, so unlike ``report_scalar.py`` burnumba gets no fixed N either.
* Single-threaded: this file pins OMP / OpenBLAS / MKL / numba to one thread through the
  environment before anything is imported, torch with ``torch.set_num_threads(1)`` and XLA with
  ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false``; and since XLA still computes a large
  product on two cores with that flag, the process pins itself to one CPU before any
  system is imported (``_single_thread.one_core``; the first-result processes are not
  pinned). So every system runs on one core (the benchmark VM has 2). Set BENCH_THREADS=0 to
  keep the defaults.
* Checks (not timing): each loss against a numpy float64 forward pass (``reference_loss``;
  tolerance 1e-8 x the sum of the absolute loss terms in float64, 1e-4 x in float32), and each
  gradient against a reference system's float64 gradient (autograd if installed, else jax,
  else torch): max |g - g_ref| / max |g_ref| over all parameters, within 1e-9 (float64) or
  1e-3 (float32). The reference gradient is itself checked against a central finite
  difference of the numpy loss along a random direction.
* A system whose float32 request comes back in another dtype is reported as unsupported.
* torch.compile is ``tensor_workloads.make_torch_compile``: default mode, inductor, CPU, one
  thread, compiling ``torch.func.grad_and_value`` of the loss as one graph (the fastest of the
  ways tried; the alternatives and their times are in tensor_workloads.py). Its steady state
  is measured like every system's, after the warm-up compiled it (in this process, with
  inductor's default cache folder). Inductor's own defaults are kept, including its
  parallel compile: C++ kernels compile in ``compile_threads`` worker processes (2 on the
  2-core benchmark VM; printed with the machine), while the calls run on one thread.

Time to first result (``--skip-first`` leaves it out)
-----------------------------------------------------
* For every system and case that ran, fresh processes (this file with ``--child``) import
  the system's library (timed: "import s"), then time building the case (``make_case``:
  parameters and data converted, model and wrappers made; milliseconds) plus the first
  call, until its result is available as in the timed calls: "1st result s". That includes
  what the system compiles on its first call: jax.jit's tracing and XLA compile,
  torch.compile's Dynamo trace, AOTAutograd and inductor (and the import of
  ``torch._dynamo`` / ``torch._inductor``, which torch loads on first use), burnumba's
  tracing and kernel compile. For torch eager, autograd and micrograd it is just the first
  call. Python's own start-up is excluded.
* burnumba and torch.compile keep compiled code on disk (``_caches.py``), so they get two
  figures: cold, with an empty cache folder (``NUMBA_CACHE_DIR`` and ``BURNUMBA_CACHE_DIR``
  for burnumba, ``TORCHINDUCTOR_CACHE_DIR`` for torch.compile, all pointed at a new
  temporary folder), and warm, a second fresh process reusing that folder. The order per
  case is: cold process, then this process's steady-state measurement (torch.compile
  compiles into the same folder, so it loads the cold process's work), then the warm
  process. ``--cold each`` (the default) gives every case its own empty folder; ``--cold
  once`` (the default with --quick) only the first case of each dtype: the other cases show
  "—" for cold, and their warm process runs on the default cache folders, which this
  process's warm-up has just filled for that case. The other systems have no disk cache:
  every process is cold; their one process runs after the steady state and its figure is in
  the cold column. ``cache_mb`` (JSON) is what the cold process wrote, and the children
  report numba's or inductor's cache hits and misses, to show that a warm start compiled
  nothing.
* The first result's loss is checked against the numpy reference like the steady state's.
"""
import _single_thread  # noqa: I001  (first: pins every library to one thread)
import os

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
from _caches import (POLICIES, CacheDirs, compile_stats, folder_mb, has_disk_cache,  # noqa: E402
                     inductor_cache_dir)
from report_scalar import _version, calls_within, machine_info, time_per_call  # noqa: E402
from tensor_workloads import (BATCHES, DTYPES, MODULES, SYSTEMS, WORKLOADS,  # noqa: E402
                              Unsupported, data_for, loss_tolerance, make_case, params_for,
                              reference_loss, warm_up)
import tensor_workloads as tw  # noqa: E402
import _child  # noqa: E402
from _child import installed, run_child, short_error  # noqa: E402

TARGET_S = 0.5
QUICK_TARGET_S = 0.05
GRAD_TOL = {"float64": 1e-9, "float32": 1e-3}
GRAD_REF_SYSTEMS = ("autograd", "jax", "torch")


def reference_grads(workload, batch):
    """(system, float64 grads dict) from the first reference system that works, or (None, None)."""
    for system in GRAD_REF_SYSTEMS:
        try:
            call, _, to_grads, _ = make_case(system, workload, batch, "float64")
            return system, to_grads(call())
        except Exception:               # not installed, or broken: try the next one
            continue
    return None, None


def finite_difference_check(workload, batch, grads, h=1e-6):
    """|<g, v> - (L(p + hv) - L(p - hv)) / 2h| / |that|, v a random unit-variance direction."""
    p, data = params_for(workload), data_for(workload, batch)
    rng = np.random.default_rng(123)
    v = {k: rng.normal(size=a.shape) for k, a in p.items()}
    loss = tw.LOSSES[workload]
    extra = (tw.causal_mask(),) if workload == "gpt-block" else ()

    def at(s):
        return loss({k: p[k] + s * v[k] for k in p}, *data, tw.NUMPY_OPS, *extra)

    fd = (at(h) - at(-h)) / (2 * h)
    dot = sum(float(np.sum(grads[k] * v[k])) for k in p)
    return abs(dot - fd) / max(abs(fd), 1e-12)


def grad_error(grads, ref):
    scale = max(float(np.max(np.abs(g))) for g in ref.values())
    return max(float(np.max(np.abs(grads[k] - ref[k]))) for k in ref) / max(scale, 1e-300)


def measure(system, workload, batch, dtype, max_calls, repeats, target_s, ref_loss, ref_grads):
    """One table row."""
    try:
        call, to_summary, to_grads, grad_dtype = make_case(system, workload, batch, dtype)
    except ImportError:
        return {"status": "not installed"}
    except Unsupported as e:
        return {"status": f"unsupported ({e})"}
    try:
        # micrograd and autograd compile and cache nothing: their warm-up is one call
        result = warm_up(call, n=1 if system in ("micrograd", "autograd") else 20,
                         budget_s=4 * target_s)         # 2 s; 0.2 s with --quick
        got = grad_dtype(result)
        if got != dtype:
            return {"status": f"unsupported (asked for {dtype}, returned {got} gradients)"}
        loss, checksum = to_summary(result)
        grads = to_grads(result)
        n = calls_within(call, max_calls, target_s)
        gc.collect()
        median, each = time_per_call(call, n, repeats)
    except Exception as e:              # a failure is reported, not fatal; burnumba's too
        return {"status": f"error: {short_error(e, 110)}"}
    ref, scale = ref_loss
    loss_ok = abs(loss - ref) <= loss_tolerance(dtype, scale)
    gerr = grad_error(grads, ref_grads) if ref_grads is not None else None
    grad_ok = gerr is None or gerr <= GRAD_TOL[dtype]
    return {"status": "ok", "calls": n, "repeats": repeats, "us_per_call": median * 1e6,
            "repeat_us_per_call": [t * 1e6 for t in each], "loss": loss,
            "grad_abs_sum": checksum, "grad_err": gerr, "loss_ok": loss_ok,
            "grad_ok": grad_ok, "correct": loss_ok and grad_ok}


# -- time to first result, in fresh processes ------------------------------------------------
def child(spec):
    """In a fresh process: import the system's library, build the case, make the first call."""
    t0 = time.perf_counter()
    importlib.import_module(MODULES[spec["system"]])
    t1 = time.perf_counter()
    call, to_summary, _, grad_dtype = make_case(spec["system"], spec["workload"], spec["batch"],
                                                spec["dtype"])
    t2 = time.perf_counter()
    result = call()
    t3 = time.perf_counter()
    loss, checksum = to_summary(result)
    return {"import_s": t1 - t0, "build_s": t2 - t1, "first_call_s": t3 - t2,
            "first_result_s": t3 - t1, "loss": loss, "grad_abs_sum": checksum,
            "grad_dtype": grad_dtype(result), **compile_stats(spec["system"])}


def measure_with_first(system, workload, batch, dtype, caches, measure_args, ref_loss):
    """``measure`` (the steady state, in this process), with the time to first result from
    fresh processes around it (``caches`` None: none). burnumba and torch.compile: a cold
    process on an empty cache folder before, if ``caches`` gives one, and a warm process on
    that folder (else on the default folders, which this process's warm-up filled) after;
    this process's torch.compile compiles into that folder too (it then loads the cold
    process's work). Other systems: one process after."""
    if caches is None or not installed(MODULES[system]):
        return measure(system, workload, batch, dtype, *measure_args)
    spec = {"system": system, "workload": workload, "batch": batch, "dtype": dtype}
    ref, scale = ref_loss

    def child_run(env=None):
        r = run_child(os.path.abspath(__file__), spec, env=env, cpus=_single_thread.CPUS)
        if r.get("status") == "ok":
            r["loss_ok"] = abs(r["loss"] - ref) <= loss_tolerance(dtype, scale)
        return r

    startup = {"cold": None, "warm": None}
    if not has_disk_cache(system):
        r = measure(system, workload, batch, dtype, *measure_args)
        if r["status"] == "ok":
            startup["cold"] = child_run()
    else:
        env, path = caches.get(system, dtype, f"{workload}-b{batch}")
        if path:
            startup["cold"] = child_run(env)
            startup["cold"]["cache_mb"] = folder_mb(path)
        with inductor_cache_dir(path if system == "torch.compile" else None):
            r = measure(system, workload, batch, dtype, *measure_args)
        if r["status"] == "ok" or startup["cold"]:
            startup["warm"] = child_run(env)
        caches.done(path)
    r["startup"] = startup
    if any(startup.values()):
        print(f"  . first result {system} {workload}-b{batch} {dtype}: "
              + ", ".join(f"{k} {v['first_result_s']:.2f} s" if v.get("status") == "ok"
                          else f"{k} {v['status']}" for k, v in startup.items() if v),
              file=sys.stderr, flush=True)
    return r


def thread_info():
    info = {k: os.environ.get(k, "(unset)") for k in
            ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
             "XLA_FLAGS")}
    try:
        import numba
        info["numba threads"] = numba.config.NUMBA_NUM_THREADS
    except ImportError:
        pass
    try:
        import torch
        if os.environ.get("BENCH_THREADS", "1") != "0":
            torch.set_num_threads(1)
        info["torch threads"] = torch.get_num_threads()
    except ImportError:
        pass
    return info


# -- printing ---------------------------------------------------------------------------------
HEAD = ("system", "dtype", "calls/repeat", "us/call", "repeats min-max", "x slower than burnumba",
        "loss", "sum |grad|", "grad err", "check", "import s", "1st result s (cold)",
        "1st result s (warm cache)")
LEFT = (0, 1, 9)


def _secs(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def _first_cells(r):
    """import s, cold, warm: the time-to-first-result cells of one row."""
    st = r.get("startup")
    if st is None:
        return ("", "", "")

    def cell(c):
        if c is None:
            return "—"
        if c.get("status") != "ok":
            return c["status"].split(":")[0]
        return _secs(c["first_result_s"]) + ("" if c.get("loss_ok", True) else " WRONG")

    runs = [c for c in (st.get("cold"), st.get("warm")) if c]
    imp = next((_secs(c["import_s"]) for c in runs if c.get("status") == "ok"), "—")
    return (imp, cell(st.get("cold")), cell(st.get("warm")))


def rows(results, ref_system=None):
    base = {dt: r.get("us_per_call") for (s, dt), r in results.items()
            if s == "burnumba" and r["status"] == "ok"}
    for (system, dtype), r in results.items():
        if r["status"] != "ok":
            yield (system, dtype, r["status"]) + ("",) * (len(HEAD) - 3)
            continue
        b = base.get(dtype)
        ratio = f"{r['us_per_call'] / b:.2f}" if b else "n/a"
        gerr = "n/a" if r["grad_err"] is None else f"{r['grad_err']:.1e}"
        if system == ref_system and dtype == "float64":
            gerr = "(ref)"
        check = "ok" if r["correct"] else ("WRONG loss" if not r["loss_ok"] else "WRONG grad")
        lo, hi = min(r["repeat_us_per_call"]), max(r["repeat_us_per_call"])
        yield (system, dtype, f"{r['calls']} x {r['repeats']}", f"{r['us_per_call']:,.1f}",
               f"{lo:,.1f}-{hi:,.1f}", ratio, repr(r["loss"]), f"{r['grad_abs_sum']:.12g}", gerr,
               check) + _first_cells(r)


def print_table(table, markdown, head=HEAD):
    """The rows under ``head`` (a prefix of HEAD: the rows are cut to its length)."""
    _child.print_table(head, [tuple(r[:len(head)]) for r in table], markdown, LEFT, lead=2)


DESCRIPTION = {
    "mlp": "micrograd's moons MLP 2-16-16-1 (relu), mean hinge loss + 1e-4 L2",
    "gpt-block": "one pre-LN GPT-2 block, C=24, 6 heads, T=8; loss sum(block(x) * w_out)",
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=100_000,
                   help="upper bound on calls per repeat (default 100000)")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 5; 3 with --quick)")
    p.add_argument("--quick", action="store_true", help="a smoke test: short repeats")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help=f"comma-separated subset of {','.join(SYSTEMS)}")
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help=f"comma-separated subset of {','.join(WORKLOADS)}")
    p.add_argument("--batches", default=",".join(map(str, BATCHES)),
                   help="comma-separated batch sizes (default 1,64)")
    p.add_argument("--dtype", choices=("float64", "float32", "both"), default="float64")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.add_argument("--skip-first", action="store_true",
                   help="do not measure the time to first result (fresh processes)")
    p.add_argument("--cold", choices=POLICIES, default=None,
                   help="cold start of burnumba / torch.compile: an empty cache folder for "
                        "each case (default), once per dtype (default with --quick), or "
                        "none (warm figures only)")
    p.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return None
    # the steady state is timed in this process, on one core from here on (before any
    # system's library starts its threads); the first-result processes get every core back
    _single_thread.pin(_single_thread.one_core())

    def listed(text, allowed, what):
        items = [s.strip() for s in text.split(",") if s.strip()]
        bad = [s for s in items if s not in allowed]
        if bad:
            p.error(f"unknown {what} {bad}; choose from {list(allowed)}")
        return items

    systems = listed(args.systems, SYSTEMS, "system(s)")
    workloads = listed(args.workloads, WORKLOADS, "workload(s)")
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    dtypes = list(DTYPES) if args.dtype == "both" else [args.dtype]
    repeats = args.repeats or (3 if args.quick else 5)
    target_s = QUICK_TARGET_S if args.quick else TARGET_S
    cold = args.cold or ("once" if args.quick else "each")

    info = machine_info()
    info.update(thread_info())
    h = "### " if args.markdown else ""
    li = "- " if args.markdown else "  "
    print(f"{h}Machine and versions")
    for k, v in info.items():
        print(f"{li}{k}: {v}")
    print(f"{li}method: median of {repeats} repeats of a loop of N calls, N per system so that "
          f"a repeat takes ~{target_s} s (at most {args.calls}); single-threaded")
    if not args.skip_first:
        print(f"{li}time to first result: fresh processes; import s = importing the library; "
              f"1st result s = building the case + its first call (compiles included), after "
              f"the import; burnumba and torch.compile "
              + ("warm only (a process on the default cache folders, after the timing; no cold "
                 "start)"
                 if cold == "none" else
                 f"cold (empty cache folder, "
                 f"{'one per case' if cold == 'each' else 'once per dtype'}) and warm (a "
                 f"second process on that folder)"))
    if "torch.compile" in systems:
        info["torch.compile"] = _version("torch")
        try:        # inductor compiles C++ kernels in this many worker processes (its default)
            import torch._inductor.config as icfg
            info["torch.compile inductor compile threads"] = icfg.compile_threads
        except Exception:
            pass
    tmp = tempfile.TemporaryDirectory(prefix="burnumba-bench-first-")
    caches = None if args.skip_first else CacheDirs(cold, tmp.name)

    report = {"machine": info, "repeats": repeats, "target_s": target_s,
              "first_result": None if args.skip_first else {"cold": cold}, "tables": {}}
    for workload in workloads:
        for batch in batches:
            key = f"{workload}-b{batch}"
            ref_system, ref_grads = reference_grads(workload, batch)
            fd_err = (finite_difference_check(workload, batch, ref_grads)
                      if ref_grads is not None else None)
            results = {}
            for dtype in dtypes:
                ref_loss = reference_loss(workload, batch, dtype)
                for system in systems:
                    results[(system, dtype)] = measure_with_first(
                        system, workload, batch, dtype, caches,
                        (args.calls, repeats, target_s, ref_loss, ref_grads), ref_loss)
            print(f"\n{h}{key}: {DESCRIPTION[workload]}, batch {batch}")
            refs = ", ".join(f"{dt} {reference_loss(workload, batch, dt)[0]!r}" for dt in dtypes)
            print(f"numpy reference loss: {refs}")
            if ref_system:
                print(f"grad err = max |g - g_ref| / max |g_ref|, g_ref = {ref_system} float64 "
                      f"(which matches a central finite difference of the numpy loss along a "
                      f"random direction to {fd_err:.1e})")
            n_params = sum(a.size for a in params_for(workload).values())
            tape_info = None
            if "burnumba" in systems:
                try:
                    tape = tw.burnumba_tape(workload, batch)
                    tape_info = {"nodes": tape.n, "bytes": tape.nbytes}
                    tape_txt = f"; burnumba float64 tape: {tape.n} nodes, {tape.nbytes} bytes"
                except Exception as e:
                    tape_txt = f"; burnumba tape: error: {short_error(e, 110)}"
            else:
                tape_txt = ""
            print(f"{n_params} parameters{tape_txt}\n")
            print_table(list(rows(results, ref_system)), args.markdown,
                        HEAD[:-3] if args.skip_first else HEAD)
            report["tables"][key] = {
                "workload": workload, "batch": batch, "parameters": n_params,
                "reference_loss": {dt: reference_loss(workload, batch, dt)[0] for dt in dtypes},
                "grad_reference": ref_system, "grad_reference_fd_err": fd_err,
                "burnumba_tape": tape_info,
                "systems": {f"{s} {dt}": r for (s, dt), r in results.items()}}

    tmp.cleanup()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
        print(f"\nwrote {args.json}")
    return report


if __name__ == "__main__":
    main()
