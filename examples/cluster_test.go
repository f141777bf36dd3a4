package examples_test

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"gopkg.in/yaml.v3"
)

// k8sDocs decodes every document of the Kubernetes example, by kind and name.
func k8sDocs(t *testing.T) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile("cluster/kubernetes-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]map[string]any{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("kubernetes-indexed-job.yaml is not valid YAML: %v", err)
		}
		if doc == nil {
			continue
		}
		kind, _ := doc["kind"].(string)
		name, _ := dig(doc, "metadata", "name").(string)
		if kind == "" || name == "" || doc["apiVersion"] == nil {
			t.Fatalf("a document without apiVersion, kind or metadata.name: %v", doc)
		}
		docs[kind+"/"+name] = doc
	}
	return docs
}

// dig follows map keys and list indexes (ints) through a decoded YAML document.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

// flagValue returns the argument after flag in args, or "".
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func TestKubernetesIndexedJob(t *testing.T) {
	docs := k8sDocs(t)
	var indexed []map[string]any
	for _, d := range docs {
		if d["kind"] == "Job" && dig(d, "spec", "completionMode") == "Indexed" {
			indexed = append(indexed, d)
		}
	}
	if len(indexed) != 1 {
		t.Fatalf("want one Job with completionMode: Indexed, got %d (documents: %v)", len(indexed), slices.Sorted(maps.Keys(docs)))
	}
	job := indexed[0]
	completions, _ := dig(job, "spec", "completions").(int)
	if completions < 2 || dig(job, "spec", "parallelism") == nil {
		t.Errorf("completions %v, parallelism %v", dig(job, "spec", "completions"), dig(job, "spec", "parallelism"))
	}
	pod := dig(job, "spec", "template", "spec")
	if dig(pod, "restartPolicy") != "Never" {
		t.Error("the shard pods need restartPolicy: Never (podFailurePolicy requires it)")
	}
	c := dig(pod, "containers", 0)
	cmd := strs(dig(c, "command"))
	spec, out := flagValue(cmd, "-c"), flagValue(cmd, "--output-dir")
	if len(cmd) < 2 || cmd[0] != "servesweep" || cmd[1] != "sweep" || spec == "" || out == "" {
		t.Fatalf("shard command %v: want servesweep sweep -c SPEC --output-dir DIR", cmd)
	}
	// The shard count comes from SERVESWEEP_SHARD_COUNT and must equal completions.
	count := ""
	for i := 0; dig(c, "env", i) != nil; i++ {
		if dig(c, "env", i, "name") == "SERVESWEEP_SHARD_COUNT" {
			count, _ = dig(c, "env", i, "value").(string)
		}
	}
	if n, err := strconv.Atoi(count); err != nil || n != completions {
		t.Errorf("SERVESWEEP_SHARD_COUNT %q, want the Job's completions %d", count, completions)
	}
	mounts := map[string]string{}
	for i := 0; dig(c, "volumeMounts", i) != nil; i++ {
		mounts[dig(c, "volumeMounts", i, "name").(string)] = dig(c, "volumeMounts", i, "mountPath").(string)
	}
	volumes := map[string]any{}
	for i := 0; dig(pod, "volumes", i) != nil; i++ {
		volumes[dig(pod, "volumes", i, "name").(string)] = dig(pod, "volumes", i)
	}
	var cmName, claim string
	for name, path := range mounts {
		switch {
		case strings.HasPrefix(spec, path+"/"):
			cmName, _ = dig(volumes[name], "configMap", "name").(string)
		case strings.HasPrefix(out, path+"/"):
			claim, _ = dig(volumes[name], "persistentVolumeClaim", "claimName").(string)
		}
	}
	if cmName == "" || claim == "" {
		t.Fatalf("the spec %s must come from a ConfigMap volume and the output %s from a PVC: mounts %v volumes %v", spec, out, mounts, volumes)
	}
	pvc := docs["PersistentVolumeClaim/"+claim]
	if pvc == nil || !slices.Contains(strs(dig(pvc, "spec", "accessModes")), "ReadWriteMany") {
		t.Errorf("PersistentVolumeClaim %s is missing or not ReadWriteMany", claim)
	}

	// The ConfigMap holds a valid sweep spec.
	cm := docs["ConfigMap/"+cmName]
	text, _ := dig(cm, "data", filepath.Base(spec)).(string)
	if text == "" {
		t.Fatalf("ConfigMap %s has no %s", cmName, filepath.Base(spec))
	}
	s, err := grid.Parse([]byte(text), spec, nil, nil, results.CheckMetric)
	if err != nil {
		t.Fatalf("the ConfigMap's sweep spec: %v", err)
	}
	x, err := s.Expand()
	if err != nil || len(x.Points) < completions {
		t.Fatalf("the ConfigMap's sweep spec expands to %v points (%v)", x, err)
	}

	// The merge Job reads the shards' output directory.
	var merge []string
	for _, d := range docs {
		if d["kind"] == "Job" && dig(d, "metadata", "name") != dig(job, "metadata", "name") {
			merge = strs(dig(d, "spec", "template", "spec", "containers", 0, "command"))
		}
	}
	if len(merge) < 2 || merge[1] != "merge" || flagValue(merge, "--results") != out {
		t.Errorf("merge Job command %v: want servesweep merge --results %s", merge, out)
	}
}

func TestSlurmArrayScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	script, _ := filepath.Abs("cluster/slurm-array.sh")
	if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n %s: %v\n%s", script, err, out)
	}

	// Submitting: a fake sbatch records its arguments.
	bin := t.TempDir()
	log := filepath.Join(bin, "sbatch.log")
	fake := "#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> " + log + "\nn=$(wc -l < " + log + ")\necho \"$((1000 + n));cluster\"\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	echo := filepath.Join(bin, "fake-servesweep")
	os.WriteFile(echo, []byte("#!/usr/bin/env bash\necho \"$@\"\n"), 0o755)
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + bin,
		"SHARDS=3", "SPEC=spec.yaml", "OUT=/shared/out"}

	// A servesweep binary that is not there is refused before anything is submitted.
	cmd := exec.Command(bash, script)
	cmd.Env = append(env, "SERVESWEEP="+filepath.Join(bin, "nope"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "the servesweep binary '"+filepath.Join(bin, "nope")+"' is not found") {
		t.Errorf("missing binary: %v\n%s", err, out)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("sbatch was called with a missing binary")
	}

	cmd = exec.Command(bash, script)
	cmd.Env = append(env, "SERVESWEEP="+echo)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	calls, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "--array=0-2") || !strings.Contains(lines[0], "SHARDS=3") ||
		!strings.HasSuffix(lines[0], script) {
		t.Fatalf("array submission: %q", lines)
	}
	if !strings.Contains(lines[0], "SERVESWEEP="+echo) {
		t.Errorf("array submission %q does not pass SERVESWEEP on", lines[0])
	}
	if !strings.Contains(lines[1], "--dependency=afterany:1001") || !strings.Contains(lines[1], echo+" merge --results /shared/out") {
		t.Errorf("merge submission %q: want a merge of /shared/out after array job 1001", lines[1])
	}

	// One task of the array runs servesweep sweep with the shard count.
	cmd = exec.Command(bash, script)
	cmd.Env = append(env, "SLURM_JOB_ID=1002", "SLURM_ARRAY_TASK_ID=2", "SLURM_CPUS_PER_TASK=2", "SERVESWEEP="+echo)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("task: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "sweep -c spec.yaml --output-dir /shared/out --shard-count 3 --parallelism 2 --quiet" {
		t.Errorf("task ran servesweep %s", got)
	}
}

// TestKubernetesImageRecipe checks that the manifest's image recipe builds a static binary
// (CGO_ENABLED=0 in the command itself), which the distroless static base image needs.
func TestKubernetesImageRecipe(t *testing.T) {
	data, err := os.ReadFile("cluster/kubernetes-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "#   CGO_ENABLED=0 go build -o bin/servesweep ./cmd/servesweep") {
		t.Error("the image recipe does not build with CGO_ENABLED=0")
	}
}
