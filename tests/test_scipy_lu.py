"""burnumba.scipy.linalg's LU (lu_factor, lu_solve, lu): the pivots are a decision of the
trace, guarded. Values against scipy's LAPACK, gradients against central differences of
scipy's own functions and against the solve path (autograd.scipy.linalg has no lu: its
np.linalg.solve is the same function of (a, b)), second derivatives against autograd's
slogdet, and matrices whose pivots change between calls (each call gets scipy's numbers,
through a variant of its own; a saved tape refuses the other pivots)."""
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.linalg

import burnumba as bn
from burnumba import ConcretizationError, GuardError, InputError, UnsupportedOpError
from burnumba.scipy import linalg
from conftest import central_diff

# three matrices of one shape whose partial pivoting differs: none, a swap at the first
# step, a swap at the second step only
NO_SWAP = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.25, 5.0]])
FIRST = np.array([[1.0, 1.0, 2.0], [4.0, 3.0, 0.5], [2.0, 0.25, 5.0]])
SECOND = np.array([[4.0, 1.0, 2.0], [1.0, 0.1, 0.5], [2.0, 3.0, 5.0]])
W = np.arange(1.0, 10.0).reshape(3, 3) / 7.0


def test_the_three_matrices_pivot_differently():
    pivs = [tuple(scipy.linalg.lu_factor(a)[1]) for a in (NO_SWAP, FIRST, SECOND)]
    assert len(set(pivs)) == 3, pivs


def _packed(a):
    return np.sum(linalg.lu_factor(a)[0] * W)


def _packed_ref(a):
    return float(np.sum(scipy.linalg.lu_factor(a)[0] * W))


def test_pivots_that_change_between_calls_retrace():
    """Each call gives scipy's value and central differences' gradient; the second pivot
    pattern is traced as a variant of the same signature, and the first is found again."""
    vg = bn.value_and_grad(_packed)
    for a in (NO_SWAP, FIRST, SECOND, NO_SWAP, FIRST, SECOND):
        value, g = vg(a)
        np.testing.assert_allclose(value, _packed_ref(a), rtol=1e-13)
        np.testing.assert_allclose(g, central_diff(_packed_ref, (a,), 0), rtol=1e-6, atol=1e-8)
    (variants,) = vg.variants.values()
    assert len(variants) == 3
    # one guard per factorization, whatever its size
    assert all(len(t.guards[0]) == 1 for t in variants)


def test_a_tape_refuses_other_pivots_with_the_decision_named(tmp_path):
    tape = bn.trace(_packed, NO_SWAP)
    np.testing.assert_allclose(tape(NO_SWAP), _packed_ref(NO_SWAP), rtol=1e-13)
    np.testing.assert_allclose(tape(NO_SWAP + 0.01), _packed_ref(NO_SWAP + 0.01), rtol=1e-13)
    with pytest.raises(GuardError, match="lu_factor's pivot choice") as err:
        tape(FIRST)
    assert "test_scipy_lu.py" in str(err.value)
    tape.save(tmp_path / "lu.npz")
    loaded = bn.load_tape(tmp_path / "lu.npz")
    np.testing.assert_allclose(loaded(NO_SWAP), _packed_ref(NO_SWAP), rtol=1e-13)
    with pytest.raises(GuardError, match="lu_factor's pivot choice"):
        loaded(SECOND)


def test_ties_pick_the_first_largest_row_as_lapack():
    """|a[0, 0]| == |a[2, 0]|: LAPACK keeps row 0; a tie after the pivot row is allowed, one
    before it is not (the guard is strict there)."""
    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [-2.0, 0.5, 4.0]])
    for m in (a, a[[1, 2, 0]], a[[2, 0, 1]]):
        lu, piv = bn.trace(lambda x: linalg.lu_factor(x)[0], m)(m), scipy.linalg.lu_factor(m)
        np.testing.assert_allclose(lu, piv[0], rtol=1e-14, atol=1e-15)
    vg = bn.value_and_grad(_packed)
    for m in (a, a[[2, 1, 0]], a):      # the tie's order swaps: another variant, both right
        np.testing.assert_allclose(vg(m)[0], _packed_ref(m), rtol=1e-13)


def test_piv_is_lapacks():
    for shape in ((4, 4), (5, 3), (3, 5)):
        a = np.random.default_rng(sum(shape)).normal(size=shape)
        lu, piv = bn.trace(lambda x: linalg.lu_factor(x)[1].astype(float) + 0 * x[0, 0], a)(a), \
            scipy.linalg.lu_factor(a)[1]
        np.testing.assert_array_equal(lu, piv)
        holder = {}

        def f(x):
            holder["piv"] = linalg.lu_factor(x)[1]
            return np.sum(x)
        bn.grad(f)(a)
        assert holder["piv"].dtype == np.int32
        np.testing.assert_array_equal(holder["piv"], piv)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (1, 1), (1, 3), (3, 1)])
