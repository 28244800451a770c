"""``autograd.test_util``'s path: ``from burnumba.test_util import check_grads`` gives
``bn.check_grads``, which takes autograd's form ``check_grads(f, modes=["rev"])(x)`` and
JAX's."""
from .tools.check import check_grads

__all__ = ["check_grads"]
