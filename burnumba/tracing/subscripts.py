"""A numpy array indexed by traced integers, read when the tape runs (#30).

``table[i]`` with ``table`` a numpy array and ``i`` traced integer data is numpy's own
subscript: numpy asks ``i`` for its integers (``Var.__array__``) and returns a numpy array,
so the result cannot be traced, and the index's values become a guarded constant
(``conversions.guarded_index``: a new index traces again). That is the only safe reading in
general, since numpy's result may go anywhere. One common case is provably local, though:
the subscript's result is a temporary that the next operation of the same line consumes,
a binary operator whose other operand is traced, as in autograd's fluidsim example::

    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + ...)      # f a numpy array

Then nobody but that operator ever sees numpy's array, and the operator lifts it into the
trace (``Builder.lift``) while the user's frame still stands at that instruction. At that
moment the array is replaced by the same subscript traced on the table as a constant (a take
row that reads the index when the tape runs), and the guards the index recorded are
dropped: new index values no longer trace again.

How the line is read: from its bytecode (CPython 3.11+, as ``conversions.user_instruction``
reads it), only in the straight-line form ``NAME[NAME, ...] <op>`` or ``NAME[NAME, ...]
NAME <op>``: the table and every index part a plain name or a constant (``LOAD_FAST``,
``LOAD_DEREF``, ``LOAD_GLOBAL``, ``LOAD_NAME``, ``LOAD_CONST``), nothing in between a jump
target, the consumer a ``BINARY_OP``. Any other form (an attribute, a slice, a call, a
result stored in a name) keeps the guard, which is always correct.
"""
import dis

import numpy as np

from .._errors import BurnumbaError
from .concrete import Evaluator

_LOADS = frozenset(("LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_CONST"))
_PATTERNS = {}          # (code, offset of the subscript) -> (table, key parts, consumer) or None


def _simple(ins):
    """A plain load that pushes one value: a name or a constant (not a jump target)."""
    if ins.opname not in _LOADS or ins.is_jump_target:
        return False
    return not (ins.opname == "LOAD_GLOBAL" and ins.arg & 1)    # 3.11: also pushes NULL


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _expression(ins, end):
    """The first instruction of the straight-line code that computes the one value on top of
    the stack after ``ins[end]``, or None. In postfix code, every non-empty proper prefix of
    an expression leaves at least one value, so every proper suffix nets at most 0: the
    start is where the suffix first nets +1."""
    depth = 0
    for k in range(end, -1, -1):
        i = ins[k]
        if i.opcode in _JUMPS or i.opname.startswith(("RESUME", "RETURN", "YIELD", "STORE",
                                                       "POP_", "DELETE", "IMPORT")):
            return None
        depth += dis.stack_effect(i.opcode, i.arg if i.opcode >= dis.HAVE_ARGUMENT else None,
                                  jump=False)
        if depth == 1:
            return k
        if i.is_jump_target:                  # another path joins inside the expression
            return None
    return None


def _pattern(code, offset):
    """For the subscript at ``offset`` of ``code``: the table's load, the key's parts (a
    plain load, or None for a part computed otherwise: a traced index's value), whether the
    key is a tuple, and the consumer's offset; or None when the line has another form."""
    found = _PATTERNS.get((code, offset), False)
    if found is not False:
        return found
    found = None
    ins = list(dis.get_instructions(code))
    at = {i.offset: k for k, i in enumerate(ins)}
    s = at.get(offset)
    if s is not None and s >= 2 and ins[s].opname == "BINARY_SUBSCR" and \
            not ins[s].is_jump_target:
        is_tuple = ins[s - 1].opname == "BUILD_TUPLE" and not ins[s - 1].is_jump_target
        n, end = (ins[s - 1].arg, s - 2) if is_tuple else (1, s - 1)
        parts = []
        for _ in range(n):
            first = _expression(ins, end) if end >= 0 else None
            if first is None or ins[first].opname == "BUILD_LIST":
                parts = None
                break
            if ins[end].opname in ("BUILD_LIST", "BUILD_TUPLE", "LIST_TO_TUPLE"):
                parts = None                   # a list of indices: numpy stacks it
                break
            parts.append(ins[first] if first == end and _simple(ins[first]) else None)
            end = first - 1
        consumer = None
        if parts is not None and end >= 0 and _simple(ins[end]) and s + 1 < len(ins):
            nxt = ins[s + 1]
            if nxt.opname == "BINARY_OP" and not nxt.is_jump_target:
                consumer = nxt.offset
            elif _simple(nxt) and s + 2 < len(ins) and ins[s + 2].opname == "BINARY_OP" \
                    and not ins[s + 2].is_jump_target:
                consumer = ins[s + 2].offset
        if consumer is not None:
            found = (ins[end], tuple(reversed(parts)), is_tuple, consumer)
    if len(_PATTERNS) > 4096:
        _PATTERNS.clear()
    _PATTERNS[(code, offset)] = found
    return found


