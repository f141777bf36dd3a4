package export

import (
	"fmt"
	"slices"

	"github.com/servesweep/servesweep/sim/config"
)

// Refusal is a setting of a worker role that its engine refuses at startup.
type Refusal struct {
	// Path is the field's dotted YAML path, e.g. engine.workers.decode.kv_cache.block_size.
	Path string
	// Value is the field's value as the config holds it (an int today).
	Value any
	// What says what the engine refuses and what it accepts, e.g. "vLLM's --block-size takes one
	// of [8 16 32 64 128]".
	What string
	// Also are the other fields whose values decide the refusal (max_sequences beside
	// max_batched_tokens): a message names the --set that gave one of them when none gave Path.
	Also []string
}

// StartupRefusals returns the settings of cfg's worker roles that engine.backend's engine
// refuses at startup: vLLM's --max-num-batched-tokens below --max-num-seqs
// (scheduler.max_batched_tokens below max_sequences) and a --block-size outside vllmBlockSizes;
// TensorRT-LLM's tokens_per_block (kv_cache.block_size) other than a power of 2. The simulation
// runs such a config, no engine would: export refuses it (for the engine's own target and for
// dynamo) and predict warns. nil when there is none. cfg must be decoded and validated.
func StartupRefusals(cfg *config.Config) []Refusal {
	var out []Refusal
	for _, name := range cfg.Engine.Mode.Roles() {
		if w := cfg.Engine.Workers.Role(name); w != nil {
			out = append(out, roleRefusals(cfg.Engine.Backend, "engine.workers."+string(name), w)...)
		}
	}
	return out
}

// roleRefusals is StartupRefusals for one worker role w at path under backend.
func roleRefusals(backend, path string, w *config.WorkerRole) []Refusal {
	var out []Refusal
	switch backend {
	case TargetVLLM:
		if sc := w.Scheduler; sc.MaxBatchedTokens < sc.MaxSequences {
			// vLLM's scheduler config refuses max_num_batched_tokens < max_num_seqs at startup.
			out = append(out, Refusal{Path: path + ".scheduler.max_batched_tokens", Value: sc.MaxBatchedTokens, What: fmt.Sprintf("vLLM refuses "+
				"--max-num-batched-tokens below --max-num-seqs (scheduler.max_sequences %d) at startup; raise it to at least %d, "+
				"or lower max_sequences", sc.MaxSequences, sc.MaxSequences), Also: []string{path + ".scheduler.max_sequences"}})
		}
		if !slices.Contains(vllmBlockSizes, w.KVCache.BlockSize) {
			out = append(out, Refusal{Path: path + ".kv_cache.block_size", Value: w.KVCache.BlockSize, What: fmt.Sprintf("vLLM's --block-size takes one of %v", vllmBlockSizes)})
		}
	case TargetTRTLLM:
		if !isPow2(w.KVCache.BlockSize) {
			out = append(out, Refusal{Path: path + ".kv_cache.block_size", Value: w.KVCache.BlockSize, What: "TensorRT-LLM's tokens_per_block must be a power of 2"})
		}
	}
	return out
}

// refuse records r's refusals of one role as export failures.
func (x *exporter) refuse(r roleRef) {
	for _, f := range roleRefusals(x.backend, r.path, r.w) {
		x.unsupported(f.Path, f.Value, f.What)
	}
}
