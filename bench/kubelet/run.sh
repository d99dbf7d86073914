#!/bin/bash
# `make conformance`: the real kubelet and actorlet, one after the other, on
# the same private containerd 1.6 (CRI), measured by measure.py; not in CI
# (building the kubelet takes about 9 minutes on 2 cores, the run about 15).
# Adapted from ../shared/kubelet-oracle (containerd-up.sh, kubelet-up.sh,
# actorlet-up.sh, run-all.sh, teardown.sh), where actorlet ran on Docker.
#
# Usage: bench/kubelet/run.sh [AGENT...]   (default: kubelet actorlet)
# Environment: CMP_DIR (work directory, default /tmp/actorlet-conformance),
#   KUBELET (binary; default CMP_DIR/kubelet-build/kubelet, built if absent),
#   CRICTL (default: crictl on PATH, else installed into CMP_DIR/bin),
#   CMP_START1 CMP_START20 CMP_RESTART CMP_CRASH_PODS CMP_RESTARTS CMP_IDLE (sample counts; 0 skips a row),
#   CMP_SECCOMP (RuntimeDefault or Unconfined: every pod's seccompProfile, see measure.py),
#   ACTORLET_ARGS (more flags for actorlet run, e.g. --log-level debug: each CRI call timed in its log).
# An AGENT "actorlet=TAG" runs actorlet again on the same containerd (after
# the agents before it), with the flags in ACTORLET_ARGS_TAG and the binary
# ACTORLET_BIN_TAG (default bin/actorlet), its samples in results/TAG/:
# variants and an older build measured in one run, e.g.
#   ACTORLET_ARGS_pps0="--parallel-pod-starts 0" run.sh kubelet actorlet actorlet=pps0
# "kubelet=TAG" runs the kubelet again, its samples in results/TAG/ (the
# agents alternated in one run: kubelet actorlet kubelet=k2 actorlet=a2).
# Needs root, Docker (the images come from it), Debian's containerd and runc.
# Never touches Docker's containerd; run it on a machine where no other
# private containerd uses the k8s.io cgroup parents.
set -euo pipefail
H=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$H/../.." && pwd)
ROOT=$(cd "$H/../.." && pwd)
export CMP_DIR=${CMP_DIR:-/tmp/actorlet-conformance}
D=$CMP_DIR
SOCK=$D/containerd/containerd.sock
AGENTS=${*:-kubelet actorlet}
KUBELET=${KUBELET:-$D/kubelet-build/kubelet}
if [[ " $AGENTS " == *" kubelet "* && ! -x $KUBELET ]]; then
  nice -n 19 "$H/build-kubelet.sh" 1.34.4 "$D/kubelet-build"
fi
if [ -z "${CRICTL:-}" ]; then
  CRICTL=$(command -v crictl || true)
  if [ -z "$CRICTL" ]; then
    [ -x $D/bin/crictl ] || GOBIN=$D/bin go install sigs.k8s.io/cri-tools/cmd/crictl@v1.34.0
    CRICTL=$D/bin/crictl
  fi
fi
export CRICTL
C="$CRICTL --runtime-endpoint unix://$SOCK --image-endpoint unix://$SOCK --timeout 10s"
make -C "$ROOT" build images >/dev/null

containerd_up() {
  mkdir -p $D/containerd/{root,state,cni/net.d,cni/bin,opt}
  # the config of test/support/containerdtest (one template for Go and the scripts)
  sed -e "s#{{DIR}}#$D/containerd#g" -e "s#{{SANDBOX}}#docker.io/actorlet/pause:0.1.0#g" \
    "$REPO_ROOT/test/support/containerdtest/config.toml.tmpl" > $D/containerd/config.toml
  containerd --config $D/containerd/config.toml > $D/containerd/containerd.log 2>&1 &
  echo $! > $D/containerd/containerd.pid
  for i in $(seq 100); do ctr -a $SOCK version >/dev/null 2>&1 && break; sleep 0.2; done
  docker save actorlet/pause:0.1.0 actorlet/testworkload:0.1.0 | ctr -a $SOCK -n k8s.io images import - >/dev/null
  echo "containerd $(ctr -a $SOCK version | awk '/Server/{s=1} s&&/Version/{print $2; exit}') pid $(cat $D/containerd/containerd.pid)"
}

