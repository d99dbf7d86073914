#!/bin/bash
# Ask the real kubelet (standalone, static pods, private containerd 1.6 CRI) which phase,
# reason and message it gives static pods whose requests do not fit the node.
# Based on /work/shared/kubelet-oracle (containerd-up.sh, kubelet-up.sh, kubelet-config.yaml,
# teardown.sh), with its own dirs (/tmp/f14o) and ports (1036x) so it runs beside that harness.
# Usage: admission-oracle.sh [KUBELET_BIN]   (default /tmp/f17/kubelet-build/kubelet)
# Output: /tmp/f14o/out/{pods.json,admission.log}; everything else is torn down at the end.
set -uo pipefail
HERE=$(cd $(dirname $0) && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
BIN=${1:-/tmp/f17/kubelet-build/kubelet}
B=/tmp/f14o; D=$B/kcri; K=$B/kstatic; SOCK=$D/containerd.sock; OUT=$B/out
IMG=actorlet/pause:0.1.0
mkdir -p $D/{root,state,cni/net.d,cni/bin,opt,logs} $K/{manifests,root,logs} $OUT
# the config of test/support/containerdtest (one template for Go and the scripts)
sed -e "s#{{DIR}}#$D#g" -e "s#{{SANDBOX}}#docker.io/$IMG#g" \
  "$REPO_ROOT/test/support/containerdtest/config.toml.tmpl" > $D/config.toml
containerd --config $D/config.toml > $D/logs/containerd.log 2>&1 &
echo $! > $D/containerd.pid
for i in $(seq 50); do ctr -a $SOCK version >/dev/null 2>&1 && break; sleep 0.2; done
ctr -a $SOCK version | grep -A1 Server
docker save $IMG | ctr -a $SOCK -n k8s.io images import - >/dev/null
sed -e "s#/tmp/kstatic#$K#g" -e "s#/tmp/kcri#$D#g" \
    -e 's/^port: 10260/port: 10360/' -e 's/^readOnlyPort: 10265/readOnlyPort: 10365/' \
    -e 's/^healthzPort: 10268/healthzPort: 10368/' /work/shared/kubelet-oracle/kubelet-config.yaml > $K/kubelet-config.yaml
# the manifests go in before the kubelet starts (its first file-source read admits them)
cp $HERE/admission-*.yaml $K/manifests/
$BIN --config $K/kubelet-config.yaml --root-dir $K/root --hostname-override kb-node \
     --cert-dir $K/root/pki --v=4 > $K/logs/kubelet.log 2>&1 &
echo $! > $K/kubelet.pid
for i in $(seq 150); do curl -sf http://127.0.0.1:10368/healthz >/dev/null 2>&1 && break; sleep 0.2; done
$BIN --version
# wait until /pods shows all three pods with a phase other than Pending (or 60 s)
for i in $(seq 120); do
  curl -s http://127.0.0.1:10365/pods > $OUT/pods.json 2>/dev/null
  n=$(jq '[.items[] | select(.status.phase != null and .status.phase != "Pending")] | length' $OUT/pods.json 2>/dev/null || echo 0)
  [ "$n" = 3 ] && break; sleep 0.5
done
curl -s http://127.0.0.1:10365/spec/ > $OUT/machineinfo.json 2>/dev/null
jq -r '.items[] | [.metadata.name, .status.phase, .status.reason, .status.message] | @tsv' $OUT/pods.json
grep -Ei 'admi|preempt|OutOf|reclaim|UnexpectedAdmission' $K/logs/kubelet.log > $OUT/admission.log
cp $K/logs/kubelet.log $OUT/kubelet.log
echo "--- log lines about admission:"; cat $OUT/admission.log
# teardown (as /work/shared/kubelet-oracle/teardown.sh, for these dirs): kubelet, pods, containerd
kill $(cat $K/kubelet.pid); for i in $(seq 50); do kill -0 $(cat $K/kubelet.pid) 2>/dev/null || break; sleep 0.2; done
C="/tmp/f17/bin/crictl --runtime-endpoint unix://$SOCK"
for p in $($C pods -q 2>/dev/null); do $C stopp $p >/dev/null 2>&1; $C rmp -f $p >/dev/null 2>&1; done
for t in $(ctr -a $SOCK -n k8s.io tasks ls -q 2>/dev/null); do ctr -a $SOCK -n k8s.io tasks kill -s SIGKILL $t; ctr -a $SOCK -n k8s.io tasks rm -f $t; done
for c in $(ctr -a $SOCK -n k8s.io containers ls -q 2>/dev/null); do ctr -a $SOCK -n k8s.io containers rm $c; done
ps -eo pid,args | grep '[c]ontainerd-shim' | grep -F "$D" && echo "WARNING: shims of $D still running"
kill $(cat $D/containerd.pid); for i in $(seq 50); do kill -0 $(cat $D/containerd.pid) 2>/dev/null || break; sleep 0.2; done
grep -E " ($D|$K)[/ ]" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l
rm -rf $D $K
for s in /sys/fs/cgroup/*/k8s.io; do [ -d $s ] && rmdir $s 2>/dev/null; done
find /var/log/containers -maxdepth 1 -lname "$K/*" -delete 2>/dev/null
rmdir /var/log/containers /var/log/pods 2>/dev/null
rm -f /var/lib/kubelet/device-plugins/kubelet.sock
rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null
rmdir /run/containerd/runc/k8s.io /run/containerd/runc 2>/dev/null
rmdir /run/mount 2>/dev/null
echo "teardown done; results in $OUT"
