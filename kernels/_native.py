"""The compiled versions of ``_prims``: numba intrinsics. Imported only when compiling.

``gemm`` calls BLAS through the address in the control block (``C[C_GEMM]``, cblas_dgemm
or cblas_sgemm of the BLAS numpy itself loaded; ``engine.blas`` finds it), and ``gemv``
through ``C[C_GEMV]`` (cblas_dgemv or cblas_sgemv of the same BLAS), so a kernel never
links a BLAS of its own and takes nothing but arrays and ints. ``C[C_ILP64]`` says whether
that BLAS takes 64-bit integers (numpy's bundled OpenBLAS does).
"""
import types as pytypes

from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from . import _prims
from .layout import C_GEMM, C_GEMV, C_ILP64

CblasRowMajor, CblasNoTrans, CblasTrans = 101, 111, 112


@intrinsic
def gemm(typingctx, C, ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy):
    """cblas_?gemm(RowMajor, op(ta), op(tb), M, N, K, 1, A + oa, lda, B + ob, ldb, beta,
    Y + oy, ldy), with A, B, Y pointers of the tape's float type."""
    dtype = A.dtype
    sig = types.void(C, ta, tb, M, N, K, A, oa, lda, B, ob, ldb, beta, Y, oy, ldy)

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        as64 = [context.cast(builder, v, t, types.int64) if isinstance(t, types.Integer) else v
                for v, t in zip(args, signature.args)]
        (c, ta, tb, M, N, K, a, oa, lda, b, ob, ldb, _, y, oy, ldy) = as64
        real = context.get_value_type(dtype)
        beta = context.cast(builder, args[12], signature.args[12], dtype)
        address = builder.load(builder.gep(c, [ir.Constant(i64, C_GEMM)]))
        ilp64 = builder.load(builder.gep(c, [ir.Constant(i64, C_ILP64)]))
        pa, pb, py = builder.gep(a, [oa]), builder.gep(b, [ob]), builder.gep(y, [oy])

        def flag(t):
            nonzero = builder.icmp_signed("!=", t, ir.Constant(i64, 0))
            return builder.select(nonzero, ir.Constant(i32, CblasTrans),
                                  ir.Constant(i32, CblasNoTrans))

        def call(blasint):
            fnty = ir.FunctionType(ir.VoidType(), [
                i32, i32, i32, blasint, blasint, blasint, real, real.as_pointer(), blasint,
                real.as_pointer(), blasint, real, real.as_pointer(), blasint])
            fn = builder.inttoptr(address, fnty.as_pointer())

            def n(v):
                return builder.trunc(v, blasint) if blasint.width < 64 else v
            builder.call(fn, [ir.Constant(i32, CblasRowMajor), flag(ta), flag(tb), n(M), n(N),
                              n(K), ir.Constant(real, 1.0), pa, n(lda), pb, n(ldb), beta, py,
                              n(ldy)])

        wide = builder.icmp_signed("!=", ilp64, ir.Constant(i64, 0))
        with builder.if_else(wide) as (then, otherwise):
            with then:
                call(i64)
            with otherwise:
                call(i32)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def gemv(typingctx, C, ta, M, N, A, oa, lda, X, ox, beta, Y, oy):
    """cblas_?gemv(RowMajor, op(ta), M, N, 1, A + oa, lda, X + ox, 1, beta, Y + oy, 1):
    Y = op(A) @ X + beta * Y for the M x N matrix A (op(A) = A^T when ta), unit strides."""
    dtype = A.dtype
    sig = types.void(C, ta, M, N, A, oa, lda, X, ox, beta, Y, oy)

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        as64 = [context.cast(builder, v, t, types.int64) if isinstance(t, types.Integer) else v
                for v, t in zip(args, signature.args)]
        (c, ta, M, N, a, oa, lda, x, ox, _, y, oy) = as64
        real = context.get_value_type(dtype)
        beta = context.cast(builder, args[9], signature.args[9], dtype)
        address = builder.load(builder.gep(c, [ir.Constant(i64, C_GEMV)]))
        ilp64 = builder.load(builder.gep(c, [ir.Constant(i64, C_ILP64)]))
        pa, px, py = builder.gep(a, [oa]), builder.gep(x, [ox]), builder.gep(y, [oy])
        trans = builder.select(builder.icmp_signed("!=", ta, ir.Constant(i64, 0)),
                               ir.Constant(i32, CblasTrans), ir.Constant(i32, CblasNoTrans))

        def call(blasint):
            fnty = ir.FunctionType(ir.VoidType(), [
                i32, i32, blasint, blasint, real, real.as_pointer(), blasint,
                real.as_pointer(), blasint, real, real.as_pointer(), blasint])
            fn = builder.inttoptr(address, fnty.as_pointer())

            def n(v):
                return builder.trunc(v, blasint) if blasint.width < 64 else v
            one = ir.Constant(blasint, 1)
            builder.call(fn, [ir.Constant(i32, CblasRowMajor), trans, n(M), n(N),
                              ir.Constant(real, 1.0), pa, n(lda), px, one, beta, py, one])

        wide = builder.icmp_signed("!=", ilp64, ir.Constant(i64, 0))
        with builder.if_else(wide) as (then, otherwise):
            with then:
                call(i64)
            with otherwise:
                call(i32)
        return context.get_dummy_value()

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

# What every compiled row module and dispatcher calls: gemm, gemv, and vexp
# (rules.BLOCK_MATH)
NATIVE = {"gemm": gemm, "gemv": gemv, "vexp": exp}
# What a map row's loops call instead of libm: they vectorize with it (exp over 65,536
# doubles: 80 against 288 us). Block rows' ``exp`` and the dispatcher's scalar cases keep
# libm's, which is faster where a loop stays scalar (a softmax along 8 elements: 102 against
# 266 us for 3,072 rows), so an exp there may differ from a map loop's in the last bit; a
# block that has a loop of exponentials alone calls ``vexp`` there (softmax, >= 64 values).
VECTOR_MATH = {"exp": exp}
