"""autograd's ``autograd.misc`` paths, so that ``from burnumba.misc import flatten`` and
``from burnumba.misc.optimizers import adam`` replace autograd's imports unchanged:
``flatten`` and ``flatten_func`` are ``bn.flatten`` and ``bn.flatten_func``; ``optimizers``
has autograd's ``sgd``, ``rmsprop`` and ``adam`` loops."""
# as in autograd, the name flatten is the function; the module stays importable by its path
from .flatten import flatten, flatten_func

__all__ = ["flatten", "flatten_func"]
