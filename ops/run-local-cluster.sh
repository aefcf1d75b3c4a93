#!/usr/bin/env bash
# Installs what is missing, builds, and brings up a local Cairn cluster: one master on the
# embedded log and one agent with 4 artificial slots, data under var/local-cluster/. Runs a demo
# workload through the REST API, shows what happened and what replay can tell, then leaves the
# cluster running and prints its URL.
#   ops/run-local-cluster.sh           # embedded log (default)
#   ops/run-local-cluster.sh --kafka   # the log on Kafka (librdkafka's mock cluster)
#   ops/run-local-cluster.sh --stop    # stop a running local cluster
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUN_DIR="$ROOT/var/local-cluster"
DATA_DIR="$RUN_DIR/data"
BIN="$ROOT/build/bin"

stop_cluster() {
  for name in agent master kafka-mock; do
    if [ -f "$RUN_DIR/$name.pid" ]; then
      pid=$(cat "$RUN_DIR/$name.pid")
      if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      fi
      rm -f "$RUN_DIR/$name.pid"
    fi
  done
}

if [ "${1:-}" = "--stop" ]; then
  stop_cluster
  echo "local cluster stopped (data kept in $DATA_DIR)"
  exit 0
fi
MODE=embedded
if [ "${1:-}" = "--kafka" ]; then MODE=kafka; fi

bash ops/install-deps.sh
bash ops/build.sh

stop_cluster
mkdir -p "$RUN_DIR"

# Waits until a log file has a line starting with $2; prints that line.
wait_for_line() {
  local file=$1 prefix=$2
  for _ in $(seq 1 600); do
    if line=$(grep -m1 "^$prefix" "$file" 2>/dev/null); then echo "$line"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$prefix' in $file" >&2
  cat "$file" >&2
  return 1
}

LOG_CONFIG="log:\n  backend: embedded\n"
if [ "$MODE" = kafka ]; then
  "$BIN/cairn-kafka-mock" --brokers 3 --topic-prefix cairn > "$RUN_DIR/kafka-mock.log" 2>&1 &
  echo $! > "$RUN_DIR/kafka-mock.pid"
  BOOTSTRAPS=$(wait_for_line "$RUN_DIR/kafka-mock.log" "cairn-kafka-mock bootstraps:" | awk '{print $3}')
  # The mock keeps its topics in memory: a fresh mock needs fresh projections.
  rm -rf "$DATA_DIR"
  LOG_CONFIG="log:\n  backend: kafka\n  brokers: $BOOTSTRAPS\n  topic_prefix: cairn\n"
fi

printf "port: 0\ndata_dir: %s\ncluster_name: local\n$LOG_CONFIG" "$DATA_DIR" > "$RUN_DIR/master.yaml"
"$BIN/cairn-master" --config "$RUN_DIR/master.yaml" > "$RUN_DIR/master.log" 2>&1 &
echo $! > "$RUN_DIR/master.pid"
URL=$(wait_for_line "$RUN_DIR/master.log" "cairn-master listening on" | awk '{print $4}')

# runtime_packages come from $RUN_DIR/wheels (examples/prepared-env/build-wheel.sh fills it):
# this machine reaches no Python package index. A process agent on a developer's machine: tasks
# that name an image (OpenPAI jobs always do) run here anyway, with a warning in their logs.
mkdir -p "$RUN_DIR/wheels"
"$BIN/cairn-agent" --master "$URL" --id local-agent --slots 4 --work-root "$RUN_DIR/agent-work" \
  --pip-find-links "$RUN_DIR/wheels" --pip-no-index true --allow-images-on-host \
  --agent-token-file "$DATA_DIR/agent-token" > "$RUN_DIR/agent.log" 2>&1 &
echo $! > "$RUN_DIR/agent.pid"
wait_for_line "$RUN_DIR/agent.log" "cairn-agent local-agent registered" > /dev/null

