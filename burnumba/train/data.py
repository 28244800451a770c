"""Small training data: a character tokenizer, text and name corpora, and batch samplers.

Everything here is plain numpy and runs without a download. The defaults are built from text
that ships with CPython, so ``burnumba train`` works on a fresh install:

* :func:`default_corpus` is the language reference that ``help("assert")`` shows
  (``pydoc_data.topics``, about 465K characters), normalised to printable ASCII plus newline.
  Its character vocabulary has 94 symbols on CPython 3.11-3.13 (at most 96).
* :func:`load_names` without a path makes a name-like list from the corpus' words, for the
  makemore model; the real data set is one name per line (32,033 names, 228,146 windows).

>>> tok = CharTokenizer.from_text("hello world")
>>> tok.decode(tok.encode("hello"))
'hello'
>>> train, val = split(tok.encode("hello world"), val_fraction=0.1)
>>> x, y = BatchSampler(train, batch=2, block_size=4, seed=0).next()   # y is x shifted by one
"""
import functools
import importlib
import inspect
import re
import unicodedata
import warnings
from pathlib import Path

import numpy as np

from .._errors import DataError

__all__ = [
    "NAMES_VOCAB", "BatchSampler", "CharTokenizer", "DataError", "WindowSampler",
    "default_corpus", "default_names", "load_names", "load_text", "name_windows", "split",
]


# ---------------------------------------------------------------------------------------------
# Tokenizer

class CharTokenizer:
    """One token per character; the id of a character is its rank in the sorted vocabulary.

    >>> tok = CharTokenizer.from_text("abcab")
    >>> tok.vocab, len(tok), tok.encode("cab").tolist()
    ('abc', 3, [2, 0, 1])
    >>> CharTokenizer.from_dict(tok.to_dict()).vocab      # JSON-able, for checkpoint meta
    'abc'
    """

    def __init__(self, vocab):
        if not isinstance(vocab, str) or not vocab:
            raise DataError(f"CharTokenizer needs a non-empty str of characters, got {vocab!r}")
        if len(set(vocab)) != len(vocab):
            dup = sorted({c for c in vocab if vocab.count(c) > 1})
            raise DataError(f"CharTokenizer vocab repeats the characters {dup!r}: "
                            "build it with CharTokenizer.from_text(text)")
        self.vocab = vocab
        codes = np.array([ord(c) for c in vocab], dtype=np.int64)
        # Code point -> id, -1 for characters outside the vocabulary.
        self._lookup = np.full(int(codes.max()) + 1, -1, dtype=np.int32)
        self._lookup[codes] = np.arange(len(vocab), dtype=np.int32)

    @classmethod
    def from_text(cls, text):
        """The tokenizer of the sorted set of characters in ``text``."""
        if not isinstance(text, str):
            raise DataError(f"CharTokenizer.from_text needs a str, got {type(text).__name__}")
        if not text:
            raise DataError("CharTokenizer.from_text got empty text: there are no characters "
                            "to build a vocabulary from")
        return cls("".join(sorted(set(text))))

    def __len__(self):
        return len(self.vocab)

    def __repr__(self):
        return f"CharTokenizer({len(self)} chars)"

    def __eq__(self, other):
        return isinstance(other, CharTokenizer) and other.vocab == self.vocab

    def __hash__(self):
        return hash(self.vocab)

    def encode(self, text):
        """``text`` as an int32 array of ids, one per character."""
        if not isinstance(text, str):
            raise DataError(f"CharTokenizer.encode needs a str, got {type(text).__name__}")
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        codes = codes.astype(np.int64)
        ids = np.full(codes.shape, -1, dtype=np.int32)
        inside = codes < len(self._lookup)
        ids[inside] = self._lookup[codes[inside]]
        bad = np.flatnonzero(ids < 0)
        if bad.size:
            pos = int(bad[0])
            raise DataError(
                f"CharTokenizer.encode: character {text[pos]!r} (U+{ord(text[pos]):04X}, at "
                f"position {pos}) is not in the {len(self)}-character vocabulary; build the "
                "tokenizer from text that contains it (CharTokenizer.from_text(all_text)) or "
                "remove it from the input")
        return ids

    def decode(self, ids):
        """The string of a sequence of ids (any integer array-like, or a list)."""
        ids = np.asarray(ids)
        if ids.size == 0:
            return ""
        if not np.issubdtype(ids.dtype, np.integer):
            raise DataError(f"CharTokenizer.decode needs integer ids, got dtype {ids.dtype}")
        ids = ids.reshape(-1)
        bad = np.flatnonzero((ids < 0) | (ids >= len(self)))
        if bad.size:
            raise DataError(f"CharTokenizer.decode: id {int(ids[bad[0]])} (at position "
                            f"{int(bad[0])}) is outside the vocabulary range 0..{len(self) - 1}")
        return "".join(map(self.vocab.__getitem__, ids.tolist()))

    def to_dict(self):
        """A JSON-able description; :meth:`from_dict` rebuilds the same tokenizer."""
        return {"kind": "char", "vocab": self.vocab}

    @classmethod
    def from_dict(cls, d):
        if not isinstance(d, dict) or d.get("kind") != "char" or "vocab" not in d:
            raise DataError(f"CharTokenizer.from_dict expects {{'kind': 'char', 'vocab': str}} "
                            f"as written by to_dict(), got {d!r:.200}")
        return cls(d["vocab"])


