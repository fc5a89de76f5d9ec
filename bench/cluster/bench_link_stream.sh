#!/usr/bin/env bash
# What payload one direction of an emulated link carries when it is never
# idle: B as bench/cluster/cluster_bounds.py takes it, measured. Two hosts,
# uncapped; a TCP stream of SECONDS_PER_STREAM from host 1 to host 2, then
# streams both ways at once (each direction also carries the other's ACKs),
# REPS times each. Prints per stream the receiver's MB/s (10^6 bytes/s of
# payload), their medians, and beside them the payload the links' token
# bucket passes at its rate,
#   rate/8 * 1448 / 1514
# as bench/cluster/cluster_bounds.py takes it: tbf on a veth counts each frame
# whole, 1,448 bytes of TCP payload (the MSS with timestamps) in 1,514
# (Ethernet 14, IP 20, TCP 32 with timestamps). The link probe's ping-pong
# reads more (120.5 MB/s at 1 Gbit/s against 119.55 here): each of its
# messages starts on an idle link, with the bucket's burst in hand.
# Needs root.
#   bench/cluster/bench_link_stream.sh [path/to/dmlbench]
#   env: NETWORK (1gbit), SECONDS_PER_STREAM (3), REPS (3)
set -euo pipefail
DMLBENCH=$(realpath "${1:-build/orchestrator/dmlbench}")
NETWORK=${NETWORK:-1gbit}
SECONDS_PER_STREAM=${SECONDS_PER_STREAM:-3}
REPS=${REPS:-3}
PYTHON=/usr/bin/python3
source "$(dirname "$0")/cluster_lib.sh"
cluster_up ls 2 "$NETWORK" ""
cat "$work/cluster-up.txt"

# One end of a stream, in a host's namespace. `serve PORT`: accept one
# connection, read the mode it sends ("one" or "both"), receive until the
# peer closes, sending meanwhile when the mode is "both"; `connect HOST PORT
# MODE`: the other end. Each end that receives prints its payload rate.
cat > "$work/stream.py" <<'EOF'
import socket, sys, threading, time

SECONDS = float(sys.argv[-1])
CHUNK = b"\0" * (1 << 20)

def receive(conn, rates):
    total, first = 0, None
    while data := conn.recv(1 << 20):
        first = first or time.monotonic()
        total += len(data)
    rates.append(total / (time.monotonic() - first) / 1e6)

def send(conn):
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        conn.sendall(CHUNK)
    conn.shutdown(socket.SHUT_WR)

def run(conn, both):
    rates = []
    receiver = threading.Thread(target=receive, args=(conn, rates))
    receiver.start()
    if both:
        send(conn)
    receiver.join()
    return rates[0]

if sys.argv[1] == "serve":
    server = socket.create_server(("", int(sys.argv[2])))
    conn, _ = server.accept()
    mode = conn.recv(4)
    print(f"{run(conn, mode == b'both'):.3f}")
else:
    conn = socket.create_connection((sys.argv[2], int(sys.argv[3])))
    conn.sendall(sys.argv[4].encode())
    time.sleep(0.1)  # the mode arrives alone
    rates = []
    receiver = threading.Thread(target=receive, args=(conn, rates)) if sys.argv[4] == "both" else None
    if receiver:
        receiver.start()
    send(conn)
    if receiver:
        receiver.join()
        print(f"{rates[0]:.3f}")
    else:
        conn.recv(1)  # the server closes when it has everything
EOF

# stream MODE: one stream (MODE one) or two (both); prints the receivers' MB/s.
stream() {
  local port=$((5200 + RANDOM % 1000)) out
  out="$work/serve.$port"
  ip netns exec "${names[1]}" "$PYTHON" "$work/stream.py" serve "$port" "$SECONDS_PER_STREAM" > "$out" &
  local server=$!
  sleep 0.3
  ip netns exec "${names[0]}" "$PYTHON" "$work/stream.py" connect "${addresses[1]}" "$port" "$1" "$SECONDS_PER_STREAM"
  wait "$server"
  cat "$out"
}

read -r _ payload < <("$PYTHON" "$(dirname "$0")/cluster_bounds.py" link \
  "$(ip netns exec "${names[0]}" tc qdisc show dev eth0 | grep -m1 ' tbf ')")
[[ -n ${payload:-} ]] || exit 1  # cluster_bounds.py said why
payload=$(awk -v p="$payload" 'BEGIN { printf "%.3f", p / 1e6 }')
one=() both=()
for ((rep = 1; rep <= REPS; rep++)); do
  mapfile -t r < <(stream one)
  one+=("${r[@]}")
  mapfile -t r < <(stream both)
  both+=("${r[@]}")
  echo "rep $rep: one way ${one[-1]} MB/s; both ways ${r[*]} MB/s"
done
median() { printf '%s\n' "$@" | awk -f "$(dirname "$0")/../column_medians.awk"; }
printf '%s links, streams of %s s, medians of %d: one way %s MB/s, each of two ways %s MB/s; the bucket passes %s MB/s of payload (1448 of 1514 bytes)\n' \
  "$NETWORK" "$SECONDS_PER_STREAM" "$REPS" "$(median "${one[@]}")" "$(median "${both[@]}")" "$payload"
