"""How a tape and one run of it are laid out in three flat arrays.

The kernels take a tape as three arrays and an int, so a call crosses into compiled code
with few arguments and no Python objects:

``I`` (int32, the tape: immutable once traced, shared by every thread):
    ``n out | op[n] a0[n] a1[n] pp[n] need[n] off[n+1] P[...]``
``F`` (float64 or float32, one run's state: values, gradients, scratch):
    ``imm[n] val[V] grad[V] scratch[S]`` with ``V = off[n]``
``C`` (int64, one run's control block, ``CSIZE`` slots): the error a kernel reports, the
    node range of a stepped sweep, and the BLAS routine to call (see the ``C_*`` names).

The two-int header of ``I`` holds the node count and the output node. Node ``i`` owns
``val[off[i]:off[i+1]]`` and the same slice of ``grad``; a scalar node owns a slice of length
1. ``a0`` / ``a1`` are operand node indices (-1 for none), ``pp`` is where the node's integer
parameters start in ``P`` (-1 for none), ``need`` is 1 when the node depends on a
differentiated input and ``imm`` is a float immediate (an exponent, a scale). ``imm`` and
the constants' values are part of the tape; a new run state starts as a copy of the traced
``F`` (``Tape.F0``), so each thread, or each Trainer, has values and gradients of its own.
"""
import numpy as np

INT = np.int32
COLUMNS = ("op", "a0", "a1", "pp", "need")
H = 2                                   # header of I: n, out

# The control block C: slots the kernels read and write (int64).
C_ERR = 0            # an error code a kernel set (0: none); see ERRORS
C_NODE = 1           # the node where it happened
C_LO = 2             # MODE_STEP_FORWARD / MODE_STEP_BACKWARD: the nodes lo .. hi - 1
C_HI = 3
C_GEMM = 4           # address of cblas_dgemm (float64 tapes) or cblas_sgemm (float32), or 0
C_ILP64 = 5          # 1 when that BLAS takes 64-bit integers
C_BATCH = 6          # MODE_BATCH / MODE_BATCH_GRAD: the number of samples,
C_BATCH_IN = 7       # the input values per sample,
C_BATCH_X = 8        # where their rows start in F (samples x inputs),
C_BATCH_Y = 9        # where the output rows start in F (samples x outputs),
C_BATCH_G = 10       # MODE_BATCH_GRAD: the gradients per sample (of the first values),
C_BATCH_SEGS = 11    # and the segments of val a sample's inputs go to: (start, count)
C_GEMV = 12          # address of cblas_dgemv / cblas_sgemv (the BLAS of C_GEMM), or 0
C_CLEAN = 13         # 1: the gradient slices of the nodes with need 0 hold zeros, as a tangent
                     # sweep leaves them, so the next one need not zero them again; every
                     # mode that may write gradients (a reverse sweep) sets it to 0
C_LANES = 14         # MODE_BATCH / MODE_BATCH_GRAD: the samples a run holds side by side (a
                     # wide tape's L, burnumba/ir/lanes.py; 1 for a tape of one sample)
C_BATCH_YK = 15      # MODE_BATCH / MODE_BATCH_GRAD on a wide tape: Y's stride between a
                     # sample's values (the call's sample count: Y's rows are values, the
                     # samples side by side, as a wide run computes them); a tape of one
                     # sample writes rows of samples
C_BATCH_S = 16       # MODE_BATCH / MODE_BATCH_GRAD: where the values every sample shares
                     # start in F (one row: the shared inputs, segment after segment),
C_BATCH_SSEGS = 17   # and how many segments of val they go to, into every lane, once a run
                     # (a sweep never writes an input's values)
C_USER = 18          # address of the run's table of users' numba functions (njit_call rows,
                     # kernels/blocks_user.py): three addresses per op the tape calls
                     # (forward, vjp, jvp; 0 for a rule not given), or 0 for no table
C_BATCH_CHECKS = 19  # MODE_BATCH / MODE_BATCH_GRAD: how many node values a result row holds
                     # after the outputs (a tape's guard nodes, read by the caller to find
                     # the samples whose Python decisions hold: burnumba/transforms/vmap.py);
                     # their node indices follow the shared row's pairs below
C_FROM = 20          # MODE_VALUE_AND_GRAD / MODE_VJP: the forward sweep starts at this node
                     # (0; a tape with Python decisions runs the nodes below it first, by
                     # MODE_STEP_FORWARD, and checks its guards before the rest: ir/tape.py)
