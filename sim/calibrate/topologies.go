package calibrate

import (
	_ "embed"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/servesweep/servesweep/sim/timing"
)

// inferenceXDisaggTSV is the table of InferenceX's disaggregated deployments, written by
// ixtopogen from the public repository's history (its header describes the columns).
//
//go:embed inferencex_disagg.tsv
var inferenceXDisaggTSV string

// DisaggTopology is one disaggregated deployment that InferenceX's public benchmark configuration
// (.github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX) listed: one
// search-space item of an entry marked disagg: true, with the commits between which it was in
// force.
type DisaggTopology struct {
	ixItem
	// Prefill and Decode are the roles' workers.
	Prefill, Decode TopologyRole
	// Recipe is the serving recipe the item names (CONFIG_FILE=...; "" when none): a file of
	// the srt-slurm repositories whose name encodes, e.g., ctx/gen worker counts, the decode
	// batch, EPLB slots and the MTP draft length.
	Recipe string
	// MTPDrafts is an MTP item's draft tokens per decode round (the table's mtp_drafts column:
	// DECODE_MTP_SIZE, the recipe name's _mtpN, or the recipe's speculative settings as
	// ixtopogen records them); 0 without MTP or when the record does not give it.
	MTPDrafts int
	// File is the file of the InferenceX repository the item comes from: the configuration
	// (ixConfigPath), or ixLauncherPath for the GB200 TensorRT-LLM deployments its runner script
	// held before the configuration listed them.
	File string
	// PerDecodeWorker is set when the benchmark ran each listed concurrency once per decode
	// worker: Concurrencies are then the listed values × Decode.Workers, the client's.
	PerDecodeWorker bool
	// SettledByConfig is set on the deployment DisaggFromInferenceX returns when the row's
	// ConfigID chose its speculative decoding among listed deployments of both kinds
	// (Row.SpecMethod): the row's config_id. The table's items leave it "".
	SettledByConfig string
	// SettledByPair is set in its place when the row's pair chose it (SpecMethodsByPair).
	SettledByPair bool
}

// ixItem is what every line of ixtopogen's tables gives first (their 14 leading columns): one
// search-space item of an entry of InferenceX's public benchmark configuration
// (.github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX) and the commits
// between which it was in force.
type ixItem struct {
	// FromCommit and FromDate (RFC 3339, the committer date) name the first version of the file
	// that listed the item; UntilCommit and UntilDate the first later version that no longer did
	// (empty while the newest version read lists it).
	FromCommit, FromDate, UntilCommit, UntilDate string
	// Entry is the configuration entry's name (e.g. dsr1-fp4-b300-dynamo-trt); ModelPrefix,
	// Runner, Precision, Framework (vllm, sglang, trt, ...) and Image are its fields of those names.
	Entry, ModelPrefix, Runner, Precision, Framework, Image string
	// ISL and OSL are the benchmark's input and output lengths.
	ISL, OSL int
	// SpecDecoding is the item's spec-decoding ("none" when absent; "mtp" for multi-token
	// prediction).
	SpecDecoding string
	// Concurrencies are the client concurrencies the item was benchmarked at.
	Concurrencies []int
	// FromDate and UntilDate parsed.
	inForceWindow
}

// inForceWindow is the time a configuration item was in force: from the commit that first listed
// it to the first later commit without it (until zero while the newest version lists it).
type inForceWindow struct{ from, until time.Time }

// TopologyRole is a role's workers as InferenceX's configuration gives them: Workers workers of
// TP GPUs each, the experts split over EP of them, attention data-parallel over all TP GPUs when
// DPAttention (each GPU holds whole attention heads of its own requests) and tensor-parallel
// otherwise.
type TopologyRole struct {
	Workers, TP, EP int
	DPAttention     bool
	// MaxBatch and MaxTokens are the running requests and the tokens per pass of each of the
	// role's attention-DP ranks that the item's own settings give (PREFILL_ or
	// DECODE_MAX_BATCH_SIZE and _MAX_NUM_TOKENS, each TensorRT-LLM server's max_batch_size and
	// max_num_tokens); 0 where it sets none (a recipe may: RecipePrefillLimits).
	MaxBatch, MaxTokens int
	// Nodes is the nodes the role's workers span in all (PREFILL_ or DECODE_NODES), which the
	// GB200 SGLang items give in place of parallel degrees; 0 where the item does not say.
	Nodes int
	// FromNodes is set when TP and EP were read from Nodes (sglangDegrees): the item gives 1
	// for both, and so does the export's row of its run.
	FromNodes bool
	// RedundantExperts is the redundant expert slots the role's launch script places beside the
	// model's experts, for an item without a recipe (a recipe's own: RecipeRedundantExperts).
	RedundantExperts int
}

