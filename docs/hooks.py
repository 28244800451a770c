"""mkdocs hooks: the generated parts of the docs, and the executed examples.

* ``<!-- generated:NAME -->`` in a page is replaced when the site is built:
  ``supported-numpy`` (burnumba.tools.supported, from burnumba.numpy's dispatch tables),
  ``op-table`` (one line per row of the op table, burnumba.kernels.ROWS), ``api:MODULE``
  (a ``::: MODULE.name`` block per public name, from the module's ``__all__``) and
  ``benchmarks`` (the tables of the run in docs/benchmarks/data/, written by
  bench/report.py) and ``data:NAME`` (one report's NAME from that folder). Nothing of
  these is written by hand.
* Before the build, every page's python and pycon blocks run and their printed output is
  checked (docs/_execute.py); one failure fails the build. ``BURNUMBA_DOCS_EXECUTE=0``
  skips that, for editing the prose only.
"""
import concurrent.futures
import importlib
import inspect
import os
import re
import sys

from mkdocs.exceptions import PluginError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _execute  # noqa: E402
import bench_pages  # noqa: E402

MARK = re.compile(r"<!-- generated:([\w:.-]+) -->")
BENCH_DATA = os.path.join(HERE, "benchmarks", "data")


# -- executed examples -----------------------------------------------------------------
def pages(root=HERE):
    """The site's Markdown pages (benchmarks/data holds a report's output, not a page)."""
    for base, _, names in os.walk(root):
        if os.path.relpath(base, root).startswith(os.path.join("benchmarks", "data")):
            continue
        for name in sorted(names):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(base, name), root)


def execute_all(root=HERE, workers=2):
    """The failures of every page's blocks, pages run ``workers`` at a time."""
    def one(name):
        with open(os.path.join(root, name), encoding="utf-8") as fh:
            return _execute.run_page(name, fh.read())
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return [f for failures in pool.map(one, sorted(pages(root))) for f in failures]


def on_pre_build(config):
    if os.environ.get("BURNUMBA_DOCS_EXECUTE", "1") == "0":
        return
    failures = execute_all()
    if failures:
        raise PluginError("the docs' examples do not run as written:\n\n"
                          + "\n\n".join(failures))


# -- generated parts ---------------------------------------------------------------------
def supported_numpy():
    from burnumba.tools import supported as _supported
    return _supported.markdown()


def _rule_text(row, slot):
    from burnumba.kernels import rules
    fn = getattr(row, slot)
    if fn is None:
        return ""
    try:
        rule = rules.read(fn, row.name, slot, row.arity)
    except Exception:               # noqa: BLE001 - shown as a block rule instead
        return ""
    return f"`{rule.expr}`" + (f" ({len(rule.statements)} statements before)"
                               if rule.statements else "")


def op_table():
    """One line per row of the op table: what the kernels compute."""
    from burnumba.kernels import ROWS
    lines = [f"{len(ROWS)} rows. A *map* row is elementwise: its forward and derivative rules "
             "are scalar expressions (shown; `y` is the output, `g` the upstream gradient). "
             "Other rows carry block statements for their forward, backward and tangent "
             "sweeps. *special* counts the row's checked values at NaN, ±inf and ±0.", "",
             "| op | kind | arity | d/da | d/db | tangent rule | special cases | test domain |",
             "|---|---|---|---|---|---|---|---|"]
    for r in ROWS:
        da = _rule_text(r, "da") if r.kind == "map" else "block"
        db = _rule_text(r, "db") if r.kind == "map" and r.arity > 1 else ""
        jvp = "from d/da, d/db" if r.kind == "map" else ("yes" if r.jvp else "none")
        domain = ", ".join(f"[{lo:g}, {hi:g}]" for lo, hi in r.domain) if r.domain else ""
        lines.append(f"| `{r.name}` | {r.kind} | {r.arity} | {da} | {db} | {jvp} | "
                     f"{len(r.special or ())} | {domain} |")
    return "\n".join(lines)


def public_names(module_name):
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:                  # no __all__: what the module defines itself
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and (inspect.isfunction(v) or inspect.isclass(v))
                 and getattr(v, "__module__", None) == module.__name__]   # burnumba.train.nn
    return list(names)


def _by_hand(path, obj):
    """The reference of an object griffe cannot find by its path: burnumba.kernels is
    installed from kernels/ (setuptools package-dir), which its source finder does not
    follow. Signature and docstring, from the live object."""
    try:
        signature = str(inspect.signature(obj))
    except (TypeError, ValueError):
        signature = ""
    kind = "class" if inspect.isclass(obj) else "function"
    out, fence = [f"## `{path}`", "", f"```python\n{path}{signature}\n```", "",
                  f"*{kind}, defined in `{obj.__module__}`*", ""], False
    for line in (inspect.getdoc(obj) or "").splitlines():
        if line.startswith(">>>") and not fence:
            out.append("```pycon")
            fence = True
        elif fence and not line.strip():
            out.append("```")
            fence = False
        out.append(line)
    return "\n".join(out + (["```"] if fence else []) + [""])


def api(module_name):
    """A ``:::`` block per public name of the module (submodules get a page of their own)."""
    module = importlib.import_module(module_name)
    out = []
    for name in public_names(module_name):
        obj = getattr(module, name, None)
        if inspect.ismodule(obj):
            continue
        if getattr(obj, "__module__", "").startswith("burnumba.kernels"):
            out.append(_by_hand(f"{module_name}.{name}", obj))
        else:
            out.append(f"::: {module_name}.{name}\n")
    return "\n".join(out)


def benchmarks():
    return bench_pages.markdown(BENCH_DATA)


def bench_data(name):
    """A report's Markdown output in docs/benchmarks/data (``data:sparse.md``), or a note."""
    path = os.path.join(BENCH_DATA, name)
    if not os.path.exists(path):
        return f"(no run yet: docs/benchmarks/data/{name} is written by bench/report.py)"
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def on_page_markdown(markdown, page, config, files):
    def replace(m):
        what = m.group(1)
        if what == "supported-numpy":
            return supported_numpy()
        if what == "op-table":
            return op_table()
        if what.startswith("api:"):
            return api(what[4:])
        if what == "benchmarks":
            return benchmarks()
        if what.startswith("data:"):
            return bench_data(what[5:])
        raise PluginError(f"{page.file.src_uri}: unknown generated part {what!r}")
    return MARK.sub(replace, markdown)
