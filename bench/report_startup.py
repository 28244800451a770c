"""Start-up and memory: cold and warm first gradients, cold first training steps, peak RSS.

    .venv/bin/python bench/report_startup.py                  # the table (about 2 minutes)
    .venv/bin/python bench/report_startup.py --double-table   # and the op-table experiment
    .venv/bin/python bench/report_startup.py --json out.json

Every figure comes from a fresh Python process. "Cold" means an empty compiled-kernel cache
(``BURNUMBA_CACHE_DIR`` set to a new empty folder), so the process compiles what it uses;
"warm" means a second process on that folder. Times run from before ``import burnumba`` to
the first result, and exclude the interpreter's own start-up (about 20 ms). Peak RSS is the
process's VmHWM; the compile runs in a child process, whose peak is reported apart.

``--double-table`` copies the package to a temporary folder, appends as many placeholder
map rows to its op table as it has rows, and times the cold first gradient of the tiny graph
with the real and the doubled table (three cold processes each): a program should pay for the
ops it uses, not for the size of the table.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PRELUDE = """
import json, os, resource, sys, time
t0 = time.perf_counter()
def peak_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
def report(**kw):
    kw["peak_mb"] = peak_mb()
    kw["children_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    kw["numba"] = "numba" in sys.modules
    print("RESULT " + json.dumps(kw))
"""

TINY = PRELUDE + """
import burnumba as bn
t_import = time.perf_counter() - t0
vg = bn.value_and_grad(lambda a, b: ((a + b) - (a * b + b ** 3)) ** 2 / 2, argnums=(0, 1))
value = vg(-41.0, 2.0)
report(seconds=time.perf_counter() - t0, import_s=t_import, value=value[0])
"""

TRAIN = PRELUDE + """
sys.path.insert(0, {here!r})
import _single_thread
import train_workloads as tw
import burnumba
t_import = time.perf_counter() - t0
step, info = tw.make_step("burnumba", {model!r}, {batch}, {dtype!r})
loss = step()
first = time.perf_counter() - t0
for _ in range({steps}):
    step()
report(seconds=first, import_s=t_import, loss=float(loss))
"""

TORCH = PRELUDE + """
sys.path.insert(0, {here!r})
import _single_thread
import train_workloads as tw
step, info = tw.make_step("torch", {model!r}, {batch}, {dtype!r})
for _ in range({steps}):
    step()
report(seconds=time.perf_counter() - t0)
"""


def run(code, cache, env=None, pythonpath=None):
    environ = dict(os.environ, BURNUMBA_CACHE_DIR=cache, **(env or {}))
    if pythonpath:
        environ["PYTHONPATH"] = os.pathsep.join([pythonpath] + [
            p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    done = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def train(model, batch, dtype, cache, steps=0):
    return run(TRAIN.format(here=HERE, model=model, batch=batch, dtype=dtype, steps=steps),
               cache)


def doubled_package(where):
    """A copy of burnumba whose op table has twice as many rows (placeholders at the end)."""
    pkg = os.path.join(where, "burnumba")
    shutil.copytree(os.path.join(ROOT, "burnumba"), pkg)
    shutil.copytree(os.path.join(ROOT, "kernels"), os.path.join(pkg, "kernels"))
    ops = os.path.join(pkg, "kernels", "ops.py")
    with open(ops) as fh:
        text = fh.read()
    n = 0                       # the rows, in ops.py, maps.py and the blocks_*.py modules
    for name in os.listdir(os.path.join(pkg, "kernels")):
        if name.endswith(".py"):
            with open(os.path.join(pkg, "kernels", name)) as fh:
                n += fh.read().count('    Op("')
    # one literal row per line: a rule is a Python function the generator reads back
    extra = ("\n# benchmark-only placeholders: the table twice as long, to check that programs "
             "pay\n# only for the rows they use\nROWS = ROWS + (\n" + "".join(
                 f'    Op("placeholder_{k}", 1, "map", lambda a, c: a * {1.0 + k / 1000.0} + c, '
                 f'da=lambda g: g),\n' if k % 2 == 0 else
                 f'    Op("placeholder_{k}", 2, "map", lambda a, b: a * b + {k}.0, '
                 f'da=lambda g: g, db=lambda g: g),\n'
                 for k in range(n)) + ")\n")
    text = text.replace("\nOPCODE = {row.name", extra + "\nOPCODE = {row.name")
    with open(ops, "w") as fh:
        fh.write(text)
    return where, n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--double-table", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--steps", type=int, default=300, help="training steps for the RSS runs")
    args = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        def fresh(name):
            return os.path.join(tmp, name)
        out["tiny_cold"] = run(TINY, fresh("tiny"))
        warm = [run(TINY, fresh("tiny")) for _ in range(5)]
        out["tiny_warm"] = min(warm, key=lambda r: r["seconds"])
        out["tiny_warm_median_s"] = statistics.median(r["seconds"] for r in warm)
        out["gpt_f32_cold"] = train("gpt", 1, "float32", fresh("a"))
        out["gpt_f64_after_f32"] = train("gpt", 1, "float64", fresh("a"))
        out["gpt_f64_cold"] = train("gpt", 1, "float64", fresh("b"))
        out["gpt_f32_after_f64"] = train("gpt", 1, "float32", fresh("b"))
        out["gpt_f32_warm"] = train("gpt", 1, "float32", fresh("a"))
        out["rss_gpt_b1_f32"] = train("gpt", 1, "float32", fresh("a"), args.steps)
        out["rss_gpt_b64_f32"] = train("gpt", 64, "float32", fresh("a"), args.steps // 3)
        try:
            out["rss_torch_gpt_b1_f32"] = run(TORCH.format(here=HERE, model="gpt", batch=1,
                                                           dtype="float32", steps=args.steps),
                                              fresh("a"))
        except RuntimeError as e:
            out["rss_torch_gpt_b1_f32"] = {"error": str(e).splitlines()[-1]}
        if args.double_table:
            where, n = doubled_package(fresh("doubled"))
            real = [run(TINY, fresh(f"real{k}"))["seconds"] for k in range(3)]
            double = [run(TINY, fresh(f"double{k}"), pythonpath=where)["seconds"]
                      for k in range(3)]
            out["double_table"] = {"rows": n, "real_s": real, "doubled_s": double,
                                   "change": statistics.median(double) /
                                   statistics.median(real) - 1}
    print_table(out)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


def print_table(out):
    compile_peak = max(out[k]["children_peak_mb"] for k in ("tiny_cold", "gpt_f32_cold",
                                                            "gpt_f64_cold"))
    rows = [
        ("cold: import + first value_and_grad, tiny graph", f"{out['tiny_cold']['seconds']:.2f} s"),
        ("warm: import + first value_and_grad, tiny graph",
         f"{out['tiny_warm']['seconds']:.3f} s (median of 5: {out['tiny_warm_median_s']:.3f} s;"
         f" import {out['tiny_warm']['import_s']:.3f} s)"),
        ("cold: import + first GPT training step, float32",
         f"{out['gpt_f32_cold']['seconds']:.2f} s"),
        ("cold: float64 GPT step after float32", f"{out['gpt_f64_after_f32']['seconds']:.2f} s"),
        ("cold: float64 GPT step, first", f"{out['gpt_f64_cold']['seconds']:.2f} s"),
        ("cold: float32 GPT step after float64", f"{out['gpt_f32_after_f64']['seconds']:.2f} s"),
        ("warm: import + first GPT training step, float32",
         f"{out['gpt_f32_warm']['seconds']:.3f} s"),
        ("peak RSS, GPT training, batch 1, float32", f"{out['rss_gpt_b1_f32']['peak_mb']:.1f} MB"),
        ("peak RSS, GPT training, batch 64, float32",
         f"{out['rss_gpt_b64_f32']['peak_mb']:.1f} MB"),
        ("peak RSS during a cold compile (the builder process)", f"{compile_peak:.0f} MB"),
    ]
    torch = out.get("rss_torch_gpt_b1_f32", {})
    if "peak_mb" in torch:
        rows.append(("peak RSS, torch GPT training, batch 1, float32 (same run)",
                     f"{torch['peak_mb']:.1f} MB (burnumba: "
                     f"{out['rss_gpt_b1_f32']['peak_mb'] / torch['peak_mb']:.2f} of it)"))
    numba = [k for k in ("tiny_warm", "gpt_f32_warm", "rss_gpt_b1_f32") if out[k]["numba"]]
    rows.append(("numba imported by a warm process", "yes: " + ", ".join(numba) if numba
                 else "no"))
    if "double_table" in out:
        d = out["double_table"]
        rows.append((f"cold tiny graph with the op table doubled (+{d['rows']} rows)",
                     f"{statistics.median(d['doubled_s']):.2f} s against "
                     f"{statistics.median(d['real_s']):.2f} s ({d['change']:+.1%})"))
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
