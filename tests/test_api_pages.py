"""The library reference's pages (sphinx.ext.autosummary) cover every public module, each name documented once.

``book/api.md`` lists the top-level public modules in the order readers meet
them (autosummary writes a page for each, and ``:recursive:`` for the modules
of a package). A name that several modules export is documented on the page of
the first of them in that order; the others link there: ``documented_elsewhere``
in ``_config.yml`` (``autosummary_context``) lists them for the page template
(``book/_templates/autosummary/module.rst``). These checks run without a build.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import yaml

import perfpriv

ROOT = Path(__file__).resolve().parents[1]


def listed_modules() -> list[str]:
    """The modules of the autosummary table of ``book/api.md``, in order."""
    text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    block = re.search(r"\.\. autosummary::\n((?:   .*\n|\n)*)", text).group(1)
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith(":")]


def public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split(".")[1:])


def reference_order() -> list[str]:
    """Every page of the reference: the listed modules, each followed by its public submodules (recursively)."""
    def walk(name):
        module = importlib.import_module(name)
        yield name
        for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not info.name.startswith("_"):
                yield from walk(f"{name}.{info.name}")
    return [page for name in listed_modules() for page in walk(name)]


def test_api_md_lists_every_top_level_public_module_once():
    top = sorted(f"perfpriv.{info.name}" for info in pkgutil.iter_modules(perfpriv.__path__)
                 if not info.name.startswith("_"))
    listed = listed_modules()
    assert len(listed) == len(set(listed))
    assert sorted(listed) == top


def test_every_public_module_has_a_page():
    every = sorted(info.name for info in pkgutil.walk_packages(perfpriv.__path__, "perfpriv.") if public(info.name))
    assert sorted(reference_order()) == every


def test_a_name_exported_by_several_modules_is_documented_once_where_it_is_first_exported():
    owners, expected = {}, {}
    for name in reference_order():
        module = importlib.import_module(name)
        for attribute in module.__all__:
            obj = getattr(module, attribute)
            if isinstance(obj, type(perfpriv)):
                continue                                    # a submodule: its own page
            owner = owners.setdefault((attribute, id(obj)), name)
            if owner != name:
                expected.setdefault(name, {})[attribute] = owner
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["config"]["autosummary_context"]["documented_elsewhere"] == expected


def test_every_public_module_has_its_all():
    """The pages document ``__all__`` (``autosummary_ignore_module_all: false``, ``:imported-members:``)."""
    missing = [name for name in reference_order() if not hasattr(importlib.import_module(name), "__all__")]
    assert missing == []
