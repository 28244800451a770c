"""``burnumba info``: the report a bug report starts with."""
import json
import os
import subprocess
import sys

import pytest

from burnumba import cli
from burnumba.tools import info as _info

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu sse4_2 avx fma avx2 avx512f avx512bw avx512vl
bogomips\t: 5200.00

processor\t: 1
model name\t: another model, not read
flags\t\t: avx512_fp16
"""


def test_cpu_model_and_features_from_the_first_processor():
    model, features = _info.cpu_from_text(CPUINFO)
    assert model == "AMD EPYC 9R14 96-Core Processor"
    assert features == ["sse4_2", "avx", "fma", "avx2", "avx512f", "avx512bw", "avx512vl"]


def test_arm_features_are_read_too():
    model, features = _info.cpu_from_text("processor\t: 0\nFeatures\t: fp asimd sve\n")
    assert model is None and features == ["asimd", "sve"]


def test_the_cache_size_counts_every_file(tmp_path, monkeypatch):
    monkeypatch.setenv("BURNUMBA_CACHE_DIR", str(tmp_path))
    (tmp_path / "env" / "lib").mkdir(parents=True)
    (tmp_path / "env" / "lib" / "a.so").write_bytes(b"x" * 3000)
    (tmp_path / "b.json").write_bytes(b"y" * 72)
    assert _info.folder_size(tmp_path) == (3072, 2)
    assert _info.kernels()["cache size"] == "3.0 KiB in 2 files"
    assert _info.kernels()["cache root"] == str(tmp_path)
    assert _info.folder_size(tmp_path / "missing") == (0, 0)


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"),
                                     (5 << 20, "5.0 MiB"), (3 << 40, "3072.0 GiB")])
def test_human_sizes(n, text):
    assert _info.human(n) == text


def test_collect_has_what_a_bug_report_asks_for():
    import numpy as np
    info = _info.collect()
    assert list(info) == ["versions", "kernels", "blas", "threads", "cpu"]
    assert info["versions"]["burnumba"].startswith("0.")
    assert info["versions"]["numpy"] == np.__version__
    for name in ("numba", "llvmlite", "python", "threadpoolctl"):
        assert info["versions"][name] and info["versions"][name] != "not installed", name
    assert info["kernels"]["engine"] in ("aot", "jit", "python")
    assert set(list(info["blas"])[:3]) >= {"float64", "float32"}
    assert info["cpu"]["cores"] >= 1
    assert "BURNUMBA_BLAS_THREADS" in info["threads"]["burnumba's BLAS threads"]


def test_the_subcommand_prints_sections(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    for line in ("versions:", "kernels:", "blas:", "threads:", "cpu:", "  numba: ",
                 "  cache folder of this environment: ", "  float64: ", "  features: "):
        assert line in out, line


def test_python_m_burnumba_info_json_without_importing_numba():
    """A fresh process: the JSON parses, and the report does not load numba (it reads the
    versions from the installed metadata)."""
    code = ("import sys, runpy; sys.argv = ['burnumba', 'info', '--json'];\n"
            "try:\n    runpy.run_module('burnumba', run_name='__main__')\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n"
            "print('numba imported:', 'numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    *body, last = done.stdout.strip().splitlines()
    assert last == "numba imported: False"
    info = json.loads("\n".join(body))
    assert info["versions"]["numba"] == _info.version("numba")
