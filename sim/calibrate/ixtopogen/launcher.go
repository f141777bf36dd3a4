package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// launcherPath is InferenceX's GB200 runner script. Until the configuration listed the GB200
// deployments (2025-12-05, "multinode first class integration"), the script held the TensorRT-LLM
// ones itself, as calls of Dynamo's performance-sweep submit_disagg.sh per ISL/OSL and MTP mode.
const launcherPath = "runners/launch_gb200-nv.sh"

// perDecodeWorkerBranches are the branches of github.com/ai-dynamo/dynamo whose TensorRT-LLM
// performance-sweep bench.sh (components/backends/trtllm/performance_sweeps/scripts/bench.sh)
// runs each listed concurrency c at client max-concurrency c × the generation servers, the
// concurrency InferenceX records (utils/process_result.py reads the client's max_concurrency).
// InferenceX's DeepSeek-R1 GB200 items checked out release/0.5.1-rc0.20251105, and the file's rows
// of those runs carry the products (e.g. 564 = 141 × 4 decode workers, 102 = 34 × 3). Its
// gpt-oss-120b GB200 items checked out release/0.5.1-rc0.20260105, whose rows carry the listed
// values themselves (3072 on three decode workers, 16 on four; no product of a listed value
// matches them), so that branch is not here.
var perDecodeWorkerBranches = map[string]bool{"release/0.5.1-rc0.20251105": true}

// checkoutRE finds the Dynamo branch a script checks out.
var checkoutRE = regexp.MustCompile(`(?m)^\s*git checkout (\S+)`)

// runDisagg writes the disaggregated table: the configuration's items, each marked with whether
// its benchmark ran the listed concurrencies per decode worker, then the launcher's.
func runDisagg(repo string) error {
	branches := map[string]string{} // commit + script key → branch checked out ("" when none)
	cfg, err := history(repo, source{configPath, func(c commit, text []byte) ([]tableItem, error) {
		items, err := parse(text)
		for i := range items {
			items[i].perDecodeWorker = perDecodeWorkerBranches[scriptBranch(repo, c, items[i], branches)]
		}
		return lines(items), err
	}})
	if err != nil {
		return err
	}
	var listed []item
	for _, s := range cfg {
		listed = append(listed, s.it.(item))
	}
	launched, err := history(repo, source{launcherPath, func(_ commit, text []byte) ([]tableItem, error) {
		return lines(parseLauncher(string(text), listed)), nil
	}})
	if err != nil {
		return err
	}
	return write(append(cfg, launched...), header)
}

// scriptBranch is the Dynamo branch that the benchmark script of it, a TensorRT-LLM item without
// a recipe (launched through Dynamo's performance-sweep scripts), checks out at commit c: the
// script is the file under benchmarks/ named <model prefix>_<precision>_<runner>_<framework>
// (…_slurm.sh or .sh, wherever the commit keeps it). "" for other items, or when no such script
// or checkout is found (a warning on stderr). cache holds the answers by commit and script name.
func scriptBranch(repo string, c commit, it item, cache map[string]string) string {
	if it.framework != "dynamo-trt" || it.recipe != "" {
		return ""
	}
	name := strings.Join([]string{it.modelPrefix, it.precision, it.runner, it.framework}, "_")
	key := c.hash + " " + name
	if b, ok := cache[key]; ok {
		return b
	}
	cache[key] = ""
	files, err := git(repo, "ls-tree", "-r", "--name-only", c.hash, "--", "benchmarks")
	if err != nil {
		fmt.Fprintf(os.Stderr, "ixtopogen: %s at %s: %v\n", name, c.hash, err)
		return ""
	}
	for _, f := range strings.Split(files, "\n") {
		base := f[strings.LastIndex(f, "/")+1:]
		if base != name+"_slurm.sh" && base != name+".sh" {
			continue
		}
		text, err := git(repo, "show", c.hash+":"+f)
		if m := checkoutRE.FindStringSubmatch(text); err == nil && m != nil {
			cache[key] = m[1]
			return m[1]
		}
	}
	fmt.Fprintf(os.Stderr, "ixtopogen: no script of %s at %s checks out a Dynamo branch: its concurrencies are read as the client's\n", name, c.hash)
	return ""
}

// The launcher's TensorRT-LLM calls: submitRE one call of submit_disagg.sh (MTP mode, tep or dep,
// context servers, generation servers, generation TP, batch, max tokens, GPU memory fraction,
// MTP size, EPLB slots, concurrencies; the order its run_single reads them), seqLenRE the ISL/OSL
// branch the calls below it belong to.
var (
	submitRE = regexp.MustCompile(`^\s*\./submit_disagg\.sh\s+"mtp=(on|off)"\s+"(tep|dep)"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+"[\d.]+"\s+(\d+)\s+\d+\s+"([\d ]+)"`)
	seqLenRE = regexp.MustCompile(`(?i)"\$isl" = "(\d+)" \] && \[ "\$osl" = "(\d+)"`)
)

// The launcher's SGLang calls: sglangSubmitRE one call of Dynamo's SGLang submit_disagg.sh
// (prefill nodes, prefill workers, decode nodes, decode workers, extra frontends, ISL, OSL and
// the variable holding the concurrencies), listRE an assignment of such a list ("1024x2048").
var (
	sglangSubmitRE = regexp.MustCompile(`^\s*bash \./submit_disagg\.sh\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\$ISL\s+\$OSL\s+\$(\w+)`)
	listRE         = regexp.MustCompile(`^\s*(\w+)="(\d+(?:x\d+)*)"`)
)

