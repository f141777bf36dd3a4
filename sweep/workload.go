package sweep

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// WorkloadCache builds the workload of each distinct traffic section once and parses each trace
// file once, so the runs of a sweep share them read-only (pass the result as sim.Options.Workload).
// It is safe for concurrent use. The zero value is not usable; call NewWorkloadCache.
type WorkloadCache struct {
	mu        sync.Mutex
	workloads map[string]*workloadEntry
	traces    map[string]*traceEntry
}

type workloadEntry struct {
	once sync.Once
	wl   *traffic.Workload
	err  error
}

type traceEntry struct {
	once  sync.Once
	trace *traffic.Trace
	err   error
}

// NewWorkloadCache returns an empty cache.
func NewWorkloadCache() *WorkloadCache {
	return &WorkloadCache{workloads: map[string]*workloadEntry{}, traces: map[string]*traceEntry{}}
}

// Workload returns the workload sim.BuildWorkload builds for cfg, building it on the first request
// for an equal traffic section. A trace is parsed once per (format, paths, trace block size)
// however many traffic sections (loads, speedups) use it. Errors are those of sim.BuildWorkload (a
// bad trace line is a *traffic.TraceError), returned again for every config with that traffic
// section.
func (c *WorkloadCache) Workload(cfg *config.Config) (*traffic.Workload, error) {
	key, err := json.Marshal(cfg.Traffic)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	e := c.workloads[string(key)]
	if e == nil {
		e = &workloadEntry{}
		c.workloads[string(key)] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.wl, e.err = c.build(cfg) })
	return e.wl, e.err
}

// build is sim.BuildWorkload with trace rows from the cache.
func (c *WorkloadCache) build(cfg *config.Config) (*traffic.Workload, error) {
	src := &cfg.Traffic.Source
	if src.Type != config.SourceTrace || len(src.Paths) == 0 {
		return sim.BuildWorkload(cfg)
	}
	key := fmt.Sprintf("%s\x00%d\x00%s", src.Format, src.BlockSize, strings.Join(src.Paths, "\x00"))
	c.mu.Lock()
	t := c.traces[key]
	if t == nil {
		t = &traceEntry{}
		c.traces[key] = t
	}
	c.mu.Unlock()
	t.once.Do(func() { t.trace, t.err = sim.LoadTrace(cfg) })
	if t.err != nil {
		return nil, t.err
	}
	return sim.TraceWorkload(cfg, t.trace)
}

// TraceParses reports how many trace files the cache has parsed (for tests and diagnostics).
func (c *WorkloadCache) TraceParses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.traces)
}

// Build builds the workload of cfg without keeping it (a capacity search's probes each have
// their own load, used once), reading trace files through the cache.
func (c *WorkloadCache) Build(cfg *config.Config) (*traffic.Workload, error) {
	return c.build(cfg)
}
