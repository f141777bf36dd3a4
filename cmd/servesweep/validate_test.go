package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/calibrate"
)

// measuredCSV is two rows in the calibration file's format: a simulable vLLM row and one with an
// unknown GPU.
const measuredCSV = `id,backend,backend_version,model_path,system,precision,gemm_quant_mode,mode,isl,osl,concurrency,batch_size,tp_size,pp_size,attention_dp_size,silicon_ttft_ms,silicon_tpot_ms
r1,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,,,agg,512,32,4,4,1,1,1,60,8
r2,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,tpu_v9,,,agg,512,32,4,4,1,1,1,60,8
`

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "measured.csv")
	if err := os.WriteFile(csvPath, []byte(measuredCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "report.json")
	code, out, errOut := runCLI(t, "validate", "--measured", csvPath, "--output-json", jsonPath)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, frag := range []string{"ttft_meas", "meta-llama/Llama-3.1-8B-Instruct", "Accuracy per (model, system, backend) group",
		"Skipped rows:", "line    3", "unknown hardware \"tpu_v9\"", "Overall: all rows: TTFT MAPE", "1 row simulated, 1 skipped", "(none)               assumed"} {
		if !strings.Contains(out, frag) {
			t.Errorf("output lacks %q:\n%s", frag, out)
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			Line            int     `json:"line"`
			PredictedTTFTMs float64 `json:"predicted_ttft_ms"`
			Skipped         bool    `json:"skipped"`
			Reason          string  `json:"reason"`
		} `json:"rows"`
		Summary struct {
			TTFTMAPEPct   *float64 `json:"ttft_mape_pct"`
			TPOTMAPEPct   *float64 `json:"tpot_mape_pct"`
			RowsSimulated *int     `json:"rows_simulated"`
			RowsSkipped   *int     `json:"rows_skipped"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Summary
	if s.TTFTMAPEPct == nil || s.TPOTMAPEPct == nil || s.RowsSimulated == nil || *s.RowsSimulated != 1 || s.RowsSkipped == nil || *s.RowsSkipped != 1 {
		t.Errorf("summary = %s", data)
	}
	if len(doc.Rows) != 2 || doc.Rows[0].Line != 2 || !(doc.Rows[0].PredictedTTFTMs > 0) || !doc.Rows[1].Skipped || doc.Rows[1].Reason == "" {
		t.Errorf("rows = %+v", doc.Rows)
	}

	// --quiet leaves out the per-row table.
	code, out, _ = runCLI(t, "validate", "--measured", csvPath, "-q")
	if code != exitOK || strings.Contains(out, "ttft_meas") || !strings.Contains(out, "Overall:") {
		t.Errorf("quiet: exit %d\n%s", code, out)
	}

	// The old --parallel still works, with a notice on stderr (not stdout), and is left out of
	// the help.
	code, out2, errOut := runCLI(t, "validate", "--measured", csvPath, "-q", "--parallel", "1")
	if code != exitOK || out2 != out || errOut != "Flag --parallel has been deprecated, use --parallelism\n" {
		t.Errorf("--parallel: exit %d, stderr %q, stdout differs from --parallelism's: %v", code, errOut, out2 != out)
	}
	_, help, _ := runCLI(t, "validate", "--help")
	if !strings.Contains(help, "--parallelism int") || strings.Contains(help, "--parallel ") {
		t.Errorf("help should list --parallelism and not --parallel:\n%s", help)
	}
}

// A disaggregated row without worker counts or batch sizes is skipped naming
// --assume-one-worker-per-role, and with it simulated as one prefill and one decode worker; the
// summary counts the rows per note, with -q too, and the JSON carries them.
func TestValidateCommandNotes(t *testing.T) {
	const csv = `id,backend,model_path,system,mode,isl,osl,concurrency,prefill_tp_size,decode_tp_size,silicon_ttft_ms,silicon_tpot_ms
d1,vllm,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,disagg,256,8,4,1,1,60,8
`
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "disagg.csv")
	if err := os.WriteFile(csvPath, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	// By default the row is skipped, naming the flag; no row simulated is exit 1.
	code, out, _ := runCLI(t, "validate", "--measured", csvPath, "-q")
	if code != exitRunFailure || !strings.Contains(out, "--assume-one-worker-per-role") {
		t.Errorf("default: exit %d\n%s", code, out)
	}
	code, out, errOut := runCLI(t, "validate", "--measured", csvPath, "-q", "--assume-one-worker-per-role")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, frag := range []string{"Simulated rows with notes", "1 × prefill_num_workers and decode_num_workers empty",
		"1 × decode_batch_size empty", "1 × prefill_batch_size empty", "1 row simulated, 0 skipped"} {
		if !strings.Contains(out, frag) {
			t.Errorf("output lacks %q:\n%s", frag, out)
		}
	}
	code, out, _ = runCLI(t, "validate", "--measured", csvPath, "--format", "json", "--assume-one-worker-per-role")
	if code != exitOK || !strings.Contains(out, `"note": "prefill_num_workers and decode_num_workers empty"`) ||
		!strings.Contains(out, `"decode_batch_size empty: concurrency 4 / (1 decode attention-DP ranks × 1 decode workers) = 4 per rank"`) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
}

func TestValidateCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		frag string
	}{
		{[]string{"validate"}, exitConfigError, "--measured is required"},
		{[]string{"validate", "--measured", "/nonexistent/m.csv"}, exitConfigError, "/nonexistent/m.csv"},
		{[]string{"validate", "extra"}, exitConfigError, "no positional arguments"},
		{[]string{"validate", "--measured", "x.csv", "--parallelism", "-1"}, exitConfigError,
			"--parallelism must be a whole number >= 1 (or 0 for the default), got -1"},
		// The deprecated --parallel sets the same value.
		{[]string{"validate", "--measured", "x.csv", "--parallel", "-2"}, exitConfigError,
			"--parallelism must be a whole number >= 1 (or 0 for the default), got -2"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.frag) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.frag)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("backend,model_path\nvllm,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "validate", "--measured", bad)
	if code != exitConfigError || !strings.Contains(errOut, "missing column(s)") {
		t.Errorf("bad header: exit %d %q", code, errOut)
	}
}

// unsupportedCSV is three rows none of which can be simulated: two of an unknown model and one
// on an unknown GPU.
const unsupportedCSV = `id,backend,backend_version,model_path,system,precision,gemm_quant_mode,mode,isl,osl,concurrency,batch_size,tp_size,pp_size,attention_dp_size,silicon_ttft_ms,silicon_tpot_ms
u1,vllm,0.12,acme/Unknown-7B,h100_sxm,,,agg,512,32,4,4,1,1,1,60,8
u2,vllm,0.12,acme/Unknown-7B,h100_sxm,,,agg,1024,32,4,4,1,1,1,90,9
g1,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,tpu_v9,,,agg,512,32,4,4,1,1,1,60,8
`

// TestValidateCommandNoRowSimulated checks that a file of which no row simulates reports no
// accuracy: N/A MAPEs beside the row counts, null MAPEs in the JSON, and exit 1 with the skip
// reasons counted.
func TestValidateCommandNoRowSimulated(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "unsupported.csv")
	if err := os.WriteFile(csvPath, []byte(unsupportedCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "report.json")
	code, out, errOut := runCLI(t, "validate", "-q", "--measured", csvPath, "--output-json", jsonPath)
	if code != exitRunFailure {
		t.Errorf("exit %d, want %d", code, exitRunFailure)
	}
	if !strings.Contains(out, "Overall: all rows: TTFT MAPE N/A, TPOT MAPE N/A, 0 rows simulated, 3 skipped\n") {
		t.Errorf("stdout lacks the N/A headline:\n%s", out)
	}
	// -q counts the skipped rows by reason instead of listing each row.
	if !strings.Contains(out, "Skipped rows by reason:\n  2 × model_path: unknown model") || strings.Contains(out, "  line ") {
		t.Errorf("-q stdout lists skipped rows one by one, or not by reason:\n%s", out)
	}
	for _, frag := range []string{csvPath + ": no row could be simulated: all 3 rows were skipped",
		"\n  2 × model_path: unknown model \"acme/Unknown-7B\"", "\n  1 × system: unknown hardware \"tpu_v9\""} {
		if !strings.Contains(errOut, frag) {
			t.Errorf("stderr lacks %q:\n%s", frag, errOut)
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ttft_mape_pct", "tpot_mape_pct", "ttft_median_ape_pct", "tpot_median_ape_pct"} {
		if v, ok := doc.Summary[k]; !ok || v != nil {
			t.Errorf("summary %s = %v (present %v), want null", k, v, ok)
		}
	}
	if doc.Summary["rows_simulated"] != 0.0 || doc.Summary["rows_skipped"] != 3.0 {
		t.Errorf("summary counts: %s", data)
	}
}

func TestValidateHoldoutFlags(t *testing.T) {
	t.Setenv(envSystemsDir, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--holdout-by", "gpu"}, "--holdout-by must be one of system, backend, model"},
		{[]string{"--forward-model", "oplevel"}, `--forward-model must be auto or op_level, got "oplevel"`},
		{[]string{"--forward-model", "op_level"}, "--forward-model op_level prices passes from a performance database: give --systems-dir DIR"},
		{[]string{"--explain", "3", "--format", "json"}, "--explain prints one row's config as YAML; it does not combine with --format json"},
		{[]string{"--explain", "3", "--holdout-by", "system"}, "it does not combine with --holdout-by"},
		{[]string{"--holdout-by", "system", "--fit"}, "--holdout-by and --fit are exclusive"},
		{[]string{"--fit", "--fit-evaluations", "1"}, "--fit-evaluations must be a whole number >= 2, got 1"},
		{[]string{"--fit-evaluations", "5"}, "--fit-evaluations caps a fit: use it with --fit or --holdout-by"},
		{[]string{"--holdout-by", ""}, `--holdout-by must be one of system, backend, model, got ""`},
		{[]string{"--output-json", "no-such-dir/report.json"}, "--output-json no-such-dir/report.json: directory no-such-dir does not exist"},
		{[]string{"--output-json", "testdata"}, "--output-json testdata: is a directory; give the path of the JSON file to write"},
		{[]string{"--output-json", "/dev/null"}, "--output-json /dev/null: is a device, not a regular file"},
		// Any existing file but an earlier report would be lost: the measured CSV given by mistake.
		{[]string{"--output-json", "testdata/engine-stack.yaml"}, "--output-json testdata/engine-stack.yaml: exists and is not a validation report"},
		{[]string{"--assume-one-worker-per-role", "--aiperf", "x.json", "-c", "c.yaml"}, "--assume-one-worker-per-role and --forward-model apply to --measured, not --aiperf"},
		// --forward-model, even auto, would be silently ignored by an --aiperf run.
		{[]string{"--forward-model", "auto", "--aiperf", "x.json", "-c", "c.yaml"}, "--forward-model apply to --measured, not --aiperf (the config's own"},
	} {
		args := append([]string{"validate", "--measured", "testdata/none.csv"}, tc.args...)
		if slices.Contains(tc.args, "--aiperf") {
			args = append([]string{"validate"}, tc.args...)
		}
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// --explain LINE prints the row's prediction config, which predict runs; a line without a data
// row is a usage error naming the valid lines.
func TestValidateExplain(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "measured.csv")
	if err := os.WriteFile(csvPath, []byte(measuredCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "validate", "--measured", csvPath, "--explain", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, frag := range []string{"line 2: r1", "# harness assumed: fixed ISL and OSL, 80 requests (20 × concurrency 4)",
		"input_tokens: 512", "ramp_seconds: 0", "backend: vllm"} {
		if !strings.Contains(out, frag) {
			t.Errorf("--explain output lacks %q:\n%s", frag, out)
		}
	}
	cfgPath := filepath.Join(dir, "explain.yaml")
	if err := os.WriteFile(cfgPath, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "predict", "-c", cfgPath, "--output-dir", filepath.Join(dir, "out")); code != exitOK {
		t.Errorf("predict on the explained config: exit %d: %s", code, errOut)
	}
	// A line break in a cell stays inside the comment it is printed in: the YAML still reads.
	nl := filepath.Join(dir, "nl.csv")
	id := "\"r1\nengine: {mode: bogus}\""
	if err := os.WriteFile(nl, []byte(strings.Replace(measuredCSV, "\nr1,", "\n"+id+",", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "validate", "--measured", nl, "--explain", "2")
	if code != exitOK || !strings.Contains(out, `line 2: r1\nengine: {mode: bogus}`) {
		t.Fatalf("--explain of a row whose id holds a line break: exit %d, %s\n%s", code, errOut, out)
	}
	if err := os.WriteFile(cfgPath, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "predict", "-c", cfgPath, "--output-dir", filepath.Join(dir, "out-nl")); code != exitOK {
		t.Errorf("predict on the explained config of that row: exit %d: %s", code, errOut)
	}
	// The line inside that row's quoted cell points to the row's first line.
	const inside = "no row starts on line 3: it is blank or inside a quoted cell of the row that starts on line 2 (give --explain 2 for that row)"
	if code, _, errOut := runCLI(t, "validate", "--measured", nl, "--explain", "3"); code != exitConfigError || !strings.Contains(errOut, inside) {
		t.Errorf("--explain 3 inside a quoted cell: exit %d, stderr %q; want %q", code, errOut, inside)
	}
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte(measuredCSV+"r3,vllm,0.12,meta-llama/Llama-3.1-70B,h100_sxm,,,agg,512,32,4,4,1,1,1,400,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{"0", "has no data row on line 0 (data rows are lines 2 to 4; the header is line 1)"},
		{"1", "has no data row on line 1 (data rows are lines 2 to 4; the header is line 1)"},
		{"3", "line 3 cannot be simulated: system: unknown hardware"},
		// BF16 Llama-3.1-70B at TP1 plans, but its weights do not fit one H100: not printed.
		{"4", "line 4 cannot be simulated: engine.workers.aggregated.kv_cache.capacity: model meta-llama/Llama-3.1-70B (bf16 weights) does not fit"},
		// Line numbers are decimal: "03" is line 3, a Go literal such as 0x3 is no line number.
		{"03", "line 3 cannot be simulated: system: unknown hardware"},
		{"0x3", `--explain takes a whole number in decimal, got "0x3"`},
	} {
		code, _, errOut := runCLI(t, "validate", "--measured", big, "--explain", c.line)
		if code != exitConfigError || !strings.Contains(errOut, c.want) {
			t.Errorf("--explain %s: exit %d, stderr %q; want exit %d naming %q", c.line, code, errOut, exitConfigError, c.want)
		}
	}
	// An InferenceX disaggregated row without worker counts whose deployment the public
	// configuration does not list: the refusal names the flag that simulates it anyway.
	ix := filepath.Join(dir, "ix.csv")
	if err := os.WriteFile(ix, []byte("id,backend,model_path,system,precision,mode,isl,osl,concurrency,prefill_tp_size,decode_tp_size,"+
		"silicon_ttft_ms,silicon_tpot_ms,source,measured_at\n"+
		"ix1,vllm,meta-llama/Llama-3.1-70B,h100_sxm,fp8,disagg,1024,1024,8,4,4,300,20,inferencex,2026-01-15\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const hint = "lists no deployment for meta-llama/Llama-3.1-70B under vllm (it has no disaggregated entry for them) " +
		"(--assume-one-worker-per-role simulates such a row as one prefill and one decode worker, noted in the printed config)"
	if code, _, errOut := runCLI(t, "validate", "--measured", ix, "--explain", "2"); code != exitConfigError || !strings.Contains(errOut, hint) {
		t.Errorf("--explain of an unlisted InferenceX disaggregated row: exit %d, stderr %q; want %q", code, errOut, hint)
	}
	if code, out, errOut := runCLI(t, "validate", "--measured", ix, "--explain", "2", "--assume-one-worker-per-role"); code != exitOK ||
		!strings.Contains(out, "mode: disaggregated") {
		t.Errorf("--explain with --assume-one-worker-per-role: exit %d, stderr %q", code, errOut)
	}
}

// validate -q prints the quietNotes most frequent notes and counts the rest; without -q every
// note is printed.
func TestQuietValidationCapsTheNotes(t *testing.T) {
	rep := &calibrate.Report{}
	for i := 0; i < quietNotes+5; i++ {
		rep.Summary.Notes = append(rep.Summary.Notes, calibrate.NoteCount{Note: fmt.Sprintf("note number %02d", i), Rows: 100 - i})
	}
	for _, quiet := range []bool{true, false} {
		var b strings.Builder
		renderValidation(&b, rep, quiet)
		out := b.String()
		shown := strings.Count(out, "× note number ")
		more := strings.Contains(out, "… and 5 notes more")
		if quiet && (shown != quietNotes || !more || strings.Contains(out, "note number 20")) ||
			!quiet && (shown != quietNotes+5 || more) {
			t.Errorf("quiet %v: %d notes shown, the count of the rest printed %v:\n%s", quiet, shown, more, out)
		}
	}
}