// sameShape reports whether t and o have the same workers and parallel layout, whatever their
// batch limits.
func (t TopologyRole) sameShape(o TopologyRole) bool {
	return t.Workers == o.Workers && t.TP == o.TP && t.EP == o.EP && t.DPAttention == o.DPAttention
}

// Shape is the role as a WorkerShape: with DPAttention, attention_data TP and tensor 1, else
// tensor TP; the experts over moe_expert EP × moe_tensor TP/EP GPUs.
func (t TopologyRole) Shape() WorkerShape {
	s := WorkerShape{Workers: t.Workers, Tensor: t.TP, Pipeline: 1, AttentionData: 1, MoEExpert: max(t.EP, 1), MoETensor: max(t.TP/max(t.EP, 1), 1)}
	if t.DPAttention {
		s.Tensor, s.AttentionData = 1, t.TP
	}
	return s
}

// String is "n × (TPx EPy DP-attention)".
func (t TopologyRole) String() string {
	dpa := ""
	if t.DPAttention {
		dpa = " DP-attention"
	}
	return fmt.Sprintf("%d × (TP%d EP%d%s)", t.Workers, t.TP, t.EP, dpa)
}

// InferenceXDisagg returns the embedded table of InferenceX's disaggregated deployments, in the
// order of the configuration's history (each item where it first appeared). The slice is shared:
// callers must not modify it. The error names a malformed line (the table is generated, so only
// a hand edit causes one).
func InferenceXDisagg() ([]DisaggTopology, error) { return loadDisagg() }

var loadDisagg = sync.OnceValues(func() ([]DisaggTopology, error) { return parseDisaggTSV(inferenceXDisaggTSV) })

// parseDisaggTSV reads the table's text: tab-separated lines of 32 columns, # comments. An item
// whose benchmark ran each listed concurrency per decode worker (conc_per_decode_worker) gets
// the client's concurrencies, the listed ones × its decode workers; a GB200 SGLang role that
// gives nodes in place of parallel degrees gets them (TopologyRole.sglangDegrees).
func parseDisaggTSV(text string) ([]DisaggTopology, error) {
	return readTable(text, "inferencex_disagg.tsv", "ixtopogen", 32, func(head ixItem, f []string, num func(string) int) DisaggTopology {
		role := func(g, limits []string, nodes string) TopologyRole {
			w := TopologyRole{Workers: num(g[0]), TP: num(g[1]), EP: num(g[2]), DPAttention: g[3] == "true",
				MaxBatch: num(limits[0]), MaxTokens: num(limits[1]), Nodes: num(nodes)}
			return w.sglangDegrees(head)
		}
		t := DisaggTopology{ixItem: head, Prefill: role(f[14:18], f[24:26], f[30]), Decode: role(f[18:22], f[26:28], f[31]), Recipe: f[22],
			MTPDrafts: num(f[23]), File: f[29], PerDecodeWorker: f[28] == "true"}
		if t.PerDecodeWorker {
			t.Concurrencies = make([]int, len(head.Concurrencies))
			for i, c := range head.Concurrencies {
				t.Concurrencies[i] = c * t.Decode.Workers
			}
		}
		return t
	})
}

