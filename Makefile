# Ordinal — build, test and demo targets. `make test` is the whole suite; `make check` is the fast inner loop.
SHELL := /bin/bash
GO ?= go
TINYGO_VERSION ?= 0.41.1
TINYGO_PREFIX ?= $(HOME)/.cache/ordinal/tinygo-$(TINYGO_VERSION)-llvm19
TINYGO ?= $(TINYGO_PREFIX)/bin/tinygo
# Flags of the shipped module; RATIONALE.md explains the GC choice.
TINYGO_FLAGS ?= -target=wasip1 -buildmode=c-shared -no-debug -scheduler=none -opt=2
GUEST_WASM := host/embedded/ordinal.wasm
GUEST_STDGO_WASM := build/ordinal-stdgo.wasm
GUEST_SRC := $(shell find guest -name '*.go' -not -name '*_test.go') go.mod go.sum

.PHONY: all tinygo guest check-embedded guest-stdgo testmodules build demo test check bench clean

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

guest: $(GUEST_BUILD)
	cp $(GUEST_BUILD) $(GUEST_WASM)

# TinyGo builds are reproducible, so the committed module must equal a fresh build of the committed source.
check-embedded: $(GUEST_BUILD)
	@cmp -s $(GUEST_BUILD) $(GUEST_WASM) || { echo "host/embedded/ordinal.wasm is stale: run 'make guest' and commit it" >&2; exit 1; }
	@echo "embedded module matches a fresh TinyGo build of guest/"

# Small misbehaving modules (trap, loop, oom, ...) for the host's containment tests; committed like the default.
testmodules: | $(TINYGO)
	TINYGO=$(TINYGO) bash host/wasm/testdata/build.sh

# Standard Go build of the same guest source: a second target to tell TinyGo bugs from logic bugs.
guest-stdgo: $(GUEST_STDGO_WASM)
$(GUEST_STDGO_WASM): $(GUEST_SRC)
	@mkdir -p $(dir $@)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./guest

build: guest
	@mkdir -p bin
	$(GO) build -o bin/ordinal ./cmd/ordinal

demo: build
	./bin/ordinal reconcile -f examples/web-fresh.snapshot.json

check:
	$(GO) vet ./...
	$(GO) test ./...

test: check-embedded guest-stdgo
	$(GO) vet ./...
	$(GO) test -count=1 ./...

bench: guest guest-stdgo
	$(GO) test -run '^$$' -bench . -benchmem ./host/... ./guest/...

clean:
	rm -rf bin build
