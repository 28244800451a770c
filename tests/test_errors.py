"""Bad input gets a burnumba exception that names the operation or argument and the fix."""
import math
import os

import numpy as np
import pytest

import burnumba as bn


def raises(exc, fn, *args, match, **kwargs):
    with pytest.raises(exc, match=match) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, bn.BurnumbaError)
    return str(info.value)


def test_python_if_on_an_array_is_ambiguous():
    """`if` on a traced scalar is a guard (tests/test_guards.py); on an array, as in numpy,
    its truth value is ambiguous: the error names the user's line and the fixes."""
    def f(x):
        if x > 0:
            return np.sum(x)
        return -np.sum(x)
    msg = raises(bn.TracerBoolError, bn.grad(f), np.ones(3), match="ambiguous")
    assert "bnp.where" in msg
    assert "test_errors.py" in msg and "if x > 0" in msg      # points at the user's line


def test_float_of_a_differentiated_value_would_cut_its_gradient():
    def f(x):
        return x * float(np.exp(x))
    msg = raises(bn.ConcretizationError, bn.grad(f), 0.5, match="gradient")
    assert "bn.stop_gradient" in msg and "float(np.exp(x))" in msg
    raises(bn.ConcretizationError, bn.grad(lambda x: x * np.exp(x).item()), 0.5,
           match="item\\(\\).*gradient")
    # of a value that needs no gradient, float() is a guard
    g = bn.grad(lambda x: x * float(bn.stop_gradient(np.exp(x))))
    assert g(0.5) == np.exp(0.5)


def test_unsupported_numpy_function():
    msg = raises(bn.UnsupportedOpError, bn.grad(lambda x: np.sum(np.linalg.eigvals(x))),
                 np.eye(3), match="numpy.linalg.eigvals")
    assert "Supported numpy functions" in msg
    raises(bn.UnsupportedOpError, bn.grad(lambda x: np.nancumsum(x)[0]), np.ones(3),
           match="nancumsum")


def test_unsupported_ufunc_names_the_ufunc():
    msg = raises(bn.UnsupportedOpError, bn.grad(lambda x: np.spacing(x)), 0.5,
                 match="numpy.spacing")
    assert "kernels/ops.py" in msg
    raises(bn.UnsupportedOpError, bn.grad(lambda x: np.subtract.reduce(x)), np.ones(2),
           match="subtract.reduce.*supported for add")


def test_math_module_on_a_traced_value():
    """math's functions read from the module, a global or a closure variable are traced
    (test_math_calls.py); one reached through a dict is math's builtin, which asks for a
    float."""
    fns = {"exp": math.exp}
    raises(bn.ConcretizationError, bn.grad(lambda x: fns["exp"](x)), 0.5,
           match="float\\(\\).*reached another way")


def test_inplace_assignment():
    """x[i] = v is traced (tests/test_inplace.py); writes that cannot be name the fix."""
    def f(x, i):
        x[i, 0] = 1.0
        return np.sum(x)
    msg = raises(bn.InplaceError, bn.grad(f), np.ones((3, 2)), np.array([0]),
                 match="traced indices next to")
    assert "x[i, 0] = 1.0" in msg
    raises(bn.InplaceError, bn.grad(lambda x: np.sum(np.exp(x, out=np.ones(3)))), np.ones(3),
           match="out=")


def test_assigning_a_traced_value_into_a_numpy_array():
    """numpy asks float(x) and, a traced scalar having __getitem__, replaces the error by its
    own ValueError ("setting an array element with a sequence"); the trace raises burnumba's,
    naming the fix and the line, in its place."""
    def f(x):
        buf = np.zeros(2)
        seen = [buf]                 # another reference: the array cannot become traced
        buf[0] = x
        return np.sum(seen[0])
    with pytest.raises(bn.InplaceError, match="np.zeros_like") as e:
        bn.grad(f)(0.5)
    assert "buf[0] = x" in str(e.value)