_MISSING = object()


def _load(frame, ins):
    """The value a plain load pushed (the line has not run anything since), or _MISSING."""
    if ins.opname == "LOAD_CONST":
        return ins.argval
    name = ins.argval
    if ins.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_NAME"):
        v = frame.f_locals.get(name, _MISSING)
        if v is not _MISSING or ins.opname != "LOAD_NAME":
            return v
    v = frame.f_globals.get(name, _MISSING)
    if v is _MISSING:
        builtins = frame.f_builtins
        v = builtins.get(name, _MISSING) if isinstance(builtins, dict) else _MISSING
    return v


class Pending:
    """A numpy subscript by traced integers whose result the next operator will consume:
    the user's frame, the consumer's offset, the table, the key's parts (a value, or
    _MISSING for a part computed otherwise), whether the key is a tuple, the traced
    indices numpy asked for integers (in its order: the key's), their guards."""

    __slots__ = ("frame", "at", "end", "consumer", "table", "parts", "is_tuple", "asked",
                 "guards")

    def __init__(self, frame, consumer, table, parts, is_tuple):
        self.frame, self.at, self.consumer, self.table = frame, frame.f_lasti, consumer, table
        self.parts, self.is_tuple = parts, is_tuple
        self.asked, self.guards = [], []
        self.end = -1                # the trace's length after the last index numpy asked

    def current(self):
        return self.frame.f_lasti == self.consumer

    def key(self, b):
        """The key numpy indexed with: the plain parts as they were, each computed part the
        next traced index numpy asked (so every such part must be one); None when the
        traced indices numpy asked do not line up with the key's parts."""
        asked = iter(self.asked)
        key = []
        for part in self.parts:
            if part is _MISSING or getattr(part, "_b", None) is b:
                got = next(asked, None)
                if got is None or (part is not _MISSING and got is not part):
                    return None
                part = got
            elif not isinstance(part, (int, np.integer, np.ndarray, type(None))) or \
                    isinstance(part, bool):
                return None
            key.append(part)
        if next(asked, None) is not None:
            return None
        return tuple(key) if self.is_tuple else key[0]


def note(var, frame, guard, start):
    """Called by ``conversions.guarded_index`` when numpy's subscript in ``frame`` asks the
    traced index ``var`` for its integers, right after the index recorded its guard (number
    ``guard``, its nodes from ``start`` on): remember the subscript when its result is a
    temporary the next operator consumes."""
    b = var._b
    pending = b.subscripts
    if pending is None:
        pending = b.subscripts = []
    pending[:] = [p for p in pending if p.frame is frame and p.frame.f_lasti <= p.consumer]
    for p in pending:
        # another traced part of the same key: the same instruction, and nothing traced
        # since the previous part's guard (a loop's next pass at this line traces its index)
        if p.frame is frame and frame.f_lasti == p.at and p.end == start:
            p.asked.append(var)
            p.guards.append(guard)
            p.end = b.n
            return
    found = _pattern(frame.f_code, frame.f_lasti)
    if found is None:
        return
    table_ins, part_ins, is_tuple, consumer = found
    table = _load(frame, table_ins)
    if type(table) is not np.ndarray or table.dtype.kind not in "biuf":
        return
    parts = [_MISSING if i is None else _load(frame, i) for i in part_ins]
    pending[:] = []                          # a new subscript: earlier ones were not consumed
    p = Pending(frame, consumer, table, parts, is_tuple)
    p.asked.append(var)
    p.guards.append(guard)
    p.end = b.n
    pending.append(p)


def take_over(b, x):
    """The traced subscript standing for numpy's result ``x``, lifted by the consumer while
    the user's frame stands at it, with its indices' guards dropped; or None."""
    pending = b.subscripts
    found = None
    for p in pending:
        if p.current() and found is None:
            found = p
    pending[:] = [p for p in pending if p is not found and p.frame.f_lasti <= p.consumer]
    if found is None:
        return None
    key = found.key(b)
    if key is None:
        return None
    try:
        traced = b.const(found.table)[key]
    except BurnumbaError:                   # e.g. a float32 tape's flat index: keep the guard
        return None
    if traced.shape != x.shape:
        return None
    if b.evaluator is None:
        b.evaluator = Evaluator(b, b.given)
    if not np.array_equal(b.evaluator.value(traced.node).reshape(x.shape),
                          np.asarray(x, dtype=b.dtype), equal_nan=True):
        return None
    b.guards.drop(found.guards)
    for p in pending:                        # later guards moved down
        p.guards = [g - sum(1 for d in found.guards if d < g) for g in p.guards]
    return traced


def lifted(b, x):
    """``Builder.lift`` of ``x`` (a number or an array) while subscripts are pending: the
    traced subscript numpy's result stands for, or a constant."""
    traced = take_over(b, x) if type(x) is np.ndarray else None
    return b.const(x) if traced is None else traced
