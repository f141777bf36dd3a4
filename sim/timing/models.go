package timing

import (
	"fmt"
	"sort"
	"strings"
)

// ModelSpec is the public architecture of a dense decoder-only model, as in its Hugging Face
// config.json.
type ModelSpec struct {
	// ID is the canonical catalog id.
	ID string
	// Layers (num_hidden_layers), Hidden (hidden_size), Heads (num_attention_heads),
	// KVHeads (num_key_value_heads), HeadDim (head_dim, or hidden/heads), Intermediate
	// (intermediate_size of the MLP), Vocab (vocab_size).
	Layers, Hidden, Heads, KVHeads, HeadDim, Intermediate, Vocab int
	// MaxContext is max_position_embeddings in tokens.
	MaxContext int
	// Params is the total parameter count.
	Params float64
}

// KVBytesPerToken is the BF16 KV cache size of one token over all layers before tensor-parallel
// sharding: layers × 2 (K and V) × KV heads × head dim × 2 bytes (engine-internals.md §2.3).
func (m ModelSpec) KVBytesPerToken() int64 {
	return int64(m.Layers) * 2 * int64(m.KVHeads) * int64(m.HeadDim) * 2
}

// models is the built-in catalog; figures from each model's published config.json and model card.
var models = []ModelSpec{
	{ID: "meta-llama/Llama-3.1-8B", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 128256, MaxContext: 131072, Params: 8.03e9},
	{ID: "meta-llama/Llama-3.1-70B", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, MaxContext: 131072, Params: 70.6e9},
	{ID: "meta-llama/Llama-3.1-405B", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128, Intermediate: 53248, Vocab: 128256, MaxContext: 131072, Params: 405.9e9},
	{ID: "meta-llama/Llama-3.3-70B-Instruct", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 28672, Vocab: 128256, MaxContext: 131072, Params: 70.6e9},
	{ID: "Qwen/Qwen3-8B", Layers: 36, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 12288, Vocab: 151936, MaxContext: 40960, Params: 8.19e9},
	{ID: "Qwen/Qwen3-14B", Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128, Intermediate: 17408, Vocab: 151936, MaxContext: 40960, Params: 14.8e9},
	{ID: "Qwen/Qwen3-32B", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128, Intermediate: 25600, Vocab: 151936, MaxContext: 40960, Params: 32.8e9},
	{ID: "mistralai/Mistral-7B-Instruct-v0.3", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Intermediate: 14336, Vocab: 32768, MaxContext: 32768, Params: 7.25e9},
}

// modelKey folds the spellings of one model to one key: organisation dropped, lower case,
// "meta-" prefix and "-instruct", "-fp8", "-nvfp4" suffixes removed, so
// meta-llama/Meta-Llama-3.1-8B-Instruct and nvidia/Llama-3.1-8B-Instruct-FP8 both name llama-3.1-8b.
func modelKey(id string) string {
	k := strings.ToLower(id)
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	k = strings.TrimPrefix(k, "meta-")
	for _, suf := range []string{"-fp8", "-nvfp4", "-fp4", "-instruct"} {
		k = strings.TrimSuffix(k, suf)
	}
	return k
}

// LookupModel finds a model by any of its common ids. The error lists the known models.
func LookupModel(id string) (ModelSpec, error) {
	key := modelKey(id)
	for _, m := range models {
		if modelKey(m.ID) == key {
			return m, nil
		}
	}
	known := make([]string, len(models))
	for i, m := range models {
		known[i] = m.ID
	}
	sort.Strings(known)
	return ModelSpec{}, fmt.Errorf("unknown model %q; known models: %s", id, strings.Join(known, ", "))
}
