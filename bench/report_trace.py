"""The cost of tracing (issue #32, targets 5 and 6): microseconds per traced node, a lambda
made again on every call against the same function reused, and an LSTM's first call.

    .venv/bin/python bench/report_trace.py [--repeats 7] [--json out.json]

Methodology
-----------
* Trace µs/node: ``bn.trace(f, x)`` timed after a first one (which finds the kernel), per
  tape node; the median and the range of ``--repeats`` runs (the user's Python that builds
  the graph included, as a user pays it). Scalar: report_interp.py's random scalar graph
  (``--ops`` operations, softmaxes of stacked scalars included). Tensor: the LSTM below
  (matmuls, concatenations, slices, elementwise gates), differentiated in its parameters.
  Beside it, the same function run on the numpy values themselves, untraced (the two
  alternate): what the program's own Python and numpy cost, which a trace pays too.
* Recreated closures: ``bn.grad(lambda x: ...)(x)`` with the lambda written in the timed
  loop (a new function object each call) against ``g(x)`` of one ``g = bn.grad(f)``, in
  this thread's CPU time (``time.thread_time``: the waits of a loaded machine left out); the
  two loops alternate, ``--repeats`` pairs, and the ratio is taken per pair (median and
  range). Three cases: an array argument and no closure, an array
  argument and a closure over a captured array and a float, a Python float argument (the
  scalar fast path).
* LSTM first call: a 2-layer LSTM (input 16, hidden 64, 20 steps, batch 8, a linear head,
  mean squared error), ``bn.value_and_grad(loss)(params, x, y)``. "fresh process": a new
  Python process imports burnumba, then the first call is timed (trace, tape, kernel loaded
  from the disk cache: the kernels are built by a first child, not timed); "in process":
  the first call of a new function object equal to one already called (kernels in memory),
  by ``bn.trace``, which retraces.
* The machine is shared: the load average is printed; compare ratios within one run.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import burnumba as bn  # noqa: E402
from _child import print_table, run_child  # noqa: E402
from report_interp import random_graph  # noqa: E402


def _stats(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "all": xs}


def _fmt(s, digits=2):
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def trace_per_node(f, args, repeats):
    """The tape's nodes, and per node: µs of ``bn.trace(f, *args)`` and of ``f(*args)`` run
    on the numpy values themselves (the same Python, untraced: what the program costs
    without burnumba), alternating."""
    tape = bn.trace(f, *args)
    f(*args)
    times, plain = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        bn.trace(f, *args)
        t1 = time.perf_counter()
        f(*args)
        t2 = time.perf_counter()
        times.append((t1 - t0) / tape.n * 1e6)
        plain.append((t2 - t1) / tape.n * 1e6)
    return tape.n, _stats(times), _stats(plain)


def _cpu_per_call(call, n):
    """Seconds of this thread's CPU time per call (a loaded machine's waits left out)."""
    t0 = time.thread_time()
    for _ in range(n):
        call()
    return (time.thread_time() - t0) / n


def closures(repeats, calls):
    """Per case: reused and recreated µs per call, and their ratio per pair of loops."""
    x = np.linspace(0.1, 1.0, 8)
    w = np.linspace(-1.0, 1.0, 8)
    s = 0.5
    cases = {
        "array, no closure": (lambda: bn.grad(lambda x: np.sum(np.tanh(x) ** 2))(x),
                              bn.grad(lambda x: np.sum(np.tanh(x) ** 2)), (x,)),
        "array, closure over an array and a float": (
            lambda: bn.grad(lambda x: np.sum(np.tanh(x * w) ** 2) * s)(x),
            bn.grad(lambda x: np.sum(np.tanh(x * w) ** 2) * s), (x,)),
        "float (scalar fast path)": (lambda: bn.grad(lambda a: np.tanh(a) * a * s)(0.3),
                                     bn.grad(lambda a: np.tanh(a) * a * s), (0.3,)),
    }
    rows = []
    for name, (recreated, g, args) in cases.items():
        expected = g(*args)
        got = recreated()
        np.testing.assert_allclose(got, expected, rtol=1e-15)
        for _ in range(200):
            recreated()
            g(*args)
        reused_us, recreated_us, ratios = [], [], []
        for _ in range(repeats):
            a = _cpu_per_call(lambda: g(*args), calls) * 1e6
            b = _cpu_per_call(recreated, calls) * 1e6
            reused_us.append(a)
            recreated_us.append(b)
            ratios.append(b / a)
        rows.append({"case": name, "reused_us": _stats(reused_us),
                     "recreated_us": _stats(recreated_us), "ratio": _stats(ratios)})
    return rows


def lstm(rng_seed=0, steps=20, batch=8, hidden=64, inputs=16):
    """A 2-layer LSTM's loss and its arguments (params dict, x, y)."""
    rng = np.random.default_rng(rng_seed)
    params = {}
    for layer, n_in in enumerate((inputs, hidden)):
        params[f"W{layer}"] = rng.standard_normal((n_in + hidden, 4 * hidden)) * 0.1
        params[f"b{layer}"] = np.zeros(4 * hidden)
    params["Wo"] = rng.standard_normal((hidden, 1)) * 0.1
    x = rng.standard_normal((steps, batch, inputs))
    y = rng.standard_normal((batch, 1))

    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def loss(params, x, y):
        hs = [np.zeros((batch, hidden)), np.zeros((batch, hidden))]
        cs = [np.zeros((batch, hidden)), np.zeros((batch, hidden))]
        for t in range(steps):
            inp = x[t]
            for layer in range(2):
                z = np.concatenate([inp, hs[layer]], axis=1) @ params[f"W{layer}"] \
                    + params[f"b{layer}"]
                i, f, o, g = (sigmoid(z[:, :hidden]), sigmoid(z[:, hidden:2 * hidden]),
                              sigmoid(z[:, 2 * hidden:3 * hidden]), np.tanh(z[:, 3 * hidden:]))
                cs[layer] = f * cs[layer] + i * g
                hs[layer] = o * np.tanh(cs[layer])
                inp = hs[layer]
        return np.mean((inp @ params["Wo"] - y) ** 2)
    return loss, (params, x, y)


