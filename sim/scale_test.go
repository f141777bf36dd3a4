package sim

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// conversationTrace is the Mooncake conversation trace beside the repository.
const conversationTrace = "../../shared/data/traces/mooncake_conversation_trace.jsonl"

var scaledTraceOut = flag.String("scaled-trace-out", "", "TestWriteScaledTrace writes a trace of -scaled-trace-requests requests to this file")
var scaledTraceRequests = flag.Int("scaled-trace-requests", 1000000, "requests of the trace TestWriteScaledTrace writes")
var traceScaleMax = flag.Int("trace-scale-max", 100000, "BenchmarkTraceScale runs 100,000 requests and, when this is 1,000,000 or more, 1,000,000")

// writeScaledTrace writes to path the first n requests of the conversation trace repeated: copy k
// has every timestamp shifted by k × (the trace's last timestamp + 1 ms) and every hash id by
// k × (its largest hash id + 1), so copies share no KV block and follow one another in time.
func writeScaledTrace(tb testing.TB, path string, n int) {
	tb.Helper()
	src, err := os.Open(conversationTrace)
	if err != nil {
		tb.Skipf("Mooncake trace not available at %s: %v", conversationTrace, err)
	}
	defer src.Close()
	type row struct {
		Timestamp    int64   `json:"timestamp"`
		InputLength  int64   `json:"input_length"`
		OutputLength int64   `json:"output_length"`
		HashIDs      []int64 `json:"hash_ids"`
	}
	var rows []row
	var lastTS, maxID int64
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			tb.Fatal(err)
		}
		lastTS = max(lastTS, r.Timestamp)
		for _, h := range r.HashIDs {
			maxID = max(maxID, h)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	ids := make([]int64, 0, 64)
	for i := 0; i < n; i++ {
		k, r := int64(i/len(rows)), rows[i%len(rows)]
		ids = ids[:0]
		for _, h := range r.HashIDs {
			ids = append(ids, h+k*(maxID+1))
		}
		b, _ := json.Marshal(row{Timestamp: r.Timestamp + k*(lastTS+1), InputLength: r.InputLength, OutputLength: r.OutputLength, HashIDs: ids})
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestWriteScaledTrace writes a scaled trace for whole-process measurements, e.g.
// go test ./sim -run WriteScaledTrace -args -scaled-trace-out /tmp/trace-1m.jsonl; without the
// flag it checks the helper on 25,000 requests (two copies and part of a third).
func TestWriteScaledTrace(t *testing.T) {
	path, n := *scaledTraceOut, *scaledTraceRequests
	if path == "" {
		path, n = filepath.Join(t.TempDir(), "scaled.jsonl"), 25000
	}
	writeScaledTrace(t, path, n)
	if *scaledTraceOut != "" {
		return
	}
	cfg, err := config.LoadFile("../examples/trace-replay.yaml", []string{"traffic.source.paths=[" + path + "]"})
	if err != nil {
		t.Fatal(err)
	}
	wl, err := BuildWorkload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(wl.Requests) != n {
		t.Fatalf("%d requests, want %d", len(wl.Requests), n)
	}
}

// BenchmarkTraceScale replays the conversation trace repeated to 100,000 requests and, with
// -trace-scale-max 1000000 (minutes and gigabytes), 1,000,000 requests (writeScaledTrace) on
// examples/trace-replay.yaml, workload built once, and reports ns per simulated request: linear
// time means the same figure for both.
func BenchmarkTraceScale(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		if n > *traceScaleMax {
			continue
		}
		b.Run(fmt.Sprintf("requests=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "scaled.jsonl")
			writeScaledTrace(b, path, n)
			cfg, err := config.LoadFile("../examples/trace-replay.yaml", []string{"traffic.source.paths=[" + path + "]"})
			if err != nil {
				b.Fatal(err)
			}
			benchRun(b, cfg, n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/request")
		})
	}
}
