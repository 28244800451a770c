"""Compiled-code caches on disk, for the time-to-first-result measurements of the reports.

Two systems keep what they compile in a folder that outlives the process, so their first
call in a new process is "cold" (an empty folder: everything is compiled) or "warm" (the
folder a previous process filled: it is loaded):

* burnumba: numba's cache (``NUMBA_CACHE_DIR``) and burnumba's own kernel cache
  (``BURNUMBA_CACHE_DIR``); both are pointed at the same folder, so the measurement is right
  whichever of the two the engine uses.
* torch.compile: inductor's caches (FX graphs, AOTAutograd, the compiled C++ kernels and
  headers) under ``TORCHINDUCTOR_CACHE_DIR``. Dynamo's tracing is not cached: a warm process
  still traces.

jax.jit's persistent compilation cache is off unless configured, and torch eager, autograd
and micrograd compile nothing, so for them every process is cold.

``CacheDirs(policy, root)`` hands out those folders under ``root``:

* ``"each"``: a new, empty folder for every (system, case, dtype): every case has a cold
  figure, then a warm one on the folder its cold run filled.
* ``"once"``: a new, empty folder for the first case of each (system, dtype) only; the other
  cases run on the system's default cache folders (which the report fills before it measures
  the warm start), so they have a warm figure and no cold one. Cheaper when one compile
  serves every case (burnumba's njit interpreter, one per dtype), and with torch.compile
  when inductor's default cache already holds the graphs from an earlier run.
* ``"none"``: no empty folder at all: every case runs on the default cache folders, so it
  has a warm figure only (report_tensor.py in the short run of bench/report.py, whose cold
  starts are the tiny graph's and the GPT step's; the MLP's cold compile took 13 s).
"""
import contextlib
import os
import shutil

CACHE_ENV = {"burnumba": ("NUMBA_CACHE_DIR", "BURNUMBA_CACHE_DIR"),
             "torch.compile": ("TORCHINDUCTOR_CACHE_DIR",)}
POLICIES = ("each", "once", "none")


def has_disk_cache(system):
    return system in CACHE_ENV


class CacheDirs:
    def __init__(self, policy, root):
        if policy not in POLICIES:
            raise ValueError(policy)
        self.policy, self.root = policy, root
        self._seen = set()
        self._n = 0

    def get(self, system, dtype, case):
        """(environment for a child process, folder) for this case: a new empty folder, or
        (None, None) for the default cache folders (the parent's environment)."""
        if self.policy == "none" or (self.policy == "once" and (system, dtype) in self._seen):
            return None, None
        self._seen.add((system, dtype))
        self._n += 1
        path = os.path.join(self.root, f"{self._n:03d}-{system}-{case}-{dtype}")
        os.makedirs(path)
        return dict(os.environ, **{k: path for k in CACHE_ENV[system]}), path

    @staticmethod
    def done(path):
        """The case is measured: its folder is not needed any more."""
        if path:
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def inductor_cache_dir(path):
    """In this process, torch.compile compiles into / loads from ``path`` (None: no change)."""
    if path is None:
        yield
        return
    try:
        from torch._inductor.runtime.cache_dir_utils import temporary_cache_dir
    except Exception:               # no torch, or another torch: set the variable ourselves
        old = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
            else:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = old
        return
    with temporary_cache_dir(path):
        yield


def folder_mb(path):
    """Size of a folder in MiB (what a system wrote to its cache)."""
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, f))
            except OSError:
                pass
    return total / 2 ** 20


def compile_stats(system):
    """In a child, after its first call: what came from the disk cache and what was compiled.
    burnumba: numba's hits and misses over burnumba's njit dispatchers (as report_scalar.py counts
    them); torch.compile: inductor's FX-graph and AOTAutograd cache hits and misses."""
    import sys
    out = {}
    if system == "burnumba" and "numba" in sys.modules:
        from numba.core.dispatcher import Dispatcher
        seen = {id(o): o for m in list(sys.modules.values())
                if m and m.__name__.startswith("burnumba")
                for o in vars(m).values() if isinstance(o, Dispatcher)}
        out["numba_cache_hits"] = sum(sum(d.stats.cache_hits.values()) for d in seen.values())
        out["numba_cache_misses"] = sum(sum(d.stats.cache_misses.values())
                                        for d in seen.values())
    elif system == "torch.compile":
        try:
            from torch._dynamo.utils import counters
            out["fxgraph_cache_hit"] = counters["inductor"]["fxgraph_cache_hit"]
            out["fxgraph_cache_miss"] = counters["inductor"]["fxgraph_cache_miss"]
            out["aot_autograd_cache_hit"] = counters["aot_autograd"]["autograd_cache_hit"]
            out["aot_autograd_cache_miss"] = counters["aot_autograd"]["autograd_cache_miss"]
            import torch._inductor.config as inductor_config
            # inductor compiles C++ kernels in this many worker processes (its default: the
            # number of CPUs); the calls themselves run on one thread
            out["inductor_compile_threads"] = inductor_config.compile_threads
        except Exception:
            pass
    return out
