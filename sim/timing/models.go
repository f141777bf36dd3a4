package timing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ModelSpec is the public architecture of a dense decoder-only model, as in its Hugging Face
// config.json.
type ModelSpec struct {
	// ID is the canonical catalog id, or the directory a config.json was read from.
	ID string
	// Layers (num_hidden_layers), Hidden (hidden_size), Heads (num_attention_heads),
	// KVHeads (num_key_value_heads), HeadDim (head_dim, or hidden/heads), Intermediate
	// (intermediate_size of the SwiGLU MLP), Vocab (vocab_size).
	Layers, Hidden, Heads, KVHeads, HeadDim, Intermediate, Vocab int
	// MaxContext is max_position_embeddings in tokens.
	MaxContext int
	// Params is the total parameter count (embeddings, lm_head and norms included).
	Params float64
	// Precisions is what the id (or the checkpoint's quantization_config) implies; see
	// DefaultPrecisions. ResolveModel fills it for the id it was given.
	Precisions Precisions
}

// LinearParams is the parameter count of the transformer blocks' GEMMs (the part a quantized
// checkpoint stores in FP8/FP4): per layer q (hidden × heads·head_dim), k and v (hidden ×
// kv_heads·head_dim each), o (heads·head_dim × hidden) and the SwiGLU MLP (3 × hidden ×
// intermediate).
func (m ModelSpec) LinearParams() float64 {
	h, q, kv, i := float64(m.Hidden), float64(m.Heads*m.HeadDim), float64(m.KVHeads*m.HeadDim), float64(m.Intermediate)
	return float64(m.Layers) * (h*q + 2*h*kv + q*h + 3*h*i)
}

// HeadParams is the lm_head's parameter count, hidden × vocab (kept in BF16 by FP8 and NVFP4
// checkpoints).
func (m ModelSpec) HeadParams() float64 { return float64(m.Hidden) * float64(m.Vocab) }

// WeightBytes is the memory the weights take in bytes when the GEMM weights are stored as p and
// everything else (embeddings, lm_head, norms: Params − LinearParams) in BF16.
func (m ModelSpec) WeightBytes(p Precision) float64 {
	lin := m.LinearParams()
	return lin*p.WeightBytes() + max(m.Params-lin, 0)*2
}

// KVBytesPerToken is the BF16 KV cache size of one token over all layers before tensor-parallel
// sharding: layers × 2 (K and V) × KV heads × head dim × 2 bytes (engine-internals.md §2.3).
func (m ModelSpec) KVBytesPerToken() int64 { return m.KVBytesPerTokenAs(BF16) }

// KVBytesPerTokenAs is KVBytesPerToken for a KV cache stored as p:
// layers × 2 × KV heads × head dim × p.KVBytes().
func (m ModelSpec) KVBytesPerTokenAs(p Precision) int64 {
	return int64(m.Layers) * 2 * int64(m.KVHeads) * int64(m.HeadDim) * p.KVBytes()
}

// KVBytesPerTokenPerGPU is the KV cache one GPU of a tensor × pipeline group holds per token:
// its pipeline stage's ceil(layers / pipeline) layers × 2 × its ceil(KV heads / tensor) KV
// heads (KV heads are replicated when tensor > KV heads, as vLLM does) × head dim × element
// bytes.
func (m ModelSpec) KVBytesPerTokenPerGPU(p Precision, tensor, pipeline int) int64 {
	tensor, pipeline = max(tensor, 1), max(pipeline, 1)
	layers := (m.Layers + pipeline - 1) / pipeline
	heads := (m.KVHeads + tensor - 1) / tensor
	return int64(layers) * 2 * int64(heads) * int64(m.HeadDim) * p.KVBytes()
}

// catalogEntry is a built-in model with the other names it goes by (folded by modelKey).
type catalogEntry struct {
	spec    ModelSpec
	aliases []string
}