def test_lu_matches_scipy_in_every_form(shape):
    a = np.random.default_rng(shape[0] * 7 + shape[1]).normal(size=shape)
    P, L, U = scipy.linalg.lu(a)
    p = scipy.linalg.lu(a, p_indices=True)[0]
    out = {}

    def f(x):
        out["plu"] = linalg.lu(x)
        out["pl"] = linalg.lu(x, permute_l=True)
        out["p"] = linalg.lu(x, p_indices=True)
        return np.sum(out["plu"][1]) + np.sum(out["plu"][2])
    tape = bn.trace(f, a)
    tape(a)
    values = {}
    for key in ("L", "U", "PL"):
        values[key] = bn.trace(lambda x, key=key: {
            "L": lambda: linalg.lu(x)[1], "U": lambda: linalg.lu(x)[2],
            "PL": lambda: linalg.lu(x, permute_l=True)[0]}[key](), a)(a)
    np.testing.assert_array_equal(out["plu"][0], P)
    np.testing.assert_array_equal(out["p"][0], p)
    np.testing.assert_allclose(values["L"], L, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(values["U"], U, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(values["PL"], P @ L, rtol=1e-13, atol=1e-15)


def test_lu_solve_gradients_are_the_solve_paths():
    """d/d(a, b) of <w, lu_solve(lu_factor(a), b)>: burnumba's solve row, autograd's solve
    and central differences of scipy's lu_solve agree, for both transposes."""
    rng = np.random.default_rng(3)
    a, b, w = rng.normal(size=(5, 5)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    for trans in (0, 1, 2):
        at = a.T if trans else a

        def ours(a, b):
            return np.sum(linalg.lu_solve(linalg.lu_factor(a), b, trans=trans) * w)
        got = bn.grad(ours, argnums=(0, 1))(a, b)
        via_solve = bn.grad(lambda a, b: np.sum(np.linalg.solve(a.T if trans else a, b) * w),
                            argnums=(0, 1))(a, b)
        ref = autograd.grad(lambda a, b: anp.sum(anp.linalg.solve(a.T if trans else a, b) * w),
                            (0, 1))(a, b)
        for g, s, r in zip(got, via_solve, ref):
            np.testing.assert_allclose(g, s, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
        scipy_loss = lambda a, b: float(np.sum(    # noqa: E731
            scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=trans) * w))
        np.testing.assert_allclose(got[0], central_diff(scipy_loss, (a, b), 0), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(np.linalg.solve(at, b), bn.trace(
            lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b, trans=trans), a, b)(a, b),
            rtol=1e-12)


def test_hessian_of_log_det_against_autograd():
    """log|det a| = sum log|U_ii|: its Hessian through the traced elimination (nested
    derivatives of the pivoted steps) is autograd's of slogdet, at a matrix that pivots."""
    def logdet(a):
        return np.sum(np.log(np.abs(np.diag(linalg.lu_factor(a)[0]))))
    a = FIRST + 0.3 * np.random.default_rng(5).normal(size=(3, 3))
    ours = bn.hessian(logdet)(a)
    ref = autograd.hessian(lambda a: anp.linalg.slogdet(a)[1])(a)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(bn.grad(logdet)(a), np.linalg.inv(a).T, rtol=1e-11)


def test_singular_matrix_is_scipys():
    """A zero column: no division by the zero pivot (LAPACK leaves the column), so the
    factor is scipy's, finite."""
    a = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 0.5, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = scipy.linalg.lu_factor(a)
    got = bn.trace(lambda x: linalg.lu_factor(x)[0], a)(a)
    np.testing.assert_allclose(got, want[0], rtol=1e-14)
    assert np.isfinite(bn.grad(_packed)(a)).all()


def test_traced_piv_is_guarded():
    """piv passed in as an argument (an int array: data of the tape) is read at trace time
    and guarded: another piv retraces, and gives scipy's answer."""
    rng = np.random.default_rng(9)
    b = rng.normal(size=3)

    def f(lu, piv, b):
        return np.sum(linalg.lu_solve((lu, piv), b))
    g = bn.grad(f, argnums=2)
    for a in (NO_SWAP, FIRST, SECOND, NO_SWAP):
        lu, piv = scipy.linalg.lu_factor(a)
        np.testing.assert_allclose(g(lu, piv, b), np.linalg.solve(a.T, np.ones(3)),
                                   rtol=1e-12)


def test_errors_name_the_function_and_the_fix():
    with pytest.raises(UnsupportedOpError, match="lu_factor .*shape \\(2, 3, 3\\)"):
        bn.grad(lambda a: np.sum(linalg.lu_factor(a)[0]))(np.ones((2, 3, 3)))
    with pytest.raises(InputError, match="lu_solve: piv\\[0\\] = 7"):
        bn.grad(lambda b: np.sum(linalg.lu_solve((NO_SWAP, np.array([7, 1, 2])), b)))(
            np.ones(3))
    with pytest.raises(InputError, match="lu_solve: trans"):
        bn.grad(lambda b: np.sum(linalg.lu_solve(scipy.linalg.lu_factor(NO_SWAP), b,
                                                 trans="X")))(np.ones(3))
    # scipy's own lu_factor, read from the module the function names, is ours while traced
    # (transforms/library_calls.py); reached by a computed name, it names the replacement
    np.testing.assert_array_equal(
        bn.grad(lambda a: np.sum(scipy.linalg.lu_factor(a)[0]))(NO_SWAP),
        bn.grad(lambda a: np.sum(linalg.lu_factor(a)[0]))(NO_SWAP))
    with pytest.raises(ConcretizationError, match="burnumba.scipy.linalg.lu_factor"):
        bn.grad(lambda a: np.sum(getattr(scipy.linalg, "lu_" + "factor")(a)[0]))(NO_SWAP)
