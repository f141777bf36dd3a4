package main

import "testing"

// mtpDrafts: DECODE_MTP_SIZE first, then the recipe name's _mtpN, then the hand-read recipe
// table; 0 when none gives it.
func TestMTPDrafts(t *testing.T) {
	for _, c := range []struct {
		size   int
		recipe string
		want   int
	}{
		{2, "", 2},
		{1, "recipes/trtllm/b200-fp8/8k1k/mtp/ctx2_gen1_dep8_batch32_eplb0_mtp3_288.yaml", 1},
		{0, "recipes/trtllm/b200-fp8/8k1k/mtp/ctx2_gen1_dep8_batch32_eplb0_mtp3_288.yaml", 3},
		{0, "recipes/trtllm/h200/1k1k/mtp/c8_ctx1_gen11_tep8_batch128_eplb0_mtp1.yaml", 1},
		{0, "recipes/trtllm/gb300-fp4/1k1k/mtp/ctx1_gen1_dep32_batch8_eplb0_mtp.yaml", 3},
		{0, "recipes/b200-fp8/1k1k/mtp/max-tpt-dep8-1p2d.yaml", 1},
		{0, "recipes/b200-fp8/1k1k.yaml:zip_override_mtp_lowlat[0]", 2},
		{0, "recipes/unknown/mtp.yaml", 0},
		{0, "", 0},
	} {
		if got := mtpDrafts(c.size, c.recipe); got != c.want {
			t.Errorf("mtpDrafts(%d, %q) = %d, want %d", c.size, c.recipe, got, c.want)
		}
	}
}
