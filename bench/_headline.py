"""The headline ratios of one run of bench/report.py: how many times longer each peer takes
than burnumba, per workload, as a median with the range of the repeats.

``markdown(folder)`` is the README's table (tests/test_readme.py checks that the README holds
exactly this for the committed run in docs/benchmarks/data); ``plot(folder)`` writes
``headline.svg`` there. For per-call reports the range is the ratio's extremes over the
repeats (the peer's fastest over burnumba's slowest, and the reverse); for training steps,
over the 10th and 90th percentiles of the step times.
"""
import json
import os

PEERS = ("jax", "autograd", "micrograd", "torch", "casadi")


def _load(folder, name):
    try:
        with open(os.path.join(folder, f"{name}.json")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _per_call(base, peer, key):
    """(median, lo, hi) of peer / base from two result dicts with repeat lists."""
    b, p = base[f"repeat_{key}"], peer[f"repeat_{key}"]
    return peer[key] / base[key], min(p) / max(b), max(p) / min(b)


def _fastest(named):
    """{peer: (median, lo, hi)} from (system, ratios) pairs: each peer's fastest variant, a
    variant named as its system ("jax-async", "torch.compile", "torch-compile")."""
    best = {}
    for system, ratios in named:
        peer = system.split(".")[0].split("-")[0]
        if peer in PEERS and (peer not in best or ratios[0] < best[peer][0]):
            best[peer] = ratios
    return best


def rows(folder):
    """[(workload, {peer: (median, lo, hi)})] in the order of the reports."""
    out = []
    scalar = _load(folder, "scalar")
    for name, w in (scalar or {}).get("workloads", {}).items():
        systems = w["systems"]
        base = systems.get("burnumba")
        if not base or base.get("status") != "ok":
            continue
        out.append((f"{name} (value and gradient)", _fastest(
            (s, _per_call(base, r, "ns_per_call")) for s, r in systems.items()
            if r.get("status") == "ok")))
    tensor = _load(folder, "tensor")
    for name, t in (tensor or {}).get("tables", {}).items():
        systems = t["systems"]
        base = next((r for s, r in systems.items() if s.startswith("burnumba ")), None)
        if not base or base.get("status") != "ok":
            continue
        dtype = next(s for s in systems if s.startswith("burnumba ")).split(" ", 1)[1]
        out.append((f"{name}, {dtype} (value and gradient)", _fastest(
            (s.split(" ")[0], _per_call(base, r, "us_per_call")) for s, r in systems.items()
            if r.get("status") == "ok")))
    transforms = _load(folder, "transforms")
    for name, c in (transforms or {}).get("cases", {}).items():
        systems = c["systems"]
        base = systems.get("burnumba")
        if not base or base.get("status") != "ok":
            continue
        out.append((name, _fastest((r.get("system", s), _per_call(base, r, "us_per_call"))
                                   for s, r in systems.items() if r.get("status") == "ok")))
    jac = (_load(folder, "jacobians") or {}).get("systems", {})
    base = jac.get("burnumba", {})
    if base.get("status") == "ok":
        peers = {"jax": jac.get("jax.jit", {})}
        out.append(("per-item Jacobians, reprojection (vmap)", {
            peer: _per_call(base, r, "s_per_call") for peer, r in peers.items()
            if r.get("status") == "ok"}))
    train = _load(folder, "train")
    cases = (train or {}).get("cases", {})
    for key, r in cases.items():
        system, case, dtype = key.split(" ")
        if system != "burnumba" or r.get("default", {}).get("status") != "ok":
            continue
        b = r["default"]
        out.append((f"training step, {case}, {dtype}", _fastest(
            (other, (p["ms_median"] / b["ms_median"], p["ms_p10"] / b["ms_p90"],
                     p["ms_p90"] / b["ms_p10"]))
            for k, v in cases.items() for other, c, d in [k.split(" ")]
            if (c, d) == (case, dtype)
            for p in v.values()          # the variants (torch.compile's attention kinds)
            if isinstance(p, dict) and p.get("status") == "ok")))
    return [(w, r) for w, r in out if r]


def startup(folder):
    """The start-up and memory line under the table (the brief asks the README for cold and
    warm start and peak RSS): the tiny graph's first gradient in a fresh process on an empty
    and on a filled kernel cache (report_scalar), the GPT step's first result cold and warm
    and each training run's peak RSS (ru_maxrss) against jax's (report_train)."""
    parts = []
    compile_ = (_load(folder, "scalar") or {}).get("compile", {})
    cold, warm = compile_.get("cold"), compile_.get("warm")
    if cold and warm:
        parts.append(f"the tiny graph's first gradient in a fresh process, import included, "
                     f"{cold['total_s']:.2f} s on an empty kernel cache and "
                     f"{warm['total_s']:.2f} s on a filled one")
    train = _load(folder, "train") or {}
    first = train.get("first_result", {}).get("cases", {})
    for key, r in first.items():
        if key.startswith("burnumba ") and r.get("cold_s") and r.get("warm_s"):
            case = key.split(" ")[1:]
            parts.append(f"the {' '.join(case)} training step's first result, imports "
                         f"excluded, {r['cold_s']:.1f} s cold and {r['warm_s']:.3f} s warm")
    rss = []
    for key, r in train.get("cases", {}).items():
        system, case, dtype = key.split(" ")
        b = r.get("default", {})
        if system == "burnumba" and b.get("status") == "ok":
            jax = train["cases"].get(f"jax {case} {dtype}", {}).get("default", {})
            peer = (f" (jax {jax['ru_maxrss_mb']:.0f} MB)" if jax.get("status") == "ok"
                    else "")
            rss.append(f"{case} {dtype} {b['ru_maxrss_mb']:.0f} MB{peer}")
    if rss:
        parts.append("peak RSS of a training process " + ", ".join(rss))
    return ("Start-up and memory in the same run: " + "; ".join(parts) + ".") if parts else ""


def _peers(table):
    return [p for p in PEERS if any(p in r for _, r in table)]


def _cell(x):
    if x is None:
        return "—"
    m, lo, hi = x
    f = (lambda v: f"{v:.0f}") if m >= 100 else (lambda v: f"{v:.2f}" if v < 10 else f"{v:.1f}")
    return f"{f(m)} ({f(lo)}–{f(hi)})"


def markdown(folder):
    with open(os.path.join(folder, "run.json")) as fh:
        run = json.load(fh)
    table = rows(folder)
    peers = _peers(table)
    m = run["machine"]
    missing = [p for p, v in run["peers"].items() if v is None]
    lines = [f"Run of `{run['command']}` on {run['date']}: {m['cpu']}, each system pinned to "
             f"one core, load average {m.get('load average (1, 5, 15 min) at start', '?')} "
             f"at the start; python {m['python']}, numba {m['numba']}, numpy {m['numpy']}, "
             f"burnumba {m['burnumba']}" + (f"; not installed: {', '.join(missing)}"
                                            if missing else "") + ".", "",
             "| workload | " + " | ".join(f"{p} / burnumba" for p in peers) + " |",
             "|---|" + "---:|" * len(peers)]
    for workload, ratios in table:
        lines.append(f"| {workload} | " + " | ".join(_cell(ratios.get(p)) for p in peers)
                     + " |")
    line = startup(folder)
    return "\n".join(lines + (["", line] if line else []))


def plot(folder):
    """headline.svg: the ratios on a log scale, one bar per (workload, peer), with ranges."""
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    table = rows(folder)
    peers = _peers(table)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(table) * max(1, len(peers)) + 1.2))
    y, labels, ticks = 0, [], []
    colors = dict(zip(PEERS, ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3")))
    seen = set()
    for workload, ratios in reversed(table):
        for peer in reversed(peers):
            if peer in ratios:
                m, lo, hi = ratios[peer]
                ax.barh(y, m, xerr=[[m - lo], [hi - m]], color=colors[peer],
                        label=peer if peer not in seen else None, capsize=2)
                seen.add(peer)
                y += 1
        ticks.append(y - 0.5 * sum(p in ratios for p in peers) - 0.5)
        labels.append(workload)
        y += 0.6
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.set_xlabel("time of the peer / time of burnumba (log scale; > 1: burnumba faster)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path = os.path.join(folder, "headline.svg")
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return path


# -- the README's copy -------------------------------------------------------------------
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "benchmarks", "data")
README = os.path.join(ROOT, "README.md")
BEGIN = "<!-- headline:begin (generated by bench/_headline.py from docs/benchmarks/data) -->"
END = "<!-- headline:end -->"


def readme_section(text):
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def write(path=README, folder=DATA):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if readme_section(text) is None:
        raise SystemExit(f"{path}: the markers {BEGIN!r} and {END!r} are missing")
    head, rest = text.split(BEGIN, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{BEGIN}\n{markdown(folder)}\n{END}{rest.split(END, 1)[1]}")


if __name__ == "__main__":
    import sys
    if "--write" in sys.argv[1:]:
        write()
    else:
        print(markdown(DATA))
