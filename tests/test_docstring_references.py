"""Every cross-reference of a public docstring names something that exists.

The book's nitpicky build (``-n -W``) refuses a broken link to a public
``perfpriv.`` name, but only in the slow tier, and it cannot see a broken
relative reference (``:func:`mechanism_draw```), which its ignore list
renders as unlinked code. This resolves every ``:func:``, ``:meth:``,
``:class:``, ``:data:``, ``:mod:``, ``:obj:`` and ``:exc:`` target the way
Sphinx's Python domain does: in the enclosing class, in the module, then as
a dotted import path, where a ``perfpriv.`` name must be among its module's
public names (``__all__``: the names its reference page documents). (``:attr:`` targets are often instance attributes set
in ``__init__``, which cannot be resolved without running the code.)
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import perfpriv

ROLE = re.compile(r":(func|meth|class|data|mod|obj|exc):`(?:[^`<]*<)?[~.]?([\w.]+)>?`")


def _attribute_path(base, dotted):
    obj = base
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def resolves(target, module, cls=None):
    """Whether ``target`` names an object from ``cls``, ``module`` or an importable module."""
    if cls is not None and _attribute_path(cls, target):
        return True
    if _attribute_path(module, target):
        return True
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        try:
            base = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        if k == len(parts):
            return True
        documented = getattr(base, "__all__", None)
        if (base.__name__.startswith("perfpriv") and documented is not None and parts[k] not in documented
                and not any(p.startswith("_") for p in parts)):
            return False          # not on the module's reference page: the link has no target
        return _attribute_path(base, ".".join(parts[k:]))
    return False


def _documented():
    """(module, class or None, docstring) of every public module, its members and their methods."""
    for info in pkgutil.walk_packages(perfpriv.__path__, "perfpriv."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        yield module, None, module.__doc__ or ""
        for obj in vars(module).values():
            if getattr(obj, "__module__", None) != info.name:
                continue
            cls = obj if inspect.isclass(obj) else None
            yield module, cls, inspect.getdoc(obj) or ""
            for member in (vars(obj).values() if cls is not None else ()):
                if callable(getattr(member, "__func__", member)) or isinstance(member, property):
                    yield module, cls, inspect.getdoc(member) or ""


def test_every_cross_reference_of_a_public_docstring_resolves():
    broken = sorted({f"{module.__name__}: :{role}:`{target}`"
                     for module, cls, doc in _documented()
                     for role, target in ROLE.findall(doc) if not resolves(target, module, cls)})
    assert broken == []


def test_the_resolver_finds_a_broken_reference():
    from perfpriv._kernels import rounds

    assert resolves("run", rounds) and resolves("perfpriv._kernels.mechanisms.mechanism_round", rounds)
    assert resolves("numpy.random.Generator", rounds)
    assert not resolves("mechanism_draw", rounds)
    assert not resolves("perfpriv._kernels.mechanisms.mechanism_draw", rounds)
    from perfpriv import engine

    assert hasattr(engine, "np") and not resolves("perfpriv.engine.np", rounds)   # not among its public names
