"""Wide tapes: a tape of one sample laid out for L samples side by side (``bn.vmap``).

A vmapped call runs one tape for every sample. Run sample after sample, a small tape's time
goes to the interpreter (the per-sample MLP's 18 nodes: ~50 ns a node for 16 elements) and
to loops too short to vectorize. A wide tape holds L samples at once, sample innermost:
element j of a node's slice for sample s sits at ``j * L + s`` (every offset scaled by L).
Then

* a map row runs unchanged, over L times the elements (an elementwise rule does not care
  how its elements are ordered, and a tile operand, a bias, stays a suffix tile);
* a block row runs its lanes form (``ops.LANES``), whose innermost loops run over the
  samples. A lanes form takes every sum in the order the row's own sweep takes it, so each
  sample gets the bits a call on it alone gives; where the own sweep would call BLAS (whose
  order is its own), the row's ``fits`` says no, and the tape is not widened. Nor is it
  where a scalar node's row calls exp: a tape of one sample runs that node in the
  dispatcher's scalar case (libm's exp), a wide tape in the row's loops (their own exp,
  which may differ in the last bit; ``rules.LOOP_MATH``).

So a wide run gives the bits of the per-sample runs, in float32 as in float64. A tape with a
node no lanes form fits runs sample by sample, as before (``widen`` returns None).
"""
import numpy as np

from ..kernels import engine, kernel, layout, rules
from ..kernels.ops import LANES, OPCODE, ROWS

MAX_LANES = 64         # samples side by side (the per-sample MLP's kernel: 405 us at 64,
                       # 536 at 32, 704 sample by sample; its wide state, 450 kB, fits L2)
WIDE_BYTES = 4 << 20   # at most this much wide state (values and gradients) per run: a tape
MIN_LANES = 8          # of more values gets fewer lanes, and below 8 runs sample by sample
_LIMIT = 2 ** 31 - 1   # offsets are int32


def lanes_for(tape, size):
    """How many samples of a batch of ``size`` a wide run of ``tape`` holds side by side
    (1: none, the tape runs sample by sample). Up to MAX_LANES, as long as the wide values
    and gradients stay within WIDE_BYTES (the per-sample MLP's, 440 values: 450 kB at 64)."""
    lanes = min(MAX_LANES, size)
    per_lane = 2 * int(tape.I[layout.H + 6 * int(tape.I[0])]) * tape.F0.itemsize
    cap = WIDE_BYTES // max(per_lane, 1)
    if lanes > cap:
        lanes = cap if cap >= MIN_LANES else 1
    return lanes


class Wide:
    """What a run of a widened tape needs: the packed tape ``I`` (opcodes of the lanes
    forms, offsets scaled), the initial state ``F0`` (constants in every lane, L scratch
    values for the lanes rows' sums), its kernel, and L."""

    def __init__(self, ints, F0, kernel, lanes):
        self.I, self.F0, self.kernel, self.lanes = ints, F0, kernel, lanes
        self.dtype = F0.dtype


def widen(tape, lanes, shared=frozenset()):
    """``tape`` laid out for ``lanes`` samples side by side (a ``Wide``), or None when one of
    its nodes has no lanes form that gives every sample its own bits. ``shared``: the value
    slices (start, size) in the tape of the inputs that every sample shares: the caller
    writes them into every lane, so a product whose B is one of them (or a constant) reads
    it once per element, not once per lane."""
    cols = layout.views(tape.I, tape.F0)
    n = int(tape.I[0])
    size = int(cols["off"][n]) if n else 0
    if n == 0 or size * lanes + lanes > _LIMIT:
        return None
    blas = engine.control_block(tape.dtype)[layout.C_GEMM] != 0
    op, need, P, pp = cols["op"], cols["need"], cols["P"], cols["pp"]
    new_op = op.copy()
    sizes = np.diff(cols["off"])
    for i in range(n):
        row = ROWS[op[i]]
        if row.kind == "leaf":
            continue
        if row.kind == "map":
            # a scalar node runs the dispatcher's scalar case, a wide one the row's loops;
            # where those call different exps, the bits may differ: not widened
            if sizes[i] == 1 and rules.calls_loop_math(row):
                return None
            continue
        form = LANES.get(row.name)
        a, b = cols["a0"][i], cols["a1"][i]
        if form is None or not form.fits(P[pp[i]:], a >= 0 and bool(need[a]),
                                         b >= 0 and bool(need[b]), blas):
            return None
        new_op[i] = OPCODE[form.name]
    ints = tape.I.copy()
    wide = layout.views(ints, tape.F0)         # views of the copy's columns
    wide["op"][:] = new_op
    wide["off"][:] = cols["off"] * lanes
    scratch = max(cols["scratch"].size * lanes, lanes)
    F0 = np.zeros(n + 2 * size * lanes + scratch, dtype=tape.dtype)
    F0[:n] = cols["imm"]
    # matmul_lanes' immediate (matmul has none): 1 where float64 slots may hold its sums,
    # + 2 where B is the same in every lane (a shared input or a constant; in float64 only)
    products = new_op == OPCODE["matmul_lanes"]
    if tape.dtype == np.float64:
        shared_input = np.array([size > 0 and (start, size) in shared for start, size in
                                 zip(cols["off"][:n].tolist(), sizes.tolist())], bool)
        uniform = (op == OPCODE["const"]) | ((op == OPCODE["input"]) & shared_input)
        F0[:n][products] = 1.0
        b = cols["a1"]
        F0[:n][products & (b >= 0) & uniform[np.maximum(b, 0)]] = 3.0
    else:
        F0[:n][products] = 0.0
    F0[n:n + size * lanes] = np.repeat(cols["val"], lanes)
    rows, tensor = engine.tape_rows(ints)
    return Wide(ints, F0, kernel(rows, tensor, tape.dtype), lanes)
