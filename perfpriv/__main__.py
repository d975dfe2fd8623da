"""``python -m perfpriv``: the command line (see :mod:`perfpriv.cli`)."""

import signal
import sys


def _note(signum, frame):
    """While the libraries load: note Ctrl-C or SIGTERM; the command line stops cleanly at its first safe point."""
    _note.received.append(signum)


_note.received = []

if __name__ == "__main__":
    signal.signal(signal.SIGINT, _note)
    signal.signal(signal.SIGTERM, _note)
    from .cli import main

    sys.exit(main())
