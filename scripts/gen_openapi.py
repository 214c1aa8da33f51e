#!/usr/bin/env python3
"""Regenerate the checked-in OpenAPI schemas of the JSON API from the code.

    python scripts/gen_openapi.py           # write docs/openapi/web.json and docs/openapi/league.json
    python scripts/gen_openapi.py --check   # exit 1, naming what differs, if they are stale

``web.json`` is what ``polignac web`` serves at ``/openapi.json``; ``league.json`` what
``polignac league serve`` does (the same routes plus the league's and the authors' API).
tests/test_web_openapi.py fails when either differs from what the code draws.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "openapi"


def schemas() -> dict[str, Callable[[], dict[str, Any]]]:
    """Each checked-in file's name and how to draw it."""
    from polignac_arena.league.serve import league_openapi
    from polignac_arena.web.app import web_openapi

    return {"web.json": web_openapi, "league.json": league_openapi}


def render(schema: dict[str, Any]) -> str:
    """The file's text: stable, readable, diffable."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if a file is stale")
    args = parser.parse_args()
    stale = []
    for name, draw in schemas().items():
        path = OUT / name
        text = render(draw())
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"stale: {', '.join(stale)}: run python scripts/gen_openapi.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
