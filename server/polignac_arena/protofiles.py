"""The protocol's ``.proto`` files (``proto/`` of the repository, the one source): where the arena finds them,
and how they are copied into a bot's folder.

Starter bots that speak gRPC generate their code from these files at build time (``polignac bot
new`` copies them in; ``polignac bot proto DIR`` copies them again after an upgrade), so no copy
is ever kept beside the one in ``proto/``.  A source checkout (``pip install -e .``) reads them
from ``proto/``; an installed wheel from its data files (``share/polignac-arena/proto``, see
``pyproject.toml``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

__all__ = ["PROTO_FILES", "ProtoCopyRefused", "ProtoFilesMissing", "copy_proto", "proto_root", "stale_protos"]

PROTO_FILES: Final = ("polignac/v1/referee.proto",)
"""The protocol's files, relative to the proto folder."""
_CHECKOUT: Final = Path(__file__).resolve().parents[2] / "proto"
_INSTALLED: Final = Path(sys.prefix) / "share" / "polignac-arena" / "proto"


class ProtoFilesMissing(FileNotFoundError):
    """The arena's installation holds no ``.proto`` files (a broken install)."""


class ProtoCopyRefused(ValueError):
    """A bot's folder the protocol's files are not written into: the message says why."""


def proto_root() -> Path:
    """The folder holding :data:`PROTO_FILES`: the checkout's ``proto/``, else the installed copy."""
    for root in (_CHECKOUT, _INSTALLED):
        if all((root / name).is_file() for name in PROTO_FILES):
            return root
    raise ProtoFilesMissing(f"the protocol's .proto files are in neither {_CHECKOUT} nor {_INSTALLED}: reinstall polignac-arena")


def copy_proto(folder: Path) -> list[Path]:
    """Write the protocol's files into ``folder/proto`` (replacing older copies); returns the files written.

    Raises :class:`ProtoCopyRefused` when a folder or file on the way is a symbolic link: nothing is written
    through one (it could lead out of the bot's folder).
    """
    root = proto_root()
    for name in PROTO_FILES:
        path = folder
        for part in Path("proto", name).parts:
            path = path / part
            if path.is_symlink():
                raise ProtoCopyRefused(f"{path} is a symbolic link: the protocol's files are not written through one")
    written = []
    for name in PROTO_FILES:
        target = folder / "proto" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((root / name).read_bytes())
        written.append(target)
    return written


def stale_protos(folder: Path) -> list[str]:
    """The files of ``folder/proto`` that are missing or differ from the arena's (empty: up to date)."""
    root = proto_root()
    stale = []
    for name in PROTO_FILES:
        copy = folder / "proto" / name
        if not copy.is_file() or copy.read_bytes() != (root / name).read_bytes():
            stale.append(name)
    return stale
