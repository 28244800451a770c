"""numpy.linalg's factorizations on stacks of (n, n) matrices, as loops: solve (LU with
partial pivoting), slogdet, cholesky and eigh (cyclic Jacobi).

The rows here join the op table in ``ops.py`` by the opcodes they declare (``opcode=``).
"""
from math import fabs, log, sqrt

import numpy

from .row import Op, Traced
from .rules import template

nan = float("nan")
inf = float("inf")


# -- linalg: the factorizations are plain loops. The kernels are compiled ahead of time and
# loaded without numba, so numba's np.linalg (LAPACK through scipy's function pointers, taken
# when numba is imported) is not available inside a row. These are the textbook algorithms,
# O(n^3) per matrix without blocking: right for the small matrices people differentiate
# (n up to a few dozen), not a LAPACK replacement. Each row keeps its work space at the end
# of its own value slice (after the result), so that no other buffer is needed; the tracer
# hands out a view of the result part only.
@template
def _lu(xa, w, n, val):
    """LU with partial pivoting of the n x n matrix at xa into the work space at w: P A = L U,
    L unit lower and U upper stored together, the row order P at w + n * n (as floats: row
    r of P A is row P[r] of A). sing: 0, or 1 at a zero pivot (exactly singular), or 2 when
    an entry is not finite; odd: the parity of the row swaps."""
    wp = w + n * n
    sing = 0
    odd = 0
    for e in range(n * n):
        val[w + e] = val[xa + e]
        if not fabs(val[xa + e]) < inf:
            sing = 2
    for r in range(n):
        val[wp + r] = r
    for k0 in range(n if sing == 0 else 0):
        piv = k0
        big = fabs(val[w + k0 * n + k0])
        for r in range(k0 + 1, n):
            if fabs(val[w + r * n + k0]) > big:
                big = fabs(val[w + r * n + k0])
                piv = r
        if piv != k0:
            odd = 1 - odd
            for e in range(n):
                sw = val[w + k0 * n + e]
                val[w + k0 * n + e] = val[w + piv * n + e]
                val[w + piv * n + e] = sw
            sw = val[wp + k0]
            val[wp + k0] = val[wp + piv]
            val[wp + piv] = sw
        if big == 0.0:
            sing = 1
        else:
            d = val[w + k0 * n + k0]
            for r in range(k0 + 1, n):
                f = val[w + r * n + k0] / d
                val[w + r * n + k0] = f
                for e in range(k0 + 1, n):
                    val[w + r * n + e] -= f * val[w + k0 * n + e]
    return sing, odd


@template
def _lu_solve(w, n, z, k, val):
    """Solve L U X = R in place, R (n x k, row-major, already in the row order P) at z."""
    for j in range(k):
        for r in range(n):
            s = val[z + r * k + j]
            for e in range(r):
                s -= val[w + r * n + e] * val[z + e * k + j]
            val[z + r * k + j] = s
        for r in range(n - 1, -1, -1):
            s = val[z + r * k + j]
            for e in range(r + 1, n):
                s -= val[w + r * n + e] * val[z + e * k + j]
            val[z + r * k + j] = s / val[w + r * n + r]
    return z


@template
def _lu_solve_t(w, n, z, k, val):
    """Solve (L U)^T V = R in place (R, n x k, at z). A^T Z = R is then Z[P[q]] = V[q]:
    A^T = U^T L^T P."""
    for j in range(k):
        for r in range(n):
            s = val[z + r * k + j]
            for e in range(r):
                s -= val[w + e * n + r] * val[z + e * k + j]
            val[z + r * k + j] = s / val[w + r * n + r]
        for r in range(n - 1, -1, -1):
            s = val[z + r * k + j]
            for e in range(r + 1, n):
                s -= val[w + e * n + r] * val[z + e * k + j]
            val[z + r * k + j] = s
    return z


