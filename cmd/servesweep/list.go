package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/spf13/cobra"
)

// listOptions are the flags and argument of `servesweep list`.
type listOptions struct {
	// What is the registry to print: one of listKinds.
	What string
	// Format is the stdout format, table or json.
	Format string
}

// listKinds are the registries `servesweep list` prints, with what each holds.
var listKinds = []struct{ name, what string }{
	{"models", "engine.model catalog: parameters and KV bytes per token"},
	{"hardware", "engine.hardware GPUs: HBM, bandwidth and tensor-core peaks"},
	{"backends", "engine.backend values and their scheduler styles"},
	{"metrics", "numeric results.parquet columns: objectives and --objective metrics"},
	{"fields", "spec fields that take a search domain, and the domain kinds"},
}

// backendStyles describes each engine.backend value's scheduler style (sim/engine). Every value
// the schema accepts has one (TestListBackendsMatchesTheSchema).
var backendStyles = map[string]string{
	config.BackendVLLM:   "vLLM's scheduler: running sequences first, then FCFS admission; LIFO preemption",
	config.BackendSGLang: "SGLang's scheduler: prefill first, radix prefix cache, conservative admission",
	config.BackendTRTLLM: "TensorRT-LLM's scheduler: vLLM's order with a capacity policy",
}

func newListCmd(io ioStreams) *cobra.Command {
	opts := &listOptions{}
	var names, lines []string
	for _, k := range listKinds {
		names = append(names, k.name)
		lines = append(lines, fmt.Sprintf("  %-9s %s", k.name, k.what))
	}
	cmd := &cobra.Command{
		Use:   "list " + strings.Join(names, "|") + " [--format table|json]",
		Short: "List the models, GPUs, backends, metrics and searchable fields a spec may name",
		Long: `Print what a prediction or sweep spec may name, one line of facts each, from the same
registries the spec parser checks names against:

` + strings.Join(lines, "\n") + `

--format json prints one JSON array of objects instead.`,
		ValidArgs: names,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(names, args[0]) {
				return &usageError{fmt.Errorf("list takes one of %s, got %q", strings.Join(names, ", "), args)}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			opts.What = args[0]
			return runList(io, opts)
		},
	}
	addFormatFlag(cmd, &opts.Format, "one line of facts per name")
	return cmd
}

// modelDoc is one model of `list models`.
type modelDoc struct {
	Name string `json:"name"`
	// Parameters is the total parameter count; ActiveParameters, for an MoE model, the
	// parameters one token runs through (0 for a dense model).
	Parameters       float64 `json:"parameters"`
	ActiveParameters float64 `json:"active_parameters,omitempty"`
	// KVBytesPerToken is the BF16 KV cache of one token over every layer, before TP sharding.
	KVBytesPerToken  int64  `json:"kv_bytes_per_token_bf16"`
	Layers           int    `json:"layers"`
	MaxContextTokens int    `json:"max_context_tokens"`
	Weights          string `json:"default_weights"`
	// Attention is the layout as the table prints it: "GQA 8×128" (KV heads × head dim),
	// "MHA 64×128", "MLA 512+64" (latent + rotary key), with "+18 sliding" or "+45 linear"
	// for the layers that hold no per-token KV.
	Attention string `json:"attention"`
	// MTPLayers counts the model's multi-token-prediction modules (config.json
	// num_nextn_predict_layers): engine.speculation.kind mtp needs at least one.
	MTPLayers int `json:"mtp_layers"`
}

// hardwareDoc is one GPU of `list hardware`.
type hardwareDoc struct {
	Name       string  `json:"name"`
	HBMGiB     float64 `json:"hbm_gib"`
	HBMTBps    float64 `json:"hbm_tb_per_second"`
	BF16TFLOPS float64 `json:"bf16_tflops"`
	FP8TFLOPS  float64 `json:"fp8_tflops"`
	FP4TFLOPS  float64 `json:"fp4_tflops"`
	LinkGBps   float64 `json:"link_gb_per_second"`
	// LinkDomainGPUs is how many of these GPUs share the link (timing.Hardware.LinkDomainGPUs):
	// a worker of more crosses nodes. NetworkGBps is each GPU's network port to other nodes, one
	// direction (0: not in the catalog).
	LinkDomainGPUs int     `json:"link_domain_gpus"`
	NetworkGBps    float64 `json:"network_gb_per_second"`
	// Aliases are the other spellings engine.hardware accepts for the GPU (timing.HardwareAliases).
	Aliases []string `json:"aliases"`
}

