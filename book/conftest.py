"""pytest configuration of the chapter notebooks (run by nbval).

The kernel-free explorers store their figures as base64 PNGs inside their
HTML output; nbval compares that HTML with the images masked by
``nbval_sanitize.cfg`` (image bytes depend on the machine's fonts and
rasterizer). A sanitize file given on the command line takes precedence.
"""

from pathlib import Path

SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")


def pytest_configure(config):
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
