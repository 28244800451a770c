"""Tapes as data: a Tape's state (two arrays and a metadata dict), its validation, pickling,
and the ``.npz`` tape file.

A tape is ``I`` (int32: columns, offsets, parameters) and ``F0`` (the immediates and the
constants' values), plus metadata: the traced signature, the input slots, the output node,
the shapes. The user's function is never part of it, so a tape runs anywhere without
retracing. The kernels do no bounds checks, so a tape that did not come from this process's
tracer is validated first (``validate``): every operand, offset and parameter a row reads
must lie inside the arrays. The row-specific part is a table (``RULES``) with an entry per
row of ``kernels.ROWS``; a tape holding a row without a rule is refused.

The file (``Tape.save`` / ``load_tape``) is a plain ``np.savez`` archive: ``format``, ``I``,
``F0`` as its non-zero runs (``compact``; a pickle holds the same) and ``meta``, the UTF-8
bytes of a JSON object. Python values the JSON cannot hold directly (tuples, types, dtypes,
numpy arrays in an aux output) are tagged one-key objects, so a loaded signature compares
equal to the traced one. Loading uses ``allow_pickle=False``.
"""
import functools
import hashlib
import json
import math
import os
import re
import zipfile

import numpy as np

from .._files import savez_atomic
from .._version import __version__
from .._errors import TapeFormatError
from ..kernels import OPCODE, ROWS, layout
from ..tracing.concrete import LAST_KIND

FORMAT = "burnumba-tape-1"
# a tape with guards (Python decisions made while tracing, tracing/concrete.py) is written
# as format 2, which a burnumba without guards refuses (it would run the tape on any
# branch); a tape without guards is still written as format 1, and both are read
FORMAT_GUARDS = "burnumba-tape-2"
# a tape with a user's derivative rule is written as its value-and-gradient tape (the rule's
# derivative traced as ops, Tape.by_ops), whose output is the value and then the gradients:
# format 3 (meta "by_ops": true), which a burnumba that would read that vector as the output
# refuses; formats 1 and 2 are read as before
FORMAT_BY_OPS = "burnumba-tape-3"
FORMATS = (FORMAT, FORMAT_GUARDS, FORMAT_BY_OPS)
FIX = "retrace the function with this burnumba (bn.trace, or bn.grad's .trace) and save it again"


def _digest(rows):
    """sha256 of what a tape's arrays mean: the op table (name, arity, kind per opcode) and
    the layout of I and F. A tape made under another table cannot run here."""
    table = [[r.name, r.arity, r.kind] for r in rows]
    lay = [layout.H, list(layout.COLUMNS), np.dtype(layout.INT).str]
    return hashlib.sha256(json.dumps([table, lay]).encode()).hexdigest()[:16]


DIGEST = _digest(ROWS)


@functools.lru_cache(maxsize=None)
def prefixes():
    """{digest: k} of the op table's first k rows. Rows are only ever appended to the table
    (kernels/ops.py: ORDER), so a tape written when it had k rows means the same here; its
    opcodes must stay below k. Made on the first tape that needs it (2.5 ms of digests)."""
    return {_digest(ROWS[:k]): k for k in range(1, len(ROWS) + 1)}


def table_rows(digest):
    """How many rows of this op table a tape of ``digest`` may use, or None for a digest of
    no prefix of it (a file's meta may hold anything)."""
    if not isinstance(digest, str):
        return None
    return len(ROWS) if digest == DIGEST else prefixes().get(digest)


META = ("key", "argnums", "static", "single", "shapes", "sites", "n_diff", "in_slots", "out",
        "out_shape", "aux", "forward_mode", "largest_product")


def position_patterns(cols):
    """(nodes, patterns): each gather's and scatter's position pattern, the immediate the
    kernel reads (kernels/ops.py): 1 for one run (a slice, a copy), 2 for one position
    repeated (a broadcast scalar; gather only), else 0. One numpy pass over the packed
    parameters, once per tape (checking each node as the tracer made it cost a scalar
    graph's tracing 0.3 us per node); the tape file validator compares a file's immediates
    with the same patterns."""
    op, pp, off, a0 = cols["op"], cols["pp"], cols["off"], cols["a0"]
    gathers = np.flatnonzero(op == OPCODE["gather"])
    scatters = np.flatnonzero(op == OPCODE["scatter"])
    d = np.diff(cols["P"].astype(np.int64))
    steps = np.concatenate([[0], np.cumsum(d == 1)])        # steps[k]: how many of d[:k] are 1
    same = np.concatenate([[0], np.cumsum(d == 0)])
    kinds = []
    for nodes, sizes, repeat in ((gathers, off[gathers + 1] - off[gathers], True),
                                 (scatters, off[a0[scatters] + 1] - off[a0[scatters]], False)):
        first = np.where(sizes > 0, pp[nodes], 0)
        last = first + np.maximum(sizes, 1) - 1
        run = (sizes > 0) & (steps[last] - steps[first] == sizes - 1)
        rep = repeat & (sizes > 1) & (same[last] - same[first] == sizes - 1)
        kinds.append(np.where(run, 1.0, np.where(rep, 2.0, 0.0)))
    return np.concatenate([gathers, scatters]), np.concatenate(kinds)