// nameDoc is one backend of `list backends`.
type nameDoc struct {
	Name    string `json:"name"`
	Meaning string `json:"meaning"`
}

func runList(io ioStreams, opts *listOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	var docs any
	var lines [][2]string // name, facts
	switch opts.What {
	case "models":
		ds, err := listModels()
		if err != nil {
			return err
		}
		lines = append(lines, [2]string{"model", modelFactsHeader})
		for _, d := range ds {
			lines = append(lines, [2]string{d.Name, modelFacts(d)})
		}
		docs = ds
	case "hardware":
		ds, err := listHardware()
		if err != nil {
			return err
		}
		for _, d := range ds {
			lines = append(lines, [2]string{d.Name, hardwareFacts(d)})
		}
		docs = ds
	case "backends":
		ds := listBackends()
		for _, d := range ds {
			lines = append(lines, [2]string{d.Name, d.Meaning})
		}
		docs = ds
	case "metrics":
		ds := results.Metrics()
		for _, d := range ds {
			unit := d.Unit
			if unit == "" {
				unit = "-"
			}
			lines = append(lines, [2]string{d.Name, "[" + unit + "] " + d.Meaning})
		}
		docs = ds
	case "fields":
		ds := grid.SearchFields()
		for _, d := range ds {
			lines = append(lines, [2]string{d.Path, strings.Join(d.Domains, "|") + "  " + d.Want})
		}
		docs = ds
	}
	if opts.Format == formatJSON {
		return printJSON(io.Out, docs)
	}
	printColumns(io.Out, lines)
	if opts.What == "models" {
		fmt.Fprintln(io.Out, modelSpellings)
	}
	return nil
}

// modelSpellings follows the text form of `list models`: engine.model also takes other
// spellings of a listed name (timing.LookupModel folds them).
const modelSpellings = "\nengine.model also takes other spellings of these names: in any case, without the organization,\n" +
	"a \"Meta-\" prefix or \"-Instruct\", with a weight-format suffix (-FP8, -FP8-dynamic, -FP4, -NVFP4) that\n" +
	"sets engine.precision's auto fields: FP8 or FP4 weights and an FP8 KV cache (the quantized checkpoints'\n" +
	"formats), and after that suffix a checkpoint revision -v and digits (nvidia/DeepSeek-R1-0528-FP4-v2);\n" +
	"e.g. meta-llama/Meta-Llama-3.1-8B-Instruct is meta-llama/Llama-3.1-8B.\n" +
	"Under another organization than the model's own (or, with a weight-format suffix, nvidia, RedHatAI or\n" +
	"neuralmagic) a name is still read as the model, with a note saying so.\n" +
	"A local directory holding a Hugging Face config.json names a model too."

// printColumns prints name and facts pairs as two left-aligned columns; a name longer than
// maxNameColumn pushes only its own facts right, so that one long field path does not widen
// every line.
func printColumns(w io.Writer, lines [][2]string) {
	width := 0
	for _, l := range lines {
		if n := utf8.RuneCountInString(l[0]); n <= maxNameColumn {
			width = max(width, n)
		}
	}
	for _, l := range lines {
		fmt.Fprintf(w, "%-*s  %s\n", width, l[0], l[1])
	}
}

// maxNameColumn is the widest name printColumns aligns the facts after, in characters.
const maxNameColumn = 60

// listModels describes the model catalog (timing.ModelIDs) in id order.
func listModels() ([]modelDoc, error) {
	var out []modelDoc
	for _, id := range timing.ModelIDs() {
		m, err := timing.LookupModel(id)
		if err != nil {
			return nil, err // the catalog's own ids always resolve
		}
		d := modelDoc{Name: id, Parameters: m.Params, KVBytesPerToken: m.KVBytesPerToken(), Layers: m.Layers,
			MaxContextTokens: m.MaxContext, Weights: string(m.Precisions.Weights), Attention: attentionKind(m), MTPLayers: m.MTPLayers}
		if m.MoE != nil {
			d.ActiveParameters = m.ActiveLinearParams() + (m.Params - m.LinearParams())
		}
		out = append(out, d)
	}
	return out, nil
}

