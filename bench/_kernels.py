"""The kernels the short benchmark run uses, built before its stages on every core at once.

On an empty kernel cache the stages of ``bench/report.py`` compile about 35 kernels, one
after another, inside the timed stages (98 s of one core on the project's VM, 2026-12-05).
``kernels.json`` lists them (their rows, tensor rows, dtype and forward mode, and how long
each took). ``prebuild`` builds, before the first stage, one kernel per (dtype, forward
mode) that covers every listed kernel of that kind the cache lacks: the union of their
rows. The engine serves a program from the smallest cached kernel that covers its rows, so
the stages load these, as a program does from a cache that holds a larger kernel (the test
suite's kernels of every op, on the project's VM). A kernel compiles each of its rows in
its dispatcher, so the 35 listed kernels compiled 312 rows and the 3 unions compile 69: in
a fresh clone on the 2-core VM (empty caches) the prebuild took 134 s with the 35 and 87 s
with the unions (2026-12-07). A larger kernel runs a program's tape with the same
instructions: valgrind counted 106,060 per hvp call of the Rosenbrock case on its own
kernel and 105,985 on the kernel of every op (2026-12-07). The unions and the optimiser's
kernels of each dtype are one request to burnumba's builder, which spreads its compiles
(dispatchers, row objects) over the cores; beside it, one process compiles the sparse
derivatives' numba passes (cached on disk by numba; about 11 s). On an empty cache this
took 42 s before the builder spread its compiles and 33 s after (2026-12-07). A list gone
stale (programs that use other rows now) costs nothing but time: a stage builds what it
does not find.

    python bench/_kernels.py record [cache folder]   # rewrite kernels.json from a cache
                                                      # (a run with --no-prebuild filled)
    python bench/_kernels.py build                    # what report.py does first

A kernel's files are written atomically under a key of their content, so two processes
that build one row object write the same bytes, and a reader never sees half a file.
"""
import glob
import json
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "kernels.json")
def _warm():
    """The sparse derivatives' compiled passes (numba functions cached on disk: the pattern
    pass and the colourings, about 11 s of one core on an empty cache), on a tiny problem's
    patterns, in a process of its own. Its tapes run on burnumba's python engine (the
    generated source, uncompiled): on the compiled one, the first trace would build a small
    kernel of its own while the unions (which serve the sparse stage) are built."""
    os.environ["BURNUMBA_ENGINE"] = "python"          # this process runs only this job
    import numpy as np

    import burnumba as bn
    from burnumba.transforms import colouring
    x = np.linspace(0.5, 1.5, 8)
    h = bn.hessian_sparsity(lambda x: np.sum((x[1:] - x[:-1] ** 2) ** 2))(x)
    colouring.star_recovery(h, colouring.hessian_colouring(h)[0])
    j = bn.jacobian_sparsity(lambda x: x[1:] * x[:-1] - x[1:])(x)
    colouring.row_colouring(j)


def record(folder=None):
    """Write kernels.json from the kernel manifests in a cache folder (default: this
    process's cache), after a short run on an empty cache with ``--no-prebuild`` (so that
    each program built its own kernel, not the unions)."""
    if folder is None:
        from burnumba.kernels import cache
        folder = cache.path("lib", "")
    found = glob.glob(os.path.join(folder, "**", "k*.json"), recursive=True)
    out = []
    for path in found:
        with open(path) as fh:
            m = json.load(fh)
        if m.get("kind") == "kernel":
            out.append({"rows": m["rows"], "tensor_rows": m["tensor_rows"],
                        "dtype": m["dtype"], "jvp": m["jvp"], "seconds": m.get("seconds", 0)})
    out.sort(key=lambda k: (-k["seconds"], k["dtype"], k["rows"]))
    with open(LIST, "w") as fh:                              # a kernel per line
        fh.write("[\n" + ",\n".join(json.dumps(k) for k in out) + "\n]\n")
    return len(out)


# run in a fresh process (this one must not import burnumba's kernels before the pool's
# processes start): which listed kernels no cached kernel covers (the engine's own test)
_MISSING = """
import json, sys
from burnumba.kernels import engine
print(json.dumps([k for k in json.loads(sys.stdin.read()) if not engine.cached_covers(
    frozenset(k["rows"]) | engine.LEAVES, frozenset(k["tensor_rows"]), k["dtype"], k["jvp"])]))
"""


def _missing(listed):
    """The listed kernels the cache does not cover (asked without building one)."""
    done = subprocess.run([sys.executable, "-c", _MISSING], input=json.dumps(listed),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def prebuild():
    """Build the unions of the listed kernels the cache lacks (``unions``) and the
    optimiser kernels, in one request to burnumba's builder (which spreads its compiles
    over the cores), while the sparse passes compile in a process of their own; returns
    how many kernels it asked for."""
    if not os.path.exists(LIST):
        return 0
    with open(LIST) as fh:
        listed = json.load(fh)
    todo = _missing(listed)
    if not todo:
        return 0
    kernels = unions(todo)
    request = {"kernels": [[k["rows"], k["tensor_rows"], k["dtype"], k["jvp"]] for k in kernels],
               "updates": sorted({k["dtype"] for k in todo})}
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        warm = pool.submit(_warm)
        subprocess.run([sys.executable, "-m", "burnumba.kernels._build", json.dumps(request)],
                       check=True, stdout=subprocess.DEVNULL)
        warm.result()
    return len(kernels)


def unions(listed):
    """One kernel per (dtype, forward mode) that covers each listed kernel of that kind: the
    union of their rows and of their tensor rows."""
    out = {}
    for k in listed:
        u = out.setdefault((k["dtype"], k["jvp"]), {"rows": set(), "tensor_rows": set(),
                                                   "dtype": k["dtype"], "jvp": k["jvp"]})
        u["rows"] |= set(k["rows"])
        u["tensor_rows"] |= set(k["tensor_rows"])
    return [dict(u, rows=sorted(u["rows"]), tensor_rows=sorted(u["tensor_rows"]))
            for u in out.values()]


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"]:
        print(f"{record(sys.argv[2] if len(sys.argv) > 2 else None)} kernels in {LIST}")
    elif sys.argv[1:2] == ["build"]:
        print(f"built {prebuild()} kernels")
    else:
        sys.exit(__doc__)