# ---------------------------------------------------------------------------------------------
# Text

def load_text(path=None):
    """The UTF-8 text of the file at ``path``; ``None`` gives :func:`default_corpus`."""
    if path is None:
        return default_corpus()
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"text file {str(path)!r} does not exist: check the path, or pass no "
                        "path for the embedded default corpus") from None
    except OSError as e:
        raise DataError(f"cannot read text file {str(path)!r}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"text file {str(path)!r} is not UTF-8 (byte {data[e.start]:#04x} at "
                        f"offset {e.start}): convert it, e.g. `iconv -t UTF-8`") from None
    if not text:
        raise DataError(f"text file {str(path)!r} is empty")
    return text


# Typographic characters that have an obvious ASCII spelling; everything else outside printable
# ASCII and newline is first decomposed (NFKD: "é" -> "e" + accent) and then dropped.
_ASCII_SPELLING = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "--",
    "\u2026": "...", "\u00a0": " ", "\u00df": "ss", "\t": "    ", "\r": None,
})
_NOT_PRINTABLE = re.compile(r"[^\n\x20-\x7e]+")


def _normalise(text):
    """Printable ASCII (0x20..0x7e) and newline only: at most 96 distinct characters."""
    text = unicodedata.normalize("NFKD", text.translate(_ASCII_SPELLING))
    return _NOT_PRINTABLE.sub("", text)


def _pydoc_topics():
    """The language reference topics of ``help()``, in sorted key order, or None if absent."""
    try:
        from pydoc_data.topics import topics
    except ImportError:          # some distributions strip pydoc_data
        return None
    text = "".join(topics[k] for k in sorted(topics))
    return text or None


# Fallback corpus: the docstrings of these stdlib modules and of their public members. The C
# modules come first because their docstrings survive `python -OO`.
_DOC_MODULES = ("builtins", "math", "itertools", "operator", "string", "collections",
                "functools", "re", "json", "textwrap", "random", "heapq", "bisect", "pathlib",
                "argparse", "inspect", "os", "shutil", "typing", "unittest", "datetime",
                "decimal", "fractions", "statistics", "csv", "logging")


def _stdlib_docstrings():
    with warnings.catch_warnings():     # reading typing.io & co. warns that they are deprecated
        warnings.simplefilter("ignore")
        return _collect_docstrings()


def _collect_docstrings():
    parts, seen = [], set()
    for name in _DOC_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in [None] + sorted(a for a in dir(module) if not a.startswith("_")):
            obj = module if attr is None else getattr(module, attr, None)
            try:
                doc = inspect.getdoc(obj) if obj is not None else None
            except Exception:  # noqa: BLE001 - an odd object must not break the corpus
                doc = None
            if doc and doc not in seen:
                seen.add(doc)
                parts.append(doc.strip() + "\n\n")
    return "".join(parts) or None


