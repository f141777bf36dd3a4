// Command ixtopogen writes sim/calibrate/inferencex_disagg.tsv: every disaggregated deployment
// that SemiAnalysis InferenceX's public benchmark configuration
// (.github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX) has listed, and
// the GB200 ones its runner script (runners/launch_gb200-nv.sh) held before, with the commits
// between which each was in force; with -agg, sim/calibrate/inferencex_agg.tsv: the
// same for the single-node deployments. validate reads the tables to simulate an InferenceX row
// of a disaggregated run as it was deployed (calibrate.InferenceXDisagg) and to check that an
// aggregated row is a run of the configuration (calibrate.InferenceXAgg).
//
// Usage, from the repository root, with a clone (or bare mirror) of the InferenceX repository:
//
//	go run ./sim/calibrate/ixtopogen -repo PATH/TO/InferenceX > /tmp/disagg.tsv && mv /tmp/disagg.tsv sim/calibrate/inferencex_disagg.tsv
//	go run ./sim/calibrate/ixtopogen -repo PATH/TO/InferenceX -agg > /tmp/agg.tsv && mv /tmp/agg.tsv sim/calibrate/inferencex_agg.tsv
//
// (Through a temporary file: a failed run writes nothing, and the tables must never be empty;
// calibrate refuses an empty one.)
//
// It walks every commit that changed the file, oldest first, and reads each version's
// search-space items of the entries marked `disagg: true` (with -agg: of the entries not marked
// disagg or multinode): one line per distinct item (entry, ISL/OSL, speculative decoding,
// concurrency list, prefill and decode worker counts and shapes and recipe, or the single
// node's TP, EP and attention data parallelism), with the first commit that listed it and the
// first later commit that no longer did (empty while the newest version lists it). The columns
// are described in each file's header.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

const configPath = ".github/configs/nvidia-master.yaml"

