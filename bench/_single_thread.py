"""Pin every numeric library to one thread. Import this first, before numpy, numba, torch or
jax load: they read the environment once. Set BENCH_THREADS=0 to keep their defaults.

torch also gets ``torch.set_num_threads(1)`` where it is imported (train_workloads.py,
tensor_workloads.py); XLA's CPU backend is single-threaded with
``--xla_cpu_multi_thread_eigen=false``.
"""
import os

if os.environ.get("BENCH_THREADS", "1") != "0":
    for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMBA_NUM_THREADS"):
        os.environ[_k] = "1"
    if "xla_cpu_multi_thread_eigen" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false").strip()
