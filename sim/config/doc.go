// Package config is the prediction configuration of servesweep: the DynoSim prediction YAML
// (dynosim-spec.md §3) as Go types, and the one place that parses it, applies --set overrides,
// fills in defaults and validates it.
//
// Each field is defined once, by its Go field and struct tags in config.go: its YAML key, kind,
// default, enum, range, size bound, the tagged-union variants that accept it, and whether a sweep
// may search it (schema.go lists the tag vocabulary). One walker over the yaml.Node tree
// (decode.go), one defaults step (defaults.go) and one validation pass (validate.go) read those
// tags; Fields and Lookup expose them, and package grid places search domains on the fields
// tagged sweep.
//
// Decode and LoadFile turn YAML into a Config; every problem of a document is collected and
// returned at once as Errors, each naming the file, the full dotted field path and what would
// be valid. A caller that knows other constructs of the same YAML (servesweep sweep's search
// domains, presets, `auto`) names them through a Marker (WithMarker). A Config built by hand must
// pass Validate before it is simulated (package sim). The bounds on the size of one simulation
// (MaxRequests, MaxTokensPerRequest, ...) live here because validation enforces them.
package config
