# servesweep: `make run` runs the main job on its embedded default; `make test` runs the tests.
GO ?= go
BIN := bin/servesweep

.PHONY: build test bench run predict-example fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/servesweep

test:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race ./...
	# Slow tests skip under -race and run here without it: the accuracy check against 872
	# measured deployments (skipped when ../shared/data is absent), and the commands' end-to-end
	# tests (trace replays, whole and sharded sweeps, kill -9 and resume, golden digests), and the
	# huge-page reservation under ulimit -v and -d (the race detector needs more address space),
	# the capacity search's run-length checks (six searches of a 70B deployment, two of the built-in 8-GPU kv_router one),
	# and ExpertGEMM's, Memory's and FP4Memory's derivations from the MoE and GEMM tables of the op database.
	$(GO) test -count=1 ./sim/calibrate ./cmd/servesweep ./cmd/servesweep/internal/hugepages
	$(GO) test -count=1 -run 'CapacityIndependentOfRunLength|CapacitySettlesUnderKVRouter|CapacityEdgeRerunIsSettled' ./sweep
	$(GO) test -count=1 -run 'ExpertGEMMFromTheOpDatabase|MemoryFromTheOpDatabase' ./sim/timing

bench:
	$(GO) test -run XXX -bench . -benchmem ./...

# The sweep resumes out/sweep when an earlier run was interrupted (and returns at once when it
# finished); `make run SWEEP_FLAGS=--overwrite` starts over, e.g. after the built-in spec changed.
run: build
	$(BIN) sweep --output-dir out/sweep $(SWEEP_FLAGS)

predict-example: build
	$(BIN) predict --stack dynamo -c examples/synthetic.yaml --output-dir out/synthetic --overwrite

fuzz:
	$(GO) test ./sim/config -run XXX -fuzz FuzzDecode -fuzztime 30s
	$(GO) test ./sim/traffic -run XXX -fuzz FuzzParseMooncake -fuzztime 30s
	$(GO) test ./sim/traffic -run XXX -fuzz FuzzParseAppliedCompute -fuzztime 30s
	$(GO) test ./sim/traffic -run XXX -fuzz FuzzAgenticMooncake -fuzztime 30s
	$(GO) test ./sim/traffic -run XXX -fuzz FuzzDynamo -fuzztime 30s
	$(GO) test ./grid -run XXX -fuzz FuzzParse -fuzztime 30s

clean:
	rm -rf bin out
