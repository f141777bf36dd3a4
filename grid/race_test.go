//go:build race

package grid

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = true
