// Package router places arriving requests on the rank schedulers of a worker pool: round robin,
// random, least loaded, or KV-aware (kv_router: prefix overlap against load). Start with Router.
package router
