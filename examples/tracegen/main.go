// Command tracegen writes examples/chat-trace.jsonl, the small Mooncake-format trace the README's
// commands and the example configs replay: multi-turn chat conversations whose later turns carry
// the whole earlier conversation as a shared prefix. It draws from one fixed seed with
// math/rand/v2's PCG, so the same program writes the same bytes on every platform; a test
// regenerates the file and compares it byte for byte.
//
// Run from the examples folder (go generate ./examples does it):
//
//	go run ./tracegen -o chat-trace.jsonl
//
// The model, with its parameters (the constants below):
//
//   - Conversations: 90, starting as a Poisson process of 0.5 conversations per second (3 minutes
//     of starts). Each has 1 + Geometric turns: after every turn another follows with probability
//     0.7 (mean 3.3 turns), at most 10.
//   - A conversation opens with one of 4 system prompts of 2, 3, 4 and 6 blocks of 512 tokens, or
//     with none (weights 0.35, 0.25, 0.12, 0.08; none 0.2). A system prompt's hash ids are the
//     same in every conversation that uses it, so conversations share a prefix across the trace.
//   - The first user message is log-normal with median 500 tokens and σ 1.5 (clipped to
//     [8, 24,000]); each later user message log-normal with median 150 tokens and σ 1.0 (clipped
//     to [4, 8,000]).
//   - Each answer (output_length) is log-normal with median 220 tokens and σ 0.7, clipped to
//     [8, 1,024].
//   - Turn k+1's prompt is turn k's prompt, turn k's answer and the new user message, so
//     input_length grows by output_length(k) + message; its hash_ids are turn k's hash_ids
//     followed by fresh ids for the blocks the prompt grew into (ceil(input_length / 512) ids in
//     all; turn k's last, partial block keeps its id, as its tokens stay a prefix). A conversation
//     ends before a turn whose prompt would pass 32,768 tokens.
//   - The think time between turns (turn k+1's timestamp minus turn k's) is log-normal with median
//     8 s and σ 0.8, clipped to [1 s, 60 s]. Rows carry session_id, so a replay sends turn k+1
//     that long after turn k completes (docs/traces.md).
//
// Rows are ordered by timestamp (integer ms from 0), then conversation and turn; hash ids are
// numbered from 0 in the order they first appear in generation.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
)

// Parameters of the generated trace (see the package comment).
const (
	// seed1 and seed2 seed the PCG generator that every draw comes from.
	seed1, seed2 = 2026, 45
	// BlockSize is the trace's hash block size, in tokens per hash id.
	BlockSize = 512
	// conversations is how many conversations the trace holds.
	conversations = 90
	// startsPerSecond is the Poisson rate of conversation starts.
	startsPerSecond = 0.5
	// continueProb is the chance that another turn follows a turn; maxTurns bounds the turns.
	continueProb = 0.7
	maxTurns     = 10
	// maxPromptTokens bounds a prompt: a conversation ends before a longer one.
	maxPromptTokens = 32768
)

// systemPromptBlocks are the system prompts' lengths in blocks (0: none); systemPromptWeights
// their weights.
var (
	systemPromptBlocks  = []int{0, 2, 3, 4, 6}
	systemPromptWeights = []float64{0.2, 0.35, 0.25, 0.12, 0.08}
)

// logNormal is a log-normal length: median Median (in tokens or ms), shape Sigma, clipped to
// [Min, Max].
type logNormal struct {
	Median, Sigma float64
	Min, Max      int
}

// draw returns a rounded, clipped draw.
func (d logNormal) draw(r *rand.Rand) int {
	x := d.Median * math.Exp(d.Sigma*r.NormFloat64())
	return min(max(int(math.Round(x)), d.Min), d.Max)
}

var (
	firstMessage = logNormal{Median: 500, Sigma: 1.5, Min: 8, Max: 24000}
	laterMessage = logNormal{Median: 150, Sigma: 1.0, Min: 4, Max: 8000}
	answer       = logNormal{Median: 220, Sigma: 0.7, Min: 8, Max: 1024}
	thinkMs      = logNormal{Median: 8000, Sigma: 0.8, Min: 1000, Max: 60000}
)

// Row is one request of the trace, a turn of a conversation, in the Mooncake row keys.
type Row struct {
	// TimestampMs is the turn's arrival, in ms from the first conversation's start.
	TimestampMs int64
	// Conversation and Turn number the row (from 0); session_id is "c" and the conversation.
	Conversation, Turn int
	// InputLength and OutputLength are the prompt and answer, in tokens.
	InputLength, OutputLength int
	// HashIDs name the prompt's blocks of BlockSize tokens, the last one possibly partial.
	HashIDs []int
}

// Generate returns the trace's rows in file order.
func Generate() []Row {
	r := rand.New(rand.NewPCG(seed1, seed2))
	next := 0 // the next unused hash id
	var systems [][]int
	for _, n := range systemPromptBlocks {
		ids := make([]int, n)
		for i := range ids {
			ids[i], next = next, next+1
		}
		systems = append(systems, ids)
	}
	var rows []Row
	startMs := 0.0
	for c := range conversations {
		if c > 0 {
			startMs += r.ExpFloat64() / startsPerSecond * 1000
		}
		turns := 1
		for turns < maxTurns && r.Float64() < continueProb {
			turns++
		}
		system := systems[pick(r, systemPromptWeights)]
		ids := slices.Clone(system)
		prompt := len(system) * BlockSize
		t := int64(math.Round(startMs))
		for k := range turns {
			msg := laterMessage
			if k == 0 {
				msg = firstMessage
			}
			grown := prompt + msg.draw(r)
			if k > 0 {
				grown += rows[len(rows)-1].OutputLength
				t += int64(thinkMs.draw(r))
			}
			out := answer.draw(r)
			if grown > maxPromptTokens {
				break
			}
			prompt = grown
			for len(ids)*BlockSize < prompt {
				ids, next = append(ids, next), next+1
			}
			rows = append(rows, Row{TimestampMs: t, Conversation: c, Turn: k, InputLength: prompt,
				OutputLength: out, HashIDs: slices.Clone(ids)})
		}
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.TimestampMs, b.TimestampMs), cmp.Compare(a.Conversation, b.Conversation),
			cmp.Compare(a.Turn, b.Turn))
	})
	return rows
}

// pick returns index i with probability weights[i] / Σ weights.
func pick(r *rand.Rand, weights []float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	x := r.Float64() * total
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// Write writes rows as Mooncake JSON Lines: timestamp (ms), session_id, input_length,
// output_length and hash_ids, in that key order.
func Write(w io.Writer, rows []Row) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, row := range rows {
		b = append(b[:0], `{"timestamp": `...)
		b = strconv.AppendInt(b, row.TimestampMs, 10)
		b = fmt.Appendf(b, `, "session_id": "c%02d", "input_length": %d, "output_length": %d, "hash_ids": [`,
			row.Conversation, row.InputLength, row.OutputLength)
		for i, id := range row.HashIDs {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		b = append(b, "]}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func main() {
	out := flag.String("o", "", "the file to write (default: standard output)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "tracegen: unexpected argument %q; usage: tracegen [-o FILE]\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "tracegen:", err)
		os.Exit(1)
	}
}

// run writes the trace to the file out, or to standard output when out is "".
func run(out string) error {
	if out == "" {
		return Write(os.Stdout, Generate())
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := Write(f, Generate()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
