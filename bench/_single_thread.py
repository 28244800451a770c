"""Pin every numeric library to one thread. Import this first, before numpy, numba, torch or
jax load: they read the environment once. Set BENCH_THREADS=0 to keep their defaults.

torch also gets ``torch.set_num_threads(1)`` where it is imported (train_workloads.py,
tensor_workloads.py), and XLA ``--xla_cpu_multi_thread_eigen=false``. Those are requests,
and XLA does not honour them all: with that flag jax.jit still ran a 64x1024x1024 float32
product on two cores here (0.74 ms wall, 1.44 ms CPU per call; 1.47 ms wall pinned to one
core, as taskset does). So the reports start the processes that time one system with
``pin(one_core())`` before anything is imported (not the cold-start processes: torch.compile
builds on worker processes there), and "one thread" is one core for every system.
"""
import contextlib
import os

if os.environ.get("BENCH_THREADS", "1") != "0":
    for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS"):
        os.environ[_k] = "1"
    if "xla_cpu_multi_thread_eigen" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false").strip()


# the CPUs this process may use, before any pinning
CPUS = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


def one_core():
    """The CPUs a process that times one system on one thread should run on: one CPU, or
    None (no pinning) with BENCH_THREADS=0 or where affinity cannot be set."""
    if os.environ.get("BENCH_THREADS", "1") == "0" or not CPUS:
        return None
    return frozenset({min(CPUS)})


def pin(cpus):
    """Run this thread, and the threads and processes it starts from now on, on ``cpus``
    (None: leave it). Call it before a library starts its threads: threads started before
    keep the CPUs they had."""
    if cpus:
        os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def pinned(cpus):
    """Inside, this thread runs on ``cpus`` (None: as it was), so that a process started
    there inherits them from its start; afterwards as before. (A ``preexec_fn`` would do
    the same in the child, but forking a process that has threads, as jax's, is unsafe.)"""
    before = os.sched_getaffinity(0) if cpus else None
    pin(cpus)
    try:
        yield
    finally:
        pin(before)
