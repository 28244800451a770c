"""Graphs shared by the tests: the paper's tiny graph and micrograd's README graph."""
import burnumba as bn


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
