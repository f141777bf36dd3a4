package calibrate

import (
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// Engine defaults of a planned row whose harness sets no server flags, and the transfer rate of
// disaggregated rows.
const (
	// MaxBatchedTokens is the per-pass token budget of every simulated engine: the default of
	// vLLM (max_num_batched_tokens), TensorRT-LLM (max_num_tokens) and SGLang
	// (chunked_prefill_size) alike.
	MaxBatchedTokens = 8192
	// RDMAGBps is the KV-transfer bandwidth per GPU between prefill and decode workers on
	// different nodes, in decimal GB/s: one 400 Gb/s NIC (ConnectX-7 NDR) per GPU, as HGX
	// H100/B200 systems have. GB200 and GB300 NVL72 racks transfer over NVLink instead
	// (Hardware.LinkGBps): their 72 GPUs share one NVLink domain.
	RDMAGBps = 50.0
)

// Readings of a disaggregated row that leaves cells empty, recorded in Plan.Notes (docs/validation.md,
// "Validation against measured deployments", documents them beside the aggregated reading). The
// file does not say what was deployed; these are the smallest deployments consistent with it.
const (
	// DisaggWorkersNote: with neither prefill_num_workers nor decode_num_workers given (871 of
	// the 1,053 disaggregated rows of measured_moe_calibration.csv) and Options.OneWorkerPerRole
	// set, the row is simulated as one prefill worker and one decode worker of the given shapes
	// (an InferenceX row takes the deployment InferenceX's public configuration lists for it
	// first, ixTopology, and falls back to this reading only when that does not determine one;
	// 313 of the 871 are simulated from the configuration). One of the two given alone is an
	// error naming the empty column, and so is a row whose concurrency one decode worker's KV
	// pool cannot hold (see PlanRow).
	DisaggWorkersNote = "prefill_num_workers and decode_num_workers empty: one prefill and one decode worker"
	// PrefillBatchNote: an empty prefill_batch_size is 1 per attention-DP rank, the value of
	// every row of the measured files that gives it and the prefill role's default
	// (scheduler.max_sequences, dynosim-spec.md §3.2.1).
	PrefillBatchNote = "prefill_batch_size empty: 1 per rank"
	// DecodeBatchNote starts the note of an empty decode_batch_size: the decode ranks share the
	// row's concurrency, ceil(concurrency / (decode_attention_dp_size × decode_num_workers))
	// running requests per rank, the identity concurrency = decode_batch_size ×
	// decode_attention_dp_size × decode_num_workers that every row giving all three satisfies,
	// read the other way. KV capacity still bounds admission (the engines' own limit at such
	// loads), so a rank never runs more than its KV pool holds.
	DecodeBatchNote = "decode_batch_size empty"
)

// Plan is the simulation of one measured row.
type Plan struct {
	// Config is the deployment and workload to run.
	Config *config.Config
	// Harness is the benchmark client the row was measured with (HarnessFor).
	Harness Harness
	// Precisions are the weight and KV-cache formats simulated.
	Precisions timing.Precisions
	// Shape describes the workers, e.g. "agg 4 × (TP2)" or "disagg P 40 × (TP1) / D 6 × (TP4)".
	Shape string
	// Concurrency is the simulated closed-loop concurrency.
	Concurrency int
	// Notes say where the simulation departs from the row (e.g. a scheduler style that is not
	// implemented).
	Notes []string
}

// rowPrecisions reads the row's weight precision (gemm_quant_mode, else precision, "" = bf16;
// an unknown one, or a precision of another format than gemm_quant_mode, is an error naming the
// column it came from) and derives the KV-cache format: fp8 with fp8/fp4 weights (the quantized recipes of all three
// backends quantize the KV cache too), else bf16.
func rowPrecisions(r Row) (timing.Precisions, error) {
	s, col := r.GEMMQuant, "gemm_quant_mode"
	if s == "" {
		s, col = r.Precision, "precision"
	}
	p := timing.Precisions{Weights: timing.BF16, KVCache: timing.BF16}
	if s == "" {
		return p, nil
	}
	w, err := timing.ParsePrecision(s)
	if err != nil {
		return p, fmt.Errorf("%s: %v", col, err)
	}
	if col == "gemm_quant_mode" && r.Precision != "" {
		// Both given: precision must name the same format family (fp8 beside fp8_block, fp4
		// beside nvfp4), so that a typo in either is not read past.
		pw, err := timing.ParsePrecision(r.Precision)
		if err != nil {
			return p, fmt.Errorf("precision: %v", err)
		}
		if pw != w {
			return p, fmt.Errorf("precision %q and gemm_quant_mode %q name different weight formats (%s and %s); make them agree", r.Precision, r.GEMMQuant, pw, w)
		}
	}
	p.Weights = w
	if w != timing.BF16 {
		p.KVCache = timing.FP8
	}
	return p, nil
}

func shapeString(n int, s WorkerShape) string {
	b := fmt.Sprintf("%d × (TP%d", n, s.Tensor)
	if s.Pipeline > 1 {
		b += fmt.Sprintf(" PP%d", s.Pipeline)
	}
	if s.AttentionData > 1 {
		b += fmt.Sprintf(" DP%d", s.AttentionData)
	}
	if s.MoEExpert > 1 {
		b += fmt.Sprintf(" EP%d", s.MoEExpert)
	}
	if s.MoETensor > 1 {
		b += fmt.Sprintf(" MoE-TP%d", s.MoETensor)
	}
	if s.RedundantExperts > 0 {
		b += fmt.Sprintf(" +%d redundant experts", s.RedundantExperts)
	}
	return b + ")"
}

// role builds one worker role of the simulated deployment.
func role(s WorkerShape, replicas, maxSeqs, blockSize int, mf float64, forwardModel string) *config.WorkerRole {
	tokens := MaxBatchedTokens
	if s.MaxBatchedTokens > 0 {
		tokens = s.MaxBatchedTokens
	}
	if s.MemoryFraction > 0 {
		mf = s.MemoryFraction
	}
	return &config.WorkerRole{
		Parallelism: config.Parallelism{Replicas: replicas, Tensor: s.Tensor, Pipeline: s.Pipeline,
			AttentionData: s.AttentionData, MoeTensor: s.MoETensor, MoeExpert: s.MoEExpert, RedundantExperts: s.RedundantExperts},
		Scheduler: config.Scheduler{MaxBatchedTokens: tokens, MaxSequences: maxSeqs,
			CapacityPolicy: config.CapacityGuaranteedNoEvict, ChunkedPrefillSize: s.ChunkedPrefillSize, RecvInterval: s.RecvInterval},
		KVCache: config.KVCache{BlockSize: blockSize, PrefixCaching: true,
			Capacity: config.KVCapacity{Type: config.CapacityDefault, MemoryFraction: mf, MaxTokens: s.MaxTotalTokens}},
		Timing: config.Timing{Type: config.TimingDefault, ForwardModel: forwardModel},
	}
}

// normalize turns absent (0) parallel degrees into 1.
func normalize(s WorkerShape) WorkerShape {
	s.Tensor, s.Pipeline, s.AttentionData = max(s.Tensor, 1), max(s.Pipeline, 1), max(s.AttentionData, 1)
	s.MoETensor, s.MoEExpert = max(s.MoETensor, 1), max(s.MoEExpert, 1)
	return s
}

// NoWorkerCounts is the error text (and so the skip reason, RowResult.Reason) of a disaggregated
// row that gives neither prefill_num_workers nor decode_num_workers while
// Options.OneWorkerPerRole is off.
const NoWorkerCounts = "disagg row needs prefill_num_workers and decode_num_workers, both empty " +
	"(one worker of each role is a reading made only when asked for)"

// PlanRow builds the simulation of row r: synthetic ISL/OSL requests under the row's
// closed-loop concurrency, the row's model, GPU, precision and worker shape, `default` timing
// and KV capacity, and the row's backend with its scheduler style and KV defaults (block size,
// memory fraction; TensorRT-LLM's guaranteed_no_evict capacity policy).
//
// Aggregated rows: batch_size is the per-worker running limit; when concurrency is a multiple
// k > 1 of batch_size the deployment is taken to have k replicas (docs/validation.md's reading), else
// one. An empty concurrency means batch_size. Disaggregated rows use prefill_* and decode_*
// (replicas = *_num_workers, running limit per attention-DP rank = *_batch_size) and transfer KV
// at RDMAGBps per GPU (NVLink on gb200 and gb300); an empty concurrency means decode_batch_size ×
// decode_attention_dp_size × decode_num_workers. Empty worker counts and batch sizes follow
// DisaggWorkersNote, PrefillBatchNote and DecodeBatchNote, each noted in Plan.Notes.
//
// The error says why the row cannot be simulated: a malformed cell, an unknown model or GPU, an
// unknown backend or mode, a missing shape.
func PlanRow(r Row, o Options) (*Plan, error) {
	o = o.withDefaults()
	if r.Problem != "" {
		return nil, fmt.Errorf("%s", r.Problem)
	}
	if r.OSL < 2 {
		return nil, fmt.Errorf("osl: %d output tokens leave TPOT undefined ((latency − TTFT) / (output − 1)); a row needs osl >= 2", r.OSL)
	}
	for _, c := range []struct {
		col string
		n   int
	}{{"isl", r.ISL}, {"osl", r.OSL}} {
		if c.n > config.MaxTokensPerRequest {
			return nil, fmt.Errorf("%s: must be <= %d tokens (the longest request servesweep simulates), got %d", c.col, config.MaxTokensPerRequest, c.n)
		}
	}
	m, err := timing.ResolveModel(r.Model)
	if err != nil {
		return nil, fmt.Errorf("model_path: %w", err)
	}
	topoNotes, mtpDrafts, err := ixTopology(&r, m, o)
	if err != nil {
		return nil, err
	}
	shapeNotes, err := singleNodeDeployment(&r, m.ID)
	if err != nil {
		return nil, err
	}
	topoNotes = append(topoNotes, shapeNotes...)
	moeNotes := append(topoNotes, splitMoE(&r, m)...)
	hw, err := timing.LookupHardware(r.System)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	prec, err := rowPrecisions(r)
	if err != nil {
		return nil, err
	}
	p := &Plan{Precisions: prec, Notes: moeNotes}
	if strings.TrimSpace(r.Precision) == "" && strings.TrimSpace(r.GEMMQuant) == "" {
		p.Notes = append(p.Notes, BF16Note)
	}
	switch r.Backend {
	case config.BackendVLLM, config.BackendSGLang, config.BackendTRTLLM:
	default:
		return nil, fmt.Errorf("backend: %q is not one of vllm, sglang, trtllm", r.Backend)
	}
	bs, mf := config.KVDefaults(r.Backend)
	frontendMs := o.Factors.FrontendMs
	cfg := &config.Config{
		File: "", // skip reasons carry no line, so rows group by reason; RowResult.Line has it
		Engine: config.Engine{
			Model: r.Model, Hardware: r.System, Backend: r.Backend, ContextLength: r.ISL + r.OSL + 1,
			Precision: config.Precision{Weights: string(prec.Weights), KVCache: string(prec.KVCache)},
			Frontend:  &config.Frontend{OverheadMs: &frontendMs},
		},
		Router:  config.Router{Policy: config.PolicyRoundRobin, PrefillLoadModel: config.PrefillLoadModel{Type: "none"}},
		Planner: config.Planner{Policy: "disabled"},
	}
	var conc int
	switch strings.ToLower(r.Mode) {
	case "agg", "aggregated":
		conc, err = p.aggregated(cfg, r, bs, mf, o)
	case "disagg", "disaggregated":
		conc, err = p.disaggregated(cfg, r, hw, bs, mf, o)
	default:
		err = fmt.Errorf("mode %q is not agg or disagg", r.Mode)
	}
	if err != nil {
		return nil, err
	}
	if mtpDrafts > 0 {
		rates := MTPAcceptance(mtpDrafts)
		cfg.Engine.Speculation = &config.Speculation{Kind: config.SpeculationMTP, NumSpeculativeTokens: mtpDrafts, AcceptanceRates: rates, Seed: 42}
		p.Notes = append(p.Notes, fmt.Sprintf("MTP speculative decoding, draft tokens per round %d (the deployment's), acceptance %v (MTPAcceptance)", mtpDrafts, rates))
	}
	if err := p.traffic(cfg, r, m, conc, o); err != nil {
		return nil, err
	}
	p.Config, p.Concurrency = cfg, conc
	return p, nil
}

// MTP acceptance of DeepSeek-R1's module (MTPAcceptance): MTPFirstAcceptance is the first
// draft's, the lower end of the 85–90 % the DeepSeek-V3 technical report (§5.4.3) measured
// "across various generation topics"; each later position accepts MTPAcceptanceDecay times the
// one before (given it), the module being trained for the first position and reused for the
// others. The decay makes the expected accepted length of 7 drafts 1 + Σ_{i≤7} Π_{j≤i} p_j =
// 3.20, the 3.20 Nebius measured for the original DeepSeek-V3 MTP module at 7 drafts (MT-bench,
// HumanEval and GSM8K at temperature 0; model card of nebius/MTP-DeepSeek-V3-0324). They are
// published figures, not fitted to any measured row; InferenceX's random prompts may accept
// differently, which the MTP rows' scores, reported apart, show.
const (
	MTPFirstAcceptance = 0.85
	MTPAcceptanceDecay = 0.856
)

// MTPAcceptance is the acceptance rates of n MTP draft tokens, p_j = MTPFirstAcceptance ×
// MTPAcceptanceDecay^(j−1) for j = 1..n (0.85, 0.728, 0.623, ...), each rounded to 3 decimals.
func MTPAcceptance(n int) []float64 {
	rates := make([]float64, n)
	p := MTPFirstAcceptance
	for j := range rates {
		rates[j] = math.Round(p*1000) / 1000
		p *= MTPAcceptanceDecay
	}
	return rates
}

// ixTopology gives a disaggregated InferenceX row without worker counts the deployment
// InferenceX's public configuration lists for it (DisaggFromInferenceX): both roles' worker
// counts and shapes, the row's batch sizes kept, and the serving limits of its recipe
// (ixRecipe); a row that gives its worker counts keeps its own deployment and takes the recipe
// of the one the configuration lists for it (ixListedRecipe); an aggregated one on more GPUs than
// one node holds becomes the disaggregated run it was (multiNodeTopology). It returns the notes
// that say so. Other rows are left as they are. A row without worker counts whose deployment the public
// record does not determine is an error (its skip reason), unless o.OneWorkerPerRole asks for
// the one-worker reading; a row whose deployment needs a feature servesweep does not simulate
// stays an error either way. mtpDrafts is the deployment's MTP draft length
// (DisaggTopology.MTPDrafts; 0: no MTP).
func ixTopology(r *Row, m timing.ModelSpec, o Options) (notes []string, mtpDrafts int, err error) {
	if aggregatedRow(*r) && HarnessFor(*r).Name == HarnessInferenceX {
		return multiNodeTopology(r, m)
	}
	mode := strings.ToLower(r.Mode)
	if mode != "disagg" && mode != "disaggregated" || HarnessFor(*r).Name != HarnessInferenceX {
		return nil, 0, nil
	}
	if _, ok := ixFrameworks[strings.ToLower(strings.TrimSpace(r.Backend))]; !ok {
		return nil, 0, nil // PlanRow names the backend
	}
	if r.Prefill.Workers != 0 || r.Decode.Workers != 0 {
		return ixListedRecipe(r, m)
	}
	// The lookup matches the precision column; the simulation runs gemm_quant_mode's format.
	if r.GEMMQuant != "" {
		q, errQ := timing.ParsePrecision(r.GEMMQuant)
		w, errW := timing.ParsePrecision(r.Precision)
		if errQ == nil && errW == nil && q != w {
			return nil, 0, fmt.Errorf("no disaggregated worker counts, and precision %q and gemm_quant_mode %q name different weight formats: "+
				"the deployment InferenceX ran cannot be matched", r.Precision, r.GEMMQuant)
		}
	}
	t, err := DisaggFromInferenceX(*r)
	switch {
	case err != nil && o.OneWorkerPerRole && errors.Is(err, errNoIXDeployment):
		// The record is silent about the row: the one-worker reading, asked for, says so.
		return []string{"InferenceX's public configuration lists no deployment for the row"}, 0, nil
	case err != nil:
		return nil, 0, err
	}
	return ixDeployment(r, m, t)
}

// multiNodeTopology reads aggregated InferenceX row r whose worker spans more GPUs than one node
// holds (multiNodeAggregated, of the worker as singleNodeShape reads it) as the multi-node run it
// was: the disaggregated deployment of that
// many GPUs in all that InferenceX's public record lists for the row's date, model, GPU,
// backend, precision, ISL/OSL and concurrency (DisaggFromInferenceX), given to r with ixDeployment;
// notes and drafts as ixTopology's. A row of one node's GPUs is left as it is; one whose run the
// record does not determine is an error, its skip reason (MultiNodeAggregated and why).
func multiNodeTopology(r *Row, m timing.ModelSpec) (notes []string, mtpDrafts int, err error) {
	shaped := *r // the worker as run: singleNodeDeployment reads it so too
	if _, err := singleNodeShape(&shaped, m.ID); err != nil {
		return nil, 0, nil // singleNodeDeployment gives the reason
	}
	refusal := multiNodeAggregated(shaped)
	if refusal == nil {
		return nil, 0, nil
	}
	n := max(shaped.Agg.Tensor, 1) * max(shaped.Agg.AttentionData, 1) * max(shaped.Agg.Pipeline, 1)
	d := *r
	d.Mode, d.Agg = "disagg", WorkerShape{}
	d.Prefill, d.Decode = WorkerShape{Tensor: n}, WorkerShape{Tensor: n}
	t, err := DisaggFromInferenceX(d)
	if err != nil {
		return nil, 0, fmt.Errorf("%v; read so: %v", refusal, err)
	}
	d.Prefill, d.Decode = WorkerShape{}, WorkerShape{} // the row gave neither role's shape
	notes, mtpDrafts, err = ixDeployment(&d, m, t)
	if err != nil {
		return nil, 0, err
	}
	*r = d
	note := fmt.Sprintf("an aggregated row of %d GPUs, more than one %s node holds: InferenceX's multi-node run, the disaggregated deployment of %d GPUs in all", n, r.System, n)
	return append([]string{note}, notes...), mtpDrafts, nil
}

// ixDeployment gives row r deployment t, the one InferenceX's public record lists for it: both
// roles' worker counts and shapes, the row's batch sizes kept, and the serving limits of t or its
// recipe (ixRecipe). It returns the notes that say so and t's MTP draft length; the error, a
// skip reason, names an expert parallelism that does not divide the experts t's recipe places.
func ixDeployment(r *Row, m timing.ModelSpec, t DisaggTopology) (notes []string, mtpDrafts int, err error) {
	redundant, err := recipeRedundant(*r, m, t, [2]int{t.Prefill.EP, t.Decode.EP})
	if err != nil {
		return nil, 0, err
	}
	pb, db := r.Prefill.BatchSize, r.Decode.BatchSize
	replaced := replacedColumns(r.Prefill, r.Decode, t)
	r.Prefill, r.Decode = t.Prefill.Shape(), t.Decode.Shape()
	r.Prefill.BatchSize, r.Decode.BatchSize = pb, db
	r.Prefill.RedundantExperts, r.Decode.RedundantExperts = redundant[0], redundant[1]
	note := fmt.Sprintf(deploymentNote+"%s (%s at %s, in force on %s): P %v, D %v", t.Entry, t.File, shortHash(t.FromCommit),
		r.MeasuredAt, t.Prefill, t.Decode)
	if t.Recipe != "" {
		note += ", recipe " + t.Recipe
	}
	notes = []string{note}
	if t.PerDecodeWorker {
		notes = append(notes, fmt.Sprintf("its benchmark ran each listed concurrency once per decode worker: the client's %d is %d × %d decode workers",
			r.Concurrency, r.Concurrency/t.Decode.Workers, t.Decode.Workers))
	}
	if len(replaced) > 0 {
		notes = append(notes, "the row's "+strings.Join(replaced, ", ")+": the deployment's values are simulated")
	}
	if t.SettledByConfig != "" || t.SettledByPair {
		notes = append(notes, settledNote(*r))
	}
	return append(notes, ixRecipe(r, t, pb, db, false)...), t.MTPDrafts, nil
}

// recipeRedundant is the redundant experts per role (prefill, decode) of deployment t for model
// m: its recipe's (RecipeRedundantExperts), or, for an item without a recipe, its roles' own
// (TopologyRole.RedundantExperts); the error, a skip reason, names a role whose expert
// parallelism ep (prefill, decode) does not divide the experts plus those.
func recipeRedundant(r Row, m timing.ModelSpec, t DisaggTopology, ep [2]int) (redundant [2]int, err error) {
	if m.MoE == nil {
		return redundant, nil
	}
	recipe, entry := t.Recipe, t.Entry
	redundant[0], redundant[1] = RecipeRedundantExperts(recipe, m.MoE.Experts)
	if recipe == "" {
		redundant = [2]int{t.Prefill.RedundantExperts, t.Decode.RedundantExperts}
	}
	for i, n := range ep {
		if slots := m.MoE.Experts + redundant[i]; n > 1 && slots%n != 0 {
			return redundant, fmt.Errorf("%s: expert parallelism over %d GPUs, which does not divide %s's %d experts + %d redundant (InferenceX's entry %s; "+
				"the public record does not say how many redundant experts the deployment places)", UnsupportedFeature, n, r.Model, m.MoE.Experts, redundant[i], entry)
		}
	}
	return redundant, nil
}

// ixRecipe applies the serving limits of t's recipe, or of t itself, to r and returns the notes
// that say so: a TensorRT-LLM recipe's prefill max_batch_size and max_num_tokens
// (RecipePrefillLimits), else the item's own PREFILL_MAX_BATCH_SIZE and PREFILL_MAX_NUM_TOKENS
// (TopologyRole.MaxBatch, MaxTokens), in place of the row's prefill_batch_size pb; an SGLang
// recipe's batch, chunk and receive settings (RecipeSGLangLimits); and the decode batch limit of
// a recipe name's batchN (recipeBatch), else the item's DECODE_MAX_BATCH_SIZE. The row's decode_batch_size db stands unless overrideDecode: a row that
// gives its worker counts writes its concurrency share there, not the server's limit, so the
// deployment's limit replaces it (noted where they differ).
func ixRecipe(r *Row, t DisaggTopology, pb, db int, overrideDecode bool) (notes []string) {
	b, tokens, from, ok := RecipePrefillLimits(t.Recipe)
	src := "max_batch_size and max_num_tokens of the recipe's prefill workers"
	switch {
	case ok && !strings.HasPrefix(strings.Replace(t.Recipe, "recipies/", "recipes/", 1), from):
		src = "max_batch_size and max_num_tokens of the prefill workers of the recipes in " + from +
			"; InferenceX tracks no recipe of the row's folder"
	case !ok && t.Prefill.MaxBatch > 0 && t.Prefill.MaxTokens > 0:
		b, tokens, ok = t.Prefill.MaxBatch, t.Prefill.MaxTokens, true
		src = "the deployment's PREFILL_MAX_BATCH_SIZE and PREFILL_MAX_NUM_TOKENS, each context server's max_batch_size and max_num_tokens"
	}
	if ok {
		switch {
		case pb == 0:
			notes = append(notes, fmt.Sprintf("prefill_batch_size empty: %d per rank and %d tokens per pass (%s)", b, tokens, src))
		case pb != b:
			notes = append(notes, fmt.Sprintf("the row's prefill_batch_size %d differs from %d per rank and %d tokens per pass (%s), "+
				"which are simulated", pb, b, tokens, src))
		}
		r.Prefill.BatchSize, r.Prefill.MaxBatchedTokens = b, tokens
	}
	rowDB := db
	if overrideDecode {
		db = 0
	}
	if l, ok := RecipeSGLangLimits(t.Recipe); ok {
		notes = append(notes, l.apply(r, pb, db))
	}
	n, nsrc := recipeBatch(t.Recipe), "the recipe's name"
	if n == 0 && t.Decode.MaxBatch > 0 {
		// DECODE_MAX_NUM_TOKENS is the batch times the tokens a request verifies per pass (1 +
		// MTP drafts) in every item that sets it, so the batch limit is the binding one; the
		// decode role's token budget stays the engine's (TensorRT-LLM refuses one below a KV
		// block, which the smallest of them are).
		n, nsrc = t.Decode.MaxBatch, "the deployment's DECODE_MAX_BATCH_SIZE"
	}
	if n > 0 && db == 0 {
		// The recipe's name (e.g. ctx1_gen5_tep8_batch64) or the deployment's settings give the
		// decode workers' batch limit per attention-DP rank: requests beyond it wait, as they
		// did in the benchmark.
		r.Decode.BatchSize = n
		switch {
		case rowDB == 0:
			notes = append(notes, fmt.Sprintf("decode_batch_size empty: %d per rank, from %s", n, nsrc))
		case rowDB != n:
			notes = append(notes, fmt.Sprintf("the row's decode_batch_size differs from the deployment's batch per rank (%s), which is simulated: %d against %d", nsrc, rowDB, n))
		}
	}
	return notes
}

// ixListedRecipe gives a disaggregated InferenceX row that states its worker counts the serving
// limits of the recipe of the deployment InferenceX's configuration lists for it (ixRecipe,
// with the recipe's redundant experts and MTP drafts), keeping the row's own worker counts and
// shapes: the items in force on its date for its model, GPU, backend, precision, ISL/OSL and
// concurrency (as DisaggFromInferenceX matches them) with the row's prefill and decode worker
// counts and GPUs per worker (tp × attention-DP × pp). A measured_at that is given but is not a
// date is an error (the skip reason). Without such an item, or without a measured_at, the row is
// simulated from its columns alone; with several that differ in recipe, shape or limits too,
// and a note names them. Several that differ in speculative decoding (MTP or not, or the draft
// length) leave the run undetermined: an error. An error is a skip reason (that, redundant
// experts its expert parallelism does not divide, or MTP on a model without an MTP module).
func ixListedRecipe(r *Row, m timing.ModelSpec) (notes []string, mtpDrafts int, err error) {
	table, err := InferenceXDisagg()
	if err != nil {
		return nil, 0, err
	}
	return ixListedRecipeIn(table, r, m)
}

// ixListedRecipeIn is ixListedRecipe over table.
func ixListedRecipeIn(table []DisaggTopology, r *Row, m timing.ModelSpec) (notes []string, mtpDrafts int, err error) {
	if d := strings.TrimSpace(r.MeasuredAt); d != "" {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return nil, 0, fmt.Errorf("measured_at %q is not a date (YYYY-MM-DD): the deployment InferenceX's public configuration listed on it cannot be found", r.MeasuredAt)
		}
	}
	listed, settled := bySpecMethod(listedFor(table, *r), r.SpecMethod)
	if len(listed) == 0 {
		return nil, 0, nil
	}
	var settledNotes []string
	if settled {
		settledNotes = []string{settledNote(*r)}
	}
	t := listed[0]
	for _, o := range listed[1:] {
		switch {
		case o.SpecDecoding != t.SpecDecoding || o.MTPDrafts != t.MTPDrafts:
			// Whether the run drafted tokens, and how many, decides its TPOT: the row is not
			// simulated as either (as DisaggFromInferenceX does for a row without worker counts).
			return nil, 0, fmt.Errorf("InferenceX's public configuration lists deployments of the row's worker counts at its concurrency "+
				"with and without MTP or with different draft lengths (%s: %s): %w",
				t.Entry, strings.Join([]string{speculation(t), speculation(o)}, ", "), errNoSpecColumn)
		case o.Recipe != t.Recipe || o.Prefill != t.Prefill || o.Decode != t.Decode:
			return append(settledNotes, fmt.Sprintf("InferenceX's configuration lists several deployments of the row's worker counts at its concurrency (%s: %s, %s): "+
				"none of their settings is applied", t.Entry, settingsName(t), settingsName(o))), 0, nil
		}
	}
	if t.Recipe == "" && t.SpecDecoding == "none" && t.Prefill.MaxBatch == 0 && t.Decode.MaxBatch == 0 {
		return settledNotes, 0, nil
	}
	switch {
	case t.SpecDecoding == "mtp" && t.MTPDrafts == 0:
		return nil, 0, fmt.Errorf("the deployment InferenceX's configuration lists for the row (%s) runs MTP speculative decoding, and neither it nor its recipe (%q) gives the draft length",
			t.Entry, t.Recipe)
	case t.SpecDecoding != "none" && t.SpecDecoding != "mtp":
		return nil, 0, fmt.Errorf("%s: %s speculative decoding (InferenceX's entry %s ran it)", UnsupportedFeature, strings.ToUpper(t.SpecDecoding), t.Entry)
	case t.MTPDrafts > 0 && m.MTPLayers == 0:
		return nil, 0, fmt.Errorf("%s: MTP speculative decoding, and %s has no MTP module in servesweep's catalog (InferenceX's entry %s ran it)",
			UnsupportedFeature, r.Model, t.Entry)
	}
	redundant, err := recipeRedundant(*r, m, t, [2]int{r.Prefill.MoEExpert, r.Decode.MoEExpert})
	if err != nil {
		return nil, 0, err
	}
	r.Prefill.RedundantExperts, r.Decode.RedundantExperts = redundant[0], redundant[1]
	what := "the recipe" + listedDeploymentNote + ": " + t.Recipe
	if t.Recipe == "" {
		what = "the settings" + listedDeploymentNote
	}
	notes = append(settledNotes, fmt.Sprintf("%s (%s, %s at %s, in force on %s)", what, t.Entry, t.File, shortHash(t.FromCommit), r.MeasuredAt))
	if r.Concurrency == 0 {
		// Read before the recipe replaces the decode batch the empty concurrency derives from.
		r.Concurrency = rowConcurrency(*r)
		notes = append(notes, fmt.Sprintf("concurrency empty: decode_batch_size %d × %d decode attention-DP ranks × %d decode workers = %d",
			r.Decode.BatchSize, max(r.Decode.AttentionData, 1), max(r.Decode.Workers, 1), r.Concurrency))
	}
	return append(notes, ixRecipe(r, t, r.Prefill.BatchSize, r.Decode.BatchSize, true)...), t.MTPDrafts, nil
}

