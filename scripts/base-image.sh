#!/usr/bin/env bash
# Make the local base image polignac/base:bookworm (a minimal Debian bookworm root file system, made with
# debootstrap from Debian's mirror and loaded with `docker import`): deploy/Dockerfile starts FROM it, since
# no container registry is used. Idempotent: does nothing when the image already exists. Needs root,
# debootstrap and a running Docker daemon.
# Usage: scripts/base-image.sh [--force]   (POLIGNAC_BASE_IMAGE and DEBIAN_MIRROR override the defaults)
set -euo pipefail

readonly IMAGE=${POLIGNAC_BASE_IMAGE:-polignac/base:bookworm}
readonly MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
force=0
case "${1:-}" in
    "") ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "base-image.sh: unknown option ${1}; usage: scripts/base-image.sh [--force]" >&2; exit 2 ;;
esac

if ! docker info >/dev/null 2>&1; then
    echo "base-image.sh: no Docker daemon answers (start dockerd first)" >&2
    exit 1
fi
if [ "$force" -eq 0 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "base-image.sh: $IMAGE already exists (--force makes it again)"
    exit 0
fi
if ! command -v debootstrap >/dev/null; then
    echo "base-image.sh: debootstrap is not installed (apt-get install debootstrap)" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "base-image.sh: debootstrap needs root" >&2
    exit 1
fi

root=$(mktemp -d /var/tmp/polignac-base.XXXXXX)
trap 'rm -rf --one-file-system "$root"' EXIT
echo "base-image.sh: debootstrap --variant=minbase bookworm from $MIRROR (a few minutes)"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$root.log" 2>&1 || {
    tail -n 20 "$root.log" >&2
    echo "base-image.sh: debootstrap failed (whole log: $root.log)" >&2
    exit 1
}
rm -f "$root.log"
# What a container image does without: package caches, the host's resolver, the mirror's lists.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/* "$root"/var/log/*.log
: >"$root/etc/resolv.conf"
echo "base-image.sh: docker import as $IMAGE"
tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV LANG=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$IMAGE" >/dev/null
docker image inspect "$IMAGE" >/dev/null
echo "base-image.sh: $IMAGE is ready ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
