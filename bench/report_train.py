"""Time one training step (forward, backward, AdamW) of the paper's models; print the tables.

    .venv/bin/python bench/report_train.py                                  # embedded data
    .venv/bin/python bench/report_train.py --data-dir ../shared/data        # the paper's data
    .venv/bin/python bench/report_train.py --quick                          # a smoke test
    .venv/bin/python bench/report_train.py --dtype both --systems burnumba,torch --no-curve
    .venv/bin/python bench/report_train.py --systems torch,torch.compile --skip-first

Methodology
-----------
* What one step is, per system, is defined in ``train_workloads.py``: forward, backward and
  the AdamW update (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on every
  parameter) on the next of 64 batches drawn in advance and cycled, returning the loss as a
  Python float. Cases: the mini GPT at batch 1, 8 and 64, the makemore MLP at batch 1 and 64;
  float32 is the main dtype, float64 on request (``--dtype``).
* Systems: burnumba (``optim.Trainer``), torch eager, torch.compile (the whole step, forward,
  backward and AdamW, compiled as one graph: default mode, inductor, CPU, one thread; why
  this and not ``torch.compile(model)`` / ``torch.compile(opt.step)``, with the times of the
  alternatives, is in train_workloads.py) and jax.jit.
* Every (system, model, batch, dtype) runs in a fresh process (this file with ``--child``),
  which imports the system's library (timed: "import s"), loads the parameters and batches
  that this process prepared (``.npz``, so a peer's
  process never imports burnumba, nor burnumba's a peer), builds the step, warms it up (the
  first step, which traces and compiles, then at least 20 steps and 0.5 s, untimed), and
  times single steps with ``time.perf_counter`` until 3 s have passed (0.3 s with --quick):
  at least 200 steps for every case faster than 15 ms, fewer for slower ones. The figure is
  the median ms/step; the mean and the 10-90 % range are in the details table.
* Peak RSS is the child's ``VmHWM`` (the peak resident set of its own address space, from
  /proc/self/status), in MiB. ``ru_maxrss`` is printed beside it but is not used: Linux
  carries the parent's peak into the child across fork/vfork + exec, so ``ru_maxrss`` is at
  least this report's own peak. Outside Linux, ``ru_maxrss`` is all there is.
* All systems start from the same float64 parameters (``burnumba.nn``'s init; see
  ``train_workloads.init_params``) rounded to the dtype, and see the same batches. Check: each
  system's first loss against a float64 numpy forward pass, relative 1e-6 (float64) or 1e-4
  (float32).
* Single-threaded: OMP / OpenBLAS / MKL / numba pinned to one thread through the environment
  before anything is imported, ``torch.set_num_threads(1)``, and
  ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` (bench/_single_thread.py); and since XLA
  still computes a large product on two cores with that flag, the timing and curve
  processes run pinned to one CPU from their start (``_single_thread.one_core``; the
  cold-start processes are not pinned). Set BENCH_THREADS=0 to keep the libraries' defaults.
* torch's GPT runs twice, with explicit masked-softmax attention and with
  ``F.scaled_dot_product_attention(is_causal=True)``; the main table shows the faster.
  torch.compile's GPT runs both too (``--compile-attention both``, the default), each with
  its own cold and warm start; the tables show the faster. With --quick it runs only the
  explicit one (``explicit``, the faster in float32 and at batch 1), since every variant is
  another compile of 40-60 s (``--compile-attention`` chooses).
* Time to first result (``--skip-first`` leaves it out): the wall time from after the
  imports, with the parameters and batches loaded as numpy arrays, to the first loss as a
  Python float: building the step ("setup": the torch module and optimiser, jax.jit's and
  torch.compile's wrappers, milliseconds, but burnumba's ``Trainer``, which traces the loss
  and loads or compiles its kernels in its constructor) plus the first step (jax.jit's
  trace and XLA compile; torch.compile's Dynamo trace, AOTAutograd and inductor compile,
  and the import of ``torch._dynamo`` / ``torch._inductor`` that torch does on first use;
  torch eager's ~1 s of setup is mostly ``torch.optim`` importing ``torch._dynamo`` when the
  AdamW is made). Python's start-up and the imports are excluded; the imports are timed on
  their own. Inductor keeps its default parallel compile (C++ kernels in ``compile_threads``
  worker processes, 2 on the 2-core VM; in the JSON), while every step runs on one thread.
  burnumba and torch.compile keep compiled code on disk (``_caches.py``) and get two
  figures: cold, a process with an empty cache folder (``NUMBA_CACHE_DIR`` and
  ``BURNUMBA_CACHE_DIR`` for burnumba, ``TORCHINDUCTOR_CACHE_DIR`` for torch.compile, pointed
  at a new temporary folder), then warm, the timing process on that same folder (its first
  step). ``--cold each`` (the default) gives every case an empty folder of its own; with
  ``--cold once`` (the default with --quick) only the first case of each dtype has one, and
  the other cases run on the default cache folders: burnumba's filled by an untimed priming
  process just before (as the report primed numba's cache before), so their warm figure is
  warm; torch.compile's timing process compiles there itself if it must (a second compile
  of the GPT would add ~40 s per case to a quick run), and its first step counts as warm
  only if inductor's FX-graph and AOTAutograd caches had every graph (from an earlier run),
  else the cell is "—". torch eager and jax have no disk cache: their figure is the timing
  process's first step. The children write the cache hits and misses (numba's; inductor's)
  into the JSON.
* Learning curves: the GPT at batch 64 for ``--steps-curve`` steps (3000; 200 with --quick)
  on the GPT corpus, every system from the same parameters, on the same stream of batches
  (one index stream drawn in advance), with the same AdamW. The train loss of every step is
  recorded; the table prints its mean over the last 50 steps and the mean loss over 100 fixed
  validation batches at the end, and the relative gaps to torch (target: within 2 %). The
  curves (smoothed over 50 steps) go to ``bench/results/learning_curves.svg``.
"""
import _single_thread  # noqa: I001  (first: pins every library to one thread)
import os

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
SCRIPT = os.path.abspath(__file__)          # what run_child runs with --child
import numpy as np  # noqa: E402
import train_workloads as tw  # noqa: E402
from _caches import (POLICIES, CacheDirs, compile_stats, folder_mb,  # noqa: E402
                     has_disk_cache)
