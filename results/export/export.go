package export

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// Export targets.
const (
	TargetVLLM   = "vllm"
	TargetSGLang = "sglang"
	TargetTRTLLM = "trtllm"
	TargetDynamo = "dynamo"
)

// Targets lists the export targets in the order the help text gives them.
func Targets() []string { return []string{TargetVLLM, TargetSGLang, TargetTRTLLM, TargetDynamo} }

// AIPerfFile is the name of the benchmark script every export writes.
const AIPerfFile = "aiperf.sh"

// DefaultURL is where aiperf.sh sends requests unless Options.URL says otherwise: the first
// replica's port of the launch scripts, or the Dynamo frontend after a port-forward.
const DefaultURL = "localhost:8000"

// Options tune an export; the zero value is valid.
type Options struct {
	// Name is the deployment's name: the Dynamo manifest's metadata.name and namespace, and the
	// prefix of its services. "" means "servesweep". It is lowercased and cut to a DNS label.
	Name string
	// URL is the server aiperf.sh benchmarks; "" means DefaultURL.
	URL string
}

// File is one file of an export: its name inside the output directory, its bytes and whether
// it is a script to mark executable.
type File struct {
	Name       string
	Data       []byte
	Executable bool
}

// Export returns the files that deploy cfg on target and benchmark it (aiperf.sh last). cfg must
// be a decoded, validated config (config.LoadFile). A choice target cannot express comes back
// as config.Errors, one per field, each naming the field, its value and what the target accepts;
// an unknown target is an error too.
func Export(cfg *config.Config, target string, opts Options) ([]File, error) {
	if !slices.Contains(Targets(), target) {
		return nil, fmt.Errorf("unknown export target %q; valid targets: %s", target, strings.Join(Targets(), ", "))
	}
	x := newExporter(cfg, target, opts)
	// A fixed KV pool its GPU cannot hold beside the weights and a pass fails the engine at its
	// first full pass, if not at startup: no launch is written for it.
	for _, e := range sim.PoolsBeyondMemory(cfg) {
		x.fail(e.Path, "the engine could not run a full pass with this pool: "+e.Msg)
	}
	if cfg.Planner.Policy == "enabled" {
		x.unsupported("planner.policy", "enabled", "the launch commands and the Dynamo graph carry fixed worker counts, not the simulated autoscaling; export a point with planner.policy disabled")
	}
	var files []File
	switch target {
	case TargetDynamo:
		files = x.dynamo()
	default:
		files = x.engineLaunch()
	}
	bench := x.aiperf()
	if len(x.errs) > 0 {
		return nil, x.errs
	}
	return append(files, bench), nil
}

// WriteFiles writes files into dir (created if missing), each atomically; scripts get mode 0755.
func WriteFiles(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if err := results.WriteFileAtomic(path, f.Data); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		if err := os.Chmod(path, mode); err != nil {
			return err
		}
	}
	return nil
}

// exporter holds one export's inputs and the problems found so far.
type exporter struct {
	cfg    *config.Config
	target string
	// backend is the serving engine the workers run: the target, or engine.backend for Dynamo.
	backend string
	name    string
	url     string
	// urlGiven says Options.URL named the server aiperf.sh benchmarks (else DefaultURL).
	urlGiven bool
	// model is engine.model with a catalog alias resolved to its Hugging Face id.
	model string
	errs  config.Errors
}

func newExporter(cfg *config.Config, target string, opts Options) *exporter {
	x := &exporter{cfg: cfg, target: target, backend: target, name: DNSLabel(opts.Name), url: opts.URL, urlGiven: opts.URL != ""}
	if x.url == "" {
		x.url = DefaultURL
	}
	if target == TargetDynamo {
		x.backend = cfg.Engine.Backend
	}
	x.model, _ = timing.ResolveModelID(cfg.Engine.Model)
	if target != TargetDynamo && cfg.Engine.Backend != target {
		x.fail("engine.backend", fmt.Sprintf("the config simulates %s's scheduler, not %s's; export it for target %s or dynamo, "+
			"or simulate engine.backend %s first", cfg.Engine.Backend, target, cfg.Engine.Backend, target))
	}
	x.checkVersion()
	x.checkAttention()
	return x
}

