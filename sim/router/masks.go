package router

import "github.com/servesweep/servesweep/sim/blockmap"

// slotMasks is the overlap index: block key → bitmask of the slots caching it. A router of at
// most 8 slots keeps 8-bit masks (narrow), a larger one 64-bit masks (wide), so a workload's
// dense shared-block ids cost 1 byte each instead of 8 for the common small deployment. Exactly
// one of the two tables is set.
type slotMasks struct {
	narrow *blockmap.Table[uint8]
	wide   *blockmap.Table[uint64]
}

// narrowSlots is the most slots whose masks are narrow (8 bits).
const narrowSlots = 8

// newSlotMasks returns an empty index for slots slots (1..MaxSlots), dense for keys below dense,
// or with a ring of ringSlots slots when ringSlots > 0 (blockmap.Table.ResetRing); its masks are
// narrow for at most narrowSlots slots unless wide is set (the reference the narrow ones must
// match).
func newSlotMasks(slots, dense, ringSlots int, wide bool) *slotMasks {
	if slots <= narrowSlots && !wide {
		return &slotMasks{narrow: newMaskTable[uint8](dense, ringSlots)}
	}
	return &slotMasks{wide: newMaskTable[uint64](dense, ringSlots)}
}

// newMaskTable returns an empty table of slot masks, dense below dense or a ring of ringSlots
// slots when ringSlots > 0.
func newMaskTable[M uint8 | uint64](dense, ringSlots int) *blockmap.Table[M] {
	t := new(blockmap.Table[M])
	if ringSlots > 0 {
		t.ResetRing(ringSlots)
	} else {
		t.Reset(dense)
	}
	return t
}

// get is the mask of the slots caching k (0: none).
func (m *slotMasks) get(k uint64) uint64 {
	if m.narrow != nil {
		return uint64(m.narrow.Get(k))
	}
	return m.wide.Get(k)
}

// set marks k cached on slot.
func (m *slotMasks) set(k uint64, slot int) {
	if m.narrow != nil {
		setSlot(m.narrow, k, slot)
	} else {
		setSlot(m.wide, k, slot)
	}
}

// unset marks k no longer cached on slot, dropping the key once no slot caches it.
func (m *slotMasks) unset(k uint64, slot int) {
	if m.narrow != nil {
		unsetSlot(m.narrow, k, slot)
	} else {
		unsetSlot(m.wide, k, slot)
	}
}

func setSlot[M uint8 | uint64](t *blockmap.Table[M], k uint64, slot int) {
	*t.Ptr(k) |= 1 << uint(slot)
}

func unsetSlot[M uint8 | uint64](t *blockmap.Table[M], k uint64, slot int) {
	if v := t.Ptr(k); *v != 0 {
		*v &^= 1 << uint(slot)
	}
	t.Clean(k)
}

// ringSlots is the size of the index's ring (0 when it has none).
func (m *slotMasks) ringSlots() int {
	if m.narrow != nil {
		return m.narrow.RingSlots()
	}
	return m.wide.RingSlots()
}

// len counts the keys the index holds.
func (m *slotMasks) len() int {
	if m.narrow != nil {
		return m.narrow.Len()
	}
	return m.wide.Len()
}
