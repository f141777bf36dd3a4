package timing

import (
	"math"
	"testing"
)

func TestPolynomialReferenceValues(t *testing.T) {
	p := Polynomial{}
	// Prefill: one request, 1024 new tokens: 4.209989e-7·1024² + 1.518344e-2·1024 + 16.50142.
	b := &Batch{PrefillRequests: 1, PrefillTokens: 1024}
	if got, want := p.PrefillMs(b), 4.209989e-7*1024*1024+1.518344e-2*1024+16.50142; math.Abs(got-want) > 1e-12 || math.Abs(got-32.49) > 0.01 {
		t.Errorf("prefill(1024) = %v, want %v (≈32.49)", got, want)
	}
	// Integer means: 3 requests with 100, 101, 102 new tokens and contexts 0, 0, 1:
	// mean_isl = (303+1)/3 = 101, mean_prefix = 1/3 = 0, T = 3·101 = 303.
	b = &Batch{PrefillRequests: 3, PrefillTokens: 303, PrefillContextTokens: 1}
	if got, want := p.PrefillMs(b), 4.209989e-7*303*303+1.518344e-2*303+16.50142; got != want {
		t.Errorf("prefill integer means = %v, want %v", got, want)
	}
	if got := p.PrefillMs(&Batch{}); got != 0 {
		t.Errorf("no prefill = %v, want 0", got)
	}
	for _, c := range []struct {
		used, cap int
		want      float64
	}{
		{0, 100, 5.74}, {50, 100, -25.74*0.25 + 54.01*0.5 + 5.74}, {100, 100, 34.01}, {500, 100, 34.01}, {5, 0, 34.01},
	} {
		got := p.DecodeMs(&Batch{DecodeRequests: 1, DecodeKVTokens: c.used, KVCapacityTokens: c.cap})
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("decode(%d/%d) = %v, want %v", c.used, c.cap, got, c.want)
		}
	}
	if got := p.PassMs(&Batch{PrefillRequests: 1, PrefillTokens: 1024, DecodeRequests: 1, DecodeKVTokens: 0, KVCapacityTokens: 10}); math.Abs(got-(32.4907+5.74)) > 0.01 {
		t.Errorf("pass = %v, want prefill + decode ≈ 38.23", got)
	}
}

func TestFixed(t *testing.T) {
	f := Fixed{PrefillMs: 30, DecodeMs: 8}
	for _, c := range []struct {
		b    Batch
		want float64
	}{{Batch{}, 0}, {Batch{PrefillRequests: 2}, 30}, {Batch{DecodeRequests: 5}, 8}, {Batch{PrefillRequests: 1, DecodeRequests: 1}, 38}} {
		if got := f.PassMs(&c.b); got != c.want {
			t.Errorf("%+v: %v, want %v", c.b, got, c.want)
		}
	}
}

func TestLookupModelAliases(t *testing.T) {
	for _, id := range []string{"meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B", "nvidia/Llama-3.1-8B-Instruct-FP8"} {
		m, err := LookupModel(id)
		if err != nil || m.ID != "meta-llama/Llama-3.1-8B" {
			t.Errorf("%s: %v %v", id, m.ID, err)
		}
	}
	if _, err := LookupModel("acme/unknown-1B"); err == nil {
		t.Error("unknown model accepted")
	}
}
