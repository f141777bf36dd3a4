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

// narrowSlots is the most slots whose masks are narrow (8 bits); tests set it to 0 to give a
// small router wide masks, the reference the narrow ones must match.
var narrowSlots = 8

// newSlotMasks returns an empty index for slots slots (1..MaxSlots), dense for keys below dense,
// or with a ring of ringSlots slots when ringSlots > 0 (blockmap.Table.ResetRing).
func newSlotMasks(slots, dense, ringSlots int) *slotMasks {
	m := &slotMasks{}
	if slots <= narrowSlots {
		m.narrow = new(blockmap.Table[uint8])
		if ringSlots > 0 {
			m.narrow.ResetRing(ringSlots)
		} else {
			m.narrow.Reset(dense)
		}
		return m
	}
	m.wide = new(blockmap.Table[uint64])
	if ringSlots > 0 {
		m.wide.ResetRing(ringSlots)
	} else {
		m.wide.Reset(dense)
	}
	return m
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
		*m.narrow.Ptr(k) |= 1 << uint(slot)
		return
	}
	*m.wide.Ptr(k) |= 1 << uint(slot)
}

// unset marks k no longer cached on slot, dropping the key once no slot caches it.
func (m *slotMasks) unset(k uint64, slot int) {
	if m.narrow != nil {
		if v := m.narrow.Ptr(k); *v != 0 {
			*v &^= 1 << uint(slot)
		}
		m.narrow.Clean(k)
		return
	}
	if v := m.wide.Ptr(k); *v != 0 {
		*v &^= 1 << uint(slot)
	}
	m.wide.Clean(k)
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
