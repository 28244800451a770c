"""The benchmark page's generated part: the run in docs/benchmarks/data (bench/report.py)."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def markdown(folder):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import _headline
    from report import STAGES
    try:
        with open(os.path.join(folder, "run.json")) as fh:
            run = json.load(fh)
    except OSError:
        return ("!!! warning \"No run yet\"\n    Run `.venv/bin/python bench/report.py` to "
                "fill docs/benchmarks/data.")
    out = ["## The run", "", _headline.markdown(folder), ""]
    if os.path.exists(os.path.join(folder, "headline.svg")):
        out += ["![Headline ratios: peer time over burnumba time, log scale, with the range "
                "of the repeats](data/headline.svg)", ""]
    out += ["| stage | what | command | wall time | status |", "|---|---|---|---:|---|"]
    for name, r in run["stages"].items():
        out.append(f"| {name} | {STAGES[name][3]} | `{r['command']}` | {r['seconds']:.0f} s | "
                   + ("ok" if r["returncode"] == 0 else f"failed (exit {r['returncode']})")
                   + " |")
    out += ["", f"All stages: {run['seconds']:.0f} s.", "", "### Machine and versions", ""]
    out += [f"* {k}: {v}" for k, v in run["machine"].items()] + [""]
    for name in run["stages"]:
        out += [f"## {name}: {STAGES[name][3]}", ""]
        md = os.path.join(folder, f"{name}.md")
        text = open(md).read() if os.path.exists(md) else None
        printed = os.path.join(folder, f"{name}.out")
        if text is None and os.path.exists(printed):
            text = open(printed).read()
            if not text.lstrip().startswith(("#", "|")):
                text = "```text\n" + text.rstrip() + "\n```"
        if text is not None and "\n### Machine and versions" in "\n" + text:
            # the report's own machine block repeats the one above: keep its tables only
            head, _, rest = ("\n" + text).partition("\n### Machine and versions")
            rest = rest.split("\n### ", 1)
            text = head + ("\n### " + rest[1] if len(rest) > 1 else "")
        out += [(text or "(no output)").replace("\n### ", "\n#### ").strip(), ""]
    return "\n".join(out)
