"""burnumba.data: tokenizer, corpora, splits and samplers."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import burnumba
from burnumba import data
from burnumba.data import (
    NAMES_VOCAB,
    BatchSampler,
    CharTokenizer,
    DataError,
    WindowSampler,
    default_corpus,
    load_names,
    load_text,
    name_windows,
    split,
)

# the paper's data beside the checkout (../shared/data), as the benchmarks read it
NAMES_TXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "names.txt"


@pytest.fixture
def no_pydoc(monkeypatch):
    """A Python whose distribution stripped pydoc_data (None in sys.modules fails the import)."""
    monkeypatch.setitem(sys.modules, "pydoc_data", None)
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)
    default_corpus.cache_clear()
    yield
    default_corpus.cache_clear()


# --- tokenizer ---------------------------------------------------------------------------------

def test_tokenizer_round_trip_and_sorted_vocab():
    text = "hello, world!\nHELLO"
    tok = CharTokenizer.from_text(text)
    assert tok.vocab == "".join(sorted(set(text)))
    assert len(tok) == 15
    ids = tok.encode(text)
    assert ids.dtype == np.int32 and ids.shape == (len(text),)
    assert ids.tolist() == [tok.vocab.index(c) for c in text]
    assert tok.decode(ids) == text
    assert tok.decode(ids.tolist()) == text
    assert tok.decode(np.array([], dtype=np.int64)) == "" and tok.encode("").shape == (0,)


def test_tokenizer_non_ascii_and_dict_round_trip():
    text = "naïve café — ∑ 😀\x00"
    tok = CharTokenizer.from_text(text)
    assert tok.decode(tok.encode(text)) == text
    d = json.loads(json.dumps(tok.to_dict()))
    again = CharTokenizer.from_dict(d)
    assert again == tok and again.encode(text).tolist() == tok.encode(text).tolist()


def test_tokenizer_unknown_character_names_it_and_the_fix():
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(DataError, match=r"'z'.*position 2.*from_text") as e:
        tok.encode("abz")
    assert isinstance(e.value, burnumba.BurnumbaError)
    with pytest.raises(DataError, match="'é'"):       # above every code point in the vocab
        tok.encode("é")


def test_tokenizer_bad_inputs():
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(DataError, match="outside the vocabulary range 0..2"):
        tok.decode([0, 3])
    with pytest.raises(DataError, match="outside"):
        tok.decode([-1])
    with pytest.raises(DataError, match="integer ids"):
        tok.decode(np.array([0.0]))
    with pytest.raises(DataError, match="empty"):
        CharTokenizer.from_text("")
    with pytest.raises(DataError, match="repeats"):
        CharTokenizer("aab")
    with pytest.raises(DataError, match="to_dict"):
        CharTokenizer.from_dict({"vocab": "abc"})


# --- text --------------------------------------------------------------------------------------

def test_default_corpus_is_printable_ascii_and_deterministic():
    text = default_corpus()
    assert len(text) > 100_000
    assert set(text) <= set(map(chr, range(0x20, 0x7f))) | {"\n"}
    default_corpus.cache_clear()
    assert default_corpus() == text           # rebuilt, not just the cached object
    assert load_text() == text
    vocab = CharTokenizer.from_text(text)
    assert 60 <= len(vocab) <= 96


def test_default_corpus_is_the_pydoc_topics_in_sorted_order():
    topics = pytest.importorskip("pydoc_data.topics").topics
    text = default_corpus()
    first = min(topics)
    assert text.startswith(data._normalise(topics[first])[:1000])
    assert abs(len(text) - sum(map(len, topics.values()))) < 0.01 * len(text)


def test_default_corpus_falls_back_to_stdlib_docstrings(no_pydoc):
    assert data._pydoc_topics() is None
    text = default_corpus()
    assert len(text) > 50_000
    assert set(text) <= set(map(chr, range(0x20, 0x7f))) | {"\n"}
    assert "Return" in text                   # builtins' docstrings
    default_corpus.cache_clear()
    assert default_corpus() == text
    names = load_names()
    assert len(names) > 500 and names == sorted(set(names))


def test_normalise_spells_typography_in_ascii():
    assert data._normalise("“it’s” – café…\tß\r\n°") == '"it\'s" - cafe...    ss\n'


def test_load_text_reads_utf8(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("héllo\nwörld\n", encoding="utf-8")
    assert load_text(p) == "héllo\nwörld\n"
    assert load_text(str(p)) == "héllo\nwörld\n"


def test_load_text_errors_name_the_path(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(DataError, match="nope.txt.*does not exist"):
        load_text(missing)
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("café".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1.txt.*not UTF-8.*0xe9.*offset 3"):
        load_text(latin1)
    with pytest.raises(DataError, match="cannot read"):
        load_text(tmp_path)                   # a directory
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(DataError, match="empty"):
        load_text(empty)


def test_split_tail_is_validation():
    ids = np.arange(1000)
    train, val = split(ids)
    assert len(train) == 900 and len(val) == 100
    assert np.array_equal(np.concatenate([train, val]), ids) and val[0] == 900
    train, val = split(np.arange(20).reshape(10, 2), 0.3)      # along axis 0
    assert train.shape == (7, 2) and val.shape == (3, 2)
    assert len(split(ids, 0.0)[1]) == 0
    for bad in (1.0, -0.1):
        with pytest.raises(DataError, match="val_fraction"):
            split(ids, bad)


# --- BatchSampler ------------------------------------------------------------------------------

def test_batch_sampler_shapes_and_shift():
    ids = np.arange(50, dtype=np.int64) * 3
    x, y = BatchSampler(ids, batch=5, block_size=7, seed=1).next()
    assert x.shape == y.shape == (5, 7) and x.dtype == y.dtype == np.int32
    assert (x[:, 1:] == y[:, :-1]).all() and (y == x + 3).all()       # consecutive windows
    assert (x % 3 == 0).all() and x.min() >= 0 and y.max() <= 147


def test_batch_sampler_covers_both_ends():
    ids = np.arange(9)
    s = BatchSampler(ids, batch=64, block_size=8, seed=0)
    x, y = s.next()       # only one window fits: offset 0
    assert (x == np.arange(8)).all() and (y == np.arange(1, 9)).all()
    s = BatchSampler(np.arange(12), batch=200, block_size=4, seed=0)
    starts = set(s.next()[0][:, 0].tolist())
    assert starts == set(range(8))            # offsets 0 .. len - block_size - 1


def test_batch_sampler_is_deterministic_per_seed():
    ids = np.arange(1000)
    a, b, c = (BatchSampler(ids, 4, 8, seed) for seed in (3, 3, 4))
    for _ in range(3):
        (xa, ya), (xb, yb), (xc, _) = a.next(), b.next(), c.next()
        assert np.array_equal(xa, xb) and np.array_equal(ya, yb)
    assert not np.array_equal(xa, xc)
    assert np.array_equal(next(iter(BatchSampler(ids, 4, 8, 3)))[0],
                          BatchSampler(ids, 4, 8, 3).next()[0])


def test_batch_sampler_errors():
    with pytest.raises(DataError, match=r"8 tokens.*block_size=8.*at least 9"):
        BatchSampler(np.arange(8), batch=2, block_size=8, seed=0)
    with pytest.raises(DataError, match="batch must be a positive int"):
        BatchSampler(np.arange(100), batch=0, block_size=8)
    with pytest.raises(DataError, match="block_size"):
        BatchSampler(np.arange(100), batch=2, block_size=2.5)
    with pytest.raises(DataError, match="1-D integer"):
        BatchSampler(np.zeros(100), batch=2, block_size=8)


def test_text_pipeline_on_default_corpus():
    text = default_corpus()
    tok = CharTokenizer.from_text(text)
    _, val = split(tok.encode(text))
    x, _ = BatchSampler(val, batch=3, block_size=8, seed=0).next()
    assert x.max() < len(tok) and len(tok.decode(x[0])) == 8


# --- names -------------------------------------------------------------------------------------

def test_names_vocab():
    assert NAMES_VOCAB == ".abcdefghijklmnopqrstuvwxyz" and len(NAMES_VOCAB) == 27


def test_name_windows_layout():
    X, Y = name_windows(["emma", "al"], context=3)
    assert X.dtype == Y.dtype == np.int32 and X.shape == (5 + 3, 3) and Y.shape == (8,)
    e, m, a, l = 5, 13, 1, 12
    assert X.tolist() == [[0, 0, 0], [0, 0, e], [0, e, m], [e, m, m], [m, m, a],
                          [0, 0, 0], [0, 0, a], [0, a, l]]
    assert Y.tolist() == [e, m, m, a, 0, a, l, 0]
    # the default context is 16, and a name longer than the context slides out at the left
    X, Y = name_windows(["abcdefghijklmnopqrst"])
    assert X.shape == (21, 16) and X[-1].tolist() == list(range(5, 21)) and Y[-1] == 0


def test_name_windows_errors():
    with pytest.raises(DataError, match=r"name 1 \('Bob'\).*a-z"):
        name_windows(["ann", "Bob"])
    with pytest.raises(DataError, match="name 0"):
        name_windows([""])
    with pytest.raises(DataError, match="single str"):
        name_windows("emma")
    with pytest.raises(DataError, match="no names"):
        name_windows([])


def test_load_names_strips_lowercases_and_drops_empty_lines(tmp_path):
    p = tmp_path / "names.txt"
    p.write_text("Emma\n\n  olivia \r\nAVA\n   \n")
    assert load_names(p) == ["emma", "olivia", "ava"]


def test_load_names_error_names_the_line(tmp_path):
    p = tmp_path / "names.txt"
    p.write_text("emma\n\nmary-jane\n")
    with pytest.raises(DataError, match=r"names.txt:3: name 'mary-jane' has the character '-'"):
        load_names(p)
    with pytest.raises(DataError, match="does not exist"):
        load_names(tmp_path / "missing.txt")
    blank = tmp_path / "blank.txt"
    blank.write_text("\n \n")
    with pytest.raises(DataError, match="no names"):
        load_names(blank)


def test_default_names_are_sorted_distinct_words():
    names = load_names()
    assert names == sorted(set(names)) and len(names) > 1000
    assert all(3 <= len(n) <= 12 and n.isascii() and n.isalpha() and n.islower() for n in names)
    assert {"assert", "statement", "expression"} <= set(names)
    X, _ = name_windows(names)
    assert len(X) == sum(len(n) + 1 for n in names) and X.max() <= 26


@pytest.mark.skipif(not NAMES_TXT.exists(), reason="the makemore names.txt data set is absent")
def test_makemore_names_give_228146_windows():
    names = load_names(NAMES_TXT)
    assert len(names) == 32_033
    X, Y = name_windows(names, context=16)
    assert X.shape == (228_146, 16) and Y.shape == (228_146,)
    assert (Y == 0).sum() == len(names)       # one end marker per name
    assert NAMES_VOCAB[Y[0]] == names[0][0]


# --- WindowSampler -----------------------------------------------------------------------------

def test_window_sampler_rows_and_determinism():
    X, Y = name_windows(["emma", "olivia", "ava", "isabella"])
    a, b = WindowSampler(X, Y, batch=6, seed=2), WindowSampler(X, Y, batch=6, seed=2)
    for _ in range(3):
        (xa, ya), (xb, yb) = a.next(), b.next()
        assert xa.shape == (6, 16) and ya.shape == (6,) and xa.dtype == ya.dtype == np.int32
        assert np.array_equal(xa, xb) and np.array_equal(ya, yb)
        rows = {tuple(r) + (t,) for r, t in zip(X.tolist(), Y.tolist())}
        assert all(tuple(r) + (t,) in rows for r, t in zip(xa.tolist(), ya.tolist()))
    assert not np.array_equal(WindowSampler(X, Y, 6, seed=3).next()[0], xa)


def test_window_sampler_errors():
    X, Y = name_windows(["emma"])
    with pytest.raises(DataError, match="same number of rows"):
        WindowSampler(X, Y[:-1], batch=2)
    with pytest.raises(DataError, match="batch"):
        WindowSampler(X, Y, batch=-1)
    with pytest.raises(DataError, match="no rows"):
        WindowSampler(X[:0], Y[:0], batch=2)
