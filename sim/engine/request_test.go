package engine

import (
	"testing"
	"unsafe"
)

// A Request is 4 cache lines, and the fields a pass reads or writes of every running request
// (plainDecode, registerFull, Complete's fast path, steady runs) lie within its first 64 bytes,
// the lease's address and length included: a request array that starts on a cache line costs
// one line per running request and pass.
func TestRequestHotFieldsShareACacheLine(t *testing.T) {
	var r Request
	if n := unsafe.Sizeof(r); n != 256 {
		t.Errorf("a Request is %d bytes, want 256", n)
	}
	hot := map[string]uintptr{
		"PromptLen": unsafe.Offsetof(r.PromptLen) + 4, "MaxOutput": unsafe.Offsetof(r.MaxOutput) + 4,
		"Generated": unsafe.Offsetof(r.Generated) + 4, "NumComputed": unsafe.Offsetof(r.NumComputed) + 4,
		"numRegistered": unsafe.Offsetof(r.numRegistered) + 4, "FullBlocks": unsafe.Offsetof(r.FullBlocks) + 4,
		"lastPass": unsafe.Offsetof(r.lastPass) + 4, "runFirst": unsafe.Offsetof(r.runFirst) + 4,
		"drafts": unsafe.Offsetof(r.drafts) + 4, "Status": unsafe.Offsetof(r.Status) + 1,
		"LastTokenMs": unsafe.Offsetof(r.LastTokenMs) + 8, "Blocks (address and length)": unsafe.Offsetof(r.Blocks) + 16,
	}
	for name, end := range hot {
		if end > 64 {
			t.Errorf("%s ends at byte %d of a Request, past its first cache line", name, end)
		}
	}
}