from _child import installed, run_child  # noqa: E402

RESULTS_DIR = os.path.join(HERE, "results")
SVG_PATH = os.path.join(RESULTS_DIR, "learning_curves.svg")
MODULES = tw.MODULES
IMPORTS = {"burnumba": ("burnumba", "burnumba.nn", "burnumba.optim"), "torch": ("torch",),
           "torch.compile": ("torch",), "jax": ("jax", "jax.numpy")}

BUDGET_S, QUICK_BUDGET_S = 3.0, 0.3      # timed steps per case: until this much time has passed
WARMUP_STEPS, WARMUP_S = 20, 0.5
MIN_TIMED = 20
CURVE_BATCH, CURVE_SEED, VAL_BATCHES, SMOOTH = 64, 7, 100, 50
GAP_TARGET = 0.02
TARGET_DTYPE = "float32"


# -- the child process ----------------------------------------------------------------------------
def peak_rss_mb():
    """(VmHWM, ru_maxrss) of this process in MiB; VmHWM is None where /proc is absent."""
    hwm = None
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) / 1024          # kB
    except OSError:
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    maxrss = maxrss / 2 ** 20 if sys.platform == "darwin" else maxrss / 1024   # bytes vs kB
    return hwm, maxrss


def numba_cache_misses():
    """How many njit specialisations of burnumba this process compiled instead of loading
    them from numba's disk cache (as ``report_scalar.py`` counts them); None without numba."""
    if "numba" not in sys.modules:
        return None
    from numba.core.dispatcher import Dispatcher
    seen = {id(o): o for m in list(sys.modules.values())
            if m and m.__name__.startswith("burnumba")
            for o in vars(m).values() if isinstance(o, Dispatcher)}
    return sum(sum(d.stats.cache_misses.values()) for d in seen.values())


def _load_bundle(path):
    with np.load(path) as f:
        params = {k[2:]: f[k] for k in f.files if k.startswith("p.")}
        arrays = {k: f[k].astype(np.int64) for k in f.files if not k.startswith("p.")}
    return params, arrays


