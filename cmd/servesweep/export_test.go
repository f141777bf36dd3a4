package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const exportConfig = "../../results/export/testdata/vllm-agg.yaml"

func TestExportCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runCLI(t, "export", "-c", exportConfig, "--target", "dynamo", "--output-dir", dir)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	want := []string{filepath.Join(dir, "dynamo-deployment.yaml"), filepath.Join(dir, "aiperf.sh")}
	if got := strings.Fields(out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("stdout lists %v, want %v", got, want)
	}
	manifest, err := os.ReadFile(want[0])
	if err != nil {
		t.Fatal(err)
	}
	// The deployment is named after the config file.
	if !strings.Contains(string(manifest), "  name: vllm-agg\n") {
		t.Errorf("manifest not named after the config:\n%s", manifest)
	}
	if st, err := os.Stat(want[1]); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("aiperf.sh is not executable (%v)", err)
	}
	// A second export into the same directory needs --overwrite.
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", dir); code != exitConfigError ||
		!strings.Contains(errs, "--overwrite") {
		t.Errorf("non-empty dir: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", dir, "--overwrite"); code != exitOK {
		t.Errorf("--overwrite: exit %d, stderr %q", code, errs)
	}
	// A model predict cannot simulate is refused too, naming engine.model.
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", t.TempDir(),
		"--set", "engine.model=acme/Unknown-7B-NVFP4"); code != exitConfigError || !strings.Contains(errs, `engine.model: unknown model "acme/Unknown-7B-NVFP4"`) {
		t.Errorf("unknown model: exit %d, stderr %q; want exit 2 naming engine.model", code, errs)
	}
	// So is a GPU servesweep does not know, whatever the timing (the seed's polynomial timing
	// reads none: predict only warns), naming the field and its --set; an alias is exported.
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", t.TempDir(),
		"--set", "engine.hardware=h999"); code != exitConfigError ||
		!strings.Contains(errs, exportConfig+` (--set engine.hardware=h999): engine.hardware: unknown hardware "h999"; known hardware: a100_sxm`) {
		t.Errorf("unknown GPU: exit %d, stderr %q; want exit 2 naming engine.hardware and its --set", code, errs)
	}
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", t.TempDir(),
		"--set", "engine.hardware=h200"); code != exitOK {
		t.Errorf("GPU alias h200: exit %d, stderr %q; want exit 0", code, errs)
	}
	// A model under an organization the catalog does not know for it is exported as given, with
	// a note saying which model it was read as.
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", t.TempDir(),
		"--set", "engine.model=wrongorg/Llama-3.1-8B"); code != exitOK ||
		!strings.Contains(errs, `note: `+exportConfig+` (--set engine.model=wrongorg/Llama-3.1-8B): engine.model: "wrongorg/Llama-3.1-8B" is read as meta-llama/Llama-3.1-8B`) {
		t.Errorf("unknown organization: exit %d, stderr %q; want exit 0 with a note", code, errs)
	}
	// A shape the model cannot be split into is refused whatever the timing: no engine runs it.
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", t.TempDir(),
		"--set", "engine.workers.aggregated.parallelism={replicas: 1, tensor: 64}"); code != exitConfigError ||
		!strings.Contains(errs, "engine.workers.aggregated.parallelism.tensor: tensor 64 does not divide") {
		t.Errorf("tensor 64: exit %d, stderr %q; want exit 2 naming the field", code, errs)
	}
	// What the engine would refuse at startup, or predict refuses to simulate, gets no launch files:
	// a context longer than the model's, weights that do not fit.
	for _, c := range []struct{ set, want string }{
		{"engine.context_length=400000", "engine.context_length: 400000 tokens is above meta-llama/Llama-3.1-8B's max_position_embeddings 131072"},
		{"engine.model=meta-llama/Llama-3.1-405B", "does not fit on"},
	} {
		out := t.TempDir()
		if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", out, "--set", c.set); code != exitConfigError ||
			!strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.set, code, errs, c.want)
		}
		if files, _ := os.ReadDir(out); len(files) != 0 {
			t.Errorf("%s: a refused export wrote %d files", c.set, len(files))
		}
	}
	// An op_level role needs no performance database to be exported: its launch does not depend
	// on the timing.
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", t.TempDir(),
		"--set", "engine.workers.aggregated.timing={type: default, forward_model: op_level}"); code != exitOK {
		t.Errorf("op_level without a database: exit %d, stderr %q; want 0", code, errs)
	}
	// A --name that is a DNS label names the deployment as given.
	named := filepath.Join(t.TempDir(), "named")
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "dynamo", "--output-dir", named, "--name", "llama--8b-tp2"); code != exitOK {
		t.Fatalf("--name llama--8b-tp2: exit %d, stderr %q", code, errs)
	}
	if m, err := os.ReadFile(filepath.Join(named, "dynamo-deployment.yaml")); err != nil || !strings.Contains(string(m), "  name: llama--8b-tp2\n") {
		t.Errorf("manifest not named llama--8b-tp2 (%v):\n%s", err, m)
	}
}

func TestExportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"--target", "vllm"}, "--config is required"},
		{"unknown target", []string{"-c", exportConfig, "--target", "tgi"}, "--target must be one of vllm, sglang, trtllm, dynamo"},
		{"other backend", []string{"-c", exportConfig, "--target", "trtllm"}, "vllm-agg.yaml: engine.backend: the config simulates vllm's scheduler"},
		{"inexpressible", []string{"-c", exportConfig, "--target", "vllm", "--set", "router.policy=kv_router"},
			"router.policy: kv_router cannot be expressed for target vllm"},
		{"bad config", []string{"-c", exportConfig, "--target", "vllm", "--set", "engine.workers.aggregated.parallelism.tensor=0"},
			"engine.workers.aggregated.parallelism.tensor"},
		{"name not a label", []string{"-c", exportConfig, "--target", "dynamo", "--name", "Bad Name!!/.."},
			`--name must be a Kubernetes DNS label (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, at most 40 characters), got "Bad Name!!/.."; e.g. bad-name`},
		{"name ends with a hyphen", []string{"-c", exportConfig, "--target", "dynamo", "--name", "abc-"}, `got "abc-"; e.g. abc`},
		{"name empty", []string{"-c", exportConfig, "--target", "dynamo", "--name", ""}, `got ""; e.g. servesweep`},
		{"name too long", []string{"-c", exportConfig, "--target", "dynamo", "--name", strings.Repeat("a", 41)}, "e.g. " + strings.Repeat("a", 40)},
		{"url with spaces", []string{"-c", exportConfig, "--target", "vllm", "--url", "not a url"},
			`--url must be the server's HOST:PORT or http(s)://HOST[:PORT][/PATH] (aiperf.sh passes it to AIPerf's --url), got "not a url"`},
		{"url scheme", []string{"-c", exportConfig, "--target", "vllm", "--url", "ftp://host"}, `got "ftp://host"`},
		{"url port", []string{"-c", exportConfig, "--target", "vllm", "--url", "host:99999"}, `got "host:99999"`},
		{"url empty", []string{"-c", exportConfig, "--target", "vllm", "--url", ""}, `got ""`},
	}
	// An output directory that cannot exist (under a regular file) is exit 2 naming the flag.
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "export", "-c", exportConfig, "--target", "vllm", "--output-dir", filepath.Join(file, "sub")); code != exitConfigError ||
		!strings.Contains(errs, "--output-dir "+filepath.Join(file, "sub")+": not a directory") {
		t.Errorf("output dir under a file: exit %d, stderr %q", code, errs)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			code, _, errs := runCLI(t, append([]string{"export", "--output-dir", out}, c.args...)...)
			if code != exitConfigError || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed export wrote %s", out)
			}
		})
	}
}

// exportSweepSpec is a small sweep (two points, fixed-form timing) whose recommendations export
// to every target.
const exportSweepSpec = `traffic:
  source: {type: synthetic, input_tokens: 512, output_tokens: 32}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 20}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: {choices: [1, 2]}, tensor: 1}
      kv_cache: {block_size: 64, capacity: {type: fixed, blocks: 4096}}
      timing: {type: polynomial}
router: {policy: round_robin}
`