// checkAttention refuses an engine.precision.attention other than the KV cache's format: the
// engines choose the format attention computes in themselves (from the KV cache's and their
// release), and no flag the export writes sets it apart from --kv-cache-dtype.
func (x *exporter) checkAttention() {
	a := x.cfg.Engine.Precision.Attention
	if a == "" || a == config.PrecisionAuto {
		return
	}
	if _, kv, _ := x.precisions(); timing.Precision(a) != kv {
		x.unsupported("engine.precision.attention", a, fmt.Sprintf("no flag the export writes makes attention compute in another format than the KV cache's (%s, --kv-cache-dtype); "+
			"the engine release decides it; remove the field or set it to auto", kv))
	}
}

// fail records that the field at path cannot be expressed on the target.
// A problem found twice (a check shared by two renderings of one role) is recorded once.
func (x *exporter) fail(path, msg string) {
	for _, e := range x.errs {
		if e.Path == path && e.Msg == msg {
			return
		}
	}
	x.errs = append(x.errs, &config.Error{File: x.cfg.File, Path: path, Msg: msg})
}

// unsupported records a value of path that the target has no way to carry.
func (x *exporter) unsupported(path string, value any, what string) {
	x.fail(path, fmt.Sprintf("%v cannot be expressed for target %s: %s", value, x.target, what))
}

// roles returns the worker roles the engine mode runs, with their YAML paths.
func (x *exporter) roles() []roleRef {
	var out []roleRef
	for _, r := range x.cfg.Engine.Mode.Roles() {
		if w := x.cfg.Engine.Workers.Role(r); w != nil {
			out = append(out, roleRef{name: r, w: w, path: "engine.workers." + string(r)})
		}
	}
	return out
}

// roleRef is one worker role of the config.
type roleRef struct {
	name config.Role
	w    *config.WorkerRole
	path string
}

// disaggregated reports whether the config runs separate prefill and decode workers.
func (x *exporter) disaggregated() bool { return x.cfg.Engine.Mode == config.ModeDisaggregated }

// precisions returns the weight and KV-cache formats that were simulated (engine.precision, its
// auto resolved from the model id) and the ones the checkpoint named by engine.model holds.
func (x *exporter) precisions() (weights, kv timing.Precision, ckpt timing.Precisions) {
	// The checkpoint's formats: the catalog's (or a model directory's) when the model resolves
	// (DeepSeek-R1 is an FP8 checkpoint whatever its id says), else what the id implies.
	ckpt = timing.DefaultPrecisions(x.model)
	if m, err := timing.ResolveModel(x.model); err == nil && m.Precisions.Weights != "" {
		ckpt = m.Precisions
	}
	weights, kv = ckpt.Weights, ckpt.KVCache
	if p := x.cfg.Engine.Precision.Weights; p != "" && p != config.PrecisionAuto {
		weights = timing.Precision(p)
	}
	if p := x.cfg.Engine.Precision.KVCache; p != "" && p != config.PrecisionAuto {
		kv = timing.Precision(p)
	}
	return weights, kv, ckpt
}

// onlineFP8 reports whether the simulated weights are fp8 quantized at load time from a bf16
// checkpoint (vLLM's and SGLang's --quantization fp8), and records an error for any other
// weight format the checkpoint does not hold. canQuantize says whether the target can quantize
// to fp8 at load time.
func (x *exporter) onlineFP8(canQuantize bool) bool {
	weights, _, ckpt := x.precisions()
	if weights == ckpt.Weights {
		return false
	}
	if weights == timing.FP8 && ckpt.Weights == timing.BF16 && canQuantize {
		return true
	}
	example := "one whose id ends in -FP8"
	switch weights {
	case timing.FP4:
		example = "one whose id ends in -FP4 or -NVFP4"
	case timing.BF16:
		example = "one whose id names no FP8 or FP4 format"
	}
	x.unsupported("engine.precision.weights", weights, fmt.Sprintf("engine.model %s is a %s checkpoint and %s cannot turn it into %s at load time; "+
		"name a %s checkpoint as engine.model (e.g. %s), or set engine.precision.weights to auto",
		x.model, ckpt.Weights, x.backendName(), weights, weights, example))
	return false
}

