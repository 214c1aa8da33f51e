"""Docker seats are removed even when the arena has run out of file descriptors.

A subprocess arena (``bots/emfile_arena.py``) starts seats, lowers nothing else but fills its
whole descriptor table, then stops them all at once: no container may be left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests import docker_images as images

BOTS = Path(__file__).parent / "bots"
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.docker
def test_stopping_seats_with_no_descriptor_left_removes_every_container(tmp_path: Path) -> None:
    problem = images.daemon_problem()
    if problem is not None:
        pytest.skip(problem)
    images.python_submission(tmp_path / "sleeper", "import time\ntime.sleep(600)\n", name="sleeper")
    (tmp_path / "referee").mkdir(mode=0o755)
    match_id = f"emfile{uuid.uuid4().hex[:8]}"
    paths = [os.environ.get("PYTHONPATH", ""), str(ROOT / "sdk"), str(ROOT / "server")]  # the arena under test comes first
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
    try:
        done = subprocess.run(
            [sys.executable, str(BOTS / "emfile_arena.py"), str(tmp_path), match_id, "4"],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        left = images.client().api.containers(all=True, filters={"label": f"polignac.match={match_id}"})
        assert report["full"] == "Too many open files" and report["filled"] > 0, report
        assert left == [], f"containers left behind: {[c['Names'] for c in left]}; {report}; {done.stderr[-2000:]}"
        assert report["stops"] == ["stopped"] * 4 and report["codes"] == [-9] * 4, report
    finally:
        for container in images.client().api.containers(all=True, filters={"label": f"polignac.match={match_id}"}):
            images.client().api.remove_container(container["Id"], force=True, v=True)
