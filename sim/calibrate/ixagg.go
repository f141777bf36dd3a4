package calibrate

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// inferenceXAggTSV is the table of InferenceX's single-node deployments, written by ixtopogen
// -agg from the public repository's history (its header describes the columns).
//
//go:embed inferencex_agg.tsv
var inferenceXAggTSV string

// AggTopology is one single-node deployment that InferenceX's public benchmark configuration
// (.github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX) listed: one
// search-space item of an entry marked neither disagg nor multinode, with the commits between
// which it was in force.
type AggTopology struct {
	ixItem
	// TP is the node's GPUs, the experts split over EP of them, attention data-parallel over
	// them when DPAttention.
	TP, EP      int
	DPAttention bool
}

// InferenceXAgg returns the embedded table of InferenceX's single-node deployments, in the
// table's order (the first version listing each item first). The error reports a malformed
// line of the table.
func InferenceXAgg() ([]AggTopology, error) { return loadAgg() }

var loadAgg = sync.OnceValues(func() ([]AggTopology, error) { return parseAggTSV(inferenceXAggTSV) })

// parseAggTSV reads the single-node table's text: tab-separated lines of 17 columns, # comments.
func parseAggTSV(text string) ([]AggTopology, error) {
	return readTable(text, "inferencex_agg.tsv", "ixtopogen -agg", 17, func(head ixItem, f []string, num func(string) int) AggTopology {
		return AggTopology{ixItem: head, TP: num(f[14]), EP: num(f[15]), DPAttention: f[16] == "true"}
	})
}

// ixSingleNodeFrameworks maps a backend to the framework of InferenceX's single-node entries.
var ixSingleNodeFrameworks = map[string]string{"trtllm": "trt", "sglang": "sglang", "vllm": "vllm"}

// NotInIXConfig starts the skip reason of an aggregated InferenceX row that is not a run of the
// public configuration in force on its date (aggListed).
const NotInIXConfig = "not a run of InferenceX's public configuration"

// aggListedIn checks aggregated InferenceX row r, its worker as run (singleNodeShape), against
// table: when items in force at the end of r's date serve r's model on r's GPU family with r's
// engine, precision, ISL and OSL, one of them must list a node of r's GPUs (tp × attention_dp
// × pp) at the concurrency r runs at (rowConcurrency); the error, a skip reason, names the entry
// that does not. Where no entry serves them (runs from a branch, before the file listed the model,
// or at an ISL/OSL it did not list) or r gives no date there is nothing to check and r stands.
func aggListedIn(table []AggTopology, r Row) error {
	day := strings.TrimSpace(r.MeasuredAt)
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return nil
	}
	conc := rowConcurrency(r)
	r, prefix, _ := ixKeys(r)
	framework := ixSingleNodeFrameworks[strings.ToLower(strings.TrimSpace(r.Backend))]
	gpus := max(r.Agg.Tensor, 1) * max(r.Agg.AttentionData, 1) * max(r.Agg.Pipeline, 1)
	var entry string
	for _, t := range table {
		if prefix == "" || t.ModelPrefix != prefix || t.Framework != framework || t.Precision != r.Precision ||
			!ixRunnerServes(t.Runner, r.System) || t.ISL != r.ISL || t.OSL != r.OSL || !t.inForce(day) {
			continue
		}
		if t.TP == gpus && slices.Contains(t.Concurrencies, conc) {
			return nil
		}
		entry = t.Entry
	}
	if entry == "" {
		return nil
	}
	// The reason names the entry, not the row's values, so that validate counts rows by reason.
	return fmt.Errorf("%s: the configuration in force on the row's date (%s) lists %s for its model, GPU, engine, precision and ISL/OSL, "+
		"none at the row's concurrency with its GPUs: the server settings the row ran with are not in the public record", NotInIXConfig, ixConfigPath, entry)
}

// aggListed is aggListedIn over the embedded table (InferenceXAgg).
func aggListed(r Row) error {
	table, err := InferenceXAgg()
	if err != nil {
		return err
	}
	return aggListedIn(table, r)
}
