#!/usr/bin/env bash
# constraints.txt: the exact versions of every Python package, direct or indirect, that the suite last passed with.
# .ci/run installs through it, so CI tests what was tested; pyproject.toml keeps the ranges users install from.
#
#   scripts/constraints.sh newest   the newest releases that pyproject.toml allows, installed without constraints
#                                   into a fresh virtual environment (no pip cache), then the whole suite (.ci/run)
#   scripts/constraints.sh update   the same, then, if the suite passed, constraints.txt rewritten from what ran
#
# Both work on a fresh clone of the committed HEAD (commit first) and need what .ci/run needs (root for apt-get).
set -euo pipefail

mode=${1:-}
case "$mode" in
    newest|update) ;;
    *) echo "usage: scripts/constraints.sh newest|update" >&2; exit 2 ;;
esac

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
work=$(mktemp -d -t polignac-constraints.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "+ fresh clone and virtual environment in $work"
git clone -q "$root" "$work/clone"
python3 -m venv "$work/venv"
# shellcheck disable=SC1091  # made just above
. "$work/venv/bin/activate"
export PIP_NO_CACHE_DIR=1
python -m pip install -q --upgrade pip

status=0
(cd "$work/clone" && POLIGNAC_CONSTRAINTS=none CI=true bash .ci/run) || status=$?
echo "the suite with the newest releases: exit $status; their versions:"
python -m pip freeze --exclude-editable | grep -iE '^(pytest|playwright|grpcio|fastapi|pydantic|ray|hypothesis|mypy|ruff)==' || true
if [ "$mode" = update ]; then
    if [ "$status" -ne 0 ]; then
        echo "constraints.txt left as it was: the suite failed with these versions" >&2
        exit "$status"
    fi
    {
        echo "# The exact versions the suite passed with (Python $(python -c 'import platform; print(platform.python_version())'), $(uname -m))."
        echo "# Made by scripts/constraints.sh update; .ci/run installs through this file. Do not edit by hand."
        python -m pip freeze --all --exclude-editable | grep -v '^pip=='  # setuptools too: grpcio-tools needs it
    } > "$root/constraints.txt"
    echo "wrote $root/constraints.txt"
fi
exit "$status"
