"""Which BLAS the kernels' products call, and with how many threads: the BLAS policy.

The kernels call gemm and gemv through addresses in the control block (``engine.
control_block`` writes them; ``_native.py`` calls them), so no kernel links a BLAS of its
own. For float64, and for small float32 products, those are the routines of the BLAS numpy
loaded (found with threadpoolctl and ctypes); for large float32 products on AMD's AVX-512
CPUs, burnumba's own copy of OpenBLAS (the scipy-openblas32 wheel) loaded with other
kernels (``own_core``). ``BlasThreads`` pins the BLAS libraries to one thread while large
products run. Nothing here imports numba.
"""
import ctypes
import functools
import os
import threading
from typing import NamedTuple

from .errors import KernelError


class Blas(NamedTuple):
    """The BLAS routines the kernels call for one dtype: gemm's and gemv's addresses (0 when
    there is no BLAS: then matmul runs as loops), whether they take 64-bit integers, and
    what they are (for the reports)."""
    gemm: int
    gemv: int
    ilp64: int
    what: str


_NO_BLAS = Blas(0, 0, 0, "none: matmul runs as loops")
# OpenBLAS picks its kernels by CPU when it is loaded (OPENBLAS_CORETYPE overrides that). On
# AMD CPUs with AVX-512 (Zen 4) it picks SkylakeX's, whose float32 products measured 20-27%
# slower here than its Zen ones (single thread, the makemore MLP's 64 x 1024 x 1024 sgemm
# and its two backward products: 1.69, 1.58, 1.97 ms against 1.35, 1.35, 1.44 ms; float64
# products the same within noise). numpy's OpenBLAS is shared with the user's code, so its
# choice stays; burnumba loads its own copy of OpenBLAS (the scipy-openblas32 wheel) with the
# Zen kernels for its large float32 products there (LARGE_PRODUCT).
_AVX512_CORES = ("skylakex", "cooperlake", "sapphirerapids")


@functools.lru_cache(maxsize=None)
def _numpy_blas():
    """(dgemm, sgemm, ilp64, dgemv, sgemv, path, core) of the BLAS numpy loaded, found with
    threadpoolctl (which lists the BLAS libraries loaded in this process) and ctypes; None
    without one. Its thread count is the user's, as for numpy's own products."""
    try:
        from threadpoolctl import threadpool_info
        libraries = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    except Exception:             # noqa: BLE001  (no threadpoolctl, or it failed: loops)
        return None
    for info in libraries:
        own = _own_openblas_path()
        if own is not None and os.path.realpath(info["filepath"]) == os.path.realpath(own):
            continue
        try:
            lib = ctypes.CDLL(info["filepath"])
        except OSError:
            continue
        for prefix in ("scipy_", ""):
            for suffix, ilp64 in (("64_", 1), ("", 0)):
                try:
                    found = [getattr(lib, f"{prefix}cblas_{name}{suffix}")
                             for name in ("dgemm", "sgemm", "dgemv", "sgemv")]
                except AttributeError:
                    continue
                d, s, dv, sv = (ctypes.cast(f, ctypes.c_void_p).value for f in found)
                return d, s, ilp64, dv, sv, info["filepath"], str(info.get("architecture"))
    return None