// sglangDegrees is w, a role of item head, with the parallel degrees its nodes give where the
// item gives placeholders instead: an SGLang item's role of tp 1, ep 1 with dp-attn over Nodes
// nodes of its runner's GPUs runs each of its workers attention data-parallel and
// expert-parallel over all the worker's GPUs, Nodes × the node's GPUs / Workers of them. The
// launch scripts of those items hard-code tp = dp = the worker's GPUs with DeepEP's expert
// parallelism (dynamo's components/backends/sglang/slurm_jobs/scripts/gb200-fp8.sh, which the
// entries' comments name: "tp, ep, and dp-attn do nothing because they are hardcoded"), and the
// entries' comments give the result (e.g. "2 prefill workers each at DEP8": PREFILL_NODES=4).
// Other roles, and nodes that do not divide into the workers, are left as they are.
func (w TopologyRole) sglangDegrees(head ixItem) TopologyRole {
	if head.Framework != ixFrameworks["sglang"] || w.TP != 1 || w.EP != 1 || !w.DPAttention || w.Nodes < 1 || w.Workers < 1 {
		return w
	}
	hw, err := timing.LookupHardware(head.Runner)
	if err != nil || hw.NodeGPUs < 1 || w.Nodes*hw.NodeGPUs%w.Workers != 0 {
		return w
	}
	w.TP = w.Nodes * hw.NodeGPUs / w.Workers
	w.EP, w.FromNodes = w.TP, true
	if head.Precision == "fp8" {
		w.RedundantExperts = sglangGB200FP8Redundant
	}
	return w
}

// sglangGB200FP8Redundant is the redundant experts of the GB200 FP8 SGLang launch script
// (gb200-fp8.sh of dynamo's components/backends/sglang/slurm_jobs/scripts: both roles run
// --ep-num-redundant-experts 32, as every later GB200 DeepSeek-R1 recipe of InferenceX does).
// The FP4 items ran other scripts (SCRIPT_MODE), whose settings the public record does not hold.
const sglangGB200FP8Redundant = 32

// gpus is the deployment's GPUs: every worker's TP (its GPUs) summed over both roles.
func (t DisaggTopology) gpus() int {
	return t.Prefill.Workers*t.Prefill.TP + t.Decode.Workers*t.Decode.TP
}

// readTable reads the text of a table ixtopogen wrote (file names it in errors; generator is the
// command that rewrites it): tab-separated lines of cols columns, # comments, whose first
// 14 are an ixItem's (from_commit, from_date, until_commit, until_date with the dates
// RFC 3339 and until_date empty while in force, entry, model prefix, runner, precision, framework,
// image, ISL, OSL, spec-decoding, comma-separated concurrencies). readTable reads that part, its
// in-force window included; item builds a line's entry from it and the line's fields, num reading
// an int field. The error names the line whose width, int field or date is malformed (the tables
// are generated, so only a hand edit causes one), or says the table holds no entry.
func readTable[T any](text, file, generator string, cols int, item func(head ixItem, f []string, num func(string) int) T) ([]T, error) {
	var out []T
	for i, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != cols {
			return nil, fmt.Errorf("%s line %d: %d columns, want %d", file, i+1, len(f), cols)
		}
		var errs []error
		num := func(s string) int {
			n, err := strconv.Atoi(s)
			if err != nil {
				errs = append(errs, err)
			}
			return n
		}
		head := ixItem{FromCommit: f[0], FromDate: f[1], UntilCommit: f[2], UntilDate: f[3], Entry: f[4], ModelPrefix: f[5],
			Runner: f[6], Precision: f[7], Framework: f[8], Image: f[9], ISL: num(f[10]), OSL: num(f[11]), SpecDecoding: f[12],
			Concurrencies: nums(f[13], num)}
		var err error
		if head.from, err = time.Parse(time.RFC3339, f[1]); err != nil {
			errs = append(errs, err)
		}
		if f[3] != "" {
			if head.until, err = time.Parse(time.RFC3339, f[3]); err != nil {
				errs = append(errs, err)
			}
		}
		t := item(head, f, num)
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s line %d: %v", file, i+1, errs[0])
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no deployment: regenerate it with %s (docs/validation.md)", file, generator)
	}
	return out, nil
}

// nums reads a comma-separated list of ints with num.
func nums(list string, num func(string) int) []int {
	var out []int
	for _, c := range strings.Split(list, ",") {
		out = append(out, num(c))
	}
	return out
}

// inForce reports whether the item was listed by the configuration in force at the end of day
// (YYYY-MM-DD, UTC): its first version committed by then and no later version without it
// committed by then. A day that is not a date is in no item's force.
func (t inForceWindow) inForce(day string) bool {
	end, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return false
	}
	end = end.Add(24*time.Hour - time.Second)
	return !t.from.After(end) && (t.until.IsZero() || t.until.After(end))
}

