# Ordinal — build, test and demo targets. `make test` is the whole suite; `make check` is the fast inner loop.
SHELL := /bin/bash
GO ?= go
TINYGO_VERSION ?= 0.41.1
TINYGO_PREFIX ?= $(HOME)/.cache/ordinal/tinygo-$(TINYGO_VERSION)-llvm19
TINYGO ?= $(TINYGO_PREFIX)/bin/tinygo
# Flags of the shipped module; RATIONALE.md explains the GC choice.
TINYGO_FLAGS ?= -target=wasip1 -buildmode=c-shared -no-debug -scheduler=none -opt=s -gc=leaking
GUEST_WASM := host/embedded/ordinal.wasm
# The extended module (issue 14): the same guest source with the build tag ordinal_extended.
EXTENDED_WASM := host/embedded/ordinal-extended.wasm
GUEST_STDGO_WASM := build/ordinal-stdgo.wasm
# internal/ too: the guest imports some of its packages (jsonv, ordinal, quantity), and a change there must rebuild it
GUEST_SRC := $(shell find guest internal -name '*.go' -not -name '*_test.go') go.mod go.sum
# Nothing needs cgo: every Go build is static (the binary of `make image` runs on a scratch base), and
# builds, vet and tests share one build cache instead of compiling everything once per cgo setting.
export CGO_ENABLED ?= 0

.PHONY: all tinygo guest check-embedded policies check-policies guest-stdgo testmodules build image demo docs test vet check bench clean

all: build

# TinyGo is installed by the project (Go module proxy + Debian packages), cached under ~/.cache.
tinygo: $(TINYGO)
$(TINYGO):
	TINYGO_VERSION=$(TINYGO_VERSION) PREFIX=$(TINYGO_PREFIX) bash scripts/install-tinygo.sh

# The module is built into build/ and copied to host/embedded/ (committed, so `go build` needs no TinyGo).
GUEST_BUILD := build/ordinal.wasm
$(GUEST_BUILD): $(GUEST_SRC) | $(TINYGO)
	@mkdir -p $(dir $@)
	$(TINYGO) build $(TINYGO_FLAGS) -o $@.tmp ./guest 2> >(grep -v 'is not a recognized feature for this target' >&2)
	mv $@.tmp $@

EXTENDED_BUILD := build/ordinal-extended.wasm
$(EXTENDED_BUILD): $(GUEST_SRC) | $(TINYGO)
	@mkdir -p $(dir $@)
	$(TINYGO) build $(TINYGO_FLAGS) -tags ordinal_extended -o $@.tmp ./guest 2> >(grep -v 'is not a recognized feature for this target' >&2)
	mv $@.tmp $@

# GUEST_INPUTS is the digest of what the modules are built from (scripts/guest-inputs.sh), committed with
# them: `make build` compares it to decide whether the committed modules are current.
GUEST_INPUTS := host/embedded/guest-inputs.sha256
guest_inputs = TINYGO_VERSION=$(TINYGO_VERSION) TINYGO_FLAGS="$(TINYGO_FLAGS)" GO=$(GO) bash scripts/guest-inputs.sh
guest: $(GUEST_BUILD) $(EXTENDED_BUILD)
	cp $(GUEST_BUILD) $(GUEST_WASM)
	cp $(EXTENDED_BUILD) $(EXTENDED_WASM)
	$(guest_inputs) > $(GUEST_INPUTS)

# TinyGo builds are reproducible, so the committed modules must equal fresh builds of the committed source.
check-embedded: $(GUEST_BUILD) $(EXTENDED_BUILD)
	@cmp -s $(GUEST_BUILD) $(GUEST_WASM) || { echo "host/embedded/ordinal.wasm is stale: run 'make guest' and commit it" >&2; exit 1; }
	@cmp -s $(EXTENDED_BUILD) $(EXTENDED_WASM) || { echo "host/embedded/ordinal-extended.wasm is stale: run 'make guest' and commit it" >&2; exit 1; }
	@[ "$$($(guest_inputs))" = "$$(cat $(GUEST_INPUTS))" ] || { echo "$(GUEST_INPUTS) is stale: run 'make guest' and commit it" >&2; exit 1; }
	@echo "embedded modules match fresh TinyGo builds of guest/"

