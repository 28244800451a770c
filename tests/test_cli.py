"""The burnumba command end to end: tiny training runs on the embedded data, checkpoints,
sampling, and the errors a user can hit. Each run takes a few seconds once numba's cache is
warm."""
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from burnumba import data, nn
from burnumba.cli import main

TINY = ["--steps", "30", "--batch", "4", "--json"]
JSON_TYPES = {"model": str, "dtype": str, "seed": int, "params": int, "steps": int, "batch": int,
              "ms_per_step": float, "final_train_loss": float, "final_val_loss": float,
              "peak_rss_mb": float}


def run(*args, code=None, check=True):
    """``python -m burnumba *args`` (or ``python -c code *args``) in a subprocess."""
    if "train" in args and os.environ.get("NUMBA_DISABLE_JIT", "0") != "0":
        pytest.skip("a training run takes minutes with NUMBA_DISABLE_JIT=1")
    cmd = [sys.executable] + (["-c", code] if code else ["-m", "burnumba"]) + list(args)
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900,
                          check=False)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def last_json(proc):
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def gpt_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpt")
    return out, run("train", "gpt", *TINY, "--eval-every", "10", "--out", str(out))


@pytest.fixture(scope="module")
def makemore_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("makemore")
    return out, run("train", "makemore", *TINY, "--clip", "1.0", "--out", str(out))


def check_results(r, model):
    for key, typ in JSON_TYPES.items():
        assert type(r[key]) is typ, (key, r[key])
    assert r["model"] == model and r["dtype"] == "float32" and r["seed"] == 0
    assert r["steps"] == 30 and r["batch"] == 4
    assert math.isfinite(r["final_train_loss"]) and math.isfinite(r["final_val_loss"])
    assert 0 < r["final_train_loss"] < 10 and 0 < r["final_val_loss"] < 10
    assert r["ms_per_step"] > 0 and r["peak_rss_mb"] > 10


def test_train_gpt_json(gpt_run):
    _, proc = gpt_run
    r = last_json(proc)
    check_results(r, "gpt")
    vocab = len(data.CharTokenizer.from_text(data.default_corpus()))
    assert r["vocab_size"] == vocab
    assert r["params"] == nn.GPT(vocab).n_params(nn.GPT(vocab).init())
    assert [s for s, _ in r["val_history"]] == [10, 20, 30]
    assert r["val_history"][-1][1] == r["final_val_loss"]
    assert len(r["samples"]) == 1 and len(r["samples"][0]) == 200
    # the human summary comes first, then the samples
    assert "final train loss" in proc.stdout and "samples:" in proc.stdout
    # the untrained GPT starts near ln(vocab); 30 small steps cannot be far from it
    assert abs(r["final_train_loss"] - math.log(vocab)) < 1.5


def test_train_makemore_json(makemore_run):
    _, proc = makemore_run
    r = last_json(proc)
    check_results(r, "makemore")
    assert r["params"] == 1_079_003 and r["vocab_size"] == 27 and r["clip"] == 1.0
    assert r["train_windows"] + r["val_windows"] == sum(len(n) + 1 for n in data.load_names())
    assert len(r["samples"]) == 5 and all(re.fullmatch("[a-z]*", s) for s in r["samples"])


def test_progress_bar_on_stderr(gpt_run):
    _, proc = gpt_run
    pytest.importorskip("tqdm")
    assert "30/30" in proc.stderr and "loss=" in proc.stderr
    assert "step 10: val loss" in proc.stderr
    assert "30/30" not in proc.stdout