def tape_state(tape):
    """``(arrays, meta)``: the tape's arrays ``I`` and ``F0`` and its metadata (Python values:
    the signature key holds types and dtypes; see ``encode`` for the JSON form)."""
    meta = {name: getattr(tape, name) for name in META}
    meta.update(format=FORMAT, burnumba=__version__, digest=DIGEST, dtype=str(tape.dtype))
    if tape.guards is not None:
        nodes, kinds, values, sites = tape.guards
        meta.update(format=FORMAT_GUARDS,       # JSON lists (NaN and inf as json writes them)
                    guards=(nodes.tolist(), kinds.tolist(), values.tolist(), list(sites)))
    if tape.grads_in_output:
        meta.update(format=FORMAT_BY_OPS, by_ops=True)
    return {"I": tape.I, "F0": tape.F0}, meta


def checked_state(arrays, meta, source="a pickled tape"):
    """``(ints, F0, meta)`` of ``tape_state``'s output (``F0`` dense, or as ``compact``
    stores it), checked (compatibility, then ``validate``), for ``Tape.from_arrays``; raises
    TapeFormatError naming ``source`` and the first bad field or node."""
    check_compatible(meta, source)
    try:
        arrays = expand(arrays)
    except _Bad as e:
        raise TapeFormatError(f"{source}: {e}; the tape is damaged or was not written by "
                              f"burnumba: {FIX}") from None
    return validate(arrays, meta, source)


# -- F0 on the wire ----------------------------------------------------------------------------
# F0 is imm | val | grad | scratch, and only the immediates and the constants' values are
# not zero: a tape traced on a large shard is mostly zeros (val and grad of every node). A
# pickle or a file holds its non-zero runs: F0_runs (start, stop) pairs, F0_values their
# entries in order, F0_size the length. "Non-zero" is by bits, so -0.0 and NaN survive.
def compact(arrays, always=False):
    """``arrays`` with F0 replaced by its runs of non-zero entries, when that saves at least
    half of F0 and 4 kB (or ``always``); else ``arrays`` as they are (a small tape: two
    entries fewer in a file, about 40 us less to write and to read)."""
    F0 = arrays["F0"]
    bits = F0.view(np.uint64 if F0.dtype.itemsize == 8 else np.uint32) != 0
    edges = np.flatnonzero(np.diff(np.concatenate(([False], bits, [False])).astype(np.int8)))
    saved = F0.nbytes - (F0.itemsize * np.count_nonzero(bits) + 8 * len(edges))
    if not always and (saved < 4096 or 2 * saved < F0.nbytes):
        return arrays
    out = {k: v for k, v in arrays.items() if k != "F0"}
    out.update(F0_runs=edges.astype(np.int64), F0_values=F0[bits],
               F0_size=np.array(len(F0), np.int64))
    return out


def _f0_length(ints):
    """n + 2 V, F0's length for the node count and offsets in ``ints`` (-1 if ``ints`` is not
    even shaped like I); checked before F0 is made, so that a small file cannot claim a
    huge one. ``validate`` checks the rest."""
    if not (isinstance(ints, np.ndarray) and ints.ndim == 1 and ints.dtype == layout.INT
            and len(ints) >= layout.H):
        return -1
    n = int(ints[0])
    if n < 1 or len(ints) < layout.H + 6 * n + 1:
        return -1
    return n + 2 * int(layout.views(ints, np.zeros(0))["off"][n])


def expand(arrays):
    """The inverse of ``compact``: ``arrays`` with a dense F0 (returned as they are when F0
    is already dense). Raises _Bad on runs that do not fit."""
    if not isinstance(arrays, dict) or "F0" in arrays or "F0_runs" not in arrays:
        return arrays
    runs, values, size = (arrays.get(k) for k in ("F0_runs", "F0_values", "F0_size"))
    if not (isinstance(runs, np.ndarray) and runs.ndim == 1 and runs.dtype == np.int64
            and len(runs) % 2 == 0 and isinstance(values, np.ndarray) and values.ndim == 1
            and values.dtype in (np.float64, np.float32) and isinstance(size, np.ndarray)
            and size.shape == () and size.dtype == np.int64):
        raise _Bad("arrays F0_runs (int64 pairs), F0_values (float) and F0_size (an int64) "
                   "are missing or malformed")
    size = int(size)
    if size != _f0_length(arrays.get("I")):
        raise _Bad(f"F0_size is {size}, but the columns in I need "
                   f"{_f0_length(arrays.get('I'))} entries (imm, val, grad)")
    start, stop = runs[0::2], runs[1::2]
    if size < 0 or len(runs) and (start[0] < 0 or stop[-1] > size or np.any(stop <= start)
                                  or np.any(start[1:] <= stop[:-1])):
        raise _Bad(f"F0_runs are not increasing, disjoint runs inside 0 .. {size}")
    lengths = stop - start
    if int(lengths.sum()) != len(values):
        raise _Bad(f"F0_runs cover {int(lengths.sum())} entries, F0_values has {len(values)}")
    try:
        F0 = np.zeros(size, values.dtype)
    except (MemoryError, ValueError):
        raise _Bad(f"F0_size {size} is too large") from None
    # the index of every stored entry: each run's start, shifted by the entries before it
    F0[np.repeat(start - (np.cumsum(lengths) - lengths), lengths) + np.arange(len(values))] = \
        values
    out = {k: v for k, v in arrays.items() if not k.startswith("F0_")}
    out["F0"] = F0
    return out


