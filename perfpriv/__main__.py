"""``python -m perfpriv``: the command line (see :mod:`perfpriv.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
