#!/bin/bash
# Build the real kubelet from the Go module proxy (no git clone of kubernetes needed).
# k8s.io/kubernetes's go.mod replaces its staging modules with ./staging/... paths, which
# do not apply when it is a dependency: the wrapper module replaces each with the
# published k8s.io/<module> v0.Y.Z instead.
# Usage: build-kubelet.sh [VERSION] [DIR]   (default 1.34.4, /tmp/kubelet-build)
# From ../shared/kubelet-oracle/build-kubelet.sh (unchanged but for this line). About 9 min on 2 cores.
set -euo pipefail
V=${1:-1.34.4}
DIR=${2:-/tmp/kubelet-build}
mkdir -p $DIR && cd $DIR
curl -sf https://proxy.golang.org/k8s.io/kubernetes/@v/v$V.mod -o kubernetes.mod || \
  (GOFLAGS=-mod=mod go mod download -json k8s.io/kubernetes@v$V | jq -r .GoMod | xargs cat > kubernetes.mod)
{
  echo "module kubeletbuild"; echo; echo "go 1.24.0"; echo; echo "godebug default=go1.24"; echo
  echo "require k8s.io/kubernetes v$V"; echo; echo "replace ("
  grep -E '=> \./staging' kubernetes.mod | awk -v v="v0.${V#1.}" '{print "\t"$1" => "$1" "v}'
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools
package tools
import _ "k8s.io/kubernetes/cmd/kubelet"
GO
time go mod tidy
time CGO_ENABLED=0 go build -ldflags "-X k8s.io/component-base/version.gitVersion=v$V -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${V#1.}" -o $DIR/kubelet k8s.io/kubernetes/cmd/kubelet
$DIR/kubelet --version