// The notes that say a row took the settings of a deployment InferenceX's record lists:
// deploymentNote starts the one of a row without worker counts (ixDeployment),
// listedDeploymentNote is in the one of a row that gives them (ixListedRecipeIn). traffic reads
// them to say that only the other server flags take the engine's defaults.
const (
	deploymentNote       = "deployment from InferenceX "
	listedDeploymentNote = " of the deployment InferenceX's configuration lists for the row's worker counts and GPUs"
)

// speculation names t's speculative decoding: "MTP with n drafts" or "no MTP".
func speculation(t DisaggTopology) string {
	if t.SpecDecoding == "none" {
		return "no MTP"
	}
	if t.MTPDrafts == 1 {
		return strings.ToUpper(t.SpecDecoding) + " with 1 draft"
	}
	return fmt.Sprintf("%s with %d drafts", strings.ToUpper(t.SpecDecoding), t.MTPDrafts)
}

// settingsName names where t's serving settings come from: its recipe's file name, or its own
// limits when it names no recipe.
func settingsName(t DisaggTopology) string {
	if t.Recipe != "" {
		return "recipe " + path.Base(t.Recipe)
	}
	return fmt.Sprintf("prefill %d requests and %d tokens, decode %d", t.Prefill.MaxBatch, t.Prefill.MaxTokens, t.Decode.MaxBatch)
}

