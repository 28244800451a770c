"""Shapes of the operands of one row."""


def tiles(shape, out):
    """Whether an operand of ``shape`` repeats whole in row-major order over ``out``: a
    scalar, the same shape, or a suffix of it after leading 1s (bias (C,) over (B, T, C))."""
    core = tuple(shape)
    while core and core[0] == 1:
        core = core[1:]
    return not core or tuple(out[len(out) - len(core):]) == core
