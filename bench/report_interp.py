"""Large random scalar graphs (issue #14): burnumba's sweep against a hand-written C switch
interpreter over the same flat arrays, and the cost of tracing per node.

    .venv/bin/python bench/report_interp.py                      # 10^4 and 10^5 tape nodes
    .venv/bin/python bench/report_interp.py --ops 2000 --repeats 3 --markdown

Methodology
-----------
* The graph (``random_graph``): ``--ops`` operations drawn with a seeded numpy Generator on
  a pool of scalars that starts as the 64 elements of the input x (uniform in [-1, 1]); each
  takes its operands among the 64 newest pool values, and every result stays in about
  [-1, 1] so no value overflows or goes subnormal: ``tanh(a + b)``, ``sin(a - b)``, ``a * b``,
  ``exp(a) * 0.36``, ``a / (2 + b)``, ``log(1.5 + a)``, a mean of 2-7 values (the n-ary
  ``sum`` row), and a softmax of 2-5 values packed into an array (a ``gather``, the
  ``softmax`` row, then one ``gather`` per element taken back). The output is the sum of
  the last 100 values. One op above is one to three tape nodes; the table counts tape nodes.
* Tracing: ``bn.trace(f, x)`` after a first one (which also finds or builds the kernel),
  the best of ``--repeats`` runs, divided by the tape's nodes
  (the user's Python that builds the graph included, as a user pays it).
* burnumba: ``bn.value_and_grad(f)(x)``, warmed up, ``--calls`` calls timed together, the
  median of ``--repeats`` such loops, per call and per tape node.
* C: ``bench/c_sweep.c``, built here with the system C compiler (``cc``, ``--cflags``,
  default ``-O2``; the opcodes passed as -D flags from the op table) and called through
  ctypes on a copy of the tape's own arrays (``tape.I``, ``tape.F0``): forward, zero the
  gradients, reverse, with the same formulas as the op table. Every node's value must equal
  burnumba's to 1e-12 (relative) and every node's gradient to 1e-12 of the largest one
  before any time is reported (libm and numba's math may differ in the last bit). Without
  a C compiler the C columns say so and the rest still runs.
* CasADi (when installed): the same graph built on ``casadi.SX`` symbols (the same draws;
  softmax written out as ``exp(v) / sum(exp(v))``, since the values stay in [-1, 1]), its
  gradient by CasADi's reverse mode (``casadi.gradient``), both in one ``casadi.Function``
  evaluated by CasADi's SX virtual machine. The timed call is the Function called from
  Python on a numpy array, the value and gradient read back as numpy (``Function.call`` plus
  ``full()``), which is what a user of CasADi from Python pays. Its value and gradient must
  equal burnumba's to 1e-12 (relative) before any time is reported.
* One thread; the load average is printed.
"""
import argparse
import ctypes
import json
import os
import shutil
import time

import numpy as np

import burnumba as bn
import burnumba.numpy as bnp
from _child import load_compiled, time_per_call
from report_scalar import calls_within
from burnumba.kernels import OPCODE, layout

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = 64
C_ROWS = ("input", "const", "add", "subtract", "multiply", "divide", "exp", "log", "sin",
          "tanh", "gather", "sum", "softmax")


class _Burnumba:
    """The graph's n-ary parts, written with burnumba."""
    mean = staticmethod(bnp.mean)
    total = staticmethod(bnp.sum)

    @staticmethod
    def softmax(values):
        s = bn.softmax(bnp.array(values))
        return [s[j] for j in range(len(values))]


class _Casadi:
    """The same parts on casadi.SX scalars (the values stay in [-1, 1]: no shift needed)."""

    @staticmethod
    def mean(values):
        return sum(values[1:], values[0]) / len(values)

    @staticmethod
    def total(values):
        return sum(values[1:], values[0])

    @staticmethod
    def softmax(values):
        import casadi
        e = [casadi.exp(v) for v in values]
        s = sum(e[1:], e[0])
        return [v / s for v in e]