def check_compatible(meta, source):
    if not isinstance(meta, dict):
        raise TapeFormatError(f"{source}: its metadata is not a dict; {FIX}")
    have = {"format": FORMAT, "digest": DIGEST}
    got = {k: meta.get(k) for k in have}
    if got["format"] in FORMATS:
        got["format"] = FORMAT
    if table_rows(got["digest"]) is not None:     # this table, or an earlier (shorter) one
        got["digest"] = DIGEST
    if got != have:
        diff = ", ".join(f"{k} {got[k]!r} (here {have[k]!r})" for k in have if got[k] != have[k])
        raise TapeFormatError(
            f"{source}: written by burnumba {meta.get('burnumba', '?')}, whose tapes differ from "
            f"this burnumba {__version__}'s: {diff}. A tape's op table and layout must match the "
            f"kernels that run it; {FIX}")


# -- the file: JSON metadata ------------------------------------------------------------------
# Builtin and numpy types a signature or an aux structure may name, by name.
_TYPES = {t.__name__: t for t in (float, int, bool, str, bytes, complex, tuple, list, dict,
                                  type(None))}


def encode(x, what):
    """``x`` as JSON data: tuples, lists, dicts, types, dtypes and numeric numpy values as
    one-key tagged objects (a JSON object is always a tag). Raises TapeFormatError naming
    ``what`` for anything else."""
    t = type(x)
    if x is None or t in (bool, int, float, str):
        return x
    if t is tuple or t is list:
        return {t.__name__: [encode(v, what) for v in x]}
    if t is dict:
        return {"dict": [[encode(k, what), encode(v, what)] for k, v in x.items()]}
    if isinstance(x, type) and _TYPES.get(x.__name__) is x:
        return {"type": x.__name__}
    if isinstance(x, type) and issubclass(x, np.generic) and np.dtype(x).kind in "biuf":
        return {"nptype": np.dtype(x).str}
    if isinstance(x, np.dtype) and x.kind in "biuf":
        return {"dtype": x.str}
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biuf":
        if isinstance(x, np.generic):
            return {"scalar": x.dtype.str, "value": x.item()}
        return {"array": x.dtype.str, "shape": list(x.shape), "data": x.ravel().tolist()}
    held = f"the type {x.__qualname__}" if isinstance(x, type) else \
        f"a {t.__qualname__} ({x!r:.60})"
    raise TapeFormatError(
        f"{what} holds {held}, which a tape file cannot store (it keeps JSON "
        "values, tuples, lists, dicts, types and numeric numpy values): pickle the tape "
        "instead, or make that value one of those (e.g. return it without has_aux, or pass it "
        "as data rather than static)")


def _numeric(code):
    """A numeric dtype from its ``dtype.str`` (checked first: np.dtype parses much more)."""
    if not (isinstance(code, str) and re.fullmatch(r"[<>|=]?[biuf][1248]", code)):
        raise _Bad(f"{str(code)[:20]!r} is not a numeric dtype")
    return np.dtype(code)


def decode(x):
    """The inverse of ``encode``; raises _Bad on anything ``encode`` does not write."""
    if not isinstance(x, (dict, list)):
        return x
    if not isinstance(x, dict) or not 1 <= len(x) <= 3:
        raise _Bad(f"unexpected JSON value {str(x)[:60]}")
    tag = next(iter(x))
    v = x[tag]
    try:
        if tag in ("tuple", "list") and isinstance(v, list):
            return (tuple if tag == "tuple" else list)(decode(e) for e in v)
        if tag == "dict" and isinstance(v, list):
            return {decode(k): decode(e) for k, e in v}
        if tag == "type" and v in _TYPES:
            return _TYPES[v]
        if tag == "nptype":
            return _numeric(v).type
        if tag == "dtype":
            return _numeric(v)
        if tag == "scalar":
            return _numeric(v).type(x["value"])
        if tag == "array":
            return np.array(x["data"], dtype=_numeric(v)).reshape(x["shape"])
    except (TypeError, ValueError, KeyError, OverflowError) as e:
        raise _Bad(f"a {tag} value in meta cannot be read ({e})") from None
    raise _Bad(f"unexpected JSON value {str(x)[:60]}")


def meta_json(meta):
    """The file form of ``tape_state``'s meta: a JSON text (see ``encode``)."""
    plain = dict(meta, key=encode(meta["key"], "the traced signature (static arguments)"))
    aux = meta["aux"]
    if aux is not None:
        plain["aux"] = [encode(aux[0], "the aux structure"),
                        [[it[0], encode(it[1], "an aux output") if it[0] == "const"
                          else list(it[1])] for it in aux[1]]]
    return json.dumps(plain)


def meta_from_json(text):
    meta = json.loads(text)
    if not isinstance(meta, dict):
        raise _Bad("meta is not a JSON object")
    meta["key"] = decode(meta.get("key"))
    aux = meta.get("aux")
    if aux is not None:
        if not (isinstance(aux, list) and len(aux) == 2 and isinstance(aux[1], list)):
            raise _Bad("meta aux is not [treedef, items]")
        meta["aux"] = (decode(aux[0]),
                       [("const", decode(it[1])) if isinstance(it, list) and it[:1] == ["const"]
                        and len(it) == 2 else it for it in aux[1]])
    return meta


def _name(file):
    if isinstance(file, (str, bytes, os.PathLike)):
        return os.fsdecode(file)
    return str(getattr(file, "name", f"<{type(file).__name__}>"))


def save_tape(tape, file):
    """Write ``tape`` to ``file`` (a path, or a binary file object) as a ``.npz`` archive; a
    path is written whole, then renamed into place."""
    arrays, meta = tape_state(tape)
    blob = np.frombuffer(meta_json(meta).encode(), np.uint8)
    entries = dict(format=np.array(meta["format"]), meta=blob, **compact(arrays))
    if not isinstance(file, (str, bytes, os.PathLike)):
        np.savez(file, **entries)
        return
    savez_atomic(file, entries, TapeFormatError, "the tape")


