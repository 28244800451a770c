"""``python -m burnumba``: the same command as the ``burnumba`` script (see burnumba.cli)."""
from .cli import main

raise SystemExit(main())
