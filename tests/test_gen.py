"""The generated sweep must match the op table, and hold every njit function it runs."""
import ast
import os

from burnumba.kernels import _gen


def test_sweep_py_is_up_to_date():
    with open(_gen.TARGET) as fh:
        on_disk = fh.read()
    assert on_disk == _gen.generate(), (
        "kernels/sweep.py is stale: run `python -m burnumba.kernels._gen` and commit it")


def test_sweep_py_is_self_contained():
    """numba's cache checks only the defining file of a cached function: a njit function
    imported from another module would be run stale after that module changed."""
    with open(_gen.TARGET) as fh:
        tree = ast.parse(fh.read())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    modules = {(n.module if isinstance(n, ast.ImportFrom) else n.names[0].name) for n in imports}
    assert modules == {"math", "numba", "numpy"}
    assert all(n.level == 0 for n in imports if isinstance(n, ast.ImportFrom))


def _imported_modules(tree):
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return {(n.module if isinstance(n, ast.ImportFrom) else n.names[0].name) for n in imports}, \
        [n for n in imports if isinstance(n, ast.ImportFrom) and n.level]


def test_every_other_njit_module_is_self_contained():
    """Besides sweep.py, only update.py (the optimisers) defines njit code, and it too may
    import nothing but math, numba and numpy, for the same reason."""
    here = os.path.dirname(_gen.TARGET)
    with_njit = set()
    for name in os.listdir(here):
        if name.endswith(".py") and name != "sweep.py":
            with open(os.path.join(here, name)) as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and "njit" in [
                        ast.unparse(d).split("(")[0] for d in node.decorator_list]:
                    with_njit.add(name)
                    modules, relative = _imported_modules(tree)
                    assert modules <= {"math", "numba", "numpy"} and not relative, name
    assert with_njit == {"update.py"}