def read_tape(file):
    """``(ints, F0, meta)`` of the tape saved in ``file`` (a path or a binary file object) by
    ``Tape.save``, checked before it can run (no pickle is read), for ``Tape.from_arrays``.
    Raises TapeFormatError naming the file and what is wrong with it."""
    source = _name(file)
    fix = "pass a file written by Tape.save"
    if isinstance(file, (str, bytes, os.PathLike)) and not os.path.isfile(file):
        raise TapeFormatError(f"{source}: no such tape file; {fix}")
    try:
        if not zipfile.is_zipfile(file):          # else numpy would suggest unpickling it
            raise TapeFormatError(f"{source}: not a .npz archive; {fix}")
        if hasattr(file, "seek"):
            file.seek(0)
        z = _read_npz(file)
        fmt = z.get("format")
        if fmt is None or fmt.dtype.kind != "U" or str(fmt) not in FORMATS:
            got = str(fmt) if fmt is not None else "no format entry"
            raise TapeFormatError(
                f"{source}: not a {FORMAT} file ({got[:60]}); {fix}, or retrace the "
                f"function with this burnumba and save it again")
        arrays = {k: z[k] for k in ("I", "F0", "F0_runs", "F0_values", "F0_size") if k in z}
        text = z["meta"].tobytes().decode() if "meta" in z else "{}"
    except TapeFormatError:
        raise
    except Exception as e:
        # zipfile and numpy's header parser raise many kinds on damaged bytes (BadZipFile,
        # zlib.error, SyntaxError, tokenize.TokenError, ...): each means an unreadable file
        raise TapeFormatError(f"{source}: not a readable tape file ({type(e).__name__}: "
                              f"{str(e)[:200]}); {fix}") from None
    try:
        meta = meta_from_json(text)
    except (ValueError, RecursionError, _Bad) as e:
        raise TapeFormatError(f"{source}: its meta record is damaged ({str(e)[:200]}); "
                              f"{fix}") from None
    return checked_state(arrays, meta, source)


# A .npy header as numpy writes it for a C-ordered array: read with a pattern (2 us) instead
# of numpy's ast.literal_eval (15 us); any other header goes through numpy's own reader.
_NPY_HEADER = re.compile(rb"\{'descr': '([<>|=]?[a-zA-Z]\d*)', 'fortran_order': False, "
                         rb"'shape': \(((?:\d+, ?)*\d*)\), \}\s*")


def _read_npz(file):
    """The arrays of an .npz archive, as ``np.load(file, allow_pickle=False)`` gives them
    (an object array is refused, never unpickled), read with one ZipFile: numpy's per-entry
    reader costs about 45 us an entry, which was most of a small tape's load."""
    import io
    out = {}
    with zipfile.ZipFile(file) as zf:
        for name in zf.namelist():
            data = zf.read(name)
            key = name[:-4] if name.endswith(".npy") else name
            start = {1: 10, 2: 12, 3: 12}.get(data[6] if len(data) > 6 else 0)
            m = None
            if data[:6] == b"\x93NUMPY" and start is not None:
                end = start + int.from_bytes(data[8:start], "little")     # the header's length
                m = _NPY_HEADER.fullmatch(data[start:end])
            if m is None:
                out[key] = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
                continue
            dtype = np.dtype(m.group(1).decode())
            if dtype.hasobject:
                raise ValueError(f"{name} holds Python objects; they are never unpickled")
            shape = tuple(int(d) for d in m.group(2).split(b",") if d.strip())
            out[key] = np.frombuffer(data, dtype, count=math.prod(shape),
                                     offset=end).reshape(shape)
    return out


# -- validation ------------------------------------------------------------------------------
class _Bad(Exception):
    """Internal: the first problem found; ``validate`` turns it into a TapeFormatError."""


def _int(x, what, lo=None, hi=None):
    if type(x) is not int and not isinstance(x, np.integer) or isinstance(x, bool):
        raise _Bad(f"{what} is {x!r}, not an int")
    x = int(x)
    if (lo is not None and x < lo) or (hi is not None and x >= hi):
        raise _Bad(f"{what} is {x}, outside {lo} .. {hi - 1 if hi is not None else ''}")
    return x


def _shape(x, what):
    if type(x) in (tuple, list) and all(type(d) is int and d >= 0 for d in x):
        return tuple(x)                                   # the common case, checked at once
    if not isinstance(x, (tuple, list)):
        raise _Bad(f"{what} is {x!r}, not a shape")
    return tuple(_int(d, what, 0) for d in x)


class _Tape:
    """The columns as Python lists, for the per-node rules (list indexing is cheaper than
    numpy scalars), and the helpers the rules share. ``size[i]`` is node i's element count."""

    def __init__(self, cols, n):
        self.n = n
        self.op, self.a0, self.a1, self.pp = (cols[k].tolist() for k in ("op", "a0", "a1", "pp"))
        self.off = cols["off"].tolist()
        self.P = cols["P"]
        self.size = np.diff(cols["off"]).tolist()

    def node(self, i, field, k):
        """An operand id: a node before i."""
        if not 0 <= k < i:
            raise _Bad(f"node %{i}: {field} is {k}, not a node before it")
        return k

    def none(self, i, field, k):
        if k != -1:
            raise _Bad(f"node %{i}: {field} is {k}, but this row has no such operand (-1)")

    def params(self, i, count):
        """P[p:p+count] of node i as Python ints (count may come from P itself)."""
        p = self.pp[i]
        if count == 0:
            return []
        if p < 0 or count < 0 or p + count > len(self.P):
            raise _Bad(f"node %{i}: its parameters P[{p}:{p + count}] lie outside P "
                       f"(length {len(self.P)})")
        return self.P[p:p + count].tolist()

    def ids(self, i, field, ids):
        for k in ids:
            self.node(i, field, k)
        return ids

    def want(self, i, cond, what):
        if not cond:
            raise _Bad(f"node %{i}: {what}")

    def tiles(self, i, k):
        """Operand k repeats whole over node i: at least one element, and its size divides
        i's (the kernels wrap an operand's index at its size)."""
        ny, nk = self.size[i], self.size[k]
        self.want(i, nk >= 1 and (ny == 0 or ny % nk == 0),
                  f"operand %{k} has {nk} elements, which do not tile the node's {ny}")


