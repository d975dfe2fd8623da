"""The layering rules of CONTRIBUTING.md ("Layers"), checked on the source with ``ast``.

* no import cycles among perfpriv modules, counting module-level *and*
  function-level imports (``import perfpriv.x``, ``from . import x``,
  ``from .x import name``, ``from perfpriv.x import name``);
* no module uses another module's private names (``other._name`` through an
  imported module, or ``from .other import _name``); the shared helper modules
  ``_validate``, ``keyed`` (public: the keyed random streams), ``_records``, ``_stats`` and ``_bisect`` are
  imported everywhere, their public names only.

Failures list every offender (file:line and the name) so that they can be fixed at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "perfpriv"

#: The shared helper modules of the lowest layer above the kernels (their *public* names are used everywhere).
SHARED_HELPERS = {"_validate", "keyed", "_records", "_stats", "_bisect"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or "__init__"


def _modules():
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _top(name: str) -> str:
    return name.split(".")[0]


def _resolve(module: str, node: ast.ImportFrom) -> str | None:
    """The perfpriv module (dotted, without 'perfpriv.') an ImportFrom imports from."""
    if node.level == 0:
        if node.module is None or not (node.module == "perfpriv" or node.module.startswith("perfpriv.")):
            return None
        return node.module[len("perfpriv."):] if node.module != "perfpriv" else ""
    base = module.split(".")
    is_package = (PACKAGE / module.replace(".", "/") / "__init__.py").exists() or module == "__init__"
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    if module == "__init__":
        base = []
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str, path: Path, known: set):
    """(imported perfpriv module, line, names imported from it, local alias of a module import)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("perfpriv."):
                    target = alias.name[len("perfpriv."):]
                    out.append((target, node.lineno, [], alias.asname))
        elif isinstance(node, ast.ImportFrom):
            src = _resolve(module, node)
            if src is None:
                continue
            for alias in node.names:
                sub = f"{src}.{alias.name}" if src else alias.name
                if sub in known:  # "from . import x" / "from .plots import _dynamics": a module
                    out.append((sub, node.lineno, [], alias.asname or alias.name))
                elif src in known or src == "":
                    out.append((src or "__init__", node.lineno, [alias.name], None))
    return tree, out


def _graph():
    mods = _modules()
    known = set(mods)
    edges, private, trees = {}, [], {}
    for name, path in mods.items():
        tree, imps = _imports(name, path, known)
        trees[name] = tree
        edges[name] = {t for t, *_ in imps if t != name and t in known}
        aliases = {}
        for target, line, names, alias in imps:
            for n in names:
                if n.startswith("_") and not n.startswith("__") and _top(target) != _top(name):
                    private.append((name, line, f"from {target} import {n}"))
            if alias:
                aliases[alias] = target
                last = target.split(".")[-1]
                if (last.startswith("_") and not last.startswith("__") and target not in SHARED_HELPERS
                        and _top(target) != _top(name)):
                    private.append((name, line, f"imports the private module {target}"))
        # other._name through an imported module (attribute access on its local alias)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                target = aliases[node.value.id]
                attr = node.attr
                if attr.startswith("_") and not attr.startswith("__") and _top(target) != _top(name):
                    private.append((name, node.lineno, f"{node.value.id}.{attr} ({target})"))
    return mods, edges, private


def _checked(name: str) -> bool:   # every module of the package is checked
    return True


def _cycles(edges):
    """Strongly connected components with more than one module (Tarjan), among checked modules."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if not _checked(w):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if _checked(v) and v not in index:
            visit(v)
    return out


def test_no_import_cycles_among_perfpriv_modules_including_function_level_imports():
    _, edges, _ = _graph()
    cycles = _cycles(edges)
    detail = "; ".join(" <-> ".join(c) + " (" + ", ".join(f"{a} imports {sorted(edges[a] & set(c))}" for a in c) + ")"
                       for c in cycles)
    assert not cycles, f"import cycles: {detail}"


def test_no_module_uses_another_modules_private_names():
    # the shared helpers (_validate, keyed, _records, _stats) may be imported; their names used
    # elsewhere are public ones (a private one, e.g. keyed._mix_gamma, is an offence too)
    _, _, private = _graph()
    offenders = [(m, line, what) for m, line, what in private if _checked(m)]
    text = "\n".join(f"  perfpriv/{m.replace('.', '/')}.py:{line}: {what}" for m, line, what in offenders)
    assert not offenders, f"{len(offenders)} uses of other modules' private names:\n{text}"


def test_the_checker_sees_cycles_and_private_names(tmp_path, monkeypatch):
    # power check: a synthetic package with a function-level cycle and three private uses
    pkg = tmp_path / "perfpriv"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "keyed.py").write_text("def binomial():\n    pass\n")
    (pkg / "a.py").write_text("from . import keyed, b\nx = keyed.binomial\ny = keyed._mix\n")
    (pkg / "b.py").write_text("def f():\n    from .a import _hidden\n    import perfpriv.a\n")
    (pkg / "c.py").write_text("from .sub import _private_mod\n")
    (pkg / "sub").mkdir()
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "_private_mod.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    _, edges, private = _graph()
    assert _cycles(edges) == [["a", "b"]]
    found = sorted((m, what) for m, _, what in private)
    assert found == [("a", "keyed._mix (keyed)"), ("b", "from a import _hidden"),
                     ("c", "imports the private module sub._private_mod")]


@pytest.mark.parametrize("helper", sorted(SHARED_HELPERS))
def test_shared_helpers_import_no_higher_layer(helper):
    _, edges, _ = _graph()
    allowed = SHARED_HELPERS | {"_kernels"} | {m for m in edges if _top(m) == "_kernels"}
    assert edges[helper] <= allowed, f"{helper} imports {sorted(edges[helper] - allowed)}"


def test_kernels_import_nothing_of_perfpriv_above_them():
    _, edges, _ = _graph()
    above = {(m, t) for m, targets in edges.items() if _top(m) == "_kernels" for t in targets if _top(t) != "_kernels"}
    assert not above, sorted(above)


#: The layers of the package, bottom up (CONTRIBUTING.md, "Layers"). A module imports only modules of
#: its own layer or of a lower one; within a layer the cycle test above keeps the imports acyclic.
LAYERS = (
    {"_kernels"},                                         # compiled kernels (numba): streams, samplers, rounds
    {"_validate", "keyed", "_records", "_stats", "_bisect"},   # shared helpers
    {"leakage", "behaviour", "sweep"},                    # formulas of one round; users; reproducible grids
    {"engine", "projected"},                              # the one performative loop; the batched round draw
    {"bernoulli", "gaussian", "regression", "gradient", "_learning"},   # mechanisms (+ their front ends)
    {"dynamics", "schedules"},                            # theory of the loop; schedule families
    {"optimize"},                                         # searches over levels and schedules
    {"feedback", "performative", "experiments"},          # studies built on the searches
    {"plots", "exercises"},                               # faces: figures, classroom self-checks
    {"widgets", "cli", "notebook", "__main__", "__init__"},   # explorers, command line, notebook helpers
)


def test_imports_flow_down_the_layers():
    mods, edges, _ = _graph()
    rank = {name: k for k, layer in enumerate(LAYERS) for name in layer}
    unplaced = sorted({_top(m) for m in mods} - set(rank))
    assert not unplaced, f"modules missing from LAYERS: {unplaced}"
    upward = sorted((m, t) for m, targets in edges.items() for t in targets
                    if _top(m) != _top(t) and _top(t) != "__init__" and rank[_top(t)] > rank[_top(m)])
    assert not upward, f"imports that go up a layer: {upward}"
