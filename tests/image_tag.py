"""The tag tests/test_image.py gives the league's image: a hash of everything the image is built from, so that an
unchanged tree reuses the image. ``.ci/run`` builds it under this tag before the suite (``python -m tests.image_tag``
prints it), so that the suite's time is the tests', not the image build's."""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = "polignac-test/league"


def context_digest() -> str:
    """A hash of every file the image is built from (the Dockerfile's context as .dockerignore lets it in)."""
    digest = hashlib.sha256()
    files = [ROOT / "pyproject.toml", ROOT / "constraints.txt", ROOT / "README.md", ROOT / ".dockerignore"]
    files += sorted((ROOT / "deploy").glob("*"))
    for folder in ("proto", "sdk", "server"):
        files += sorted(path for path in (ROOT / folder).rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    for path in files:
        if path.is_file():
            digest.update(f"\0{path.relative_to(ROOT)}\0".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def image_tag() -> str:
    """The image's tag for this tree."""
    return f"{REPOSITORY}:{context_digest()}"


if __name__ == "__main__":
    print(image_tag())
