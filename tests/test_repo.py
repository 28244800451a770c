"""The README's two set-up commands exist, and .ci/run runs exactly the test one."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", readme, flags=re.S)
    return [line.strip() for b in blocks for line in b.splitlines() if line.strip()]


def test_ci_runs_the_readme_test_command():
    tests = [c for c in _commands() if "'.[test]'" in c and "pytest" in c]
    assert len(tests) == 1, tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests[0] in [line.strip() for line in ci]


def test_readme_has_the_benchmark_command():
    assert any("'.[bench]'" in c and "bench/report.py" in c for c in _commands())


def test_benchmark_data_is_not_copied_into_the_repository():
    for path in ROOT.rglob("*.txt"):
        if ".venv" in path.parts:
            continue
        assert path.name not in ("tinyshakespeare.txt", "names.txt"), path


def test_every_package_is_installed():
    """A regular (not editable) install takes only the packages pyproject.toml lists: each
    folder with an __init__.py must be there, or ``pip install .`` leaves it out."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "burnumba").rglob("__init__.py")}
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert "burnumba.kernels" in listed
