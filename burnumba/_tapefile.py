"""The module path that Tapes pickled before the layered layout (commit e48d701 and earlier)
name: their pickle calls ``burnumba._tapefile.from_pickle``, which is now
``burnumba.ir.tape.from_pickle`` (the same arrays and metadata, checked the same way)."""
from .ir.tape import from_pickle

__all__ = ["from_pickle"]
