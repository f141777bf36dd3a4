//go:build !race

package metrics

// raceEnabled reports that the tests run under the race detector (where sync.Pool drops a
// quarter of what it is given, at random).
const raceEnabled = false