def child(spec):
    """Run one case as described by ``spec`` (a dict); return the JSON-able result."""
    t_start = time.perf_counter()
    for module in IMPORTS[spec["system"]]:
        importlib.import_module(module)
    import_s = time.perf_counter() - t_start
    params, arrays = _load_bundle(spec["bundle"])
    batches = (arrays["X"], arrays["Y"])
    t0 = time.perf_counter()
    step, info = tw.make_step(spec["system"], spec["model"], spec["batch"], spec["dtype"],
                              params=params, batches=batches, attention=spec.get("attention"))
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = step()
    first_step_s = time.perf_counter() - t0
    out = {"variant": info["variant"], "n_params": info["n_params"], "import_s": import_s,
           "setup_s": setup_s, "first_step_s": first_step_s,
           "first_result_s": setup_s + first_step_s, "first_loss": first,
           **compile_stats(spec["system"])}
    if spec["mode"] == "curve":
        losses = [first]
        t0 = time.perf_counter()
        for _ in range(len(batches[0]) - 1):
            losses.append(step())
        out["curve_s"] = time.perf_counter() - t0
        out["ms_per_step"] = out["curve_s"] / max(len(losses) - 1, 1) * 1e3
        out["losses"] = losses
        val = [info["eval_loss"](x, y) for x, y in zip(arrays["Xv"], arrays["Yv"])]
        out["val_loss"] = float(np.mean(val))
    elif spec["mode"] == "time":
        n, t0 = 0, time.perf_counter()
        while n < WARMUP_STEPS or time.perf_counter() - t0 < spec["warmup_s"]:
            step()
            n += 1
        out["warmup_steps"] = n + 1
        gc.collect()
        times, t0 = [], time.perf_counter()
        while True:
            t = time.perf_counter()
            step()
            now = time.perf_counter()
            times.append(now - t)
            if now - t0 >= spec["budget_s"] and len(times) >= MIN_TIMED:
                break
        ms = np.array(times) * 1e3
        out.update(steps=len(ms), ms_median=float(np.median(ms)), ms_mean=float(ms.mean()),
                   ms_p10=float(np.percentile(ms, 10)), ms_p90=float(np.percentile(ms, 90)))
    out["rss_mb"], out["ru_maxrss_mb"] = peak_rss_mb()
    out["process_s"] = time.perf_counter() - t_start
    out["numba_compiled"] = numba_cache_misses()
    out["modules"] = sorted(m for m in ("burnumba", "numba", "torch", "jax") if m in sys.modules)
    return out


# -- preparing the inputs (parent) ------------------------------------------------------------
def write_bundle(path, params, arrays):
    payload = {f"p.{k}": v for k, v in params.items()}
    for k, a in arrays.items():
        payload[k] = a.astype(np.uint8) if a.max() < 256 else a
    np.savez(path, **payload)


# -- printing ------------------------------------------------------------------------------------
def md_table(head, rows, left=(0,)):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i in left else "---:" for i in range(len(head))) + "|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")


def _ms(r):
    return r["ms_median"] if r and r.get("status") == "ok" else None


def _cell(r):
    if r is None:
        return "skipped"
    if r.get("status") != "ok":
        return r["status"].split(":")[0]
    return f"{r['ms_median']:.3f} ({r['rss_mb']:.0f})"


def _ratio(a, b):
    return f"{a / b:.2f}×" if a is not None and b else "n/a"


def best_variant(rs):
    """The faster (attention) variant of one case, and its name."""
    ok = {v: r for v, r in rs.items() if r.get("status") == "ok"}
    if not ok:
        return next(iter(rs.values()), None), None
    v = min(ok, key=lambda k: ok[k]["ms_median"])
    return ok[v], v


best_torch = best_variant


def attention_variants(system, model, compile_attention="explicit"):
    """The GPT attention variants a system runs (None: the model has no attention, or the
    system ignores it)."""
    if model != "gpt":
        return (None,)
    if system == "torch":
        return ("sdpa", "explicit")
    if system == "torch.compile":
        return ("sdpa", "explicit") if compile_attention == "both" else (compile_attention,)
    return (None,)


