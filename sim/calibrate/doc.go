// Package calibrate compares servesweep's `default` timing model with measured GPU deployments
// and fits its efficiency factors.
//
// Start with Validate: it reads rows of a measured-deployments CSV (ReadCSV, the format of
// measured_dense_calibration.csv), turns each into a config.Config (PlanRow: the row's model, GPU,
// precision and worker shape under a synthetic ISL/OSL closed-loop load), runs it with sim.Run
// and reports predicted against measured mean TTFT and mean TPOT per row, per (model, system,
// backend) group and overall. Fit tunes timing.Efficiency (all of it but ExpertGEMM, Memory and
// FP4Memory, which come from the op database's kernel measurements, QuantizedMemory, fixed at 1, and
// MoELayerOverheadUs, chosen on the MoE file), the front-end time and the burst shares on the
// same rows by coordinate descent; the fitted numbers live in
// timing.CalibratedEfficiency, timing.CalibratedFrontendOverheadMs (predict's default
// engine.frontend.overhead_ms) and CalibratedBurstShares, with their provenance; the hand-off
// latency of disaggregated rows (timing.CalibratedKVTransferLatencyMs, predict's default
// engine.kv_transfer.latency_ms) and MoELayerOverheadUs were chosen leaving one GPU out on the MoE
// file (the tests of moe_overhead_test.go, -args -moe-loo). Holdout scores them on rows they were
// not fitted on.
//
// Every simulation is a predict run: sim.Run of a config a user can write (PlanRow's, with
// engine.frontend.overhead_ms set), so the timing model, the front end and the scheduler that
// validate scores are the ones predict and sweep run. What is specific to a benchmark is how its
// means were taken: a closed-loop client sends k × concurrency requests, the first `concurrency`
// of them at once, and averages over all of them. A row is therefore run twice: a burst run of
// one wave starting together, and a steady-state run whose first wave is ramped in over one
// burst-wave lifetime (traffic.load.ramp_seconds; requests of equal length otherwise stay in
// lock-step waves in a deterministic simulator) and left out as a warm-up. The predicted means
// weight the burst run by the harness's burst share 1/k (Factors.Burst, fitted per backend since
// each backend's rows were collected by a different harness) and the steady state by 1 − 1/k.
package calibrate
