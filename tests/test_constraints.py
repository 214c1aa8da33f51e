"""constraints.txt pins every package the suite installs, direct or indirect, and pyproject.toml's ranges admit the pins.

CI (.ci/run) installs through constraints.txt, so the suite runs on the versions it last passed with; a dependency
added to pyproject.toml without regenerating the file (scripts/constraints.sh update) fails here, not on a new machine.
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("test", "ray", "research", "train")  # what .ci/run installs
TEST_TOOLS = ("pytest", "hypothesis", "mypy", "ruff", "httpx", "trustme", "playwright", "openapi-core")


def pins(path: Path = ROOT / "constraints.txt") -> dict[str, str]:
    found: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)", line)
        assert match, f"{path.name} line {number} is not name==version: {line!r}"
        found[canonicalize_name(match[1])] = match[2]
    return found


def direct_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = list(project["dependencies"])
    for extra in EXTRAS:
        listed += project["optional-dependencies"][extra]
    return [Requirement(text) for text in listed]


def applies(requirement: Requirement, extra: str = "") -> bool:
    return requirement.marker is None or requirement.marker.evaluate({"extra": extra})  # over the default environment


def test_every_direct_requirement_is_pinned_inside_its_range() -> None:
    pinned = pins()
    for requirement in direct_requirements():
        if not applies(requirement):
            continue
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement.name} is in pyproject.toml but not in constraints.txt"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"constraints.txt pins {requirement.name}=={pinned[name]}, outside pyproject.toml's {requirement}"
        )


def test_the_test_tools_are_bounded_below_their_next_major_version() -> None:
    by_name = {canonicalize_name(r.name): r for r in direct_requirements()}
    for tool in TEST_TOOLS:
        specifier = by_name[canonicalize_name(tool)].specifier
        assert any(spec.operator in ("<", "==") for spec in specifier), f"{tool} has no upper bound in pyproject.toml"


def installed_closure() -> dict[str, str]:
    """The installed distributions that polignac-arena[test,ray] needs, directly or not, with their versions."""
    try:
        ours = metadata.distribution("polignac-arena")
    except metadata.PackageNotFoundError:
        pytest.skip("polignac-arena is not installed (pip install -e '.[test]')")
    wanted = [r for r in map(Requirement, ours.requires or []) if any(applies(r, extra) for extra in ("", *EXTRAS))]
    seen: dict[str, str] = {}
    while wanted:
        requirement = wanted.pop()
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue  # an extra this machine did not install (ray, say)
        seen[name] = dist.version
        extras = ("", *sorted(requirement.extras))
        wanted += [r for r in map(Requirement, dist.requires or []) if any(applies(r, extra) for extra in extras)]
    return seen


def test_every_installed_dependency_direct_or_not_is_pinned() -> None:
    missing = sorted(set(installed_closure()) - set(pins()))
    assert missing == [], f"not in constraints.txt (run scripts/constraints.sh update): {missing}"


@pytest.mark.skipif(not os.environ.get("PIP_CONSTRAINT"), reason="installed without constraints (only .ci/run installs through them)")
def test_under_ci_every_dependency_is_at_its_pinned_version() -> None:
    """What .ci/run installed matches the file it installed through (constraints.txt, or POLIGNAC_CONSTRAINTS's)."""
    used = Path(os.environ["PIP_CONSTRAINT"])
    pinned = pins(used)
    off = {name: (version, pinned[name]) for name, version in installed_closure().items() if pinned.get(name) != version}
    assert off == {}, f"installed (left) differs from {used} (right): {off}"


def test_ci_installs_through_the_constraints_file() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "PIP_CONSTRAINT" in ci and "constraints.txt" in ci
