# servesweep: `make run` runs the main job on its embedded default; `make test` runs the tests.
GO ?= go
BIN := bin/servesweep

.PHONY: build test bench run predict-example fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/servesweep

test:
	$(GO) vet ./...
	$(GO) test -race ./...
	# The accuracy check against measured deployments skips under -race (it simulates 872
	# deployments); it runs here without it, and skips when ../shared/data is absent.
	$(GO) test -count=1 -run Accuracy ./sim/calibrate
	# Golden digests of the seed commands and the built-in sweep (skipped under -race).
	$(GO) test -count=1 -run GoldenDigests ./cmd/servesweep

bench:
	$(GO) test -run XXX -bench . -benchmem ./...

run: build
	$(BIN) sweep --output-dir out/sweep --overwrite

predict-example: build
	$(BIN) predict --stack dynamo -c examples/synthetic.yaml --output-dir out/synthetic --overwrite

fuzz:
	$(GO) test ./sim -run XXX -fuzz FuzzDecode -fuzztime 30s
	$(GO) test ./sim/traffic -run XXX -fuzz FuzzParseMooncake -fuzztime 30s
	$(GO) test ./grid -run XXX -fuzz FuzzParse -fuzztime 30s

clean:
	rm -rf bin out
