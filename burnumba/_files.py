"""Writing archives whole: the one file helper that the tape format and the checkpoints share."""
import os

import numpy as np


def savez_atomic(path, arrays, error, what):
    """``np.savez(path, **arrays)``, written whole to a temporary file of this process and
    renamed into place, so that a reader never sees half a file; an OSError becomes
    ``error`` naming the path and ``what`` was being written."""
    path = os.fsdecode(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise error(f"{path}: cannot write {what} ({e.strerror or e}); check that its folder "
                    "exists and is writable") from None
