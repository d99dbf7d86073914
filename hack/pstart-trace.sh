#!/bin/bash
# One host-network pod's start, traced (BENCHMARKS.md section 10): Docker's
# create and start events of its sandbox and app, and the agent's log, in ms
# after the manifest's rename. Usage: hack/pstart-trace.sh ACTORLET_BINARY
# (go build -o /tmp/actorlet ./cmd/actorlet); wrap it in flock /tmp/bench.lock.
# It uses the node name bench-trace16-<random> and removes its containers.
set -e
bin=${1:?usage: $0 ACTORLET_BINARY}
node=bench-trace16-$RANDOM
root=$(mktemp -d); man=$(mktemp -d); stage=$(mktemp -d)
cat > $stage/p.yaml <<YAML
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"tr"},"spec":{"hostNetwork":true,"terminationGracePeriodSeconds":1,"containers":[{"name":"app","image":"actorlet/testworkload:0.1.0"}]}}
YAML
docker events --filter label=io.actorlet.node=$node --filter type=container --format '{{.TimeNano}} {{.Action}} {{index .Actor.Attributes "io.actorlet.container.name"}}' > $stage/events &
ev=$!
"$bin" run --manifests $man --node-name $node --root-dir $root --log-format json --log-level debug --port 0 > $stage/log 2>&1 &
ag=$!
for i in $(seq 1 200); do grep -q '"runtime events' $stage/log 2>/dev/null && break; grep -q 'actorlet running' $stage/log && break; sleep 0.05; done
sleep 0.5
t0=$(date +%s%N); mv $stage/p.yaml $man/p.yaml
for i in $(seq 1 200); do n=$(docker ps --filter label=io.actorlet.node=$node --filter status=running -q | wc -l); [ $n -ge 2 ] && break; sleep 0.05; done
sleep 1
kill $ag; wait $ag 2>/dev/null || true; kill $ev 2>/dev/null || true
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v t0=$t0 '{printf "%7.1f ms  docker %s %s\n", ($1-t0)/1e6, $2, $3}' $stage/events
python3 - "$t0" "$stage/log" <<'PY'
import json,sys
t0=int(sys.argv[1]); 
for l in open(sys.argv[2]):
    try: e=json.loads(l)
    except: continue
    m=e.get("msg","")
    if any(k in m for k in ("pod added","sandbox started","container started","beside","created ahead","starting")):
        print("%7.1f ms  agent %s %s" % ((e["ts"]*1e9-t0)/1e6, m, e.get("container","")))
PY
docker ps -aq --filter label=io.actorlet.node=$node | xargs -r docker rm -f > /dev/null
rm -rf $root $man $stage