def _leaf(t, i):
    t.none(i, "a0", t.a0[i])
    t.none(i, "a1", t.a1[i])
    t.none(i, "pp", t.pp[i])


def _unary_map(t, i):
    a = t.node(i, "a0", t.a0[i])
    t.none(i, "a1", t.a1[i])
    t.none(i, "pp", t.pp[i])
    t.want(i, t.size[a] == t.size[i], f"operand %{a} has {t.size[a]} elements, the node "
           f"{t.size[i]} (a unary map keeps the size)")


def _binary_map(t, i):
    a, b = t.node(i, "a0", t.a0[i]), t.node(i, "a1", t.a1[i])
    t.none(i, "pp", t.pp[i])
    t.tiles(i, a)
    t.tiles(i, b)
    ny = t.size[i]
    t.want(i, ny == 0 or ny in (t.size[a], t.size[b]),
           f"neither operand (%{a}: {t.size[a]}, %{b}: {t.size[b]} elements) has the node's "
           f"size {ny}")


def _axis(out):
    """Rows over an axis, the operand seen as (outer, m, inner) = P[p:p+3]; ``out``: the
    node's size from those ("reduce": outer * inner, "same": the operand's, "rows": the
    operand's, with inner = 1 as the rows along the last axis have)."""
    def rule(t, i):
        a = t.node(i, "a0", t.a0[i])
        t.none(i, "a1", t.a1[i])
        outer, m, inner = t.params(i, 3)
        t.want(i, min(outer, inner) >= 0 and m >= 1,
               f"its axis view (outer, m, inner) = {(outer, m, inner)} is not valid")
        t.want(i, t.size[a] == outer * m * inner,
               f"operand %{a} has {t.size[a]} elements, its axis view {outer * m * inner}")
        t.want(i, out != "rows" or inner == 1, "inner must be 1 (a row along the last axis)")
        ny = outer * inner if out == "reduce" else t.size[a]
        t.want(i, t.size[i] == ny, f"has {t.size[i]} elements, its axis view gives {ny}")
    return rule


def _listed(t, i):
    """sum, sumsq: a scalar of every element of the nodes listed in P."""
    t.none(i, "a0", t.a0[i])
    t.none(i, "a1", t.a1[i])
    t.want(i, t.size[i] == 1, f"has {t.size[i]} elements; a reduction has one")
    (m,) = t.params(i, 1)
    t.ids(i, "a listed operand", t.params(i, 1 + m)[1:])


def _matrices(t, i):
    """Stacks of matrices (matmul, the linalg rows): P = the parameters of the row's shape
    rule (kernels/row.py: Op.shapes), valid by that rule; each operand and the node (result,
    then work space) of the sizes it gives."""
    row = ROWS[t.op[i]]
    count = row.shapes.__code__.co_argcount
    names = ", ".join(row.shapes.__code__.co_varnames[:count])
    P = t.params(i, count)
    shapes = row.node_shapes(P)
    t.want(i, shapes is not None, f"its parameters ({names}) = {tuple(P)} are not valid")
    operands, result, work = shapes
    nodes = [t.node(i, "a0", t.a0[i])]
    if len(operands) > 1:
        nodes.append(t.node(i, "a1", t.a1[i]))
    else:
        t.none(i, "a1", t.a1[i])
    for k, shape in zip(nodes + [i], operands + (result,)):
        size = math.prod(shape) + (work if k == i else 0)
        t.want(i, t.size[k] == size, f"%{k} has {t.size[k]} elements; its parameters "
               f"({names}) = {tuple(P)} need {size}")


def _lanes(t, i):
    """A lanes row belongs to bn.vmap's wide tapes, built in memory from a traced tape; a
    tape of one sample, which a file holds, never has one."""
    t.want(i, False, "a lanes row (bn.vmap's internal form) is never part of a saved tape")


# Per row name, the rule that checks what its kernel code reads: operands, P, sizes. Map rows
# share generated code, so their kind decides; a block row's layout decides (kernels/row.py:
# Op.layout), or, for a row whose operands no layout kind describes, its own ``check``.
# the check of each layout kind
_LAYOUTS = {"axis": _axis("same"), "axis_reduce": _axis("reduce"), "axis_rows": _axis("rows"),
            "matrices": _matrices, "listed": _listed}
RULES = {**{r.name: _leaf for r in ROWS if r.kind == "leaf"},
         **{r.name: _lanes for r in ROWS if r.lanes_of},
         **{r.name: (_unary_map if r.arity == 1 else _binary_map)
            for r in ROWS if r.kind == "map" and r.arity in (1, 2)},
         **{r.name: r.check or _LAYOUTS[r.layout] for r in ROWS if r.layout or r.check}}