func TestSweepAndReportExport(t *testing.T) {
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "spec.yaml")
	if err := os.WriteFile(spec, []byte(exportSweepSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", filepath.Join(tmp, "x"), "--export", "tgi"); code != exitConfigError ||
		!strings.Contains(errs, `--export takes targets among vllm, sglang, trtllm, dynamo (comma-separated), got "tgi"`) {
		t.Fatalf("--export tgi: exit %d, stderr %q", code, errs)
	}
	// An engine target another backend's points cannot use is refused before anything runs.
	early := filepath.Join(tmp, "early")
	if code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", early, "--export", "vllm,sglang"); code != exitConfigError ||
		!strings.Contains(errs, "engine.backend: --export sglang: point") || strings.Contains(errs, "exported ") {
		t.Fatalf("--export sglang on vllm points: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(early, "results.parquet")); !os.IsNotExist(err) {
		t.Errorf("a refused --export still simulated: %v", err)
	}
	dir := filepath.Join(tmp, "sweep")
	code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", dir, "--export", "vllm,dynamo")
	if code != exitOK {
		t.Fatalf("sweep --export: exit %d, stderr %s", code, errs)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "recommendations", "*.yaml"))
	if len(recs) == 0 {
		t.Fatal("no recommendations")
	}
	for _, rec := range recs {
		exp := strings.TrimSuffix(rec, ".yaml")
		for _, name := range []string{"vllm-launch.sh", "dynamo-deployment.yaml", "aiperf.sh"} {
			if _, err := os.Stat(filepath.Join(exp, name)); err != nil {
				t.Errorf("%s: %v", rec, err)
			}
		}
	}
	if !strings.Contains(errs, "exported ") {
		t.Errorf("stderr does not say where the exports went: %q", errs)
	}
	// --format json lists the export files among the files written (report's document too).
	for _, args := range [][]string{{"sweep", "-q", "-c", spec, "--output-dir", filepath.Join(tmp, "json")},
		{"report", "--results", dir, "--output-dir", filepath.Join(tmp, "json-report")}} {
		code, out, errs := runCLI(t, append(args, "--export", "vllm", "--format", "json")...)
		var doc struct {
			Files struct{ Exports []string } `json:"files"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != exitOK || err != nil {
			t.Fatalf("%s --format json: exit %d, %v, stderr %s", args[0], code, err, errs)
		}
		want, _ := filepath.Glob(filepath.Join(args[len(args)-1], "recommendations", "*", "*"))
		if len(want) == 0 || !slices.Equal(doc.Files.Exports, want) {
			t.Errorf("%s --format json: files.exports %q, want %q", args[0], doc.Files.Exports, want)
		}
	}

	// report --export writes the same beside its own recommendations; a target the points
	// cannot be expressed on fails with exit 2 naming the field.
	out := filepath.Join(tmp, "report")
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", out, "--export", "sglang"); code != exitConfigError ||
		!strings.Contains(errs, "engine.backend: the config simulates vllm's scheduler") {
		t.Errorf("report --export sglang: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", out, "--overwrite", "--export", "vllm"); code != exitOK {
		t.Fatalf("report --export vllm: exit %d, stderr %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "recommendations", "0001", "vllm-launch.sh")); err != nil {
		t.Error(err)
	}
	// The report rewritten without --export (recommendations that may now name other points)
	// leaves no launch script of the earlier ones beside them, nor does a sweep started over.
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", out, "--overwrite"); code != exitOK {
		t.Fatalf("report --overwrite: exit %d, stderr %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "recommendations", "0001")); !os.IsNotExist(err) {
		t.Errorf("report --overwrite without --export kept recommendations/0001/ (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(out, "recommendations", "0001.yaml")); err != nil {
		t.Errorf("report --overwrite: %v", err)
	}
	if code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", dir, "--overwrite"); code != exitOK {
		t.Fatalf("sweep --overwrite: exit %d, stderr %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "recommendations", "0001")); !os.IsNotExist(err) {
		t.Errorf("sweep --overwrite without --export kept recommendations/0001/ (%v)", err)
	}

	// Without --export a sweep writes no export directory.
	plain := filepath.Join(tmp, "plain")
	if code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", plain); code != exitOK {
		t.Fatalf("sweep: exit %d, stderr %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(plain, "recommendations", "0001")); !os.IsNotExist(err) {
		t.Errorf("a sweep without --export wrote recommendations/0001 (%v)", err)
	}
}

// checkServerURL takes what AIPerf's --url takes and refuses the rest.
func TestCheckServerURL(t *testing.T) {
	for _, u := range []string{"localhost:8000", "localhost", "10.0.0.1:80", "[::1]:8000", "http://host:8000", "HTTP://Host.example.com:8080/v1/",
		"https://a-b.example.com"} {
		if err := checkServerURL(u); err != nil {
			t.Errorf("%q: %v", u, err)
		}
	}
	for _, u := range []string{"", "not a url", "host:", "host:0", "host:99999", "ftp://host", "http:/host:80", "http://host:8000?x=1",
		"http://host:8000#f", "999.1.1.1:80", "http://-host-:80", "user@host:80", "http://", "münchen.de"} {
		if err := checkServerURL(u); err == nil {
			t.Errorf("%q: accepted", u)
		}
	}
}