// replacedColumns names the shape columns a row gives that disagree with deployment t, the one
// InferenceX's configuration lists for it, each with both values, e.g. "decode_moe_ep_size 8
// (48)"; none when they agree. The columns are read as InferenceX's export writes them: tp_size is the
// role's TP in the configuration's sense (the GPUs of an attention group, DP-attention or not;
// DisaggFromInferenceX matches the row on it and on prefill_moe_ep_size), moe_ep_size its EP,
// and an attention_dp_size above 1 its DP-attention degree.
func replacedColumns(rowP, rowD WorkerShape, t DisaggTopology) []string {
	dp := func(w TopologyRole) int {
		if w.DPAttention {
			return w.TP
		}
		return 1
	}
	var out []string
	for _, c := range []struct {
		col       string
		have, dep int
		given     bool
	}{
		{"prefill_attention_dp_size", rowP.AttentionData, dp(t.Prefill), rowP.AttentionData > 1},
		{"decode_moe_ep_size", rowD.MoEExpert, max(t.Decode.EP, 1), rowD.MoEExpert > 0},
		{"decode_attention_dp_size", rowD.AttentionData, dp(t.Decode), rowD.AttentionData > 1},
	} {
		if c.given && c.have != c.dep {
			out = append(out, fmt.Sprintf("%s %d where the deployment has %d", c.col, c.have, c.dep))
		}
	}
	return out
}

