"""Test tiers: ``python -m pytest -m "not slow"`` is the fast tier of the edit-test loop.

The full command (``python -m pytest``) runs everything and is what CI runs.
The slow tier is, by file: the chapters re-executed by nbval, the browser
tests of the built book, the fuzz sweeps, the long-run reproducers and the
command line's end-to-end runs; and any test marked ``@pytest.mark.slow``.
"""

from pathlib import Path

import pytest

#: Test files whose every test belongs to the slow tier.
SLOW_FILES = {"test_rendered_book_html.py", "test_rendered_book_browser_1.py", "test_rendered_book_browser_2.py",
              "test_static_explorer.py",
              "test_long_run.py", "test_cli.py", "test_fuzz.py", "test_fuzz_upper.py", "test_fuzz_learning.py",
              "test_notebook.py"}


#: Tests (by name fragment) of other files that take tens of seconds: the explorers redrawn at every
#: slider extreme, Monte Carlo checks of the learning tasks, the agent reference of contagion.
SLOW_TESTS = ("explorer_figure_is_clean_at_defaults_and_at_every_slider_extreme", "matches_monte_carlo",
              "agrees_in_law_with_the_agent_reference[gaussian-contagion]")


#: Files that take minutes of a worker, longest first: the run hands them out first (``--no-loadscope-reorder``
#: in pyproject.toml keeps this order), so that no long file starts last while the other cores idle. The
#: chapters follow them (each 15-90 s), then every other file in its collection order.
LONG_FIRST = ("test_rendered_book_browser_1.py", "test_rendered_book_browser_2.py", "test_fuzz_learning.py",
              "test_fuzz_upper.py", "test_figure_layout.py", "test_cli.py")


def _run_order(item):
    name = Path(str(item.fspath)).name
    if name in LONG_FIRST:
        return LONG_FIRST.index(name)
    return len(LONG_FIRST) + (0 if name.endswith(".ipynb") else 1)


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath))
        if path.suffix == ".ipynb" or path.name in SLOW_FILES or any(part in item.name for part in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_run_order)          # stable: each file's tests keep their order
