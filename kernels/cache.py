"""Where compiled kernels live on disk, what they are keyed by, and how they are checked.

Nothing here imports numba: a process that finds its kernels compiled never loads it.

Layout of the cache folder (``BURNUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/burnumba`` or
``~/.cache/burnumba``), one subfolder per environment (python, numba, llvmlite, numpy, CPU):

    <root>/<env>/src/     generated Python source, one module per row and per dispatcher
    <root>/<env>/obj/     one object file per (row, dtype), compiled once
    <root>/<env>/lib/     one shared library per (set of rows, dtype), with its manifest
    <root>/<env>/keys/    the index: a kernel's key, by the bytes of the kernels' files
    <root>/<env>/build.lock

Every key is a digest of the code the artifact is compiled from (``keys.py``: the generated
source of a row or a dispatcher, the hand-written code they bind, the compile recipe) and of
the environment, so changed code can never run stale: it has another name; and a comment
changes no key. A library is loaded only after its manifest matches what this process
expects and its bytes hash to the manifest's sha256, so a truncated,
damaged or foreign file is rebuilt, never run. Writers write to a temporary name and rename
(atomic on POSIX); builders hold ``build.lock`` (an advisory ``flock``), so processes that
compile at once (pytest-xdist, Dask workers) never see half a file or build twice.
"""
import ast
import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import platform
import sys
import tempfile

FORMAT = 2                          # of the manifests, the keys and the kernel ABI
HERE = os.path.dirname(os.path.abspath(__file__))