CSIZE = 21           # then MODE_BATCH's (start, count) pairs, in the order of a row of X,
                     # then the shared row's, then the checked nodes; or MODE_JVP_LEAN's flag
                     # per node

# What ``run(I, F, C, mode)`` does; it returns the first value of the output node.
MODE_FORWARD = 0           # evaluate every node
MODE_VALUE_AND_GRAD = 1    # forward; zero the gradients; d out / d out = 1; reverse sweep
MODE_VJP = 2               # forward; zero the gradients below the output's (the caller wrote
                           # the cotangent into the output's gradient); reverse sweep
MODE_STEP_FORWARD = 3      # evaluate nodes C[C_LO] .. C[C_HI] - 1 (the NaN locator's steps)
MODE_STEP_BACKWARD = 4     # reverse-sweep nodes C[C_HI] - 1 down to C[C_LO], nothing zeroed
MODE_JVP = 5               # forward, then the tangent sweep: tangents live in the grad region;
                           # the caller wrote the differentiated inputs' tangents there
MODE_TANGENT = 6           # the tangent sweep alone, on the values of an earlier forward
MODE_BATCH = 7             # for each of C[C_BATCH] samples: copy its inputs from F's X rows
                           # into val, evaluate every node, copy the output into F's Y rows
                           # (C[C_LANES] samples at a time on a wide tape, side by side),
                           # then the C[C_BATCH_CHECKS] checked nodes' first values
MODE_BATCH_GRAD = 8        # the same with MODE_VALUE_AND_GRAD: a Y row is the value and the
                           # first C[C_BATCH_G] gradients
MODE_JVP_LEAN = 9          # MODE_JVP without the values its tangent sweep never reads: node i's
                           # forward runs only when C[CSIZE + i] is 1 (an hvp needs J v, not
                           # the gradient's value); the returned value means nothing

# Error codes a kernel writes to C[C_ERR] (it then returns NaN at once).
ERR_OPCODE = 1       # an opcode this kernel was not built for
ERR_INDEX = 2        # take: an index outside the table's rows
ERR_TARGET = 3       # cross_entropy: a target outside 0 .. classes - 1
ERR_USER_RULE = 4    # njit_call: the user's op has no rule for this sweep (its vjp or jvp)
ERR_USER_RAISED = 5  # njit_call: the user's numba function raised
ERR_NUMBA = 99       # numba's own error status, which the generated code never produces
ERRORS = {ERR_OPCODE: "an opcode this kernel was not built for",
          ERR_NUMBA: "an internal error in compiled code",
          ERR_INDEX: "an index is out of range for the table's rows",
          ERR_TARGET: "a target class is outside 0 .. classes - 1",
          ERR_USER_RULE: "the user's op has no rule for this sweep",
          ERR_USER_RAISED: "the user's numba function raised an exception"}


def pack(op, a0, a1, pp, need, off, params, imm, out, scratch=0, dtype=np.float64):
    """Pack the columns (sequences of equal length n, off of length n+1) into (I, F)."""
    n = len(op)
    I = np.concatenate([np.asarray(c, dtype=INT)
                        for c in ((n, out), op, a0, a1, pp, need, off, params)])
    size = int(off[-1]) if n else 0
    F = np.zeros(n + 2 * size + scratch, dtype=dtype)
    F[:n] = imm
    return I, F


def views(I, F):
    """Named numpy views of the packed columns (shared memory, no copies)."""
    n = int(I[0])
    cols = {name: I[H + k * n:H + (k + 1) * n] for k, name in enumerate(COLUMNS)}
    off = I[H + 5 * n:H + 6 * n + 1]
    cols["off"] = off
    cols["P"] = I[H + 6 * n + 1:]
    size = int(off[n]) if n else 0
    cols["imm"] = F[:n]
    cols["val"] = F[n:n + size]
    cols["grad"] = F[n + size:n + 2 * size]
    cols["scratch"] = F[n + 2 * size:]
    return cols


# Where each column starts, as the generated kernels compute it from I's header: the
# kernels index ``I[b_off + i]`` instead of slicing columns, which would cost reference
# counting (and, through pointers, is not possible at all).
BASES = """\
n = I[0]
b_op = H
b_a0 = H + n
b_a1 = H + 2 * n
b_pp = H + 3 * n
b_need = H + 4 * n
b_off = H + 5 * n
b_P = b_off + n + 1
size = I[b_off + n]
b_imm = 0
b_val = n
b_grad = n + size
b_scratch = n + 2 * size
"""