// backendName is the serving engine's display name.
func (x *exporter) backendName() string {
	switch x.backend {
	case config.BackendSGLang:
		return "SGLang"
	case config.BackendTRTLLM:
		return "TensorRT-LLM"
	}
	return "vLLM"
}

// checkMoE checks that a role's MoE split is the one the engine derives from its attention
// GPUs (tensor × attention_data): the experts either split across all of them (expert
// parallel, moe_expert = tensor × attention_data) or each expert's matrices do (moe_tensor =
// tensor × attention_data), or, where allowMixed, any moe_tensor × moe_expert of that product.
func (x *exporter) checkMoE(r roleRef, allowMixed bool) {
	p := r.w.Parallelism
	if p.MoeTensor <= 1 && p.MoeExpert <= 1 {
		return
	}
	gpus := p.Tensor * p.AttentionData
	path := r.path + ".parallelism"
	if p.MoeTensor*p.MoeExpert != gpus {
		x.unsupported(path+".moe_expert", fmt.Sprintf("moe_tensor %d × moe_expert %d", p.MoeTensor, p.MoeExpert),
			fmt.Sprintf("%s splits the MoE layers over the tensor × attention_data = %d GPUs of a stage, so moe_tensor × moe_expert must be %d",
				x.backendName(), gpus, gpus))
		return
	}
	if !allowMixed && p.MoeTensor > 1 && p.MoeExpert > 1 {
		x.unsupported(path+".moe_expert", fmt.Sprintf("moe_tensor %d with moe_expert %d", p.MoeTensor, p.MoeExpert),
			fmt.Sprintf("%s runs MoE layers either all tensor-parallel or all expert-parallel (moe_expert %d with moe_tensor 1, or moe_tensor %d with moe_expert 1)",
				x.backendName(), gpus, gpus))
	}
}

// IsDNSLabel reports whether name is a label DNSLabel keeps as it is: an RFC 1123 label (lowercase
// letters, digits and '-', ending with a letter or digit) that starts with a letter and has at
// most 40 characters.
func IsDNSLabel(name string) bool { return dnsLabelRE.MatchString(name) }

var dnsLabelRE = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$`)

// DNSLabel turns name into a Kubernetes DNS label: lowercase letters, digits and '-' (a run of
// anything else becomes one '-'), starting with a letter ("servesweep-" is put before a leading
// digit), at most 40 characters (room for the service suffixes), "servesweep" when nothing is
// left. A valid label is returned unchanged.
func DNSLabel(name string) string {
	if IsDNSLabel(name) {
		return name
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	switch {
	case s == "":
		return "servesweep"
	case s[0] < 'a':
		s = "servesweep-" + s
	}
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	return s
}

// arg is one command-line argument: a flag and its value ("" for a bare flag).
type arg struct{ flag, value string }

// shellCommand renders a command and its arguments one flag per line, shell-quoted.
func shellCommand(b *bytes.Buffer, head []string, args []arg) {
	for i, h := range head {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h)
	}
	for _, a := range args {
		b.WriteString(" \\\n  ")
		b.WriteString(a.flag)
		if a.value != "" {
			b.WriteByte(' ')
			b.WriteString(shellQuote(a.value))
		}
	}
	b.WriteByte('\n')
}

// shellQuote quotes s for a POSIX shell unless it is made only of safe characters; a value
// starting with "${" is a parameter expansion and is double-quoted so the shell expands it.
func shellQuote(s string) string {
	if strings.HasPrefix(s, "${") {
		return `"` + s + `"`
	}
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// flatten returns args as a list of strings (flag, then value when there is one).
func flatten(args []arg) []string {
	var out []string
	for _, a := range args {
		out = append(out, a.flag)
		if a.value != "" {
			out = append(out, a.value)
		}
	}
	return out
}

// itoa formats an int.
func itoa(n int) string { return fmt.Sprint(n) }

// ftoa formats a float in its shortest form.
func ftoa(f float64) string { return fmt.Sprint(f) }
