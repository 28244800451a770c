"""The architecture holds: imports flow one way, down the layers (ARCHITECTURE.md).

Every ``import`` and ``from ... import`` in burnumba/ and kernels/ is read with ``ast``,
function-local ones included (a local import that hides a cycle is still a cycle), and
resolved to the module it loads. A module may import its own layer and the layers below it,
never one above, and the modules form no cycle. kernels/ is installed as burnumba.kernels.
"""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# bottom to top; a module belongs to the first layer whose prefix names it
LAYERS = [
    ("base", ("burnumba._errors", "burnumba._version", "burnumba._files")),
    ("kernels", ("burnumba.kernels",)),
    ("tracing", ("burnumba.tracing",)),
    ("ir", ("burnumba.ir",)),
    ("numpy", ("burnumba.numpy",)),
    ("scipy", ("burnumba.scipy",)),      # scipy's functions, built from burnumba.numpy
    ("derive", ("burnumba.derive",)),
    ("transforms", ("burnumba.transforms",)),
    ("tools", ("burnumba.tools",)),
    ("optimize", ("burnumba.optimize",)),
    ("train", ("burnumba.train",)),
    ("api", ("burnumba", "burnumba.__main__", "burnumba.nn", "burnumba.optim", "burnumba.data",
             "burnumba.distributed", "burnumba.cli",      # the public paths of train/'s modules
             "burnumba.extend", "burnumba.misc", "burnumba.test_util",   # autograd's paths
             "burnumba.builtins",
             "burnumba._tape", "burnumba._tapefile")),    # old paths that old pickles name
]


def _modules():
    """{module name: path} of burnumba/ and kernels/ (as burnumba.kernels)."""
    found = {}
    for base, package in ((ROOT / "burnumba", "burnumba"), (ROOT / "kernels", "burnumba.kernels")):
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package] + parts)] = path
    for path in sorted((ROOT / "kernels").glob("*.c")):         # C extensions (_bncall)
        found["burnumba.kernels." + path.stem] = path
    return found


MODULES = _modules()


def layer(module):
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if module == p or module.startswith(p + ".") and p != "burnumba":
                if best is None or len(p) > best[1]:
                    best = (rank, len(p))
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[0]


def imports(module):
    """[(line, imported module)] for every import of a burnumba module in ``module``."""
    path = MODULES[module]
    if path.suffix != ".py":
        return []
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = base + ("." + node.module if node.module else "")
            else:
                target = node.module or ""
            if not target.startswith("burnumba"):
                continue
            for alias in node.names:         # `from . import x` loads module x when there is one
                sub = f"{target}.{alias.name}"
                out.append((node.lineno, sub if sub in MODULES else target))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("burnumba")]
    return [(line, m) for line, m in out if m != module]


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_is_in_a_layer():
    for m in MODULES:
        layer(m)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module):
    own = layer(module)
    for line, target in GRAPH[module]:
        assert target in MODULES, f"{module}:{line} imports {target}, which does not exist"
        assert layer(target) <= own, (
            f"{MODULES[module].relative_to(ROOT)}:{line} imports {target} "
            f"({LAYERS[layer(target)][0]}), a layer above {LAYERS[own][0]}")
    if module.startswith("burnumba.kernels"):
        assert all(t.startswith("burnumba.kernels") for _, t in GRAPH[module]), \
            f"{module} imports burnumba's front end: kernels/ knows nothing of it"


def test_no_import_cycles():
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for _, t in GRAPH[m]:
            if state.get(t) == "open":
                cycle = stack[stack.index(t):] + [t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t in MODULES and t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(MODULES):
        if m not in state:
            visit(m)


def test_each_module_imports_on_its_own():
    """``python -c "import burnumba.<module>"`` in a fresh interpreter, for every module.

    Importing any ``burnumba.<module>`` first runs the package's ``__init__``: for a module
    that ``import burnumba`` itself imports, a fresh ``import burnumba.<module>`` runs
    exactly ``import burnumba`` (one interpreter checks all of those). Each module it does
    not import gets an interpreter of its own (all started at once, then waited for)."""
    skip = {"burnumba.__main__"}                # runs the CLI
    code = "import sys, burnumba; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(done.stdout.split())
    procs = {m: subprocess.Popen([sys.executable, "-c", f"import {m}"], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for m in sorted(MODULES) if m not in skip and m not in loaded
             and MODULES[m].suffix == ".py"}
    assert len(procs) < len(MODULES) / 2, "import burnumba should load most modules"
    failed = {}
    for m, p in procs.items():
        out, _ = p.communicate(timeout=300)
        if p.returncode:
            failed[m] = out[-800:]
    assert not failed, "\n\n".join(f"{m}:\n{out}" for m, out in failed.items())


# data, not code: the op table's special-value cases (kernels/ieee_cases.py)
DATA_MODULES = {"burnumba.kernels.ieee_cases"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m not in DATA_MODULES
                                          and MODULES[m].suffix == ".py"))
def test_no_hand_written_module_is_over_1000_lines(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= 1000, f"{MODULES[module].relative_to(ROOT)} has {lines} lines: split it"
