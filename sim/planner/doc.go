// Package planner is the autoscaling planner of a simulated run (planner.policy enabled;
// dynosim-spec.md §3.4, engine-internals.md §6). Each pool (the aggregated workers, or the
// prefill and the decode workers) has a slot per worker it may ever run; a slot is off, starting (added, ready after the role's
// startup_seconds), active (routed to) or draining (removed: it finishes the requests it holds
// and takes no new ones, then is off). The provisioned workers are the starting, active and
// draining ones; worker-seconds and GPU-hours integrate them over the run. The target of a pool
// is its starting plus active workers; the planner moves it:
//
//   - Load-based scaling, every load_adjustment_interval_seconds: each active worker's
//     observation over the interval is its mean TTFT (first tokens it produced: now − arrival)
//     and its mean ITL (its pass times, weighted by the tokens each pass continued). An
//     aggregated pool is judged on the SLA's TTFT and ITL bounds, a prefill pool on TTFT, a
//     decode pool on ITL. A worker is above when an observed mean exceeds its bound, below when
//     every observed mean is under bound × load_scaling_down_sensitivity / 100 (a TTFT without
//     samples counts as below only when nothing is queued on the worker). Once the pool has
//     load_min_observations intervals observed since its last action settled, it adds one
//     worker when every active worker is above, and removes one when every one is below. One
//     action at a time: no decision while a worker of the pool is starting or draining.
//   - Throughput-based scaling, every throughput_adjustment_interval_seconds: the predictor
//     forecasts the next interval's request count and mean ISL and OSL from the series of
//     intervals observed (arrivals); with rate = count / interval, a prefill pool needs
//     ⌈rate × ISL / prefill capacity⌉ workers, a decode pool ⌈rate × OSL / decode capacity⌉ and
//     an aggregated pool ⌈rate × ISL / prefill capacity + rate × OSL / decode capacity⌉ (its
//     workers share their time between the two). A worker's prefill capacity is the prompt
//     tokens per second of back-to-back prefill passes of ISL-token prompts (as many as
//     max_batched_tokens and max_sequences admit, chunked when ISL exceeds max_batched_tokens);
//     its decode capacity the tokens per second of decode passes at the largest batch (within
//     max_sequences and the KV pool at a context of ISL + OSL/2) whose pass time is within the
//     SLA's ITL, both over its attention-DP ranks and priced by the role's timing model. With
//     load-based scaling also on, this count is the floor load-based scaling does not go below.
//
// Bounds: a pool keeps at least its min-worker key (min_workers, prefill_min_workers,
// decode_min_workers; at least 1) and, together with the other pool, at least min_num_gpus GPUs;
// the pools' targets together stay within max_num_gpus (−1: each pool up to
// MaxAutoscaledWorkers workers). A pool never runs fewer workers than it starts with unless the
// planner removes them, and never more than max(its initial replicas, what the budget allows).
//
// The run drives it through a few calls: Planner.ObserveArrival, ObserveFirstToken and
// ObservePass as the run proceeds, Tick when a tick it scheduled is due, Ready when a started
// worker is, and EndStep at the end of each timestamp; the planner acts on the run only through
// the Host the run gives it (scheduling its events, opening or closing a worker to the router,
// building a worker's engines) and never sees the run's state. Its forecasters
// (planner.load_predictor) are in forecast.go.
package planner