// launcherServesSGLang marks the launcher's SGLang branch as serving DeepSeek-R1-0528 in FP8
// (its model path), the model every one of its SGLang calls runs.
const launcherServesSGLang = `/models/deepseek-r1-0528"`

// launcherServes is the text that marks the launcher's TensorRT-LLM branch as serving
// DeepSeek-R1 in FP4 (its served model name), the model every one of its calls runs.
const launcherServes = `SERVED_MODEL_NAME="deepseek-r1-fp4"`

// parseLauncher reads one version of the launcher: its SGLang calls (sglangLauncherItem) and its
// TensorRT-LLM calls of submit_disagg.sh as items of entry dsr1-fp4-gb200-dynamo-trt (the configuration's name for them from 2025-12-05): ctx
// context servers of one 4-GPU node each (TP 4, EP 4: Dynamo's script fixes the context servers'
// TP at a node), gen generation servers of TP and EP genTP, both roles attention data-parallel in
// dep mode (as the configuration's items that took the calls over give them), the generation
// servers' batch and token limits and MTP size; the prefill limits are those of the
// configuration's item (listed) of the same ISL/OSL, speculative decoding, concurrencies and
// workers, which took the call over (none when no item did). A version without the DeepSeek-R1
// FP4 branch, or whose branch checks out no Dynamo branch, holds no TensorRT-LLM item.
func parseLauncher(text string, listed []item) []item {
	isl, osl := 0, 0
	lists := map[string][]int{}
	var out []item
	m := checkoutRE.FindStringSubmatch(text)
	trt := strings.Contains(text, launcherServes) && m != nil
	for _, line := range strings.Split(text, "\n") {
		if s := seqLenRE.FindStringSubmatch(line); s != nil {
			isl, _ = strconv.Atoi(s[1])
			osl, _ = strconv.Atoi(s[2])
			continue
		}
		if l := listRE.FindStringSubmatch(line); l != nil {
			lists[l[1]] = numbers(strings.Split(l[2], "x"))
		}
		if s := sglangSubmitRE.FindStringSubmatch(line); s != nil && isl > 0 && strings.Contains(text, launcherServesSGLang) {
			out = append(out, sglangLauncherItem(s, isl, osl, lists))
		}
		f := submitRE.FindStringSubmatch(line)
		if f == nil || isl == 0 || !trt {
			continue
		}
		n := make([]int, 6)
		for i := range n {
			n[i], _ = strconv.Atoi(f[3+i])
		}
		it := item{entry: "dsr1-fp4-gb200-dynamo-trt", modelPrefix: "dsr1", runner: "gb200", precision: "fp4", framework: "dynamo-trt",
			isl: isl, osl: osl, spec: "none", perDecodeWorker: perDecodeWorkerBranches[m[1]], file: launcherPath,
			prefill: worker{workers: n[0], tp: 4, ep: 4, dpAttn: f[2] == "dep"},
			decode:  worker{workers: n[1], tp: n[2], ep: n[2], dpAttn: f[2] == "dep", maxBatch: n[3], maxTokens: n[4]}}
		if f[1] == "on" {
			it.spec, it.mtpDrafts = "mtp", n[5]
		}
		it.concs = numbers(strings.Fields(f[9]))
		it.prefill.maxBatch, it.prefill.maxTokens = prefillLimits(it, listed)
		out = append(out, it)
	}
	return out
}

// prefillLimits are the prefill max batch and tokens of the configuration's item that took over
// launcher item it; 0, 0 when none did (the launcher's calls of 2025-09, which Dynamo's scripts
// ran with their own defaults).
func prefillLimits(it item, listed []item) (batch, tokens int) {
	for _, l := range listed {
		if l.entry == it.entry && l.isl == it.isl && l.osl == it.osl && l.spec == it.spec && l.mtpDrafts == it.mtpDrafts &&
			slices.Equal(l.concs, it.concs) && l.decode == it.decode &&
			l.prefill.workers == it.prefill.workers && l.prefill.tp == it.prefill.tp && l.prefill.ep == it.prefill.ep && l.prefill.dpAttn == it.prefill.dpAttn {
			return l.prefill.maxBatch, l.prefill.maxTokens
		}
	}
	return 0, 0
}

// sglangLauncherItem is the launcher's SGLang call s (sglangSubmitRE's match) at isl/osl, its
// concurrencies the list its variable holds: DeepSeek-R1 FP8 under Dynamo's SGLang scripts, the
// prefill and decode workers over the nodes given, each with the configuration's placeholder
// degrees (tp 1, ep 1 with dp-attn) and its nodes: the scripts ran every worker attention
// data-parallel and expert-parallel over all its GPUs, as the entry that took the calls over
// (dsr1-fp8-gb200-dynamo-sglang, 2025-12-05) says in its comments.
func sglangLauncherItem(s []string, isl, osl int, lists map[string][]int) item {
	n := numbers(s[1:5])
	return item{entry: "dsr1-fp8-gb200-dynamo-sglang", modelPrefix: "dsr1", runner: "gb200", precision: "fp8", framework: "dynamo-sglang",
		isl: isl, osl: osl, spec: "none", concs: lists[s[5]], file: launcherPath,
		prefill: worker{workers: n[1], tp: 1, ep: 1, dpAttn: true, nodes: n[0]},
		decode:  worker{workers: n[3], tp: 1, ep: 1, dpAttn: true, nodes: n[2]}}
}

// numbers reads each of fields as an int (0 for one that is not).
func numbers(fields []string) []int {
	out := make([]int, len(fields))
	for i, f := range fields {
		out[i], _ = strconv.Atoi(f)
	}
	return out
}