def _kinds():
    """Per opcode: 0 a leaf, 1 a unary map, 2 a binary map, 3 anything else (a block row)."""
    kinds = np.array([0 if r.kind == "leaf" else r.arity if r.kind == "map" and r.arity in (1, 2)
                      else 3 for r in ROWS], np.int8)
    kinds.flags.writeable = False                     # a constant of the op table
    return kinds


KINDS = _kinds()


def _maps_and_leaves_ok(cols, n, size):
    """Per node, whether it is a leaf or a map node that ``_leaf`` / ``_unary_map`` /
    ``_binary_map`` would accept: the same conditions, on whole columns at once."""
    op, a0, a1, pp = (cols[k].astype(np.int64) for k in ("op", "a0", "a1", "pp"))
    kind = KINDS[op]                              # opcodes are checked to be in range first
    at = np.arange(n)
    ok0, ok1 = (a0 >= 0) & (a0 < at), (a1 >= 0) & (a1 < at)
    sa, sb = size[np.where(ok0, a0, 0)], size[np.where(ok1, a1, 0)]

    def tiles(s):
        return (s >= 1) & ((size == 0) | (size % np.maximum(s, 1) == 0))
    leaf = (kind == 0) & (a0 == -1) & (a1 == -1) & (pp == -1)
    unary = (kind == 1) & ok0 & (a1 == -1) & (pp == -1) & (sa == size)
    binary = ((kind == 2) & ok0 & ok1 & (pp == -1) & tiles(sa) & tiles(sb)
              & ((size == 0) | (size == sa) | (size == sb)))
    return leaf | unary | binary


def validate(arrays, meta, source):
    """Check a tape's arrays and metadata against each other and the op table, so that no
    kernel or Python path reads outside them. Returns ``(I, F0, meta)``, the arrays read-only
    and the metadata normalised (tuples, ints); raises TapeFormatError naming ``source`` and
    the first bad field or node."""
    try:
        return _validate(arrays, meta)
    except _Bad as e:
        raise TapeFormatError(f"{source}: {e}; the tape is damaged or was not written by "
                              f"burnumba: {FIX}") from None


def _array(arrays, name, dtypes):
    x = arrays.get(name) if isinstance(arrays, dict) else None
    if not isinstance(x, np.ndarray) or x.ndim != 1 or x.dtype not in dtypes:
        raise _Bad(f"array {name} is missing or not a 1-D {' / '.join(map(str, dtypes))} array")
    x = np.ascontiguousarray(x)
    if x.flags.writeable:
        x.flags.writeable = False
    return x


def _validate(arrays, meta):
    dtype = meta.get("dtype")
    if dtype not in ("float64", "float32"):
        raise _Bad(f"meta dtype is {dtype!r}, not 'float64' or 'float32'")
    ints = _array(arrays, "I", (np.dtype(layout.INT),))
    F0 = _array(arrays, "F0", (np.dtype(dtype),))
    missing = [k for k in META if k not in meta]
    if missing:
        raise _Bad(f"meta lacks {', '.join(missing)}")
    if len(ints) < layout.H:
        raise _Bad(f"array I has {len(ints)} entries, less than its header")
    n = int(ints[0])
    if n < 1 or len(ints) < layout.H + 6 * n + 1:
        raise _Bad(f"I[0] (the node count) is {n}, but I has {len(ints)} entries")
    cols = layout.views(ints, F0[:0])
    off = cols["off"]
    if off[0] != 0 or np.any(np.diff(off) < 0):
        k = 0 if off[0] != 0 else int(np.argmax(np.diff(off) < 0)) + 1
        raise _Bad(f"off[{k}] is {off[k]}: offsets must start at 0 and never decrease")
    V = int(off[n])
    if len(F0) != n + 2 * V:
        raise _Bad(f"array F0 has {len(F0)} entries; {n} nodes with {V} values need "
                   f"{n + 2 * V} (imm, val, grad)")
    op = cols["op"]
    rows = table_rows(meta.get("digest")) or len(ROWS)      # the table the tape was made under
    bad = np.flatnonzero((op < 0) | (op >= rows))
    if len(bad):
        raise _Bad(f"node %{bad[0]}: opcode {op[bad[0]]} is outside 0 .. {rows - 1}")
    bad = np.flatnonzero((cols["need"] != 0) & (cols["need"] != 1))
    if len(bad):
        raise _Bad(f"node %{bad[0]}: need is {cols['need'][bad[0]]}, not 0 or 1")
    shapes = meta["shapes"]
    if not isinstance(shapes, (list, tuple)) or len(shapes) != n:
        raise _Bad(f"meta shapes is not a list of {n} shapes")
    shapes = [_shape(s, f"shape of node %{i}") for i, s in enumerate(shapes)]
    t = _Tape(cols, n)
    # the nodes the vectorized checks pass (leaves and maps, most of a tape) skip their rule;
    # every other node, and any that fails, runs its rule in order, so the first bad node is
    # the one reported
    size = np.diff(cols["off"]).astype(np.int64)
    passed = _maps_and_leaves_ok(cols, n, size)
    sized = np.array([math.prod(s) for s in shapes], np.int64) == size
    for i in np.flatnonzero(~(passed & sized)).tolist():
        if math.prod(shapes[i]) != t.size[i]:
            raise _Bad(f"node %{i}: shape {shapes[i]} but {t.size[i]} values (off)")
        row = ROWS[t.op[i]]
        rule = RULES.get(row.name)
        if rule is None:
            raise _Bad(f"node %{i}: row {row.name} has no validation rule")
        try:
            rule(t, i)
        except _Bad as e:
            raise _Bad(f"{row.name} {e}") from None
    _position_patterns(cols, F0[:n])
    _polygamma_orders(cols, F0[:n])
    out = _int(meta["out"], "meta out", 0, n)
    if out != int(ints[1]):
        raise _Bad(f"meta out ({out}) differs from I[1] ({int(ints[1])})")
    if t.size[out] < 1:
        raise _Bad(f"the output node %{out} has no values")
    out_shape = _shape(meta["out_shape"], "meta out_shape")
    if math.prod(out_shape) != t.size[out]:
        raise _Bad(f"out_shape {out_shape} does not fit output node %{out} "
                   f"({t.size[out]} values)")
    norm = dict(meta, shapes=shapes, out=out, out_shape=out_shape)
    norm["in_slots"], norm["n_diff"] = _in_slots(meta, t, shapes, cols["need"])
    norm["aux"] = _aux(meta["aux"], t)
    norm["guards"] = _guards(meta.get("guards"), t)
    norm["by_ops"] = _by_ops(meta, norm, out_shape)
    norm.update(_plain(meta))
    return ints, F0, norm


