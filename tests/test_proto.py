"""The committed generated protobuf code matches proto/ (regenerate with scripts/gen_proto.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_generated_code_is_up_to_date() -> None:
    if importlib.util.find_spec("grpc_tools") is None:
        pytest.skip("grpcio-tools is not installed (pip install -e '.[test]' installs it)")
    done = subprocess.run([sys.executable, "scripts/gen_proto.py", "--check"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_proto_message_field_and_enum_value_is_commented() -> None:
    text = (ROOT / "proto" / "polignac" / "v1" / "referee.proto").read_text(encoding="utf-8")
    lines = text.splitlines()
    for number, line in enumerate(lines):
        stripped = line.strip()
        declares = stripped.startswith(("message ", "enum ", "rpc ", "service ", "oneof ")) or (
            stripped.endswith(";") and "=" in stripped and not stripped.startswith(("syntax", "package", "option"))
        )
        if declares:
            previous = lines[number - 1].strip()
            assert previous.startswith("//"), f"referee.proto:{number + 1}: {stripped!r} has no comment above it"


def test_enum_zero_values_are_unspecified() -> None:
    from polignac._proto.polignac.v1 import referee_pb2 as pb

    for enum in pb.DESCRIPTOR.enum_types_by_name.values():
        assert enum.values[0].number == 0 and enum.values[0].name.endswith("_UNSPECIFIED"), enum.name
