"""Python's math functions of traced scalars (transforms/math_calls.py, #30): values as
math's, gradients against autograd's numpy functions, math's errors where math raises, and
math's own functions for everyone but the tracing thread's code."""
import math
import threading
import types

import autograd
import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import pytest

import burnumba as bn
from burnumba.transforms import math_calls

# math's name: (autograd's function, the domain the points are drawn from)
UNARY = {
    "exp": (anp.exp, (-2, 2)), "expm1": (anp.expm1, (-2, 2)), "log1p": (anp.log1p, (-0.5, 2)),
    "log2": (anp.log2, (0.2, 3)), "log10": (anp.log10, (0.2, 3)), "sqrt": (anp.sqrt, (0.2, 3)),
    "sin": (anp.sin, (-3, 3)), "cos": (anp.cos, (-3, 3)), "tan": (anp.tan, (-1.2, 1.2)),
    "asin": (anp.arcsin, (-0.9, 0.9)), "acos": (anp.arccos, (-0.9, 0.9)),
    "atan": (anp.arctan, (-3, 3)), "sinh": (anp.sinh, (-2, 2)), "cosh": (anp.cosh, (-2, 2)),
    "tanh": (anp.tanh, (-2, 2)), "asinh": (anp.arcsinh, (-2, 2)),
    "acosh": (anp.arccosh, (1.1, 3)), "atanh": (anp.arctanh, (-0.9, 0.9)),
    "fabs": (anp.fabs, (0.1, 2)), "degrees": (anp.degrees, (-2, 2)),
    "radians": (anp.radians, (-2, 2)),
    "cbrt": (lambda t: t ** (1 / 3), (0.2, 3)),      # autograd has no rule for cbrt
    "exp2": (anp.exp2, (-2, 2)), "erf": (asp.erf, (-2, 2)), "erfc": (asp.erfc, (-2, 2)),
    "gamma": (asp.gamma, (0.3, 3)), "lgamma": (asp.gammaln, (0.3, 3)),
    "log": (anp.log, (0.2, 3)),
}
BINARY = {
    "atan2": (anp.arctan2, (-2, 2), (0.5, 2)), "pow": (anp.power, (0.3, 2), (-1.5, 2.5)),
    "hypot": (lambda x, y: anp.sqrt(x * x + y * y), (-2, 2), (0.5, 2)),
    "copysign": (lambda x, y: anp.abs(x) * anp.sign(y), (0.2, 2), (0.5, 2)),
    "fmod": (lambda x, y: x - y * anp.trunc(x / y), (0.2, 3), (0.7, 0.9)),
}


