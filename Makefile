# actorlet — build, run the example pods, test.
#   make run         build everything and run the agent on examples/
#   make test        all tests (Docker integration tests included)
#   make clean-pods  remove the containers `make run` left

GO       ?= go
NODE     ?= actorlet-demo
ROOT_DIR ?= $(CURDIR)/build/root
PAUSE_BIN := internal/pauseimage/bin/pause
TEST_FLAGS ?= -race -count=1 -timeout 20m

.PHONY: all build images run test clean-pods clean soak bench conformance

all: build

# The pause binary is embedded in actorlet, which builds the
# actorlet/pause image from it when the image is missing.
$(PAUSE_BIN): $(wildcard images/pause/*.go)
	CGO_ENABLED=0 $(GO) build -ldflags='-s -w' -o $@ ./images/pause

build: $(PAUSE_BIN)
	CGO_ENABLED=0 $(GO) build -o bin/actorlet ./cmd/actorlet

# The test workload image the examples run (built from ./images/testworkload).
images:
	$(GO) run ./test/support/testimages/cmd/buildimages

run: build images kubeconfig
	@echo "actorlet: node $(NODE), manifests examples/ (Ctrl-C leaves the pods running; make clean-pods removes them)"
	@echo "watch: docker ps --filter label=io.actorlet.node=$(NODE)"
	@echo "kubectl: KUBECONFIG=build/kubeconfig kubectl get pods"
	./bin/actorlet run --manifests examples --node-name $(NODE) --root-dir $(ROOT_DIR) --port $(PORT) \
	  --api-token-file build/api-token --tls-cert-file build/tls.crt --tls-private-key-file build/tls.key

# A bearer token for the API, a self-signed certificate (kubectl sends a
# token only over HTTPS) and build/kubeconfig using both, mode 0600.
PORT ?= 10255
.PHONY: kubeconfig
kubeconfig:
	$(GO) run ./hack/kubeconfig -dir build -server https://127.0.0.1:$(PORT) -context $(NODE)

test: $(PAUSE_BIN)
	$(GO) vet ./...
	$(GO) test $(TEST_FLAGS) ./...

clean-pods:
	@ids=$$(docker ps -aq --filter label=io.actorlet.node=$(NODE)); \
	if [ -n "$$ids" ]; then docker rm -f $$ids >/dev/null && echo "removed: $$ids"; else echo "no containers of node $(NODE)"; fi

clean:
	rm -rf bin build $(PAUSE_BIN)

# Benchmarks (issue 7; not part of `make test`): every table of
# BENCHMARKS.md, about 6 minutes on 2 cores; the Docker ones need Docker.
# One, or a quick pass:  make bench BENCH_FLAGS='-only detect -quick'
BENCH_FLAGS ?=
.PHONY: bench
bench:
	$(GO) run ./bench/cmd/actorlet-bench $(BENCH_FLAGS)

# Churn pods on real Docker with random kills of containers and of the
# agent, checking the invariants (not part of make test).
SOAK_DURATION ?= 5m
soak: build images
	$(GO) run ./hack/soak -duration $(SOAK_DURATION) -agent bin/actorlet

# The real kubelet and actorlet, one after the other, on one private
# containerd 1.6 over CRI (issue 17; not part of make test, not in CI):
# builds the kubelet v1.34.4 when KUBELET is not given (~9 min on 2
# cores), then ~15 min of runs; the table goes to stdout, the samples to
# $(CMP_DIR)/results. Needs root, Docker, containerd. See BENCHMARKS.md.
CMP_DIR ?= /tmp/actorlet-conformance
conformance:
	CMP_DIR=$(CMP_DIR) bench/kubelet/run.sh
