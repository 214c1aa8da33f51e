"""Counts that say how typed and how tidy the code of sdk/ and server/ is (issue reports quote them).

Prints, for the Python sources under sdk/ and server/ (generated protobuf modules left out):
- ``Any``: names and attributes spelled ``Any`` (``ast``);
- ``dict[str, Any]``: every such subscript, and those in the signature of a public function or method (the ones that
  cross a module boundary);
- ``type: ignore`` comments and how many of them carry no reason;
- the largest source file and its length in lines.

Usage: ``python scripts/code_counts.py [ROOT]`` (the repository root by default); ``--json`` for one JSON object.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

GENERATED = re.compile(r"_pb2(_grpc)?\.pyi?$")
IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(.*)$")


def sources(root: Path) -> list[Path]:
    return sorted(p for part in ("sdk", "server") for p in (root / part).rglob("*.py") if not GENERATED.search(p.name))


def is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")


def is_dict_str_any(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("dict", "Dict")):
        return False
    inner = node.slice
    return (
        isinstance(inner, ast.Tuple)
        and len(inner.elts) == 2
        and isinstance(inner.elts[0], ast.Name)
        and inner.elts[0].id == "str"
        and is_any(inner.elts[1])
    )


def public_signature_nodes(tree: ast.Module) -> list[ast.AST]:
    """Annotations of public functions and methods of public classes (parameters and returns)."""
    found: list[ast.AST] = []

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.ClassDef) and not stmt.name.startswith("_"):
                visit(stmt.body)
                found.extend(s.annotation for s in stmt.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and not s.target.id.startswith("_"))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and (not stmt.name.startswith("_") or stmt.name == "__init__"):
                args = stmt.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else [])]
                found.extend(a.annotation for a in every if a.annotation is not None)
                if stmt.returns is not None:
                    found.append(stmt.returns)

    visit(tree.body)
    return found


def count(root: Path) -> dict[str, object]:
    any_names = dict_any = dict_any_public = ignores = ignores_bare = 0
    largest = ("", 0)
    for path in sources(root):
        text = path.read_text()
        tree = ast.parse(text)
        any_names += sum(1 for node in ast.walk(tree) if is_any(node))
        dict_any += sum(1 for node in ast.walk(tree) if is_dict_str_any(node))
        dict_any_public += sum(1 for top in public_signature_nodes(tree) for node in ast.walk(top) if is_dict_str_any(node))
        for line in text.splitlines():
            if (match := IGNORE.search(line)) is not None:
                ignores += 1
                ignores_bare += not match.group(2).strip(" -—:#")
        lines = len(text.splitlines())
        if lines > largest[1]:
            largest = (str(path.relative_to(root)), lines)
    return {
        "any_names": any_names,
        "dict_str_any": dict_any,
        "dict_str_any_in_public_signatures": dict_any_public,
        "type_ignores": ignores,
        "type_ignores_without_reason": ignores_bare,
        "largest_file": largest[0],
        "largest_file_lines": largest[1],
    }


def main(argv: list[str]) -> None:
    args = [a for a in argv if a != "--json"]
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    counts = count(root)
    if "--json" in argv:
        print(json.dumps(counts))
    else:
        for key, value in counts.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main(sys.argv[1:])