@functools.lru_cache(maxsize=1)
def default_corpus():
    """The embedded default text corpus: no download, deterministic for a Python version.

    The reference documentation that ships with CPython (``pydoc_data.topics``, the text
    ``help("assert")`` shows), topics in sorted order, about 465K characters; where a
    distribution strips ``pydoc_data``, the docstrings of a fixed list of stdlib modules. Either
    is normalised to printable ASCII plus newline, so its :class:`CharTokenizer` has at most 96
    characters (94 for the pydoc topics of CPython 3.11).

    >>> text = default_corpus()
    >>> len(CharTokenizer.from_text(text)) <= 96
    True
    """
    text = _pydoc_topics() or _stdlib_docstrings()
    if not text:
        raise DataError("no default corpus: this Python has neither pydoc_data nor stdlib "
                        "docstrings (python -OO?); pass a text file, e.g. load_text(path)")
    return _normalise(text)


def split(ids, val_fraction=0.1):
    """``(train, val)``: the first ``1 - val_fraction`` of ``ids`` (along axis 0) and the tail,
    as nanoGPT does (``n = int(0.9 * len(data))``). Views, not copies.

    >>> train, val = split(np.arange(10), 0.2)
    >>> train.tolist(), val.tolist()
    ([0, 1, 2, 3, 4, 5, 6, 7], [8, 9])
    """
    ids = np.asarray(ids)
    if ids.ndim == 0:
        raise DataError("split needs a sequence (an array with at least one axis), got a scalar")
    if not 0.0 <= val_fraction < 1.0:
        raise DataError(f"split: val_fraction must be in [0, 1), got {val_fraction!r}")
    n = int((1.0 - val_fraction) * len(ids))
    return ids[:n], ids[n:]


def _positive_int(value, what, owner):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise DataError(f"{owner}: {what} must be a positive int, got {value!r}")
    return int(value)


class BatchSampler:
    """Random windows of a token sequence, for next-token prediction.

    ``next()`` gives ``(x, y)``, two int32 arrays of shape (batch, block_size) with
    ``y[:, t] == x[:, t + 1]``: each row starts at a random offset in
    ``[0, len(ids) - block_size)`` (as nanoGPT's ``get_batch``), drawn from
    ``np.random.default_rng(seed)``, so a seed gives the same batches every run.

    >>> x, y = BatchSampler(np.arange(100), batch=4, block_size=8, seed=0).next()
    >>> x.shape, bool((x[:, 1:] == y[:, :-1]).all())
    ((4, 8), True)
    """

    def __init__(self, ids, batch, block_size, seed=0):
        self.batch = _positive_int(batch, "batch", "BatchSampler")
        self.block_size = _positive_int(block_size, "block_size", "BatchSampler")
        ids = np.asarray(ids)
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise DataError(f"BatchSampler needs a 1-D integer array of token ids, got shape "
                            f"{ids.shape} dtype {ids.dtype}")
        if len(ids) <= self.block_size:
            raise DataError(f"BatchSampler: the sequence has {len(ids)} tokens, but a window of "
                            f"block_size={self.block_size} needs at least {self.block_size + 1} "
                            "(inputs plus the shifted targets); use more text, a smaller "
                            "block_size, or a smaller val_fraction")
        self.ids = ids.astype(np.int32, copy=False)
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._cols = np.arange(self.block_size)

    def next(self):
        offsets = self.rng.integers(0, len(self.ids) - self.block_size, size=self.batch)
        rows = offsets[:, None] + self._cols
        return self.ids[rows], self.ids[rows + 1]

    __next__ = next

    def __iter__(self):
        return self


# ---------------------------------------------------------------------------------------------
# Names (makemore)

NAMES_VOCAB = "." + "abcdefghijklmnopqrstuvwxyz"
"""The makemore vocabulary: '.' (id 0) marks both the start and the end of a name."""

_NAME = re.compile(r"[a-z]+")


