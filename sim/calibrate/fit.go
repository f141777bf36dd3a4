package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/servesweep/servesweep/sim/timing"
)

// Factors are the fitted quantities: the timing model's Efficiency, the front end's share of
// TTFT and the disaggregated hand-off's fixed time. How a row was benchmarked is not among them:
// each row is simulated under its harness (Harness), never under a fitted stand-in for it.
type Factors struct {
	// Efficiency is the timing model's (timing.Roofline).
	Efficiency timing.Efficiency
	// FrontendMs is the simulated engine.frontend.overhead_ms (config.Frontend): the time before
	// a worker sees a request, added to every TTFT; its fitted value is predict's default.
	FrontendMs float64
	// KVTransferLatencyMs is the simulated engine.kv_transfer.latency_ms of disaggregated rows
	// (config.KVTransfer): every hand-off's fixed time, added to TTFT; its chosen value is
	// predict's default (timing.CalibratedKVTransferLatencyMs). Fit does not fit it; 0 (a
	// literal that omits it) simulates hand-offs without it.
	KVTransferLatencyMs float64
	// VLLMSequenceOverheadUs is the per-sequence host time in µs of the vLLM release InferenceX's
	// Llama-3.1-70B rows ran (0.10.2), written into those rows' plans as
	// timing.sequence_overhead_us (config.Timing.SequenceOverheadUs); every other row takes
	// Efficiency.SequenceOverheadUs. 0 writes nothing.
	VLLMSequenceOverheadUs float64
}

// CalibratedFactors returns the factors servesweep ships: timing.CalibratedEfficiency,
// CalibratedFrontendMs and timing.CalibratedKVTransferLatencyMs.
func CalibratedFactors() Factors {
	return Factors{Efficiency: timing.CalibratedEfficiency(), FrontendMs: CalibratedFrontendMs,
		KVTransferLatencyMs: timing.CalibratedKVTransferLatencyMs, VLLMSequenceOverheadUs: CalibratedVLLMSequenceOverheadUs}
}

// CalibratedVLLMSequenceOverheadUs is Factors.VLLMSequenceOverheadUs as fitted, in µs: the host
// time per sampled sequence per pass of vLLM 0.10.2 with --async-scheduling, fitted with
// timing.CalibratedEfficiency (same rows, same fit; its provenance) on the 165 InferenceX vLLM
// rows among them; the folds left out by GPU chose 85 µs (fitted on H100) and 74 µs (on B200).
// It is 4.2 times the 15 µs the other engines' rows give: at TP8 on B200, where a pass's GPU
// work per sequence is smallest, measured TPOT rises by 104–124 µs per added sequence under that
// vLLM and by 69–72 µs under TensorRT-LLM 1.1.0rc2. Newer vLLM releases do not show it: on the
// MoE file's InferenceX rows of vLLM 0.11.2–0.19 (gpt-oss-120b, MiniMax-M2.5, Kimi-K2.5) it
// over-predicts TPOT (gpt-oss-120b on H100: 2.2 times the measured), so it is a fact of that
// release, applied only where the row's server flags say it ran (InferenceXServerFlags), and
// predict's default for vLLM is the 15 µs of every engine.
const CalibratedVLLMSequenceOverheadUs = 63.0

// CalibratedOpLevelFactors returns the factors of the op_level model as shipped:
// timing.CalibratedOpLevelEfficiency (op_level's own fixed costs; the roofline-only factors in it
// do not affect op_level), timing.CalibratedOpLevelFrontendOverheadMs and
// timing.CalibratedKVTransferLatencyMs.
func CalibratedOpLevelFactors() Factors {
	return Factors{Efficiency: timing.CalibratedOpLevelEfficiency(), FrontendMs: timing.CalibratedOpLevelFrontendOverheadMs,
		KVTransferLatencyMs: timing.CalibratedKVTransferLatencyMs}
}