# -- time to first result ----------------------------------------------------------------------
def _secs(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def _first(r, which):
    """(seconds or None, cell text) of one time-to-first-result figure of a timing result.
    which: "cold" (the cold-start process of burnumba / torch.compile, or the timing process
    of a system without a disk cache), or "warm" (the timing process after a cold start or a
    priming process)."""
    if r is None:
        return None, "skipped"
    if which == "cold":
        c = r.get("cold") if has_disk_cache(r.get("system", "")) else r
    else:
        c = r if has_disk_cache(r.get("system", "")) and r.get("primed") else None
    if c is None:
        return None, "—"
    if c.get("status") != "ok":
        return None, c["status"].split(":")[0]
    bad = "" if c.get("loss_ok", True) else " WRONG"
    return c["first_result_s"], _secs(c["first_result_s"]) + bad


def print_first_results(res, systems, shown, cases, dtypes, cold):
    print("\n### Time to first result: seconds from after the imports to the first loss "
          "(building the step + the first step)\n")
    if cold == "each":
        where = ("cold = a process on an empty cache folder (every case), warm = the timing "
                 "process after it on the same folder")
    elif cold == "none":
        where = ("no cold start (every case runs on the default cache folders, primed just "
                 "before; `--cold once` or `each` measures it), warm = the timing process")
    else:
        where = ("cold = a process on an empty cache folder (the first case of each dtype "
                 "only), warm = the timing process after it on the same folder; the other "
                 "cases run on the default cache folders: burnumba's primed just before, "
                 "torch.compile's counted as warm only when inductor's cache had every graph "
                 "(\"—\" when it compiled)")
    print(f"Fresh processes. burnumba and torch.compile: {where}. torch eager and jax have no "
          "disk cache (every process is cold). Imports are not included; they are in the last "
          "row.\n")
    cols = []
    for s_ in shown:
        if has_disk_cache(s_):
            cols += [(s_, "cold"), (s_, "warm")]
        else:
            cols.append((s_, "cold"))
    head = ("case",) + tuple(f"{s_} {w}" if has_disk_cache(s_) else s_ for s_, w in cols)
    rows = []
    for dtype in dtypes:
        for model, batch in cases:
            row = [f"{model} b{batch} {dtype}"]
            for s_, w in cols:
                r = res.get((s_, model, batch, dtype))
                if r is not None:
                    r = dict(r, system=s_)
                row.append(_first(r, w)[1])
            rows.append(row)
    imports = []
    for s_, w in cols:
        xs = [r["import_s"] for (sy, _, _, _), r in res.items()
              if sy == s_ and r and r.get("status") == "ok" and "import_s" in r]
        imports.append(_secs(float(np.median(xs))) if xs and w == "cold" else "")
    rows.append(["import (median s)"] + imports)
    md_table(head, rows)


def first_result_summary(res, cold):
    """The JSON: per case and system, the cold and warm seconds, import and setup."""
    out = {"cold_policy": cold, "cases": {}}
    for (system, model, batch, dtype), r in res.items():
        if r is None:
            continue
        rr = dict(r, system=system)
        c, w = _first(rr, "cold")[0], _first(rr, "warm")[0]
        out["cases"][f"{system} {model}-b{batch} {dtype}"] = {
            "cold_s": c, "warm_s": w, "import_s": r.get("import_s"),
            "cold_setup_s": (r.get("cold") or {}).get("setup_s") if has_disk_cache(system)
            else r.get("setup_s"),
            "cold_cache_mb": (r.get("cold") or {}).get("cache_mb")}
    return out


def targets(res, dtype):
    """[(target, value, met)] for the issue's targets on the float32 (main) results."""
    def get(system, model, batch):
        return res.get((system, model, batch, dtype))

    def ms(system, model, batch):
        return _ms(get(system, model, batch))

    out = []
    b1 = ms("burnumba", "gpt", 1)
    t1 = ms("torch", "gpt", 1)
    out.append(("GPT b1 ≤ 0.5 ms/step", f"{b1:.3f} ms" if b1 else "n/a",
                None if b1 is None else b1 <= 0.5))
    out.append(("GPT b1 ≥ 5× faster than torch", _ratio(t1, b1),
                None if t1 is None or b1 is None else t1 / b1 >= 5))
    for peer in ("jax", "torch"):
        p, b = ms(peer, "gpt", 64), ms("burnumba", "gpt", 64)
        out.append((f"GPT b64 faster than {peer}", _ratio(p, b),
                    None if p is None or b is None else p / b > 1))
    for batch in (1, 64):
        p, b = ms("torch", "makemore", batch), ms("burnumba", "makemore", batch)
        out.append((f"makemore b{batch} faster than torch", _ratio(p, b),
                    None if p is None or b is None else p / b > 1))
    rss = {k: r["rss_mb"] for k, r in res.items()
           if k[0] == "burnumba" and k[3] == dtype and r.get("status") == "ok"}
    if rss:
        worst = max(rss, key=rss.get)
        out.append(("burnumba peak RSS ≤ 150 MB (every case)",
                    f"max {rss[worst]:.0f} MB ({worst[1]} b{worst[2]})", rss[worst] <= 150))
    else:
        out.append(("burnumba peak RSS ≤ 150 MB (every case)", "n/a", None))
    halves = {}
    for (s, m, b, dt), r in res.items():
        t = get("torch", m, b)
        if s == "burnumba" and dt == dtype and r.get("status") == "ok" and t \
                and t.get("status") == "ok":
            halves[(m, b)] = r["rss_mb"] / t["rss_mb"]
    if halves:
        worst = max(halves, key=halves.get)
        out.append(("burnumba RSS ≤ ½ torch's (every case)",
                    f"worst burnumba/torch {halves[worst]:.2f} ({worst[0]} b{worst[1]})",
                    halves[worst] <= 0.5))
    else:
        out.append(("burnumba RSS ≤ ½ torch's (every case)", "n/a", None))
    return out


def smooth(xs, n=SMOOTH):
    """Trailing mean over the last n values (fewer at the start)."""
    c = np.cumsum(np.concatenate([[0.0], np.asarray(xs, dtype=np.float64)]))
    i = np.arange(1, len(xs) + 1)
    lo = np.maximum(i - n, 0)
    return (c[i] - c[lo]) / (i - lo)


# -- main ------------------------------------------------------------------------------------------
def machine_info():
    from report_scalar import _version
    from report_scalar import machine_info as scalar_info
    info = scalar_info()
    for k in ("micrograd", "autograd", "llvmlite"):
        info.pop(k, None)
    info["jax"], info["torch"] = _version("jax"), _version("torch")
    info.update({k: os.environ.get(k, "(unset)") for k in
                 ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                  "NUMBA_NUM_THREADS", "XLA_FLAGS")})
    return info


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", help=f"folder with {tw.GPT_FILE} and {tw.NAMES_FILE}, the "
                   "paper's data (e.g. ../shared/data beside a checkout); default: "
                   "burnumba's embedded corpus and generated names")
    p.add_argument("--embedded", action="store_true",
                   help="the embedded corpus and generated names even with --data-dir")
    p.add_argument("--dtype", choices=("float32", "float64", "both"), default="both",
                   help="float32 (the main dtype: targets, curves), float64, or both (default)")
    p.add_argument("--systems", default=",".join(tw.SYSTEMS),
                   help=f"comma-separated subset of {','.join(tw.SYSTEMS)}")
    p.add_argument("--cases", default=",".join(f"{m}-b{b}" for m, b in tw.CASES),
                   help="comma-separated subset of the cases (default: all)")
    p.add_argument("--steps-curve", type=int, default=None,
                   help="learning-curve steps (default 3000; 200 with --quick; 0 = none)")
    p.add_argument("--no-curve", action="store_true", help="skip the learning curves")
    p.add_argument("--quick", action="store_true", help="a smoke test: short timing runs")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--svg", default=SVG_PATH,
                   help="learning-curve plot (default bench/results/learning_curves.svg)")
    p.add_argument("--skip-first", action="store_true",
                   help="do not measure the time to first result (no cold-start processes)")
    p.add_argument("--cold", choices=POLICIES, default=None,
                   help="cold start of burnumba / torch.compile: an empty cache folder for "
                        "each case (default), once per dtype (default with --quick), or "
                        "none (warm figures only)")
    p.add_argument("--compile-attention", choices=("explicit", "sdpa", "both"),
                   default=None, help="torch.compile's GPT attention: both (the default; the "
                   "faster is shown), or one (explicit is the default with --quick)")
    p.add_argument("--child", metavar="SPEC", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return None

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    bad = [s for s in systems if s not in tw.SYSTEMS]
    if bad:
        p.error(f"unknown system(s) {bad}; choose from {list(tw.SYSTEMS)}")
    all_cases = {f"{m}-b{b}": (m, b) for m, b in tw.CASES}
    cases = [all_cases[c.strip()] if c.strip() in all_cases else p.error(f"unknown case {c}")
             for c in args.cases.split(",") if c.strip()]
    dtypes = ["float32", "float64"] if args.dtype == "both" else [args.dtype]
    steps_curve = 0 if args.no_curve else (args.steps_curve if args.steps_curve is not None
                                           else (200 if args.quick else 3000))
    data_dir = None if args.embedded else args.data_dir      # default: the embedded data
    cold = args.cold or ("once" if args.quick else "each")
    compile_attention = args.compile_attention or ("explicit" if args.quick else "both")
    skipped = [s for s in systems if not installed(MODULES[s])]
    systems = [s for s in systems if s not in skipped]

    info = machine_info()
    print("### Machine and versions")
    for k, v in info.items():
        print(f"- {k}: {v}")
    budget = QUICK_BUDGET_S if args.quick else BUDGET_S
    print(f"- method: one training step = forward + backward + AdamW on the next of "
          f"{tw.N_BATCHES} pre-drawn batches; each case in a fresh process; warm-up "
          f">= {WARMUP_STEPS} steps and {WARMUP_S if not args.quick else 0.1} s, then single "
          f"steps timed for {budget} s (at least {MIN_TIMED}); median ms/step; peak RSS = the "
          "child's VmHWM in MiB")
    if not args.skip_first:
        which = "every case" if cold == "each" else "once per dtype"
        print("- time to first result: fresh processes; burnumba and torch.compile "
              + ("warm only (no cold start)" if cold == "none" else
                 f"cold (empty cache folder, {which}) and warm"))
    if skipped:
        print(f"- skipped (not installed): {', '.join(skipped)}")

    report = {"machine": info, "cases": {}, "curve": None, "skipped": skipped}
    with tempfile.TemporaryDirectory(prefix="burnumba-train-bench-") as tmp:
        data, inits, bundles = {}, {}, {}
        for model in sorted({m for m, _ in cases} | ({"gpt"} if steps_curve else set())):
            d = tw.load_data(model, data_dir)
            data[model] = d
            inits[model] = tw.init_params(model, 0, d.vocab_size)
            n = tw.check_n_params(model, inits[model], d.vocab_size)
            print(f"- {model}: data {d.source} (vocab {d.vocab_size}, "
                  + ", ".join(f"{k} {v:,}" for k, v in d.extra.items())
                  + f"), {n:,} parameters from burnumba.nn's init(seed=0, float64)")
        for model, batch in cases:
            X, Y = tw.sample_batches(data[model], batch, tw.N_BATCHES)
            path = os.path.join(tmp, f"{model}-b{batch}.npz")
            write_bundle(path, inits[model], {"X": X, "Y": Y})
            bundles[(model, batch)] = (path, X, Y)

        # -- timing, with the time to first result -----------------------------------------
        # Per case and system: for burnumba and torch.compile first a process on an empty cache
        # folder (the cold start; it also fills the folder) or, without one, an untimed process
        # that fills the default cache folders; then the timing process on the same folders
        # (its first step is the warm start). torch eager and jax: the timing process only.
        caches = None if args.skip_first else CacheDirs(cold, os.path.join(tmp, "caches"))
        res, variants_of, envs = {}, {}, {}
        for dtype in dtypes:
            for model, batch in cases:
                path, X, Y = bundles[(model, batch)]
                ref = tw.reference_loss(model, tw.rounded(inits[model], dtype), X[0], Y[0])
                for system in systems:
                    variants = attention_variants(system, model, compile_attention)
                    rs = {}
                    for v in variants:
                        base = {"system": system, "model": model, "batch": batch,
                                "dtype": dtype, "bundle": path, "attention": v}
                        env, cache_path, pre, cold_r = None, None, None, None
                        if has_disk_cache(system) and caches:
                            env, cache_path = caches.get(
                                system, dtype, f"{model}-b{batch}" + (f"-{v}" if v else ""))
                        # a cold start; or burnumba's priming process on the default folders
                        # (torch.compile's timing process compiles there itself, if it must)
                        if cache_path or system == "burnumba":
                            pre = run_child(SCRIPT, dict(base, mode="first"), env=env)
                            if pre["status"] == "ok":
                                pre["rel_err"] = abs(pre["first_loss"] - ref) / abs(ref)
                                pre["loss_ok"] = pre["rel_err"] <= tw.LOSS_RTOL[dtype]
                            if cache_path:
                                pre["cache_mb"] = folder_mb(cache_path)
                                cold_r = pre
                            print(f"  . {'cold start' if cold_r else 'prime'} {system} {model} "
                                  f"b{batch} {dtype}: {pre['status']}"
                                  + (f", {pre['first_result_s']:.2f} s" if pre["status"] == "ok"
                                     else ""), file=sys.stderr, flush=True)
                        spec = dict(base, mode="time", budget_s=budget,
                                    warmup_s=0.1 if args.quick else WARMUP_S)
                        r = run_child(SCRIPT, spec, env=env, cpus=_single_thread.one_core())
                        if r.get("numba_compiled"):
                            # burnumba's sources changed since the priming process: this one
                            # compiled, and the compiler's memory is in its peak RSS. Once more.
                            r = run_child(SCRIPT, spec, env=env, cpus=_single_thread.one_core())
                            r["rerun_after_compile"] = True
                        if r["status"] == "ok":
                            r["ref_loss"] = ref
                            r["rel_err"] = abs(r["first_loss"] - ref) / abs(ref)
                            r["loss_ok"] = r["rel_err"] <= tw.LOSS_RTOL[dtype]
                        r["cold"] = cold_r
                        r["primed"] = pre is not None or (
                            # torch.compile on the default folders: warm if it compiled nothing
                            system == "torch.compile" and r.get("status") == "ok"
                            and r.get("fxgraph_cache_hit", 0) > 0
                            and not r.get("fxgraph_cache_miss")
                            and not r.get("aot_autograd_cache_miss"))
                        if pre is not None and cold_r is None:
                            r["prime"] = pre
                        rs[v or "default"] = r
                        envs[(system, model, batch, dtype)] = env
                        print(f"  . {system} {model} b{batch} {dtype} "
                              f"{v if len(variants) > 1 else ''}: {_cell(r)}",
                              file=sys.stderr, flush=True)
                    r, _ = best_variant(rs)
                    if len(rs) > 1:
                        variants_of[(system, model, batch, dtype)] = rs
                    res[(system, model, batch, dtype)] = r
                    report["cases"][f"{system} {model}-b{batch} {dtype}"] = rs

        print("\n### One training step: median ms/step (peak RSS MiB of the process)\n")
        shown = list(tw.SYSTEMS)            # a system not run shows "skipped"
        peers = [s_ for s_ in shown if s_ != "burnumba"]
        head = (("case",) + tuple(f"{s_} ms (RSS MB)" for s_ in shown)
                + tuple(f"{s_}/burnumba" for s_ in peers))
        rows = []
        for dtype in dtypes:
            for model, batch in cases:
                r = {s_: res.get((s_, model, batch, dtype)) for s_ in tw.SYSTEMS}
                b = _ms(r["burnumba"])
                rows.append((f"{model} b{batch} {dtype}",)
                            + tuple(_cell(r[s_]) for s_ in shown)
                            + tuple(_ratio(_ms(r[s_]), b) for s_ in peers))
        md_table(head, rows)
        if variants_of:
            print("\nGPT attention of torch and torch.compile (the faster is in the table): "
                  + "; ".join(f"{s_} {m} b{b} {dt}: " + ", ".join(
                      f"{v} {_ms(r):.3f} ms" if _ms(r) else f"{v} {r['status']}"
                      for v, r in rs.items())
                      for (s_, m, b, dt), rs in variants_of.items()))

        if not args.skip_first:
            print_first_results(res, systems, shown, cases, dtypes, cold)
            report["first_result"] = first_result_summary(res, cold)

        print("\n### Details\n")
        head = ("system", "case", "dtype", "what runs", "steps timed", "median ms", "mean ms",
                "p10-p90 ms", "import s", "setup s", "1st step s", "RSS MiB (ru_maxrss)",
                "first loss", "rel. err vs numpy", "check")
        rows = []
        for (system, model, batch, dtype), r in res.items():
            if r is None:
                continue
            if r.get("status") != "ok":
                rows.append((system, f"{model} b{batch}", dtype, r["status"]) + ("",) * 11)
                continue
            rows.append((system, f"{model} b{batch}", dtype, r["variant"], r["steps"],
                         f"{r['ms_median']:.3f}", f"{r['ms_mean']:.3f}",
                         f"{r['ms_p10']:.3f}-{r['ms_p90']:.3f}", f"{r['import_s']:.2f}",
                         f"{r['setup_s']:.2f}" + (" (compiled)" if r.get("numba_compiled") else ""),
                         f"{r['first_step_s']:.3f}",
                         f"{r['rss_mb']:.0f} ({r['ru_maxrss_mb']:.0f})",
                         f"{r['first_loss']:.8f}", f"{r['rel_err']:.1e}",
                         "ok" if r["loss_ok"] else "WRONG"))
        md_table(head, rows, left=(0, 1, 2, 3, 14))
        errors = [(k, r) for k, r in res.items() if r and r.get("status") != "ok"]
        for k, r in errors[:3]:
            print(f"\n{' '.join(map(str, k))} failed; its stderr ends with:\n```\n"
                  f"{r.get('stderr', '')[-1500:]}\n```")

        tdt = TARGET_DTYPE if TARGET_DTYPE in dtypes else dtypes[0]
        print(f"\n### Targets (issue #4, {tdt})\n")
        tg = targets(res, tdt)
        md_table(("target", "measured", "status"),
                 [(t, v, "n/a" if ok is None else ("met" if ok else "missed")) for t, v, ok in tg])
        report["targets"] = [{"target": t, "measured": v, "met": ok} for t, v, ok in tg]

        # -- learning curves -----------------------------------------------------------------
        if steps_curve:
            curve_dtype = tdt
            d = data["gpt"]
            X, Y = tw.sample_batches(d, CURVE_BATCH, steps_curve, seed=CURVE_SEED)
            Xv, Yv = tw.sample_batches(d, CURVE_BATCH, VAL_BATCHES, seed=CURVE_SEED + 1,
                                       split="val")
            path = os.path.join(tmp, "curve.npz")
            write_bundle(path, inits["gpt"], {"X": X, "Y": Y, "Xv": Xv, "Yv": Yv})
            curves = {}
            for system in systems:
                spec = {"mode": "curve", "system": system, "model": "gpt",
                        "batch": CURVE_BATCH, "dtype": curve_dtype, "bundle": path,
                        "attention": "sdpa" if system == "torch" else None}
                t0 = time.perf_counter()
                # the cache folders of the timing run of this model, if it ran (warm)
                env = envs.get((system, "gpt", CURVE_BATCH, curve_dtype)) if cases else None
                r = run_child(SCRIPT, spec, timeout=6 * 3600, env=env,
                              cpus=_single_thread.one_core())
                r["wall_s"] = time.perf_counter() - t0
                curves[system] = r
                print(f"  . curve {system}: {r['status']} in {r['wall_s']:.0f} s",
                      file=sys.stderr, flush=True)
            report["curve"] = print_curves(curves, steps_curve, curve_dtype, d, args.svg)

    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2, default=str)
        print(f"\nwrote {args.json}")
    return report


