#!/usr/bin/env bash
# Build the league's image (deploy/Dockerfile), tagged polignac/league:local or $POLIGNAC_IMAGE:
#   1. the local base image, when absent (scripts/base-image.sh: debootstrap, docker import);
#   2. the wheels of every dependency at the versions of constraints.txt, into deploy/wheels/, made by this
#      machine's pip (its index and certificates: the image's build reaches no Python index of its own);
#   3. docker build, which reuses every layer whose input did not change.
# Needs Python 3.11 (the image's), pip, a Docker daemon; root for step 1.
# Usage: scripts/league-image.sh
# Environment: PYTHON (the interpreter that makes the wheels, default python3), POLIGNAC_IMAGE (the tag),
# POLIGNAC_BASE_IMAGE (the base, default polignac/base:bookworm), POLIGNAC_EXTRA_PACKAGES (Debian packages the
# image adds, such as the toolchains of bots in other languages: "gcc libc6-dev nodejs").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly IMAGE=${POLIGNAC_IMAGE:-polignac/league:local}
readonly PY=${PYTHON:-python3}
readonly WHEELS=deploy/wheels
case "${1:-}" in
    "") ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "league-image.sh: unknown option $1; usage: scripts/league-image.sh" >&2; exit 2 ;;
esac

if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "league-image.sh: $PY is not Python 3.11 (the image's): set PYTHON to a Python 3.11" >&2
    exit 1
fi
scripts/base-image.sh

echo "league-image.sh: wheels of the dependencies into $WHEELS/ (constraints.txt)"
mkdir -p "$WHEELS"
cp constraints.txt "$WHEELS/constraints.txt"
"$PY" - >"$WHEELS/requirements.txt.new" <<'PYTHON'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
# The league's dependencies, Ray, and what installs the project from its source without an index.
print("\n".join([*project["dependencies"], *project["optional-dependencies"]["ray"], "setuptools>=77", "wheel"]))
PYTHON
mv "$WHEELS/requirements.txt.new" "$WHEELS/requirements.txt"
"$PY" -m pip wheel -qq --disable-pip-version-check -c "$WHEELS/constraints.txt" --find-links "$WHEELS" \
    -w "$WHEELS" -r "$WHEELS/requirements.txt"

echo "league-image.sh: docker build -f deploy/Dockerfile -t $IMAGE ."
docker build -q -f deploy/Dockerfile -t "$IMAGE" --build-arg "BASE_IMAGE=${POLIGNAC_BASE_IMAGE:-polignac/base:bookworm}" \
    --build-arg "EXTRA_PACKAGES=${POLIGNAC_EXTRA_PACKAGES:-}" . >/dev/null
echo "league-image.sh: $IMAGE is ready"
