"""Golden values at rtol 1e-10, and graph shapes that break naive engines."""
import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import burnumba as bn
from graphs import micrograd_readme, tiny


def test_burtorch_tiny_graph():
    value, (da, db) = bn.value_and_grad(tiny, argnums=(0, 1))(-41.0, 2.0)
    np.testing.assert_allclose([value, da, db], [612.5, -35.0, 1050.0], rtol=1e-10)


def test_micrograd_readme_graph():
    value, (da, db) = bn.value_and_grad(micrograd_readme, argnums=(0, 1))(-4.0, 2.0)
    np.testing.assert_allclose([value, da, db],
                               [24.70408163265306, 138.83381924198252, 645.5772594752186],
                               rtol=1e-10)


def test_micrograd_graph_against_autograd_elsewhere(rng):
    """Away from the golden point too; relu'(x) is taken where x is not 0."""
    def ag(a, b):
        return micrograd_readme(a, b, relu=lambda x: anp.maximum(x, 0.0))
    vg = bn.value_and_grad(micrograd_readme, argnums=(0, 1))
    for a, b in rng.uniform(-5, 5, size=(20, 2)):
        value, grads = vg(float(a), float(b))
        np.testing.assert_allclose(value, ag(a, b), rtol=1e-12)
        np.testing.assert_allclose(grads, autograd.grad(ag, argnum=(0, 1))(a, b), rtol=1e-10)


def test_repeated_calls_reuse_the_tape_and_stay_correct(rng):
    vg = bn.value_and_grad(tiny, argnums=(0, 1))
    for a, b in rng.uniform(-50, 50, size=(100, 2)):
        value, (da, db) = vg(float(a), float(b))
        u = (a + b) - (a * b + b ** 3)
        np.testing.assert_allclose([value, da, db],
                                   [u * u / 2, u * (1 - b), u * (1 - a - 3 * b * b)], rtol=1e-10)
    assert len(vg.tapes) == 1


@pytest.mark.parametrize("x", [-1.7, 0.3, 2.9])
def test_fan_out(x):
    assert bn.grad(lambda x: x * x)(x) == pytest.approx(2 * x, rel=1e-15)

    def doubled(a):
        b = a + a
        c = b + b
        return c
    assert bn.grad(doubled)(x) == 4.0
    assert bn.grad(lambda a: (a + a) * (a + a) + a)(x) == pytest.approx(8 * x + 1, rel=1e-14)


def test_output_is_an_input():
    assert bn.value_and_grad(lambda x: x)(0.37) == (0.37, 1.0)
    g = bn.grad(lambda x, y: y, argnums=(0, 1))(0.37, -2.5)
    assert g == (0.0, 1.0)


def test_constant_output():
    assert bn.value_and_grad(lambda x: 3.0)(0.37) == (3.0, 0.0)
    g = bn.grad(lambda x: np.sum(np.ones(3)))(np.arange(3.0))
    np.testing.assert_array_equal(g, np.zeros(3))


def test_deep_chain_has_no_recursion_limit():
    """micrograd's recursive topological sort fails on deep graphs; a tape does not."""
    def deep(x):
        for _ in range(20000):
            x = x * 0.9999 + 0.0001
        return x
    value, g = bn.value_and_grad(deep)(2.0)
    np.testing.assert_allclose(g, 0.9999 ** 20000, rtol=1e-10)
