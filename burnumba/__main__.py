"""``python -m burnumba``: the same command as the ``burnumba`` script (see burnumba.cli)."""
from .train.cli import main

if __name__ == "__main__":      # not on import (the docs' API reference imports every module)
    raise SystemExit(main())