def _position_patterns(cols, imm):
    """A gather's or scatter's immediate tells the kernel its positions' pattern, and the
    kernel trusts it: it must be 0 (none claimed, as files written before patterns have) or
    the pattern the positions have (run after every node's positions are checked)."""
    nodes, patterns = position_patterns(cols)
    claimed = imm[nodes]
    bad = np.flatnonzero((claimed != 0.0) & (claimed != patterns))
    if len(bad):
        k = bad[np.argmin(nodes[bad])]
        i, c = int(nodes[k]), float(claimed[k])
        names = {1.0: "one run", 2.0: "one position repeated"}
        raise _Bad(f"{ROWS[int(cols['op'][i])].name} node %{i}: its immediate is {c}, which "
                   f"claims {names.get(c, 'no pattern the kernel knows')}, but its positions "
                   f"are {names.get(float(patterns[k]), 'neither one run nor one repeated')}")


def _polygamma_orders(cols, imm):
    """A polygamma node's immediate is its order n, an integer in [0, 300] (the kernel
    multiplies n! out in a loop; n! overflows past 170 anyway)."""
    nodes = np.flatnonzero(cols["op"] == OPCODE["polygamma"])
    n = imm[nodes]
    bad = np.flatnonzero(~((n >= 0.0) & (n <= 300.0) & (n == np.floor(n))))
    if len(bad):
        i = int(nodes[bad[0]])
        raise _Bad(f"polygamma node %{i}: its immediate (the order) is {float(n[bad[0]])}, "
                   "not an integer in [0, 300]")


def _in_slots(meta, t, shapes, need):
    """Input k is node k (the tracer makes the inputs first, differentiated ones first):
    its slot must be that node's slice of val."""
    slots = meta["in_slots"]
    if not isinstance(slots, (list, tuple)) or len(slots) > t.n:
        raise _Bad("meta in_slots is not a list of at most one slot per node")
    norm = []
    for k, s in enumerate(slots):
        what = f"in_slots[{k}]"
        if not isinstance(s, (list, tuple)) or len(s) != 4 or type(s[3]) is not bool:
            raise _Bad(f"{what} is not (start, size, shape, is_float)")
        start, size = _int(s[0], what), _int(s[1], what)
        shape = _shape(s[2], what)
        if ROWS[t.op[k]].name != "input" or (start, size) != (t.off[k], t.size[k]) \
                or shape != shapes[k]:
            raise _Bad(f"{what} = {tuple(s)} does not match input node %{k}")
        norm.append((start, size, shape, s[3]))
    n_diff = _int(meta["n_diff"], "meta n_diff", 0, len(norm) + 1)
    if n_diff and not np.all(need[:n_diff] == 1):
        raise _Bad("a differentiated input has need 0")
    return norm, n_diff


def _aux(aux, t):
    if aux is None:
        return None
    if not isinstance(aux, (list, tuple)) or len(aux) != 2 or not isinstance(aux[1], (
            list, tuple)):
        raise _Bad("meta aux is not (treedef, items)")
    items = []
    for j, it in enumerate(aux[1]):
        if not isinstance(it, (list, tuple)) or len(it) != 2:
            raise _Bad(f"aux item {j} is not a pair")
        if isinstance(it[0], str) and it[0] == "const":
            items.append(("const", it[1]))
            continue
        node = _int(it[0], f"aux item {j}'s node", 0, t.n)
        shape = _shape(it[1], f"aux item {j}'s shape")
        if math.prod(shape) != t.size[node]:
            raise _Bad(f"aux item {j}: shape {shape} does not fit node %{node}")
        items.append((node, shape))
    return (aux[0], items)