// ixModelPrefixes maps a measured file's model_path to the first word of the InferenceX entry
// names that serve it (DeepSeek-V3 rows are the same dsr1 runs, labelled by another export).
var ixModelPrefixes = map[string]string{
	"deepseek-ai/DeepSeek-R1": "dsr1", "deepseek-ai/DeepSeek-V3": "dsr1", "openai/gpt-oss-120b": "gptoss",
	"moonshotai/Kimi-K2.5": "kimik2.5", "zhipuai/GLM-5": "glm5", "MiniMaxAI/MiniMax-M2.5": "minimaxm2.5",
	"Qwen/Qwen3.5-397B-A17B": "qwen3.5",
}

// ixFrameworks maps a backend to the framework of InferenceX's disaggregated entries.
var ixFrameworks = map[string]string{"trtllm": "dynamo-trt", "sglang": "dynamo-sglang", "vllm": "dynamo-vllm"}

// ixRunnerServes reports whether an InferenceX runner (b300, b200-trt, gb200) runs on system
// (lower-cased, e.g. b300_sxm): the runner starts with the system's family and a Grace-Blackwell
// system (g...) matches only a Grace-Blackwell runner.
func ixRunnerServes(runner, system string) bool {
	return strings.HasPrefix(runner, ixRunner(system)) && strings.HasPrefix(runner, "g") == strings.HasPrefix(system, "g")
}

// ixRunner is the runner family of a system: h100_sxm → h100, gb200 → gb200.
func ixRunner(system string) string { s, _, _ := strings.Cut(system, "_"); return s }

// DisaggFromInferenceX finds the deployment InferenceX ran for r, a disaggregated row of source
// inferencex that gives no worker counts: the items of the configuration in force at the end of
// r.MeasuredAt whose entry serves r's model on r's GPU family with r's backend and precision, at
// r's ISL, OSL and concurrency, and whose prefill TP and EP and decode TP agree with r's
// prefill_tp_size, prefill_moe_ep_size and decode_tp_size where r gives them, or whose GPUs in
// all are r's prefill_tp_size and decode_tp_size when r gives both the same (the export's form of
// some multi-node runs: DisaggTopology.gpus). The error, a skip
// reason, says why the public record does not determine one deployment: no such item, items
// that contradict the row's shape columns, several that differ (an MTP and a non-MTP item at the
// same concurrency: the file has no speculative-decoding column), or an item that needs MTP
// speculative decoding, which servesweep does not simulate.
func DisaggFromInferenceX(r Row) (DisaggTopology, error) {
	table, err := InferenceXDisagg()
	if err != nil {
		return DisaggTopology{}, err
	}
	return disaggFrom(table, r)
}

