package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// poolNote matches sim's note about a fixed KV pool the GPU could not hold (sim/deployment.go);
// TestAggregateNotesReadsSimsNote keeps the two in step.
var poolNote = regexp.MustCompile(`^(\S+): (\d+) blocks of (\d+) tokens need ([\d.]+) GiB of KV cache per GPU \(\d+ bytes a token\), ` +
	`but (\S+) has [\d.-]+ GiB beside [\d.]+ GiB of weights and [\d.]+ GiB of a pass's activations [^:]*: this GPU could not hold the pool; at most (-?\d+) blocks fit, ` +
	`or use capacity \{type: default\} to derive the pool from the memory$`)

// aggregateNotes returns the timing notes of a sweep's points for stderr, the notes about a fixed
// KV pool the GPU could not hold folded into one line per pool (field path, blocks and block
// size) when several deployments share it: the count of deployments, their GPUs, and the range
// of the KV each needs and of the blocks that would fit. Other notes pass unchanged, in order.
func aggregateNotes(notes []string) []string {
	type pool struct {
		first            string
		gpus             []string
		count            int
		needLo, needHi   float64
		fitLo, fitHi     int
		path, blocks, bs string
	}
	var out []string
	pools := map[string]*pool{}
	var order []string
	for _, n := range notes {
		m := poolNote.FindStringSubmatch(n)
		if m == nil {
			out = append(out, n)
			continue
		}
		need, _ := strconv.ParseFloat(m[4], 64)
		fit, _ := strconv.Atoi(m[6])
		key := m[1] + " " + m[2] + " " + m[3]
		p := pools[key]
		if p == nil {
			p = &pool{first: n, needLo: need, needHi: need, fitLo: fit, fitHi: fit, path: m[1], blocks: m[2], bs: m[3]}
			pools[key] = p
			order = append(order, key)
		}
		p.count++
		p.needLo, p.needHi = min(p.needLo, need), max(p.needHi, need)
		p.fitLo, p.fitHi = min(p.fitLo, fit), max(p.fitHi, fit)
		if !slices.Contains(p.gpus, m[5]) {
			p.gpus = append(p.gpus, m[5])
		}
	}
	for _, key := range order {
		p := pools[key]
		if p.count == 1 {
			out = append(out, p.first)
			continue
		}
		slices.Sort(p.gpus)
		out = append(out, fmt.Sprintf("%s: %s blocks of %s tokens are more than the GPU could hold in %d deployments (%s): "+
			"they need %.1f to %.1f GiB of KV cache per GPU, and at most %d to %d blocks fit; "+
			"use capacity {type: default} to derive the pool from the memory",
			p.path, p.blocks, p.bs, p.count, strings.Join(p.gpus, ", "), p.needLo, p.needHi, max(p.fitLo, 0), max(p.fitHi, 0)))
	}
	return out
}
