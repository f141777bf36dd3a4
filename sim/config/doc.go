// Package config is the prediction configuration of servesweep: the DynoSim prediction YAML
// (dynosim-spec.md §3) as Go types, and the one place that parses it, applies --set overrides,
// fills in defaults and validates it.
//
// Decode and LoadFile turn YAML into a Config; every problem of a document is collected and
// returned at once as Errors, each naming the file, the full dotted field path and what would
// be valid. A Config built by hand must pass Validate before it is simulated (package sim).
// The bounds on the size of one simulation (MaxRequests, MaxTokensPerRequest, ...) live here
// because validation enforces them.
package config
