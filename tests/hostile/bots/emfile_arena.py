"""An arena out of file descriptors: starts docker seats, fills its descriptor table, then stops them.

Run as ``python emfile_arena.py WORKDIR MATCH_ID SEATS``; prints one JSON line: how many
descriptors it filled and what each stop did.  The test checks that no container is left.
"""

import asyncio
import json
import os
import resource
import sys
from pathlib import Path

from polignac_arena.seats import SeatContext, SeatLimits
from polignac_arena.seats.docker import DockerLauncher
from polignac_arena.submission import load_submission

work, match_id, seats = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def context(seat: int) -> SeatContext:
    (work / f"seat{seat}").mkdir()
    return SeatContext(
        seat=seat,
        token="t",
        submission=load_submission(work / "sleeper"),
        limits=SeatLimits(),
        referee_socket=work / "referee" / "referee.sock",
        workdir=work / f"seat{seat}",
        match_id=match_id,
    )


async def main() -> None:
    launcher = DockerLauncher()
    started = [await launcher.start(context(seat)) for seat in range(seats)]
    filler: list[int] = []
    try:
        while True:
            filler.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as exc:
        full = exc.strerror
    outcomes = []
    for result in await asyncio.gather(*(seat.stop() for seat in started), return_exceptions=True):
        outcomes.append("stopped" if result is None else f"{type(result).__name__}: {result}")
    codes = [seat.returncode for seat in started]
    for fd in filler:
        os.close(fd)
    print(json.dumps({"filled": len(filler), "full": full, "stops": outcomes, "codes": codes}), flush=True)


asyncio.run(main())