def root():
    """The cache folder (not created here)."""
    env = os.environ.get("BURNUMBA_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "burnumba")


def _version(name):
    """An installed package's version, from its ``<name>-<version>.dist-info`` folder beside
    it, without importing it (importlib.metadata costs a warm start 50 ms); for a package
    installed otherwise, the (path, size, mtime) of its __init__."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    with contextlib.suppress(OSError):
        for entry in os.listdir(site):
            if entry.startswith(name + "-") and entry.endswith(".dist-info"):
                return entry[len(name) + 1:-len(".dist-info")]
    st = os.stat(spec.origin)
    return (spec.origin, st.st_size, st.st_mtime_ns)


def _cpu():
    """The CPU model and features, which the compiled code is specialised for."""
    try:
        with open("/proc/cpuinfo") as fh:
            info = fh.read().split("\n\n")[0]
        keep = [line for line in info.splitlines()
                if line.split(":")[0].strip() in ("model name", "flags", "Features",
                                                   "CPU implementer", "CPU part")]
        return "\n".join(keep)
    except OSError:
        return platform.processor()


@functools.lru_cache(maxsize=None)
def environment():
    """What compiled code depends on besides its source, as a JSON-able dict: numba and
    llvmlite make the machine code, numpy's functions are compiled by numba's own
    implementations of them, python's version fixes the bytecode numba reads."""
    return {"format": FORMAT, "python": sys.implementation.cache_tag,
            "machine": platform.machine(), "system": platform.system(),
            "numba": _version("numba"), "llvmlite": _version("llvmlite"),
            "numpy": _version("numpy"),
            "cpu": hashlib.sha256(_cpu().encode()).hexdigest()[:16]}


def _files():
    """Every Python file under kernels/, sorted."""
    out = []
    for top, dirs, names in os.walk(HERE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out += [os.path.join(top, n) for n in sorted(names) if n.endswith(".py")]
    return out


@functools.lru_cache(maxsize=None)
def files_digest():
    """A digest of the bytes of every file under kernels/: the index's key (a kernel's key
    is a pure function of these files), and what ``sources_changed`` compares."""
    h = hashlib.sha256()
    for p in _files():
        with open(p, "rb") as fh:
            h.update(os.path.relpath(p, HERE).encode() + b"\0" + fh.read() + b"\0")
    return h.hexdigest()


def sources_changed():
    """Whether the files under kernels/ changed on disk since this process first read them
    (a builder subprocess generates the kernels' code anew from them, and keys what it
    builds by that code: a library this process then cannot find was built from other
    rules)."""
    return files_digest.__wrapped__() != files_digest()


class _Normalize(ast.NodeTransformer):
    """Drops docstrings (a function's, a class's, the module's)."""

    def _body(self, node):
        self.generic_visit(node)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    visit_Module = visit_FunctionDef = visit_ClassDef = visit_AsyncFunctionDef = _body


@functools.lru_cache(maxsize=None)
def code_digest(name, *definitions):
    """A digest of the code of kernels/``name`` (or of its top-level ``definitions`` only,
    functions or assignments, by name), not of its text: the ``ast`` without docstrings
    and without positions, so comments, docstrings and blank lines do not change it. (The
    bytecode would not do: it holds line numbers, which a comment above shifts.)"""
    with open(os.path.join(HERE, name)) as fh:
        tree = _Normalize().visit(ast.parse(fh.read()))
    if definitions:
        found = {}
        for node in tree.body:
            names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [
                t.id for t in getattr(node, "targets", ()) if isinstance(t, ast.Name)]
            for n in names:
                if n in definitions:
                    found[n] = node
        missing = sorted(set(definitions) - set(found))
        assert not missing, f"kernels/{name} has no {missing} (cache keys name them)"
        tree = ast.Module([found[n] for n in definitions], [])
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def digest(*parts):
    """The digest of ``parts`` in this environment (FORMAT, python, numba, CPU, ...)."""
    h = hashlib.sha256(json.dumps([FORMAT, environment(), parts],
                                  sort_keys=True, default=str).encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def folder():
    """This environment's cache folder."""
    env = hashlib.sha256(json.dumps(environment(), sort_keys=True, default=str).encode())
    return os.path.join(root(), env.hexdigest()[:16])


def path(kind, name):
    return os.path.join(folder(), kind, name)


def dtype_tag(dtype):
    return {"float64": "f64", "float32": "f32"}[str(dtype)]


# -- writing and checking ----------------------------------------------------------------
def write_atomic(target, data):
    """Write bytes (or text) to ``target`` through a temporary file and a rename."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def sha256_file(p):
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(key, library, **fields):
    """Record a built library: written after the library, so a manifest always describes
    a complete file."""
    manifest = {"format": FORMAT, "key": key, "environment": environment(),
                "library": os.path.basename(library), "sha256": sha256_file(library),
                "size": os.path.getsize(library), **fields}
    write_atomic(path("lib", key + ".json"), json.dumps(manifest, indent=1, default=str))
    return manifest


class Damaged(Exception):
    """A cached artifact that must not be run (the message says why)."""


def read_manifest(key):
    """The manifest of library ``key`` and the library's path, checked against this
    process's expectations and the library's bytes; None when it was never built. Raises
    ``Damaged`` for anything that does not match."""
    mpath = path("lib", key + ".json")
    try:
        with open(mpath) as fh:
            text = fh.read()
    except FileNotFoundError:
        return None
    try:
        manifest = json.loads(text)
    except ValueError:
        raise Damaged(f"{mpath}: not a JSON manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or \
            manifest.get("key") != key:
        raise Damaged(f"{mpath}: the manifest is for another kernel or format")
    if json.loads(json.dumps(environment(), default=str)) != manifest.get("environment"):
        raise Damaged(f"{mpath}: built for another environment (python, numba, CPU)")
    lib = path("lib", str(manifest.get("library")))
    if os.path.dirname(lib) != path("lib", "").rstrip(os.sep):
        raise Damaged(f"{mpath}: the manifest names a file outside the cache")
    try:
        size = os.path.getsize(lib)
    except OSError:
        raise Damaged(f"{lib}: the compiled library is missing") from None
    if size != manifest.get("size") or sha256_file(lib) != manifest.get("sha256"):
        raise Damaged(f"{lib}: the compiled library does not match its manifest's size and "
                      "sha256 (truncated, damaged or replaced)")
    return manifest, lib


def discard(key):
    """Remove a damaged library and its manifest (another process may have done it)."""
    for name in (key + ".json", key + ".so"):
        with contextlib.suppress(OSError):
            os.unlink(path("lib", name))


@contextlib.contextmanager
def build_lock():
    """Hold the cache folder's build lock (an advisory flock; a no-op where there is none)."""
    os.makedirs(folder(), exist_ok=True)
    with open(os.path.join(folder(), "build.lock"), "a+") as fh:
        try:
            import fcntl
        except ImportError:                    # no flock (Windows): atomic renames only
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def built_kernels(dtype):
    """(row names, tensor row names, jvp, key) of every kernel library of ``dtype`` built here,
    as their manifests say (``keys.current`` tells whether one was built from this process's
    code; ``read_manifest`` checks the rest before a load)."""
    tag = f"-{dtype_tag(dtype)}-"
    try:
        names = os.listdir(path("lib", ""))
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        if name.startswith("k") and name.endswith(".json") and tag in name:
            try:
                with open(path("lib", name)) as fh:
                    manifest = json.load(fh)
                out.append((frozenset(manifest["rows"]), frozenset(manifest["tensor_rows"]),
                            bool(manifest.get("jvp")), name[:-5]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return out


def read_index(name, expected):
    """The value ``keys`` stored under ``name`` for the request ``expected``, or None (never
    written, damaged, or written for another request)."""
    try:
        with open(path("keys", name + ".json")) as fh:
            entry = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("request") != expected:
        return None
    return entry.get("value")


def write_index(name, request, value):
    with contextlib.suppress(OSError):          # an index is an optimisation only
        write_atomic(path("keys", name + ".json"), json.dumps({"request": request,
                                                               "value": value}))
