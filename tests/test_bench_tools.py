"""The benchmark harness's own logic that decides what is measured: the kernels the main
command builds before its stages (bench/_kernels.py) and the cache folders of the cold and
warm start-up figures (bench/_caches.py)."""
import json
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)
import _caches  # noqa: E402
import _kernels  # noqa: E402


def test_the_unions_cover_every_listed_kernel_of_their_kind():
    """The prebuild's unions: one per (dtype, forward mode), each a superset of every listed
    kernel of that kind, so that the engine serves each stage's program from one of them."""
    with open(_kernels.LIST) as fh:
        listed = json.load(fh)
    unions = _kernels.unions(listed)
    kinds = {(k["dtype"], k["jvp"]) for k in listed}
    assert sorted((u["dtype"], u["jvp"]) for u in unions) == sorted(kinds)
    by_kind = {(u["dtype"], u["jvp"]): u for u in unions}
    for k in listed:
        u = by_kind[(k["dtype"], k["jvp"])]
        assert set(k["rows"]) <= set(u["rows"])
        assert set(k["tensor_rows"]) <= set(u["tensor_rows"])
    # fewer rows to compile than the listed kernels together: the point of building unions
    assert sum(len(u["rows"]) for u in unions) < sum(len(k["rows"]) for k in listed)


def test_unions_of_two_kernels():
    a = {"rows": ["add", "sin"], "tensor_rows": ["sin"], "dtype": "float64", "jvp": False}
    b = {"rows": ["add", "exp"], "tensor_rows": [], "dtype": "float64", "jvp": False}
    c = {"rows": ["tanh"], "tensor_rows": [], "dtype": "float64", "jvp": True}
    got = {(u["dtype"], u["jvp"]): u for u in _kernels.unions([a, b, c])}
    assert got[("float64", False)]["rows"] == ["add", "exp", "sin"]
    assert got[("float64", False)]["tensor_rows"] == ["sin"]
    assert got[("float64", True)]["rows"] == ["tanh"]


@pytest.mark.parametrize("policy, folders", [("each", 3), ("once", 2), ("none", 0)])
def test_cache_policies_hand_out_empty_folders(tmp_path, policy, folders):
    """each: a new folder per case; once: per (system, dtype); none: never (warm only)."""
    dirs = _caches.CacheDirs(policy, str(tmp_path))
    got = [dirs.get("burnumba", dtype, case)
           for dtype, case in (("float64", "a"), ("float64", "b"), ("float32", "a"))]
    made = [path for _, path in got if path]
    assert len(made) == folders and all(os.path.isdir(p) for p in made)
    for env, path in got:
        if path:
            assert env["BURNUMBA_CACHE_DIR"] == path == env["NUMBA_CACHE_DIR"]
        else:
            assert env is None
    with pytest.raises(ValueError):
        _caches.CacheDirs("sometimes", str(tmp_path))