// recipeBatch is the N of a recipe file name's "_batchN_" part (0 when it has none).
func recipeBatch(recipe string) int {
	_, after, ok := strings.Cut(path.Base(recipe), "_batch")
	if !ok {
		return 0
	}
	digits, _, _ := strings.Cut(after, "_")
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// shortHash is a commit hash's first 9 characters.
func shortHash(h string) string { return h[:min(len(h), 9)] }

// splitMoE fills in the MoE split (moe_tp_size, moe_ep_size) of r's worker shapes for model m
// and returns the notes of the splits it chose for the shapes r's mode uses.
func splitMoE(r *Row, m timing.ModelSpec) []string {
	var notes []string
	for _, s := range []struct {
		name string
		w    *WorkerShape
	}{{"", &r.Agg}, {"prefill_", &r.Prefill}, {"decode_", &r.Decode}} {
		switch w := s.w; {
		case m.MoE == nil:
			// Dense rows record moe_tp_size as the tensor degree: the split means nothing there.
			w.MoETensor, w.MoEExpert = 1, 1
		case w.MoETensor == 0 && w.MoEExpert == 0:
			// No split given: the experts' matrices split over the worker's GPUs (tensor
			// parallelism for the MoE layers, the engines' default without expert parallelism).
			w.MoETensor, w.MoEExpert = max(w.Tensor, 1)*max(w.AttentionData, 1), 1
			if used := (s.name == "") == (r.Mode == "agg" || r.Mode == "aggregated"); used {
				notes = append(notes, fmt.Sprintf("%smoe_tp_size and %smoe_ep_size empty or 0: moe_tensor %d", s.name, s.name, w.MoETensor))
			}
		case w.MoETensor == 0:
			w.MoETensor = 1
		case w.MoEExpert == 0:
			w.MoEExpert = 1
		}
	}
	return notes
}

// rowConcurrency is the concurrency row r runs at, as aggregated and disaggregated read it: its
// concurrency column, or when that is empty batch_size (aggregated) or decode_batch_size ×
// decode attention-DP ranks × decode workers (disaggregated); 0 when neither gives it.
func rowConcurrency(r Row) int {
	switch {
	case r.Concurrency > 0:
		return r.Concurrency
	case aggregatedRow(r):
		return max(r.Agg.BatchSize, 0)
	default:
		return max(r.Decode.BatchSize, 0) * max(r.Decode.AttentionData, 1) * max(r.Decode.Workers, 1)
	}
}

// BF16Note is the note of a row whose precision and gemm_quant_mode are both empty, which the
// measured files' convention reads as BF16 weights (and a BF16 KV cache).
const BF16Note = "precision and gemm_quant_mode empty: bf16 weights and KV cache (the file's convention)"

// ReplicasNote starts the note of an aggregated row whose concurrency is a multiple k > 1 of its
// batch_size × attention_dp_size: the file gives no replica count, and the row is read as k
// replicas.
const ReplicasNote = "replicas not given, read from the columns"

// aggregated plans an aggregated row into cfg (worker role, replicas, shape) and returns the
// concurrency the row runs at.
func (p *Plan) aggregated(cfg *config.Config, r Row, bs int, mf float64, o Options) (conc int, err error) {
	conc = r.Concurrency
	s := normalize(r.Agg)
	batch := s.BatchSize
	if conc == 0 && batch > 0 {
		conc = batch
		p.Notes = append(p.Notes, fmt.Sprintf("concurrency empty: batch_size %d", batch))
	}
	if conc == 0 {
		return 0, fmt.Errorf("concurrency and batch_size are both empty")
	}
	if batch == 0 {
		batch = conc
	}
	// batch_size is per attention-DP rank: in the measured files concurrency = batch_size ×
	// attention_dp_size × replicas (every MoE row with attention_dp_size > 1).
	perReplica := batch * s.AttentionData
	replicas := 1
	if conc > perReplica && conc%perReplica == 0 {
		replicas = conc / perReplica
		p.Notes = append(p.Notes, fmt.Sprintf("%s: concurrency %d = batch_size %d × attention_dp_size %d × %d replicas",
			ReplicasNote, conc, batch, s.AttentionData, replicas))
	} else if conc > perReplica {
		p.Notes = append(p.Notes, fmt.Sprintf("concurrency %d is not a multiple of batch_size %d × attention_dp_size %d: one replica",
			conc, batch, s.AttentionData))
	}
	cfg.Engine.Mode = config.ModeAggregated
	cfg.Engine.Workers.Aggregated = role(s, replicas, batch, bs, mf, o.ForwardModel)
	p.Shape = "agg " + shapeString(replicas, s)
	return conc, nil
}

// disaggregated plans a disaggregated row into cfg (prefill and decode roles, KV transfer over
// hw's links, shape) and returns the concurrency the row runs at.
func (p *Plan) disaggregated(cfg *config.Config, r Row, hw timing.Hardware, bs int, mf float64, o Options) (conc int, err error) {
	conc = r.Concurrency
	ps, ds := normalize(r.Prefill), normalize(r.Decode)
	switch {
	case ps.Workers == 0 && ds.Workers == 0 && !o.OneWorkerPerRole:
		// Most of the MoE file's disaggregated rows give only the roles' shapes. Their
		// concurrency (up to 16,384) and their TTFTs suggest many workers; scoring a guessed
		// count would score a deployment that was not measured, so such a row is skipped
		// unless the caller opts into the one-worker reading.
		return 0, errors.New(NoWorkerCounts)
	case ps.Workers == 0 && ds.Workers == 0:
		// The one-worker reading (DisaggWorkersNote), asked for.
		ps.Workers, ds.Workers = 1, 1
		p.Notes = append(p.Notes, DisaggWorkersNote)
	case ps.Workers == 0:
		return 0, fmt.Errorf("prefill_num_workers is empty while decode_num_workers is %d: give both or neither", ds.Workers)
	case ds.Workers == 0:
		return 0, fmt.Errorf("decode_num_workers is empty while prefill_num_workers is %d: give both or neither", ps.Workers)
	}
	pb, db := ps.BatchSize, ds.BatchSize
	if pb == 0 {
		pb = 1
		p.Notes = append(p.Notes, PrefillBatchNote)
	}
	// The batch sizes are per attention-DP rank: in the measured files concurrency =
	// decode_batch_size × decode_attention_dp_size × decode_num_workers on every row that
	// gives all three.
	slots := ds.AttentionData * ds.Workers
	switch {
	case db == 0 && conc == 0:
		return 0, fmt.Errorf("concurrency and decode_batch_size are both empty")
	case db == 0:
		// The same identity read the other way: the decode ranks share the row's concurrency.
		db = (conc + slots - 1) / slots
		p.Notes = append(p.Notes, fmt.Sprintf("%s: concurrency %d / (%d decode attention-DP ranks × %d decode workers) = %d per rank",
			DecodeBatchNote, conc, ds.AttentionData, ds.Workers, db))
	case conc == 0:
		conc = db * slots
		p.Notes = append(p.Notes, fmt.Sprintf("concurrency empty: decode_batch_size %d × %d decode attention-DP ranks × %d decode workers = %d",
			db, ds.AttentionData, ds.Workers, conc))
	}
	cfg.Engine.Mode = config.ModeDisaggregated
	cfg.Engine.Workers.Prefill = role(ps, ps.Workers, pb, bs, mf, o.ForwardModel)
	cfg.Engine.Workers.Decode = role(ds, ds.Workers, db, bs, mf, o.ForwardModel)
	gbps := RDMAGBps
	if hw.ID == "gb200" || hw.ID == "gb300" {
		gbps = hw.LinkGBps
	}
	latency := o.Factors.KVTransferLatencyMs
	cfg.Engine.KVTransfer = &config.KVTransfer{BandwidthGBps: &gbps, TimingMode: "destination_missing", LatencyMs: &latency}
	p.Shape = "disagg P " + shapeString(ps.Workers, ps) + " / D " + shapeString(ds.Workers, ds)
	if r.Prefill.Workers == 0 && r.Decode.Workers == 0 {
		// The one-worker reading holds only when that worker can keep the row's concurrency
		// in flight: a decode rank whose KV pool (as the run sizes it) cannot hold its share at
		// full length (ISL + OSL tokens each) would queue requests for KV, and the measured
		// deployment plainly had more decode workers. Such a row is refused rather than scored
		// against a deployment it contradicts. A capacity that cannot be derived is left to the
		// run, which names the field.
		if have, err := sim.CapacityBlocks(cfg, config.RoleDecode); err == nil {
			if need := db * ((r.ISL + r.OSL + bs - 1) / bs); need > have {
				return 0, fmt.Errorf("decode_num_workers empty, and one decode worker of this shape cannot hold the row's concurrency in KV " +
					"(ISL + OSL tokens each): the measured deployment had more decode workers; give decode_num_workers")
			}
		}
	}
	return conc, nil
}

// traffic notes the row's harness (and its server flags) and gives cfg the harness's synthetic
// requests at concurrency conc; an invalid result is an error.
func (p *Plan) traffic(cfg *config.Config, r Row, m timing.ModelSpec, conc int, o Options) error {
	h := HarnessFor(r)
	p.Harness = h
	if h.Name == HarnessInferenceX {
		if f, ok := InferenceXServerFlags(r, m.ID); ok {
			f.apply(cfg, conc, o.Factors.VLLMSequenceOverheadUs, o.Factors.VLLMReserveGiB)
			note := "server flags: " + f.Source
			if f.VLLM0102 && o.Factors.VLLMSequenceOverheadUs > 0 {
				note += fmt.Sprintf("; vLLM 0.10.2's per-sequence host time %g µs (timing.sequence_overhead_us)", o.Factors.VLLMSequenceOverheadUs)
			}
			if f.VLLM0102 && o.Factors.VLLMReserveGiB > 0 {
				note += fmt.Sprintf("; vLLM 0.10.2's memory outside weights, activations and KV cache %g GiB per GPU (kv_cache.capacity.reserve_gib)", o.Factors.VLLMReserveGiB)
			}
			p.Notes = append(p.Notes, note)
		} else if slices.ContainsFunc(p.Notes, func(n string) bool {
			return strings.HasPrefix(n, deploymentNote) || strings.Contains(n, listedDeploymentNote)
		}) {
			// The deployment's or its recipe's settings, noted above, are applied; the rest are not
			// in the public record.
			p.Notes = append(p.Notes, "no other server flags tabulated for this model, engine and date: servesweep's engine defaults for the rest")
		} else {
			p.Notes = append(p.Notes, "server flags not tabulated for this model, engine and date: servesweep's engine defaults")
		}
	}
	p.Notes = append(p.Notes, h.describe(conc))
	if n := UnknownSourceNote(r.Source); n != "" {
		p.Notes = append(p.Notes, n)
	}
	isl, islDist := h.lengths(r.ISL)
	osl, oslDist := h.lengths(r.OSL)
	sync := 0.0
	cfg.Traffic = config.Traffic{
		Source: config.Source{Type: config.SourceSynthetic, InputTokens: isl, OutputTokens: osl,
			InputTokensDist: islDist, OutputTokensDist: oslDist},
		Load: config.Load{Type: config.LoadConcurrency, Concurrency: conc, RampSeconds: &sync},
		Stop: config.Stop{Requests: h.RequestsPerConcurrency * conc},
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("simulated config is invalid: %v", err)
	}
	return nil
}

// CalibratedFrontendMs is Factors.FrontendMs as fitted: timing.CalibratedFrontendOverheadMs,
// the engine.frontend.overhead_ms predict applies under `default` timing.
const CalibratedFrontendMs = timing.CalibratedFrontendOverheadMs