def lstm_child():
    t0 = time.perf_counter()
    loss, args = lstm()
    vg = bn.value_and_grad(loss)
    t1 = time.perf_counter()
    vg(*args)
    first = time.perf_counter() - t1
    nodes = vg.trace(*args).n
    t2 = time.perf_counter()
    bn.trace(lambda *a: loss(*a), *args)        # a new function: traced again, kernel in memory
    retrace = time.perf_counter() - t2
    print(json.dumps({"first_ms": first * 1e3, "retrace_ms": retrace * 1e3, "nodes": nodes,
                      "setup_ms": (t1 - t0) * 1e3}))


def lstm_first_calls(repeats):
    script = os.path.abspath(__file__)
    warm = run_child(script, {})                # builds (or finds) the kernels on disk
    if warm["status"] != "ok":
        return {"status": warm["status"]}
    runs = [run_child(script, {}) for _ in range(repeats)]
    bad = [r for r in runs if r["status"] != "ok"]
    if bad:
        return {"status": bad[0]["status"]}
    return {"status": "ok", "nodes": runs[0]["nodes"],
            "first_ms": _stats([r["first_ms"] for r in runs]),
            "retrace_ms": _stats([r["retrace_ms"] for r in runs])}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--ops", type=int, default=3000, help="scalar graph: operations")
    ap.add_argument("--calls", type=int, default=2000, help="calls per timed closure loop")
    ap.add_argument("--lstm-runs", type=int, default=3, help="fresh processes for the LSTM")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--child")
    args = ap.parse_args(argv)
    if args.child is not None:
        return lstm_child()
    print(f"# load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 64)
    n_scalar, scalar, scalar_np = trace_per_node(random_graph(args.ops), (x,), args.repeats)
    f, fargs = lstm()
    n_tensor, tensor, tensor_np = trace_per_node(f, fargs, args.repeats)
    head = ("program", "tape nodes", "trace µs/node: median (range)",
            "untraced numpy µs/node", "trace / numpy")
    print_table(head, [("scalar (random graph)", f"{n_scalar:,}", _fmt(scalar), _fmt(scalar_np),
                        f"{scalar['median'] / scalar_np['median']:.1f}"),
                       ("tensor (2-layer LSTM)", f"{n_tensor:,}", _fmt(tensor), _fmt(tensor_np),
                        f"{tensor['median'] / tensor_np['median']:.1f}")],
                args.markdown, {0}, 1)
    print()
    rows = closures(args.repeats, args.calls)
    head = ("bn.grad(lambda ...)(x)", "reused µs", "recreated µs", "recreated / reused")
    print_table(head, [(r["case"], _fmt(r["reused_us"]), _fmt(r["recreated_us"]),
                        _fmt(r["ratio"])) for r in rows], args.markdown, {0}, 1)
    print()
    first = lstm_first_calls(args.lstm_runs)
    if first["status"] == "ok":
        print_table(("2-layer LSTM (hidden 64, 20 steps)", "tape nodes", "ms: median (range)"),
                    [("first call, fresh process, kernels on disk", f"{first['nodes']:,}",
                      _fmt(first["first_ms"], 1)),
                     ("retrace, kernels in memory", f"{first['nodes']:,}",
                      _fmt(first["retrace_ms"], 1))], args.markdown, {0}, 1)
    else:
        print(f"LSTM: {first['status']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load": os.getloadavg()[0], "trace": {
                "scalar": {"nodes": n_scalar, "us_per_node": scalar,
                           "numpy_us_per_node": scalar_np},
                "tensor": {"nodes": n_tensor, "us_per_node": tensor,
                           "numpy_us_per_node": tensor_np}},
                "closures": rows, "lstm": first}, fh, indent=1)


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
