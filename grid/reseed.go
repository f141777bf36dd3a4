package grid

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/servesweep/servesweep/sim/config"
)

// Reseeded returns a copy of p whose simulation draws its random numbers from other seeds: every
// seed its config sets or defaults that moves its simulation — traffic.source.seed of a source
// that draws (lengths from a distribution, a mixture's picks, session think times with a
// spread; sourceDraws), traffic.load.seed of a poisson load (arrival gaps),
// engine.speculation.seed (draft acceptance) and router.seed of a router that draws (kv_router's
// ties and softmin samples, the random policy's picks, over more than one worker or rank:
// routerDraws) — moved up by offset (> 0; down by it where up would pass the field's largest
// value). The copy keeps p's ID and every other field; its YAML and Config are re-read from the
// edited config. ok is false, and q nil, when no such seed moves the simulation (fixed lengths or
// a trace, at a concurrency, a fixed rate or the trace's timestamps, without speculative
// decoding, placed by a router that draws nothing). Errors: offset 0, p's YAML cannot be re-read,
// or the edited config does not decode.
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
	// move is seed moved by offset within [0, limit].
	move := func(seed, limit uint64) uint64 {
		if seed > limit-offset {
			return seed - offset
		}
		return seed + offset
	}
	// set gives key seed in the mapping at path under root the value seed, adding the key when
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
	for _, seed := range DrawingSeeds(cfg) {
		var err error
		switch seed {
		case SeedSource:
			err = set(move(cfg.Traffic.Source.DrawSeed(), math.MaxInt64), "traffic", "source")
		case SeedLoad:
			err = set(move(cfg.Traffic.Load.Seed, math.MaxUint64), "traffic", "load")
		case SeedSpeculation:
			err = set(move(cfg.Engine.Speculation.Seed, math.MaxUint64), "engine", "speculation")
		case SeedRouter:
			err = set(move(cfg.Router.RandomSeed(), math.MaxUint64), "router")
		}
		if err != nil {
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

// The seeds a simulation may draw from, by config path (DrawingSeeds).
const (
	SeedSource      = "traffic.source.seed"
	SeedLoad        = "traffic.load.seed"
	SeedSpeculation = "engine.speculation.seed"
	SeedRouter      = "router.seed"
)

// DrawingSeeds lists the seeds c's simulation draws from, set or default, in the order
// SeedSource (a source that draws: sourceDraws), SeedLoad (a poisson load), SeedSpeculation
// (speculative decoding) and SeedRouter (a router that draws: routerDraws); none when it draws
// nothing. They are the seeds Point.Reseeded moves.
func DrawingSeeds(c *config.Config) []string {
	var out []string
	if sourceDraws(&c.Traffic.Source) {
		out = append(out, SeedSource)
	}
	if c.Traffic.Load.Type == config.LoadPoisson {
		out = append(out, SeedLoad)
	}
	if c.Engine.Speculation != nil {
		out = append(out, SeedSpeculation)
	}
	if routerDraws(c) {
		out = append(out, SeedRouter)
	}
	return out
}

// routerDraws reports whether c's router draws from router.seed: its policy is kv_router or
// random and it places requests over more than one worker or attention-DP rank of a role (or the
// planner may add workers). A router over one slot has nothing to choose.
func routerDraws(c *config.Config) bool {
	if p := c.Router.Policy; p != config.PolicyKVRouter && p != config.PolicyRandom {
		return false
	}
	return c.Planner.Settings().Enabled || !SingleWorker(c)
}

// sourceDraws reports whether source s draws from its seed: a synthetic source with a length
// distribution, a synthetic-session source with one or with think times that spread
// (inter_turn_delay_stddev_ms > 0), a mixture of more than one component or of one that draws.
// A distribution that can give one value only (a uniform one with min = max, an empirical one of
// one value) draws nothing.
func sourceDraws(s *config.Source) bool {
	switch s.Type {
	case config.SourceSynthetic:
		return varies(s.InputTokensDist) || varies(s.OutputTokensDist)
	case config.SourceSyntheticSession:
		return varies(s.NewInputTokensPerTurnDist) || varies(s.OutputTokensPerTurnDist) ||
			s.Session != nil && s.Session.InterTurnDelayStddevMs > 0
	case config.SourceMixture:
		if len(s.Components) > 1 {
			return true
		}
		for _, c := range s.Components {
			if c.Source != nil && sourceDraws(c.Source) {
				return true
			}
		}
	}
	return false
}

// varies reports whether distribution d (nil: a fixed count) can draw more than one value.
func varies(d *config.Distribution) bool {
	switch {
	case d == nil:
		return false
	case d.Distribution == config.DistUniform:
		return d.Max > d.Min
	case d.Distribution == config.DistEmpirical:
		return len(slices.Compact(slices.Sorted(slices.Values(d.Values)))) > 1
	}
	return d.Stddev > 0 && (d.Max == 0 || d.Max > d.Min)
}
