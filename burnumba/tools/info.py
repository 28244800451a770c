"""``burnumba info``: what a bug report needs to know about this installation.

    burnumba info            # one "key: value" line each, in sections
    burnumba info --json     # the same, as one JSON object

It prints burnumba's version and where it is installed; the versions of Python, numpy, numba,
llvmlite and threadpoolctl (read from the installed metadata: numba is not imported); the
kernel engine and the kernel cache (folder, size, compiled libraries); the BLAS burnumba's
kernels call for float64, for small float32 products and for large ones (the same lines as
the benchmark reports), and every thread pool threadpoolctl finds; the thread settings; and
the CPU's model and the vector features the compiled kernels can use.

>>> from burnumba import _info
>>> sorted(_info.collect())[:3]
['blas', 'cpu', 'kernels']
"""
import importlib.metadata
import json
import os
import platform
import sys

from .._version import __version__
from ..kernels import cache, engine

# the CPU flags that matter to compiled numeric code, in the order they were introduced
VECTOR_FLAGS = ("sse4_2", "avx", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "neon", "asimd", "sve")
THREAD_VARIABLES = ("BURNUMBA_BLAS_THREADS", "BURNUMBA_BLAS_CORE", "OMP_NUM_THREADS",
                    "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE",
                    "NUMBA_NUM_THREADS")


def version(dist):
    """The installed version of distribution ``dist``, or "not installed"."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_from_text(text):
    """(model, vector features) from the text of /proc/cpuinfo (its first processor)."""
    model, flags = None, set()
    for line in text.split("\n\n")[0].splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model", "cpu model") and model is None:
            model = value.strip()
        elif key in ("flags", "Features"):
            flags.update(value.split())
    return model, [f for f in VECTOR_FLAGS if f in flags]


def cpu():
    """The CPU's model, vector features and core counts."""
    model, features = None, []
    try:
        with open("/proc/cpuinfo") as fh:
            model, features = cpu_from_text(fh.read())
    except OSError:
        pass
    usable = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
              else os.cpu_count())
    return {"model": model or platform.processor() or platform.machine() or "unknown",
            "features": " ".join(features) if features else "unknown",
            "machine": platform.machine(), "cores": os.cpu_count(),
            "cores usable by this process": usable}


def folder_size(path):
    """(bytes, files) under ``path``; (0, 0) when it does not exist."""
    total = count = 0
    for base, _, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(base, name))
                count += 1
            except OSError:
                continue
    return total, count


def human(nbytes):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024


def kernels():
    """The kernel engine and cache (without building anything)."""
    root = cache.root()
    size, files = folder_size(root)
    libraries = {d: len(cache.built_kernels(d)) for d in ("float64", "float32")}
    try:
        from ..kernels import _bncall  # noqa: F401  (the optional C extension)
        caller = "the C extension burnumba.kernels._bncall"
    except ImportError:
        caller = "ctypes (the C extension _bncall is not built)"
    return {"engine": engine.engine_name(), "caller": caller, "cache root": root,
            "cache folder of this environment": cache.folder(),
            "cache size": f"{human(size)} in {files} files",
            "kernel libraries for these sources": ", ".join(f"{n} {d}"
                                                             for d, n in libraries.items())}


def blas():
    """What burnumba's products call, and every thread pool in this process."""
    out = {"float64": engine.blas("float64").what,
           "float32": engine.blas("float32").what,
           f"float32, products of >= {engine.LARGE_PRODUCT:,} multiply-adds":
               engine.blas("float32", True).what}
    try:
        from threadpoolctl import threadpool_info
        pools = threadpool_info()
    except Exception as e:              # noqa: BLE001 - a report never fails on this
        pools, out["thread pools"] = [], f"threadpoolctl failed: {type(e).__name__}: {e}"
    for pool in pools:
        name = f"{pool.get('user_api')}: {os.path.basename(pool.get('filepath', '?'))}"
        out[name] = (f"{pool.get('internal_api')} {pool.get('version') or ''}".rstrip() + ", "
                     f"{pool.get('num_threads')} threads"
                     + (f", {pool['architecture']} kernels" if pool.get("architecture") else ""))
    return out


def threads():
    out = {"burnumba's BLAS threads": os.environ.get("BURNUMBA_BLAS_THREADS", "1")
           + " (BURNUMBA_BLAS_THREADS; 0 leaves the BLAS as configured)"}
    for name in THREAD_VARIABLES[1:]:
        out[name] = os.environ.get(name, "unset")
    return out


def collect():
    """Everything ``burnumba info`` prints, as {section: {key: value}}."""
    where = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # burnumba/
    return {
        "versions": {"burnumba": f"{__version__} ({where})",
                     "python": f"{platform.python_version()} ({sys.executable})",
                     **{d: version(d) for d in ("numpy", "numba", "llvmlite",
                                                "threadpoolctl", "scipy-openblas32")},
                     "platform": platform.platform()},
        "kernels": kernels(),
        "blas": blas(),
        "threads": threads(),
        "cpu": cpu(),
    }


def format_text(info):
    lines = []
    for section, fields in info.items():
        lines.append(f"{section}:")
        lines += [f"  {key}: {value}" for key, value in fields.items()]
    return "\n".join(lines)


def add_parser(sub):
    """Add the ``info`` subcommand to the ``burnumba`` command's subparsers."""
    p = sub.add_parser("info", help="print versions, the kernel cache, the BLAS, threads and "
                       "CPU features (for bug reports)",
                       description="Print burnumba's version, the versions of Python, numpy, "
                       "numba and llvmlite, the kernel cache folder and its size, the BLAS "
                       "burnumba uses, the thread settings and the CPU's vector features.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)
    return p


def run(args):
    info = collect()
    print(json.dumps(info, indent=1) if args.json else format_text(info))
    return 0
