package metrics

import "testing"

// TestMeetsBoundAbsorbsRoundingOfAbsoluteTimes: a request arriving at 4,085.6 ms whose first
// token comes 15 ms later has a computed TTFT of 15.000000000000455 ms, which meets a 15 ms
// bound; 15.0001 ms does not, nor does anything 2e-9 relative above the bound.
func TestMeetsBoundAbsorbsRoundingOfAbsoluteTimes(t *testing.T) {
	arrival := 4085.6
	ttft := (arrival + 15) - arrival
	if ttft == 15 {
		t.Fatalf("the rounding case is gone: (%v + 15) − %v = 15 exactly", arrival, arrival)
	}
	for _, c := range []struct {
		v, b float64
		want bool
	}{
		{ttft, 15, true},
		{15, 15, true},
		{14.9, 15, true},
		{15.0001, 15, false},
		{15 * (1 + 2e-9), 15, false},
		{1000 * (1 + 0.5e-9), 1000, true},
	} {
		if got := MeetsBound(c.v, c.b); got != c.want {
			t.Errorf("MeetsBound(%v, %v) = %v, want %v", c.v, c.b, got, c.want)
		}
	}
}
