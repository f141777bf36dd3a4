# servesweep: `make run` runs the main job on its embedded default; `make test` runs the tests.
GO ?= go
BIN := bin/servesweep

.PHONY: build test bench run predict-example fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/servesweep

# Packages the race detector has nothing to watch in: neither their code nor their tests start a
# goroutine (TestRaceFreePackagesStartNoGoroutine checks it), so they run once, without it. And
# cmd/servesweep, whose commands start none of their own: the goroutines its tests run (the sweep
# pool, the results writer, the simulator) are watched by their own packages' tests under -race;
# running its end-to-end command tests under the detector as well took four of make test's eight
# minutes on 2 cores.
NORACE := cmd/servesweep cmd/servesweep/internal/hugepages examples examples/tracegen results results/export \
	sim/blockmap sim/calibrate/aiperf sim/calibrate/ixtopogen sim/engine sim/optimization sim/planner \
	sim/metrics sim/router sim/timing sim/traffic
MODULE := $(shell $(GO) list -m)
RACE_PKGS = $(filter-out $(addprefix $(MODULE)/,$(NORACE)),$(shell $(GO) list ./...))

test:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race $(RACE_PKGS)
	# Without the race detector: the packages above, and the slow tests that skip under -race:
	# the accuracy check against 872 measured deployments (skipped when ../shared/data is
	# absent), the capacity search's run-length checks (six searches of a 70B deployment, two of
	# the built-in 8-GPU kv_router one, the edge rerun's), the template expansion's check on its
	# two largest specs, the op database's tests that read whole tables and the calibration
	# fit's grid test.
	# (-timeout 20m: the built-in sweep the golden, README and end-to-end tests share takes about 3
	# of the cmd package's 4.5 minutes on 2 cores: a slower host could reach go test's default
	# 10-minute limit.)
	$(GO) test -count=1 -timeout 20m $(addprefix ./,$(NORACE)) ./sim/calibrate ./sim/timing/opdb
	$(GO) test -count=1 -run 'CapacityIndependentOfRunLength|CapacitySettlesUnderKVRouter|CapacityEdgeRerunIsSettled|TemplateExpansionMatchesDecoding' ./sweep ./grid

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