// disaggFrom is DisaggFromInferenceX over table.
func disaggFrom(table []DisaggTopology, r Row) (DisaggTopology, error) {
	if _, err := time.Parse(time.DateOnly, strings.TrimSpace(r.MeasuredAt)); err != nil {
		return DisaggTopology{}, fmt.Errorf("no disaggregated worker counts, and measured_at %q is not a date (YYYY-MM-DD): "+
			"the deployment InferenceX's public configuration listed on it cannot be found", r.MeasuredAt)
	}
	match, consistent := candidatesFor(table, r)
	consistent, settled := bySpecMethod(consistent, r.SpecMethod)
	r, prefix, framework := ixKeys(r)
	// The reasons name the entry, not the row's values, so that validate counts rows by reason.
	const none = "no disaggregated worker counts, and InferenceX's public configuration (" + ixConfigPath + "; " + ixLauncherPath + " for GB200 before it) "
	switch {
	case prefix == "" || framework == "":
		return DisaggTopology{}, silentError{fmt.Sprintf(none+NoIXDeployment+" for %s under %s (it has no disaggregated entry for them)", r.Model, r.Backend)}
	case len(match) == 0:
		return DisaggTopology{}, silentError{none + "in force on the row's date (end of day, UTC) " + NoIXDeployment + " of its model, GPU, backend, precision, ISL/OSL and concurrency"}
	case len(consistent) == 0:
		return DisaggTopology{}, fmt.Errorf(none+"lists a deployment for the row (%s) that contradicts its prefill_tp_size, prefill_moe_ep_size or decode_tp_size",
			match[0].Entry)
	}
	t := consistent[0]
	for _, o := range consistent[1:] {
		switch {
		case o.Prefill == t.Prefill && o.Decode == t.Decode && o.SpecDecoding == t.SpecDecoding && o.MTPDrafts == t.MTPDrafts:
		case o.Prefill.sameShape(t.Prefill) && o.Decode.sameShape(t.Decode) && o.SpecDecoding == t.SpecDecoding && o.MTPDrafts == t.MTPDrafts:
			return DisaggTopology{}, fmt.Errorf(none+"lists deployments of the row's shape with different batch limits at its concurrency (%s: "+
				"prefill %d requests and %d tokens, decode %d and %d; %s: %d and %d, %d and %d): the row does not say which ran", t.Entry,
				t.Prefill.MaxBatch, t.Prefill.MaxTokens, t.Decode.MaxBatch, t.Decode.MaxTokens,
				o.Entry, o.Prefill.MaxBatch, o.Prefill.MaxTokens, o.Decode.MaxBatch, o.Decode.MaxTokens)
		case o.SpecDecoding != t.SpecDecoding:
			return DisaggTopology{}, fmt.Errorf(none+"lists an MTP and a non-MTP deployment at the row's concurrency (%s): %w",
				t.Entry, errNoSpecColumn)
		case o.Prefill.sameShape(t.Prefill) && o.Decode.sameShape(t.Decode):
			return DisaggTopology{}, fmt.Errorf(none+"lists MTP deployments with different draft lengths at the row's concurrency (%s: recipes %s, %s): "+
				"the row does not say which ran", t.Entry, path.Base(t.Recipe), path.Base(o.Recipe))
		default:
			return DisaggTopology{}, fmt.Errorf(none+"lists deployments of different shapes at the row's concurrency (%s: P %v, D %v; %s: P %v, D %v): "+
				"the row does not say which ran", t.Entry, t.Prefill, t.Decode, o.Entry, o.Prefill, o.Decode)
		}
	}
	for _, w := range []TopologyRole{t.Prefill, t.Decode} {
		if w.TP == 1 && (w.DPAttention || t.Framework == ixFrameworks["sglang"] && w.Nodes > 0) {
			// Some early entries (GB200 under SGLang, 2025-12) give every role tp 1, ep 1: the
			// parallel degrees lived in the launch scripts, not in the file; those with dp-attn
			// and the nodes they span are read (sglangDegrees), the others are not determined.
			dpa := ""
			if w.DPAttention {
				dpa = " with dp-attn"
			}
			return DisaggTopology{}, fmt.Errorf(none+"lists the row's deployment (%s) without its parallel degrees (tp 1, ep %d%s)", t.Entry, w.EP, dpa)
		}
	}
	switch {
	case t.SpecDecoding == "mtp" && t.MTPDrafts == 0:
		return DisaggTopology{}, fmt.Errorf(none+"lists the row's deployment (%s) with MTP speculative decoding, and neither it nor its recipe (%q) gives the draft length",
			t.Entry, t.Recipe)
	case t.SpecDecoding != "none" && t.SpecDecoding != "mtp":
		return DisaggTopology{}, fmt.Errorf("%s: %s speculative decoding (InferenceX's entry %s ran it)", UnsupportedFeature, strings.ToUpper(t.SpecDecoding), t.Entry)
	}
	if settled {
		t.SettledByConfig, t.SettledByPair = r.ConfigID, r.SpecPair.Line > 0
	}
	return t, nil
}

// settledNote says that row r's speculative decoding (r.SpecMethod) was settled by the other rows
// of its InferenceX database configuration (SpecMethodsByConfig), the public configuration
// listing deployments of both kinds for the row itself.
func settledNote(r Row) string {
	method := "no MTP"
	if r.SpecMethod != "none" {
		method = strings.ToUpper(r.SpecMethod)
	}
	if r.SpecPair.Line > 0 {
		which := "faster"
		if r.SpecMethod == "none" {
			which = "slower"
		}
		return fmt.Sprintf("speculative decoding: %s, the %s of the two measurements of its deployment (mean TPOT %.4g ms here, %.4g ms "+
			"at line %d), for which the public configuration lists an MTP and a non-MTP run", method, which, r.TPOTMs, r.SpecPair.TPOTMs,
			r.SpecPair.Line)
	}
	return fmt.Sprintf("speculative decoding: %s, the one method for which every row of the row's InferenceX database configuration "+
		"(config_id %s, a key that includes the method) has a listed deployment; for this row alone the public configuration lists both kinds",
		method, strings.TrimSpace(r.ConfigID))
}

