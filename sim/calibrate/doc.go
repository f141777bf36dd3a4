// Package calibrate compares servesweep's `default` timing model with measured GPU deployments
// and fits its efficiency factors.
//
// Start with Validate: it reads rows of a measured-deployments CSV (ReadCSV, the format of
// measured_dense_calibration.csv), turns each into a config.Config (PlanRow: the row's model, GPU,
// precision and worker shape, the server flags it ran with, and the benchmark client that
// measured it), runs it with sim.Run and reports predicted against measured mean TTFT and mean
// TPOT per row, per (model, system, backend) group, per source and overall, and the decision
// servesweep would make from the predictions (Decide: the regret of its pick over a ladder of
// SLAs). Fit tunes timing.Efficiency (all of it but ExpertGEMM, MLAAttention, MLAPrefillTokenPairs, Memory and FP4Memory, which come
// from the op database's kernel measurements, QuantizedMemory, fixed at 1, and
// MoELayerOverheadUs and SGLangMoEPrefillScale, chosen on the MoE file) and the front-end time on the same rows by
// coordinate descent; the shipped numbers live in timing.CalibratedEfficiency and
// timing.CalibratedFrontendOverheadMs (predict's default engine.frontend.overhead_ms), with their
// provenance; the hand-off latency of disaggregated rows (timing.CalibratedKVTransferLatencyMs,
// predict's default engine.kv_transfer.latency_ms), MoELayerOverheadUs and SGLangMoEPrefillScale were chosen leaving one
// GPU out on the MoE file (the tests of moe_overhead_test.go, -args -moe-loo). Holdout scores
// them on rows they were not fitted on.
//
// Every simulation is a predict run of a config a user can write (Plan.YAML; `validate
// --explain LINE` prints it), so the timing model, the front end and the scheduler that validate
// scores are the ones predict and sweep run. Each row is simulated as it was benchmarked
// (HarnessFor): the rows of SemiAnalysis InferenceX (source inferencex) under its public client
// (InferenceXHarness: lengths uniform in [int(0.8 L), L], 10 × concurrency requests, the first
// wave at once, means over every request) and the server flags its scripts set on the row's date
// (InferenceXServerFlags); rows of an unpublished harness under one documented assumption
// (AssumedHarness), scored per source and never mixed into the headline figures. No fitted term
// stands in for how a row was measured.
package calibrate
