package config

import (
	"slices"
	"testing"
)

// TestDecodeLoadProfile: a piecewise rate profile decodes on constant_rate and poisson loads, in
// requests or sessions per second after the source.
func TestDecodeLoadProfile(t *testing.T) {
	c := mustDecode(t, seedSynthetic,
		"traffic.load={type: poisson, profile: [{until_seconds: 600, requests_per_second: 2}, {until_seconds: 1200, requests_per_second: 80}]}")
	want := []LoadPhase{{UntilSeconds: 600, RequestsPerSecond: 2}, {UntilSeconds: 1200, RequestsPerSecond: 80}}
	if l := c.Traffic.Load; !slices.Equal(l.Profile, want) || l.Seed != 42 || l.RequestsPerSecond != 0 {
		t.Errorf("load = %+v, want profile %+v and seed 42", l, want)
	}
	c = mustDecode(t, seedSynthetic, append(setSession[:2:2],
		"traffic.load={type: constant_rate, profile: [{until_seconds: 10, sessions_per_second: 1}]}")...)
	if got := c.Traffic.Load.Profile; len(got) != 1 || got[0].Rate() != 1 {
		t.Errorf("session profile = %+v", got)
	}
}

// TestDecodeBadLoadProfiles: every mistake in a profile is exit 2 naming its field.
func TestDecodeBadLoadProfiles(t *testing.T) {
	cases := []struct {
		name string
		sets []string
		path string
		frag string
	}{
		{"rate beside profile", []string{"traffic.load={type: poisson, requests_per_second: 2, profile: [{until_seconds: 1, requests_per_second: 2}]}"},
			"traffic.load.requests_per_second", "remove requests_per_second or the profile"},
		{"empty profile", []string{"traffic.load={type: constant_rate, profile: []}"},
			"traffic.load.profile", "is empty: give at least one phase"},
		{"phase without rate", []string{"traffic.load={type: poisson, profile: [{until_seconds: 1}]}"},
			"traffic.load.profile[0].requests_per_second", "required"},
		{"phase with session rate", []string{"traffic.load={type: poisson, profile: [{until_seconds: 1, sessions_per_second: 1}]}"},
			"traffic.load.profile[0].sessions_per_second", "synthetic sources take requests_per_second"},
		{"ends not increasing", []string{"traffic.load={type: constant_rate, profile: [{until_seconds: 5, requests_per_second: 1}, {until_seconds: 5, requests_per_second: 2}]}"},
			"traffic.load.profile[1].until_seconds", "must be > the previous phase's until_seconds (5), got 5"},
		{"end zero", []string{"traffic.load={type: constant_rate, profile: [{until_seconds: 0, requests_per_second: 1}]}"},
			"traffic.load.profile[0].until_seconds", "must be > 0"},
		{"negative rate", []string{"traffic.load={type: constant_rate, profile: [{until_seconds: 1, requests_per_second: -1}]}"},
			"traffic.load.profile[0].requests_per_second", "must be > 0"},
		{"concurrency rejects profile", []string{"traffic.load={type: concurrency, profile: [{until_seconds: 1, requests_per_second: 1}]}"},
			"traffic.load", "does not accept [profile]"},
		{"per load unit stop", []string{"traffic.load={type: poisson, profile: [{until_seconds: 1, requests_per_second: 1}]}", "traffic.stop={requests_per_load_unit: 10}"},
			"traffic.stop.requests_per_load_unit", "no single load unit"},
	}
	for _, tc := range cases {
		errs := decodeErrs(t, seedSynthetic, tc.sets...)
		if findErr(errs, tc.path, tc.frag) == nil {
			t.Errorf("%s: want %s: %q, got:\n%v", tc.name, tc.path, tc.frag, errs)
		}
	}
}
