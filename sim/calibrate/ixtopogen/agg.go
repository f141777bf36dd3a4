package main

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// aggItem is one search-space item of a single-node entry: TP GPUs of one node, the experts
// split over EP of them, attention data-parallel when dpAttn.
type aggItem struct {
	entry, modelPrefix, runner, precision, framework, image string
	isl, osl                                                int
	spec                                                    string
	concs                                                   []int
	tp, ep                                                  int
	dpAttn                                                  bool
}

func (it aggItem) fields() []string {
	cs := make([]string, len(it.concs))
	for i, c := range it.concs {
		cs[i] = strconv.Itoa(c)
	}
	return []string{it.entry, it.modelPrefix, it.runner, it.precision, it.framework, it.image,
		strconv.Itoa(it.isl), strconv.Itoa(it.osl), it.spec, strings.Join(cs, ","),
		strconv.Itoa(it.tp), strconv.Itoa(it.ep), strconv.FormatBool(it.dpAttn)}
}

// aggHeader describes the single-node table's columns.
const aggHeader = `# InferenceX single-node deployments: every search-space item of an entry marked neither
# disagg nor multinode in .github/configs/nvidia-master.yaml of
# github.com/SemiAnalysisAI/InferenceX, with the commit that first listed it (from_commit,
# from_date: committer date) and the first later commit that no longer did (until_commit,
# until_date; empty while the newest version read lists it).
# Written by sim/calibrate/ixtopogen -agg from the repository's history; do not edit by hand.
# Columns: from_commit from_date until_commit until_date entry model_prefix runner precision
# framework image isl osl spec_decoding concurrencies tp ep dp_attn
# ep is 1 where the item gives none; dp_attn is false where it gives none.
`

// parseAgg reads one version of the configuration: the single-node entries' search-space items,
// in the file's order. An item without a TP or a concurrency is left out.
func parseAgg(text []byte) ([]tableItem, error) {
	var out []tableItem
	single := func(e *yaml.Node) bool {
		return child(e, "disagg").Value != "true" && child(e, "multinode").Value != "true"
	}
	err := searchSpace(text, single, func(name string, e *yaml.Node, isl, osl int, s *yaml.Node) {
		it := aggItem{entry: name, modelPrefix: child(e, "model-prefix").Value, runner: child(e, "runner").Value,
			precision: child(e, "precision").Value, framework: child(e, "framework").Value, image: child(e, "image").Value,
			isl: isl, osl: osl, spec: "none", ep: 1}
		if v := child(s, "spec-decoding").Value; v != "" {
			it.spec = v
		}
		it.concs = concurrencies(s)
		it.tp, _ = strconv.Atoi(child(s, "tp").Value)
		if v, err := strconv.Atoi(child(s, "ep").Value); err == nil {
			it.ep = v
		}
		it.dpAttn = child(s, "dp-attn").Value == "true"
		if it.tp >= 1 && len(it.concs) > 0 {
			out = append(out, it)
		}
	})
	return out, err
}