func main() {
	repo := flag.String("repo", "", "path of a clone or bare mirror of github.com/SemiAnalysisAI/InferenceX")
	agg := flag.Bool("agg", false, "write the single-node (aggregated) deployments instead of the disaggregated ones")
	flag.Parse()
	if *repo == "" {
		fmt.Fprintln(os.Stderr, "ixtopogen: -repo is required")
		os.Exit(2)
	}
	var err error
	if *agg {
		err = run(*repo, aggHeader, source{configPath, func(_ commit, text []byte) ([]tableItem, error) { return parseAgg(text) }})
	} else {
		err = runDisagg(*repo)
	}
	if err != nil {
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
	// mtpDrafts is an MTP item's draft tokens per round (mtpDrafts); 0 without MTP or when the
	// record does not give it.
	mtpDrafts int
	// perDecodeWorker is set when the benchmark ran each listed concurrency once per decode
	// worker: the client's max-concurrency was the listed value × decode workers
	// (perDecodeWorkerBranches).
	perDecodeWorker bool
	// file is the file of the InferenceX repository the item comes from: configPath, or
	// launcherPath for the GB200 deployments its runner script held before the configuration
	// listed them.
	file string
}

// worker is a role's workers as the configuration gives them: num-worker, tp, ep, dp-attn, and
// the engine limits its additional-settings set (0 when unset).
type worker struct {
	workers, tp, ep int
	dpAttn          bool
	// maxBatch and maxTokens are the role's PREFILL_ or DECODE_MAX_BATCH_SIZE and
	// MAX_NUM_TOKENS: the items of the GB200 TensorRT-LLM entries launched through Dynamo's
	// performance-sweep scripts (2025-12 on), which write them as each context or generation
	// server's max_batch_size and max_num_tokens.
	maxBatch, maxTokens int
	// nodes is the role's PREFILL_ or DECODE_NODES: the nodes its workers span, which the GB200
	// SGLang entries give in place of parallel degrees (their launch scripts run each worker
	// over all its GPUs); 0 when unset.
	nodes int
}

// tableItem is one line of a table: its fields, every one part of its identity.
type tableItem interface{ fields() []string }

// lines is items as table lines.
func lines(items []item) []tableItem {
	out := make([]tableItem, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

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
	out = append(out, it.recipe, strconv.Itoa(it.mtpDrafts))
	for _, n := range []int{it.prefill.maxBatch, it.prefill.maxTokens, it.decode.maxBatch, it.decode.maxTokens} {
		out = append(out, strconv.Itoa(n))
	}
	return append(out, strconv.FormatBool(it.perDecodeWorker), it.file, strconv.Itoa(it.prefill.nodes), strconv.Itoa(it.decode.nodes))
}

// source is one file of the InferenceX repository whose every version parse reads into items.
type source struct {
	path  string
	parse func(c commit, text []byte) ([]tableItem, error)
}

// span is an item and the versions of its file that listed it: from first to the one before
// until (nil while the newest version lists it).
type span struct {
	it    tableItem
	first commit
	until *commit
}

// history reads every version of src's file in repo, oldest first, into the items' spans, in the
// order each item first appeared.
func history(repo string, src source) ([]*span, error) {
	log, err := git(repo, "log", "--reverse", "--format=%H %cI", "--", src.path)
	if err != nil {
		return nil, err
	}
	var commits []commit
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		h, d, ok := strings.Cut(line, " ")
		if ok {
			commits = append(commits, commit{h, d})
		}
	}
	if len(commits) == 0 {
		return nil, fmt.Errorf("%s has no history of %s: -repo must be a clone or mirror of github.com/SemiAnalysisAI/InferenceX", repo, src.path)
	}
	open := map[string]*span{}
	var all []*span
	for _, c := range commits {
		// A commit that moved or deleted the file ends every item.
		text, err := git(repo, "show", c.hash+":"+src.path)
		if err != nil && !strings.Contains(err.Error(), "does not exist") {
			return nil, err
		}
		items, err := src.parse(c, []byte(text))
		if err != nil {
			return nil, fmt.Errorf("%s at %s: %w", src.path, c.hash, err)
		}
		seen := map[string]bool{}
		for _, it := range items {
			k := strings.Join(it.fields(), "\t")
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
	return all, nil
}

// run writes the table of the items of every version of each source's file, under head.
func run(repo, head string, sources ...source) error {
	var all []*span
	for _, src := range sources {
		s, err := history(repo, src)
		if err != nil {
			return err
		}
		all = append(all, s...)
	}
	return write(all, head)
}

// write writes spans as the table's lines under head; no span is an error.
func write(all []*span, head string) error {
	if len(all) == 0 {
		return fmt.Errorf("no version of %s lists a deployment of the kind asked for", configPath)
	}
	var b bytes.Buffer
	b.WriteString(head)
	for _, s := range all {
		until, untilDate := "", ""
		if s.until != nil {
			until, untilDate = s.until.hash, s.until.date
		}
		f := append([]string{s.first.hash, s.first.date, until, untilDate}, s.it.fields()...)
		b.WriteString(strings.Join(f, "\t"))
		b.WriteByte('\n')
	}
	_, err := os.Stdout.Write(b.Bytes())
	return err
}

// header describes the columns (tab-separated; lines starting with # are comments).
const header = `# InferenceX disaggregated deployments: every search-space item of an entry with disagg: true in
# .github/configs/nvidia-master.yaml of github.com/SemiAnalysisAI/InferenceX (and the GB200 ones
# runners/launch_gb200-nv.sh held before it: the file column), with the commit that first listed
# it (from_commit, from_date: committer date) and the first later commit that no longer did
# (until_commit, until_date; empty while the newest version read lists it).
# Written by sim/calibrate/ixtopogen from the repository's history; do not edit by hand.
# Columns: from_commit from_date until_commit until_date entry model_prefix runner precision
# framework image isl osl spec_decoding concurrencies prefill_workers prefill_tp prefill_ep
# prefill_dp_attn decode_workers decode_tp decode_ep decode_dp_attn recipe mtp_drafts
# prefill_max_batch prefill_max_tokens decode_max_batch decode_max_tokens
# conc_per_decode_worker file prefill_nodes decode_nodes
# mtp_drafts: an MTP item's draft tokens per decode round, from its DECODE_MTP_SIZE setting, the
# _mtpN part of its recipe's name, or the recipe's speculative settings as ixtopogen's table of
# srt-slurm recipes records them; 0 without MTP or when none of these gives it.
# prefill_max_batch ... decode_max_tokens: the item's PREFILL_MAX_BATCH_SIZE,
# PREFILL_MAX_NUM_TOKENS, DECODE_MAX_BATCH_SIZE and DECODE_MAX_NUM_TOKENS settings (each server's
# max_batch_size and max_num_tokens); 0 where the item sets none.
# conc_per_decode_worker: true when the benchmark ran each listed concurrency once per decode
# worker (its client's max-concurrency was the listed value times decode_workers): the items
# launched through Dynamo's TensorRT-LLM performance-sweep scripts of the branches whose bench.sh
# multiplies them (ixtopogen's perDecodeWorkerBranches).
# file: the file the item comes from: the configuration, or runners/launch_gb200-nv.sh for the
# GB200 TensorRT-LLM deployments that runner script held (as calls of Dynamo's submit_disagg.sh)
# before the configuration listed them; their prefill limits are those of the configuration's
# item of the same decode workers and concurrencies, which took them over.
`

// searchSpace calls item for every search-space item of the entries of one version of the
// configuration that keep accepts, in the file's order: the entry's name and node, and the
// item's ISL, OSL and node.
func searchSpace(text []byte, keep func(entry *yaml.Node) bool, item func(name string, entry *yaml.Node, isl, osl int, s *yaml.Node)) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		name, e := top.Content[i].Value, top.Content[i+1]
		if e.Kind != yaml.MappingNode || !keep(e) {
			continue
		}
		for _, slc := range child(e, "seq-len-configs").Content {
			isl, _ := strconv.Atoi(child(slc, "isl").Value)
			osl, _ := strconv.Atoi(child(slc, "osl").Value)
			for _, s := range child(slc, "search-space").Content {
				item(name, e, isl, osl, s)
			}
		}
	}
	return nil
}

// parse reads one version of the configuration: the disaggregated entries' search-space items,
// in the file's order.
func parse(text []byte) ([]item, error) {
	var out []item
	err := searchSpace(text, func(e *yaml.Node) bool { return child(e, "disagg").Value == "true" },
		func(name string, e *yaml.Node, isl, osl int, s *yaml.Node) {
			it := item{entry: name, modelPrefix: child(e, "model-prefix").Value, runner: child(e, "runner").Value,
				precision: child(e, "precision").Value, framework: child(e, "framework").Value, image: child(e, "image").Value,
				isl: isl, osl: osl, spec: "none"}
			if v := child(s, "spec-decoding").Value; v != "" {
				it.spec = v
			}
			it.concs = concurrencies(s)
			it.prefill, it.recipe, _ = role(child(s, "prefill"), "PREFILL")
			r2, decodeMTP := "", 0
			it.decode, r2, decodeMTP = role(child(s, "decode"), "DECODE")
			if it.recipe == "" {
				it.recipe = r2
			}
			if it.spec == "mtp" {
				it.mtpDrafts = mtpDrafts(decodeMTP, it.recipe)
			}
			if len(it.concs) == 0 || it.prefill.workers == 0 || it.decode.workers == 0 {
				return
			}
			it.file = configPath
			out = append(out, it)
		})
	return out, err
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

// role reads the prefill or decode mapping n of role ("PREFILL" or "DECODE"), the recipe its
// additional-settings name (CONFIG_FILE=...), if any, their DECODE_MTP_SIZE (0 when absent) and
// the role's <role>_MAX_BATCH_SIZE and <role>_MAX_NUM_TOKENS (worker.maxBatch, maxTokens) and
// <role>_NODES (worker.nodes).
func role(n *yaml.Node, role string) (w worker, recipe string, mtp int) {
	w.workers, _ = strconv.Atoi(child(n, "num-worker").Value)
	w.tp, _ = strconv.Atoi(child(n, "tp").Value)
	w.ep, _ = strconv.Atoi(child(n, "ep").Value)
	w.dpAttn = child(n, "dp-attn").Value == "true"
	for _, s := range child(n, "additional-settings").Content {
		k, v, _ := strings.Cut(s.Value, "=")
		switch k {
		case "CONFIG_FILE":
			recipe = v
		case "DECODE_MTP_SIZE":
			mtp, _ = strconv.Atoi(v)
		case role + "_MAX_BATCH_SIZE":
			w.maxBatch, _ = strconv.Atoi(v)
		case role + "_MAX_NUM_TOKENS":
			w.maxTokens, _ = strconv.Atoi(v)
		case role + "_NODES":
			w.nodes, _ = strconv.Atoi(v)
		}
	}
	return w, recipe, mtp
}

// mtpDrafts is an MTP item's draft tokens per decode round: its DECODE_MTP_SIZE (the GB200
// TensorRT-LLM items of 2025-12, whose launch scripts write it as num_nextn_predict_layers),
// else the N of its recipe file name's "_mtpN" part (TensorRT-LLM's srt-slurm recipes, e.g.
// ctx1_gen5_tep8_batch32_eplb0_mtp3.yaml), else srtSlurmMTP's entry for the recipe; 0 when
// none gives it.
func mtpDrafts(decodeMTPSize int, recipe string) int {
	if decodeMTPSize > 0 {
		return decodeMTPSize
	}
	base := path.Base(recipe)
	if i := strings.LastIndex(base, "_mtp"); i >= 0 {
		digits := base[i+len("_mtp"):]
		if j := strings.IndexAny(digits, "_."); j >= 0 {
			digits = digits[:j]
		}
		if n, err := strconv.Atoi(digits); err == nil && n > 0 {
			return n
		}
	}
	return srtSlurmMTP[recipe]
}

// srtSlurmMTP is the decode workers' draft tokens per round of the MTP recipes whose names do
// not give it, read by hand from the recipe files of github.com/NVIDIA/srt-slurm (the versions
// InferenceX ran: its sa-submission-q2-2026 branch at f61dbba8 for the items of 2026-04-19, the
// copies on main at 5063eb43 (2026-03-03) and 4a22a181 (2026-03-25) for earlier ones, every
// version of each file agreeing) and, for DeepSeek-V4, InferenceX's own copies under
// benchmarks/multi_node/srt-slurm-recipes/ at ef5dee44. SGLang's recipes run EAGLE over the
// model's NextN layer with speculative-eagle-topk 1: the drafts are speculative-num-steps
// (speculative-num-draft-tokens is one more, the verified root). An override name
// (file.yaml:override_X, file.yaml:zip_override_X[i]) is the file's named variant, resolved by
// srt-slurm's deep-merge rules.
var srtSlurmMTP = map[string]int{
	"recipes/b200-fp4/1k1k.yaml:zip_override_mtp_lowlat[0]":                   2,
	"recipes/b200-fp4/1k1k.yaml:zip_override_mtp_lowlat[1]":                   2,
	"recipes/b200-fp4/1k1k.yaml:zip_override_mtp_maxtpt[0]":                   2,
	"recipes/b200-fp4/1k1k.yaml:zip_override_mtp_maxtpt[1]":                   2,
	"recipes/b200-fp4/1k1k/mtp/low-latency-dep4-1p-tep8-5d.yaml":              2,
	"recipes/b200-fp4/1k1k/mtp/low-latency-dep4-1p-tep8-6d.yaml":              2,
	"recipes/b200-fp4/1k1k/mtp/max-tpt-dep4-1p-dep8-1d.yaml":                  2,
	"recipes/b200-fp4/1k1k/mtp/max-tpt-dep4-1p-dep8-2d.yaml":                  2,
	"recipes/b200-fp4/8k1k.yaml:override_mtp_tp4":                             2,
	"recipes/b200-fp4/8k1k.yaml:zip_override_mtp_lowlat[0]":                   2,
	"recipes/b200-fp4/8k1k.yaml:zip_override_mtp_lowlat[1]":                   2,
	"recipes/b200-fp4/8k1k.yaml:zip_override_mtp_lowlat[2]":                   2,
	"recipes/b200-fp4/8k1k/mtp/low-latency-dep4-1p-tep8-1d.yaml":              2,
	"recipes/b200-fp4/8k1k/mtp/low-latency-dep4-1p-tep8-5d.yaml":              2,
	"recipes/b200-fp4/8k1k/mtp/low-latency-dep4-2p-tep8-5d.yaml":              2,
	"recipes/b200-fp4/8k1k/mtp/low-latency-tp4-1p-tp8-1d.yaml":                2,
	"recipes/b200-fp8/1k1k.yaml:override_mtp_maxtpt_1p2d":                     1,
	"recipes/b200-fp8/1k1k.yaml:zip_override_mtp_lowlat[0]":                   2,
	"recipes/b200-fp8/1k1k.yaml:zip_override_mtp_lowlat[1]":                   2,
	"recipes/b200-fp8/1k1k.yaml:zip_override_mtp_maxtpt[1]":                   2,
	"recipes/b200-fp8/1k1k.yaml:zip_override_mtp_maxtpt[2]":                   2,
	"recipes/b200-fp8/1k1k/mtp/low-latency-tep8-1p1d.yaml":                    2,
	"recipes/b200-fp8/1k1k/mtp/low-latency-tep8-1p3d.yaml":                    2,
	"recipes/b200-fp8/1k1k/mtp/max-tpt-dep8-1p2d.yaml":                        1,
	"recipes/b200-fp8/1k1k/mtp/max-tpt-dep8-1p5d.yaml":                        2,
	"recipes/b200-fp8/1k1k/mtp/max-tpt-dep8-2p5d.yaml":                        2,
	"recipes/b200-fp8/8k1k/mtp/low-latency-tep8-1p1d.yaml":                    2,
	"recipes/b200-fp8/8k1k/mtp/low-latency-tep8-1p4d.yaml":                    2,
	"recipes/b200-fp8/8k1k/mtp/low-latency-tep8-1p6d.yaml":                    2,
	"recipes/b200-fp8/8k1k/mtp/max-tpt-dep8-1p1d.yaml":                        2,
	"recipes/b200-fp8/8k1k/mtp/max-tpt-dep8-2p1d.yaml":                        2,
	"recipes/b200-fp8/8k1k_mtp_lowlat_0.yaml":                                 2,
	"recipes/b200-fp8/8k1k_mtp_lowlat_1.yaml":                                 2,
	"recipes/b200-fp8/8k1k_mtp_lowlat_2.yaml":                                 2,
	"recipes/b200-fp8/8k1k_mtp_maxtpt_0.yaml":                                 2,
	"recipes/b200-fp8/8k1k_mtp_maxtpt_1.yaml":                                 2,
	"recipes/b200-fp8/8k1k_mtp_maxtpt_2.yaml":                                 2,
	"recipes/b200-fp8/8k1k_mtp_maxtpt_3.yaml":                                 2,
	"recipes/h100/1k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml":                    2,
	"recipes/h100/1k1k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml":                     2,
	"recipes/h100/1k8k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml":                    2,
	"recipes/h100/1k8k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml":                     2,
	"recipes/h100/8k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml":                    2,
	"recipes/h100/8k1k/mtp/h100-fp8-1p1d-max-tp-mtp.yaml":                     2,
	"recipes/h200/1k1k/bs256-1p6d-dep-mtp.yaml":                               2,
	"recipes/h200/1k1k/bs256-1p6d-tp-mtp.yaml":                                2,
	"recipes/h200/1k1k/low-latency-1p9d-mtp.yaml":                             2,
	"recipes/h200/8k1k/bs128-1p1d-dep-mtp.yaml":                               2,
	"recipes/h200/8k1k/bs16-1p3d-mtp.yaml":                                    2,
	"recipes/h200/8k1k/bs4-1p7d-mtp.yaml":                                     2,
	"recipes/h200/8k1k/bs64-2p3d-mtp.yaml":                                    2,
	"recipes/h200/8k1k/bs8-1p6d-mtp.yaml":                                     2,
	"recipes/trtllm/gb300-fp4/1k1k/mtp/ctx1_gen1_dep32_batch8_eplb0_mtp.yaml": 3,
	"recipes/vllm/deepseek-v4/8k1k/disagg-gb200-high-tpt-megamoe-mtp2.yaml":   2,
	"recipes/vllm/deepseek-v4/8k1k/disagg-gb200-low-latency-mtp2.yaml":        2,
	"recipes/vllm/deepseek-v4/8k1k/disagg-gb200-mid-curve-megamoe-mtp2.yaml":  2,
}

func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", append(gitDir(repo), args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// gitDir is the git option that selects repo: -C repo for a clone or worktree (repo/.git
// exists), --git-dir repo for a bare mirror.
func gitDir(repo string) []string {
	if _, err := os.Stat(repo + "/.git"); err == nil {
		return []string{"-C", repo}
	}
	return []string{"--git-dir", repo}
}