# Every call but the login needs a session: log in as Determined's default user (blank password).
TOKEN=$(curl -sf -X POST "$URL/api/v1/auth/login" -d '{"username":"determined","password":""}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
AUTH="Authorization: Bearer $TOKEN"
submit() {
  curl -sf -H "$AUTH" -X POST "$URL/api/v1/commands" -d "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["command"]["id"])'
}
echo
echo "== demo: four commands on a 4-slot agent =="
HELLO=$(submit '{"config":{"entrypoint":["sh","-c","echo hello from $DET_TASK_ID on $DET_AGENT_ID slots $DET_SLOT_IDS"]}}')
PI=$(submit '{"config":{"entrypoint":["python3","-c","import math; print(\"pi ~\", sum(4*(-1)**k/(2*k+1) for k in range(200000)))"],"resources":{"slots":2}}}')
FAIL=$(submit '{"config":{"entrypoint":"echo about to fail >&2; exit 3"}}')
SLEEPER=$(submit '{"config":{"entrypoint":["sleep","300"],"description":"a long sleep we will kill"}}')
for id in "$HELLO" "$PI" "$FAIL"; do
  curl -sf -H "$AUTH" "$URL/api/v1/tasks/$id/logs?follow=true" | python3 -c 'import json,sys
for line in sys.stdin: print("  log:", json.loads(line)["result"]["message"], end="")'
done
curl -sf -H "$AUTH" -X POST "$URL/api/v1/commands/$SLEEPER/kill" > /dev/null
curl -sf -H "$AUTH" "$URL/api/v1/tasks/$SLEEPER/logs?follow=true" > /dev/null
echo
echo "== commands =="
curl -sf -H "$AUTH" "$URL/api/v1/commands" | python3 -c 'import json,sys
for c in json.load(sys.stdin)["commands"]:
    print("  %-36s %-17s %s" % (c["id"], c["state"], c.get("exitStatus","")))'
echo
echo "== demo: a grid search on examples/spiral-mlp (6 trials, real training) =="
sed "s#host_path: /tmp#host_path: $RUN_DIR#" examples/spiral-mlp/grid.yaml > "$RUN_DIR/grid.yaml"
CAIRN_TOKEN="$TOKEN" python3 ops/submit_experiment.py --master "$URL" "$RUN_DIR/grid.yaml" examples/spiral-mlp --wait \
  | sed 's/^/  /'
echo
echo "== registry: the grid's best checkpoint becomes a version of model spiral-mlp =="
GRID=$(curl -sf -H "$AUTH" "$URL/api/v1/experiments" \
  | python3 -c 'import json,sys; print(max(e["id"] for e in json.load(sys.stdin)["experiments"]))')
BEST=$(curl -sf -H "$AUTH" \
  "$URL/api/v1/experiments/$GRID/checkpoints?sortByAttr=SORT_BY_SEARCHER_METRIC&limit=1" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["checkpoints"][0]["uuid"])')
# The model stays from an earlier run on the same data; each run adds a version.
curl -s -H "$AUTH" -X POST "$URL/api/v1/models" -d '{"name":"spiral-mlp"}' > /dev/null
curl -sf -H "$AUTH" -X POST "$URL/api/v1/models/spiral-mlp/versions" -d "{\"checkpointUuid\":\"$BEST\"}" \
  | python3 -c 'import json,sys
v = json.load(sys.stdin)["modelVersion"]
t = v["checkpoint"]["training"]
print("  model %s version %s: checkpoint %s of trial %s, %s" % (v["model"]["name"], v["version"],
      v["checkpoint"]["uuid"], t["trialId"], t.get("validationMetrics", {}).get("avgMetrics")))'
echo
echo "== demo: a notebook and a shell, reached only through the master =="
# Polls the task until its service answers (TaskReady); a script may poll, a test may not.
wait_ready() {
  for _ in $(seq 1 300); do
    if curl -sf -H "$AUTH" "$URL/api/v1/tasks/$1" | python3 -c 'import json,sys
a = json.load(sys.stdin)["task"]["allocations"]; sys.exit(0 if a and a[0]["isReady"] else 1)'; then
      return 0
    fi
    sleep 0.2
  done
  echo "task $1 did not become ready" >&2; return 1
}
NOTEBOOK=$(curl -sf -H "$AUTH" -X POST "$URL/api/v1/notebooks" -d '{"config":{"idle_timeout":"1h"}}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["notebook"]["id"])')
wait_ready "$NOTEBOOK"
curl -sf -H "$AUTH" "$URL/proxy/$NOTEBOOK/api/status" | python3 -c 'import json,sys
s = json.load(sys.stdin); print("  Jupyter answers through the proxy: %d kernels, started %s" % (s["kernels"], s["started"]))'
echo "  notebook $NOTEBOOK: open $URL/det/interactive/$NOTEBOOK/ in a browser (ends after an idle hour)"
SHELL_ID=$(curl -sf -H "$AUTH" -X POST "$URL/api/v1/shells" -d '{}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["shell"]["id"])')
wait_ready "$SHELL_ID"
echo "  cairn shell ssh $SHELL_ID -- hostname:   $(CAIRN_TOKEN="$TOKEN" "$BIN/cairn" shell ssh --master "$URL" "$SHELL_ID" -- hostname)"
curl -sf -H "$AUTH" -X POST "$URL/api/v1/shells/$SHELL_ID/kill" > /dev/null
echo
echo "== demo: an OpenPAI job (examples/openpai-ps-workers), through OpenPAI's REST API =="
PAI_JOB=ps-workers-$(date +%s)
mkdir -p "$DATA_DIR/pai-fs/code/ps-workers"
cp examples/openpai-ps-workers/ps_workers.py "$DATA_DIR/pai-fs/code/ps-workers/"
PAI_TOKEN=$(curl -sf -X POST "$URL/api/v1/token" -d '{"username":"determined","password":""}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["jobName"]=sys.argv[2]; print(json.dumps(j))' \
  examples/openpai-ps-workers/job.json "$PAI_JOB" \
  | curl -sf -H "Authorization: Bearer $PAI_TOKEN" -X POST "$URL/api/v1/user/determined/jobs" -d @- \
  | python3 -c 'import json,sys; print("  " + json.load(sys.stdin)["message"])'
for _ in $(seq 1 600); do
  STATE=$(curl -sf -H "Authorization: Bearer $PAI_TOKEN" "$URL/api/v1/user/determined/jobs/$PAI_JOB" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobStatus"]["state"])')
  case "$STATE" in SUCCEEDED|FAILED|STOPPED) break ;; esac
  sleep 0.2
done
curl -sf -H "Authorization: Bearer $PAI_TOKEN" "$URL/api/v1/user/determined/jobs/$PAI_JOB" | python3 -c 'import json,sys
s = json.load(sys.stdin)
print("  job %s: %s" % (s["name"], s["jobStatus"]["state"]))
for role, r in sorted(s["taskRoles"].items()):
    for t in r["taskStatuses"]:
        print("    %s[%d] %s at %s ports %s" % (role, t["taskIndex"], t["taskState"], t["containerIp"], t["containerPorts"]))'
[ "$STATE" = SUCCEEDED ] || { echo "the OpenPAI job ended $STATE" >&2; exit 1; }
echo
echo "== replay: the cluster as it was at offset 4 =="
if [ "$MODE" = kafka ]; then
  LOG_SOURCE=(--kafka "$BOOTSTRAPS" --topic-prefix cairn)
else
  LOG_SOURCE=(--data "$DATA_DIR")
fi
"$BIN/cairn" replay state "${LOG_SOURCE[@]}" --at-offset 4 | sed 's/^/  /'
echo
echo "== audit: who did what to the killed sleep =="
"$BIN/cairn" replay audit "${LOG_SOURCE[@]}" --entity "task/$SLEEPER" | sed 's/^/  /'
echo
echo "Cairn is running ($MODE log):"
echo "  master  $URL   (logs: $RUN_DIR/master.log)"
echo "  web UI  $URL/   (sign in as admin or determined, blank password)"
echo "  agent   local-agent, 4 slots   (logs: $RUN_DIR/agent.log)"
echo "  try:    TOKEN=\$(curl -s -X POST $URL/api/v1/auth/login -d '{\"username\":\"determined\",\"password\":\"\"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"token\"])')"
echo "          curl -H \"Authorization: Bearer \$TOKEN\" -X POST $URL/api/v1/commands -d '{\"config\":{\"entrypoint\":[\"echo\",\"hi\"]}}'"
echo "          det -m $URL cmd run echo hi      (Determined's CLI, unchanged)"
echo "          det -m $URL notebook start       (Jupyter through $URL/proxy/ID/)"
echo "          det -m $URL shell start -d && CAIRN_TOKEN=\$TOKEN build/bin/cairn shell ssh --master $URL ID"
echo "          ops/submit_experiment.py --master $URL examples/spiral-mlp/adaptive_asha.yaml examples/spiral-mlp --wait"
echo "          build/bin/cairn replay dump ${LOG_SOURCE[*]}"
echo "  stop:   ops/run-local-cluster.sh --stop"