def test_integer_and_complex_inputs():
    raises(bn.InputError, bn.grad(lambda x: x * 2), 3, match="Python int 3.*3.0")
    raises(bn.InputError, bn.grad(lambda x: np.sum(x)), np.arange(3), match="astype\\(float\\)")
    raises(bn.InputError, bn.grad(lambda x: x), 1 + 2j, match="complex")
    raises(bn.InputError, bn.grad(lambda x: np.sum(x)), np.ones(2, complex), match="complex")
    raises(bn.InputError, bn.grad(lambda x: x), "a", match="type str")
    raises(bn.InputError, bn.grad(lambda p: p["a"]), {"a": 1}, match="leaf 0")


def test_non_scalar_output_under_grad():
    msg = raises(bn.OutputError, bn.grad(lambda x: x * 2), np.ones(3), match="shape \\(3,\\)")
    assert "bnp.sum" in msg
    raises(bn.OutputError, bn.grad(lambda x: (x, x)), 1.0, match="tuple")
    raises(bn.OutputError, bn.grad(lambda x: x, has_aux=True), 1.0, match="pair")


def test_changed_pytree_structure_on_a_tape():
    def f(p):
        return np.sum(p["w"] ** 2)
    tape = bn.trace(f, {"w": np.ones(2)})
    tape.value_and_grad({"w": np.ones(2)})
    msg = raises(bn.PytreeError, tape.value_and_grad, {"w": np.ones(2), "b": 1.0},
                 match="structure changed")
    assert "'b'" in msg
    raises(bn.ShapeError, tape.value_and_grad, {"w": np.ones(3)}, match="shape")


def test_shape_mismatch_names_the_op_and_both_shapes():
    msg = raises(bn.ShapeError, bn.grad(lambda x, y: np.sum(x + y), argnums=(0, 1)),
                 np.ones(3), np.ones(4), match="add")
    assert "(3,)" in msg and "(4,)" in msg
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(x.reshape(4, 2))), np.ones(6),
           match="reshape.*\\(6,\\).*\\(4, 2\\)")
    raises(bn.ShapeError, bn.grad(lambda x: x[5]), np.ones(3), match="index 5")
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(np.stack([x, x[:2]]))), np.ones(3),
           match="stack")


def test_empty_reduction():
    raises(bn.ShapeError, bn.grad(lambda x: np.max(x[:0]) + x[0]), np.ones(3), match="empty")


def test_bad_axes_and_empty_axes():
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(np.sum(x, axis=2))), np.ones((2, 2)),
           match="sum.*axis 2 is out of bounds")
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(np.max(x, axis=(0, 0)))), np.ones((2, 2)),
           match="repeated axis")
    raises(bn.ShapeError, bn.grad(lambda x: np.sum(np.max(x[:, :0], axis=1))), np.ones((2, 2)),
           match="max: axis 1 of shape \\(2, 0\\) is empty")


def test_matmul_shapes_are_named():
    msg = raises(bn.ShapeError, bn.grad(lambda x, w: np.sum(x @ w), argnums=(0, 1)),
                 np.ones((3, 4)), np.ones((5, 2)), match="matmul")
    assert "(3, 4)" in msg and "(5, 2)" in msg


def test_indexing_with_a_traced_value():
    raises(bn.UnsupportedOpError, bn.grad(lambda x, i: x[i], argnums=(0, 1)),
           np.ones(3), 1.0, match="indexing with a differentiable traced value")


def test_leaked_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2

    bn.grad(f)(1.0)
    raises(bn.LeakedTracerError, bn.grad(lambda y: y + leaked[0]), 2.0, match="another trace")
    raises(bn.LeakedTracerError, lambda: leaked[0] + 1.0, match="outside")


def test_argnums_out_of_range():
    raises(bn.InputError, bn.grad(lambda x: x, argnums=3), 1.0, match="argnums")


def test_assigning_a_traced_array_into_a_numpy_array():
    def f(x):
        buf = np.zeros((2, 3))
        seen = [buf]
        buf[0] = x
        return np.sum(seen[0])
    raises(bn.InplaceError, bn.grad(f), np.ones(3), match="np.zeros_like")


