// Command ixtopogen writes sim/calibrate/inferencex_disagg.tsv: every disaggregated deployment
// that SemiAnalysis InferenceX's public benchmark configuration
// (.github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX) has listed, with
// the commits between which each was in force. validate reads the table to simulate an
// InferenceX row of a disaggregated run as it was deployed (calibrate.InferenceXDisagg).
//
// Usage, from the repository root, with a clone (or bare mirror) of the InferenceX repository:
//
//	go run ./sim/calibrate/ixtopogen -repo PATH/TO/InferenceX > sim/calibrate/inferencex_disagg.tsv
//
// It walks every commit that changed the file, oldest first, and reads each version's
// search-space items of the entries marked `disagg: true`: one line per distinct item (entry,
// ISL/OSL, speculative decoding, concurrency list, prefill and decode worker counts and shapes,
// recipe), with the first commit that listed it and the first later commit that no longer did
// (empty while the newest version lists it). The columns are described in the file's header.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

const configPath = ".github/configs/nvidia-master.yaml"

func main() {
	repo := flag.String("repo", "", "path of a clone or bare mirror of github.com/SemiAnalysisAI/InferenceX")
	flag.Parse()
	if *repo == "" {
		fmt.Fprintln(os.Stderr, "ixtopogen: -repo is required")
		os.Exit(2)
	}
	if err := run(*repo); err != nil {
		fmt.Fprintln(os.Stderr, "ixtopogen:", err)
		os.Exit(1)
	}
}

// commit is one version of the configuration file.
type commit struct{ hash, date string }

// item is one disaggregated search-space item, in the table's text form.
type item struct {
	entry, modelPrefix, runner, precision, framework, image string
	isl, osl                                                int
	spec                                                    string
	concs                                                   []int
	prefill, decode                                         worker
	recipe                                                  string
}

// worker is a role's workers as the configuration gives them: num-worker, tp, ep, dp-attn.
type worker struct {
	workers, tp, ep int
	dpAttn          bool
}

// key is the item's identity: every field.
func (it item) key() string { return strings.Join(it.fields(), "\t") }

func (it item) fields() []string {
	cs := make([]string, len(it.concs))
	for i, c := range it.concs {
		cs[i] = strconv.Itoa(c)
	}
	w := func(x worker) []string {
		return []string{strconv.Itoa(x.workers), strconv.Itoa(x.tp), strconv.Itoa(x.ep), strconv.FormatBool(x.dpAttn)}
	}
	out := []string{it.entry, it.modelPrefix, it.runner, it.precision, it.framework, it.image,
		strconv.Itoa(it.isl), strconv.Itoa(it.osl), it.spec, strings.Join(cs, ",")}
	out = append(out, w(it.prefill)...)
	out = append(out, w(it.decode)...)
	return append(out, it.recipe)
}

