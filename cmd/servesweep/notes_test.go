package main

import (
	"context"
	"strings"
	"testing"
)

// A sweep of Llama-3.1-70B at TP 2, 4 and 8 on H100 and H200 with the seed's fixed pool of 32,768
// blocks of 64 tokens: five deployments cannot hold it (H200 at TP 8 can), and stderr says so in
// one line rather than five. The pool needs 32,768 × 64 tokens × KV bytes per token and GPU, the
// latter 80 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes / TP: 327,680 / TP bytes, so 320.0 GiB
// at TP 2 and 80.0 GiB at TP 8. This reads the notes sim writes, so it fails if their wording
// drifts from poolNote.
func TestAggregateNotesReadsSimsNote(t *testing.T) {
	var out, errb strings.Builder
	code := run(context.Background(), []string{"sweep", "-c", seedConfig, "--dry-run",
		"--set", "engine.model=meta-llama/Llama-3.1-70B", "--set", "engine.workers.aggregated.parallelism.replicas=1",
		"--set", "engine.workers.aggregated.parallelism.tensor={choices: [2, 4, 8]}",
		"--set", "engine.hardware={choices: [h100_sxm, h200_sxm]}",
		"--set", "engine.workers.aggregated.timing={type: default}"}, ioStreams{Out: &out, Err: &errb})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "servesweep: engine.workers.aggregated.kv_cache.capacity.blocks: 32768 blocks of 64 tokens are more than the GPU could " +
		"hold in 5 deployments (h100_sxm, h200_sxm): they need 80.0 to 320.0 GiB of KV cache per GPU, and at most "
	if strings.Count(errb.String(), "kv_cache.capacity.blocks") != 1 || !strings.Contains(errb.String(), want) {
		t.Errorf("stderr:\n%s\nwant one line starting %q", errb.String(), want)
	}
}

// A single note, and notes of another kind, pass unchanged.
func TestAggregateNotesPassesOthers(t *testing.T) {
	one := "engine.workers.decode.kv_cache.capacity.blocks: 100 blocks of 16 tokens need 9.0 GiB of KV cache per GPU (1 bytes a token), " +
		"but l40s has 1.0 GiB beside 40.0 GiB of weights and 0.5 GiB of a pass's activations (max_batched_tokens' and max_sequences' sampler logits): this GPU could not hold the pool; at most 11 blocks fit, " +
		"or use capacity {type: default} to derive the pool from the memory"
	notes := []string{"another note", one}
	got := aggregateNotes(notes)
	if len(got) != 2 || got[0] != notes[0] || got[1] != one {
		t.Errorf("got %q", got)
	}
}
