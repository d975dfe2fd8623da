"""Shared test configuration: a non-interactive matplotlib backend."""

import matplotlib

matplotlib.use("Agg")
