"""``burnumba.builtins``: autograd's ``autograd.builtins`` path, for programs that import
``tuple``, ``list``, ``dict`` or ``isinstance`` from it. autograd needs its own containers to
follow gradients through them; burnumba traces Python's own (they are pytrees), so these names
are Python's builtins, and ``from burnumba.builtins import tuple`` changes nothing else."""
import builtins as _builtins

tuple = _builtins.tuple
list = _builtins.list
dict = _builtins.dict
isinstance = _builtins.isinstance
type = _builtins.type

__all__ = ["tuple", "list", "dict", "isinstance", "type"]
