"""The benchmark scripts call the library as it is: every call of a perfpriv function binds to its signature.

The benchmarks are not run by the suite (they time things, and take minutes),
so a renamed keyword or a keyword-only parameter passed by position would only
show when someone runs them. This test reads each script (and the code that a
script runs in a subprocess, kept in a string), finds every call of a perfpriv
function or class it imported, and binds the call's arguments to the
signature with :meth:`inspect.Signature.bind`. It also runs the memory
benchmark's subprocess at a tiny size.
"""

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
#: Scripts that drive the library only through other programs (mutants.py runs the test suite on mutants).
NO_LIBRARY_CALLS = {"mutants.py"}


def _code_blocks(path):
    """The script's source and the sources it keeps in strings (subprocess code that imports perfpriv)."""
    text = path.read_text()
    blocks = [text]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "from perfpriv" in node.value:
            blocks.append(re.sub(r"\{[A-Za-z_]*\}", "1", node.value))   # str.format fields: a number
    return blocks


def _imported(tree):
    """name in the script -> the perfpriv object it stands for."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "perfpriv":
            mod = importlib.import_module(node.module)
            for alias in node.names:
                obj = getattr(mod, alias.name, None)
                if obj is None:
                    obj = importlib.import_module(f"{node.module}.{alias.name}")
                names[alias.asname or alias.name] = obj
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "perfpriv":
                    names[alias.asname or alias.name] = importlib.import_module(alias.name)
    return names


def _target(func, names):
    """The perfpriv callable a call's ``func`` node names, or None."""
    if isinstance(func, ast.Name):
        obj = names.get(func.id)
        return obj if callable(obj) and not inspect.ismodule(obj) else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names:
        owner = names[func.value.id]
        if inspect.ismodule(owner):
            return getattr(owner, func.attr, AttributeError(f"{owner.__name__} has no {func.attr}"))
    return None


def _calls(path):
    for block in _code_blocks(path):
        tree = ast.parse(block)
        names = _imported(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                target = _target(node.func, names)
                if target is not None:
                    yield ast.unparse(node.func), target, node


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_call_of_the_library_binds_to_its_signature(path):
    checked = 0
    for name, target, node in _calls(path):
        assert not isinstance(target, AttributeError), f"{path.name}:{node.lineno}: {target}"
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue                                              # *args / **kwargs: not checkable statically
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):                          # a compiled kernel or a builtin
            continue
        try:
            sig.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as err:
            pytest.fail(f"{path.name}:{node.lineno}: {name}(...) does not fit {name}{sig}: {err}")
        checked += 1
    assert checked or path.name in NO_LIBRARY_CALLS, f"{path.name}: no call of perfpriv found"


def test_the_checker_sees_a_wrong_keyword(tmp_path):
    bad = tmp_path / "bench_bad.py"
    bad.write_text('CHILD = """\nfrom perfpriv import gaussian\n'
                   'gaussian.simulate(20.0, 0.02, 0.1, 0.5, T={T}, n0=10, d=2, R=10.0, method="x")\n"""\n')
    with pytest.raises(pytest.fail.Exception, match="does not fit"):
        test_every_call_of_the_library_binds_to_its_signature(bad)


def test_the_memory_benchmark_subprocess_runs_at_a_tiny_size():
    sys.path.insert(0, str(BENCH))
    try:
        bench_memory = importlib.import_module("bench_memory")
    finally:
        sys.path.remove(str(BENCH))
    code = bench_memory._CHILD.format(T=2, cap=30, d=3, trials=2)
    for mode in ("projected", "records"):
        out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True).stdout
        kb, seconds = out.split()
        assert int(kb) > 0 and float(seconds) >= 0


def _mutants():
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("mutants")
    finally:
        sys.path.remove(str(BENCH))


def test_every_mutant_applies_to_the_current_source():
    """Each mutant's original text occurs exactly once in its file (else the script reports it broken).

    A refactor that rewrites a formula leaves its mutant stale; this catches it
    without running any mutant (benchmarks/mutants.py, CONTRIBUTING.md "Mutation testing").
    """
    mutants = _mutants()
    package = BENCH.parent / "perfpriv"
    ids = [m.id for m in mutants.MUTANTS]
    assert len(ids) == len(set(ids)), f"duplicate mutant ids: {sorted({i for i in ids if ids.count(i) > 1})}"
    stale = []
    for m in mutants.MUTANTS:
        assert m.new != m.old, f"{m.id}: the mutation changes nothing"
        count = (package / m.file).read_text().count(m.old)
        if count != 1:
            stale.append(f"{m.id} ({m.file}): original text found {count} times")
        for test in m.tests:
            assert (BENCH.parent / test).is_file(), f"{m.id}: no test file {test}"
    assert not stale, "stale mutants in benchmarks/mutants.py:\n" + "\n".join(stale)
