#!/bin/bash
# What a container of the league image (deploy/Dockerfile) runs; docs/operations.md describes each variable.
#   league       with POLIGNAC_RAY_PORT set: a Ray head of no CPUs on this container first (the league drives
#                the cluster through it: Ray needs a node on the driver's machine), then
#                `polignac league serve --config $POLIGNAC_CONFIG`, with the Ray executor when the head runs
#   ray-worker   a Ray worker node joining the head at $POLIGNAC_RAY_ADDRESS; it plays the league's matches
#   ARGS...      anything else: `polignac ARGS` when the first word starts with '-' or names no program, else ARGS
set -euo pipefail

node_ip=${POLIGNAC_NODE_IP:-127.0.0.1}
object_store=${POLIGNAC_OBJECT_STORE_BYTES:-100000000}
ray=(ray)
case "$node_ip" in
    # `ray start` would swap a loopback address for the machine's outward one: deploy/ray_loopback.py keeps it.
    127.* | ::1) ray=(python /usr/local/lib/polignac/ray_loopback.py) ;;
esac

# A port the OS says is free now: for Ray's ports that nothing outside the container needs to know.
free_port() {
    python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits until HOST:PORT accepts TCP connections, for at most $2 seconds.
wait_for() {
    local host=${1%:*} port=${1##*:} deadline=$((SECONDS + $2))
    until (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "polignac-entrypoint: nothing answers at $1 after $2 s" >&2
            return 1
        fi
        sleep 1
    done
}

# Docker masks parts of a container's /proc (kcore, sysrq-trigger...) with mounts of its own, and the kernel lets a
# sandbox mount its own /proc only where some /proc is wholly visible: a fresh one over it (root with SYS_ADMIN).
fresh_proc() {
    if [ "$(id -u)" -eq 0 ] && mount -t proc -o nosuid,nodev,noexec proc /proc 2>/dev/null; then
        return
    fi
    echo "polignac-entrypoint: cannot mount a fresh /proc (not root, or no SYS_ADMIN): bubblewrap sandboxes will fail" >&2
}

ray_ports() {
    echo --dashboard-agent-listen-port "${POLIGNAC_RAY_AGENT_PORT:-$(free_port)}" \
        --metrics-export-port "${POLIGNAC_RAY_METRICS_PORT:-$(free_port)}"
}

case "${1:-}" in
    league)
        shift
        fresh_proc
        config=${POLIGNAC_CONFIG:-/etc/polignac/league.toml}
        executor=()
        if [ -n "${POLIGNAC_RAY_PORT:-}" ]; then
            echo "polignac-entrypoint: starting the Ray head on $node_ip:$POLIGNAC_RAY_PORT (no CPUs: it only schedules)"
            # shellcheck disable=SC2046  # ray_ports prints options and their values, split on purpose
            "${ray[@]}" start --head --port "$POLIGNAC_RAY_PORT" --node-ip-address "$node_ip" --num-cpus 0 \
                --include-dashboard false --disable-usage-stats --object-store-memory "$object_store" \
                $(ray_ports) >/tmp/ray-head.log 2>&1 || { cat /tmp/ray-head.log >&2; exit 1; }
            executor=(--executor ray --ray-address "$node_ip:$POLIGNAC_RAY_PORT")
        fi
        exec polignac league serve --config "$config" --log-format "${POLIGNAC_LOG_FORMAT:-text}" "${executor[@]}" "$@"
        ;;
    ray-worker)
        shift
        fresh_proc
        head=${POLIGNAC_RAY_ADDRESS:?set POLIGNAC_RAY_ADDRESS to the Ray head HOST:PORT}
        echo "polignac-entrypoint: waiting for the Ray head at $head"
        wait_for "$head" "${POLIGNAC_HEAD_WAIT_S:-120}"
        echo "polignac-entrypoint: joining as worker node ${POLIGNAC_NODE_NAME:-$(hostname)} with ${POLIGNAC_NODE_CPUS:-1} CPU(s)"
        # shellcheck disable=SC2046
        exec "${ray[@]}" start --address "$head" --node-ip-address "$node_ip" --num-cpus "${POLIGNAC_NODE_CPUS:-1}" \
            --disable-usage-stats --object-store-memory "$object_store" $(ray_ports) --block "$@"
        ;;
    "" | -*)
        exec polignac "$@"
        ;;
    *)
        if command -v "$1" >/dev/null; then
            exec "$@"
        fi
        exec polignac "$@"
        ;;
esac
