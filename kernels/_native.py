"""The compiled versions of ``_prims``: numba intrinsics. Imported only when compiling.

``gemm`` calls BLAS through the address in the control block (``C[C_GEMM]``, cblas_dgemm
or cblas_sgemm of the BLAS numpy itself loaded; ``blas.blas`` finds it), and ``gemv``
through ``C[C_GEMV]`` (cblas_dgemv or cblas_sgemv of the same BLAS), so a kernel never
links a BLAS of its own and takes nothing but arrays and ints. ``C[C_ILP64]`` says whether
that BLAS takes 64-bit integers (numpy's bundled OpenBLAS does).
"""
import types as pytypes

from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from . import _prims, rules
from .layout import C_GEMM, C_GEMV, C_ILP64, C_USER, ERR_USER_RULE

CblasRowMajor, CblasNoTrans, CblasTrans = 101, 111, 112


def _cblas(context, builder, signature, args, slot, dtype, spec):
    """Call the cblas routine whose address is ``C[slot]`` (``args[0]`` is C), with 32- or
    64-bit integers as ``C[C_ILP64]`` says. ``spec`` lists its arguments: "order" (row-major),
    ("trans", k) (CblasTrans when args[k] is nonzero), ("int", k), "unit" (the integer 1),
    "one" (the real 1), ("real", k), ("ptr", k, ko) (the array args[k] at offset args[ko])."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    real = context.get_value_type(dtype)

    def int64(k):
        return context.cast(builder, args[k], signature.args[k], types.int64)

    address = builder.load(builder.gep(args[0], [ir.Constant(i64, slot)]))
    ilp64 = builder.load(builder.gep(args[0], [ir.Constant(i64, C_ILP64)]))

    def call(blasint):
        def n(v):
            return builder.trunc(v, blasint) if blasint.width < 64 else v
        kinds, values = [], []
        for item in spec:
            kind = item if isinstance(item, str) else item[0]
            if kind == "order":
                kinds.append(i32)
                values.append(ir.Constant(i32, CblasRowMajor))
            elif kind == "trans":
                nonzero = builder.icmp_signed("!=", int64(item[1]), ir.Constant(i64, 0))
                kinds.append(i32)
                values.append(builder.select(nonzero, ir.Constant(i32, CblasTrans),
                                             ir.Constant(i32, CblasNoTrans)))
            elif kind == "int":
                kinds.append(blasint)
                values.append(n(int64(item[1])))
            elif kind == "unit":
                kinds.append(blasint)
                values.append(ir.Constant(blasint, 1))
            elif kind == "one":
                kinds.append(real)
                values.append(ir.Constant(real, 1.0))
            elif kind == "real":
                kinds.append(real)
                values.append(context.cast(builder, args[item[1]], signature.args[item[1]],
                                           dtype))
            else:                                   # "ptr"
                kinds.append(real.as_pointer())
                values.append(builder.gep(args[item[1]], [int64(item[2])]))
        fnty = ir.FunctionType(ir.VoidType(), kinds)
        builder.call(builder.inttoptr(address, fnty.as_pointer()), values)

    wide = builder.icmp_signed("!=", ilp64, ir.Constant(i64, 0))
    with builder.if_else(wide) as (then, otherwise):
        with then:
            call(i64)
        with otherwise:
            call(i32)


@intrinsic
def gemm(typingctx, C, ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy):
    """cblas_?gemm(RowMajor, op(ta), op(tb), M, N, K, 1, A + oa, lda, B + ob, ldb, beta,
    Y + oy, ldy), with A, B, Y pointers of the tape's float type."""
    dtype = A.dtype
    sig = types.void(C, ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy)

    def codegen(context, builder, signature, args):
        _cblas(context, builder, signature, args, C_GEMM, dtype,
               ["order", ("trans", 1), ("trans", 2), ("int", 3), ("int", 4), ("int", 5),
                "one", ("ptr", 6, 7), ("int", 8), ("ptr", 9, 10), ("int", 11), ("real", 12),
                ("ptr", 13, 14), ("int", 15)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def gemv(typingctx, C, ta, M, N, A, oa, lda, X, ox, beta, Y, oy):
    """cblas_?gemv(RowMajor, op(ta), M, N, 1, A + oa, lda, X + ox, 1, beta, Y + oy, 1):
    Y = op(A) @ X + beta * Y for the M x N matrix A (op(A) = A^T when ta), unit strides."""
    dtype = A.dtype
    sig = types.void(C, ta, M, N, A, oa, lda, X, ox, beta, Y, oy)

    def codegen(context, builder, signature, args):
        _cblas(context, builder, signature, args, C_GEMV, dtype,
               ["order", ("trans", 1), ("int", 2), ("int", 3), "one", ("ptr", 4, 5),
                ("int", 6), ("ptr", 7, 8), "unit", ("real", 9), ("ptr", 10, 11), "unit"])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def user(typingctx, C, slot, which, X, ox, nx, Y, oy, ny, A, oa, B, ob):
    """Call a user's numba function (an njit_call row, kernels/blocks_user.py): the address
    at ``table[3 * slot + which]`` of the run's table (its address is ``C[C_USER]``), as
    ``int64 f(X + ox, Y + oy, A + oa, B + ob, nx, ny)`` with pointers of the tape's float
    type; its status (0, or ERR_USER_RAISED), or ERR_USER_RULE where the table or the
    address is 0 (no table, or no rule for this sweep)."""
    sig = types.int64(C, slot, which, X, ox, nx, Y, oy, ny, A, oa, B, ob)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        real = context.get_value_type(X.dtype)

        def int64(k):
            return context.cast(builder, args[k], signature.args[k], types.int64)

        status = builder.alloca(i64)
        builder.store(ir.Constant(i64, ERR_USER_RULE), status)
        table = builder.load(builder.gep(args[0], [ir.Constant(i64, C_USER)]))
        with builder.if_then(builder.icmp_signed("!=", table, ir.Constant(i64, 0))):
            entry = builder.add(builder.mul(int64(1), ir.Constant(i64, 3)), int64(2))
            address = builder.load(builder.gep(builder.inttoptr(table, i64.as_pointer()),
                                               [entry]))
            with builder.if_then(builder.icmp_signed("!=", address, ir.Constant(i64, 0))):
                fnty = ir.FunctionType(i64, [real.as_pointer()] * 4 + [i64, i64])
                pointers = [builder.gep(args[k], [int64(k + 1)]) for k in (3, 6, 9, 11)]
                builder.store(builder.call(builder.inttoptr(address, fnty.as_pointer()),
                                           pointers + [int64(5), int64(8)]), status)
        return builder.load(status)

    return sig, codegen


@intrinsic
def pow2(typingctx, k):
    """2.0 ** k for an int64 k in [-1022, 1023]: the biased exponent k + 1023 shifted into
    place (no call, so loops that use it vectorize)."""
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        bits = builder.shl(builder.add(args[0], ir.Constant(i64, 1023)), ir.Constant(i64, 52))
        return builder.bitcast(bits, ir.DoubleType())
    return types.float64(types.int64), codegen


# _prims.exp compiled with the intrinsic pow2, inlined where a rule calls exp
exp = njit(inline="always")(pytypes.FunctionType(
    _prims.exp.__code__, {**_prims.exp.__globals__, "pow2": pow2}, "exp"))

# What every compiled row module and dispatcher calls: gemm, gemv, user, and vexp
# (rules.BLOCK_MATH)
NATIVE = {"gemm": gemm, "gemv": gemv, "user": user, "vexp": exp}
# What a map row's loops call instead of libm: they vectorize with it (exp over 65,536
# doubles: 80 against 288 us). Block rows' ``exp`` and the dispatcher's scalar cases keep
# libm's, which is faster where a loop stays scalar (a softmax along 8 elements: 102 against
# 266 us for 3,072 rows), so an exp there may differ from a map loop's in the last bit; a
# block that has a loop of exponentials alone calls ``vexp`` there (softmax, >= 64 values).
VECTOR_MATH = {"exp": exp}
assert tuple(VECTOR_MATH) == rules.LOOP_MATH
