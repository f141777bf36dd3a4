package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/results/export"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/traffic"
	"github.com/spf13/cobra"
)

// predictOptions are the flags of `servesweep predict` (dynosim-spec.md §2.1, §2.2).
type predictOptions struct {
	// SystemsDir is --systems-dir ("" = $SERVESWEEP_SYSTEMS_DIR); SystemsDirSet says the flag
	// was given.
	SystemsDir        string
	SystemsDirSet     bool
	ConfigPath        string
	Stack             string
	Sets              []string
	OutputDir         string
	Overwrite         bool
	Format            string
	CapturePerRequest bool
}

// Stacks servesweep provides. `dynamo` writes prediction.json as a {"summary": ...} envelope and
// accepts the router and planner sections; `engine` writes a flat report and rejects them.
var stacks = []string{"dynamo", "engine"}

// outputFiles are the names predict owns in an output directory; --overwrite replaces only these.
var outputFiles = []string{"prediction.json", "requests.jsonl"}

func newPredictCmd(io ioStreams, runF func(context.Context, *predictOptions) error) *cobra.Command {
	opts := &predictOptions{}
	cmd := &cobra.Command{
		Use:   "predict -c CONFIG.yaml [--set PATH=YAML]... [--output-dir DIR]",
		Short: "Simulate one workload against one deployment and write prediction.json",
		Long: `Simulate one workload against one deployment.

The YAML is DynoSim's prediction schema (traffic, engine, router, planner, evaluation).
--set PATH=YAML overrides one field after loading, parsed as YAML, applied in order.
Writes <output-dir>/prediction.json (and requests.jsonl with --capture-per-request) and prints
an AIPerf-style table (or one JSON object with --format json).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("predict takes no positional arguments, got %q%s", args, positionalHint(cmd, args, "config", ".yaml", ".yml", ".json"))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.SystemsDirSet = cmd.Flags().Changed("systems-dir")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return config.AttributeSets(runPredict(cmd.Context(), io, opts), opts.Sets)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.ConfigPath, "config", "c", "", "prediction YAML (required)")
	f.StringVar(&opts.Stack, "stack", "engine", "execution stack: engine or dynamo")
	f.StringArrayVar(&opts.Sets, "set", nil, "override PATH=YAML after loading (repeatable)")
	f.StringVar(&opts.OutputDir, "output-dir", "./servesweep-output", "directory for prediction.json and requests.jsonl")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "allow a non-empty output directory; replaces only prediction.json and requests.jsonl")
	f.BoolVar(&opts.CapturePerRequest, "capture-per-request", false, "also write requests.jsonl, one record per terminal request")
	mustFilename(cmd, "config", "yaml", "yml")
	mustDirname(cmd, "output-dir")
	mustComplete(cmd, "stack", fixed("dynamo\tprediction.json as a summary envelope; accepts router and planner",
		"engine\tflat prediction.json; rejects router and planner"))
	addFormatFlag(cmd, &opts.Format, "AIPerf-style console table")
	addSystemsDirFlag(cmd, &opts.SystemsDir)
	mustComplete(cmd, "set", noFiles)
	return cmd
}

// requireNoAdapters returns an error per router or planner section the config declares: those
// are adapters of the dynamo stack, and the engine stack has none (dynosim-spec.md §2.1); nil
// when it declares neither.
func requireNoAdapters(cfg *config.Config) config.Errors {
	var errs config.Errors
	for _, name := range cfg.Adapters() {
		errs = append(errs, &config.Error{File: cfg.File, Path: name,
			Msg: "needs the dynamo stack's " + name + " adapter; run with --stack dynamo or remove the section"})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func runPredict(ctx context.Context, io ioStreams, opts *predictOptions) error {
	systems, err := openSystems(opts.SystemsDir, opts.SystemsDirSet, os.Getenv)
	if err != nil {
		return err
	}
	cfg, err := loadPrediction(io, opts)
	if err != nil {
		return err
	}
	// Read the trace (or build the synthetic workload) before touching the output directory, so
	// a bad input leaves existing results alone.
	wl, err := sim.Interruptible(ctx, func() (*traffic.Workload, error) { return sim.BuildWorkload(cfg) })
	if err != nil {
		return err
	}
	if err := checkOutputDir(opts.OutputDir, opts.Overwrite); err != nil {
		return err
	}
	_, statErr := os.Stat(opts.OutputDir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(opts.OutputDir, 0o755); err != nil {
		return &usageError{fmt.Errorf("--output-dir: %w", err)}
	}
	res, err := sim.Run(ctx, cfg, sim.Options{Workload: wl, Systems: systems})
	if err != nil {
		if created {
			os.Remove(opts.OutputDir) // the run wrote nothing: leave no empty directory behind
		}
		return err
	}
	printRunNotes(io.Err, cfg, wl, res)
	summary, predPath, err := writePrediction(opts, res)
	if err != nil {
		return err
	}
	if opts.Format == formatJSON {
		line, err := json.Marshal(summary)
		if err != nil {
			return err
		}
		fmt.Fprintln(io.Out, string(line))
		return nil
	}
	writeTable(io.Out, res.Summary)
	fmt.Fprintf(io.Out, "Saved full report to: %s\n", predPath)
	return nil
}

// loadPrediction checks --stack, --format and --config, reads the prediction config (with its
// --set overrides), refuses the dynamo adapters on the engine stack, and prints which aliases the
// config's names resolved to, the scheduler keys its backend ignores, an
// engine.precision.weights that overrides the format the model's name gives, and a warning per
// evaluation.sla bound that looks like seconds (config.SLA.SecondsLikeBounds, as sweep warns).
func loadPrediction(io ioStreams, opts *predictOptions) (*config.Config, error) {
	if !contains(stacks, opts.Stack) {
		return nil, &usageError{fmt.Errorf("stack '%s' is unavailable; installed stacks: %s", opts.Stack, strings.Join(stacks, ", "))}
	}
	if err := checkFormat(opts.Format); err != nil {
		return nil, err
	}
	if opts.ConfigPath == "" {
		return nil, &usageError{fmt.Errorf("--config is required (a prediction YAML; see examples/)")}
	}
	cfg, err := config.LoadFile(opts.ConfigPath, opts.Sets, config.WithMarker(grid.ConcreteMarker))
	if err != nil {
		return nil, err
	}
	if opts.Stack == "engine" {
		if errs := requireNoAdapters(cfg); errs != nil {
			// Name at once what else the deployment gets wrong (an unknown GPU, say), not only
			// after the sections are gone.
			var more config.Errors
			var one *config.Error
			switch err := sim.Check(cfg, nil); {
			case errors.As(err, &more):
				errs = append(errs, more...)
			case errors.As(err, &one):
				errs = append(errs, one)
			}
			return nil, errs
		}
	}
	if cfg.DefaultTraffic {
		fmt.Fprintln(io.Err, "note: "+config.DefaultTrafficNote(cfg))
	}
	if n := config.DefaultedTrafficNote(cfg); n != "" {
		fmt.Fprintln(io.Err, "note: "+n)
	}
	for _, name := range cfg.EmptyRoles {
		fmt.Fprintln(io.Err, "note: "+config.EmptyRoleNote(cfg.File, name, cfg.Engine.Workers.Role(name)))
	}
	for _, note := range aliasNotes(cfg) {
		fmt.Fprintln(io.Err, note)
	}
	for _, note := range ignoredSchedulerNotes(cfg) {
		fmt.Fprintln(io.Err, note)
	}
	if msg := timing.WeightsConflict(cfg.Engine.Model, cfg.Engine.Precision.Weights); msg != "" {
		fmt.Fprintln(io.Err, "note: "+cfg.At("engine.precision.weights", msg).Error())
	}
	// The sweep's check (grid.Expand warns of the same bounds): a bound typed in seconds would
	// otherwise leave goodput at 0 with nothing said.
	for _, w := range cfg.Evaluation.SLA.SecondsLikeBounds("evaluation.sla") {
		fmt.Fprintln(io.Err, "warning: "+fieldNote(cfg, w))
	}
	return cfg, nil
}

// ignoredSchedulerNotes returns a stderr note for each scheduler key a role sets that its
// backend's scheduler style ignores (docs/simulation.md lists them): vLLM ignores
// prefill_decode_interval, chunked_prefill_size, recv_interval and capacity_policy, TensorRT-LLM
// the first three, SGLang capacity_policy and max_batched_tokens (its budget is
// chunked_prefill_size; 8192, the key's default, is not noted). A key counts as set when it differs from its default
// (0, or guaranteed_no_evict); the run goes on, as every key is accepted on every backend.
func ignoredSchedulerNotes(cfg *config.Config) []string {
	be := cfg.Engine.Backend
	var notes []string
	for _, name := range cfg.Engine.Mode.Roles() {
		w := cfg.Engine.Workers.Role(name)
		if w == nil {
			continue
		}
		sc, path := w.Scheduler, "engine.workers."+string(name)+".scheduler."
		for _, k := range []struct {
			key     string
			set     bool
			value   any
			ignored bool
		}{
			{"prefill_decode_interval", sc.PrefillDecodeInterval != 0, sc.PrefillDecodeInterval, be != config.BackendSGLang},
			{"chunked_prefill_size", sc.ChunkedPrefillSize != 0, sc.ChunkedPrefillSize, be != config.BackendSGLang},
			{"recv_interval", sc.RecvInterval != 0, sc.RecvInterval, be != config.BackendSGLang},
			{"capacity_policy", sc.CapacityPolicy != "" && sc.CapacityPolicy != config.CapacityGuaranteedNoEvict, sc.CapacityPolicy, be != config.BackendTRTLLM},
			// SGLang's prefill budget is chunked_prefill_size; 8192 is the key's default.
			{"max_batched_tokens", sc.MaxBatchedTokens != 0 && sc.MaxBatchedTokens != 8192, sc.MaxBatchedTokens, be == config.BackendSGLang},
		} {
			if k.set && k.ignored {
				notes = append(notes, fmt.Sprintf("note: %s%s (%v) is not a setting of the %s scheduler, which ignores it", path, k.key, k.value, be))
			}
		}
	}
	return notes
}

// fieldNotePath matches a note that starts with the field it is about (the simulator's notes:
// "engine.workers.decode.kv_cache.capacity.blocks: ...", and the SLA's seconds-like bounds:
// "evaluation.sla.ttft_ms: ...").
var fieldNotePath = regexp.MustCompile(`^((?:engine|evaluation)\.[A-Za-z0-9_.\[\]]+): `)

// fieldNote is note as printed for the user: one that starts with the field it is about also
// names cfg's file and the --set that gave the field, if one did (config.Config.At); others are
// unchanged.
func fieldNote(cfg *config.Config, note string) string {
	m := fieldNotePath.FindStringSubmatch(note)
	if m == nil || cfg.File == "" {
		return note
	}
	return cfg.At(m[1], note[len(m[0]):]).Error()
}

// printRunNotes prints on w what the user should know about the run res of cfg over wl: its
// timing notes, what a real deployment of cfg could not do (sim.DeploymentNotes), a GPU and
// model that only label the run (config.Config.LabelsOnly), an explicit KV size far from the
// model's (sim.KVBytesWarnings), a backend_version no table used, a planner that scales nothing, the default
// hand-off latency of a disaggregated run, and the warnings
// and notes about its summary (floored, rejected, unfinished and truncated requests, an open
// loop the deployment does not keep up with, lockstep arrivals, the steady window).
func printRunNotes(w io.Writer, cfg *config.Config, wl *traffic.Workload, res *sim.Result) {
	// What a real deployment could not do as configured (a fixed KV pool no GPU of the model
	// holds, a shape the model cannot be split into) is a warning, once, whether the timing
	// notes it too (possibly with what it means for that timing after it) or not.
	deployment := sim.DeploymentNotes(cfg)
	for _, note := range res.TimingNotes {
		prefix := "servesweep: "
		if slices.ContainsFunc(deployment, func(d string) bool { return strings.HasPrefix(note, d) }) {
			prefix = "warning: "
		}
		fmt.Fprintln(w, prefix+fieldNote(cfg, note))
	}
	for _, d := range deployment {
		if !slices.ContainsFunc(res.TimingNotes, func(note string) bool { return strings.HasPrefix(note, d) }) {
			fmt.Fprintln(w, "warning: "+fieldNote(cfg, d))
		}
	}
	// An explicit KV size far from the model's is kept, but said (a BF16 size beside an FP8
	// cache, or 1 byte, which makes the KV pool or the transfer free).
	for _, kw := range sim.KVBytesWarnings(cfg) {
		fmt.Fprintln(w, "warning: "+fieldNote(cfg, kw))
	}
	if cfg.LabelsOnly() {
		fmt.Fprintln(w, "servesweep: every worker role uses fixed or polynomial timing, which reads neither engine.hardware nor engine.model, "+
			"and a fixed KV pool: they only label this run (timing and kv_cache.capacity {type: default} simulate the GPU and the model)")
	}
	if v := cfg.Engine.BackendVersion; v != "" && !strings.Contains(res.TimingProvider, "op_level") {
		fmt.Fprintf(w, "servesweep: engine.backend_version %s selects performance-database tables only; timing %s does not use them\n",
			v, res.TimingProvider)
	}
	if p := &cfg.Planner; p.Policy == "enabled" {
		if st := p.Settings(); !st.LoadScaling && !st.ThroughputScaling {
			fmt.Fprintln(w, "servesweep: planner.policy is enabled with enable_load_scaling and enable_throughput_scaling both false: "+
				"nothing scales, the worker counts stay fixed")
		}
	}
	if msg := handOffNote(cfg); msg != "" {
		fmt.Fprintln(w, msg)
	}
	for _, f := range export.StartupRefusals(cfg) {
		// The simulation runs the setting as given; the engine it names would not start with it.
		e := cfg.At(f.Path, fmt.Sprintf("%v: %s; the simulation runs it as given, no %s server would "+
			"start with it (servesweep export refuses it)", f.Value, f.What, cfg.Engine.Backend))
		for _, p := range f.Also {
			if e.Set == "" {
				e.Set = config.SetFor(p, cfg.Sets)
			}
		}
		fmt.Fprintln(w, "warning: "+e.Error())
	}
	if msg := flooredWarning(res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if msg := rejectionWarning(res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if msg := unfinishedWarning(res.Summary, sim.SLA(cfg)); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if msg := truncatedWarning(res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if msg := thrashWarning(res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if msg := overloadWarning(cfg, res); msg != "" {
		fmt.Fprintln(w, msg)
	} else if msg := drainWarning(cfg, res); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if res.Summary.RejectedRequests > 0 && res.Summary.CompletedRequests == 0 {
		// Every request was rejected (rejectionWarning says why): notes on how the requests ran
		// or where the steady window lies would describe a run that did not happen.
		return
	}
	if msg := lockstepNote(cfg, wl, res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	}
	if msg := steadyWindowNote(res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	} else if msg := unfilledCooldownNote(cfg, res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	} else if msg := unfinishedRampNote(cfg, res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	} else if msg := thinWindowWarning(res.Summary); msg != "" {
		fmt.Fprintln(w, msg)
	}
}

// unfinishedRampNote returns the stderr warning of a closed loop (traffic.load type
// concurrency) whose run ended before its ramp (traffic.load.ramp_seconds) did: some of its
// sessions never started, so the run never held traffic.load.concurrency requests in flight and
// measured the ramp, not that load (a ramp given in milliseconds reads as seconds); "" otherwise
// or when no request completed.
func unfinishedRampNote(cfg *config.Config, s *metrics.Summary) string {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConcurrency || l.Ramp() <= 0 || s.CompletedRequests == 0 || s.DurationMs >= l.Ramp()*1000 {
		return ""
	}
	return fmt.Sprintf("warning: traffic.load.ramp_seconds: the run ended at %.0f ms, before its %g s ramp did, so it never held "+
		"%d requests in flight and measured the ramp, not that load; the ramp is in seconds: make it shorter than the run, or run more requests",
		s.DurationMs, l.Ramp(), l.Concurrency)
}

// handOffNote returns the stderr note of a disaggregated run whose every hand-off takes the
// default fixed latency (sim.KVTransferLatencyMs: engine.kv_transfer.latency_ms unset under
// hardware-aware timing), a cost of every TTFT the config does not spell out; "" otherwise.
func handOffNote(cfg *config.Config) string {
	if kt := cfg.Engine.KVTransfer; kt != nil && kt.LatencyMs != nil {
		return ""
	}
	ms := sim.KVTransferLatencyMs(cfg)
	if ms <= 0 {
		return ""
	}
	return fmt.Sprintf("servesweep: each disaggregated hand-off adds %g ms to the request's TTFT (engine.kv_transfer.latency_ms, "+
		"its default under default and roofline timing, chosen on measured disaggregated deployments; set it to override, 0 to leave it out)", ms)
}

// unfilledCooldownNote returns the stderr warning of a run with traffic.load.cooldown whose last
// session started within its ramp (traffic.load.ramp_seconds): the loop never ran full, so its
// steady window, which ends at that start, measured the ramp; "" otherwise.
func unfilledCooldownNote(cfg *config.Config, s *metrics.Summary) string {
	l := &cfg.Traffic.Load
	if !s.Cooldown || l.Ramp() <= 0 || s.CooldownFromMs >= l.Ramp()*1000 {
		return ""
	}
	return fmt.Sprintf("warning: traffic.load.cooldown: the closed loop started its last session at %.0f ms, within its "+
		"%g s ramp, so it never ran %d sessions in flight: its steady window (%.0f ms, %d requests counted, %d cool-down) "+
		"measured the ramp, not a steady state; run more sessions than traffic.load.concurrency",
		s.CooldownFromMs, l.Ramp(), l.Concurrency, s.SteadyWindowMs, s.NumRequests, s.CooldownRequests)
}

// writePrediction writes prediction.json (and requests.jsonl with --capture-per-request; an old
// one is removed otherwise) into --output-dir, in the stack's layout, and returns the summary and
// prediction.json's path. The per-request records are built once each, in one pass
// (sim.EachRequestRecord), and streamed into both files as they come, so a run of millions of
// requests writes them in bounded memory; prediction.json's bytes are json.MarshalIndent's of
// the whole report.
func writePrediction(opts *predictOptions, res *sim.Result) (map[string]any, string, error) {
	summary := res.Summary.Map()
	summary["timing_provider"] = res.TimingProvider
	top := summary
	if opts.Stack == "dynamo" {
		top = map[string]any{"summary": summary}
	}
	predPath := filepath.Join(opts.OutputDir, "prediction.json")
	jsonl := filepath.Join(opts.OutputDir, "requests.jsonl")
	if !opts.CapturePerRequest {
		if err := results.WriteAtomic(predPath, func(w io.Writer) error { return writeReport(w, top, nil) }); err != nil {
			return nil, "", err
		}
		// A requests.jsonl left by an earlier run (--overwrite) would not match this report.
		if err := os.Remove(jsonl); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
		return summary, predPath, nil
	}
	err := results.WriteAtomic(jsonl, func(lines io.Writer) error {
		enc := json.NewEncoder(lines)
		return results.WriteAtomic(predPath, func(w io.Writer) error {
			return writeReport(w, top, func(fn func(map[string]any) error) error {
				return sim.EachRequestRecord(res, func(rec map[string]any) error {
					if err := enc.Encode(rec); err != nil {
						return err
					}
					return fn(rec)
				})
			})
		})
	})
	if err != nil {
		return nil, "", err
	}
	return summary, predPath, nil
}

// writeReport writes top as json.MarshalIndent(…, "", "  ") would, plus a "per_request" key
// among its sorted keys holding the records each yields (none when records is nil), each
// encoded as it comes instead of the whole array at once; a trailing newline ends it.
func writeReport(w io.Writer, top map[string]any, records func(func(map[string]any) error) error) error {
	keys := make([]string, 0, len(top)+1)
	for k := range top {
		keys = append(keys, k)
	}
	if records != nil {
		keys = append(keys, "per_request")
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	bw.WriteString("{")
	for n, k := range keys {
		if n > 0 {
			bw.WriteString(",")
		}
		name, _ := json.Marshal(k)
		bw.WriteString("\n  ")
		bw.Write(name)
		bw.WriteString(": ")
		if k == "per_request" && records != nil {
			if err := writeRecordArray(bw, records); err != nil {
				return err
			}
			continue
		}
		v, err := json.MarshalIndent(top[k], "  ", "  ")
		if err != nil {
			return err
		}
		bw.Write(v)
	}
	if len(keys) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// writeRecordArray writes the records as the two-space-indented array MarshalIndent writes for
// a value one level deep ("[]" when there are none).
func writeRecordArray(w *bufio.Writer, records func(func(map[string]any) error) error) error {
	n := 0
	err := records(func(rec map[string]any) error {
		v, err := json.MarshalIndent(rec, "    ", "  ")
		if err != nil {
			return err
		}
		if n == 0 {
			w.WriteString("[")
		} else {
			w.WriteString(",")
		}
		w.WriteString("\n    ")
		w.Write(v)
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		w.WriteString("[]")
		return nil
	}
	w.WriteString("\n  ]")
	return nil
}

// aliasNotes returns one line per distinct hardware or model alias cfg names (engine.hardware,
// a prefill/decode role's hardware, engine.model), saying which catalog id it resolves to
// (timing.ResolveHardwareID, timing.ResolveModelID), e.g.
// `servesweep: hardware "h200" resolved to "h200_sxm"`, and a warning per name the catalogs do
// not know when no role's timing reads the GPU and the model (fixed and polynomial timing accept
// any name, as the reference does, so a typo would otherwise pass unseen), and a note when
// engine.model names an organization the catalog does not know for the model it reads as
// (timing.OrganizationNote); none when cfg names only catalog ids.
func aliasNotes(cfg *config.Config) []string {
	var notes []string
	add := func(note string) {
		if !contains(notes, note) {
			notes = append(notes, note)
		}
	}
	for _, h := range hardwareFields(cfg) {
		id := h.id
		if resolved, alias := timing.ResolveHardwareID(id); alias {
			add(fmt.Sprintf("servesweep: hardware %q resolved to %q", id, resolved))
		}
		// Fixed and polynomial timing do not read the GPU (a hardware-aware timing refuses an
		// unknown one), so a typo would pass as a label.
		if _, err := timing.LookupHardware(id); err != nil && id != "" && !readsHardware(cfg) {
			add("warning: " + cfg.At(h.path, fmt.Sprintf("hardware %q is not a GPU servesweep knows (servesweep list hardware); the timing "+
				"this config uses does not read the GPU, so it is only a label here", id)).Error())
		}
	}
	if resolved, alias := timing.ResolveModelID(cfg.Engine.Model); alias {
		add(fmt.Sprintf("servesweep: model %q resolved to %q", cfg.Engine.Model, resolved))
	}
	// The catalog matches a name by what follows its organization: say when that organization
	// is not one it knows for the model (wrongorg/Llama-3.1-8B).
	if n := timing.OrganizationNote(cfg.Engine.Model); n != "" {
		add("note: " + cfg.At("engine.model", n).Error())
	}
	if _, err := timing.ResolveModel(cfg.Engine.Model); err != nil && cfg.Engine.Model != "" && !readsHardware(cfg) && !readsModel(cfg) {
		add("warning: " + cfg.At("engine.model", fmt.Sprintf("model %q is not a model servesweep knows (servesweep list models) nor a directory with "+
			"a Hugging Face config.json; the timing this config uses does not read the model, so it is only a label here", cfg.Engine.Model)).Error())
	}
	return notes
}

// hardwareField is a GPU id a config gives and the field that gives it.
type hardwareField struct{ path, id string }

// hardwareFields returns cfg's GPU ids with their fields: engine.hardware, then each
// prefill/decode role's own hardware where it gives one.
func hardwareFields(cfg *config.Config) []hardwareField {
	out := []hardwareField{{"engine.hardware", cfg.Engine.Hardware}}
	for _, name := range []config.Role{config.RolePrefill, config.RoleDecode} {
		if role := cfg.Engine.Workers.Role(name); role != nil && role.Hardware != "" {
			out = append(out, hardwareField{"engine.workers." + string(name) + ".hardware", role.Hardware})
		}
	}
	return out
}

// readsModel reports whether cfg derives a value from the model's architecture whatever its
// timing: a default KV capacity, or engine.context_length "max" (or omitted). The run then
// refuses a model the catalog does not know, so no warning calls it a label.
func readsModel(cfg *config.Config) bool {
	if cfg.Engine.ContextLength == 0 {
		return true
	}
	for _, role := range []*config.WorkerRole{cfg.Engine.Workers.Aggregated, cfg.Engine.Workers.Prefill, cfg.Engine.Workers.Decode} {
		if role != nil && role.KVCache.Capacity.Type == config.CapacityDefault {
			return true
		}
	}
	return false
}

// readsHardware reports whether a worker role of cfg uses a timing that reads the GPU and the
// model (default or roofline), which refuses names the catalogs do not know.
func readsHardware(cfg *config.Config) bool {
	for _, role := range []*config.WorkerRole{cfg.Engine.Workers.Aggregated, cfg.Engine.Workers.Prefill, cfg.Engine.Workers.Decode} {
		if role != nil && role.Timing.HardwareAware() {
			return true
		}
	}
	return false
}

// rejectionHints name, per rejection reason, what rejects a request and the field that admits it.
var rejectionHints = map[string]string{
	engine.RejectedContextLength.String(): "prompt of engine.context_length tokens or more; raise engine.context_length",
	engine.RejectedKVCapacity.String():    "prompt that fills or exceeds a worker's whole KV pool; give that role's kv_cache.capacity more blocks (fixed), or a larger memory_fraction or max_tokens (default), or use more GPUs per worker",
	engine.RejectedPrefillBudget.String(): "prompt longer than scheduler.max_batched_tokens while engine.enable_chunked_prefill is false; raise max_batched_tokens or enable chunked prefill",
}

// rejectionWarning returns the one-line stderr warning of a run that rejected requests at
// arrival, with the count per reason that rejected any and the field to change (and, when none
// completed, that the report's zero latencies describe an empty population), or "" when none
// was rejected.
// Rejected requests are counted in prediction.json (rejected_requests, by reason) and excluded
// from every latency and throughput.
func rejectionWarning(s *metrics.Summary) string {
	if s.RejectedRequests == 0 {
		return ""
	}
	reasons := make([]string, 0, len(s.RejectedByReason))
	for reason, n := range s.RejectedByReason {
		if n > 0 {
			reasons = append(reasons, reason)
		}
	}
	slices.Sort(reasons)
	parts := make([]string, len(reasons))
	for i, reason := range reasons {
		parts[i] = fmt.Sprintf("%d %s (%s)", s.RejectedByReason[reason], reason, rejectionHints[reason])
	}
	w := fmt.Sprintf("warning: %d of %d requests were rejected at arrival and are excluded from every metric: %s",
		s.RejectedRequests, s.NumRequests, strings.Join(parts, "; "))
	if s.CompletedRequests == 0 {
		// The contract gives an empty population's statistics as 0.0: say they are not latencies.
		w += "; no request completed, so prediction.json's latency statistics are the 0 of an empty population (num_ttft_samples 0), not measurements"
	}
	return w
}

// ThrashPreemptionsPerRequest is the mean number of preemptions per completed request from which
// predict warns that the KV pools thrash: a request losing its KV that often spends most of its
// passes recomputing it, which the simulation prices, but no deployment should be run so.
const ThrashPreemptionsPerRequest = 10

// thrashWarning returns the one-line stderr warning of a run whose requests lost their KV
// ThrashPreemptionsPerRequest times each or more on average (prediction.json's num_preemptions;
// requests.jsonl's preemption_count per request), or "".
func thrashWarning(s *metrics.Summary) string {
	if s.CompletedRequests == 0 || s.Preemptions < ThrashPreemptionsPerRequest*s.CompletedRequests {
		return ""
	}
	return fmt.Sprintf("warning: %d preemptions for %d completed requests (%.0f each): the KV pools are far too small for the load and "+
		"requests spend most passes recomputing their KV (requests.jsonl's preemption_count gives each one's); give the roles "+
		"more KV (kv_cache.capacity), fewer scheduler.max_sequences, or more GPUs per worker",
		s.Preemptions, s.CompletedRequests, float64(s.Preemptions)/float64(s.CompletedRequests))
}

// truncatedWarning returns the one-line stderr warning of a run whose completed requests stopped
// short of their requested output (at engine.context_length or the KV pool's size), or "". They
// are counted in prediction.json (truncated_requests, truncated_output_tokens); their latencies
// and the throughputs count the shorter output.
func truncatedWarning(s *metrics.Summary) string {
	if s.TruncatedRequests == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %d of %d completed requests stopped short of their requested output (%d output tokens not generated): "+
		"prompt plus output reached engine.context_length or a worker's KV pool; their latencies and the throughputs count the shorter "+
		"output (raise engine.context_length or the KV capacity)", s.TruncatedRequests, s.CompletedRequests, s.TruncatedOutputTokens)
}

// unfinishedWarning returns the one-line stderr warning of a run that stopped (at
// traffic.stop.max_virtual_time_seconds) with requests still in flight, or "". They are counted
// in prediction.json (unfinished_requests) and left out of every latency. Under an SLA it says
// how many were still within every per-request bound at the stop (metrics.Censored, which a
// sweep's SLA attainment leaves out; sla is the run's, nil without one), and only when some were
// not does it suggest a lower load.
func unfinishedWarning(s *metrics.Summary, sla *metrics.SLA) string {
	if s.UnfinishedRequests == 0 {
		return ""
	}
	msg := fmt.Sprintf("warning: %d of %d requests were unfinished when the run stopped at traffic.stop.max_virtual_time_seconds "+
		"and are excluded from every latency (%d completed)", s.UnfinishedRequests, s.NumRequests, s.CompletedRequests)
	switch {
	case sla == nil || s.StopMs <= 0 || sla.TTFTMs <= 0 && sla.ITLMs <= 0 && sla.E2EMs <= 0:
		// No per-request bound to be within: percentile terms only judge the finished requests.
		return msg + "; raise the stop or lower the load"
	case s.CensoredRequests == s.UnfinishedRequests:
		return msg + "; every one was still within each SLA bound then (a sweep's SLA attainment leaves such requests out: " +
			"censored_requests); raise the stop to measure them"
	}
	return msg + fmt.Sprintf("; %d already past an SLA bound then (a sweep counts them as misses, and leaves out the %d still "+
		"within each bound); raise the stop or lower the load", s.UnfinishedRequests-s.CensoredRequests, s.CensoredRequests)
}

// overloadWarning returns the one-line stderr warning of an open-loop run (constant_rate,
// poisson) whose arrivals outpace the deployment (sim.RunBacklogAfterFill: over a window that
// starts after the fill and spans enough service lifetimes, its system gained more than
// sim.OverloadShare of the window's arrivals, or its queue grew past sim.Backlog.QueueOverloaded's
// bounds), or "": its queue, and every latency after it, grow
// for as long as the run lets them, so they are the run's length's, not the deployment's. A
// sweep keeps such a point off its front (results' overloaded reason).
func overloadWarning(cfg *config.Config, res *sim.Result) string {
	b, from, ok := sim.RunBacklogAfterFill(cfg, res.Requests, res.Workload)
	if !ok || !b.Overloaded() {
		return ""
	}
	held := fmt.Sprintf("its system held %d more requests", b.Growth())
	if !b.SystemOverloaded() {
		held = fmt.Sprintf("its queue (requests not yet admitted by a worker) held %d more", b.QueueGrowth())
	}
	return fmt.Sprintf("warning: arrivals outpace this deployment: %s at the last arrival than at "+
		"%.1f s (%d arrived between), so its queue and every latency grow with the run's length and describe the run, not the "+
		"deployment; lower the rate or add capacity (a sweep keeps such a point off its front as overloaded)",
		held, from/1000, b.Arrived)
}

// drainWarning returns the one-line stderr warning of an autoscaled open-loop run (constant_rate,
// poisson; planner.policy enabled) whose measured window drained its system (sim.Backlog.Drained
// over sim.RunBacklogAfterFill's window, in flight by sim.InFlight), or "": it served, within the window, work queued before
// it, as an autoscaled deployment does once its planner adds the workers it lacked at the start,
// so its throughput exceeds what steady state gives and its latencies mix the queue's with the
// steady state's. It names where the drain ended (sim.DrainEndMs), a warm-up that measures past
// it; a sweep re-measures such a point from there, or keeps it off its front as drained.
func drainWarning(cfg *config.Config, res *sim.Result) string {
	if !cfg.Planner.Settings().Enabled || len(cfg.Traffic.Load.Profile) > 0 {
		return "" // a rate profile that steps down sheds its in-flight work: the load, not a drain
	}
	b, from, ok := sim.RunBacklogAfterFill(cfg, res.Requests, res.Workload)
	if !ok || !b.Drained(sim.InFlight(res.Summary.RequestThroughputRPS, res.Summary.E2E.Mean)) {
		return ""
	}
	last := sim.LastStartMs(res.Requests, res.Workload)
	end := sim.DrainEndMs(res.Requests, from, last, b.AtEnd)
	return fmt.Sprintf("warning: this run drained a backlog: its system held %d fewer requests at the last arrival than at "+
		"%.1f s (%d arrived between), so its throughput counts work queued before then and its latencies mix that queue's "+
		"with the steady state's (an autoscaled deployment whose planner adds workers after the start does so); set "+
		"traffic.load.warmup_seconds to %.0f or more, where the drain ended, and run past it to measure the steady state",
		-b.Growth(), from/1000, b.Arrived, math.Ceil(end/1000))
}

// lockstepNote returns the one-line stderr note of a run whose requests move in lock-step, or
// "": a concurrency load above 1 whose requests all have the same input and output length,
// more of them than one wave, in a run that outlasted its ramp (unfinishedRampNote covers one
// that did not).
// When the first wave starts at once (ramp_seconds 0 or omitted), its requests complete
// together, their replacements start together, and every wave repeats the first for the whole
// run: each request sees the same latency, and the latencies and rates are those of one
// synchronized burst, not of a steady state. A ramp does not cure it: a request's replacement
// starts when it finishes and requests prefilled together finish together, so the phases the
// start gives the requests can persist, and TTFT and TPOT then move with ramp_seconds, not with
// the load alone (a ramp shorter than the engine takes to admit the first wave leaves it one
// wave; TestFixedLengthsMoveWithTheRamp measures both); lengths drawn from a distribution let
// the phases mix. The sweep's warning (grid.Spec.lockstepWarning) names the same condition.
func lockstepNote(cfg *config.Config, wl *traffic.Workload, s *metrics.Summary) string {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConcurrency || l.Concurrency <= 1 || len(wl.Requests) <= l.Concurrency {
		return "" // one wave at most: no wave repeats another
	}
	if l.Ramp() > 0 && s.DurationMs < l.Ramp()*1000 {
		return "" // the run ended within its ramp: unfinishedRampNote says so
	}
	first := wl.Requests[0]
	for _, r := range wl.Requests[1:] {
		if r.PromptLen != first.PromptLen || r.OutputLen != first.OutputLen {
			return ""
		}
	}
	advice := "draw the lengths from a range (e.g. traffic.source.output_tokens: {distribution: uniform, min: ..., max: ...})"
	if cfg.Traffic.Source.Type == config.SourceTrace {
		advice = "replay requests of varied lengths"
	}
	if l.Ramp() > 0 {
		return fmt.Sprintf("servesweep: requests of one length fall into step (concurrency %d, every request %d input and %d output "+
			"tokens): a request's replacement starts when it finishes and requests prefilled together finish together, so the "+
			"phases the %g s ramp (traffic.load.ramp_seconds) gives them can persist, and TTFT and TPOT move with the ramp, not "+
			"with the load alone; %s to measure a steady state", l.Concurrency, first.PromptLen, first.OutputLen, l.Ramp(), advice)
	}
	if l.Warmup() == 0 {
		advice += " and set traffic.load.warmup_seconds"
	}
	return fmt.Sprintf("servesweep: requests start in one wave and stay in lock-step (concurrency %d, every request %d input and %d output "+
		"tokens, traffic.load.ramp_seconds 0): every wave repeats the first; %s to measure a steady state",
		l.Concurrency, first.PromptLen, first.OutputLen, advice)
}

// steadyWindowNote returns the stderr note of a run with a warm-up after which no request
// arrived (metrics.Summary.SteadyWindowMissing), whose rates are therefore the whole run's, or "".
func steadyWindowNote(s *metrics.Summary) string {
	if !s.SteadyWindowMissing {
		return ""
	}
	if s.Cooldown {
		return fmt.Sprintf("warning: traffic.load.cooldown: the closed loop started its last session at %.0f ms, not after "+
			"traffic.load.warmup_seconds (%g s), so there is no steady window: %d requests are warm-up and %d cool-down, left "+
			"out of every count and latency (%d requests counted), the throughputs are the whole run's (every completed request "+
			"over duration_ms) and steady_window_ms is 0; run more sessions than traffic.load.concurrency",
			s.CooldownFromMs, s.WarmupSeconds, s.WarmupRequests, s.CooldownRequests, s.NumRequests)
	}
	return fmt.Sprintf("warning: no request arrived after traffic.load.warmup_seconds (%g s), so there is no steady window: "+
		"all %d requests are warm-up, left out of every count and latency (num_requests is 0 and the latencies read 0), "+
		"the throughputs are the whole run's (every completed request over duration_ms) and steady_window_ms is 0; "+
		"lower warmup_seconds or run more requests", s.WarmupSeconds, s.WarmupRequests)
}

// thinWindowWarning returns the stderr warning of a run whose steady window (after
// traffic.load.warmup_seconds, before a cool-down) holds fewer than results.MinAnswerRequests
// completed requests, the floor the sweep's answers warn under (results.ThinText): its
// percentiles are one of a handful of requests and its rates move with any of them (a user
// trial, 2026-12-07: warm-ups of 5, 6 and 6.5 s left 27, 17 and 4 requests and an output rate of
// 1,567, 1,804 and 725 tokens/s, without a word); "" otherwise, and for a run without a window.
func thinWindowWarning(s *metrics.Summary) string {
	if s.SteadyWindowMissing || s.WarmupSeconds <= 0 && !s.Cooldown || s.CompletedRequests >= results.MinAnswerRequests {
		return ""
	}
	var window []string
	if s.WarmupSeconds > 0 {
		window = append(window, fmt.Sprintf("after traffic.load.warmup_seconds (%g s)", s.WarmupSeconds))
	}
	if s.Cooldown {
		window = append(window, fmt.Sprintf("before the cool-down (traffic.load.cooldown: %d requests left out after the last "+
			"session start)", s.CooldownRequests))
	}
	fix := "run more requests"
	if s.WarmupSeconds > 0 {
		fix = "lower warmup_seconds or " + fix
	}
	return fmt.Sprintf("warning: only %d completed requests were measured %s: the latencies are those of a handful of "+
		"requests and the throughputs move with any one of them; %s", s.CompletedRequests, strings.Join(window, ", "), fix)
}

// flooredWarning returns the stderr warning for a run whose duration is under the floor of the
// rates (metrics.DurationFloored), or "". prediction.json keeps the rates, as the reference does;
// the table shows them as N/A.
func flooredWarning(s *metrics.Summary) string {
	if !s.ThroughputsFloored() {
		return ""
	}
	what := "0 ms (every pass took 0 ms)"
	if s.DurationMs != 0 {
		what = fmt.Sprintf("%g ms, under the %g s floor of the rates", s.DurationMs, metrics.MinDurationS)
	}
	return "warning: the simulated duration is " + what + "; throughputs are not meaningful and are shown as N/A " +
		"(prediction.json keeps the reference's values, computed over the floor)"
}

// checkOutputDir applies dynosim-spec.md §4.1: a path that exists and is not a directory is an
// error; a non-empty directory needs --overwrite. Nothing is removed here: a successful run
// replaces only the files predict owns (prediction.json, requests.jsonl), so a failed run leaves
// earlier results in place.
func checkOutputDir(dir string, overwrite bool) error {
	if dir == "" {
		return &usageError{fmt.Errorf("--output-dir must not be empty")}
	}
	entries, err := outputDirEntries(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if !overwrite {
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		return &usageError{fmt.Errorf("--output-dir %s is not empty (%s); pass --overwrite to replace %s, or choose another directory",
			dir, strings.Join(names, ", "), strings.Join(outputFiles, " and "))}
	}
	return nil
}

// outputDirEntries lists the entries of the --output-dir dir: none when it does not exist yet, a
// usage error when it cannot be read or is not a directory.
// makeOutputDir creates an --output-dir that does not exist yet; a failure is a usage error
// (exit 2) naming the flag and the cause.
func makeOutputDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &usageError{fmt.Errorf("--output-dir %s: cannot create it: %v", dir, config.PathCause(err))}
	}
	return nil
}

func outputDirEntries(dir string) ([]os.DirEntry, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &usageError{fmt.Errorf("--output-dir %s: %v", dir, config.PathCause(err))}
	}
	if !st.IsDir() {
		return nil, &usageError{fmt.Errorf("--output-dir %s exists and is not a directory", dir)}
	}
	return os.ReadDir(dir)
}

// writeRecords writes records as JSON Lines (one sorted-key object per line) to path atomically
// (results.WriteAtomic).
func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
