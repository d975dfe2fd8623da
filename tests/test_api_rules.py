"""API rules of the whole public surface (issue 13, §3): q, r and tau are keyword-only everywhere.

A swapped positional call such as ``growth_factor(gamma, q, r, tau)`` against
``growth_factor(gamma, tau, q, r)`` used to be silently accepted. With the
behavioural parameters keyword-only it cannot be written. The walk covers every
public module, its public functions, and the public methods and constructors of
its public classes (result dataclasses excepted: their fields are data, not a
call signature). The compiled kernels are private (``perfpriv._kernels``):
numba functions take their scalars by position, and the Python layer above
them holds the keyword-only front door.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import perfpriv

KEYWORD_ONLY = ("q", "r", "tau")


def _public_modules():
    names = []
    for info in pkgutil.walk_packages(perfpriv.__path__, prefix="perfpriv."):
        parts = info.name.split(".")[1:]
        if not any(part.startswith("_") for part in parts):
            names.append(info.name)
    return names


def _callables(module):
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if inspect.isclass(obj):
            if not dataclasses.is_dataclass(obj) and "__init__" in vars(obj):
                yield f"{name}.__init__", obj.__init__
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and callable(value):
                    yield f"{name}.{attr}", value
        elif callable(obj):
            yield name, obj


def _violations():
    found = []
    for mod_name in _public_modules():
        module = importlib.import_module(mod_name)
        for name, func in _callables(module):
            try:
                params = inspect.signature(func).parameters.values()
            except (TypeError, ValueError):
                continue
            for p in params:
                if p.name in KEYWORD_ONLY and p.kind is not inspect.Parameter.KEYWORD_ONLY:
                    found.append(f"{mod_name}.{name}({p.name})")
    return sorted(set(found))


def test_q_r_tau_are_keyword_only_in_every_public_function():
    assert _violations() == []


#: At most this many named parameters per public function, method or constructor (issue 31: a model is
#: three objects, and what travels together is one object). Result dataclasses are data, not calls; the
#: command line's ``main`` takes its arguments as a list.
MAX_PARAMETERS = 10


def _too_long():
    found = []
    for mod_name in _public_modules():
        for name, func in _callables(importlib.import_module(mod_name)):
            try:
                params = inspect.signature(func).parameters.values()
            except (TypeError, ValueError):
                continue
            named = [p.name for p in params if p.name != "self"
                     and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
            if len(named) > MAX_PARAMETERS:
                found.append(f"{mod_name}.{name} ({len(named)})")
    return sorted(set(found))


def test_no_public_function_takes_more_than_ten_parameters():
    assert _too_long() == []


def test_the_parameter_count_sees_a_long_signature(monkeypatch):
    # the rule would pass vacuously if it counted nothing: a public function with 11 parameters is found
    from perfpriv import leakage

    def long(a, b, c, d, e, f, g, h, i, j, *, k=None):
        return a

    monkeypatch.setattr(leakage, "long_signature", long, raising=False)
    monkeypatch.setattr(leakage, "__all__", [*leakage.__all__, "long_signature"])
    assert "perfpriv.leakage.long_signature (11)" in _too_long()


def test_the_walk_sees_the_functions_it_guards():
    # the rule would pass vacuously if the walk missed them: check that it sees known signatures
    seen = {f"{m}.{n}" for m in _public_modules() for n, _ in _callables(importlib.import_module(m))}
    for name in ("perfpriv.leakage.leak_probability", "perfpriv.optimize.optimal_epsilon",
                 "perfpriv.gaussian.GaussianMean.__init__", "perfpriv.behaviour.Memoryless.__init__",
                 "perfpriv.gradient.GDRun.leaked", "perfpriv.plots.epsilon_star_map"):
        assert name in seen, name


def test_a_positional_tau_is_refused():
    from perfpriv import leakage

    with pytest.raises(TypeError):
        leakage.leak_probability(1.0, 10, 1.0, 0.5)
