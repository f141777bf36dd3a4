package grid

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/servesweep/servesweep/sim/config"
)

// Reseeded returns a copy of p whose simulation draws its random numbers from other seeds:
// every seed its config sets or defaults — traffic.source.seed of a synthetic,
// synthetic-session or mixture source (prompt and output lengths, mixture picks, think times),
// traffic.load.seed of a poisson load (arrival gaps) and engine.speculation.seed (draft
// acceptance) — moved up by offset (> 0). The copy keeps p's ID and every other field; its YAML
// and Config are re-read from the edited config. ok is false, and q nil, when the config draws
// nothing at random (a trace at a concurrency or a fixed rate, without speculative decoding):
// no seed moves such a simulation. Errors: offset 0, p's YAML cannot be re-read, or the edited
// config does not decode.
func (p *Point) Reseeded(offset uint64) (q *Point, ok bool, err error) {
	if offset == 0 {
		return nil, false, fmt.Errorf("point %s: a seed offset must be > 0", p.ID)
	}
	cfg := p.Config
	var doc yaml.Node
	if err := yaml.Unmarshal(p.YAML, &doc); err != nil || len(doc.Content) == 0 {
		return nil, false, fmt.Errorf("point %s: cannot re-read its config: %v", p.ID, err)
	}
	root := doc.Content[0]
	moved := false
	// set gives key in the mapping at path under root the value seed, adding the key when
	// absent; a missing mapping is a config the point's own decode would not have produced.
	set := func(seed uint64, path ...string) error {
		m := root
		for _, k := range path {
			if m = child(m, k); m == nil || m.Kind != yaml.MappingNode {
				return fmt.Errorf("point %s: its config has no %s mapping to re-seed", p.ID, path[len(path)-1])
			}
		}
		v := &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatUint(seed, 10)}
		if old := child(m, "seed"); old != nil {
			*old = *v
		} else {
			m.Content = append(m.Content, scalar("!!str", "seed"), v)
		}
		moved = true
		return nil
	}
	switch cfg.Traffic.Source.Type {
	case config.SourceSynthetic, config.SourceSyntheticSession, config.SourceMixture:
		if err := set(cfg.Traffic.Source.DrawSeed()+offset, "traffic", "source"); err != nil {
			return nil, false, err
		}
	}
	if cfg.Traffic.Load.Type == config.LoadPoisson {
		if err := set(cfg.Traffic.Load.Seed+offset, "traffic", "load"); err != nil {
			return nil, false, err
		}
	}
	if s := cfg.Engine.Speculation; s != nil {
		if err := set(s.Seed+offset, "engine", "speculation"); err != nil {
			return nil, false, err
		}
	}
	if !moved {
		return nil, false, nil
	}
	data, err := marshal(root)
	if err != nil {
		return nil, false, err
	}
	c, err := config.Decode(data, "point "+p.ID, nil, config.WithMarker(ConcreteMarker))
	if err != nil {
		return nil, false, err
	}
	cp := *p
	cp.Config, cp.YAML = c, data
	return &cp, true, nil
}
