package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/spf13/cobra"
)

// The values of --format. With json a command prints exactly one JSON document on stdout once it
// has succeeded, and nothing on stdout when it fails (the error goes to stderr, the exit code is
// the table format's); progress and warnings go to stderr.
const (
	formatTable = "table"
	formatJSON  = "json"
)

// addFormatFlag registers --format table|json on cmd with its completion; table describes what
// the table format prints.
func addFormatFlag(cmd *cobra.Command, p *string, table string) {
	cmd.Flags().StringVar(p, "format", formatTable, "stdout format: table or json")
	mustComplete(cmd, "format", fixed(formatTable+"\t"+table, formatJSON+"\tone JSON object"))
}

// checkFormat refuses (exit 2) a --format other than table or json.
func checkFormat(format string) error {
	if format != formatTable && format != formatJSON {
		return &usageError{fmt.Errorf("--format must be table or json, got %q", format)}
	}
	return nil
}

// indentJSON returns v as indented JSON (two spaces) with a final newline, the form of the JSON
// files the commands write.
func indentJSON(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// reportJSON is v as indentJSON, also written atomically to path when path is not empty (a
// command's --output-json): the bytes --format json prints are the file's.
func reportJSON(v any, path string) ([]byte, error) {
	data, err := indentJSON(v)
	if err != nil || path == "" {
		return data, err
	}
	return data, results.WriteFileAtomic(path, data)
}

// printJSON writes v to w as one indented JSON document (indentJSON).
func printJSON(w io.Writer, v any) error {
	data, err := indentJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// The JSON documents of --format json. Fields are declared in the order of their keys, so that
// every object of a document lists its keys sorted, as the maps do; the documents they embed
// (pareto.json, sweep.json's counts and settings) keep the order of their files.

// reportFilesDoc lists the files of a report, as the paths written.
type reportFilesDoc struct {
	// Exports are the launch and benchmark files of --export, recommendations/NNNN/* (omitted
	// without it).
	Exports []string `json:"exports,omitempty"`
	// HTML is report.html.
	HTML            string   `json:"html"`
	Pareto          string   `json:"pareto"`
	Plot            string   `json:"plot"`
	Recommendations []string `json:"recommendations"`
	Report          string   `json:"report"`
	// Ties is pareto_ties.parquet, when the front has ties.
	Ties string `json:"ties,omitempty"`
}

// newReportFiles returns the paths of w, with an empty list (not null) of recommendations.
func newReportFiles(w *results.Written) reportFilesDoc {
	return reportFilesDoc{Exports: w.Exports, HTML: w.HTML, Pareto: w.Pareto, Plot: w.Plot, Recommendations: append([]string{}, w.Recommendations...),
		Report: w.Report, Ties: w.Ties}
}

// reportDoc is `servesweep report --format json`: pareto.json's document, and the files written.
type reportDoc struct {
	Files  reportFilesDoc  `json:"files"`
	Pareto json.RawMessage `json:"pareto"`
}

// sweepFilesDoc lists the files a sweep wrote: its journal, results.parquet, sweep.json, the
// report's files, and probes.parquet under a capacity search (omitted otherwise).
type sweepFilesDoc struct {
	// Exports are the launch and benchmark files of --export, recommendations/NNNN/* (omitted
	// without it).
	Exports []string `json:"exports,omitempty"`
	// HTML is report.html.
	HTML            string   `json:"html"`
	Journal         string   `json:"journal"`
	Manifest        string   `json:"manifest"`
	Pareto          string   `json:"pareto"`
	Plot            string   `json:"plot"`
	Probes          string   `json:"probes,omitempty"`
	Recommendations []string `json:"recommendations"`
	Report          string   `json:"report"`
	Results         string   `json:"results"`
	// Ties is pareto_ties.parquet, when the front has ties.
	Ties string `json:"ties,omitempty"`
}

// sweepDoc is `servesweep sweep --format json`: sweep.json's counts and settings, pareto.json's
// document and the files written.
type sweepDoc struct {
	Counts   results.Counts        `json:"counts"`
	Files    sweepFilesDoc         `json:"files"`
	Pareto   json.RawMessage       `json:"pareto"`
	Settings optimization.Settings `json:"settings"`
}

// shardDoc describes the shard a sharded sweep ran (or would run, with --dry-run).
type shardDoc struct {
	// Count and Index are the shard count and the 0-based shard index.
	Count int `json:"count"`
	Index int `json:"index"`
	// Points is how many of the selected points belong to the shard.
	Points int `json:"points"`
	// Source names the flags or environment variables that gave the shard.
	Source string `json:"source"`
	// SpecHash identifies the sweep's selected points; every shard of a sweep has the same.
	SpecHash string `json:"spec_hash"`
}

// shardFilesDoc lists the files a shard wrote (Probes only under a capacity search).
type shardFilesDoc struct {
	Journal string `json:"journal"`
	Part    string `json:"part"`
	Probes  string `json:"probes,omitempty"`
}

// shardSweepDoc is `servesweep sweep --shard I/N --format json`: the counts (the grid's, and
// this shard's run), the settings, the shard and the files written. A shard writes no report:
// servesweep merge does.
type shardSweepDoc struct {
	Counts   results.Counts        `json:"counts"`
	Files    shardFilesDoc         `json:"files"`
	Settings optimization.Settings `json:"settings"`
	Shard    shardDoc              `json:"shard"`
}

// domainDoc is one search domain of a dry run: the field path and its values as YAML text.
type domainDoc struct {
	Path   string   `json:"path"`
	Values []string `json:"values"`
}

// pointDoc is one point of a dry run, as its table line shows it.
type pointDoc struct {
	GPUs       int    `json:"gpus"`
	Label      string `json:"label"`
	PointID    string `json:"point_id"`
	PointIndex int    `json:"point_index"`
}

// dryRunDoc is `servesweep sweep --dry-run --format json`: the grid's counts, the points
// filtered out by reason, the selected points that simulate as an earlier one (twins; omitted
// when none), the domains and the first --show points (of the shard, with one).
type dryRunDoc struct {
	Domains          []domainDoc    `json:"domains"`
	EquivalentPoints int            `json:"equivalent_points,omitempty"`
	Filtered         map[string]int `json:"filtered"`
	GridPoints       int            `json:"grid_points"`
	Points           []pointDoc     `json:"points"`
	SelectedPoints   int            `json:"selected_points"`
	Shard            *shardDoc      `json:"shard,omitempty"`
	ValidPoints      int            `json:"valid_points"`
}
