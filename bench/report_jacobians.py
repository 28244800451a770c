"""Per-item Jacobians (issue #32, target 4): the (2, 12) Jacobian of a bundle-adjustment
reprojection residual at each of N items, by burnumba, jax.jit and hand-written C++.

    .venv/bin/python bench/report_jacobians.py [--items 10000] [--repeats 7] [--json out.json]

Method (float64, one thread each, bench/_single_thread.py; all in this process):

* the workload is ``jacobian_workloads.py``'s: Ceres's SnavelyReprojectionError, 12 inputs
  and 2 outputs per item, every item its own camera and point;
* burnumba: ``bn.vmap(bn.jacfwd(residual))`` and ``bn.vmap(bn.jacrev(residual))``, one
  thread (``threads=1``; vmap's default is every core); jax: ``jax.jit(jax.vmap(
  jax.jacfwd(...)))`` and ``jax.jacrev``, synchronous (``block_until_ready``); C++:
  ``cpp_jacobians.cpp``, the residual as a template on its scalar type and a 12-direction
  Jet (Ceres's forward-mode dual number), built here with ``c++ -O3 -march=native``
  (skipped without a compiler). Each system's faster mode is its row's time;
* every result is checked before timing: the C++ Jacobians against central differences
  on the first 20 items (relative 1e-7), every system against the C++ (relative 1e-10);
* per call: the median of ``--repeats`` repeats of a loop of calls lasting ~0.1 s; the
  ratio is the system's time over the C++'s. Nothing asserts on time.
"""
import _single_thread  # noqa: F401,I001  (first: pins every library to one thread)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import jacobian_workloads as jw  # noqa: E402
from _child import installed, short_error, time_per_call  # noqa: E402

# C++ first: every other system is checked against its Jacobians
SYSTEMS = {"C++ (Jets)": jw.make_cpp, "burnumba": jw.make_burnumba, "jax.jit": jw.make_jax}
MODES = {"C++ (Jets)": ("fwd",), "burnumba": ("fwd", "rev"), "jax.jit": ("fwd", "rev")}


def _calls_for(call, target_s=0.1):
    t0 = time.perf_counter()
    call()
    one = max(time.perf_counter() - t0, 1e-6)
    return max(1, min(1000, int(target_s / one)))


def measure(items, repeats):
    x, observed = jw.data(items)
    ref_fd = jw.central_differences(x[:20], observed[:20])
    rows, modes, reference = {}, {}, None
    for system, make in SYSTEMS.items():
        if system == "jax.jit" and not installed("jax"):
            rows[system] = {"status": "jax not installed"}
            continue
        best = None
        for how in MODES[system]:
            try:
                t0 = time.perf_counter()
                call, J = make(items, how)
                first = time.perf_counter() - t0
            except Exception as e:               # no compiler, a peer that fails: a row says so
                rows.setdefault(system, {"status": short_error(e)})
                continue
            if system == "C++ (Jets)":
                err = np.max(np.abs(J[:20] - ref_fd)) / np.max(np.abs(ref_fd))
                if err > 1e-7:
                    raise SystemExit(f"C++ Jacobians differ from central differences: {err}")
                reference = J
            if reference is not None:
                err = np.max(np.abs(J - reference)) / np.max(np.abs(reference))
                if err > 1e-10:
                    raise SystemExit(f"{system} {how}: relative error {err:.1e} against C++")
            n = _calls_for(call)
            med, per = time_per_call(call, n, repeats)
            r = {"status": "ok", "mode": how, "s_per_call": med, "repeat_s_per_call": per,
                 "first_call_s": first, "calls": n}
            if best is None or med < best["s_per_call"]:
                best = r
            modes[f"{system} {how}"] = med
        if best is not None:
            rows[system] = best
    return rows, modes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=jw.N_ITEMS)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    load = os.getloadavg()
    print(f"# reprojection Jacobians (2 x 12) at {args.items:,} items, float64, one thread "
          f"each; load {load[0]:.2f}, {platform.machine()}, C++: c++ {jw.CXXFLAGS}")
    rows, modes = measure(args.items, args.repeats)
    cpp = rows.get("C++ (Jets)", {})
    print("\n| system | mode | us/call | ns/item | repeats min-max (us) | x the C++ time "
          "| 1st call s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for system in SYSTEMS:
        r = rows.get(system, {})
        if r.get("status") != "ok":
            print(f"| {system} | {r.get('status', 'skipped')} |  |  |  |  |  |")
            continue
        ratio = (f"{r['s_per_call'] / cpp['s_per_call']:.2f}" if cpp.get("status") == "ok"
                 else "n/a")
        per = r["repeat_s_per_call"]
        print(f"| {system} | {r['mode']} | {r['s_per_call'] * 1e6:,.0f} | "
              f"{r['s_per_call'] / args.items * 1e9:,.0f} | {min(per) * 1e6:,.0f}-"
              f"{max(per) * 1e6:,.0f} | {ratio} | {r['first_call_s']:.2f} |")
    print("\nevery mode, us/call: " + ", ".join(f"{k} {v * 1e6:,.0f}" for k, v in
                                                modes.items()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load": load, "items": args.items, "systems": rows, "modes": modes},
                      fh, indent=1)


if __name__ == "__main__":
    main()