# (% is numpy's remainder, a row: tests/test_ops.py)
# (// and divmod are numpy's floor_divide and remainder: tests/test_numpy_more.py)
@pytest.mark.parametrize("op", [lambda x: x & x, lambda x: ~x, lambda x: x << 1])
@pytest.mark.parametrize("arg", [np.ones(3), 1.5])
def test_untraced_operators_raise_a_burnumba_error(op, arg):
    with pytest.raises(bn.UnsupportedOpError, match="not traced") as info:
        bn.grad(lambda x: np.sum(op(x)))(arg)
    assert "test_errors.py" in str(info.value)            # points at the user's line


def test_a_boolean_output_is_refused_under_grad():
    for f in (lambda x: x > 0, lambda x: np.sum(x) >= 1.0, lambda x: True):
        with pytest.raises(bn.OutputError, match="boolean"):
            bn.grad(f)(2.0)
    y, _ = bn.vjp(lambda x: x > 0, np.array([1.0, -1.0]))    # a mask is a fine vjp output
    np.testing.assert_array_equal(y, [1.0, 0.0])


# The hierarchy docs/sharp-bits.md documents (the README's table until issue #33): every
# error is a BurnumbaError, and also the Python
# exception a caller would catch for the same problem. ConcretizationError is the exception:
# numpy swallows a TypeError raised while converting to a number (arr[0] = traced) and
# reports an unrelated ValueError, so it derives from BurnumbaError alone.
HIERARCHY = {
    "TracerBoolError": TypeError, "UnsupportedOpError": TypeError, "InplaceError": TypeError,
    "InputError": TypeError, "OutputError": TypeError, "ShapeError": ValueError,
    "PytreeError": ValueError, "CheckpointError": ValueError, "DataError": IndexError,
    "NonFiniteError": FloatingPointError, "LeakedTracerError": RuntimeError,
    "ConcurrencyError": RuntimeError, "ConcretizationError": None,
    "NjitArgumentError": TypeError, "TapeFormatError": ValueError,
    "MissingExtraError": ImportError, "GradientCheckError": AssertionError,
    "RandomSourceError": RuntimeError, "GuardError": RuntimeError,
}


@pytest.mark.parametrize("name", sorted(HIERARCHY))
def test_the_error_hierarchy_is_the_documented_one(name):
    cls = getattr(bn, name)
    assert issubclass(cls, bn.BurnumbaError)
    builtin = [b for b in cls.__mro__ if b.__module__ == "builtins"
               and b not in (Exception, BaseException, object)]
    assert builtin[:1] == ([HIERARCHY[name]] if HIERARCHY[name] else []), builtin
    page = os.path.join(os.path.dirname(__file__), "..", "docs", "sharp-bits.md")
    with open(page, encoding="utf-8") as fh:
        assert f"| `{name}` |" in fh.read()


def test_every_public_error_is_in_the_hierarchy():
    errors = {n for n in bn.__all__ if n.endswith("Error")} - {"BurnumbaError", "KernelError",
                                                               "UnsupportedMethodError"}
    assert errors == set(HIERARCHY)
    assert issubclass(bn.UnsupportedMethodError, (bn.UnsupportedOpError, AttributeError))


def test_python_protocols_on_traced_scalars_trace_or_name_the_fix():
    """math.floor / ceil / trunc are ints decided as int() is (guards); a 0-d value indexed
    by an int and a three-argument pow are burnumba errors, not a bare IndexError or
    TypeError."""
    for fn, want in ((math.floor, [1, -2]), (math.ceil, [2, -1]), (math.trunc, [1, -1])):
        g = bn.grad(lambda x: fn(x) * x)
        assert [g(1.7), g(-1.2), g(1.7)] == [want[0], want[1], want[0]]
    raises(bn.ShapeError, bn.grad(lambda x: x[0]), 1.7, match="scalar")
    raises(bn.UnsupportedOpError, bn.grad(lambda x: pow(x, 2, 3)), 1.7, match=r"\(x \*\* y\) % mod")

    def delete(x):
        del x[0]
        return np.sum(x)
    raises(bn.InplaceError, bn.grad(delete), np.ones(3), match="cannot delete")