// candidatesFor returns the items of table that list row r (listsRow: its model, GPU, backend,
// precision, ISL/OSL and concurrency on its date) and, of those, the ones consistent with its
// prefill_tp_size, prefill_moe_ep_size and decode_tp_size where it gives them (or whose GPUs in
// all are the tp_size it gives both roles).
func candidatesFor(table []DisaggTopology, r Row) (match, consistent []DisaggTopology) {
	r, prefix, framework := ixKeys(r)
	for _, t := range table {
		if !listsRow(t, r, prefix, framework) {
			continue
		}
		match = append(match, t)
		// A role whose degrees were read from its nodes agrees with the export's copy of the
		// placeholder (1).
		agree := func(have, want int, w TopologyRole) bool {
			return have == 0 || have == want || w.FromNodes && have == 1
		}
		// The export writes some runs' total GPUs in both roles' tp_size (e.g. 20 and 20 for a
		// 4-GPU context server and a 16-GPU generation server); no item's own TPs read so.
		total := r.Prefill.Tensor > 0 && r.Prefill.Tensor == r.Decode.Tensor && r.Prefill.Tensor == t.gpus()
		if total || agree(r.Prefill.Tensor, t.Prefill.TP, t.Prefill) && agree(r.Prefill.MoEExpert, t.Prefill.EP, t.Prefill) &&
			agree(r.Decode.Tensor, t.Decode.TP, t.Decode) {
			consistent = append(consistent, t)
		}
	}
	return match, consistent
}

// ixKeys returns r with its measured_at, system and precision trimmed (the latter two
// lower-cased), and the InferenceX model prefix and disaggregated framework of its model and
// backend ("" when InferenceX has none).
func ixKeys(r Row) (Row, string, string) {
	r.MeasuredAt = strings.TrimSpace(r.MeasuredAt)
	r.System, r.Precision = strings.ToLower(strings.TrimSpace(r.System)), strings.ToLower(strings.TrimSpace(r.Precision))
	prefix, framework := "", ixFrameworks[strings.ToLower(strings.TrimSpace(r.Backend))]
	for m, p := range ixModelPrefixes {
		if strings.EqualFold(m, strings.TrimSpace(r.Model)) {
			prefix = p
		}
	}
	return r, prefix, framework
}

// listsRow reports whether item t serves row r (keys from ixKeys): its entry is of r's model
// prefix and framework, precision, GPU family, ISL and OSL, it lists r's concurrency, and it was
// in force at the end of r's day.
func listsRow(t DisaggTopology, r Row, prefix, framework string) bool {
	return prefix != "" && strings.HasPrefix(t.Entry, prefix+"-") && t.Framework == framework && t.Precision == r.Precision &&
		ixRunnerServes(t.Runner, r.System) &&
		t.ISL == r.ISL && t.OSL == r.OSL && slices.Contains(t.Concurrencies, r.Concurrency) && t.inForce(r.MeasuredAt)
}

// listedFor returns the items of table that list row r's own deployment, for a row that gives
// its worker counts: items that serve it (listsRow, at the concurrency the row runs at:
// rowConcurrency) with its prefill and decode worker counts and its GPUs per worker of each role
// (tp × attention-DP × pp; an item's TP is its workers' GPU count). A measured_at that is not a
// date matches none.
func listedFor(table []DisaggTopology, r Row) []DisaggTopology {
	r, prefix, framework := ixKeys(r)
	r.Concurrency = rowConcurrency(r)
	gpus := func(w WorkerShape) int { return max(w.Tensor, 1) * max(w.AttentionData, 1) * max(w.Pipeline, 1) }
	var out []DisaggTopology
	for _, t := range table {
		if listsRow(t, r, prefix, framework) && t.Prefill.Workers == r.Prefill.Workers && t.Decode.Workers == r.Decode.Workers &&
			t.Prefill.TP == gpus(r.Prefill) && t.Decode.TP == gpus(r.Decode) {
			out = append(out, t)
		}
	}
	return out
}

