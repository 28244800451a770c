"""The compiled versions of ``_prims``: numba intrinsics. Imported only when compiling.

``gemm`` calls BLAS through the address in the control block (``C[C_GEMM]``, cblas_dgemm
or cblas_sgemm of the BLAS numpy itself loaded; ``engine.blas`` finds it), so a kernel never
links a BLAS of its own and takes nothing but arrays and ints. ``C[C_ILP64]`` says whether
that BLAS takes 64-bit integers (numpy's bundled OpenBLAS does).
"""
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from .layout import C_GEMM, C_ILP64

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


NATIVE = {"gemm": gemm}
