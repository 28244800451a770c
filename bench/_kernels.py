"""The kernels the short benchmark run uses, built before its stages on every core at once.

On an empty kernel cache the stages of ``bench/report.py`` compile about 30 kernels, one
after another, inside the timed stages (98 s of one core on the project's VM, 2026-12-05).
``kernels.json`` lists them (their rows, tensor rows, dtype and forward mode, and how long
each took); ``prebuild`` builds the ones the cache lacks in one process per core before the
first stage, largest first, each process taking the next on the shortest list. The stages
then load them. One of the processes also compiles the sparse derivatives' numba passes
(cached on disk by numba; a job of about 15 s in the schedule). A list gone stale (programs
that use other rows now) costs nothing but time: a stage builds what it does not find.

    python bench/_kernels.py record [cache folder]   # rewrite kernels.json from a cache
    python bench/_kernels.py build                    # what report.py does first

The builders skip the cache's build lock, as tests/conftest.py's do: a kernel's files are
written atomically under a key of their content, so two processes that build one row
object write the same bytes, and a reader never sees half a file.
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "kernels.json")
# the compile of the sparse derivatives' numba passes, scheduled as a job of this length
WARM = {"seconds": 15.0}

_BUILDER = """
import contextlib, json, sys
from burnumba.kernels import _build, cache, engine
cache.build_lock = contextlib.nullcontext
engine._run_builder = lambda request, *what: _build.serve(request)
for k in json.loads(sys.argv[1]):
    engine.kernel(k["rows"], k["tensor_rows"], k["dtype"], jvp=k["jvp"])
if sys.argv[2:] == ["warm"]:
    # the sparse derivatives' compiled passes (numba functions cached on disk: the pattern
    # pass and the colourings, about 15 s of one core on an empty cache), on a tiny problem
    import numpy as np
    import burnumba as bn
    x = np.linspace(0.5, 1.5, 8)
    bn.sparse_hessian(lambda x: np.sum((x[1:] - x[:-1] ** 2) ** 2))(x)
    bn.sparse_jacobian(lambda x: x[1:] * x[:-1] - x[1:])(x)
"""


def record(folder=None):
    """Write kernels.json from the kernel manifests in a cache folder (default: this
    process's cache), after a short run on an empty cache."""
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


def _missing(listed):
    """The listed kernels the cache does not hold (asked without building one)."""
    code = ("import json, os, sys\nfrom burnumba.kernels import cache, keys\n"
            "ks = json.loads(sys.stdin.read())\n"
            "print(json.dumps([k for k in ks if not os.path.exists(cache.path('lib', "
            "keys.kernel_key(sorted(k['rows']), sorted(k['tensor_rows']), k['dtype'], "
            "k['jvp']) + '.so'))]))")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(listed),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def prebuild(processes=None):
    """Build the listed kernels the cache lacks, one process per core; returns how many."""
    if not os.path.exists(LIST):
        return 0
    with open(LIST) as fh:
        listed = json.load(fh)
    todo = _missing(listed)
    if not todo:
        return 0
    n = max(1, min(processes or os.cpu_count() or 1, len(todo)))
    shares, load = [[] for _ in range(n)], [0.0] * n
    jobs = todo + [WARM]                   # the sparse passes: one more job of its own
    for k in sorted(jobs, key=lambda k: -k["seconds"]):     # longest first, to the lightest
        j = load.index(min(load))
        shares[j].append(k)
        load[j] += k["seconds"]
    builders = []
    for share in shares:
        warm = any(k is WARM for k in share)
        share = [k for k in share if k is not WARM]
        builders.append(subprocess.Popen([sys.executable, "-c", _BUILDER, json.dumps(share)]
                                         + (["warm"] if warm else [])))
    for b in builders:
        b.wait()
    return len(todo)


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"]:
        print(f"{record(sys.argv[2] if len(sys.argv) > 2 else None)} kernels in {LIST}")
    elif sys.argv[1:2] == ["build"]:
        print(f"built {prebuild()} kernels")
    else:
        sys.exit(__doc__)
