package results

import (
	"fmt"
	"github.com/servesweep/servesweep/sim/optimization"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchConfigYAML stands in for a row's concrete config (the largest column of a real row).
const benchConfigYAML = `traffic:
  source: {type: synthetic, input_tokens: 128, output_tokens: 16}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 2}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: %d, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: %d}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 10000}}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 5}
router:
  policy: round_robin
`

// benchRows returns n ok rows in point order shaped like the issue-43 grid (replicas 1–100 ×
// max_sequences 1–1,000, 2 requests a point): distinct objective vectors number distinct (1:
// every point ties), so the front is a few entries standing for most of the rows.
func benchRows(n, distinct int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		rep, seqs := int64(i/1000+1), int64(i%1000+1)
		k := float64(i % distinct)
		r := row(fmt.Sprintf("%012x", uint64(i)*0x9e3779b97f4a7c15>>16), rep, 355.5+k, 15+k, 5)
		r.PointIndex = int64(i)
		r.OutputThroughputTokS = ptr(355.5 + k) // as measured: 2 requests a point do not load replicas
		r.Mode, r.Backend, r.Hardware, r.Model = "aggregated", "vllm", "h200_sxm", "meta-llama/Meta-Llama-3.1-8B-Instruct"
		r.AggReplicas, r.AggTensor, r.AggMaxSequences = iptr(rep), iptr(1), iptr(seqs)
		r.LoadType, r.LoadConcurrency = "concurrency", iptr(4)
		r.SourceInputTokens, r.SourceOutputTokens = iptr(128), iptr(16)
		r.ConfigYAML = fmt.Sprintf(benchConfigYAML, rep, seqs)
		rows[i] = r
	}
	return rows
}

// writeBenchParts writes rows as count parts of one sharded sweep into dir (rows dealt round
// robin, as a hash would spread them) and returns their paths.
func writeBenchParts(b testing.TB, dir string, rows []Row, count int) []string {
	b.Helper()
	shards := make([][]Row, count)
	for i, r := range rows {
		shards[i%count] = append(shards[i%count], r)
	}
	sizes := make([]int, count)
	for i, s := range shards {
		sizes[i] = len(s)
	}
	paths := make([]string, count)
	for i, s := range shards {
		meta := &PartMeta{SpecHash: "0123456789abcdef", ShardIndex: i, ShardCount: count, ShardSizes: sizes,
			Manifest: Manifest{Spec: "spec.yaml", Algorithm: "grid",
				Settings: optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}},
				Counts:   Counts{GridPoints: len(rows), ValidPoints: len(rows), SelectedPoints: len(rows)}}}
		paths[i] = filepath.Join(dir, PartName(i, count))
		if err := WritePart(paths[i], s, meta); err != nil {
			b.Fatal(err)
		}
	}
	return paths
}

// BenchmarkMerge merges 100,000 rows from 1,000 parts as `servesweep merge` does: read and check
// every part, merge, and write results.parquet, sweep.json, pareto.json, report.md, pareto.png
// and the recommendations. Reports rows/s.
func BenchmarkMerge(b *testing.B) {
	const n, parts = 100_000, 1_000
	for _, distinct := range []int{1, 50} {
		b.Run("distinct="+strconv.Itoa(distinct), func(b *testing.B) {
			dir := b.TempDir()
			paths := writeBenchParts(b, dir, benchRows(n, distinct), parts)
			b.ResetTimer()
			for range b.N {
				rows, m, err := MergePartFiles(paths)
				if err != nil {
					b.Fatal(err)
				}
				out := filepath.Join(dir, "out")
				if err := os.MkdirAll(out, 0o755); err != nil {
					b.Fatal(err)
				}
				if _, _, err := WriteOutputs(out, rows, m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkAnalyze analyzes 100,000 rows and renders pareto.json; reports rows/s and the
// document's size. Throughput and TTFT both grow with a row's objective class, so every class is
// on the front: distinct=100000 is a front of every row.
func BenchmarkAnalyze(b *testing.B) {
	const n = 100_000
	for _, distinct := range []int{1, 50, n} {
		b.Run("distinct="+strconv.Itoa(distinct), func(b *testing.B) {
			rows := benchRows(n, distinct)
			s := optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}}
			var size int
			b.ResetTimer()
			for range b.N {
				a, err := Analyze(rows, s)
				if err != nil {
					b.Fatal(err)
				}
				doc, err := ParetoDocument(rows, a, nil, a.Front)
				if err != nil {
					b.Fatal(err)
				}
				size = len(doc)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(size), "pareto.json-bytes")
		})
	}
}

// BenchmarkReportHTML renders report.html for 100,000 analyzed rows (the analysis outside the
// timed loop); reports the page's size and how many points it plots. distinct=100000 is a front
// of every row, of which the page plots the first 10,000.
func BenchmarkReportHTML(b *testing.B) {
	const n = 100_000
	for _, distinct := range []int{1, 50, n} {
		b.Run("distinct="+strconv.Itoa(distinct), func(b *testing.B) {
			rows := benchRows(n, distinct)
			m := &Manifest{Spec: "spec.yaml", Algorithm: "grid",
				Settings: optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}},
				Counts:   Counts{GridPoints: n, ValidPoints: n, SelectedPoints: n}}
			a, err := Analyze(rows, m.Settings)
			if err != nil {
				b.Fatal(err)
			}
			var size int
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				page, err := ReportHTML(rows, a, m, a.Front)
				if err != nil {
					b.Fatal(err)
				}
				size = len(page)
			}
			b.ReportMetric(float64(size), "report.html-bytes")
			b.ReportMetric(float64(len(HTMLPoints(a))), "points")
		})
	}
}
