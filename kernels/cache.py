"""Where compiled kernels live on disk, what they are keyed by, and how they are checked.

Nothing here imports numba: a process that finds its kernels compiled never loads it.

Layout of the cache folder (``BURNUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/burnumba`` or
``~/.cache/burnumba``), one subfolder per environment (python, numba, llvmlite, CPU):

    <root>/<env>/src/     generated Python source, one module per row and per dispatcher
    <root>/<env>/obj/     one object file per (row, dtype), compiled once
    <root>/<env>/lib/     one shared library per (set of rows, dtype), with its manifest
    <root>/<env>/build.lock

Every key is a digest of the sources that define the kernels (the op table, the generator,
the primitives, the build settings) and of the environment, so a changed source can never
run stale code: it has another name. A library is loaded only after its manifest matches
what this process expects and its bytes hash to the manifest's sha256, so a truncated,
damaged or foreign file is rebuilt, never run. Writers write to a temporary name and rename
(atomic on POSIX); builders hold ``build.lock`` (an advisory ``flock``), so processes that
compile at once (pytest-xdist, Dask workers) never see half a file or build twice.
"""
import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import platform
import sys
import tempfile

FORMAT = 1                          # of the manifests and the kernel ABI
_SOURCES = ("ops.py", "rules.py", "_gen.py", "layout.py", "_prims.py", "_native.py", "_build.py",
            "update.py")
HERE = os.path.dirname(os.path.abspath(__file__))


def root():
    """The cache folder (not created here)."""
    env = os.environ.get("BURNUMBA_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "burnumba")


def _package_stamp(name):
    """(path, size, mtime) of an installed package's __init__, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return (name, None)
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
    """What compiled code depends on besides its source, as a JSON-able dict."""
    return {"format": FORMAT, "python": sys.implementation.cache_tag,
            "machine": platform.machine(), "system": platform.system(),
            "numba": _package_stamp("numba"), "llvmlite": _package_stamp("llvmlite"),
            "cpu": hashlib.sha256(_cpu().encode()).hexdigest()[:16]}


@functools.lru_cache(maxsize=None)
def source_digest():
    """A digest of every file that defines what the kernels compute or how they are built."""
    h = hashlib.sha256()
    for name in _SOURCES:
        with open(os.path.join(HERE, name), "rb") as fh:
            h.update(name.encode() + b"\0" + fh.read() + b"\0")
    return h.hexdigest()


def sources_changed():
    """Whether the files behind ``source_digest`` changed on disk since this process first
    read them (a builder subprocess hashes them anew, and keys what it builds by theirs)."""
    return source_digest.__wrapped__() != source_digest()


def digest(*parts):
    h = hashlib.sha256(json.dumps([FORMAT, source_digest(), environment(), parts],
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


# -- keys of the artifacts ---------------------------------------------------------------
def row_key(row_name, dtype):
    """A row's generated module (all its functions)."""
    return f"{row_name}-{dtype_tag(dtype)}-{digest('row', row_name, str(dtype))[:16]}"


def object_key(row_name, dtype, part):
    """The object file of one part of a row's code ("core": forward and backward, "jvp")."""
    return f"{row_name}-{part}-{dtype_tag(dtype)}-{digest('obj', row_name, str(dtype), part)[:16]}"


def kernel_key(row_names, tensor_names, dtype, jvp=False):
    names, tensor = sorted(row_names), sorted(tensor_names)
    return (f"k{len(names)}{'j' if jvp else ''}-{dtype_tag(dtype)}-"
            f"{digest('kernel', names, tensor, str(dtype), bool(jvp))[:16]}")


def update_key(dtype):
    return f"update-{dtype_tag(dtype)}-{digest('update', str(dtype))[:16]}"


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
    manifest = {"format": FORMAT, "key": key, "source": source_digest(),
                "environment": environment(),
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
    if manifest.get("source") != source_digest():
        raise Damaged(f"{mpath}: built from other kernel sources (another burnumba version)")
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
    """(row names, tensor row names, jvp, key) of every kernel library of ``dtype`` built here
    from this process's kernel sources (the manifest says; ``read_manifest`` checks the rest
    before a load)."""
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
                if manifest["source"] == source_digest():
                    out.append((frozenset(manifest["rows"]), frozenset(manifest["tensor_rows"]),
                                bool(manifest.get("jvp")), name[:-5]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
    return out