// PriorFactors is the start of every Holdout fit: round, physically plausible values chosen
// without looking at any deployment row, so that no fold starts from factors fitted on the rows
// it scores. GEMMs at 60 % of the dense peak (quantized GEMMs at 80 % of that; the routed
// experts' grouped GEMMs at the shipped 26 %, which comes from kernel measurements, not from
// deployments), attention at 50 %, HBM streaming at the shipped 79 % (from kernel measurements
// too, and never fitted; FP8 weights alike: a byte is a byte; FP4 weights on Blackwell at the
// shipped FP4Memory share of it, from kernel measurements too), links at 70 % after the shipped
// 4.8 µs per collective (from kernel measurements too); 0.5 ms per pass, 20 µs per
// layer, per MoE layer (on top) and per sampled sequence; a 50 ms front end; the shipped hand-off
// latency of disaggregated serving (chosen on the MoE file's rows leaving one GPU out, so a
// Holdout of that file is not strictly left out for it).
func PriorFactors() Factors {
	shipped := timing.CalibratedEfficiency()
	return Factors{
		Efficiency: timing.Efficiency{GEMM: 0.6, ExpertGEMM: shipped.ExpertGEMM, Attention: 0.5, Memory: shipped.Memory, QuantizedGEMM: 0.8, QuantizedMemory: 1, FP4Memory: shipped.FP4Memory, Link: 0.7, AllToAllLatencyUs: shipped.AllToAllLatencyUs,
			LinkLatencyUs: shipped.LinkLatencyUs, LayerOverheadUs: 20, MoELayerOverheadUs: 20, PassOverheadMs: 0.5, SequenceOverheadUs: 20},
		FrontendMs:             50,
		VLLMSequenceOverheadUs: 20,
		// Chosen on the MoE file's rows, none of which a Holdout of the dense file scores.
		KVTransferLatencyMs: timing.CalibratedKVTransferLatencyMs,
	}
}

// param is one fitted factor: its name, a pointer into a Factors value, and its upper bound
// (fractions stay <= 1).
type param struct {
	name string
	get  func(*Factors) *float64
	max  float64
}

// params are the factors Fit tunes. ExpertGEMM, Memory, FP4Memory, LinkLatencyUs,
// AllToAllLatencyUs, QuantizedMemory and MoELayerOverheadUs are not among them: the first five
// come from kernel measurements (timing.CalibratedEfficiency), the sixth is fixed at 1, the
// seventh is chosen on the MoE file leaving one GPU out. Memory stays out because the deployment rows cannot tell it apart from
// the per-pass and per-layer times (a decode step is their sum plus bytes / bandwidth): fitted,
// it drifted to 0.62 in every leave-one-GPU-out fold and the other folds' TPOT went wrong with
// it.
func params() []param {
	return []param{
		{"GEMM", func(f *Factors) *float64 { return &f.Efficiency.GEMM }, 1},
		{"Attention", func(f *Factors) *float64 { return &f.Efficiency.Attention }, 1},
		{"QuantizedGEMM", func(f *Factors) *float64 { return &f.Efficiency.QuantizedGEMM }, 1},
		{"Link", func(f *Factors) *float64 { return &f.Efficiency.Link }, 1},
		{"LayerOverheadUs", func(f *Factors) *float64 { return &f.Efficiency.LayerOverheadUs }, math.Inf(1)},
		{"PassOverheadMs", func(f *Factors) *float64 { return &f.Efficiency.PassOverheadMs }, math.Inf(1)},
		{"SequenceOverheadUs", func(f *Factors) *float64 { return &f.Efficiency.SequenceOverheadUs }, math.Inf(1)},
		{"VLLMSequenceOverheadUs", func(f *Factors) *float64 { return &f.VLLMSequenceOverheadUs }, math.Inf(1)},
		{"FrontendMs", func(f *Factors) *float64 { return &f.FrontendMs }, math.Inf(1)},
	}
}

