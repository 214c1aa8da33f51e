"""Protocol versions: what a client's Hello says it speaks, and the games it may then be seated in.

The referee speaks polignac.v1 at minor version 1.3.  A client says ``"1"``, ``"1.0"``,
``"1.1"``, ``"1.2"`` or ``"1.3"`` (docs/protocol.md, "Versions").  Minor versions only add
fields, so an older client plays every game its Ruleset message describes in full, ignoring
the new fields; a game that needs a later setting (1.1: the 52-card pack, trumps, ...; 1.2: a
made general's own score) would be a different game to it than the one it is dealt, so it is
refused at its Hello instead, naming the game and the settings.  1.3 adds only a field a bot
sends (a decision's ``debug``): it changes no game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from polignac.rules import Direction, HandScore, Ruleset, Tiebreak, Trumps

__all__ = ["SPOKEN", "ProtocolVersion", "beyond", "beyond_1_0", "parse_version", "refusal"]

SPOKEN: Final = "1.3"
"""The version this referee speaks."""
_MAJOR: Final = "1"


@dataclass(frozen=True, slots=True, order=True)
class ProtocolVersion:
    """A version a client said, read as (major, minor)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


def parse_version(text: str) -> ProtocolVersion | None:
    """The version of a Hello's ``protocol_version``, or ``None`` when its major version is not 1.

    The major version is the text before the first ``.``, exactly ``1``.  The minor version
    is the whole number the rest starts with; without one (``"1"``, ``"1.x"``) it is 0, the
    version that knows least, so a client that was accepted before 1.1 still is.
    """
    major, _, rest = text.partition(".")
    if major != _MAJOR:
        return None
    digits = len(rest) - len(rest.lstrip("0123456789"))
    minor = int(rest[:digits][:6]) if digits else 0
    return ProtocolVersion(1, minor)


def beyond_1_0(rules: Ruleset) -> list[str]:
    """The settings of ``rules`` that the Ruleset message of protocol 1.0 cannot carry, as ``name = value``.

    Empty for the games 1.0 describes in full: the 32-card French games and the
    German-faced ones (faces change no card's wire text).
    """
    gaps = []
    if rules.pack != 32:
        gaps.append(f"pack = {rules.pack}")
    if rules.trumps is not Trumps.NONE:
        gaps.append(f"trumps = {rules.trumps.value!r}")
    if rules.trick_points:
        gaps.append(f"trick_points = {rules.trick_points}")
    if rules.hand_score is not HandScore.POINTS:
        gaps.append(f"hand_score = {rules.hand_score.value!r}")
    if rules.direction is not Direction.LOWER:
        gaps.append(f"direction = {rules.direction.value!r}")
    if rules.tiebreak is not Tiebreak.TIED:
        gaps.append(f"tiebreak = {rules.tiebreak.value!r}")
    return gaps


def beyond(version: ProtocolVersion, rules: Ruleset) -> list[str]:
    """The settings of ``rules`` that the Ruleset message of ``version`` cannot carry, as ``name = value``.

    1.0 lacks the fields of :func:`beyond_1_0`; before 1.2 a made general scored
    ``-contract_points`` for its declarer, so another ``general_points`` (with general on) is
    a game such a client would misread.
    """
    gaps = beyond_1_0(rules) if version.minor < 1 else []
    if version.minor < 2 and rules.general and rules.general_points != -rules.contract_points:
        gaps.append(f"general_points = {rules.general_points}")
    return gaps


def refusal(text: str, rules: Ruleset) -> str | None:
    """Why a client saying ``text`` may not play a game of ``rules``, or ``None`` when it may."""
    version = parse_version(text)
    if version is None:
        return f'protocol version {text[:20]!r} is not supported; this referee speaks {SPOKEN} (say "{SPOKEN}", or "1.0")'
    gaps = beyond(version, rules)
    if not gaps:
        return None
    return (
        f"protocol version {text[:20]!r} means {version.major}.{min(version.minor, 1)}, which cannot describe the game"
        f" {rules.name!r} ({', '.join(gaps)}); a client of protocol {SPOKEN} can play it: say protocol_version"
        f' "{SPOKEN}" and read the new Ruleset fields (docs/protocol.md)'
    )
