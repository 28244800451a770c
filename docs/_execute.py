"""Run the code blocks of Markdown pages and check what they print (the docs build does this
for every page; tests/test_docs.py for the README too).

* A page's ```python and ```pycon blocks run in order in one fresh Python process, in one
  namespace (a later block sees an earlier one's names), in a temporary folder.
* In a ```python block, a line ``print(...)  # expected`` claims an output: the block's last
  printed lines must start with the claims, in order (text after a ``;`` in the comment is
  prose). A block that raises fails.
* A ```pycon block is a doctest (``>>>`` and ``...`` lines, then the expected output), run
  with doctest's ELLIPSIS and NORMALIZE_WHITESPACE.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap

BLOCK = re.compile(r"^([ \t]*)```(python|pycon)[^\n]*\n(.*?)^\1```", re.S | re.M)
CLAIM = re.compile(r"\s*print\(.*\)\s+#\s*(.+)$")

RUNNER = r'''
import contextlib, doctest, io, json, sys, traceback
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
results = []
for kind, code in blocks:
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            if kind == "python":
                exec(compile(code, "<docs block>", "exec"), ns)
            else:
                test = doctest.DocTestParser().get_doctest(code, ns, "block", "<docs block>", 0)
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS
                                               | doctest.NORMALIZE_WHITESPACE)
                report = io.StringIO()
                runner.run(test, out=report.write, clear_globs=False)
                ns.update(test.globs)          # doctest ran on a copy of the namespace
                if runner.failures:
                    error = report.getvalue()
        except BaseException:
            error = traceback.format_exc(limit=-3)
    results.append({"stdout": out.getvalue(), "error": error})
    if error:
        break
json.dump(results, open(sys.argv[2], "w"))
'''


def blocks(text):
    """[(kind, code, line number)] of the page's python and pycon blocks."""
    return [(m.group(2), textwrap.dedent(m.group(3)), text.count("\n", 0, m.start()) + 1)
            for m in BLOCK.finditer(text)]


def claims(code):
    """[(line in the block, expected text)] of its ``print(...)  # expected`` lines."""
    out = []
    for k, line in enumerate(code.splitlines()):
        m = CLAIM.match(line)
        if m:
            out.append((k + 1, m.group(1).split(";")[0].strip()))
    return out


def check_block(code, stdout):
    """The problems with a python block's printed output, as strings."""
    expected = claims(code)
    printed = stdout.strip().splitlines()
    if len(printed) < len(expected):
        return [f"printed {len(printed)} lines, the block claims {len(expected)}: {printed}"]
    problems = []
    for (line, want), got in zip(expected, printed[len(printed) - len(expected):]):
        if not (got.startswith(want) or got.strip() == want):
            problems.append(f"block line {line}: printed {got!r}, the page says {want!r}")
    return problems


def run_page(name, text, timeout=600):
    """The failures of one page's blocks, as strings ([] when all ran as they claim)."""
    found = blocks(text)
    if not found:
        return []
    with tempfile.TemporaryDirectory(prefix="burnumba-docs-") as tmp:
        src, dst = os.path.join(tmp, "blocks.json"), os.path.join(tmp, "results.json")
        with open(src, "w") as fh:
            json.dump([(kind, code) for kind, code, _ in found], fh)
        done = subprocess.run([sys.executable, "-c", RUNNER, src, dst], cwd=tmp,
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0 or not os.path.exists(dst):
            return [f"{name}: the blocks' process failed:\n{done.stderr[-3000:]}"]
        with open(dst) as fh:
            results = json.load(fh)
    failures = []
    for (kind, code, line), result in zip(found, results):
        where = f"{name}, the {kind} block at line {line}"
        if result["error"]:
            failures.append(f"{where} failed:\n{result['error']}")
        elif kind == "python":
            failures += [f"{where}: {p}" for p in check_block(code, result["stdout"])]
    return failures
