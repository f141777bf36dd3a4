//go:build !race

package opdb

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = false