// FitOptions tunes Fit.
type FitOptions struct {
	// Validate options of every evaluation (Factors is set by Fit).
	Validate Options
	// Start is the first guess (zero value: CalibratedFactors).
	Start *Factors
	// Step is the first relative step (default 0.3); the search stops when it falls below
	// MinStep (default 0.02) or after MaxEvaluations (default 120) evaluations.
	Step, MinStep float64
	// MaxEvaluations caps the number of full validations.
	MaxEvaluations int
	// Log, when set, receives one line per accepted improvement.
	Log func(string)
	// Fixed names factors Fit leaves at their start value (names as in the fit log, e.g.
	// "Burst.SGLang").
	Fixed []string
}

// Objective is what Fit minimizes: with a = overall TPOT MAPE / 15 % and b = overall TTFT MAPE /
// 30 % (each error against its accuracy target), max(a, b) + (a + b) / 4: the worse of the two
// ratios first, their sum to break ties. It is +Inf when no row was simulated (no MAPE).
func Objective(s Summary) float64 {
	if s.TPOTMAPEPct == nil || s.TTFTMAPEPct == nil {
		return math.Inf(1)
	}
	a, b := *s.TPOTMAPEPct/15, *s.TTFTMAPEPct/30
	return math.Max(a, b) + (a+b)/4
}

// Fit tunes the factors on rows by coordinate descent in log space: for each factor in turn it
// tries multiplying it by (1 + step) and dividing it by (1 + step), keeps a change that lowers
// Objective, and halves the step after a sweep without improvement. Every evaluation is a full
// Validate over rows. It returns the best factors and their report. When the first evaluation
// simulates no row there is nothing to fit: Fit returns the start factors and that report at once
// (see Report.CheckSimulated).
func Fit(ctx context.Context, rows []Row, o FitOptions) (Factors, *Report, error) {
	best := CalibratedFactors()
	if o.Start != nil {
		best = *o.Start
	}
	if o.Step <= 0 {
		o.Step = 0.3
	}
	if o.MinStep <= 0 {
		o.MinStep = 0.02
	}
	if o.MaxEvaluations <= 0 {
		o.MaxEvaluations = 120
	}
	evals := 0
	eval := func(f Factors) (float64, *Report, error) {
		evals++
		vo := o.Validate
		vo.Factors = &f
		rep, err := Validate(ctx, rows, vo)
		if err != nil {
			return 0, nil, err
		}
		return Objective(rep.Summary), rep, nil
	}
	bestObj, bestRep, err := eval(best)
	if err != nil {
		return best, nil, err
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			o.Log(fmt.Sprintf(format, args...))
		}
	}
	logf("start: objective %.4f; %s", bestObj, bestRep.Summary)
	if bestRep.Summary.RowsSimulated == 0 {
		return best, bestRep, nil
	}
	ps := params()
	for step := o.Step; step >= o.MinStep && evals < o.MaxEvaluations; {
		improved := false
		for _, p := range ps {
			if slices.Contains(o.Fixed, p.name) {
				continue
			}
			for _, mult := range []float64{1 + step, 1 / (1 + step)} {
				if evals >= o.MaxEvaluations {
					break
				}
				cand := best
				v := p.get(&cand)
				old := *v
				// A factor at 0 moves to a small positive value instead (a product stays 0).
				*v = math.Min(math.Max(old, 1e-3)*mult, p.max)
				if *v == old {
					continue
				}
				obj, rep, err := eval(cand)
				if err != nil {
					return best, bestRep, err
				}
				if obj < bestObj {
					best, bestObj, bestRep, improved = cand, obj, rep, true
					logf("%s %.4g → %.4g: objective %.4f; %s", p.name, old, *v, obj, rep.Summary)
					break
				}
			}
		}
		if !improved {
			step /= 2
		}
	}
	return best, bestRep, nil
}
