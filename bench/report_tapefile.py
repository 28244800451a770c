"""Save and load a tape (the paper's experiments 3 and 4): burnumba's tape file and pickle
against torch.save / torch.load and raw numpy bytes of the same values; print a table.

    .venv/bin/python bench/report_tapefile.py                  # 5,000 saves and loads each
    .venv/bin/python bench/report_tapefile.py --n 200          # a smoke test
    .venv/bin/python bench/report_tapefile.py --markdown --json tapefile.json

Methodology
-----------
* The tape is the micrograd README graph (``workloads.py``'s small graph at a=-4, b=2),
  traced once with ``bn.trace``. Its values are two arrays, ``I`` (int32) and ``F0``
  (float64); every method below saves and loads those two arrays, so the bytes are the same.
* burnumba: ``tape.save`` / ``bn.load_tape``, to a file in a temporary directory and to an
  in-memory ``io.BytesIO``. A load includes everything before the tape can run: reading the
  .npz (``allow_pickle=False``), checking format and op-table digest, validating every node,
  rebuilding the metadata and finding the kernel (already loaded in this process). And
  ``pickle.dumps`` / ``pickle.loads`` of the Tape (the same checks on load).
* torch: ``torch.save`` / ``torch.load`` (``weights_only=True``, torch's default) of the two
  arrays as tensors, to a file and to a BytesIO. A torch load gives tensors, not a runnable
  graph: it is the floor of a general-purpose format, as numpy's bytes are the floor of all.
* numpy: ``a.tobytes()`` and ``np.frombuffer`` of the two arrays (no file, no metadata).
* Each method runs ``--n`` saves, then ``--n`` loads (the last saved data), in one Python loop
  timed with ``time.perf_counter``; the figure is the median over ``--repeats`` loops of
  (loop time / n), in microseconds. The garbage collector stays on. One process runs
  everything; the loaded tape is run once and its value and gradient printed (golden:
  24.70408163265306, 138.83381924198252, 645.5772594752186).
"""
import argparse
import io
import json
import os
import pickle
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import time_per_call  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

import burnumba as bn  # noqa: E402


def small_tape():
    f, (a, b), _ = WORKLOADS["small-graph"]
    return bn.trace(lambda a, b: f(a, b, bn.relu), a, b, argnums=(0, 1))


def methods(tape, tmp):
    """name -> (save(), load(saved) -> object, size(saved) in bytes)."""
    path = os.path.join(tmp, "tape.npz")
    arrays = {"I": tape.I, "F0": tape.F0}

    def to_buffer(write):
        def save():
            buf = io.BytesIO()
            write(buf)
            return buf.getvalue()
        return save

    out = {
        "burnumba file (save / load_tape)": (lambda: tape.save(path) or path, bn.load_tape,
                                              lambda s: os.path.getsize(path)),
        "burnumba BytesIO": (to_buffer(tape.save), lambda s: bn.load_tape(io.BytesIO(s)), len),
        "burnumba pickle (dumps / loads)": (lambda: pickle.dumps(tape), pickle.loads, len),
        "numpy tobytes / frombuffer": (
            lambda: (tape.I.tobytes(), tape.F0.tobytes()),
            lambda s: (np.frombuffer(s[0], np.int32), np.frombuffer(s[1], np.float64)),
            lambda s: len(s[0]) + len(s[1])),
    }
    try:
        import torch
    except ImportError:
        return out
    tensors = {k: torch.from_numpy(np.array(v)) for k, v in arrays.items()}
    tpath = os.path.join(tmp, "tape.pt")
    out["torch file (save / load)"] = (lambda: torch.save(tensors, tpath) or tpath,
                                       lambda s: torch.load(s, weights_only=True),
                                       lambda s: os.path.getsize(tpath))
    out["torch BytesIO"] = (to_buffer(lambda buf: torch.save(tensors, buf)),
                            lambda s: torch.load(io.BytesIO(s), weights_only=True), len)
    return out


def timed(fn, n, repeats):
    """Median microseconds per call."""
    return time_per_call(fn, n, repeats)[0] * 1e6


def run(n, repeats):
    tape = small_tape()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (save, load, size) in methods(tape, tmp).items():
            saved = save()
            loaded = load(saved)
            for _ in range(min(n, 50)):             # warm-up: imports, caches
                load(save())
            rows.append({"method": name, "save_us": timed(save, n, repeats),
                         "load_us": timed(lambda: load(saved), n, repeats),
                         "bytes": size(saved)})
            if name.startswith("burnumba"):
                value, (da, db) = loaded.value_and_grad(-4.0, 2.0)
                rows[-1]["value_and_grad"] = [value, da, db]
    base = rows[0]
    for r in rows:
        r["save_ratio"] = r["save_us"] / base["save_us"]
        r["load_ratio"] = r["load_us"] / base["load_us"]
    return {"n": n, "repeats": repeats, "tape_nodes": tape.n, "tape_bytes": tape.nbytes,
            "rows": rows}


def print_table(report, markdown):
    head = ["method", "save us", "load us", "bytes", "save / bn file", "load / bn file"]
    table = [[r["method"], f"{r['save_us']:.1f}", f"{r['load_us']:.1f}", str(r["bytes"]),
              f"{r['save_ratio']:.2f}", f"{r['load_ratio']:.2f}"] for r in report["rows"]]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(x) for x in col) for col in zip(head, *table)]
        for row in [head] + table:
            print("  ".join(x.ljust(w) if k == 0 else x.rjust(w)
                            for k, (x, w) in enumerate(zip(row, widths))))
    for r in report["rows"]:
        if "value_and_grad" in r:
            print(f"{r['method']}: loaded tape gives value, dg/da, dg/db = "
                  + ", ".join(repr(v) for v in r["value_and_grad"]))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=5000, help="saves and loads per loop (5000)")
    p.add_argument("--repeats", type=int, default=3, help="loops per method (median; 3)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    report = run(args.n, args.repeats)
    print(f"{'### ' if args.markdown else ''}Save and load the small-graph tape "
          f"({report['tape_nodes']} nodes, {report['tape_bytes']} bytes of arrays), "
          f"{args.n} times each, median of {args.repeats} loops\n")
    print_table(report, args.markdown)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
