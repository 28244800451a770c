"""autograd's ``autograd.misc`` paths, so that ``from burnumba.misc import flatten`` and
``from burnumba.misc.optimizers import adam`` replace autograd's imports unchanged (and
``burnumba.misc.fixed_points.fixed_point``, autograd's with an implicit derivative):
``flatten`` and ``flatten_func`` are ``bn.flatten`` and ``bn.flatten_func``; ``optimizers``
has autograd's ``sgd``, ``rmsprop`` and ``adam`` loops."""
# as in autograd, the name flatten is the function; the module stays importable by its path
from .flatten import flatten, flatten_func

__all__ = ["flatten", "flatten_func"]
