"""burnumba.numpy's layout: its area modules import one way (the order of the package's
docstring), none of them imports the package itself, and the trace layer below never imports
the numpy layer (it reads the dispatch tables the numpy layer fills)."""
import ast
import pathlib

import numpy as np
import pytest

import burnumba.numpy as bnp
from burnumba.tracing import dispatch

ROOT = pathlib.Path(__file__).resolve().parent.parent / "burnumba"
# bottom to top: a module imports only the modules before it
AREAS = ["_common", "elementwise", "shapes", "creation", "indexing", "reductions", "products",
         "statistics", "calculus", "linalg", "fft", "functional", "inplace", "at", "random"]


def _imports(path, package):
    """The burnumba modules a file imports (function-local imports too), as dotted names."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            mod = ".".join(base + ([node.module] if node.module else []))
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module.startswith("burnumba"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("burnumba"))
    return out


def test_every_numpy_module_is_in_the_order():
    files = {p.stem for p in (ROOT / "numpy").glob("*.py")} - {"__init__"}
    assert files == set(AREAS)


@pytest.mark.parametrize("area", AREAS)
def test_area_modules_import_downward_only(area):
    found = _imports(ROOT / "numpy" / f"{area}.py", "burnumba.numpy")
    # `from .. import numpy` or `from . import x` would run through the package's namespace
    assert "burnumba.numpy" not in found, f"{area} imports the package burnumba.numpy"
    later = {f"burnumba.numpy.{a}" for a in AREAS[AREAS.index(area):]}
    assert not found & later, f"{area} imports {sorted(found & later)}: the order is {AREAS}"


@pytest.mark.parametrize("path", sorted((ROOT / "tracing").glob("*.py")), ids=lambda p: p.stem)
def test_the_trace_layer_does_not_import_numpy(path):
    found = _imports(path, "burnumba.tracing")
    assert not {m for m in found if m == "burnumba.numpy" or m.startswith("burnumba.numpy.")}


@pytest.mark.parametrize("path", sorted((ROOT / "numpy").glob("*.py")), ids=lambda p: p.stem)
def test_modules_stay_small(path):
    assert len(path.read_text().splitlines()) <= 1000


def test_the_tables_name_the_package_functions():
    """What np.f(x) and x.f() call on traced values is the function bnp.f."""
    assert dispatch.FUNCTIONS[np.sum] is bnp.sum
    assert dispatch.FUNCTIONS[np.linalg.solve] is bnp.linalg.solve
    assert dispatch.UFUNCS[np.exp] is bnp.exp
    assert dispatch.UFUNCS[np.fabs] is bnp.absolute
    for name in bnp.__all__:
        func = getattr(np, name, None)
        table = dispatch.UFUNCS if isinstance(func, np.ufunc) else dispatch.FUNCTIONS
        if func in table:
            assert table[func] is getattr(bnp, name), name
