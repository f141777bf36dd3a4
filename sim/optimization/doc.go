// Package optimization holds the vocabulary of a sweep spec's optimization section that both
// the grid (which parses the spec) and the results (which rank the points) speak: the targets
// of optimization.target, the Pareto objectives and their directions, the candidate settings
// (Settings) and the capacity search (CapacitySearch). It sits under sim so that grid and
// results, which must not import each other, can share it; it simulates nothing and depends on
// no other package of the module.
//
// Which metric names an objective may take is the results table's business (the numeric
// columns of results.parquet, results.CheckMetric): this package checks only targets and
// directions, and grid takes the metric check as a value.
package optimization