@functools.lru_cache(maxsize=None)
def _own_openblas_path():
    """The scipy-openblas32 wheel's library (found without importing the package, whose
    import may load it), or None."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("scipy_openblas32")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    folder = os.path.join(os.path.dirname(spec.origin), "lib")
    try:
        names = sorted(x for x in os.listdir(folder)
                       if x.startswith("libscipy_openblas") and ".so" in x)
    except OSError:
        return None
    return os.path.join(folder, names[0]) if names else None


def _amd():
    try:
        with open("/proc/cpuinfo") as f:
            return "AuthenticAMD" in f.read(4096)
    except OSError:
        return False


def own_core(numpy_core):
    """The OpenBLAS kernels burnumba's float32 products use, or None for numpy's BLAS:
    ``BURNUMBA_BLAS_CORE`` ("numpy", or an OpenBLAS core name such as "Zen" or "Haswell");
    else "Zen" on an AMD CPU where numpy's OpenBLAS picked AVX-512 kernels, unless the user
    chose them (OPENBLAS_CORETYPE); else None."""
    raw = os.environ.get("BURNUMBA_BLAS_CORE", "").strip()
    if raw:
        return None if raw.lower() == "numpy" else raw
    if os.environ.get("OPENBLAS_CORETYPE") or numpy_core.lower() not in _AVX512_CORES:
        return None
    return "Zen" if _amd() else None


_LOAD_LOCK = threading.Lock()


def _load_own_openblas(core):
    """(sgemm, sgemv, core it reports) of burnumba's own OpenBLAS, loaded with ``core`` and
    one thread, or None. OpenBLAS reads OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS once, when
    it is loaded: they are set for that moment only (under the GIL and a lock), and put
    back. One thread from the start, not pinned to one at run time: pinned (threadpoolctl),
    this library's products gave other bits when several threads called at once (the
    makemore MLP's gradients, 4 threads: 40 of 40 calls differed from the serial one, by up
    to 3.9e-7 relative); started with one thread, 0 of 40."""
    path = _own_openblas_path()
    if path is None:
        return None
    with _LOAD_LOCK:
        settings = {"OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": "1"}
        before = {k: os.environ.get(k) for k in settings}
        os.environ.update(settings)
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            return None
        finally:
            for k, v in before.items():
                if v is None:
                    del os.environ[k]
                else:
                    os.environ[k] = v
    try:
        sgemm, sgemv = lib.scipy_cblas_sgemm, lib.scipy_cblas_sgemv
        name = lib.scipy_openblas_get_corename
    except AttributeError:
        return None
    name.restype = ctypes.c_char_p
    return (ctypes.cast(sgemm, ctypes.c_void_p).value, ctypes.cast(sgemv, ctypes.c_void_p).value,
            (name() or b"?").decode())


# From this many multiply-adds (M * N * K) a tape's float32 products go to burnumba's own
# OpenBLAS: below it numpy's OpenBLAS is faster on this VM, its SkylakeX kernels having a
# path for small matrices that skips packing (one thread, numpy's / own time: 64 x 16 x 16
# 0.75, 64 x 64 x 64 0.86; 128 x 128 x 128 1.04, 64 x 256 x 256 1.05, 64 x 1024 x 1024 1.19).
LARGE_PRODUCT = 1 << 21


@functools.lru_cache(maxsize=None)
def blas(dtype="float64", large=False):
    """The Blas of ``dtype`` ("float64" or "float32") for a tape whose largest product is
    ``large`` (at least LARGE_PRODUCT): numpy's, or for large float32 products burnumba's own
    OpenBLAS where ``own_core`` picks kernels for it (loaded then, on first use; numpy's
    when it cannot be loaded)."""
    found = _numpy_blas()
    if found is None:
        return _NO_BLAS
    d, s, ilp64, dv, sv, path, core = found
    where = f"numpy's {os.path.basename(path)} ({core} kernels)"
    if dtype == "float64":
        return Blas(d, dv, ilp64, where)
    want = own_core(core) if large else None
    own = _load_own_openblas(want) if want else None
    if own is None:
        return Blas(s, sv, ilp64, where)
    return Blas(own[0], own[1], 0, f"burnumba's scipy-openblas32 ({own[2]} kernels, for {want})")


# OpenBLAS runs a product on one thread when M * N * K <= 65536 * GEMM_MULTITHREAD_THRESHOLD
# (4 by default); above, it spreads it over every core it was given. For the products of a
# small model that costs more than it gains (measured here: a GPT training step at batch 64
# took 81-91 ms with numpy's default 2 threads while another process ran, 8.2 ms with one).
THREADED_PRODUCT = 65536 * 4


class BlasThreads:
    """A context that pins the BLAS libraries to ``BURNUMBA_BLAS_THREADS`` threads (default
    1; 0 leaves them alone) while burnumba's kernels run large enough products, and restores
    the previous settings after: the user's own numpy calls outside burnumba keep theirs.
    Nested and concurrent uses share one pinning (the first one in saves, the last one out
    restores), under a lock. Uses threadpoolctl, which finds every BLAS loaded."""

    def __init__(self, threads):
        self.threads = threads
        self.lock = threading.Lock()
        self.depth = 0
        self.saved = []
        self.libraries = None

    def __enter__(self):
        with self.lock:
            if self.depth == 0:
                if self.libraries is None:
                    from threadpoolctl import ThreadpoolController
                    self.libraries = ThreadpoolController().select(
                        user_api="blas").lib_controllers
                self.saved = []
                for lib in self.libraries:
                    n = lib.get_num_threads()
                    if n is not None and n > self.threads:
                        lib.set_num_threads(self.threads)
                        self.saved.append((lib, n))
            self.depth += 1
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.depth -= 1
            if self.depth == 0:
                for lib, n in self.saved:
                    lib.set_num_threads(n)
                self.saved = []


@functools.lru_cache(maxsize=None)
def blas_threads():
    """The process's BlasThreads context, or None when BURNUMBA_BLAS_THREADS=0 or no BLAS
    was found."""
    raw = os.environ.get("BURNUMBA_BLAS_THREADS", "1")
    try:
        threads = int(raw)
    except ValueError:
        raise KernelError(f"BURNUMBA_BLAS_THREADS={raw!r}: use a number of threads (0 leaves "
                          "the BLAS as configured)") from None
    if threads <= 0 or blas().gemm == 0:
        return None
    blas("float32", True)     # loads burnumba's own OpenBLAS, if any, before the pinning
    return BlasThreads(threads)  # context lists the libraries to pin
