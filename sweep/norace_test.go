//go:build !race

package sweep

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = false
