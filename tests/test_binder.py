"""Binder gets the chapters' runtime only, and the same versions as the full environment.

``binder/requirements.txt`` is what Binder and Live Code install; the root
``requirements.txt`` adds the tools that build and test the book. The two must
not drift apart: every Binder line is the root file's line, every runtime
dependency of perfpriv (``pyproject.toml``) is in Binder, and whatever the
root file adds is a known build or test tool.
"""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: tools of the book's build and tests, not needed to read and rerun a chapter
TOOLS = {"jupyter-book", "sphinx-proof", "sphinx-exercise", "pytest", "pytest-xdist", "nbval", "hypothesis",
         "mpmath", "dask", "playwright", "nbclient", "nbconvert"}


def _requirements(path: Path) -> dict:
    """Package name (normalized) -> the requirement line, for the lines that name a package."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name = re.match(r"[A-Za-z0-9_.\-]+", line).group(0)
        out[re.sub(r"[-_.]+", "-", name).lower()] = line
    return out


def test_binder_lines_are_the_root_requirements_lines():
    root, binder = _requirements(ROOT / "requirements.txt"), _requirements(ROOT / "binder" / "requirements.txt")
    assert binder, "binder/requirements.txt lists no package"
    for name, line in binder.items():
        assert root.get(name) == line, f"binder/requirements.txt: {line!r} is {root.get(name)!r} in requirements.txt"


def test_binder_has_the_runtime_and_none_of_the_tools():
    binder = _requirements(ROOT / "binder" / "requirements.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.\-]+", dep).group(0)).lower()
               for dep in project["dependencies"]}
    assert runtime <= set(binder), f"perfpriv's dependencies missing from Binder: {sorted(runtime - set(binder))}"
    assert "ipykernel" in binder                       # the kernel the notebooks and Live Code run in
    assert not TOOLS & set(binder), f"build or test tools in Binder: {sorted(TOOLS & set(binder))}"


def test_the_root_file_adds_only_build_and_test_tools():
    root, binder = _requirements(ROOT / "requirements.txt"), _requirements(ROOT / "binder" / "requirements.txt")
    extra = set(root) - set(binder)
    assert extra <= TOOLS, f"requirements.txt packages that Binder lacks and that are not tools: {sorted(extra - TOOLS)}"


def test_binder_installs_perfpriv_itself_and_the_same_python():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert re.search(r"pip install .*-e \.", post_build)
    assert "engine.compile_kernels()" in post_build, "postBuild must compile the kernels (a warm numba cache)"
    assert (ROOT / "binder" / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == (ROOT / "runtime.txt").read_text().strip()