def _guards(guards, t):
    """The guards (nodes, kinds, values, sites), checked: each on a node of one value, of a
    known kind; None when the tape has none (and for files written before guards)."""
    if guards is None:
        return None
    if not (isinstance(guards, (list, tuple)) and len(guards) == 4):
        raise _Bad("meta guards is not (nodes, kinds, values, sites)")
    nodes, kinds, values, sites = guards
    try:
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        kinds = np.asarray(kinds, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise _Bad("meta guards holds non-numeric nodes, kinds or values") from None
    if not (len(nodes) == len(kinds) == len(values) == len(sites)) or not len(nodes):
        raise _Bad("meta guards: nodes, kinds, values and sites differ in length")
    if np.any((nodes < 0) | (nodes >= t.n)):
        raise _Bad("meta guards names a node outside the tape")
    if any(t.size[k] != 1 for k in nodes.tolist()):
        raise _Bad("meta guards names a node of more than one value")
    if np.any((kinds < 0) | (kinds > LAST_KIND)):
        raise _Bad(f"meta guards has a kind outside 0 .. {LAST_KIND}")
    if not all(isinstance(s, str) for s in sites):
        raise _Bad("meta guards' sites are not source lines")
    arrays = (nodes, kinds.astype(np.int8), values)
    for a in arrays:
        a.flags.writeable = False
    return arrays + (tuple(sites),)


def _by_ops(meta, norm, out_shape):
    """Format 3's flag: the output is the value, then the differentiated leaves' gradients
    (one vector, 1 + their size long)."""
    by_ops = meta.get("by_ops", False)
    if type(by_ops) is not bool:
        raise _Bad(f"meta by_ops is {by_ops!r}, not a bool")
    if by_ops != (meta.get("format") == FORMAT_BY_OPS):
        raise _Bad(f"meta by_ops is {by_ops} in a {meta.get('format')} tape")
    if by_ops:
        size = 1 + sum(slot[1] for slot in norm["in_slots"][:norm["n_diff"]])
        if out_shape != (size,):
            raise _Bad(f"a value-and-gradient tape's output has shape {out_shape}, not "
                       f"({size},): the value and its {size - 1} gradient entries")
    return by_ops


def _plain(meta):
    """The remaining fields, type-checked."""
    argnums, static = meta["argnums"], meta["static"]
    for name, x in (("argnums", argnums), ("static", static)):
        if not isinstance(x, (list, tuple)):
            raise _Bad(f"meta {name} is not a tuple of ints")
        [_int(k, f"meta {name}") for k in x]
    for name in ("single", "forward_mode"):
        if type(meta[name]) is not bool:
            raise _Bad(f"meta {name} is {meta[name]!r}, not a bool")
    sites = meta["sites"]
    if sites is not None and not (isinstance(sites, (list, tuple)) and all(
            s is None or isinstance(s, str) for s in sites)):
        raise _Bad("meta sites is not a list of source lines")
    if not isinstance(meta["key"], tuple):
        raise _Bad("meta key (the traced signature) is not a tuple")
    return {"argnums": tuple(int(k) for k in argnums), "static": tuple(int(k) for k in static),
            "largest_product": _int(meta["largest_product"], "meta largest_product", 0),
            "sites": list(sites) if sites is not None else None}


# -- pictures ----------------------------------------------------------------------------------
def operands(tape, i):
    """The nodes node i reads, for drawing: a0 / a1, and those its parameters name (where's
    condition, the listed operands of sum / sumsq / inner, the nodes a gather reads)."""
    name = ROWS[tape.op[i]].name
    ids = [int(k) for k in (tape.a0[i], tape.a1[i]) if k >= 0]
    p, P = int(tape.pp[i]), tape.P
    if p < 0:
        return ids
    if ROWS[tape.op[i]].layout == "tiles":      # where's condition, betainc's a
        ids.insert(0, int(P[p]))
    elif name in ("sum", "sumsq", "inner"):
        m = int(P[p]) * (2 if name == "inner" else 1)
        ids += [int(k) for k in P[p + 1:p + 1 + m]]
    elif name == "gather":
        ny = int(tape.off[i + 1] - tape.off[i])
        ids = np.unique(np.searchsorted(tape.off, P[p:p + ny], side="right") - 1).tolist()
    return list(dict.fromkeys(ids))


def _numbers(x):
    shown = ", ".join(f"{v:.4g}" for v in x[:4])
    return f"[{shown}{', ...' if len(x) > 4 else ''}]" if len(x) != 1 else shown


def to_dot(tape, values=False, grads=False, max_nodes=200):
    """The tape as Graphviz DOT text (see Tape.to_dot)."""
    n = tape.n
    keep = range(n) if n <= max_nodes else \
        list(range(max_nodes // 2)) + list(range(n - (max_nodes - max_nodes // 2), n))
    shown = set(keep)
    state = tape.state() if values or grads else None
    inputs = {k for k in range(len(tape.in_slots))}
    lines = ["digraph tape {", "  rankdir=LR;",
             '  node [shape=box, fontname="monospace", fontsize=10];']
    edges = []
    for i in keep:
        name = ROWS[tape.op[i]].name
        label = [f"%{i} {name}", str(list(tape.shapes[i]))]
        o, e = int(tape.off[i]), int(tape.off[i + 1])
        if values:
            label.append("val " + _numbers(state.val[o:e]))
        if grads and tape.need[i]:
            label.append("grad " + _numbers(state.grad[o:e]))
        style = ""
        if i in inputs:
            kind = "diff input" if i < tape.n_diff else "data input"
            label[0] += f" ({kind} {i})"
            style = ', style=filled, fillcolor="#cfe8ff"'
        elif name == "const":
            style = ', style=filled, fillcolor="#eeeeee"'
        if i == tape.out:
            label[0] += " (output)"
            style = ', style="filled,bold", fillcolor="#ffe3b3", peripheries=2'
        text = "\\n".join(label).replace('"', '\\"')
        lines.append(f'  n{i} [label="{text}"{style}];')
        for k in operands(tape, i):
            edges.append(f"  n{k} -> n{i};" if k in shown else f"  hidden -> n{i};")
    if len(shown) < n:
        lines.append(f'  hidden [label="... {n - len(shown)} nodes not shown", shape=plaintext];')
    lines += list(dict.fromkeys(edges))
    lines.append("}")
    return "\n".join(lines) + "\n"
