"""Checkpoints: parameters, optimiser state and a JSON meta dict in one .npz, without pickle.

Layout of the archive: ``param/<name>`` per parameter, ``opt/<name>`` per optimiser entry
(arrays and numbers, as 0-d arrays), ``meta`` (the UTF-8 bytes of a JSON object) and
``format`` (the string FORMAT). Loading uses ``allow_pickle=False``, so a file cannot run code.
"""
import json
import os
import zipfile

import numpy as np

from .._errors import CheckpointError
from .._files import savez_atomic

FORMAT = "burnumba-checkpoint-1"


def save_checkpoint(path, params, opt_state=None, meta=None):
    """Write ``params`` (a dict of arrays), ``opt_state`` (a dict of arrays and numbers) and
    ``meta`` (JSON-able) to ``path``. The file is written whole, then renamed into place.

    >>> save_checkpoint("ckpt.npz", params, meta={"model": "gpt"})     # doctest: +SKIP
    """
    arrays = {"format": np.array(FORMAT)}
    try:
        arrays["meta"] = np.frombuffer(json.dumps(meta or {}).encode(), np.uint8)
    except TypeError as e:
        raise CheckpointError(f"save_checkpoint: meta must be JSON-able: {e}") from None
    for k, v in params.items():
        arrays["param/" + k] = np.asarray(v)
    for k, v in (opt_state or {}).items():
        arrays["opt/" + k] = np.asarray(v)
    savez_atomic(path, arrays, CheckpointError, "the checkpoint")


def load_checkpoint(path):
    """``(params, opt_state or None, meta)`` from a file written by ``save_checkpoint``.
    Raises CheckpointError naming the file when it is missing, corrupt or not a checkpoint."""
    path = os.fspath(path)
    fix = "pass a checkpoint.npz written by burnumba (Trainer.save or `burnumba train --out`)"
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such checkpoint file; {fix}")
    if not zipfile.is_zipfile(path):        # else numpy would suggest unpickling it
        raise CheckpointError(f"{path}: not a .npz archive; {fix}")
    try:
        with np.load(path, allow_pickle=False) as z:
            files = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as e:
        raise CheckpointError(f"{path}: not a readable .npz checkpoint ({type(e).__name__}: "
                              f"{e}); {fix}") from None
    if "format" not in files or str(files["format"]) != FORMAT:
        raise CheckpointError(f"{path}: not a {FORMAT} file; {fix}")
    try:
        meta = json.loads(files["meta"].tobytes().decode())
    except (KeyError, ValueError) as e:
        raise CheckpointError(f"{path}: its meta record is damaged ({e}); {fix}") from None
    params = {k[6:]: v for k, v in files.items() if k.startswith("param/")}
    opt = {k[4:]: (v if v.ndim else v.item()) for k, v in files.items() if k.startswith("opt/")}
    for k, v in params.items():
        if v.dtype not in (np.float32, np.float64):
            raise CheckpointError(f"{path}: parameter '{k}' is {v.dtype}, not float32 or "
                                  f"float64; {fix}")
        if not np.all(np.isfinite(v)):
            raise CheckpointError(f"{path}: parameter '{k}' holds NaN or infinite values (saved "
                                  "from a run that diverged?); retrain, with a smaller learning "
                                  "rate or gradient clipping")
    if not params:
        raise CheckpointError(f"{path}: holds no parameters; {fix}")
    return params, (opt or None), meta
