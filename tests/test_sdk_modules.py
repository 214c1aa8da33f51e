"""The SDK's modules import without cycles: the value types live in a leaf module everyone shares."""

from __future__ import annotations

import ast
from pathlib import Path

import polignac
from polignac import engine, events, values, view

SDK = Path(polignac.__file__).parent


def runtime_imports(module: str) -> set[str]:
    """The ``polignac`` modules ``module`` imports when it runs (``TYPE_CHECKING`` blocks left out)."""
    tree = ast.parse((SDK / f"{module}.py").read_text())
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for node in ast.walk(block)
    }
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and id(node) not in skipped and (node.module or "").startswith("polignac"):
            found.add(node.module or "")
    return found


def test_the_value_types_are_a_leaf_module() -> None:
    assert runtime_imports("values") <= {"polignac.cards", "polignac.errors"}  # errors imports nothing of polignac


def test_no_module_of_the_engine_imports_another_that_imports_it() -> None:
    modules = ["cards", "errors", "rules", "deal", "values", "events", "view", "engine", "playout", "wire", "faults"]
    imports = {m: {i.removeprefix("polignac.") for i in runtime_imports(m)} for m in modules}
    for module, imported in imports.items():
        for other in imported & set(modules):
            assert module not in imports[other], f"polignac.{module} and polignac.{other} import each other"
    assert "engine" not in imports["view"]


def test_every_module_names_the_same_value_types() -> None:
    for name in ("Contract", "Decision", "Phase", "Trick", "parse_decision"):
        shared = getattr(values, name)
        assert getattr(polignac, name) is shared
        assert getattr(engine, name) is shared
    assert events.Contract is values.Contract
    assert vars(view)["Trick"] is values.Trick  # imported there, not exported
