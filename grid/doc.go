// Package grid turns a sweep spec into the concrete points a sweep simulates. It owns the spec
// format (a DynoSim prediction YAML whose fields may hold {choices: [...]} or {range: {...}}
// search domains, dynosim-spec.md §3.8, plus the optimization and optimizer sections of §3.7),
// domain validation, the Cartesian expansion in a stable order, the filters (schema and
// cross-field rules via config.Decode, the GPU budget, duplicates), stable point IDs, and the grid
// and random optimizers. It runs no simulation.
//
// Which fields take a domain, and what each value must be, come from package config: the fields
// whose struct tags say sweep (config.Fields, config.Lookup). The messages about sweep constructs
// found in a concrete config (a domain, a preset, `auto`, the optimization sections) are grid's
// too: ConcreteMarker, which servesweep predict and every point's decode pass to config.Decode.
//
// Start with Parse (or Load), then Spec.Expand, which returns the selected Points in
// enumeration order (Point.Index). For a sweep run as shards of a cluster job,
// Expansion.ShardPoints picks the points of one shard by a hash of each point ID (ShardOf, so the
// assignment does not depend on the spec's order) and Expansion.SpecHash identifies the expanded
// sweep, so that parts of different specs are never merged. A large grid is expanded from
// templates (template.go: one decoded config per branch of the non-numeric domains, each point's
// numbers set in place and its ID spliced into the template's canonical JSON), with decoding each
// point's YAML tree (Spec.point) as the fallback and the reference the tests hold it to.
//
// Choices made where the reference leaves room (documented for users in docs/sweep.md):
//   - Only the grid (exhaustive) and random (max_trials valid points, seeded) algorithms exist;
//     bayesian is refused.
//   - A linear range needs step (also for float fields); a log range doubles from min to max.
//   - When engine.mode is a domain, a point keeps only the worker roles of its mode (aggregated
//     points also drop engine.kv_transfer) and the other roles' domains do not multiply its
//     branch; when router.policy is a domain, points of a policy other than kv_router drop the
//     kv_router knobs (overlap_score_credit, prefill_load_scale, temperature,
//     prefill_load_model) and their domains, and points of round_robin and least_loaded the
//     seed (which kv_router and random take). A worker role or engine.kv_transfer that no mode of
//     the grid uses (a concrete engine.mode, or a domain of one mode) is dropped from every
//     point with a warning (Spec.unusedSectionWarning): predict refuses it on such a config.
//   - ${NAME} in a string value is replaced by the environment variable NAME (an unset or empty
//     variable is an error naming the field), after --set overrides are applied.
package grid
