package timing

// CalibratedEfficiency returns the Efficiency factors fitted on measured deployments (see the
// provenance below). It is a function, not a variable, so no caller can change the defaults.
func CalibratedEfficiency() Efficiency {
	return Efficiency{
		GEMM:               0.4615,
		Attention:          0.65,
		Memory:             0.85,
		QuantizedWeights:   0.8,
		Link:               0.4142,
		LinkLatencyUs:      7.692,
		LayerOverheadUs:    20,
		PassOverheadMs:     1.538,
		SequenceOverheadUs: 16.9,
	}
}