# remove_pods: every CRI pod (so every container) of the private containerd.
remove_pods() {
  for p in $($C pods -q 2>/dev/null); do $C stopp $p >/dev/null 2>&1; $C rmp -f $p >/dev/null 2>&1; done
}

kubelet_up() {
  sed "s|@DIR@|$D|g" "$H/kubelet-config.yaml" > $D/kubelet/config.yaml
  $KUBELET --config $D/kubelet/config.yaml --root-dir $D/kubelet/root --hostname-override kb-node \
    --cert-dir $D/kubelet/root/pki --v=2 > $D/kubelet/logs/kubelet.log 2>&1 &
  echo $! > $D/kubelet/kubelet.pid
  for i in $(seq 150); do curl -sf http://127.0.0.1:10268/healthz >/dev/null 2>&1 && break; sleep 0.2; done
  echo "kubelet $($KUBELET --version) pid $(cat $D/kubelet/kubelet.pid)"
}

actorlet_up() {
  "${ACTORLET_BIN:-$ROOT/bin/actorlet}" run --container-runtime cri --container-runtime-endpoint unix://$SOCK \
    --pod-logs-dir $D/actorlet/pod-logs --manifests $D/actorlet/manifests --node-name cmp-node \
    --root-dir $D/actorlet/root --port 10266 --log-format json "$@" >> $D/actorlet/logs/actorlet.log 2>&1 &
  echo $! > $D/actorlet/actorlet.pid
  for i in $(seq 150); do curl -sf http://127.0.0.1:10266/healthz >/dev/null 2>&1 && break; sleep 0.2; done
  echo "actorlet $(git -C "$ROOT" rev-parse --short HEAD) pid $(cat $D/actorlet/actorlet.pid): $(grep -o '"msg":"container exits: [^"]*"' $D/actorlet/logs/actorlet.log | tail -1)"
}

stop_pid() { # stop_pid PIDFILE: SIGTERM, then wait for it (SIGKILL after 15 s); only if it is still ours
  local p; p=$(cat "$1" 2>/dev/null) || return 0
  { tr '\0' ' ' < /proc/$p/cmdline; } 2>/dev/null | grep -qF -- "$D/" || return 0
  kill $p 2>/dev/null || return 0
  for i in $(seq 75); do kill -0 $p 2>/dev/null || return 0; sleep 0.2; done
  kill -9 $p 2>/dev/null || true
}

teardown() { # also before a run: what a killed run left (best effort: nothing here stops it)
  set +e
  stop_pid $D/actorlet/actorlet.pid
  stop_pid $D/kubelet/kubelet.pid
  rm -f $D/kubelet/manifests/*.json $D/actorlet/manifests/*.json
  if [ -S $SOCK ]; then
    remove_pods
    for t in $(ctr -a $SOCK -n k8s.io tasks ls -q 2>/dev/null); do ctr -a $SOCK -n k8s.io tasks kill -s SIGKILL $t; ctr -a $SOCK -n k8s.io tasks rm -f $t; done
    for c in $(ctr -a $SOCK -n k8s.io containers ls -q 2>/dev/null); do ctr -a $SOCK -n k8s.io containers rm $c; done
  fi
  stop_pid $D/containerd/containerd.pid
  # the kubelet bind-mounts its --root-dir onto itself; the shims mount rootfs and shm
  grep -E " $D[/ ]" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l
  mkdir -p $D/results
  [ -f $D/containerd/containerd.log ] && cp $D/containerd/containerd.log $D/results/
  for a in kubelet actorlet; do [ -d $D/$a/logs ] && cp -r $D/$a/logs $D/results/$a-logs; done
  rm -rf $D/containerd $D/kubelet $D/actorlet
  for s in /sys/fs/cgroup/*/k8s.io; do [ -d $s ] && rmdir $s 2>/dev/null; done
  # what the kubelet writes outside its --root-dir (hard-coded paths)
  find /var/log/containers -maxdepth 1 -lname "$D/*" -delete 2>/dev/null
  rmdir /var/log/containers /var/log/pods 2>/dev/null
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null
  rmdir /run/containerd/runc/k8s.io 2>/dev/null
  rmdir /run/mount 2>/dev/null
  set -e
}
# A fresh start: no containerd, kubelet or actorlet state (actorlet keeps
# each container's CrashLoopBackOff in its root dir) from an earlier run.
teardown
rm -rf $D/results
mkdir -p $D/bin $D/results $D/kubelet/{manifests,root,logs} $D/actorlet/{manifests,root,pod-logs,logs}
trap teardown EXIT

measure() { # measure AGENT: every row, in the same order for both agents (a count of 0 skips the row)
  local M="$H/measure.py $1"
  rm -f $D/results/$1-*.jsonl
  echo "$1 start: $(uptime)" | tee -a $D/results/load.txt
  [ "${CMP_START1:-10}" = 0 ] || $M start1 ${CMP_START1:-10}
  [ "${CMP_START20:-3}" = 0 ] || $M start20 ${CMP_START20:-3}
  [ "${CMP_RESTART:-10}" = 0 ] || $M restart ${CMP_RESTART:-10}
  [ "${CMP_CRASH_PODS:-3}" = 0 ] || $M crash ${CMP_CRASH_PODS:-3}
  for i in $(seq ${CMP_IDLE:-2}); do $M idle 60; done
  echo "$1 end: $(uptime)" | tee -a $D/results/load.txt
}

containerd_up
for a in $AGENTS; do
  case $a in
  kubelet) kubelet_up; measure kubelet; stop_pid $D/kubelet/kubelet.pid ;;
  actorlet) actorlet_up ${ACTORLET_ARGS:-}; measure actorlet; stop_pid $D/actorlet/actorlet.pid ;;
  kubelet=*)
    tag=${a#kubelet=}; mkdir -p $D/results/.keep $D/results/$tag
    mv $D/results/kubelet-*.jsonl $D/results/.keep/ 2>/dev/null || true
    kubelet_up; echo "($tag)" | tee -a $D/results/load.txt; measure kubelet; stop_pid $D/kubelet/kubelet.pid
    mv $D/results/kubelet-*.jsonl $D/results/$tag/; mv $D/results/.keep/* $D/results/ 2>/dev/null || true; rmdir $D/results/.keep ;;
  actorlet=*)
    tag=${a#actorlet=}; args=ACTORLET_ARGS_$tag; bin=ACTORLET_BIN_$tag
    rm -rf $D/actorlet/root && mkdir -p $D/actorlet/root
    ACTORLET_BIN=${!bin:-} actorlet_up ${!args:-}; echo "($tag: ${!bin:-bin/actorlet} ${!args:-})" | tee -a $D/results/load.txt
    mkdir -p $D/results/.keep $D/results/$tag; mv $D/results/actorlet-*.jsonl $D/results/.keep/ 2>/dev/null || true
    measure actorlet; stop_pid $D/actorlet/actorlet.pid
    mv $D/results/actorlet-*.jsonl $D/results/$tag/; mv $D/results/.keep/* $D/results/ 2>/dev/null || true; rmdir $D/results/.keep
    cp $D/results/kubelet-*.jsonl $D/results/$tag/ 2>/dev/null || true ;;
  *) echo "unknown agent $a" >&2; exit 2 ;;
  esac
  remove_pods
done
"$H/summarize.py" $D/results
for a in $AGENTS; do
  case $a in *=*) echo; echo "$a:"; "$H/summarize.py" $D/results/${a#*=} ;; esac
done
