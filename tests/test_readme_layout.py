"""README's layout names every module and package of the SDK and of the server, so a newcomer finds each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _layout() -> str:
    blocks = (ROOT / "README.md").read_text(encoding="utf-8").split("```")
    return next(block for block in blocks if "sdk/polignac/" in block and "server/polignac_arena/" in block)


def _modules(root: Path) -> list[str]:
    names = []
    for path in sorted(root.iterdir()):
        if path.name in ("__init__.py", "__main__.py", "py.typed") or path.name.startswith("."):
            continue
        if path.suffix == ".py":
            names.append(path.name)
        elif path.is_dir() and path.name != "__pycache__":
            names.append(path.name + "/")
    return names


@pytest.mark.parametrize("package", ["sdk/polignac", "server/polignac_arena"])
def test_the_readme_layout_names_every_module(package: str) -> None:
    layout = _layout()
    missing = [name for name in _modules(ROOT / package) if not re.search(rf"^ +{re.escape(name)}\s", layout, re.MULTILINE)]
    assert missing == [], f"README.md's layout does not name these modules of {package}: {missing}"