def test_the_table_covers_every_stand_in():
    made = set(math_calls._TABLE[math])
    assert made == set(UNARY) | set(BINARY) | {"isnan", "isinf", "isfinite", "isclose",
                                               "fsum"}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_and_gradients(name):
    ref, (lo, hi) = UNARY[name]
    fn = getattr(math, name)

    def f(x):
        return getattr(math, name)(x) * x      # read from the module during the trace

    rng = np.random.default_rng(sorted(UNARY).index(name))
    vg = bn.value_and_grad(f)
    for x in rng.uniform(lo, hi, 4):
        value, g = vg(float(x))
        assert value == pytest.approx(fn(x) * x, rel=1e-13, abs=1e-15)
        assert g == pytest.approx(autograd.grad(lambda t: ref(t) * t)(float(x)), rel=1e-9)
        h = 1e-6
        assert g == pytest.approx((f(x + h) - f(x - h)) / (2 * h), rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_and_gradients(name):
    ref, (lo, hi), (lo2, hi2) = BINARY[name]
    fn = getattr(math, name)
    rng = np.random.default_rng(len(name))
    vg = bn.value_and_grad(lambda x, y: getattr(math, name)(x, y), argnums=(0, 1))
    for x, y in zip(rng.uniform(lo, hi, 4), rng.uniform(lo2, hi2, 4)):
        value, (gx, gy) = vg(float(x), float(y))
        assert value == pytest.approx(fn(x, y), rel=1e-13, abs=1e-15)
        want = autograd.grad(lambda a, b: ref(a, b), argnum=(0, 1))(float(x), float(y))
        assert (gx, gy) == pytest.approx([float(w) for w in want], rel=1e-9, abs=1e-15)


def test_log_with_a_base():
    g = bn.grad(lambda x: math.log(x, 3.0) + math.log(8.0, x))
    x = 1.7
    assert g(x) == pytest.approx(1 / (x * math.log(3.0)) - math.log(8.0) / (x * math.log(x) ** 2),
                                 rel=1e-12)


@pytest.mark.parametrize("name,bad,error", [
    ("log", 0.0, ValueError), ("log", -1.0, ValueError), ("sqrt", -1.0, ValueError),
    ("asin", 2.0, ValueError), ("acosh", 0.5, ValueError), ("exp", 1000.0, OverflowError),
    ("lgamma", 0.0, ValueError), ("sin", math.inf, ValueError)])
def test_math_raises_where_math_raises_also_on_a_replay(name, bad, error):
    """A tape traced where the result is finite replays while it stays finite; where math
    raises, the call raises math's own error, as the plain program would."""
    fn = getattr(math, name)

    def f(x):
        return getattr(math, name)(x) * 2.0
    g = bn.grad(f)
    good = 1.5 if name != "asin" else 0.5
    assert np.isfinite(g(good))
    with pytest.raises(error, match=str(pytest.raises(error, fn, bad).value)):
        g(bad)
    assert g(good) == bn.grad(f)(good)


def test_where_math_gives_an_infinity_so_does_the_tape():
    g = bn.value_and_grad(lambda x: math.exp(x))
    assert g(1.0) == (pytest.approx(math.e), pytest.approx(math.e))
    assert g(math.inf) == (math.inf, math.inf)
    assert g(1.0) == (pytest.approx(math.e), pytest.approx(math.e))


def test_decisions_and_reductions():
    def f(x):
        if math.isfinite(x) and not math.isnan(x) and not math.isinf(x):
            s = math.fsum([x, x * x, 1.0]) + np.prod([x, x, 2.0])
            return s if math.isclose(x, 1.0) else 3 * s
        return 0.0 * x
    g = bn.grad(f)
    assert g(1.0) == pytest.approx(1 + 2 + 4)
    assert g(2.0) == pytest.approx(3 * (1 + 4 + 8))
    assert g(1.0 + 1e-12) == pytest.approx(1 + 2 + 4, rel=1e-9)    # isclose's tolerance


def test_plain_numbers_inside_a_trace_are_maths():
    seen = {}

    def f(x):
        seen["value"] = math.exp(2.0)
        seen["sum"] = math.fsum([0.1] * 10)
        return x * math.sqrt(4.0)
    assert bn.grad(f)(3.0) == 2.0
    assert type(seen["value"]) is float and seen["value"] == math.exp(2.0)
    assert seen["sum"] == 1.0                      # fsum's exact rounding, math's own


def test_under_vmap_jvp_and_jacobian():
    x = np.array([0.1, 0.2, 0.3])
    got = bn.vmap(bn.grad(lambda t: math.exp(t) * math.cos(t)))(x)
    np.testing.assert_allclose(got, np.exp(x) * (np.cos(x) - np.sin(x)), rtol=1e-13)
    _, tangent = bn.jvp(lambda t: math.sin(t) ** 2, (0.4,), (1.0,))
    assert tangent == pytest.approx(math.sin(0.8), rel=1e-13)
    jac = bn.jacobian(lambda v: np.stack([math.sin(v[0]) * v[1], math.cos(v[1])]))(
        np.array([0.5, 0.2]))
    np.testing.assert_allclose(jac, [[math.cos(0.5) * 0.2, math.sin(0.5)],
                                     [0.0, -math.sin(0.2)]], rtol=1e-13)


def test_an_array_is_refused_with_the_fix():
    with pytest.raises(bn.ConcretizationError, match=r"math.exp of a traced array of shape "
                                                     r"\(3,\).*np.exp"):
        bn.grad(lambda x: math.exp(x) * 1.0)(np.ones(3))
    # one element, as numpy converts it
    assert bn.grad(lambda x: math.exp(x) * 1.0)(np.ones(1)) == pytest.approx([math.e])


def test_a_name_bound_before_the_trace_is_traced_one_in_a_dict_is_refused():
    from math import exp, sqrt                 # closure variables of the lambda
    g = bn.grad(lambda x: exp(x) * sqrt(x) + GLOBAL_LOG(x))
    assert g(2.0) == pytest.approx(math.exp(2.0) * (math.sqrt(2.0) + 0.25 / math.sqrt(2.0) * 2)
                                   + 0.5, rel=1e-13)
    assert exp is math.__dict__["exp"] and GLOBAL_LOG is math.__dict__["log"]
    held = {"exp": math.exp}
    with pytest.raises(bn.ConcretizationError, match=r"write math.exp\(x\) or np.exp\(x\)"):
        bn.grad(lambda x: held["exp"](x))(1.0)


GLOBAL_LOG = math.log                            # a global of this module, bound at import


def test_other_threads_and_libraries_get_maths_own():
    """While one thread traces, another reads math's builtins (and so does the tracing
    thread's library code); after the trace math's class is the module type again."""
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def other():
        inside.wait(10)
        seen["exp"] = math.exp
        seen["value"] = math.exp(1.0)
        outside.set()

    def f(x):
        inside.set()
        outside.wait(10)
        seen["traced_class"] = type(math)
        seen["numpy's"] = np.exp is np.exp and math.exp is not seen["exp"]
        return math.exp(x)

    t = threading.Thread(target=other)
    t.start()
    assert bn.grad(f)(0.5) == pytest.approx(math.exp(0.5))
    t.join()
    assert seen["exp"] is math.__dict__["exp"] and isinstance(seen["exp"],
                                                              types.BuiltinFunctionType)
    assert seen["value"] == math.e
    assert seen["traced_class"] is not types.ModuleType and seen["numpy's"]
    assert type(math) is types.ModuleType and math.exp is math.__dict__["exp"]


def test_a_module_imported_during_a_trace_binds_maths_own(tmp_path, monkeypatch):
    """``from math import exp`` at the top of a module first imported inside a traced
    function (an import, not the traced code) binds math's builtin: no stand-in outlives
    the trace."""
    (tmp_path / "lazy_math_user.py").write_text(
        "from math import exp\nimport numpy as np\nfrom numpy import asarray\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def f(x):
        import lazy_math_user
        f.module = lazy_math_user
        return math.exp(x)
    assert bn.grad(f)(0.0) == 1.0
    assert f.module.exp is math.__dict__["exp"]
    assert f.module.asarray is np.__dict__["asarray"]
