"""bench/c_sweep.c, the hand-written C switch interpreter of issue #14, as an independent
implementation: on random scalar graphs its every value and gradient must match burnumba's
(report_interp.measure checks that before it times anything)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
import report_interp  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_c_interpreter_and_burnumba_agree_on_random_scalar_graphs(seed, monkeypatch):
    c_fn, why = report_interp.build_c("-O2")
    if c_fn is None:
        pytest.skip(why)
    graph = report_interp.random_graph
    monkeypatch.setattr(report_interp, "random_graph",
                        lambda ops, **kw: graph(ops, seed=seed, **kw))
    row = report_interp.measure(400, calls=2, repeats=1, c_fn=c_fn)
    assert row["nodes"] > 400 and row["c_max_grad_diff"] <= 1e-12


def test_the_report_prints_its_table(capsys):
    report_interp.main(["--ops", "200", "--repeats", "1", "--calls", "2"])
    out = capsys.readouterr().out
    assert "burnumba / C" in out and "trace µs/node" in out