def random_graph(ops, seed=0, lib=_Burnumba):
    """f(x) of ``ops`` random operations (see the module docstring), built with ``lib``'s
    n-ary parts (burnumba's, or CasADi's for its column)."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(8, size=ops, p=[.15, .15, .2, .1, .1, .1, .1, .1])
    picks = rng.integers(0, 1 << 30, size=(ops, 8))

    def f(x):
        pool = [x[i] for i in range(INPUTS)]

        def pick(r):
            return pool[-1 - r % min(len(pool), 64)]

        for k, pk in zip(kinds, picks):
            a, b = pick(pk[0]), pick(pk[1])
            if k == 0:
                pool.append(np.tanh(a + b))
            elif k == 1:
                pool.append(np.sin(a - b))
            elif k == 2:
                pool.append(a * b)
            elif k == 3:
                pool.append(np.exp(a) * 0.36)
            elif k == 4:
                pool.append(a / (2.0 + b))
            elif k == 5:
                pool.append(np.log(1.5 + a))
            elif k == 6:
                pool.append(lib.mean([pick(pk[3 + j % 5]) for j in range(2 + pk[2] % 6)]))
            else:
                m = 2 + pk[2] % 4
                pool.extend(lib.softmax([pick(pk[3 + j]) for j in range(m)]))
        return lib.total(pool[-100:])
    return f


def build_c(cflags):
    """The C interpreter as a ctypes function, or the reason there is none."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        return None, "no C compiler (cc) on PATH"
    defines = [f"-DOP_{name.upper()}={OPCODE[name]}" for name in C_ROWS]
    lib, err = load_compiled([cc, *cflags.split(), "-fPIC", "-shared", *defines,
                              os.path.join(HERE, "c_sweep.c"), "-o", "{out}", "-lm"],
                             "c_sweep.so")
    if lib is None:
        return None, err
    fn = lib.value_and_grad
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]
    return fn, " ".join([os.path.basename(cc), *cflags.split()])


def casadi_call(ops, x):
    """CasADi's value-and-gradient call of the same graph, or None when it is not installed."""
    try:
        import casadi
    except ImportError:
        return None
    if hasattr(casadi.GlobalOptions, "setNumpyMode"):
        casadi.GlobalOptions.setNumpyMode(-1)     # np.tanh(SX) -> casadi.tanh, silently
    sx = casadi.SX.sym("x", INPUTS)
    out = random_graph(ops, lib=_Casadi)([sx[i] for i in range(INPUTS)])
    fn = casadi.Function("f", [sx], [out, casadi.gradient(out, sx)])

    def call():
        value, grad = fn(x)
        return float(value), grad.full().ravel()
    return call


def _calls(call, seconds, calls):
    """``calls``, or (0) as many calls as take about ``seconds`` (report_scalar's estimate)."""
    return calls or calls_within(call, 10 ** 9, seconds)