def test_progress_lines_without_tqdm():
    code = ("import sys; sys.modules['tqdm'] = None\n"
            "from burnumba.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = run("train", "gpt", "--steps", "20", "--batch", "2", "--json", code=code)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("train gpt: step")]
    assert len(lines) == 10 and "step 20/20 (100%)" in lines[-1] and "ms/step" in lines[-1]
    assert last_json(proc)["steps"] == 20


def test_checkpoint_meta(gpt_run, makemore_run):
    from burnumba import load_checkpoint
    for (out, _), kind in ((gpt_run, "gpt"), (makemore_run, "makemore")):
        params, opt_state, meta = load_checkpoint(out / "checkpoint.npz")
        assert meta["model"] == kind and meta["steps"] == 30 and meta["seed"] == 0
        assert meta["dtype"] == "float32"
        model = nn.MODELS[kind](**meta["config"])
        assert {k: v.shape for k, v in params.items()} == \
            {k: tuple(s) for k, s, _ in model.shapes()}
        assert all(v.dtype == np.float32 for v in params.values())
        tok = data.CharTokenizer.from_dict(meta["tokenizer"])
        assert len(tok) == model.vocab_size
        assert opt_state is not None


def test_sample_makemore_matches_the_training_run(makemore_run):
    out, proc = makemore_run
    s = run("sample", str(out), "--n", "5", "--seed", "0")
    # same weights, same seed, same sampler: the names printed at the end of training
    assert s.stdout.splitlines() == last_json(proc)["samples"]
    again = run("sample", str(out / "checkpoint.npz"), "--n", "7", "--seed", "1",
                "--temperature", "0.5")
    names = again.stdout.splitlines()
    assert len(names) == 7 and all(re.fullmatch("[a-z]*", n) for n in names)


def test_sample_gpt(gpt_run):
    out, _ = gpt_run
    s = run("sample", str(out), "--n", "2", "--seed", "3")
    assert s.stdout.count("--- sample") == 2
    body = s.stdout.split("--- sample 2 ---\n")[1]
    assert len(body) >= 150        # 200 characters, trailing newlines stripped
    assert s.stdout == run("sample", str(out), "--n", "2", "--seed", "3").stdout


def test_corrupt_checkpoint_exits_2_with_one_line(tmp_path):
    (tmp_path / "checkpoint.npz").write_bytes(b"PK\x03\x04 this is not a checkpoint")
    proc = run("sample", str(tmp_path), check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "checkpoint.npz" in proc.stderr and "error" in proc.stderr


def test_checkpoint_errors_in_process(tmp_path, capsys, gpt_run):
    assert main(["sample", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "no such checkpoint" in err and len(err.strip().splitlines()) == 1
    # a real checkpoint whose meta names no model
    from burnumba import load_checkpoint, save_checkpoint
    params, _, _ = load_checkpoint(gpt_run[0] / "checkpoint.npz")
    save_checkpoint(tmp_path / "checkpoint.npz", params, meta={"model": "resnet"})
    assert main(["sample", str(tmp_path)]) == 2
    assert "known model" in capsys.readouterr().err
    # parameters that do not fit the config of the meta
    save_checkpoint(tmp_path / "checkpoint.npz", {"wte": np.zeros((3, 2))},
                    meta={"model": "gpt", "config": nn.GPT(65).config,
                          "tokenizer": data.CharTokenizer("ab").to_dict()})
    assert main(["sample", str(tmp_path)]) == 2
    assert "do not fit" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["train", "gpt", "--steps", "0"], "--steps: must be at least 1"),
    (["train", "gpt", "--lr", "fast"], "--lr: expected a number"),
    (["train", "gpt", "--lr", "-1"], "--lr: must be a positive"),
    (["train", "gpt", "--dtype", "float16"], "invalid choice"),
    (["train", "transformer"], "invalid choice"),
    (["sample"], "required"),
    ([], "required"),
])
def test_bad_arguments_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: burnumba") and message in err


def test_data_errors_exit_2(tmp_path, capsys):
    names = tmp_path / "names.txt"
    names.write_text("emma\nmary-jane\n")
    assert main(["train", "makemore", "--data", str(names), "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "names.txt:2" in err and "'-'" in err and len(err.strip().splitlines()) == 1
    assert main(["train", "gpt", "--data", str(tmp_path / "none.txt"), "--steps", "1"]) == 2
    assert "does not exist" in capsys.readouterr().err
    short = tmp_path / "short.txt"
    short.write_text("hello world, hello")
    assert main(["train", "gpt", "--data", str(short), "--steps", "1"]) == 2
    assert "use a longer text" in capsys.readouterr().err


def test_train_on_a_file(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("\n".join(["emma", "olivia", "ava", "isabella", "sophia", "mia"] * 5))
    proc = run("train", "makemore", "--data", str(names), "--steps", "12", "--batch", "3",
               "--dtype", "float64", "--seed", "7", "--json")
    r = last_json(proc)
    assert r["dtype"] == "float64" and r["seed"] == 7 and r["names"] == 30
    assert r["train_windows"] + r["val_windows"] == 5 * (5 + 7 + 4 + 9 + 7 + 4)
    assert math.isfinite(r["final_val_loss"])


def test_python_m_burnumba_help():
    proc = run("--help")
    assert "usage: burnumba" in proc.stdout and "{train,sample,info}" in proc.stdout


def test_subcommand_help(capsys):
    for argv, flags in ((["train", "--help"], ("--data", "--batch", "--steps", "--lr", "--seed",
                                               "--dtype", "--out", "--eval-every", "--json",
                                               "--clip", "gpt", "makemore")),
                        (["sample", "--help"], ("DIR", "--n", "--seed", "--temperature"))):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert all(flag in out for flag in flags), out


def test_a_diverging_run_stops_keeps_the_last_good_checkpoint_and_says_so(tmp_path):
    """--lr 1e9 makes the loss NaN at step 2: the run stops there with exit code 3, prints
    the JSON line with the failure, saves the parameters of the last step known good (step
    0: step 1's loss was finite), and `burnumba sample` then works on it."""
    out = tmp_path / "run"
    proc = run("train", "gpt", "--lr", "1e9", "--steps", "20", "--batch", "4", "--json",
               "--out", str(out), check=False)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and "diverged" in proc.stderr
    r = last_json(proc)
    assert r["status"] == "diverged" and r["diverged_at_step"] == 2
    assert r["checkpoint_step"] == 0 and r["checkpoint"] == str(out / "checkpoint.npz")
    assert math.isfinite(r["last_finite_train_loss"])
    sample = run("sample", str(out), "--n", "1")
    assert sample.returncode == 0 and sample.stdout.strip()


@pytest.mark.slow
def test_out_never_overwrites_silently(tmp_path, capsys, gpt_run):
    assert main(["train", "gpt", "--steps", "1", "--batch", "2", "--out", str(gpt_run[0])]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--force" in err
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["train", "gpt", "--steps", "1", "--out", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["train", "gpt", "--steps", "1", "--batch", "100000"]) == 2
    err = capsys.readouterr().err
    assert "use a smaller --batch" in err and len(err.strip().splitlines()) == 1


def test_a_nonfinite_checkpoint_is_refused_with_the_reason(tmp_path, capsys):
    from burnumba import save_checkpoint
    save_checkpoint(tmp_path / "checkpoint.npz", {"w": np.array([1.0, np.nan])},
                    meta={"model": "gpt"})
    assert main(["sample", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "NaN or infinite" in err and "diverged" in err