func run(repo string) error {
	log, err := git(repo, "log", "--reverse", "--format=%H %cI", "--", configPath)
	if err != nil {
		return err
	}
	var commits []commit
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		h, d, ok := strings.Cut(line, " ")
		if ok {
			commits = append(commits, commit{h, d})
		}
	}
	type span struct {
		it    item
		first commit
		until *commit
	}
	open := map[string]*span{}
	var all []*span
	for _, c := range commits {
		// A commit that moved or deleted the file ends every item.
		text, err := git(repo, "show", c.hash+":"+configPath)
		if err != nil && !strings.Contains(err.Error(), "does not exist") {
			return err
		}
		items, err := parse([]byte(text))
		if err != nil {
			return fmt.Errorf("%s at %s: %w", configPath, c.hash, err)
		}
		seen := map[string]bool{}
		for _, it := range items {
			k := it.key()
			seen[k] = true
			if open[k] != nil {
				continue
			}
			s := &span{it: it, first: c}
			open[k] = s
			all = append(all, s)
		}
		for k, s := range open {
			if !seen[k] {
				c := c
				s.until = &c
				delete(open, k)
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(header)
	for _, s := range all {
		until, untilDate := "", ""
		if s.until != nil {
			until, untilDate = s.until.hash, s.until.date
		}
		f := append([]string{s.first.hash, s.first.date, until, untilDate}, s.it.fields()...)
		b.WriteString(strings.Join(f, "\t"))
		b.WriteByte('\n')
	}
	_, err = os.Stdout.Write(b.Bytes())
	return err
}

// header describes the columns (tab-separated; lines starting with # are comments).
const header = `# InferenceX disaggregated deployments: every search-space item of an entry with disagg: true in
# .github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX, with the commit that
# first listed it (from_commit, from_date: committer date) and the first later commit that no
# longer did (until_commit, until_date; empty while the newest version read lists it).
# Written by sim/calibrate/ixtopogen from the repository's history; do not edit by hand.
# Columns: from_commit from_date until_commit until_date entry model_prefix runner precision
# framework image isl osl spec_decoding concurrencies prefill_workers prefill_tp prefill_ep
# prefill_dp_attn decode_workers decode_tp decode_ep decode_dp_attn recipe
`

// parse reads one version of the configuration: the disaggregated entries' search-space items,
// in the file's order.
func parse(text []byte) ([]item, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	top := doc.Content[0]
	var out []item
	for i := 0; i+1 < len(top.Content); i += 2 {
		name, e := top.Content[i].Value, top.Content[i+1]
		if e.Kind != yaml.MappingNode || child(e, "disagg").Value != "true" {
			continue
		}
		for _, slc := range child(e, "seq-len-configs").Content {
			isl, _ := strconv.Atoi(child(slc, "isl").Value)
			osl, _ := strconv.Atoi(child(slc, "osl").Value)
			for _, s := range child(slc, "search-space").Content {
				it := item{entry: name, modelPrefix: child(e, "model-prefix").Value, runner: child(e, "runner").Value,
					precision: child(e, "precision").Value, framework: child(e, "framework").Value, image: child(e, "image").Value,
					isl: isl, osl: osl, spec: "none"}
				if v := child(s, "spec-decoding").Value; v != "" {
					it.spec = v
				}
				it.concs = concurrencies(s)
				it.prefill, it.recipe = role(child(s, "prefill"))
				var r2 string
				it.decode, r2 = role(child(s, "decode"))
				if it.recipe == "" {
					it.recipe = r2
				}
				if len(it.concs) == 0 || it.prefill.workers == 0 || it.decode.workers == 0 {
					continue
				}
				out = append(out, it)
			}
		}
	}
	return out, nil
}

// child returns the value node of key in mapping n, or an empty node.
func child(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return &yaml.Node{}
}

// concurrencies reads conc-list, or conc-start to conc-end doubling.
func concurrencies(s *yaml.Node) []int {
	var out []int
	for _, c := range child(s, "conc-list").Content {
		if v, err := strconv.Atoi(c.Value); err == nil {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	a, err1 := strconv.Atoi(child(s, "conc-start").Value)
	b, err2 := strconv.Atoi(child(s, "conc-end").Value)
	for ; err1 == nil && err2 == nil && a > 0 && a <= b; a *= 2 {
		out = append(out, a)
	}
	return out
}

// role reads a prefill or decode mapping and the recipe its additional-settings name
// (CONFIG_FILE=...), if any.
func role(n *yaml.Node) (worker, string) {
	var w worker
	w.workers, _ = strconv.Atoi(child(n, "num-worker").Value)
	w.tp, _ = strconv.Atoi(child(n, "tp").Value)
	w.ep, _ = strconv.Atoi(child(n, "ep").Value)
	w.dpAttn = child(n, "dp-attn").Value == "true"
	recipe := ""
	for _, s := range child(n, "additional-settings").Content {
		if v, ok := strings.CutPrefix(s.Value, "CONFIG_FILE="); ok {
			recipe = v
		}
	}
	return w, recipe
}

func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir(repo)}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// gitDir is repo's git directory: repo/.git for a clone, repo itself for a bare mirror.
func gitDir(repo string) string {
	if fi, err := os.Stat(repo + "/.git"); err == nil && fi.IsDir() {
		return repo + "/.git"
	}
	return repo
}
