"""Starter kit benchmark: for each language, the kit's size, its build time, its seat's start and its decisions' time.

Run ``python benchmarks/kits.py`` for a table, ``--json`` for one JSON object on stdout.  Each
kit is made afresh by ``polignac bot new LANG-kit --lang LANG`` in ``--out`` (default
``build/kits``, where ``tournaments/languages.toml`` finds them), gets its one networked step
(``npm ci`` for the Node kits), is built in the process seat's sandbox (offline), and plays
``--matches`` classic matches (default 3) in seat 0, in a process seat, against the built-in
``heuristic``, ``cautious`` and ``random`` bots in-process (they join at once, so the seat's
start is the kit's alone).  A kit whose toolchain is missing is listed under ``unavailable``.

What is measured, per kit:

- ``lines``, ``code_lines``: the author's own code (``polignac_arena.templates.KIT_SOURCES``),
  all lines, and those that are neither blank nor only a comment (Python docstrings count as
  comments);
- ``prepare_s``: the networked step, when the kit has one (npm's cache makes a second run fast);
- ``build_s``: the build step in the sandbox, as ``polignac bot check`` runs it;
- ``start_ms``: the median, over the matches, of the time from the seat's launch (the sandbox
  set up, the runtime started, the bot connected, or bridged) to the bot's first answer
  reaching the referee: seat 0 is asked first in hand 1;
- ``decision_ms``: the mean time of the bot's decisions after its first, on the referee's clock
  (from writing the request to reading the answer), in the same matches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from polignac import preset
from polignac._proto.polignac.v1 import referee_pb2 as pb
from polignac_arena.conformance.matches import Scenario, play_scenario
from polignac_arena.referee import TimeControl
from polignac_arena.seats import SeatLimits, launcher_for
from polignac_arena.submission import load_submission
from polignac_arena.templates import KIT_SOURCES, PREPARE, TEMPLATE_LANGUAGES, scaffold

ROOT = Path(__file__).resolve().parent.parent
CLOCK = TimeControl(move_ms=2000, bank_ms=10_000, startup_ms=20_000)
SEED = 1_000
TOOLS = {
    "javascript": ("node", "npm"),
    "typescript": ("node", "npm"),
    "c": ("gcc",),
    "cpp": ("g++", "make", "pkg-config", "protoc", "grpc_cpp_plugin"),
    "go": ("go",),
    "rust": ("cargo",),
    "java": ("javac", "java", "make"),
}
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
_COMMENTS = ("#", "//", "/*", "*", "*/")


def count_lines(folder: Path, lang: str) -> tuple[int, int]:
    """All lines, and code lines, of the kit's own sources."""
    total = code = 0
    for name in KIT_SOURCES[lang]:
        in_docstring = False
        for line in (folder / name).read_text().splitlines():
            total += 1
            text = line.strip()
            quotes = text.count('"""')
            if in_docstring or (quotes and text.startswith('"""')):
                in_docstring = in_docstring != (quotes % 2 == 1)
                continue
            if text and not text.startswith(_COMMENTS):
                code += 1
    return total, code


def unavailable(lang: str) -> str | None:
    missing = [tool for tool in TOOLS.get(lang, ()) if shutil.which(tool, path=SANDBOX_PATH) is None]
    return f"not installed: {', '.join(missing)}" if missing else None


async def measure(lang: str, out: Path, matches: int) -> dict[str, Any]:
    folder = out / f"{lang}-kit"
    if folder.exists():
        shutil.rmtree(folder)
    scaffold(f"{lang}-kit", lang, folder)
    lines, code_lines = count_lines(folder, lang)
    prepare_s = None
    if lang in PREPARE:
        started = time.monotonic()
        env = {**os.environ, "npm_config_update_notifier": "false"}
        command = [*PREPARE[lang].split(), "--no-audit", "--no-fund"]
        subprocess.run(command, cwd=folder, env=env, check=True, capture_output=True, timeout=600)
        prepare_s = time.monotonic() - started
    launcher = launcher_for("process")
    submission = load_submission(folder)
    built = await launcher.build(submission, SeatLimits(), timeout_s=600, trusted=True)
    if not built.ok:
        raise RuntimeError(f"the {lang} kit did not build: {built.reason}\n{built.output[-2000:]}")
    submission = load_submission(folder)
    starts, decisions = [], []
    for number in range(matches):
        first_request: list[float] = []

        def observe(seat: int, message: pb.PlayResponse, first_request: list[float] = first_request) -> None:
            if seat == 0 and not first_request and message.WhichOneof("payload") == "decision_request":
                first_request.append(time.monotonic())

        scenario = Scenario(preset("classic"), SEED + number, CLOCK)
        played = await play_scenario(submission, scenario, launcher, limits=SeatLimits(), trusted=True, observe=observe)
        result = played.result
        if result.status != "finished" or result.faults[0]:
            raise RuntimeError(f"the {lang} kit's match {number} ended {result.status} with faults {result.faults[0]}")
        times = [float(line["ms"]) for line in result.record if line["type"] == "action" and line.get("seat") == 0 and "ms" in line]
        starts.append((first_request[0] + times[0] / 1000 - played.launched_at) * 1000)
        decisions.extend(times[1:])
    return {
        "lang": lang,
        "transport": submission.transport,
        "lines": lines,
        "code_lines": code_lines,
        "prepare_s": round(prepare_s, 1) if prepare_s is not None else None,
        "build_s": round(built.seconds, 1),
        "start_ms": round(statistics.median(starts)),
        "decision_ms": round(statistics.fmean(decisions), 2),
        "decisions": len(decisions),
        "matches": matches,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "kits", help="where the kits are made (default: build/kits)")
    parser.add_argument("--langs", default=",".join(TEMPLATE_LANGUAGES), help="comma-separated languages (default: all eight)")
    parser.add_argument("--matches", type=int, default=3, help="matches per kit (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = parser.parse_args()
    langs = [lang.strip() for lang in args.langs.split(",") if lang.strip()]
    unknown = [lang for lang in langs if lang not in TEMPLATE_LANGUAGES]
    if unknown or args.matches < 1:
        parser.error(
            f"unknown languages {unknown}; choose from {', '.join(TEMPLATE_LANGUAGES)}" if unknown else "--matches must be 1 or more"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    kits, skipped = [], {}
    for lang in langs:
        reason = unavailable(lang)
        if reason is not None:
            skipped[lang] = reason
            continue
        print(f"measuring the {lang} kit ...", file=sys.stderr, flush=True)
        kits.append(asyncio.run(measure(lang, args.out, args.matches)))
    if args.json:
        print(json.dumps({"kits": kits, "unavailable": skipped, "out": str(args.out)}, indent=2))
        return 0
    header = ("kit", "transport", "lines", "code", "prepare s", "build s", "start ms", "decision ms")
    print("  ".join(f"{h:>11}" for h in header))
    for kit in kits:
        prepare = "-" if kit["prepare_s"] is None else f"{kit['prepare_s']:.1f}"
        row = (
            kit["lang"],
            kit["transport"],
            kit["lines"],
            kit["code_lines"],
            prepare,
            f"{kit['build_s']:.1f}",
            kit["start_ms"],
            kit["decision_ms"],
        )
        print("  ".join(f"{cell!s:>11}" for cell in row))
    for lang, reason in skipped.items():
        print(f"{lang}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
