//go:build !race

package calibrate

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = false