// errNoSpecColumn ends the error of a row whose deployment the public record lists both with and
// without speculative decoding (or with different draft lengths) at its concurrency: the row's
// own columns cannot say which ran (planRow names its config_id, whose other rows can).
var errNoSpecColumn = errors.New("the file has no speculative-decoding column to say which ran")

// SpecMethodsByConfig sets Row.SpecMethod of the disaggregated InferenceX rows whose
// speculative decoding their own columns leave open but the other rows of their ConfigID settle.
// InferenceX's results database keys a configuration by, among others, its speculative-decoding
// method (InferenceX-app's configs table), so every row of one ConfigID ran the same method. A
// row's candidates are the methods of the deployments InferenceX's public configuration lists
// for it (rowSpecMethods); the group's method is the one every row with candidates allows, when
// exactly one does. Rows without a ConfigID, and groups whose rows allow several methods or none
// in common, keep SpecMethod "" and are matched on their own. Errors: the embedded table
// cannot be read.
func SpecMethodsByConfig(rows []Row) error {
	table, err := InferenceXDisagg()
	if err != nil {
		return err
	}
	specMethodsByConfig(table, rows)
	return nil
}

// specMethodsByConfig is SpecMethodsByConfig over table.
func specMethodsByConfig(table []DisaggTopology, rows []Row) {
	groups := map[string][]int{}
	for i, r := range rows {
		if id := strings.TrimSpace(r.ConfigID); id != "" && HarnessFor(r).Name == HarnessInferenceX {
			groups[id] = append(groups[id], i)
		}
	}
	for _, members := range groups {
		var common map[string]bool // nil until a row has candidates
		for _, i := range members {
			c := rowSpecMethods(table, rows[i])
			if len(c) == 0 {
				continue
			}
			if common == nil {
				common = c
				continue
			}
			for m := range common {
				if !c[m] {
					delete(common, m)
				}
			}
		}
		if len(common) != 1 {
			continue
		}
		for m := range common {
			for _, i := range members {
				rows[i].SpecMethod = m
			}
		}
	}
}

// minPairTPOTRatio is the least ratio of the two mean TPOTs of a pair of rows for
// SpecMethodsByPair to take the faster as the MTP run. MTP drafting 1 to 3 tokens per decode
// round cuts TPOT by 1.2 to 2 times in every pair of the shared MoE file (2026-12-07); a smaller
// gap could be run-to-run spread, which would not say which run drafted.
const minPairTPOTRatio = 1.1

// SpecMethodsByPair sets Row.SpecMethod of disaggregated InferenceX rows that
// SpecMethodsByConfig left open and whose deployment the public configuration lists both with
// and without MTP (rowSpecMethods gives exactly "mtp" and "none"): when the file holds exactly
// two measurements of that deployment (rows of one model, GPU, backend, precision, ISL/OSL,
// concurrency, measured_at and worker columns; a measurement repeated with the same TTFT and
// TPOT, as two export snapshots give it, counts once), they are the runs of the two listed
// deployments, and the one of the lower mean TPOT, by at least minPairTPOTRatio, is the MTP
// run. Each row records the other (Row.SpecPair). Rows of one measurement alone, of three or
// more, or of TPOTs closer than the ratio keep SpecMethod "". Errors: the embedded table cannot
// be read.
func SpecMethodsByPair(rows []Row) error {
	table, err := InferenceXDisagg()
	if err != nil {
		return err
	}
	specMethodsByPair(table, rows)
	return nil
}

