"""The module path of the Tape before the layered layout (commit e48d701 and earlier), for
pickles and imports that name it: ``burnumba._tape.Tape`` is ``burnumba.ir.tape.Tape``."""
from .ir.tape import Tape, from_pickle, load_tape

__all__ = ["Tape", "from_pickle", "load_tape"]