// modelCatalog returns the built-in models; figures from each model's published config.json
// (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size, max_position_embeddings) and the parameter count on its model
// card.
func modelCatalog() []catalogEntry {
	return []catalogEntry{
		{ModelSpec{ID: "meta-llama/Llama-3.1-8B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 128256, MaxContext: 131072, Params: 8.03e9}, nil},
		{ModelSpec{ID: "meta-llama/Llama-3.1-70B", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, MaxContext: 131072, Params: 70.6e9}, nil},
		{ModelSpec{ID: "meta-llama/Llama-3.1-405B", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128, Intermediate: 53248, Vocab: 128256, MaxContext: 131072, Params: 405.9e9}, nil},
		{ModelSpec{ID: "meta-llama/Llama-3.3-70B-Instruct", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, MaxContext: 131072, Params: 70.6e9}, nil},
		{ModelSpec{ID: "Qwen/Qwen3-8B", Layers: 36, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 12288, Vocab: 151936, MaxContext: 40960, Params: 8.19e9}, nil},
		{ModelSpec{ID: "Qwen/Qwen3-14B", Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 17408, Vocab: 151936, MaxContext: 40960, Params: 14.8e9}, nil},
		{ModelSpec{ID: "Qwen/Qwen3-32B", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 25600, Vocab: 151936, MaxContext: 40960, Params: 32.8e9}, nil},
		{ModelSpec{ID: "mistralai/Mistral-7B-Instruct-v0.3", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 32768, MaxContext: 32768, Params: 7.25e9},
			[]string{"mistralai/Mistral-7B"}},
	}
}

// modelKey folds the spellings of one model to one key: organisation dropped, lower case,
// "meta-" prefix and "-instruct" removed, quantization suffixes ("-fp8", "-fp8-dynamic",
// "-nvfp4", "-fp4") removed, so meta-llama/Meta-Llama-3.1-8B-Instruct and
// nvidia/Llama-3.1-8B-Instruct-FP8 both name llama-3.1-8b.
func modelKey(id string) string {
	k := strings.ToLower(strings.TrimSpace(id))
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	k = strings.TrimPrefix(k, "meta-")
	k = strings.ReplaceAll(k, "-instruct", "")
	for _, suf := range []string{"-fp8-dynamic", "-fp8", "-nvfp4", "-fp4"} {
		k = strings.TrimSuffix(k, suf)
	}
	return k
}

// LookupModel finds a built-in model by any of its common ids (see modelKey) and sets its
// Precisions from id (DefaultPrecisions). The error lists the known models.
func LookupModel(id string) (ModelSpec, error) {
	key := modelKey(id)
	for _, e := range modelCatalog() {
		match := modelKey(e.spec.ID) == key
		for _, a := range e.aliases {
			match = match || modelKey(a) == key
		}
		if match {
			m := e.spec
			m.Precisions = DefaultPrecisions(id)
			return m, nil
		}
	}
	return ModelSpec{}, fmt.Errorf("unknown model %q; known models: %s (or a local directory holding a Hugging Face config.json)",
		id, strings.Join(ModelIDs(), ", "))
}

// ResolveModelID returns the catalog id that id resolves to when id is one of a catalog entry's
// declared aliases (another name, such as "mistralai/Mistral-7B" for
// "mistralai/Mistral-7B-Instruct-v0.3", compared as modelKey folds them), with wasAlias true.
// Any other id comes back unchanged with wasAlias false: a catalog id or one of its spellings
// (the checkpoint name is kept, as it also implies the precision), an existing model directory,
// or a name the catalog does not know (LookupModel reports it). Entries are tried in catalog
// order, as LookupModel does.
func ResolveModelID(id string) (resolved string, wasAlias bool) {
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return id, false
	}
	key := modelKey(id)
	for _, e := range modelCatalog() {
		if modelKey(e.spec.ID) == key {
			return id, false
		}
		for _, a := range e.aliases {
			if modelKey(a) == key {
				return e.spec.ID, true
			}
		}
	}
	return id, false
}

// ModelIDs lists the catalog's canonical model ids, sorted.
func ModelIDs() []string {
	cat := modelCatalog()
	ids := make([]string, len(cat))
	for i, e := range cat {
		ids[i] = e.spec.ID
	}
	sort.Strings(ids)
	return ids
}

// ResolveModel returns the model engine.model names: when id is an existing directory, the
// architecture in its config.json (LoadModelDir); otherwise the catalog entry (LookupModel).
func ResolveModel(id string) (ModelSpec, error) {
	if st, err := os.Stat(id); err == nil && st.IsDir() {
		return LoadModelDir(id)
	}
	return LookupModel(id)
}

// hfConfig is the subset of a Hugging Face config.json servesweep reads.
type hfConfig struct {
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	HiddenSize            *int            `json:"hidden_size"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	IntermediateSize      *int            `json:"intermediate_size"`
	VocabSize             *int            `json:"vocab_size"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`
	NumExperts            int             `json:"num_experts"`
	NumLocalExperts       int             `json:"num_local_experts"`
	NRoutedExperts        int             `json:"n_routed_experts"`
	TextConfig            *hfConfig       `json:"text_config"`
	QuantizationConfig    json.RawMessage `json:"quantization_config"`
}

// hfQuant is the subset of a quantization_config servesweep reads.
type hfQuant struct {
	QuantMethod      string          `json:"quant_method"`
	QuantAlgo        string          `json:"quant_algo"`
	KVCacheQuantAlgo string          `json:"kv_cache_quant_algo"`
	KVCacheScheme    json.RawMessage `json:"kv_cache_scheme"`
	ConfigGroups     map[string]struct {
		Weights *struct {
			NumBits int    `json:"num_bits"`
			Type    string `json:"type"`
		} `json:"weights"`
	} `json:"config_groups"`
}

// LoadModelDir reads dir/config.json (a Hugging Face model directory) into a ModelSpec. A
// multimodal config's text_config is used when present. Params is computed from the
// architecture: embeddings (vocab × hidden), lm_head (the same, unless tie_word_embeddings),
// LinearParams and two RMSNorm vectors per layer plus the final norm. Precisions come from
// quantization_config: quant_method fp8 → FP8 weights; modelopt quant_algo FP8/NVFP4 → FP8/FP4
// weights, kv_cache_quant_algo FP8 → FP8 KV; compressed-tensors 8-bit / 4-bit float weights →
// FP8/FP4, a kv_cache_scheme → FP8 KV; no quantization_config → BF16. Errors name the file and
// the field: an unreadable or malformed file, a missing or non-positive field, a
// mixture-of-experts model (not modeled), an unrecognized quantization method.
func LoadModelDir(dir string) (ModelSpec, error) {
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ModelSpec{}, fmt.Errorf("%s: model directory has no config.json (a Hugging Face model directory is expected)", dir)
		}
		return ModelSpec{}, fmt.Errorf("%s: %v", path, err)
	}
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return ModelSpec{}, fmt.Errorf("%s: invalid config.json: %v", path, err)
	}
	quant := c.QuantizationConfig
	if c.TextConfig != nil {
		tc := *c.TextConfig
		if len(tc.QuantizationConfig) == 0 {
			tc.QuantizationConfig = quant
		}
		c = tc
		quant = c.QuantizationConfig
	}
	if n := max(c.NumExperts, c.NumLocalExperts, c.NRoutedExperts); n > 0 {
		return ModelSpec{}, fmt.Errorf("%s: a mixture-of-experts model (%d experts) is not modeled; servesweep's timing and capacity cover dense models", path, n)
	}
	get := func(field string, v *int, def int) (int, error) {
		switch {
		case v == nil && def > 0:
			return def, nil
		case v == nil:
			return 0, fmt.Errorf("%s: %s is required (a positive int)", path, field)
		case *v <= 0:
			return 0, fmt.Errorf("%s: %s must be > 0, got %d", path, field, *v)
		}
		return *v, nil
	}
	m := ModelSpec{ID: dir}
	var errs []error
	set := func(dst *int, field string, v *int, def int) {
		x, err := get(field, v, def)
		if err != nil {
			errs = append(errs, err)
		}
		*dst = x
	}
	set(&m.Layers, "num_hidden_layers", c.NumHiddenLayers, 0)
	set(&m.Hidden, "hidden_size", c.HiddenSize, 0)
	set(&m.Heads, "num_attention_heads", c.NumAttentionHeads, 0)
	set(&m.KVHeads, "num_key_value_heads", c.NumKeyValueHeads, m.Heads)
	hd := 0
	if m.Heads > 0 {
		hd = m.Hidden / m.Heads
	}
	set(&m.HeadDim, "head_dim", c.HeadDim, hd)
	set(&m.Intermediate, "intermediate_size", c.IntermediateSize, 0)
	set(&m.Vocab, "vocab_size", c.VocabSize, 0)
	set(&m.MaxContext, "max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if len(errs) > 0 {
		return ModelSpec{}, errors.Join(errs...)
	}
	if m.Heads%m.KVHeads != 0 {
		return ModelSpec{}, fmt.Errorf("%s: num_attention_heads (%d) must be a multiple of num_key_value_heads (%d)", path, m.Heads, m.KVHeads)
	}
	embed := float64(m.Vocab) * float64(m.Hidden)
	m.Params = embed + m.LinearParams() + float64(2*m.Layers+1)*float64(m.Hidden)
	if !c.TieWordEmbeddings {
		m.Params += embed
	}
	m.Precisions, err = checkpointPrecisions(quant)
	if err != nil {
		return ModelSpec{}, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// checkpointPrecisions maps a config.json quantization_config to precisions (see LoadModelDir).
func checkpointPrecisions(raw json.RawMessage) (Precisions, error) {
	p := Precisions{Weights: BF16, KVCache: BF16}
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	var q hfQuant
	if err := json.Unmarshal(raw, &q); err != nil {
		return p, fmt.Errorf("quantization_config: %v", err)
	}
	if strings.EqualFold(q.KVCacheQuantAlgo, "fp8") || (len(q.KVCacheScheme) > 0 && string(q.KVCacheScheme) != "null") {
		p.KVCache = FP8
	}
	method := strings.ToLower(q.QuantMethod)
	switch method {
	case "fp8", "fbgemm_fp8":
		p.Weights = FP8
		return p, nil
	case "modelopt":
		algo := strings.ToLower(q.QuantAlgo)
		switch {
		case strings.Contains(algo, "fp4"):
			p.Weights = FP4
			return p, nil
		case strings.Contains(algo, "fp8"):
			p.Weights = FP8
			return p, nil
		}
		return p, fmt.Errorf("quantization_config.quant_algo %q is not modeled; valid: FP8, NVFP4", q.QuantAlgo)
	case "compressed-tensors":
		for _, g := range q.ConfigGroups {
			if g.Weights == nil {
				continue
			}
			switch {
			case g.Weights.NumBits == 8 && g.Weights.Type == "float":
				p.Weights = FP8
				return p, nil
			case g.Weights.NumBits == 4 && g.Weights.Type == "float":
				p.Weights = FP4
				return p, nil
			}
		}
		return p, errors.New("quantization_config: compressed-tensors weights are neither 8-bit nor 4-bit float; not modeled")
	}
	return p, fmt.Errorf("quantization_config.quant_method %q is not modeled; valid: fp8, modelopt (FP8, NVFP4), compressed-tensors", q.QuantMethod)
}

// CheckShape reports why model m cannot be split into shape s: a tensor degree that does not
// divide its attention heads (every tensor-parallel engine splits the heads evenly), or more
// pipeline stages than layers. The error names the field ("tensor" or "pipeline") first.
func (m ModelSpec) CheckShape(s Shape) error {
	if s.Tensor > 0 && m.Heads%s.Tensor != 0 {
		var valid []string
		for t := 1; t <= m.Heads; t++ {
			if m.Heads%t == 0 {
				valid = append(valid, fmt.Sprint(t))
			}
		}
		return fmt.Errorf("tensor %d does not divide %s's %d attention heads; valid: %s", s.Tensor, m.ID, m.Heads, strings.Join(valid, ", "))
	}
	if s.Pipeline > m.Layers {
		return fmt.Errorf("pipeline %d exceeds %s's %d layers", s.Pipeline, m.ID, m.Layers)
	}
	return nil
}
