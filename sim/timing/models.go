package timing

import (
	"fmt"
	"sort"
	"strings"
)

// ModelSpec is the public architecture of a model, as in its Hugging Face config.json.
type ModelSpec struct {
	// ID is the canonical catalog id.
	ID string
	// MaxContext is max_position_embeddings in tokens.
	MaxContext int
}

// models is the built-in catalog; figures from each model's published config.json.
var models = []ModelSpec{
	{ID: "meta-llama/Llama-3.1-8B", MaxContext: 131072},
	{ID: "meta-llama/Llama-3.1-70B", MaxContext: 131072},
	{ID: "meta-llama/Llama-3.1-405B", MaxContext: 131072},
	{ID: "meta-llama/Llama-3.3-70B-Instruct", MaxContext: 131072},
	{ID: "Qwen/Qwen3-8B", MaxContext: 40960},
	{ID: "Qwen/Qwen3-14B", MaxContext: 40960},
	{ID: "Qwen/Qwen3-32B", MaxContext: 40960},
	{ID: "mistralai/Mistral-7B-Instruct-v0.3", MaxContext: 32768},
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
