"""The rendered book in the browser, second half of the pages (the odd positions of ``rendered.ALL_PAGES``):
every check of ``tests/rendered_checks.py`` on each of them, a page loaded once for all.

Browser tests drive Debian's Chromium (``tests/conftest.py``); the build and the helpers are in ``tests/rendered.py``.
"""

from __future__ import annotations

from rendered_checks import *  # noqa: F401,F403 (the page checks, run on this module's share of the pages)

#: this module's pages: position 1 modulo 2 in ``rendered.ALL_PAGES``
PAGE_SHARE = (1, 2)
