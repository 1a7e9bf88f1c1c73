#!/usr/bin/env bash
# A Spark standalone cluster on this machine: one master and N workers (default 2), run from
# the PySpark installed in the venv (no separate Spark download).
#
#   scripts/cluster.sh start    # start what is not running; wait until every worker is registered
#   scripts/cluster.sh stop     # stop the workers (and their executors), then the master
#   scripts/cluster.sh status   # what runs, and the master's view of its workers
#
# Then: python -m server --spark-master spark://127.0.0.1:$MASTER_PORT --data-dir /abs/path
#
# Settings (environment; defaults in brackets):
#   PYTHON [.venv/bin/python]       the interpreter whose PySpark runs the daemons; executors'
#                                   Python UDF workers run it too (PYSPARK_PYTHON)
#   CLUSTER_DIR [.cluster]          logs, pid files and the workers' work directories
#   CLUSTER_HOST [127.0.0.1]        the address every daemon binds to and advertises
#   MASTER_PORT [17077]             the master's RPC port (the spark:// URL)
#   MASTER_UI_PORT [17080]          the master's web UI (also its JSON status: /json/)
#   WORKERS [2]                     workers to start
#   WORKER_PORT_BASE [17090]        worker i (1-based) listens on BASE+i
#   WORKER_UI_PORT_BASE [17100]     worker i's web UI on BASE+i
#   WORKER_CORES [1]  WORKER_MEMORY [1g]   what each worker offers to executors
#   READY_TIMEOUT [90]              seconds to wait for the master and all workers
#
# Idempotent: `start` starts only daemons whose pid file names no live process (so it also
# brings back a worker that died), `stop` of a stopped cluster does nothing.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
CLUSTER_DIR=${CLUSTER_DIR:-.cluster}
CLUSTER_HOST=${CLUSTER_HOST:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-17077}
MASTER_UI_PORT=${MASTER_UI_PORT:-17080}
WORKERS=${WORKERS:-2}
WORKER_PORT_BASE=${WORKER_PORT_BASE:-17090}
WORKER_UI_PORT_BASE=${WORKER_UI_PORT_BASE:-17100}
WORKER_CORES=${WORKER_CORES:-1}
WORKER_MEMORY=${WORKER_MEMORY:-1g}
READY_TIMEOUT=${READY_TIMEOUT:-90}

MASTER_URL="spark://$CLUSTER_HOST:$MASTER_PORT"
mkdir -p "$CLUSTER_DIR"
CLUSTER_DIR=$(cd "$CLUSTER_DIR" && pwd)

spark_home() {
  "$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'
}

spark_group() {  # spark_group PGID: the process group exists and runs Spark (never a reused pid)
  ps -eo pgid=,args= | awk -v g="$1" '$1 == g && /org\.apache\.spark|pyspark/ {found = 1} END {exit !found}'
}

alive() {  # alive NAME: the daemon's pid file names a running Spark daemon
  local f="$CLUSTER_DIR/$1.pid" pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  kill -0 "$pid" 2>/dev/null && ps -o args= -p "$pid" | grep -q 'org\.apache\.spark\.deploy'
}

launch() {  # launch NAME CLASS ARGS...: spark-class execs the JVM, so $! is the JVM's pid
  local name=$1; shift
  if alive "$name"; then
    echo "$name already running (pid $(cat "$CLUSTER_DIR/$name.pid"))"
    return
  fi
  local py home
  py=$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")
  home=$(spark_home)
  # own session (setsid): a Ctrl-C in the shell that ran `start` does not stop the cluster
  SPARK_HOME="$home" PYSPARK_PYTHON="$py" SPARK_LOCAL_IP="$CLUSTER_HOST" \
    SPARK_LOG_DIR="$CLUSTER_DIR" SPARK_DAEMON_MEMORY=${SPARK_DAEMON_MEMORY:-256m} \
    setsid "$home/bin/spark-class" "$@" >>"$CLUSTER_DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$CLUSTER_DIR/$name.pid"
  echo "$name started (pid $!, log $CLUSTER_DIR/$name.log)"
}

master_json() {
  "$PYTHON" - "$CLUSTER_HOST" "$MASTER_UI_PORT" <<'EOF'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(f"http://{sys.argv[1]}:{sys.argv[2]}/json/", timeout=2) as r:
        d = json.load(r)
except Exception:
    sys.exit(1)
alive = [w for w in d.get("workers", []) if w.get("state") == "ALIVE"]
print(d.get("status", "?"), len(alive), " ".join(f"{w['host']}:{w['port']}" for w in alive))
EOF
}

start() {
  launch master org.apache.spark.deploy.master.Master \
    --host "$CLUSTER_HOST" --port "$MASTER_PORT" --webui-port "$MASTER_UI_PORT"
  for i in $(seq 1 "$WORKERS"); do
    mkdir -p "$CLUSTER_DIR/work-$i"
    launch "worker-$i" org.apache.spark.deploy.worker.Worker \
      --host "$CLUSTER_HOST" --port $((WORKER_PORT_BASE + i)) --webui-port $((WORKER_UI_PORT_BASE + i)) \
      --cores "$WORKER_CORES" --memory "$WORKER_MEMORY" --work-dir "$CLUSTER_DIR/work-$i" "$MASTER_URL"
  done
  # ready: the master is ALIVE and reports a live worker on each of our workers' ports
  local deadline=$((SECONDS + READY_TIMEOUT)) want status
  want=$(for i in $(seq 1 "$WORKERS"); do printf '%s:%s\n' "$CLUSTER_HOST" $((WORKER_PORT_BASE + i)); done | sort)
  while true; do
    status=$(master_json || true)
    if [ -n "$status" ] && [ "${status%% *}" = ALIVE ] &&
       [ -z "$(comm -23 <(echo "$want") <(echo "$status" | cut -d' ' -f3- | tr ' ' '\n' | sort))" ]; then
      echo "cluster ready: $MASTER_URL, $WORKERS workers (master UI http://$CLUSTER_HOST:$MASTER_UI_PORT)"
      return 0
    fi
    for name in master $(seq -f 'worker-%g' 1 "$WORKERS"); do
      if ! alive "$name"; then
        echo "$name exited; its log:" >&2
        tail -n 30 "$CLUSTER_DIR/$name.log" >&2
        return 1
      fi
    done
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster not ready after ${READY_TIMEOUT}s (master says: ${status:-no answer})" >&2
      return 1
    fi
    sleep 0.5
  done
}

stop_one() {  # stop_one NAME: SIGTERM to the daemon's process group (a worker's executors are
  # in it too, even once orphaned by a killed worker), SIGKILL after 20 s
  local f="$CLUSTER_DIR/$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if spark_group "$pid"; then
    kill -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do spark_group "$pid" || break; sleep 0.5; done
    if spark_group "$pid"; then kill -9 -- "-$pid" 2>/dev/null || true; fi
    echo "$1 stopped (process group $pid)"
  fi
  rm -f "$f"
}

stop() {
  local f
  for f in "$CLUSTER_DIR"/worker-*.pid; do
    [ -e "$f" ] && stop_one "$(basename "$f" .pid)"
  done
  stop_one master
}

status() {
  local name
  for name in master $(seq -f 'worker-%g' 1 "$WORKERS"); do
    if alive "$name"; then echo "$name: running (pid $(cat "$CLUSTER_DIR/$name.pid"))"; else echo "$name: stopped"; fi
  done
  echo "master: $(master_json || echo 'no answer')"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  url) echo "$MASTER_URL" ;;
  *) echo "usage: $0 start|stop|status|url" >&2; exit 2 ;;
esac