# The shipped policy modules (policies/NAME/NAME.wasm, embedded by the binary): rebuilt from their source;
# check-policies (part of `make test`) fails when a committed build is not what the source builds.
policies: | $(TINYGO)
	TINYGO=$(TINYGO) bash policies/build.sh
check-policies: | $(TINYGO)
	@rm -rf build/policies && mkdir -p build/policies
	@TINYGO=$(TINYGO) bash policies/build.sh build/policies >/dev/null
	@for f in build/policies/*.wasm; do n=$$(basename $$f .wasm); d=$${n%-as}; cmp -s $$f policies/$$d/$$n.wasm || { echo "policies/$$d/$$n.wasm is stale: run 'make policies' and commit it" >&2; exit 1; }; done
	@echo "policy modules match fresh builds of policies/ (TinyGo, AssemblyScript)"

# Small misbehaving modules (trap, loop, oom, ...) for the host's containment tests; committed like the default.
testmodules: | $(TINYGO)
	TINYGO=$(TINYGO) bash host/wasm/testdata/build.sh
	TINYGO=$(TINYGO) TINYGO_FLAGS="$(TINYGO_FLAGS)" bash host/controller/testdata/modules/build.sh

# Standard Go build of the same guest source: a second target to tell TinyGo bugs from logic bugs.
guest-stdgo: $(GUEST_STDGO_WASM)
$(GUEST_STDGO_WASM): $(GUEST_SRC)
	@mkdir -p $(dir $@)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./guest

# The binary embeds the committed modules (make test proves them current): TinyGo runs only when what they
# are built from (scripts/guest-inputs.sh: the guest's packages, go.mod, go.sum, the TinyGo flags) is not
# what they were built from, so a fresh clone builds and demos in a Go build's time.
build:
	@if [ "$$($(guest_inputs))" != "$$(cat $(GUEST_INPUTS) 2>/dev/null)" ]; then \
		echo "the guest's sources changed since the embedded modules were built: rebuilding them"; $(MAKE) guest; fi
	@mkdir -p bin
	$(GO) build -o bin/ordinal ./cmd/ordinal

# The container image, without Docker (hack/image, go-containerregistry), for linux/amd64 and linux/arm64:
# per architecture scratch, the static binary (the committed embedded module, as `go build`; no TinyGo;
# CGO_ENABLED=0 cross-compiles), CA certificates, user 65532, OCI labels; the two images are one OCI image
# index. build/ordinal-image.tar is an OCI image layout tarball (plus a docker-save manifest.json for the
# amd64 image) tagged ghcr.io/ordinal-dev/ordinal:vVERSION (the module version the binary reports, the tag of
# examples/deploy); build/ordinal-image/ is the same layout as a directory (`crane push` takes the index from
# it). Reproducible (SOURCE_DATE_EPOCH, else the commit time). -s -w only changes the link, so the build cache
# of vet and tests is reused for amd64; IMAGE_GOFLAGS=-trimpath also drops the checkout's path (a full
# recompile). hack/image's test reads the index, checks each platform's binary and runs the native one.
IMAGE_TAR := build/ordinal-image.tar
IMAGE_LAYOUT := build/ordinal-image
IMAGE_ARCHS ?= amd64 arm64
IMAGE_GOFLAGS ?=
# The binary reports VERSION_STAMP as its host version (module version + commit) rather than "devel".
VERSION_STAMP ?= $(shell sed -n 's/^[[:space:]]*ModuleVersion *= "\(.*\)"/\1/p' guest/statefulset/plan.go)+$(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
image:
	@mkdir -p build/image
	@for a in $(IMAGE_ARCHS); do echo "GOARCH=$$a go build -o build/image/ordinal-$$a ./cmd/ordinal"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$a $(GO) build $(IMAGE_GOFLAGS) -ldflags='-s -w -X github.com/ordinal-dev/ordinal/host/cli.stampedVersion=$(VERSION_STAMP)' -o build/image/ordinal-$$a ./cmd/ordinal || exit 1; done
	$(GO) run ./hack/image -version $(firstword $(subst +, ,$(VERSION_STAMP))) $(foreach a,$(IMAGE_ARCHS),-binary build/image/ordinal-$(a)) -out $(IMAGE_TAR) -layout $(IMAGE_LAYOUT)

# The CRD statefulsets.ordinal.dev (CRD mode, host/crd), generated from host/crd/types.go by controller-gen at a
# pinned version through `go run pkg@version` (nothing in go.mod), with the module cache as the first proxy:
# offline once downloaded (`go run pkg@version` looks the module up for deprecations, which fails offline
# through the network proxy alone). generateEmbeddedObjectMeta keeps the pod and claim templates' metadata (labels, annotations):
# without it the API server prunes them. maxDescLen=0: with upstream's descriptions the CRD is 350 kB of
# JSON, over the 256 KiB annotation limit of `kubectl apply`'s last-applied-configuration (RATIONALE.md).
# `make crd` writes the three copies; check-crd (part of `make test`) fails when they are not what the
# generator makes; host/crd's tests (part of `make check`) compare the copies and the schema's fields.
# hack/crd-defaults adds what controller-gen cannot say of a type host/crd does not own: the defaults
# kube-apiserver gives volumeClaimTemplates (an immutable field it compares after defaulting).
CONTROLLER_GEN ?= GOPROXY="file://$$($(GO) env GOMODCACHE)/cache/download,$$($(GO) env GOPROXY)" $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
CRD_FLAGS := crd:generateEmbeddedObjectMeta=true,maxDescLen=0 paths=./host/crd/ output:crd:stdout
CRD := host/crd/statefulsets.ordinal.dev.yaml
CRD_COPIES := examples/deploy/crd.yaml examples/helm/ordinal/crds/statefulsets.ordinal.dev.yaml
.PHONY: crd check-crd
crd:
	@mkdir -p build
	set -o pipefail; $(CONTROLLER_GEN) $(CRD_FLAGS) | $(GO) run ./hack/crd-defaults > build/crd.yaml
	cp build/crd.yaml $(CRD)
	@for f in $(CRD_COPIES); do mkdir -p $$(dirname $$f) && cp $(CRD) $$f; done
check-crd:
	@mkdir -p build
	set -o pipefail; $(CONTROLLER_GEN) $(CRD_FLAGS) | $(GO) run ./hack/crd-defaults > build/crd-check.yaml
	@for f in $(CRD) $(CRD_COPIES); do cmp -s build/crd-check.yaml $$f || { echo "$$f is not what controller-gen makes of host/crd: run 'make crd' and commit it" >&2; exit 1; }; done
	@echo "the CRD statefulsets.ordinal.dev and its copies match a fresh controller-gen run"

# The 5-replica maxUnavailable rollout replayed in virtual time; the picture goes next to the scenario.
# One screen: the scenario's outcome and picture (every sync in build/rolling-update.timeline.txt), then a
# preview of the set's next edit on the world the scenario ends in.
demo: build
	@mkdir -p build
	@./bin/ordinal replay examples/rolling-update.yaml --html examples/rolling-update.html > build/rolling-update.timeline.txt
	@head -3 build/rolling-update.timeline.txt
	@echo "   every sync: build/rolling-update.timeline.txt"
	@echo
	@echo '$$ bin/ordinal preview --scenario examples/rolling-update.yaml -f examples/rolling-update-next.yaml'
	@./bin/ordinal preview --scenario examples/rolling-update.yaml -f examples/rolling-update-next.yaml

# The CLI reference, docs/reference/cli.md, generated from the cobra commands (hack/clidoc); hack/clidoc's
# test (in `go test ./...`, so `make check` and `make test`) fails when the committed file is stale.
docs:
	$(GO) run ./hack/clidoc -o docs/reference/cli.md

# The Node.js host (examples/node-host): the module through the Extism JavaScript SDK, no Go involved.
# node/npm come from Debian when missing (scripts/install-node.sh); the SDK is pinned by package-lock.json
# and installed by `npm ci` whenever the lock is newer than node_modules. Its tests run every conformance
# case and the error paths; examples/node-host/nodehost_test.go (in `go test ./...`) compares bytes with the Go host.
NODE_HOST := examples/node-host
NODE_DEPS := $(NODE_HOST)/node_modules/.package-lock.json
.PHONY: node test-node
node:
	@command -v node >/dev/null && command -v npm >/dev/null || bash scripts/install-node.sh
$(NODE_DEPS): $(NODE_HOST)/package.json $(NODE_HOST)/package-lock.json | node
	cd $(NODE_HOST) && npm ci --no-audit --no-fund
	@touch $@
test-node: $(NODE_DEPS) $(GUEST_WASM)
	cd $(NODE_HOST) && node --test $$(node --test-force-exit -e 0 2>/dev/null && echo --test-force-exit)

# docs/policies.md's AssemblyScript walkthrough run as written (scripts/test-policies-guide.sh: host/cli's
# TestGuidesRunAsWritten with ORDINAL_GUIDE_ASSEMBLYSCRIPT=1): the template policies/kit/assemblyscript copied
# to a scratch HOME, built there (npm ci from the npm registry, asc), its fixtures checked with `ordinal policy
# test`, replayed, bundled for the ConfigMap. Part of `make test`.
.PHONY: test-policies-guide
test-policies-guide: node
	GO=$(GO) bash scripts/test-policies-guide.sh

# Headless Chromium from Debian for the HTML timeline test (host/replay); `make test` makes that test mandatory.
.PHONY: chromium
chromium:
	@bash scripts/install-chromium.sh

# End-to-end tests against a real local control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok; scripts/cluster-up.sh). The first run builds it from the Go module proxy (20-35 min),
# cached in ~/.cache/ordinal/localk8s; later runs take about 2 minutes. `make e2e E2E_RUN=TestRollingUpdate`
# runs one test. scripts/cluster-kcm.sh restarts only kube-controller-manager (e.g. with its StatefulSet controller).
.PHONY: cluster-up cluster-down e2e
cluster-up:
	bash scripts/cluster-up.sh
cluster-down:
	bash scripts/cluster-down.sh
e2e:
	bash scripts/e2e.sh

# The e2e suite against another Kubernetes minor (docs/install.md "Compatibility"), e.g. `make e2e-k8s
# K8S_VERSION=v1.36.3`: its own run directory and ports, so it never meets the default cluster; the first
# run builds that control plane (pinned: scripts/localk8s/src/k8s/VERSION/). kube-apiserver runs with
# MaxUnavailableStatefulSet=true (off by default before v1.37, which drops maxUnavailable; the suite tests
# it); APISERVER_FEATURE_GATES= runs the minor's defaults. Not part of `make test`.
.PHONY: e2e-k8s
E2E_K8S_VERSION ?= v1.36.3
e2e-k8s:
	K8S_VERSION=$(or $(K8S_VERSION),$(E2E_K8S_VERSION)) LOCALK8S_RUN=$${LOCALK8S_RUN:-/tmp/ordinal-localk8s-$(or $(K8S_VERSION),$(E2E_K8S_VERSION))} \
	APISERVER_PORT=$${APISERVER_PORT:-26443} ETCD_PORT=$${ETCD_PORT:-26790} ETCD_PEER_PORT=$${ETCD_PEER_PORT:-26800} \
	KCM_PORT=$${KCM_PORT:-30257} SCHEDULER_PORT=$${SCHEDULER_PORT:-30259} \
	APISERVER_FEATURE_GATES=$${APISERVER_FEATURE_GATES-MaxUnavailableStatefulSet=true} bash scripts/e2e.sh

# Upstream Kubernetes' own StatefulSet e2e specs ([sig-apps] StatefulSet of test/e2e/apps/statefulset.go,
# v1.37.2) with Ordinal as the only StatefulSet controller: upstream's e2e.test built unmodified from the Go
# module proxy (cached beside the control plane; cold 10-20 min once that is built), a cluster of its own,
# the specs of hack/upstreamtests/skips.txt skipped (each says why). E2E_UPSTREAM_CONTROLLER=kube-controller-manager
# runs the same specs under kube-controller-manager's own StatefulSet controller: the calibration.
# e2e-upstream-table keeps both runs' reports in docs/upstream-tests/ and regenerates docs/upstream-tests.md's
# tables from them. Not part of `make test` (their own targets, run before a stop that touches the guest or
# the controller; the table says when they last ran).
.PHONY: e2e-upstream e2e-upstream-table
e2e-upstream:
	bash scripts/e2e-upstream.sh
e2e-upstream-table:
	$(GO) run ./hack/upstreamtests import build/e2e-upstream docs/upstream-tests
	$(GO) run ./hack/upstreamtests table docs/upstream-tests docs/upstream-tests.md

# Upstream Kubernetes' own StatefulSet integration tests (k8s.io/kubernetes v1.37.2 test/integration/statefulset,
# built unmodified from the Go module proxy but for a small build-time patch where they start the controller,
# hack/integration-upstream/substitute/) with `ordinal controller --apps-v1` in place of the in-process
# upstream controller; each test starts its own kube-apiserver (etcd: the local control plane's, built if
# missing). INTEG_MODE=upstream is the calibration: the same tests unpatched, upstream's controller. Writes
# build/integration-upstream/MODE/junit.xml and the table of both runs, build/integration-upstream/results.md
# (INTEG_DOCS=1: docs/integration-upstream.md). INTEG_RUN=REGEXP runs some; ORDINAL_ARGS=--force passes
# flags. Run it before stops that touch the controller; not part of `make test` (a run: about 3 minutes once
# the local control plane is built, 20-35 min cold, whose Go build cache the test binary reuses).
.PHONY: integration-upstream
INTEG_MODE ?= ordinal
integration-upstream:
	bash scripts/integration-upstream.sh $(if $(filter upstream,$(INTEG_MODE)),--upstream)

# Randomized fault runs on the local control plane (e2e/chaos_test.go): CHAOS_RUNS seeds (default 200), a
# table of faults injected, invariant violations and final states; CHAOS_SEEDS=17,42 replays failing seeds.
# `make test` runs a short version (16 seeds, one per scenario).
.PHONY: chaos
chaos:
	bash scripts/chaos.sh

# The soak (e2e/soak_test.go, build tag soak): `ordinal controller` with SOAK_SETS (300) sets on kwok rolling
# continuously for SOAK_DURATION (1h), its RSS, goroutines and open fds sampled every SOAK_INTERVAL (1m);
# prints the series and a verdict (flat, or a leak, which fails). Not part of `make test`.
.PHONY: soak
soak:
	bash scripts/soak.sh

# vet covers the guest for its wasm target too (its unsafe code only builds there); go.mod must be tidy.
vet:
	@unformatted="$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go'))"; if [ -n "$$unformatted" ]; then echo "gofmt -w these: $$unformatted"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./guest/...
	GOOS=wasip1 GOARCH=wasm $(GO) vet -tags ordinal_extended ./guest/...

# go test's default -timeout (10m a package) is a wall-clock budget: beside a CPU-heavy job on 2 cores
# guest/statefulset and host/cli take 6-7 minutes. GO_TEST_TIMEOUT is a hang guard, not a budget.
GO_TEST_TIMEOUT ?= 60m

# The guest's tests run twice: as the faithful module and as the extended one (build tag ordinal_extended).
check: vet
	$(GO) test -timeout $(GO_TEST_TIMEOUT) ./...
	$(GO) test -timeout $(GO_TEST_TIMEOUT) -tags ordinal_extended ./guest/...

test: check-embedded check-policies check-crd guest-stdgo test-node test-policies-guide chromium vet image
	ORDINAL_REQUIRE_CHROMIUM=1 ORDINAL_REQUIRE_IMAGE=1 $(GO) test -count=1 -timeout $(GO_TEST_TIMEOUT) ./...
	$(GO) test -count=1 -timeout $(GO_TEST_TIMEOUT) -tags ordinal_extended ./guest/...
	$(MAKE) test-stages
	$(MAKE) e2e

# The local cluster's kwok stages (scripts/localk8s/kwok) run on example pods through kwok v0.8.0's own
# selector and template code: a module of its own, so the root go.mod never depends on kwok. Part of `make test`.
.PHONY: test-stages
test-stages:
	cd scripts/localk8s/kwok/stagetest && GOWORK=off GOFLAGS= $(GO) test -count=1 ./...

bench: guest guest-stdgo $(NODE_DEPS)
	$(GO) test -run '^$$' -bench . -benchmem ./host/... ./guest/...
	cd $(NODE_HOST) && node bench.mjs

# Side by side with the upstream controller (issue 16): module vs native, `ordinal reconcile` vs `oracle plan`,
# `ordinal replay --model tick` vs `oracle simulate`, from one alternating run. Builds the reference harness
# from ../shared/tools/oracle (cached); a development target: `make test` never needs ../shared.
.PHONY: bench-upstream
bench-upstream:
	bash scripts/bench-upstream.sh

# `ordinal preview` of the same OrderedReady image change (a settled set with claims) at BENCH_PREVIEW_SIZES pods:
# wall, CPU and peak RSS, and the CPU growth per size step, beside BENCH_BASELINE (an older ordinal binary; empty:
# none) and `oracle simulate` of the edited world, alternating per round (BENCH_ROUNDS). A size whose run would
# pass BENCH_CAP (predicted from the sizes before) is skipped with the reason; a run that passes it is stopped.
BENCH_PREVIEW_SIZES ?= 100,300,1000,3000
BENCH_ROUNDS ?= 3
BENCH_CAP ?= 10m
BENCH_BASELINE ?=
.PHONY: bench-preview
bench-preview:
	BENCH_ARGS="-sections preview -preview-sizes $(BENCH_PREVIEW_SIZES) -rounds $(BENCH_ROUNDS) -cap $(BENCH_CAP) $(if $(BENCH_BASELINE),-baseline $(BENCH_BASELINE)) $(BENCH_ARGS)" \
		bash scripts/bench-upstream.sh

# `ordinal controller` vs kube-controller-manager's own StatefulSet controller on the local control plane: the
# same rollouts (100 and 1000 replicas, Parallel with maxUnavailable 10%, and OrderedReady), CPU and time.
# kube-apiserver's answers to the defaulting corpus (hack/apiserver-defaults), committed as fixtures in
# host/kube/testdata/apiserver-defaults; starts the local control plane unless one is running.
.PHONY: apiserver-defaults
apiserver-defaults:
	bash scripts/apiserver-defaults.sh

.PHONY: bench-cluster
bench-cluster:
	bash scripts/bench-cluster.sh

# Many sets at once (issue 34), alternating `ordinal controller` and kube-controller-manager's own StatefulSet
# controller: RSS and RSS per cached pod (settled, and SCALE_REST_SECONDS (240) later at rest), CPU, sync latency
# p50/p99, queue depth, edit-to-rollout times. Sizes
# by SCALE_SETS (200), SCALE_PODS_PER_SET (10), SCALE_WAVES (2; 0: creation only), SCALE_WORKERS (5), SCALE_ROUNDS (1),
# SCALE_NAMESPACES (1; the sets spread round-robin); SCALE_REPLICAS=R compares 1 replica of `ordinal controller
# --shards SCALE_SHARDS` (default 4R) with R instead.
.PHONY: bench-scale
bench-scale:
	bash scripts/bench-scale.sh

# What a sharded replica caches (issue 34 item 3): RSS and Go heap of one unsharded replica against each of two
# replicas with --shards 8, the same kwok pods in place (SHARD_BENCH_SETS (60) namespaces x SHARD_BENCH_PODS (50)).
.PHONY: bench-shards
bench-shards:
	ORDINAL_BENCH_SHARDS=1 E2E_RUN='^TestBenchShardMemory$$' E2E_TIMEOUT=$${E2E_TIMEOUT:-100m} bash scripts/e2e.sh

# Every fuzz target of the tests (found by scripts/fuzz.sh: 19 today) for FUZZTIME each (default 2m: about
# 40 minutes on 2 cores); prints executions per target. A failing input lands in testdata/fuzz/ of its package.
.PHONY: fuzz
fuzz:
	bash scripts/fuzz.sh

# One interleaved run of the shipped build against the default-GC and standard-Go builds (RATIONALE.md, "TinyGo with -gc=leaking").
.PHONY: compare-builds
compare-builds: $(GUEST_BUILD) $(GUEST_STDGO_WASM) | $(TINYGO)
	$(TINYGO) build $(filter-out -gc=leaking,$(TINYGO_FLAGS)) -o build/ordinal-precise.wasm ./guest
	ORDINAL_COMPARE_BUILDS=shipped=$(GUEST_BUILD),precise=build/ordinal-precise.wasm,stdgo=$(GUEST_STDGO_WASM) \
	ORDINAL_COMPARE_MAX_PODS=1000 $(GO) test -run TestCompareBuilds -v -timeout 60m ./host/wasm/

# The kubectl plugin for krew: static archives per platform and the plugin manifest (hack/krew), in build/krew.
# VERSION is the release tag the archives are uploaded under.
.PHONY: krew
krew:
	$(GO) run ./hack/krew -version $(or $(VERSION),$(error set VERSION, e.g. make krew VERSION=v0.1.0)) -out build/krew

clean:
	rm -rf bin build
