"""Differential fuzz of Python control flow: random programs with ``if`` / ``while`` / ``for`` on
traced values and int counters, burnumba against HIPS autograd.

hypothesis draws a small program over a differentiated float ``x`` and an int ``n`` (data: a
tape input, not part of the signature): 1-5 statements, each an assignment, an ``if`` /
``else`` on a comparison of traced values (alone, or in np.any / np.all), a ``while`` loop
bounded by an int counter, a ``for`` over ``range(n)`` or ``range(int(...))`` of a traced
expression (``to_int``: int(), which autograd refuses on its boxes, so its run unboxes first),
or an update that uses a counter in arithmetic. The same source runs with ``np`` bound to numpy
(traced by burnumba) and to autograd.numpy. Each program is compared at several inputs that
take different branches (values and gradients, rtol 1e-9 in float64) under bn.value_and_grad,
bn.jvp and bn.vmap of bn.grad (lanes on different branches).

The rows are few (add, subtract, multiply, sin, cos, tanh, the comparisons, max_axis), and
one warm-up program uses them all first, so every program's tape runs on one kernel, already built.
BURNUMBA_GUARD_FUZZ=5000 runs more programs.
"""
import os

import numpy as np
import pytest

import burnumba as bn

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

PROGRAMS = int(os.environ.get("BURNUMBA_GUARD_FUZZ", "1000"))
XS = (-1.7, -0.45, 0.3, 1.6)             # inputs on different sides of the thresholds
NS = (0, 3)                              # trip counts
RTOL, ATOL = 1e-9, 1e-12

UNARY = ("np.sin", "np.cos", "np.tanh")
COMPARE = (">", "<", ">=", "<=")


@st.composite
def expressions(draw, names):
    """A small traced expression of the live names (s, x, and counters)."""
    a = draw(st.sampled_from(names))
    kind = draw(st.integers(0, 4))
    c = draw(st.sampled_from((0.5, -0.75, 1.25, 2.0, 0.3)))
    if kind == 0:
        return f"{draw(st.sampled_from(UNARY))}({a})"
    if kind == 1:
        b = draw(st.sampled_from(names))
        return f"{a} * {b} * {c}"
    if kind == 2:
        return f"{a} + {c} * {draw(st.sampled_from(UNARY))}(x)"
    if kind == 3:
        return f"{a} - {c} * x"
    return f"{draw(st.sampled_from(UNARY))}({a} * {c}) + x"


@st.composite
def programs(draw):
    lines, names, counters = [], ["s", "x"], 0
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.integers(0, 5))
        e1 = draw(expressions(names))
        if kind == 0:
            lines.append(f"s = {e1}")
        elif kind == 1:
            e2 = draw(expressions(names))
            lhs = draw(st.sampled_from(("s", "x", "s * x", "np.sin(s)")))
            op = draw(st.sampled_from(COMPARE))
            c = draw(st.sampled_from((0.0, 0.25, -0.5, 1.0)))
            test = draw(st.sampled_from(("{}", "{}", "np.any({})", "np.all({})")))
            cond = test.format(f"{lhs} {op} {c}")
            lines += [f"if {cond}:", f"    s = {e1}", "else:", f"    s = {e2}"]
        elif kind == 2:
            k = f"k{counters}"
            counters += 1
            c = draw(st.sampled_from((0.5, 1.5, 3.0)))
            m = draw(st.integers(1, 4))
            lines += [f"{k} = 0", f"while s < {c} and {k} < {m}:",
                      f"    s = s + 0.5 * np.tanh({e1}) + 0.25", f"    {k} = {k} + 1",
                      f"s = s * ({k} + 1)"]
        elif kind == 3:
            lines += ["for i in range(n):", f"    s = s * 0.5 + {e1} * (i + 1)"]
        elif kind == 4:
            lines += ["for i in range(to_int(np.tanh(x) * 2.0 + 2.0)):",
                      f"    s = s + {e1} * 0.5"]
        else:
            lines.append(f"s = s + n * {e1}")
    return "\n".join(["def program(np, x, n, to_int):", "    s = x * 1.0"]
                     + ["    " + line for line in lines] + ["    return s"])


def unboxed_int(v):
    """int() of an autograd value (autograd refuses int() of its boxes; burnumba guards it)."""
    while hasattr(v, "_value"):
        v = v._value
    return int(v)


def compiled(source):
    space = {}
    exec(compile(source, "<program>", "exec"), space)
    fn = space["program"]
    return (lambda x, n: fn(np, x, n, int)), (lambda x, n: fn(anp, x, n, unboxed_int))


def close(got, want, source, what):
    assert np.allclose(got, want, rtol=RTOL, atol=ATOL), \
        f"{what}: burnumba {got!r}, autograd {want!r}\n{source}"


WARM = """def program(np, x, n, to_int):
    s = x * 1.0
    k = 0
    while s < 0.5 and k < 2:
        s = s + np.sin(x) * np.cos(s) - np.tanh(s) * 0.5
        k = k + 1
    if s > 0.0 and s >= 0.1 or s <= -3.0:
        s = s * n
    if np.any(s < 0.25) or np.all(x > 1.0):
        s = s + x
    for i in range(to_int(np.tanh(x) + 1.0)):
        s = s - x
    return s
"""


def test_warm_up_builds_the_one_kernel():
    """Every row of the fuzz in one program: its kernels cover every fuzzed tape."""
    ours, theirs = compiled(WARM)
    for x in XS:
        close(bn.grad(ours)(x, 2), autograd.grad(theirs)(x, 2), WARM, "grad")
        close(bn.jvp(lambda x: ours(x, 2), (x,), (1.0,))[1], autograd.grad(theirs)(x, 2),
              WARM, "jvp")


@pytest.mark.filterwarnings("ignore::burnumba.VariantWarning")   # 8 combinations and more
@settings(max_examples=PROGRAMS, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_control_flow_programs_match_autograd(source):
    ours, theirs = compiled(source)
    vg = bn.value_and_grad(ours)
    for n in NS:
        d_theirs = autograd.grad(theirs)
        for x in XS:
            value, g = vg(x, n)
            close(value, theirs(x, n), source, f"value at x={x}, n={n}")
            close(g, d_theirs(x, n), source, f"grad at x={x}, n={n}")
    assert len(vg.tapes) == 1           # n is data: every variant under one signature
    n = 2
    for x in XS[::2]:
        y, dy = bn.jvp(lambda x: ours(x, n), (x,), (1.5,))
        close(y, theirs(x, n), source, f"jvp value at x={x}")
        close(dy, 1.5 * autograd.grad(theirs)(x, n), source, f"jvp tangent at x={x}")
    xs = np.array(XS + XS[:2])
    ns = np.array([NS[k % len(NS)] for k in range(len(xs))])
    lanes = bn.vmap(bn.grad(ours))(xs, ns)
    close(lanes, [autograd.grad(theirs)(x, int(k)) for x, k in zip(xs, ns)], source,
          "vmap lanes")
