"""``python -m burnumba``: the same command as the ``burnumba`` script (see burnumba.cli)."""
from .train.cli import main

raise SystemExit(main())