// attentionKind names a model's attention layout: GQA (or MHA) with its KV heads × head dim, or
// MLA with its latent and rotary key widths, plus the sliding-window or linear-attention layers
// that hold no per-token KV.
func attentionKind(m timing.ModelSpec) string {
	s := fmt.Sprintf("GQA %d×%d", m.KVHeads, m.HeadDim)
	if m.KVHeads == m.Heads {
		s = fmt.Sprintf("MHA %d×%d", m.Heads, m.HeadDim)
	}
	if m.MLA != nil {
		s = fmt.Sprintf("MLA %d+%d", m.MLA.KVLoraRank, m.MLA.QKRopeHeadDim)
	}
	if m.SlidingLayers > 0 {
		s += fmt.Sprintf(" +%d sliding", m.SlidingLayers)
	}
	if m.LinearAttention != nil {
		s += fmt.Sprintf(" +%d linear", m.LinearAttention.Layers)
	}
	return s
}

// modelFactsHeader heads the columns of modelFacts.
const modelFactsHeader = "params  active  KV B/token  layers  attention            context  weights  MTP"

// modelFacts is a model's line under modelFactsHeader: parameters (and, for MoE, those active
// per token), KV bytes per token in BF16, layers and attention, context, the weights' default
// format and the MTP modules ("-" without: speculation kind mtp cannot run).
func modelFacts(d modelDoc) string {
	active, mtp := "-", "-"
	if d.ActiveParameters > 0 {
		active = billions(d.ActiveParameters)
	}
	if d.MTPLayers > 0 {
		mtp = fmt.Sprint(d.MTPLayers)
	}
	return fmt.Sprintf("%6s  %6s  %10s  %6d  %-19s  %7s  %-7s  %s", billions(d.Parameters), active,
		groupThousands(d.KVBytesPerToken), d.Layers, d.Attention, groupThousands(int64(d.MaxContextTokens)), d.Weights, mtp)
}

// billions renders a parameter count in billions with three significant figures, e.g. "8.03B".
func billions(n float64) string {
	b := n / 1e9
	switch {
	case b >= 100:
		return strconv.FormatFloat(b, 'f', 0, 64) + "B"
	case b >= 10:
		return strconv.FormatFloat(b, 'f', 1, 64) + "B"
	}
	return strconv.FormatFloat(b, 'f', 2, 64) + "B"
}

// listHardware describes the GPU table (timing.HardwareIDs) in id order.
func listHardware() ([]hardwareDoc, error) {
	var out []hardwareDoc
	for _, id := range timing.HardwareIDs() {
		h, err := timing.LookupHardware(id)
		if err != nil {
			return nil, err // the table's own ids always resolve
		}
		out = append(out, hardwareDoc{Name: id, HBMGiB: h.MemoryGiB, HBMTBps: h.MemoryTBps, BF16TFLOPS: h.BF16TFLOPS,
			FP8TFLOPS: h.FP8TFLOPS, FP4TFLOPS: h.FP4TFLOPS, LinkGBps: h.LinkGBps, LinkDomainGPUs: h.LinkDomainGPUs, NetworkGBps: h.NetworkGBps, Aliases: append([]string{}, timing.HardwareAliases(id)...)})
	}
	return out, nil
}

// hardwareFacts is a GPU's line: memory, bandwidth, dense tensor-core peaks, link bandwidth and
// how many GPUs share it, the network port between nodes, and the other spellings
// engine.hardware accepts for it.
func hardwareFacts(d hardwareDoc) string {
	peak := func(x float64) string {
		if x == 0 {
			return "-"
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	aka := ""
	if len(d.Aliases) > 0 {
		aka = "; also written " + strings.Join(d.Aliases, ", ")
	}
	port := "no network port in the catalog"
	if d.NetworkGBps > 0 {
		port = "network port " + strconv.FormatFloat(d.NetworkGBps, 'f', -1, 64) + " GB/s"
	}
	return fmt.Sprintf("%s GiB of GPU memory at %s TB/s; dense TFLOPS BF16 %s, FP8 %s, FP4 %s; GPU link %s GB/s each way among %d GPUs, %s%s",
		strconv.FormatFloat(d.HBMGiB, 'f', -1, 64), strconv.FormatFloat(d.HBMTBps, 'f', -1, 64),
		peak(d.BF16TFLOPS), peak(d.FP8TFLOPS), peak(d.FP4TFLOPS), strconv.FormatFloat(d.LinkGBps, 'f', -1, 64), d.LinkDomainGPUs, port, aka)
}

// listBackends lists engine.backend's values in schema order, with their scheduler styles.
func listBackends() []nameDoc {
	f, _ := config.Lookup("engine.backend")
	out := make([]nameDoc, 0, len(f.Enum))
	for _, b := range f.Enum {
		out = append(out, nameDoc{Name: b, Meaning: backendStyles[b]})
	}
	return out
}

// groupThousands renders n with a comma every three digits, e.g. 131,072.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
