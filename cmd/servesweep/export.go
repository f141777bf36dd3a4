package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/results/export"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/spf13/cobra"
	"github.com/zeebo/xxh3"
)

// exportOptions are the flags of `servesweep export`.
type exportOptions struct {
	ConfigPath string
	Sets       []string
	Target     string
	OutputDir  string
	Overwrite  bool
	// Name is the deployment name ("" = from the config file's name); URL the server aiperf.sh
	// benchmarks ("" = export.DefaultURL).
	Name string
	URL  string
	// nameSet says --name was given (an empty --name is refused, not read as "unset").
	nameSet bool
}

func newExportCmd(io ioStreams, runF func(context.Context, *exportOptions) error) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export -c CONFIG.yaml --target vllm|sglang|trtllm|dynamo [--output-dir DIR]",
		Short: "Write the launch commands or Dynamo manifest of a config, and the AIPerf command that benchmarks it",
		Long: `Turn one concrete prediction config (a sweep's recommendations/NNNN.yaml, or any config
predict runs) into what deploys it and measures it the way it was simulated.

--target vllm, sglang or trtllm writes <target>-launch.sh: one command per worker role whose
flags carry the simulated choices (parallel sizes, max sequences, token budget, KV block or page
size, prefix caching, chunked prefill, KV-cache and weight precision, context length, KV memory);
TensorRT-LLM's other options go to trtllm-<role>.yaml (--extra_llm_api_options). The target
must be the config's engine.backend. --target dynamo writes dynamo-deployment.yaml, a
DynamoGraphDeployment of the aggregated or disaggregated graph: the frontend with the router mode
of router.policy and one service per worker role (replicas, GPUs, engine arguments).

Every target also writes aiperf.sh, the aiperf profile command that sends the simulated workload
(lengths, sessions, mixture or trace; load type and intensity; request count); score its run with
servesweep validate --aiperf. A choice the target cannot express (e.g. a KV block size vLLM does
not take, a router policy a bare engine has no router for) is an error naming the field (exit 2);
nothing is written then.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("export takes no positional arguments, got %q%s", args, positionalHint(cmd, args, "config", ".yaml", ".yml", ".json"))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.nameSet = cmd.Flags().Changed("name")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return config.AttributeSets(runExport(io, opts), opts.Sets)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.ConfigPath, "config", "c", "", "prediction or recommendation YAML (required)")
	f.StringArrayVar(&opts.Sets, "set", nil, "override PATH=YAML after loading (repeatable)")
	f.StringVar(&opts.Target, "target", "", "what to export for: "+strings.Join(export.Targets(), ", ")+" (required)")
	f.StringVar(&opts.OutputDir, "output-dir", "./servesweep-export", "directory for the exported files")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "allow a non-empty output directory; replaces only the files this export writes")
	f.StringVar(&opts.Name, "name", "", "deployment name of the Dynamo manifest (default: the config file's name)")
	f.StringVar(&opts.URL, "url", export.DefaultURL, "the server aiperf.sh benchmarks")
	mustFilename(cmd, "config", "yaml", "yml")
	mustDirname(cmd, "output-dir")
	mustComplete(cmd, "target", fixed("vllm\tvllm serve commands", "sglang\tsglang.launch_server commands",
		"trtllm\ttrtllm-serve commands and LLM-API options", "dynamo\ta DynamoGraphDeployment manifest"))
	for _, name := range []string{"set", "name", "url"} {
		mustComplete(cmd, name, noFiles)
	}
	return cmd
}

func runExport(io ioStreams, opts *exportOptions) error {
	if opts.ConfigPath == "" {
		return &usageError{errors.New("--config is required (a prediction YAML or a sweep's recommendations/NNNN.yaml)")}
	}
	if !slices.Contains(export.Targets(), opts.Target) {
		return &usageError{fmt.Errorf("--target must be one of %s, got %q", strings.Join(export.Targets(), ", "), opts.Target)}
	}
	if opts.OutputDir == "" {
		return &usageError{errors.New("--output-dir must not be empty")}
	}
	if err := checkServerURL(opts.URL); err != nil {
		return &usageError{err}
	}
	cfg, err := config.LoadFile(opts.ConfigPath, opts.Sets, config.WithMarker(grid.ConcreteMarker))
	if err != nil {
		return err
	}
	name := opts.Name
	switch {
	case opts.nameSet && !export.IsDNSLabel(name):
		// A file's name is made a label silently; a name given on purpose is not rewritten.
		return &usageError{fmt.Errorf("--name must be a Kubernetes DNS label (lowercase letters, digits and '-', "+
			"starting with a letter and ending with a letter or digit, at most 40 characters), got %q; e.g. %s", name, export.DNSLabel(name))}
	case name == "":
		name = strings.TrimSuffix(filepath.Base(opts.ConfigPath), filepath.Ext(opts.ConfigPath))
	}
	if err := checkExportable(io, cfg); err != nil {
		return err
	}
	files, err := export.Export(cfg, opts.Target, export.Options{Name: name, URL: opts.URL})
	if err != nil {
		return err
	}
	if err := checkExportDir(opts.OutputDir, opts.Overwrite, files); err != nil {
		return err
	}
	if err := makeOutputDir(opts.OutputDir); err != nil {
		return err
	}
	if err := export.WriteFiles(opts.OutputDir, files); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(io.Out, filepath.Join(opts.OutputDir, f.Name))
	}
	return nil
}

// checkExportable refuses a config no launch should be written for (a model predict cannot
// simulate, a GPU servesweep does not know, a shape the model cannot be split into, a worker beyond one node, a context the
// engine would refuse at startup, weights that do not fit) and prints the notes and warnings a
// launch of it deserves.
func checkExportable(io ioStreams, cfg *config.Config) error {
	if _, err := timing.ResolveModel(cfg.Engine.Model); err != nil {
		// predict refuses a model it cannot simulate; a launch for one would be a guess.
		return &config.Error{File: cfg.File, Path: "engine.model", Msg: err.Error()}
	}
	// Nor a GPU it does not know: the launch files and their comments name it, and under
	// label-only timing predict would only warn of the typo.
	for _, h := range hardwareFields(cfg) {
		if _, err := timing.LookupHardware(h.id); h.id != "" && err != nil {
			return cfg.At(h.path, err.Error())
		}
	}
	if n := timing.OrganizationNote(cfg.Engine.Model); n != "" { // the launch files name the model as given
		fmt.Fprintln(io.Err, "note: "+cfg.At("engine.model", n).Error())
	}
	if err := sim.CheckShapes(cfg); err != nil {
		return err
	}
	if err := sim.CheckSingleNode(cfg); err != nil {
		return err
	}
	// What the engine would refuse at startup, or predict refuses to simulate (weights that do
	// not fit), gets no launch files.
	if err := sim.CheckContextLength(cfg); err != nil {
		return err
	}
	// Without a performance database an op_level role cannot be built here; its launch files do
	// not depend on the timing, so that one refusal is not export's to make.
	if err := sim.Check(cfg, nil); err != nil && !errors.Is(err, sim.ErrNoSystems) {
		return err
	}
	for _, n := range sim.DeploymentNotes(cfg) {
		if poolNote.MatchString(n) {
			continue // export.Export refuses such a pool
		}
		fmt.Fprintln(io.Err, "warning: "+fieldNote(cfg, n))
	}
	return nil
}

// checkExportDir refuses a path that is not a directory, and a non-empty directory without
// overwrite (which replaces only the files being written).
func checkExportDir(dir string, overwrite bool, files []export.File) error {
	entries, err := outputDirEntries(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 && !overwrite {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name
		}
		return &usageError{fmt.Errorf("--output-dir %s is not empty; pass --overwrite to replace %s, or choose another directory",
			dir, strings.Join(names, ", "))}
	}
	return nil
}

// parseExportTargets reads sweep's and report's --export: a comma-separated list of targets
// (repeats dropped), nil when the flag was not given.
func parseExportTargets(list []string) ([]string, error) {
	var out []string
	for _, item := range list {
		for _, t := range strings.Split(item, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(export.Targets(), t) {
				return nil, &usageError{fmt.Errorf("--export takes targets among %s (comma-separated), got %q",
					strings.Join(export.Targets(), ", "), t)}
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// exportRecommendations writes each recommendation's export for every target into a directory
// beside it, recommendations/NNNN/ for recommendations/NNNN.yaml (results.WriteReport, which
// wrote them, removed the directories an earlier --export left). Every recommendation is tried;
// the problems of those a target cannot express are returned together (config.Errors, exit 2)
// after the others are written. It returns the directories written.
func exportRecommendations(recs []string, targets []string, url string) ([]string, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	var dirs []string
	var problems config.Errors
	for _, rec := range recs {
		cfg, err := config.LoadFile(rec, nil, config.WithMarker(grid.ConcreteMarker))
		if err != nil {
			return dirs, err
		}
		stem := strings.TrimSuffix(filepath.Base(rec), filepath.Ext(rec))
		out := filepath.Join(filepath.Dir(rec), stem)
		var files []export.File
		for _, t := range targets {
			fs, err := export.Export(cfg, t, export.Options{Name: "servesweep-" + stem, URL: url})
			var ces config.Errors
			if errors.As(err, &ces) {
				problems = append(problems, ces...)
				continue
			}
			if err != nil {
				return dirs, err
			}
			for _, f := range fs {
				if !slices.ContainsFunc(files, func(g export.File) bool { return g.Name == f.Name }) {
					files = append(files, f)
				}
			}
		}
		if len(files) == 0 {
			continue
		}
		if err := export.WriteFiles(out, files); err != nil {
			return dirs, err
		}
		dirs = append(dirs, out)
	}
	if len(problems) > 0 {
		return dirs, problems
	}
	return dirs, nil
}

// addExportFlag adds sweep's and report's --export.
func addExportFlag(cmd *cobra.Command, targets *[]string) {
	cmd.Flags().StringArrayVar(targets, "export", nil, "also export every recommendation for these targets ("+
		strings.Join(export.Targets(), ", ")+"; comma-separated) into recommendations/NNNN/, as servesweep export does")
	mustComplete(cmd, "export", fixed(export.Targets()...))
}

// writeExports exports w's recommendations for targets (none: nothing happens), says on stderr
// where the exports went and lists their files in w.Exports (for --format json's "files").
func writeExports(io ioStreams, w *results.Written, targets []string) error {
	if len(targets) == 0 {
		return nil
	}
	dirs, err := exportRecommendations(w.Recommendations, targets, export.DefaultURL)
	if err != nil {
		return err
	}
	if len(dirs) > 0 {
		fmt.Fprintf(io.Err, "servesweep: exported %d recommendation(s) for %s: %s\n", len(dirs), strings.Join(targets, ", "), strings.Join(dirs, ", "))
	}
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "*"))
		if err != nil {
			return err
		}
		w.Exports = append(w.Exports, files...)
	}
	return nil
}

// checkExportBackends refuses, before a sweep simulates anything, an engine --export target
// (vllm, sglang, trtllm) that some point does not simulate: an engine's launch command carries
// that engine's scheduler choices only (dynamo runs each point's own backend).
func checkExportBackends(file string, targets []string, points []grid.Point) error {
	for _, t := range targets {
		if t == export.TargetDynamo {
			continue
		}
		for i := range points {
			if b := points[i].Config.Engine.Backend; b != t {
				return config.Errors{{File: file, Path: "engine.backend", Msg: fmt.Sprintf(
					"--export %s: point %s simulates %s's scheduler, not %s's; export with --export %s or dynamo, or sweep engine.backend %s",
					t, points[i].Label(), b, t, b, t)}}
			}
		}
	}
	return nil
}

// checkExports checks a sweep's points against its --export targets before anything runs: their
// backends (checkExportBackends), then what export would refuse (exportProblems), refusing when
// every point would be refused for some target and warning when some would. The points' configs
// are materialized for it; an interrupt stops it (exit 130).
func checkExports(ctx context.Context, io ioStreams, file string, x *grid.Expansion, targets []string) error {
	if len(targets) == 0 {
		return nil
	}
	if err := x.MaterializeContext(ctx, x.Points); err != nil {
		if ctx.Err() != nil {
			return &interruptedError{"interrupted while preparing the points' configs: nothing was simulated"}
		}
		return err
	}
	if err := checkExportBackends(file, targets, x.Points); err != nil {
		return err
	}
	warnings, refused, err := exportProblems(ctx, x.Points, targets)
	if err != nil {
		return &interruptedError{"interrupted while checking the exports: nothing was simulated"}
	}
	if len(refused) > 0 { // no recommendation could be exported for those targets
		return &usageError{errors.New(strings.Join(refused, "\n") + "; or sweep without --export")}
	}
	for _, w := range warnings {
		fmt.Fprintln(io.Err, "warning: "+w)
	}
	return nil
}

// exportProblems exports each distinct deployment of points for every target (export.Export;
// points that differ only in what no export reads share one) and says, per target, what export
// would refuse: a fixed KV pool the GPU cannot hold, a vLLM max_batched_tokens below
// max_sequences, a field the target cannot express. A recommended point of such a deployment
// would fail the export only after the whole sweep. refused holds the targets every point fails,
// warnings those some points fail; the error is ctx's when it is done (checked every 256 points).
func exportProblems(ctx context.Context, points []grid.Point, targets []string) (warnings, refused []string, err error) {
	for _, t := range targets {
		seen := map[[16]byte]error{}
		n, example := 0, ""
		for i := range points {
			if i%256 == 0 && ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			cfg := points[i].Config
			key, err := json.Marshal([]any{cfg.Engine, cfg.Router, cfg.Planner, cfg.Traffic})
			if err != nil {
				continue
			}
			sum := xxh3.Hash128(key).Bytes()
			e, ok := seen[sum]
			if !ok {
				_, e = export.Export(cfg, t, export.Options{})
				seen[sum] = e
			}
			var ces config.Errors
			if !errors.As(e, &ces) || len(ces) == 0 {
				continue
			}
			if n == 0 {
				example = fmt.Sprintf("point %s: %s: %s", points[i].ID, ces[0].Path, ces[0].Msg)
			}
			n++
		}
		if n == 0 {
			continue
		}
		msg := fmt.Sprintf("--export %s: %d of %d points are deployments export refuses (e.g. %s); a recommended one fails "+
			"the export after the sweep", t, n, len(points), example)
		if n == len(points) {
			refused = append(refused, msg)
		} else {
			warnings = append(warnings, msg)
		}
	}
	return warnings, refused, nil
}

// checkServerURL refuses a --url aiperf.sh could not benchmark: it must be HOST:PORT or
// http(s)://HOST[:PORT][/PATH] (AIPerf's --url), HOST a DNS name or an IP address (IPv6 in
// brackets), any port in 1-65535, without spaces, user, query or fragment. An empty --url is
// refused too: the flag's default is export.DefaultURL.
func checkServerURL(raw string) error {
	bad := func() error {
		return fmt.Errorf("--url must be the server's HOST:PORT or http(s)://HOST[:PORT][/PATH] (aiperf.sh passes it to AIPerf's --url), got %q", raw)
	}
	if raw == "" || strings.ContainsAny(raw, " \t\r\n") {
		return bad()
	}
	s := raw
	if i := strings.Index(s, "://"); i < 0 {
		if strings.Contains(s, ":/") {
			return bad() // a scheme with one slash
		}
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (strings.ToLower(u.Scheme) != "http" && strings.ToLower(u.Scheme) != "https") || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(u.Host, ":") || !validHost(u.Hostname()) {
		return bad()
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad()
		}
	}
	return nil
}

// validHost reports whether h is an IP address or a DNS name: dot-separated labels of 1-63
// letters, digits and hyphens, none starting or ending with a hyphen, not all digits and dots
// (a malformed IPv4 address).
func validHost(h string) bool {
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	if strings.Trim(h, "0123456789.") == "" {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