// specMethodsByPair is SpecMethodsByPair over table.
func specMethodsByPair(table []DisaggTopology, rows []Row) {
	type key struct {
		model, system, backend, precision, day string
		isl, osl, concurrency                  int
		prefill, decode                        WorkerShape
	}
	type measurement struct{ ttft, tpot float64 }
	groups := map[key]map[measurement][]int{}
	for i, r := range rows {
		if r.SpecMethod != "" || HarnessFor(r).Name != HarnessInferenceX {
			continue
		}
		if m := rowSpecMethods(table, r); len(m) != 2 || !m["mtp"] || !m["none"] {
			continue
		}
		k := key{strings.TrimSpace(r.Model), strings.ToLower(strings.TrimSpace(r.System)), strings.ToLower(strings.TrimSpace(r.Backend)),
			strings.ToLower(strings.TrimSpace(r.Precision)), strings.TrimSpace(r.MeasuredAt), r.ISL, r.OSL, r.Concurrency, r.Prefill, r.Decode}
		if groups[k] == nil {
			groups[k] = map[measurement][]int{}
		}
		m := measurement{r.TTFTMs, r.TPOTMs}
		groups[k][m] = append(groups[k][m], i)
	}
	for _, g := range groups {
		if len(g) != 2 {
			continue
		}
		var ms []measurement
		for m := range g {
			ms = append(ms, m)
		}
		if ms[0].tpot > ms[1].tpot {
			ms[0], ms[1] = ms[1], ms[0]
		}
		if !(ms[0].tpot > 0 && ms[1].tpot >= minPairTPOTRatio*ms[0].tpot) {
			continue
		}
		for j, method := range []string{"mtp", "none"} {
			other := g[ms[1-j]][0]
			for _, i := range g[ms[j]] {
				rows[i].SpecMethod = method
				rows[i].SpecPair.Line, rows[i].SpecPair.TPOTMs = rows[other].Line, rows[other].TPOTMs
			}
		}
	}
}

// rowSpecMethods is the set of speculative-decoding methods (DisaggTopology.SpecDecoding) of the
// deployments InferenceX's configuration lists for disaggregated InferenceX row r: those of its
// worker counts (listedFor) when it gives them, else those DisaggFromInferenceX would choose
// among (matching its shape columns); empty for any other row or when none is listed.
func rowSpecMethods(table []DisaggTopology, r Row) map[string]bool {
	mode := strings.ToLower(r.Mode)
	if mode != "disagg" && mode != "disaggregated" || r.Problem != "" {
		return nil
	}
	var listed []DisaggTopology
	if r.Prefill.Workers != 0 || r.Decode.Workers != 0 {
		listed = listedFor(table, r)
	} else if _, err := time.Parse(time.DateOnly, strings.TrimSpace(r.MeasuredAt)); err == nil {
		_, listed = candidatesFor(table, r)
	}
	if len(listed) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, t := range listed {
		out[t.SpecDecoding] = true
	}
	return out
}

// bySpecMethod keeps the deployments of listed whose speculative decoding is method, when method
// is set and some are; otherwise listed as it is. It also reports whether it dropped any.
func bySpecMethod(listed []DisaggTopology, method string) ([]DisaggTopology, bool) {
	if method == "" {
		return listed, false
	}
	kept := slices.DeleteFunc(slices.Clone(listed), func(t DisaggTopology) bool { return t.SpecDecoding != method })
	if len(kept) == 0 || len(kept) == len(listed) {
		return listed, false
	}
	return kept, true
}

// NoIXDeployment is in the skip reason of a disaggregated InferenceX row for which the public
// configuration lists no deployment at all (or none for its model and backend): the only case in
// which Options.OneWorkerPerRole may read the row as one worker per role (DisaggFromInferenceX
// returns an error for which errors.Is(err, errNoIXDeployment) holds).
const NoIXDeployment = "lists no deployment"

// errNoIXDeployment marks the errors of rows the public configuration says nothing about.
var errNoIXDeployment = errors.New(NoIXDeployment)

// silentError is the skip reason of a row the public configuration says nothing about: its
// message, and errors.Is(err, errNoIXDeployment).
type silentError struct{ msg string }

func (e silentError) Error() string        { return e.msg }
func (e silentError) Is(target error) bool { return target == errNoIXDeployment }

// ixConfigPath is the configuration file the table comes from; ixLauncherPath the GB200 runner
// script that held the GB200 TensorRT-LLM deployments before the configuration listed them
// (DisaggTopology.File).
const (
	ixConfigPath   = ".github/configs/nvidia-master.yaml"
	ixLauncherPath = "runners/launch_gb200-nv.sh"
)

// UnsupportedFeature starts the skip reason of a row whose deployment, as the public record gives
// it, uses an engine feature servesweep does not simulate (validate's skipped rows by reason
// count them per feature and entry).
const UnsupportedFeature = "unsupported feature"