@template
def _solve(i, p, P, a0, a1, off, oy):
    """solve's sizes: nb systems A (n, n) X = B (n, k); the work space after X holds LU
    (n * n), the row order (n) and a right-hand side (n * k)."""
    nb = P[p]
    n = P[p + 1]
    k = P[p + 2]
    ia = a0[i]
    ib = a1[i]
    oa = off[ia]
    ob = off[ib]
    w = oy + nb * n * k
    wp = w + n * n
    z = wp + n
    return nb, n, k, ia, ib, oa, ob, w, wp, z


def _solve_fwd(i, oy, p, P, off, a0, a1, val):
    nb, n, k, ia, ib, oa, ob, w, wp, z = _solve(i, p, P, a0, a1, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        xb = ob + bt * n * k
        xy = oy + bt * n * k
        for r in range(n):
            q = int(val[wp + r])
            for j in range(k):
                val[z + r * k + j] = val[xb + q * k + j]
        if sing == 0:
            z = _lu_solve(w, n, z, k, val)
        for e in range(n * k):
            val[xy + e] = nan if sing else val[z + e]


def _solve_bwd(i, oy, p, P, off, a0, a1, need, val, grad):
    # dB = A^-T G, dA = -dB X^T
    nb, n, k, ia, ib, oa, ob, w, wp, z = _solve(i, p, P, a0, a1, off, oy)
    for bt in range(nb if need[ia] or need[ib] else 0):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        xb = ob + bt * n * k
        xy = oy + bt * n * k
        for e in range(n * k):
            val[z + e] = grad[xy + e]
        if sing == 0:
            z = _lu_solve_t(w, n, z, k, val)
        for q in range(n):
            r = int(val[wp + q])
            for j in range(k):
                dz = nan if sing else val[z + q * k + j]
                if need[ib]:
                    grad[xb + r * k + j] += dz
                if need[ia]:
                    for e in range(n):
                        grad[xa + r * n + e] -= dz * val[xy + e * k + j]


def _solve_jvp(i, oy, p, P, off, a0, a1, need, val, grad):
    # tX = A^-1 (tB - tA X)
    nb, n, k, ia, ib, oa, ob, w, wp, z = _solve(i, p, P, a0, a1, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        xb = ob + bt * n * k
        xy = oy + bt * n * k
        for r in range(n):
            q = int(val[wp + r])
            for j in range(k):
                s = grad[xb + q * k + j] if need[ib] else 0.0
                if need[ia]:
                    for e in range(n):
                        s -= grad[xa + q * n + e] * val[xy + e * k + j]
                val[z + r * k + j] = s
        if sing == 0:
            z = _lu_solve(w, n, z, k, val)
        for e in range(n * k):
            grad[xy + e] = nan if sing else val[z + e]


@template
def _square(i, p, P, a0, off, oy):
    """A unary linalg row's sizes: nb matrices (n, n) at oa; its work space starts at w,
    which the caller sets past the result."""
    nb = P[p]
    n = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    w = oy
    return nb, n, ia, oa, w


def _slogdet_fwd(i, oy, p, P, off, a0, val):
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + 2 * nb
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        sg = -1.0 if odd else 1.0
        la = 0.0
        for r in range(n if sing == 0 else 0):
            d = val[w + r * n + r]
            if d < 0.0:
                sg = -sg
            la += log(fabs(d))
        val[oy + 2 * bt] = sg if sing == 0 else (0.0 if sing == 1 else nan)
        val[oy + 2 * bt + 1] = la if sing == 0 else (-inf if sing == 1 else nan)


def _slogdet_bwd(i, oy, p, P, off, a0, need, val, grad):
    # d log|det A| = A^-T; the sign is piecewise constant (gradient 0). A^-T is built a
    # column at a time, A^T z = e_c. A singular matrix gets NaN even at a zero upstream
    # gradient: det = sign * exp(log|det|) passes 0 there, and its true gradient (the
    # cofactors) is not 0.
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + 2 * nb
    wp = w + n * n
    z = wp + n
    k = 1
    for bt in range(nb if need[ia] else 0):
        gl = grad[oy + 2 * bt + 1]
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        for cc in range(n):
            for r in range(n):
                val[z + r] = 1.0 if r == cc else 0.0
            if sing == 0:
                z = _lu_solve_t(w, n, z, k, val)
            for q in range(n):
                r = int(val[wp + q])
                grad[xa + r * n + cc] += nan if sing else gl * val[z + q]


def _slogdet_jvp(i, oy, p, P, off, a0, val, grad):
    # t log|det A| = tr(A^-1 tA) = sum(A^-T * tA); the sign's tangent is 0
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + 2 * nb
    wp = w + n * n
    z = wp + n
    k = 1
    for bt in range(nb):
        xa = oa + bt * n * n
        sing, odd = _lu(xa, w, n, val)
        acc = 0.0
        for cc in range(n):
            for r in range(n):
                val[z + r] = 1.0 if r == cc else 0.0
            if sing == 0:
                z = _lu_solve_t(w, n, z, k, val)
            for q in range(n):
                acc += grad[xa + int(val[wp + q]) * n + cc] * val[z + q]
        grad[oy + 2 * bt] = 0.0
        grad[oy + 2 * bt + 1] = nan if sing else acc


def _cholesky_fwd(i, oy, p, P, off, a0, val):
    # Cholesky-Banachiewicz on A's lower triangle (numpy reads only that); a pivot that is
    # not positive (or NaN) makes the whole matrix NaN, where numpy raises LinAlgError
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        xy = oy + bt * n * n
        bad = 0
        for r in range(n):
            for cc in range(n):
                if cc > r:
                    val[xy + r * n + cc] = 0.0
                else:
                    s = val[xa + r * n + cc]
                    for e in range(cc):
                        s -= val[xy + r * n + e] * val[xy + cc * n + e]
                    if cc < r:
                        val[xy + r * n + cc] = s / val[xy + cc * n + cc]
                    elif s > 0.0 and s < inf:
                        val[xy + r * n + r] = sqrt(s)
                    else:
                        bad = 1
                        val[xy + r * n + r] = 1.0
        for e in range(n * n if bad else 0):
            val[xy + e] = nan


def _cholesky_bwd(i, oy, p, P, off, a0, need, val, grad):
    # Murray (arXiv:1602.07527), as HIPS autograd: S = L^-T Phi(L^T G) L^-1, Phi the lower
    # triangle with its diagonal halved; A gets the symmetric part (S + S^T) / 2
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + nb * n * n
    for bt in range(nb if need[ia] else 0):
        xa = oa + bt * n * n
        xy = oy + bt * n * n
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(r, n if cc <= r else 0):
                    s += val[xy + e * n + r] * grad[xy + e * n + cc]
                val[w + r * n + cc] = 0.5 * s if cc == r else s
        for r in range(n):
            # row r times L^-1: x L = row, by back substitution
            for cc in range(n - 1, -1, -1):
                s = val[w + r * n + cc]
                for e in range(cc + 1, n):
                    s -= val[w + r * n + e] * val[xy + e * n + cc]
                val[w + r * n + cc] = s / val[xy + cc * n + cc]
        for cc in range(n):
            # L^-T times column cc: L^T x = column, by back substitution
            for r in range(n - 1, -1, -1):
                s = val[w + r * n + cc]
                for e in range(r + 1, n):
                    s -= val[xy + e * n + r] * val[w + e * n + cc]
                val[w + r * n + cc] = s / val[xy + r * n + r]
        for r in range(n):
            for cc in range(n):
                grad[xa + r * n + cc] += 0.5 * (val[w + r * n + cc] + val[w + cc * n + r])


def _cholesky_jvp(i, oy, p, P, off, a0, val, grad):
    # tL = L Phi(L^-1 sym(tA) L^-T), sym(t) = (t + t^T) / 2: the tangent map whose adjoint
    # is the backward above
    nb, n, ia, oa, w = _square(i, p, P, a0, off, oy)
    w = oy + nb * n * n
    for bt in range(nb):
        xa = oa + bt * n * n
        xy = oy + bt * n * n
        for cc in range(n):
            # L^-1 sym(tA), column by column: forward substitution
            for r in range(n):
                s = 0.5 * (grad[xa + r * n + cc] + grad[xa + cc * n + r])
                for e in range(r):
                    s -= val[xy + r * n + e] * val[w + e * n + cc]
                val[w + r * n + cc] = s / val[xy + r * n + r]
        for r in range(n):
            # times L^-T: row x solves L x^T = row^T, forward substitution along the row
            for cc in range(n):
                s = val[w + r * n + cc]
                for e in range(cc):
                    s -= val[xy + cc * n + e] * val[w + r * n + e]
                val[w + r * n + cc] = s / val[xy + cc * n + cc]
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(cc, r + 1):
                    s += val[xy + r * n + e] * val[w + e * n + cc] * (0.5 if e == cc else 1.0)
                grad[xy + r * n + cc] = s


@template
def _eigh(i, p, P, a0, off, oy):
    """eigh's sizes: nb matrices (n, n); the output is, per matrix, the n eigenvalues then
    the (n, n) eigenvectors (columns); two (n, n) work matrices follow at w and w2."""
    nb = P[p]
    n = P[p + 1]
    ia = a0[i]
    oa = off[ia]
    w = oy + nb * (n + n * n)
    w2 = w + n * n
    return nb, n, ia, oa, w, w2


def _eigh_fwd(i, oy, c, p, P, off, a0, val):
    # cyclic Jacobi on the symmetric matrix of A's lower triangle (numpy's UPLO='L'; the
    # front end transposes for 'U'): rotations in each plane (r, q) until the off-diagonal
    # sum of squares is at most c times the diagonal's (c = eps^2 of the dtype), at most 60
    # sweeps. Eigenvalues ascending, as numpy; each eigenvector is normalised so that its
    # entry of largest magnitude is positive (LAPACK's signs are arbitrary).
    nb, n, ia, oa, w, w2 = _eigh(i, p, P, a0, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        xw = oy + bt * (n + n * n)
        xu = xw + n
        bad = 0
        for r in range(n):
            for cc in range(n):
                v = val[xa + r * n + cc] if cc <= r else val[xa + cc * n + r]
                if not fabs(v) < inf:
                    bad = 1
                val[w + r * n + cc] = v
                val[xu + r * n + cc] = 1.0 if r == cc else 0.0
        for sweep in range(60 if bad == 0 else 0):
            od = 0.0
            dg = 0.0
            for r in range(n):
                for cc in range(n):
                    v = val[w + r * n + cc]
                    if r == cc:
                        dg += v * v
                    else:
                        od += v * v
            if od <= c * dg:
                break
            for r in range(n - 1):
                for q in range(r + 1, n):
                    apq = val[w + r * n + q]
                    if apq != 0.0:
                        th = (val[w + q * n + q] - val[w + r * n + r]) / (2.0 * apq)
                        t = 1.0 / (fabs(th) + sqrt(th * th + 1.0))
                        if th < 0.0:
                            t = -t
                        cs = 1.0 / sqrt(t * t + 1.0)
                        sn = t * cs
                        for e in range(n):
                            x1 = val[w + e * n + r]
                            x2 = val[w + e * n + q]
                            val[w + e * n + r] = cs * x1 - sn * x2
                            val[w + e * n + q] = sn * x1 + cs * x2
                        for e in range(n):
                            x1 = val[w + r * n + e]
                            x2 = val[w + q * n + e]
                            val[w + r * n + e] = cs * x1 - sn * x2
                            val[w + q * n + e] = sn * x1 + cs * x2
                        for e in range(n):
                            x1 = val[xu + e * n + r]
                            x2 = val[xu + e * n + q]
                            val[xu + e * n + r] = cs * x1 - sn * x2
                            val[xu + e * n + q] = sn * x1 + cs * x2
                        val[w + r * n + q] = 0.0
                        val[w + q * n + r] = 0.0
        for r in range(n):
            val[xw + r] = val[w + r * n + r]
        for r in range(n):
            m = r
            for q in range(r + 1, n):
                if val[xw + q] < val[xw + m]:
                    m = q
            if m != r:
                sw = val[xw + r]
                val[xw + r] = val[xw + m]
                val[xw + m] = sw
                for e in range(n):
                    sw = val[xu + e * n + r]
                    val[xu + e * n + r] = val[xu + e * n + m]
                    val[xu + e * n + m] = sw
        for cc in range(n):
            m = 0
            for r in range(1, n):
                if fabs(val[xu + r * n + cc]) > fabs(val[xu + m * n + cc]):
                    m = r
            if val[xu + m * n + cc] < 0.0:
                for r in range(n):
                    val[xu + r * n + cc] = -val[xu + r * n + cc]
        for e in range(n + n * n if bad else 0):
            val[xw + e] = nan


def _eigh_bwd(i, oy, p, P, off, a0, need, val, grad):
    # HIPS autograd's rule: T = U (diag(gw) + F o (U^T gU)) U^T, F[r, q] = 1 / (w[q] - w[r])
    # off the diagonal, the eigenvector term only when gU is not all zero (so a function
    # of the eigenvalues alone has a gradient at repeated eigenvalues), and a zero entry of
    # U^T gU stays 0 (two repeated eigenvalues whose vectors get no gradient, as svd's null
    # space, give no NaN); otherwise repeated eigenvalues give inf / NaN, as autograd. A's
    # lower triangle was read, so it gets T's diagonal and T[r, q] + T[q, r] below it
    nb, n, ia, oa, w, w2 = _eigh(i, p, P, a0, off, oy)
    for bt in range(nb if need[ia] else 0):
        xa = oa + bt * n * n
        xw = oy + bt * (n + n * n)
        xu = xw + n
        vecs = 0
        for e in range(n * n):
            if grad[xu + e] != 0.0:
                vecs = 1
        for r in range(n):
            for cc in range(n):
                s = 0.0
                if r == cc:
                    s = grad[xw + r]
                elif vecs:
                    for e in range(n):
                        s += val[xu + e * n + r] * grad[xu + e * n + cc]
                    if s != 0.0:
                        s = s / (val[xw + cc] - val[xw + r])
                val[w + r * n + cc] = s
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    s += val[xu + r * n + e] * val[w + e * n + cc]
                val[w2 + r * n + cc] = s
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    s += val[w2 + r * n + e] * val[xu + cc * n + e]
                val[w + r * n + cc] = s
        for r in range(n):
            for cc in range(r + 1):
                grad[xa + r * n + cc] += val[w + r * n + r] if r == cc else (
                    val[w + r * n + cc] + val[w + cc * n + r])


def _eigh_jvp(i, oy, p, P, off, a0, val, grad):
    # M = U^T tS U, tS the symmetric tangent of A's lower triangle: tw = diag(M),
    # tU = U (F o M) with F as in the backward, 0 on the diagonal and between equal
    # eigenvalues (any rotation inside their eigenspace is a valid tangent: this one
    # leaves it still, so that svd's null space, a repeated 0, has finite tangents)
    nb, n, ia, oa, w, w2 = _eigh(i, p, P, a0, off, oy)
    for bt in range(nb):
        xa = oa + bt * n * n
        xw = oy + bt * (n + n * n)
        xu = xw + n
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    ts = grad[xa + r * n + e] if e <= r else grad[xa + e * n + r]
                    s += ts * val[xu + e * n + cc]
                val[w2 + r * n + cc] = s
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    s += val[xu + e * n + r] * val[w2 + e * n + cc]
                val[w + r * n + cc] = s
        for r in range(n):
            grad[xw + r] = val[w + r * n + r]
        for r in range(n):
            for cc in range(n):
                s = 0.0
                for e in range(n):
                    if val[xw + cc] != val[xw + e]:
                        s += val[xu + r * n + e] * val[w + e * n + cc] / (
                            val[xw + cc] - val[xw + e])
                grad[xu + r * n + cc] = s


# -- the shape rules (layout "matrices", row.VIEWS): from the node's parameters, (the
# operands' shapes, the result's shape, the work space after the result in the node's slice)
def _solve_shapes(nb, n, k):
    if min(nb, n, k) < 1:
        return None
    return ((nb, n, n), (nb, n, k)), (nb, n, k), n * n + n + n * k


def _slogdet_shapes(nb, n):
    if min(nb, n) < 1:
        return None
    return ((nb, n, n),), (nb, 2), n * n + 2 * n          # (sign, log|det|) per matrix


def _cholesky_shapes(nb, n):
    if min(nb, n) < 1:
        return None
    return ((nb, n, n),), (nb, n, n), n * n


def _eigh_shapes(nb, n):
    if min(nb, n) < 1:
        return None
    return ((nb, n, n),), (nb, n + n * n), 2 * n * n      # per matrix: w (n), then U (n, n)


# -- the rules in numpy's names (``Traced``), the same formulas as the kernels' bwd / jvp:
# their reference (with numpy) and their derivative as traced ops (with burnumba.numpy).
def _solve_value(np, A, B, c):
    return np.linalg.solve(A, B)


def _solve_vjp(np, A, B, X, G, c, need=(True, True)):
    dB = np.linalg.solve(np.swapaxes(A, 1, 2), G)                # A^-T G
    dA = -np.matmul(dB, np.swapaxes(X, 1, 2)) if need[0] else None
    return dA, dB


def _solve_tangent(np, A, B, X, tA, tB, c):
    r = tB
    if tA is not None:
        term = -np.matmul(tA, X)
        r = term if r is None else r + term
    return np.linalg.solve(A, r)                                 # A^-1 (tB - tA X)


def _inv_t(np, A):
    """A^-T of the stack A (nb, n, n)."""
    return np.swapaxes(np.linalg.inv(A), 1, 2)


def _slogdet_value(np, A, c):
    sign, logdet = np.linalg.slogdet(A)
    return np.stack([sign, logdet], axis=1)


def _slogdet_vjp(np, A, y, g, c):
    # the sign has gradient 0; d log|det A| = A^-T
    return np.reshape(g[:, 1], (A.shape[0], 1, 1)) * _inv_t(np, A)


def _slogdet_tangent(np, A, y, t, c):
    tl = np.sum(_inv_t(np, A) * t, axis=(1, 2))
    return np.stack([numpy.zeros(A.shape[0]), tl], axis=1)


def _phi(n):
    """Murray's Phi as a mask: the lower triangle, its diagonal halved."""
    return numpy.tril(numpy.ones((n, n))) - 0.5 * numpy.eye(n)


def _cholesky_value(np, A, c):
    return np.linalg.cholesky(A)


def _cholesky_vjp(np, A, L, G, c):
    n = A.shape[1]
    Lt = np.swapaxes(L, 1, 2)
    Y = np.linalg.solve(Lt, np.matmul(Lt, G) * _phi(n))         # L^-T Phi(L^T G)
    S = np.swapaxes(np.linalg.solve(Lt, np.swapaxes(Y, 1, 2)), 1, 2)   # ... L^-1
    return 0.5 * (S + np.swapaxes(S, 1, 2))


def _cholesky_tangent(np, A, L, t, c):
    n = A.shape[1]
    W = np.linalg.solve(L, 0.5 * (t + np.swapaxes(t, 1, 2)))     # L^-1 sym(tA)
    X = np.swapaxes(np.linalg.solve(L, np.swapaxes(W, 1, 2)), 1, 2)    # ... L^-T
    return np.matmul(L, X * _phi(n))


def _eigh_value(np, A, c):
    w, U = np.linalg.eigh(A)
    # each eigenvector's entry of largest magnitude made positive, as the kernel does
    # (LAPACK's signs are arbitrary); the sign is a constant, no derivative runs through it
    big = np.abs(U) == np.max(np.abs(U), axis=1, keepdims=True)
    U = U * np.sign(np.sum(np.where(big, U, 0.0), axis=1, keepdims=True))
    return np.concatenate([w, np.reshape(U, (A.shape[0], -1))], axis=1)


def _eigh_parts(np, A, y):
    nb, n = A.shape[0], A.shape[1]
    w, U = y[:, :n], np.reshape(y[:, n:], (nb, n, n))
    # F[r, q] = 1 / (w[q] - w[r]) off the diagonal, 0 on it and between equal eigenvalues
    # (the kernels' rules say why); ``tie`` marks those equal pairs
    den = np.reshape(w, (nb, 1, n)) - np.reshape(w, (nb, n, 1))
    tie = np.where(den == 0.0, 1.0, 0.0) * (1.0 - numpy.eye(n))
    F = np.where(den == 0.0, 0.0, 1.0 / np.where(den == 0.0, 1.0, den))
    return nb, n, U, F, tie


def _eigh_vjp(np, A, y, g, c):
    nb, n, U, F, tie = _eigh_parts(np, A, y)
    gw, gU = g[:, :n], np.reshape(g[:, n:], (nb, n, n))
    Ut = np.swapaxes(U, 1, 2)
    K = np.matmul(Ut, gU)
    # F o K, and NaN where equal eigenvalues meet a nonzero K (the kernel divides by 0
    # there, as autograd); the NaN is a constant branch, so no derivative runs through it
    bad = tie * np.where(K != 0.0, 1.0, 0.0)
    inner = (F * K + np.where(bad != 0.0, numpy.nan, 0.0)
             + np.reshape(gw, (nb, n, 1)) * numpy.eye(n))
    T = np.matmul(np.matmul(U, inner), Ut)
    return (T * numpy.eye(n)
            + (T + np.swapaxes(T, 1, 2)) * numpy.tril(numpy.ones((n, n)), -1))


def _eigh_tangent(np, A, y, t, c):
    nb, n, U, F, tie = _eigh_parts(np, A, y)
    lower = numpy.tril(numpy.ones((n, n)), -1)
    tS = t * numpy.eye(n) + t * lower + np.swapaxes(t * lower, 1, 2)
    M = np.matmul(np.matmul(np.swapaxes(U, 1, 2), tS), U)
    tw = np.sum(M * numpy.eye(n), axis=2)
    tU = np.matmul(U, F * M)
    return np.concatenate([tw, np.reshape(tU, (nb, n * n))], axis=1)


ROWS = (
    # -- linalg: numpy.linalg's factorizations on stacks of (n, n) matrices, as loops (see
    # the rules above); a singular or non-finite input gives NaN where numpy raises
    # LinAlgError (debug_nans names the node). The result is followed by the row's work
    # space in its value slice; the front end (burnumba/numpy/linalg.py) views the result.
    Op("solve", 2, "block", doc="X = A^-1 B for nb systems (n, n) (n, k); LU with partial "
       "pivoting. P = nb, n, k. Singular or non-finite A: X is NaN",
       fwd=_solve_fwd, bwd=_solve_bwd, jvp=_solve_jvp, layout="matrices",
       shapes=_solve_shapes,
       traced=Traced(_solve_value, _solve_vjp, _solve_tangent), opcode=94),
    Op("slogdet", 1, "block", doc="(sign, log|det A|) of nb matrices (n, n), by LU; "
       "singular: (0, -inf) as numpy, with a NaN gradient; non-finite: NaN. P = nb, n",
       fwd=_slogdet_fwd, bwd=_slogdet_bwd, jvp=_slogdet_jvp, layout="matrices",
       shapes=_slogdet_shapes,
       traced=Traced(_slogdet_value, _slogdet_vjp, _slogdet_tangent), opcode=95),
    Op("cholesky", 1, "block", doc="the lower Cholesky factor of nb matrices (n, n) (their "
       "lower triangle read); not positive definite: NaN. P = nb, n",
       fwd=_cholesky_fwd, bwd=_cholesky_bwd, jvp=_cholesky_jvp, layout="matrices",
       shapes=_cholesky_shapes,
       traced=Traced(_cholesky_value, _cholesky_vjp, _cholesky_tangent), opcode=96),
    Op("eigh", 1, "block", doc="eigenvalues (ascending) and eigenvectors of nb symmetric "
       "matrices (n, n) (their lower triangle read), cyclic Jacobi; c = eps^2 of the "
       "dtype. P = nb, n",
       fwd=_eigh_fwd, bwd=_eigh_bwd, jvp=_eigh_jvp, layout="matrices",
       shapes=_eigh_shapes,
       traced=Traced(_eigh_value, _eigh_vjp, _eigh_tangent), opcode=97),
)
