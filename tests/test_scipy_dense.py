"""burnumba.scipy.linalg's dense functions (inv, det, solve, cholesky, eigh, eigvalsh, svd,
svdvals, norm, block_diag): scipy's values and conventions (the triangle read, the upper
Cholesky factor, the generalized eigenproblem), gradients against central differences of
scipy's own function and against HIPS autograd's numpy.linalg where it has the function."""
import numpy as np
import pytest
import scipy.linalg as sl

import burnumba as bn
import burnumba.scipy.linalg as L
from conftest import central_diff

rng = np.random.default_rng(7)
A = rng.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
M = rng.normal(size=(4, 4))
BPD = M @ M.T + 4 * np.eye(4)
RHS = rng.normal(size=(4, 2))
W = rng.normal(size=(4, 4))


# name: (loss of burnumba's function, the same loss of scipy's, the point)
CASES = {
    "inv": (lambda a: (L.inv(a) * W).sum(), lambda a: (sl.inv(a) * W).sum(), A),
    "det": (lambda a: L.det(a), lambda a: sl.det(a), A),
    "solve": (lambda a: (L.solve(a, RHS) ** 2).sum(), lambda a: (sl.solve(a, RHS) ** 2).sum(), A),
    "solve-transposed": (lambda a: (L.solve(a, RHS[:, 0], transposed=True) ** 2).sum(),
                         lambda a: (sl.solve(a, RHS[:, 0], transposed=True) ** 2).sum(), A),
    "solve-sym-upper": (lambda a: (L.solve(a, RHS, assume_a="sym") ** 2).sum(),
                        lambda a: (sl.solve(a, RHS, assume_a="sym") ** 2).sum(),
                        SPD + np.tril(A, -1)),
    "solve-pos-lower": (lambda a: (L.solve(a, RHS, assume_a="pos", lower=True) ** 2).sum(),
                        lambda a: (sl.solve(a, RHS, assume_a="pos", lower=True) ** 2).sum(),
                        SPD + np.triu(A, 1)),
    "cholesky-upper": (lambda a: (L.cholesky(a) * W).sum(), lambda a: (sl.cholesky(a) * W).sum(),
                       SPD + np.tril(A, -1)),
    "cholesky-lower": (lambda a: (L.cholesky(a, lower=True) ** 3).sum(),
                       lambda a: (sl.cholesky(a, lower=True) ** 3).sum(), SPD + np.triu(A, 1)),
    "eigh": (lambda a: L.eigh(a)[0] @ np.arange(4.0), lambda a: sl.eigh(a)[0] @ np.arange(4.0),
             SPD + np.triu(A, 1)),
    "eigh-upper-vectors": (lambda a: (L.eigh(a, lower=False)[1] ** 2 * W).sum(),
                           lambda a: (sl.eigh(a, lower=False)[1] ** 2 * W).sum(),
                           SPD + np.tril(A, -1)),
    "eigh-generalized": (lambda a: L.eigvalsh(a, BPD) @ np.arange(4.0),
                         lambda a: sl.eigvalsh(a, BPD) @ np.arange(4.0), SPD),
    "eigh-generalized-vectors": (lambda a: (L.eigh(a, BPD)[1] ** 2 * W).sum(),
                                 lambda a: (sl.eigh(a, BPD)[1] ** 2 * W).sum(), SPD),
    "svd": (lambda a: L.svd(a)[1] @ np.arange(4.0), lambda a: sl.svd(a)[1] @ np.arange(4.0), A),
    "svdvals": (lambda a: L.svdvals(a)[0], lambda a: sl.svdvals(a)[0], A),
    "norm-2": (lambda a: L.norm(a, 2), lambda a: sl.norm(a, 2), A),
    "norm-fro-axis": (lambda a: L.norm(a, axis=0) @ np.arange(4.0),
                      lambda a: sl.norm(a, axis=0) @ np.arange(4.0), A),
    "block_diag": (lambda a: (L.block_diag(a, a[:2, :3], 2.0 * a[0], 3.0) ** 2).sum(axis=0)
                   @ np.arange(12.0),
                   lambda a: (sl.block_diag(a, a[:2, :3], 2.0 * a[0], 3.0) ** 2).sum(axis=0)
                   @ np.arange(12.0), A),
}


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_scipy(name):
    f, ref, x = CASES[name]
    value, g = bn.value_and_grad(f)(x)
    assert abs(value - ref(x)) <= 1e-13 * max(1.0, abs(ref(x)))
    np.testing.assert_allclose(g, central_diff(ref, (x,), 0), rtol=1e-6,
                               atol=1e-7 * np.abs(g).max())


AUTOGRAD = {   # the same function in HIPS autograd's numpy.linalg (numpy's conventions)
    "inv": lambda anp, a: (anp.linalg.inv(a) * W).sum(),
    "det": lambda anp, a: anp.linalg.det(a),
    "solve": lambda anp, a: (anp.linalg.solve(a, RHS) ** 2).sum(),
    "cholesky-lower": lambda anp, a: (anp.linalg.cholesky(a) ** 3).sum(),  # symmetrised
    "svdvals": lambda anp, a: anp.linalg.svd(a, compute_uv=False)[0],
    "norm-fro-axis": lambda anp, a: anp.linalg.norm(a, axis=0) @ np.arange(4.0),
}


@pytest.mark.parametrize("name", AUTOGRAD)
def test_gradients_match_autograd(name):
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp
    f, _, x = CASES[name]
    x = (x + x.T) / 2 if name == "cholesky-lower" else x
    ours, theirs = bn.grad(f)(x), autograd.grad(lambda a: AUTOGRAD[name](anp, a))(x)
    if name == "cholesky-lower":
        # autograd spreads the gradient over both triangles symmetrically; scipy's convention
        # puts the pair's sum in the triangle read
        theirs = np.tril(theirs + theirs.T) - np.diag(np.diag(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_plain_values_are_scipys_own():
    assert np.array_equal(L.cholesky(SPD), sl.cholesky(SPD))
    assert np.array_equal(L.eigh(SPD, BPD)[0], sl.eigh(SPD, BPD)[0])
    assert np.array_equal(L.block_diag(A, 1.0), sl.block_diag(A, 1.0))


def test_generalized_eigenvectors_are_b_orthonormal():
    _, v = bn.value_and_grad(lambda a: (L.eigvalsh(a, BPD).sum(), L.eigh(a, BPD)[1]),
                             has_aux=True)(SPD)[0]
    np.testing.assert_allclose(v.T @ BPD @ v, np.eye(4), atol=1e-13)


def test_clear_errors():
    with pytest.raises(bn.InputError, match="assume_a"):
        bn.grad(lambda a: L.solve(a, RHS, assume_a="banded").sum())(A)
    with pytest.raises(bn.UnsupportedOpError, match="subset_by_index"):
        bn.grad(lambda a: L.eigh(a, subset_by_index=(0, 1))[0].sum())(SPD)
    with pytest.raises(bn.UnsupportedOpError, match="type=2"):
        bn.grad(lambda a: L.eigh(a, BPD, type=2)[0].sum())(SPD)
    with pytest.raises(bn.InputError, match="at most 2-D"):
        bn.grad(lambda a: L.block_diag(a.reshape(2, 2, 4)).sum())(A)


def test_not_positive_definite_gives_nan():
    g = bn.grad(lambda a: L.cholesky(a).sum())(-np.eye(3))
    assert np.isnan(np.triu(g)[np.triu_indices(3)]).all()     # the triangle read
    assert (np.tril(g, -1) == 0).all()                         # the one scipy ignores