def load_names(path=None):
    """One name per line, stripped and lowercased, empty lines dropped; ``None`` gives
    :func:`default_names`. A name with a character outside a-z raises :class:`DataError`.

    >>> names = load_names()          # generated from the default corpus
    >>> all(n.isalpha() and n.islower() for n in names)
    True
    """
    if path is None:
        return default_names()
    text = load_text(path)
    names = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        name = line.strip().lower()
        if not name:
            continue
        if not _NAME.fullmatch(name):
            bad = next(c for c in name if not "a" <= c <= "z")
            raise DataError(f"{path}:{lineno}: name {line.strip()!r} has the character {bad!r}; "
                            "names may only use the letters a-z (one name per line)")
        names.append(name)
    if not names:
        raise DataError(f"names file {str(path)!r} has no names (one name per line)")
    return names


def default_names():
    """The distinct lowercase alphabetic words of 3-12 letters in :func:`default_corpus`,
    sorted: a name-like list (about 2,900 words) for makemore without a download."""
    words = set(re.findall(r"[a-z]+", default_corpus().lower()))
    return sorted(w for w in words if 3 <= len(w) <= 12)


def name_windows(names, context=16):
    """Makemore's training pairs: ``(X (N, context) int32, Y (N,) int32)``.

    Each name gives ``len(name) + 1`` rows: the context starts as all '.', then each character
    of ``name + '.'`` is a target and slides into the context.

    >>> X, Y = name_windows(["ab"], context=3)
    >>> X.tolist(), Y.tolist()
    ([[0, 0, 0], [0, 0, 1], [0, 1, 2]], [1, 2, 0])
    """
    context = _positive_int(context, "context", "name_windows")
    if isinstance(names, str):
        raise DataError("name_windows needs a list of names, got a single str")
    seqs, targets, starts = [], [], []
    pos = 0
    pad = np.zeros(context, dtype=np.int32)
    for k, name in enumerate(names):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise DataError(f"name_windows: name {k} ({name!r}) must be a non-empty str of the "
                            "letters a-z; lowercase it, or load the file with load_names(path)")
        ids = np.frombuffer(name.encode("ascii"), dtype=np.uint8).astype(np.int32) - 96
        # Segment = context pads + the name; window j (0..len) reads segment[j:j + context].
        seqs += [pad, ids]
        targets += [ids, np.zeros(1, dtype=np.int32)]
        starts.append(pos + np.arange(len(ids) + 1))
        pos += context + len(ids)
    if not seqs:
        raise DataError("name_windows got no names")
    windows = np.lib.stride_tricks.sliding_window_view(np.concatenate(seqs), context)
    X = np.ascontiguousarray(windows[np.concatenate(starts)])
    return X, np.concatenate(targets)


class WindowSampler:
    """Random rows of ``(X, Y)``: ``next()`` gives ``(X[rows], Y[rows])`` for ``batch`` rows
    drawn from ``np.random.default_rng(seed)``.

    >>> X, Y = name_windows(["emma", "ava"])
    >>> x, y = WindowSampler(X, Y, batch=4, seed=0).next()
    >>> x.shape, y.shape
    ((4, 16), (4,))
    """

    def __init__(self, X, Y, batch, seed=0):
        self.batch = _positive_int(batch, "batch", "WindowSampler")
        X, Y = np.asarray(X), np.asarray(Y)
        if X.ndim < 1 or Y.ndim < 1 or len(X) != len(Y):
            raise DataError(f"WindowSampler needs X and Y with the same number of rows, got "
                            f"shapes {X.shape} and {Y.shape}")
        if len(X) == 0:
            raise DataError("WindowSampler got no rows to sample from")
        self.X = X.astype(np.int32, copy=False) if np.issubdtype(X.dtype, np.integer) else X
        self.Y = Y.astype(np.int32, copy=False) if np.issubdtype(Y.dtype, np.integer) else Y
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def next(self):
        rows = self.rng.integers(0, len(self.X), size=self.batch)
        return self.X[rows], self.Y[rows]

    __next__ = next

    def __iter__(self):
        return self
