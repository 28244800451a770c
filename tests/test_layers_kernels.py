"""kernels/ is layered: every import, at module level or inside a function, goes to a lower
layer (so there is no cycle), kernels never imports burnumba, each module imports on its own,
and only the compiling modules load numba."""
import ast
import os
import subprocess
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels")

# Bottom first; a module imports only from layers below its own (kernels/__init__.py draws
# them). _bncall is the optional C extension (kernels/_bncall.c).
LAYERS = (
    ("errors", "layout", "cache", "update", "ieee_cases", "_bncall", "special",
     "special_bessel", "special_gamma", "special_beta", "special_owens",
     "special_bessel_real"),
    ("rules", "blas", "_prims", "numba_cache"),
    ("row", "templates"),
    ("maps", "maps_special", "blocks_gather", "blocks_reduce", "blocks_softmax", "blocks_matmul",
     "blocks_scan", "blocks_linalg", "blocks_beta", "blocks_user"),
    ("ops",),
    ("_gen", "reference"),
    ("keys", "_native"),
    ("_build",),
    ("engine",),
    ("__init__",),
)
LAYER = {m: k for k, layer in enumerate(LAYERS) for m in layer}
MODULES = sorted(f[:-3] for f in os.listdir(HERE) if f.endswith(".py"))
# what may import numba (and llvmlite): the compiled primitives, and numba_cache (burnumba's
# own numba functions' njit, which only they import); _build only inside the functions that
# compile, so a process that finds its kernels compiled never loads it
NUMBA = {"_native", "numba_cache"}


def _imports(module):
    """{(imported kernels module or "burnumba..."), line} of every import in ``module``."""
    with open(os.path.join(HERE, module + ".py")) as fh:
        tree = ast.parse(fh.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add((node.module.split(".")[0], node.lineno))
            else:          # from . import x: the module x, or a name of kernels/__init__
                for alias in node.names:
                    known = alias.name in MODULES or alias.name in LAYER
                    out.add((alias.name if known else "__init__", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level > 1 or (node.module or "").split(".")[0] in ("burnumba", "kernels"):
                out.add(("burnumba:" + "." * node.level + (node.module or ""), node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("burnumba", "kernels"):
                    out.add(("burnumba:" + alias.name, node.lineno))
    return out


def test_every_module_has_a_layer():
    assert set(MODULES) <= set(LAYER), f"add {sorted(set(MODULES) - set(LAYER))} to LAYERS"
    assert len(LAYER) == sum(len(layer) for layer in LAYERS)


@pytest.mark.parametrize("module", MODULES)
def test_imports_go_down_and_never_to_burnumba(module):
    for target, line in sorted(_imports(module)):
        where = f"kernels/{module}.py:{line}"
        assert not target.startswith("burnumba:"), \
            f"{where} imports {target[9:]}: kernels knows nothing of burnumba's front end"
        assert LAYER[target] < LAYER[module], \
            f"{where} imports {target}, which is not below it (see LAYERS)"


def test_no_cycle():
    """Implied by the layers; checked on its own, so the failure reads as a cycle."""
    edges = {m: {t for t, _ in _imports(m) if t in LAYER} for m in MODULES}
    state = {}

    def visit(m, path):
        state[m] = "open"
        for t in edges.get(m, ()):
            assert state.get(t) != "open", f"import cycle: {' -> '.join(path + [m, t])}"
            if t not in state:
                visit(t, path + [m])
        state[m] = "done"
    for m in MODULES:
        if m not in state:
            visit(m, [])


@pytest.fixture(scope="module")
def package_import():
    """What a fresh ``import burnumba`` loads (module names), and whether numba is among
    them. Importing ``burnumba.kernels.<module>`` runs the package's ``__init__`` first, so
    for a module it loads, a fresh import of that module is exactly this one."""
    code = "import sys, burnumba; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(done.stdout.split())
    return loaded, "numba" in loaded


@pytest.mark.parametrize("module", [m for m in MODULES if m != "__init__"])
def test_each_module_imports_on_its_own(module, package_import):
    loaded, with_numba = package_import
    if f"burnumba.kernels.{module}" in loaded:
        loads_numba = with_numba
    else:
        code = (f"import sys; import burnumba.kernels.{module}; "
                "print(int('numba' in sys.modules))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        loads_numba = done.stdout.strip().splitlines()[-1] == "1"
    assert loads_numba == (module in NUMBA), f"burnumba.kernels.{module} imports numba"