def measure(ops, calls, repeats, c_fn, seconds=0.3):
    f = random_graph(ops)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, INPUTS)
    tape = bn.trace(f, x)             # the first trace also finds (or builds) the kernel
    trace_s = min(_trace_time(f, x) for _ in range(repeats))
    n = tape.n
    vg = bn.value_and_grad(f)
    value, grad = vg(x)
    for _ in range(20):
        vg(x)
    bn_s = time_per_call(lambda: vg(x), _calls(lambda: vg(x), seconds, calls),
                         repeats)[0]
    row = {"ops": ops, "nodes": n, "trace_us_per_node": trace_s / n * 1e6,
           "burnumba_us": bn_s * 1e6, "burnumba_ns_per_node": bn_s / n * 1e9}
    if c_fn is not None:
        ints = np.ascontiguousarray(tape.I)
        F = tape.F0.copy()
        start, size = tape.in_slots[0][:2]
        F[n + start:n + start + size] = x             # the input's values (F0 has none)
        err = ctypes.c_int64(0)
        ip, fp = ints.ctypes.data, F.ctypes.data
        c_value = c_fn(ip, fp, ctypes.byref(err))
        if err.value:
            raise RuntimeError(f"the C interpreter met an unknown opcode at node {err.value - 1}")
        # every node's value and gradient, against a burnumba run of the same arrays (the
        # input's own gradient is mostly cancellation, too small to compare on its own)
        state = tape.state()
        state.write([x])
        state.run(layout.MODE_VALUE_AND_GRAD)
        V = int(tape.off[-1])
        np.testing.assert_allclose(c_value, value, rtol=1e-12)
        np.testing.assert_allclose(F[n:n + V], state.val, rtol=1e-12, atol=1e-300)
        bn_grad = state.grad[:V]
        diff = np.abs(F[n + V:n + 2 * V] - bn_grad).max() / np.abs(bn_grad).max()
        if not diff <= 1e-12:
            raise AssertionError(f"C and burnumba gradients differ by {diff:.1e} (relative)")
        row["c_max_grad_diff"] = float(diff)
        for _ in range(20):
            c_fn(ip, fp, ctypes.byref(err))
        c_call = lambda: c_fn(ip, fp, ctypes.byref(err))                 # noqa: E731
        c_s = time_per_call(c_call, _calls(c_call, seconds, calls), repeats)[0]
        row.update(c_us=c_s * 1e6, c_ns_per_node=c_s / n * 1e9, ratio=bn_s / c_s)
    ca_call = casadi_call(ops, x)
    if ca_call is not None:
        ca_value, ca_grad = ca_call()
        np.testing.assert_allclose(ca_value, value, rtol=1e-12)
        np.testing.assert_allclose(ca_grad, grad, rtol=1e-12, atol=1e-12 * np.abs(grad).max())
        for _ in range(20):
            ca_call()
        ca_s = time_per_call(ca_call, _calls(ca_call, seconds, calls // 2), repeats)[0]
        row.update(casadi_us=ca_s * 1e6, casadi_ratio=ca_s / bn_s)
    return row


def _trace_time(f, x):
    t = time.perf_counter()
    bn.trace(f, x)
    return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default="6000,60000",
                    help="comma-separated op counts (tape nodes are about 1.7x)")
    ap.add_argument("--calls", type=int, default=0,
                    help="calls per timed loop (0: as many as take --seconds)")
    ap.add_argument("--seconds", type=float, default=0.3,
                    help="a timed loop's length when --calls is 0 (default 0.3)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cflags", default="-O2")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    c_fn, c_desc = build_c(args.cflags)
    print(f"# load average {os.getloadavg()[0]:.2f}; C: {c_desc}", flush=True)
    rows = []
    for ops in (int(s) for s in args.ops.split(",")):
        rows.append(measure(ops, args.calls, args.repeats, c_fn, args.seconds))
    head = ("tape nodes", "trace µs/node", "burnumba µs/call", "ns/node", "C µs/call",
            "C ns/node", "burnumba / C", "CasADi µs/call", "CasADi / burnumba")
    table = []
    for r in rows:
        c = (f"{r['c_us']:,.1f}", f"{r['c_ns_per_node']:.2f}", f"{r['ratio']:.2f}×") \
            if "c_us" in r else ("—", "—", "—")
        ca = (f"{r['casadi_us']:,.1f}", f"{r['casadi_ratio']:.2f}×") \
            if "casadi_us" in r else ("not installed", "—")
        table.append((f"{r['nodes']:,}", f"{r['trace_us_per_node']:.2f}",
                      f"{r['burnumba_us']:,.1f}", f"{r['burnumba_ns_per_node']:.2f}", *c, *ca))
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---:" for _ in head) + "|")
        for t in table:
            print("| " + " | ".join(t) + " |")
    else:
        widths = [max(len(x) for x in col) for col in zip(head, *table)]
        for t in (head, *table):
            print("  ".join(x.rjust(w) for x, w in zip(t, widths)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
