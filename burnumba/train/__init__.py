"""Training: layers (nn), optimisers and the Trainer (optim), data, checkpoints, Dask
(distributed) and the ``burnumba`` command (cli). Their public paths are ``burnumba.nn``,
``burnumba.optim``, ``burnumba.data``, ``burnumba.distributed`` and ``burnumba.cli``."""
