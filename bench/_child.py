"""What the bench reports share: a measurement run in a fresh child process, a short error
text, whether a peer is installed, a timed loop, and a table printed aligned or as
Markdown."""
import ctypes
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def time_per_call(call, n, repeats):
    """Median over ``repeats`` of (one loop of n calls) / n, in seconds; and every repeat."""
    per_call = []
    for _ in range(repeats):
        loop = itertools.repeat(None, n)
        t0 = time.perf_counter()
        for _ in loop:
            call()
        per_call.append((time.perf_counter() - t0) / n)
    return statistics.median(per_call), per_call


def short_error(e, limit=160):
    """``Type: first line of the message``, at most ``limit`` characters."""
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}"[:limit]


def installed(module):
    return importlib.util.find_spec(module) is not None


def run_child(script, spec, timeout=1800, env=None, cpus=None):
    """Run ``script --child <spec as JSON>`` and return the JSON object its last stdout line
    holds, with ``status`` "ok" and ``process_s`` (the child's wall time, unless it reported
    its own); on a failure, ``status`` "error: ..." (the
    last stderr line) and the stderr tail, or ``timed_out`` True. ``cpus``: the CPUs the
    child runs on from its start (``_single_thread.pin``), else the parent's."""
    from _single_thread import pinned
    t0 = time.perf_counter()
    try:
        with pinned(cpus):
            proc = subprocess.run([sys.executable, script, "--child", json.dumps(spec)],
                                  env=env, capture_output=True, text=True, timeout=timeout,
                                  check=False)
    except subprocess.TimeoutExpired:
        return {"status": f"error: timed out after {timeout} s", "timed_out": True,
                "process_s": timeout}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return {"status": f"error: {(err[-1].strip() if err else 'no output')[:200]}",
                "stderr": "\n".join(err[-30:]), "process_s": time.perf_counter() - t0}
    r = json.loads(lines[-1])
    r["status"] = "ok"
    r.setdefault("process_s", time.perf_counter() - t0)     # unless the child timed itself
    return r


def load_compiled(cmd, name):
    """Compile a shared library with ``cmd`` (a list whose ``{out}`` item is replaced by the
    library's path, in a temporary folder) and load it with ctypes: (the library, None), or
    (None, the compiler's last error line). The folder is removed once the library is loaded
    (its mapping outlives the file), so no run leaves a file behind."""
    with tempfile.TemporaryDirectory(prefix="burnumba-bench-") as tmp:
        out = os.path.join(tmp, name)
        proc = subprocess.run([out if a == "{out}" else a for a in cmd], capture_output=True,
                              text=True, check=False)
        if proc.returncode:
            err = proc.stderr.strip().splitlines() or ["no output"]
            return None, f"{os.path.basename(cmd[0])} failed: {err[-1][:120]}"
        return ctypes.CDLL(out), None


def print_table(head, table, markdown, left, lead):
    """The rows under ``head``; columns in ``left`` align left. A status row (its cell after
    the first ``lead`` cells is empty) prints its message after those cells, and the message
    does not widen its own column."""
    if markdown:
        print("| " + " | ".join(h.replace("|", "\\|") for h in head) + " |")
        print("|" + "|".join("---" if i in left else "---:" for i in range(len(head))) + "|")
        for row in table:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(x)) for x in col) for col in
              zip(head, *[r if r[lead + 1] != "" else r[:lead] + ("",) * (len(r) - lead)
                          for r in table])]
    for row in (head, *table):
        if row is not head and row[lead + 1] == "":
            print("  ".join(str(x).ljust(w) for x, w in zip(row[:lead], widths)) + "  "
                  + str(row[lead]))
            continue
        print("  ".join(str(x).ljust(w) if i in left else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(row, widths))).rstrip())
