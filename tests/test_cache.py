"""Compiled kernels on disk: built once, loaded without numba, never run when stale or
damaged, and safe when several processes compile at once. Each test runs fresh Python
processes on a cache folder of its own."""
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

# every test compiles kernels in a fresh cache folder: seconds to a minute each
pytestmark = pytest.mark.slow

TINY = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import burnumba as bn
def tiny(a, b):
    return ((a + b) - (a * b + b ** 3)) ** 2 / 2
value, (da, db) = bn.value_and_grad(tiny, argnums=(0, 1))(-41.0, 2.0)
out = {"value": value, "grad": [da, db], "numba": "numba" in sys.modules,
       "seconds": time.perf_counter() - t0}
if len(sys.argv) > 1:      # a tensor op too: one more row
    x = np.array([0.3, -1.2, 2.0])
    out["tensor"] = bn.grad(lambda x: np.sum(np.tanh(x) * x))(x).tolist()
print(json.dumps(out))
"""


def run(cache, code=TINY, args=(), env=None, check=True):
    environ = {k: v for k, v in os.environ.items() if k != "BURNUMBA_ENGINE"}
    environ.update(BURNUMBA_CACHE_DIR=str(cache), **(env or {}))
    done = subprocess.run([sys.executable, "-c", code, *args], env=environ,
                          capture_output=True, text=True, timeout=600)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def result(done):
    return json.loads(done.stdout.strip().splitlines()[-1])


def read_json(path):
    with open(path) as fh:
        return json.load(fh)


def read_text(path):
    with open(path) as fh:
        return fh.read()


def write_json(path, value):
    with open(path, "w") as fh:
        json.dump(value, fh)


def libraries(cache):
    return sorted(glob.glob(os.path.join(str(cache), "*", "lib", "*.so")))


def objects(cache):
    """The rows compiled (a dispatcher's object is named k<count>-...)."""
    names = (os.path.basename(p).split("-")[0]
             for p in glob.glob(os.path.join(str(cache), "*", "obj", "*.o")))
    return sorted(n for n in names if not (n[0] == "k" and n[1:].isdigit()))


@pytest.fixture(scope="module")
def tiny_built(tmp_path_factory):
    """(a cache where the tiny graph was the first program, that run): the cold build, which
    the tests below start from (a copy each) instead of building it again."""
    cache = tmp_path_factory.mktemp("tiny")
    return cache, run(cache)


@pytest.fixture
def tiny_cache(tmp_path, tiny_built):
    """A copy of ``tiny_built``'s cache of this test's own."""
    shutil.copytree(tiny_built[0], tmp_path / "cache")
    return tmp_path / "cache"


def test_cold_build_then_warm_load_without_numba(tiny_built, tiny_cache):
    cold = tiny_built[1]
    assert result(cold)["value"] == 612.5 and result(cold)["grad"] == [-35.0, 1050.0]
    assert not result(cold)["numba"], "the compile happens in a subprocess"
    notice = [line for line in cold.stderr.splitlines() if "compiling" in line]
    assert len(notice) == 1 and "once" in notice[0] and "float64" in notice[0]
    warm = run(tiny_cache)
    assert result(warm) | {"seconds": 0} == result(cold) | {"seconds": 0}
    assert "compiling" not in warm.stderr


def test_only_the_ops_a_program_uses_are_compiled(tiny_cache):
    """The tiny graph is all scalars: its map rows run inline in the dispatcher, so no row's
    tensor loops are compiled. The tensor program compiles tanh's and multiply's loops,
    nothing else (its sum is a block row written inline in the dispatcher); then the tiny
    graph is served by that kernel (a superset)."""
    tmp_path = tiny_cache
    assert objects(tmp_path) == []
    # and the compile notice can be silenced, as any logging
    quiet = "import logging; logging.getLogger('burnumba').setLevel(logging.ERROR)\n" + TINY
    done = run(tmp_path, code=quiet, args=["tensor"])
    assert done.stderr.strip() == ""
    assert set(objects(tmp_path)) == {"tanh", "multiply"}


# TINY in a process whose kernel builds are refused (exit status 3): where a test only asks
# whether a program would compile, it does not wait for the build
NO_BUILD = """
import sys
from burnumba.kernels import engine
def refuse(request, what, *rest):
    print("would compile " + what, file=sys.stderr)
    sys.exit(3)
engine._run_builder = refuse
""" + TINY


def refused(done):
    """Whether a NO_BUILD process stopped at a kernel build (the build it was refused)."""
    return done.returncode == 3 and "would compile the kernel" in done.stderr


BIGGER = TINY.replace("tiny, argnums", "lambda a, b: tiny(a, b) + np.tanh(a), argnums")


@pytest.fixture(scope="module")
def bigger_built(tmp_path_factory):
    """A cache holding the kernel of a program with the tiny graph's ops and tanh."""
    cache = tmp_path_factory.mktemp("bigger")
    run(cache, code=BIGGER)
    return cache


@pytest.fixture
def bigger(tmp_path, bigger_built):
    """A copy of ``bigger_built`` of this test's own."""
    shutil.copytree(bigger_built, tmp_path / "cache")
    return tmp_path / "cache"


def test_a_superset_kernel_serves_a_smaller_program(bigger):
    """After a program with more ops, one with a subset of them compiles nothing."""
    tmp_path = bigger
    before = libraries(tmp_path)
    done = run(tmp_path, code=NO_BUILD)
    assert "compiling" not in done.stderr and result(done)["value"] == 612.5
    assert libraries(tmp_path) == before


def test_a_superset_from_other_kernel_sources_is_never_used(bigger):
    """A kernel built from another version of the op table covers the rows but computes the
    old rules (its key, a digest of its code, is not the one this code gives its rows): it
    must not serve, even as a superset."""
    tmp_path = bigger
    [manifest] = glob.glob(os.path.join(str(tmp_path), "*", "lib", "*.json"))
    m = read_json(manifest)
    old = m["key"][:-16] + "0" * 16              # as if built from other rules
    os.rename(manifest[:-5] + ".so", os.path.join(os.path.dirname(manifest), old + ".so"))
    os.unlink(manifest)
    m.update(key=old, library=old + ".so")
    write_json(os.path.join(os.path.dirname(manifest), old + ".json"), m)
    assert refused(run(tmp_path, code=NO_BUILD, check=False))


def test_a_superset_with_a_row_this_table_lacks_is_never_used(bigger):
    """A kernel built while the op table had a row it no longer has (a row tried and
    removed) is passed over, not looked up: the program would compile its own."""
    tmp_path = bigger
    [manifest] = glob.glob(os.path.join(str(tmp_path), "*", "lib", "*.json"))
    m = read_json(manifest)
    m["rows"] = m["rows"] + ["a_row_since_removed"]
    write_json(manifest, m)
    assert refused(run(tmp_path, code=NO_BUILD, check=False))


def _damage(path, how):
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    if how == "truncate":
        data = data[:len(data) // 2]
    elif how == "flip":
        data[len(data) // 2] ^= 0x40
    elif how == "empty":
        data = b""
    with open(path, "wb") as fh:
        fh.write(bytes(data))


@pytest.fixture(scope="module")
def two_kernels(tmp_path_factory, tiny_built):
    """A cache with two kernels built: the tiny graph's and another one."""
    cache = tmp_path_factory.mktemp("two_kernels") / "cache"
    shutil.copytree(tiny_built[0], cache)
    run(cache, code=TINY.replace("tiny, argnums", "lambda a, b: np.sin(a) * b, argnums"))
    return cache


@pytest.mark.parametrize("how", ["truncate", "flip", "empty", "manifest", "foreign",
                                 "swapped", "missing"])
def test_a_damaged_library_is_rebuilt_never_run(tmp_path, two_kernels, how):
    """Truncated, bit-flipped or emptied code, a garbled manifest, one written for another
    environment, another kernel's library under this one's name, a missing file: each is
    detected before anything is loaded, reported, and rebuilt."""
    tmp_path = tmp_path / "cache"
    shutil.copytree(two_kernels, tmp_path)
    libs = libraries(tmp_path)
    target = [p for p in libs if "k8-" in os.path.basename(p)][0]
    other = [p for p in libs if p != target][0]
    manifest = target[:-3] + ".json"
    if how in ("truncate", "flip", "empty"):
        _damage(target, how)
    elif how == "manifest":
        with open(manifest, "w") as fh:
            fh.write("{not json")
    elif how == "foreign":
        m = read_json(manifest)
        m["environment"]["cpu"] = "another machine"
        write_json(manifest, m)
    elif how == "swapped":
        shutil.copyfile(other, target)
    elif how == "missing":
        os.unlink(target)
    if how != "flip":
        # the loader's check alone, in a fresh process: the damage is reported, the files
        # are removed, nothing is loaded (the rebuild that follows is the same for every
        # kind of damage: "flip" runs it end to end)
        key = os.path.basename(target)[:-3]
        done = run(tmp_path, code=LOAD, args=[key, "kernel"])
        assert result(done) == {"loaded": False, "numba": False}, done.stderr
        assert "compiling it again" in done.stderr
        assert not os.path.exists(target) and not os.path.exists(manifest)
        return
    done = run(tmp_path)
    assert result(done)["value"] == 612.5 and result(done)["grad"] == [-35.0, 1050.0]
    assert "compiling it again" in done.stderr and "compiling the kernel" in done.stderr
    again = run(tmp_path)                        # and the rebuilt one is used from then on
    assert "compiling" not in again.stderr


# engine._load_library(key, kind) of a cached library, in a process of its own
LOAD = """
import json, sys
from burnumba.kernels import engine
found = engine._load_library(sys.argv[1], sys.argv[2])
print(json.dumps({"loaded": found is not None, "numba": "numba" in sys.modules}))
"""


def test_processes_compiling_at_once_share_one_build(tmp_path):
    """Four processes start on an empty cache together (as pytest-xdist or Dask workers
    do): all get the right result, and the kernel is built once (numba #4807 is a crash of
    exactly this kind in numba's own cache)."""
    environ = dict(os.environ, BURNUMBA_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", TINY], env=environ, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    for out, _ in outs:
        r = json.loads(out.strip().splitlines()[-1])
        assert r["value"] == 612.5 and r["grad"] == [-35.0, 1050.0]
    assert len(libraries(tmp_path)) == 1
    tmp_left = glob.glob(os.path.join(str(tmp_path), "*", "*", ".tmp-*"))
    assert tmp_left == []


def manifests(cache):
    out = {}
    for path in glob.glob(os.path.join(str(cache), "*", "lib", "*.json")):
        with open(path) as fh:
            out[os.path.basename(path)] = json.load(fh)
    return out


def test_a_build_spread_over_processes_writes_the_same_files(tmp_path):
    """The builder compiles row objects in helper processes while it compiles the
    dispatcher (BURNUMBA_BUILD_PROCESSES, default the cores): the files are those of a
    build in one process, under the same keys, and the numbers are the same."""
    done, files = {}, {}
    for processes in (1, 2):
        cache = tmp_path / str(processes)
        done[processes] = run(cache, args=["tensor"],
                              env={"BURNUMBA_BUILD_PROCESSES": str(processes)})
        files[processes] = sorted(os.path.relpath(p, cache) for p in glob.glob(
            os.path.join(str(cache), "*", "*", "*")) if p.endswith((".o", ".so", ".json")))
        # the tiny graph's kernel has no row objects (one process); the tensor program's
        # has two (tanh's and multiply's loops), which a helper compiled
        used = sorted(m["processes"] for m in manifests(cache).values())
        assert used == ([1, 1] if processes == 1 else [1, 2]), used
        assert glob.glob(os.path.join(str(cache), "*", "*", ".tmp-*")) == []
    assert files[1] == files[2]
    assert result(done[1]) | {"seconds": 0} == result(done[2]) | {"seconds": 0}
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(result(done[2])["tensor"],
                               np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-14)


def test_a_bad_process_count_is_named(tmp_path):
    done = run(tmp_path, env={"BURNUMBA_BUILD_PROCESSES": "two"}, check=False)
    assert done.returncode != 0
    assert "BURNUMBA_BUILD_PROCESSES='two': give a whole number" in done.stderr


def test_jit_engine_without_a_c_compiler(tmp_path, monkeypatch):
    """Where no C compiler links a library, numba compiles in the process (with a
    warning), with the same results; BURNUMBA_ENGINE=jit asks for that engine."""
    from burnumba.kernels import cache, engine_name
    no_cc = run(tmp_path, env={"CC": "/nonexistent/cc", "PATH": "/nonexistent"},
                args=["tensor"])
    assert "no C compiler" in no_cc.stderr and "BURNUMBA_ENGINE=jit" in no_cc.stderr
    warm = run(cache.root(), args=["tensor"])     # the session's kernels, built already
    assert result(no_cc)["numba"] and not result(warm)["numba"]
    assert result(no_cc)["value"] == 612.5
    assert result(no_cc)["tensor"] == pytest.approx(result(warm)["tensor"], rel=1e-15)
    assert libraries(tmp_path) == []                # compiled in the process, nothing linked
    monkeypatch.setenv("BURNUMBA_ENGINE", "jit")
    assert engine_name.__wrapped__() == "jit"       # (decided once a process: lru_cache)


def test_a_library_built_from_changed_sources_says_so(monkeypatch):
    """A builder subprocess hashes the kernels' sources on disk; when they changed since this
    process started, the library it built has another key, and the error says so (restart)
    instead of blaming the cache folder."""
    from burnumba.kernels import cache, engine
    assert not cache.sources_changed()
    monkeypatch.setattr(cache, "sources_changed", lambda: True)
    message = str(engine._unloadable("the kernel k.so"))
    assert "changed since this process started" in message and "restart" in message
    monkeypatch.setattr(cache, "sources_changed", lambda: False)
    assert "delete the cache folder" in str(engine._unloadable("the kernel k.so"))


KEYS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from kernels import keys
from kernels.ops import ROWS
rows = [r.name for r in ROWS if r.kind != "leaf"]
sets = [("add", "multiply"), ("sin", "exp"), ("tanh", "matmul", "softmax"), ("sin",)]
print(json.dumps({
    "rows": {n: [keys.object_key(n, d, part) for d in ("float64", "float32")
                 for part in ("core", "jvp")] for n in rows},
    "kernels": {" ".join(s): [keys.plan(s, s, d, jvp).key for d in ("float64", "float32")
                              for jvp in (False, True)] for s in sets},
    "update": keys.update_key("float64"),
    "from": keys.__file__}))
"""


def _keys(tmp_path, name, edit):
    """The cache keys that a copy of kernels/, edited by ``edit(path, text)``, gives."""
    from burnumba.kernels import cache
    root = tmp_path / name
    shutil.copytree(cache.HERE, root / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    for p in (root / "kernels").glob("*.py"):
        p.write_text(edit(p, p.read_text()))
    done = run(tmp_path / "cache", code=KEYS, args=[str(root)])
    out = result(done)
    assert out.pop("from").startswith(str(root))
    return out


def _touch(p, text):
    """A comment above and below, and a docstring reworded: every line moves."""
    if text.startswith('"""'):
        text = '"""Touched. ' + text[3:]
    return "# touched\n" + text + "# touched\n"


@pytest.fixture(scope="module")
def keys_before(tmp_path_factory):
    """The keys of an unedited copy of kernels/."""
    return _keys(tmp_path_factory.mktemp("keys"), "before", lambda p, text: text)


def test_keys_are_the_code_not_the_text(tmp_path, keys_before):
    """A comment in every file under kernels/ (every line number moves) and a reworded
    docstring in each change no cache key; an edit of one row's rule changes the keys of
    that row's objects and of the kernels that hold the row, and nothing else."""
    from burnumba.kernels import cache
    before = keys_before
    assert _keys(tmp_path, "touched", _touch) == before
    rule = "da=lambda a, g: g * cos(a)"
    assert sum(rule in read_text(p) for p in cache._files()) == 1
    after = _keys(tmp_path, "edited", lambda p, text: text.replace(
        rule, "da=lambda a, g: cos(a) * g"))
    rows = {n for n in before["rows"] if before["rows"][n] != after["rows"][n]}
    assert rows == {"sin"}
    assert all(a != b for a, b in zip(before["rows"]["sin"], after["rows"]["sin"]))
    kernels = {s for s in before["kernels"] if before["kernels"][s] != after["kernels"][s]}
    assert kernels == {"sin exp", "sin"}
    assert all(a != b for a, b in zip(before["kernels"]["sin"], after["kernels"]["sin"]))
    assert after["update"] == before["update"]


def test_a_special_module_keys_only_the_rows_that_call_it(tmp_path, keys_before):
    """Each special module (kernels/rules.SPECIAL_MODULES) is part of the keys of the rows
    whose rules call one of its functions and of nothing else: an edit of the Bessel code
    rebuilds the Bessel rows, not gammaln's nor a program without special rows; a program of
    plain rows has no special digest at all."""
    from burnumba.kernels import keys
    assert keys.special(["add", "exp", "softmax"]) == []
    assert len(keys.special(["gammaln", "j0"])) == 2
    assert keys.special(["gammainc"]) == keys.special(["gammaln", "gammaincc"])  # lgamma too
    before = keys_before
    edit = "if fabs(t) < 1e-17:\n            break\n        k += 1.0\n    s = sin(x)"
    assert edit in read_text(os.path.join(os.path.dirname(keys.__file__), "special_bessel.py"))
    after = _keys(tmp_path, "edited", lambda p, text: text.replace(
        edit, edit.replace("1e-17", "2e-17")) if p.name == "special_bessel.py" else text)
    rows = {n for n in before["rows"] if before["rows"][n] != after["rows"][n]}
    assert rows == {"j0", "j1", "y0", "y1", "jn", "yn"}
    assert after["kernels"] == before["kernels"]
