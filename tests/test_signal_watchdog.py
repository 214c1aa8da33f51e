"""Work that does not stop after SIGTERM ends the process anyway, with every thread's stack, instead of hanging."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent(
    """
    import asyncio, signal, sys
    from polignac_arena.signals import Stopped, until_signal

    async def stubborn():
        print("started", flush=True)
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass  # a cleanup that never ends

    try:
        asyncio.run(until_signal(stubborn(), (signal.SIGTERM,), patience_s=1.0, exit_code=130, exit_message="stopped: as the command says"))
    except Stopped:
        sys.exit(3)
    """
)


def test_work_that_ignores_the_signal_ends_with_the_commands_code_and_its_stacks() -> None:
    process = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "started"
        began = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert time.monotonic() - began < 30
    assert "SIGTERM received, but the work did not stop within 1 s" in err and "Thread 0x" in err and "stubborn" in err, err
    assert err.rstrip().endswith("polignac: error: stopped: as the command says"), err


def test_work_that_stops_in_time_is_not_cut_short() -> None:
    script = SCRIPT.replace("pass  # a cleanup that never ends", "raise")
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "started"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 3 and "did not stop" not in err, err