def print_curves(curves, steps, dtype, data, svg_path):
    print(f"\n### Learning curves: GPT, batch {CURVE_BATCH}, {steps} steps, {dtype}, "
          f"{data.source}\n")
    print(f"Same initial parameters, the same stream of {steps} pre-drawn batches, AdamW "
          f"lr {tw.ADAMW['lr']}; final train = mean loss of the last {SMOOTH} steps, "
          f"val = mean loss over {VAL_BATCHES} fixed validation batches of {CURVE_BATCH} at the "
          "end; gaps are relative to torch.\n")
    ok = {s: r for s, r in curves.items() if r.get("status") == "ok"}
    final = {s: float(np.mean(r["losses"][-SMOOTH:])) for s, r in ok.items()}
    base = "torch" if "torch" in ok else None
    rows = []
    for s, r in curves.items():
        if s not in ok:
            rows.append((s, r["status"], "", "", "", "", "", ""))
            continue
        gap_t = gap_v = "(ref)" if s == base else "n/a"
        if base and s != base:
            gap_t = f"{(final[s] - final[base]) / final[base] * 100:+.2f} %"
            gap_v = f"{(r['val_loss'] - ok[base]['val_loss']) / ok[base]['val_loss'] * 100:+.2f} %"
        rows.append((s, f"{r['first_loss']:.6f}", f"{final[s]:.4f}", f"{r['val_loss']:.4f}",
                     gap_t, gap_v, f"{r['ms_per_step']:.2f}", f"{r['wall_s']:.0f}"))
    md_table(("system", "first loss", f"final train (last {SMOOTH})", "final val",
              "train gap", "val gap", "ms/step", "process s"), rows)
    verdicts = []
    if base and "burnumba" in ok:
        gt = abs(final["burnumba"] - final[base]) / final[base]
        gv = abs(ok["burnumba"]["val_loss"] - ok[base]["val_loss"]) / ok[base]["val_loss"]
        met = gt <= GAP_TARGET and gv <= GAP_TARGET
        verdicts.append(f"burnumba vs torch final losses within {GAP_TARGET:.0%}: "
                        f"{'met' if met else 'missed'} (train {gt:.2%}, val {gv:.2%})")
    elif "burnumba" in ok:
        verdicts.append("burnumba vs torch: torch not run, no gap")
    for v in verdicts:
        print(f"\n{v}")
    if ok:
        import _svg
        step_axis = list(range(1, steps + 1))
        colors = {"burnumba": "#d62728", "torch": "#1f77b4", "torch.compile": "#9467bd",
                  "jax": "#2ca02c"}
        sm = {s: smooth(r["losses"]) for s, r in ok.items()}
        series = [(f"{s} (val {ok[s]['val_loss']:.3f})", step_axis, sm[s].tolist(),
                   colors.get(s, "#555"), "6,4" if s == "jax" else "")
                  for s in ok]
        panels = [{"title": f"mini GPT, batch {CURVE_BATCH}: train loss (mean of {SMOOTH})",
                   "xlabel": "step", "ylabel": "cross-entropy", "series": series}]
        if base and len(ok) > 1:
            gaps = [(f"{s} vs torch", step_axis,
                     ((sm[s] - sm[base]) / sm[base] * 100).tolist(), colors.get(s, "#555"),
                     "6,4" if s == "jax" else "")
                    for s in ok if s != base]
            lim = max(2.5, max(abs(v) for g in gaps for v in g[2][SMOOTH:] or [0]) * 1.1)
            panels.append({"title": "relative gap of the smoothed train loss",
                           "xlabel": "step", "ylabel": "% vs torch", "series": gaps,
                           "ylim": (-lim, lim),
                           "notes": [f"target: within ±{GAP_TARGET:.0%} at the end"]})
        os.makedirs(os.path.dirname(os.path.abspath(svg_path)), exist_ok=True)
        _svg.write(svg_path, panels, caption=f"{dtype}, {data.source.split('/')[-1]}, same init "
                   "and batch stream for every system, AdamW lr 1e-3 wd 0.01")
        print(f"\nwrote {os.path.relpath(svg_path)}")
    return {"steps": steps, "dtype": dtype, "final_train": final,
            "val": {s: r["val_loss"] for s, r in ok.items()},
            "ms_per_step": {s: r["ms_per_step"] for s, r in ok.items()},
            "status": {s: r["status"] for s, r in curves.items()}, "verdicts": verdicts}


if __name__ == "__main__":
    main()
