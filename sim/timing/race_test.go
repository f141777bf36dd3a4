//go:build race

package timing

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = true
