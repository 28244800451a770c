"""Graphs shared by the tests: the paper's tiny graph and micrograd's README graph; the
adjoint rows made directly."""
from types import SimpleNamespace

import burnumba as bn
from burnumba.derive.traced import Trace
from burnumba.kernels import BY_NAME, blocks_gather


def tiny(a, b):
    """BurTorch's tiny graph."""
    return ((a + b) - (a * b + b ** 3)) ** 2 / 2


def micrograd_readme(a, b, relu=bn.relu):
    """The graph of micrograd's README (BurTorch's small graph)."""
    c = a + b
    d = a * b + b ** 3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + relu(b + a)
    d += 3 * d + relu(b - a)
    e = c - d
    f = e ** 2
    g = f / 2.0
    g += 10.0 / f
    return g


def _scatter(a, positions, shape):
    return blocks_gather.scatter(Trace(a._b, BY_NAME["scatter"]), a, positions, shape)


def _take_add(a, idx, nrows):
    return blocks_gather.take_add(Trace(a._b, BY_NAME["take_add"]), a, idx, nrows)


# gather's and take's adjoint rows (numpy has no names for them), appended as their rows'
# rules append them: adjoints.scatter(a, positions, shape), adjoints.take_add(a, idx, nrows)
adjoints = SimpleNamespace(scatter=_scatter, take_add=_take_add)
