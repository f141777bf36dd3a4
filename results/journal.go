package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/gofrs/flock"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/optimization"
)

// JournalFile is the name of the sweep journal inside an output directory.
const JournalFile = "points.jsonl"

// Record is one finished point as the journal stores it: one JSON line per point.
type Record struct {
	// PointID is the point's stable ID.
	PointID string `json:"point_id"`
	// Status is StatusOK, StatusFailed or StatusTimedOut.
	Status string `json:"status"`
	// Reason says why the point failed or timed out.
	Reason string `json:"reason,omitempty"`
	// WallTimeMs is the host time spent on the point, in ms.
	WallTimeMs float64 `json:"wall_time_ms"`
	// Summary holds the prediction.json summary keys of an ok point (null and non-finite values
	// are left out).
	Summary map[string]float64 `json:"summary,omitempty"`
	// Capacity is the capacity search's outcome (optimization.capacity_search; nil without
	// one): Summary is then the simulation at the capacity load (at the min load when
	// infeasible).
	Capacity *Capacity `json:"capacity,omitempty"`
	// TimingProvider is sim.Result.TimingProvider of an ok point: the timing model that priced
	// its passes.
	TimingProvider string `json:"timing_provider,omitempty"`
	// Start is how a point without a capacity search ran beyond its config, measured in steady
	// state as a probe is (sweep's steadyPoint); nil when it ran as configured.
	Start *RunStart `json:"start,omitempty"`
	// Backlog is, for a point without a capacity search under an open loop (constant_rate or
	// poisson), how the requests in its system changed over its measured window
	// (sim.RunBacklogAfterFill); nil otherwise.
	Backlog *sim.Backlog `json:"backlog,omitempty"`
}

// RunStart is what a steady-state measurement of a point without a capacity search wrote into
// its config (the fields a capacity Probe records for itself), so that its row's config
// reproduces the run.
type RunStart struct {
	// Load is the point's load intensity (config.Load.IntensityField), as it ran.
	Load float64 `json:"load"`
	// RampSeconds and WarmupSeconds are traffic.load.ramp_seconds and warmup_seconds (s), nil
	// where the config's own held; PerLoadUnit the lengthened per-load-unit stop, nil for the
	// config's own; Cooldown whether traffic.load.cooldown was set.
	RampSeconds   *float64 `json:"ramp_seconds,omitempty"`
	WarmupSeconds *float64 `json:"warmup_seconds,omitempty"`
	PerLoadUnit   *float64 `json:"per_load_unit,omitempty"`
	Cooldown      bool     `json:"cooldown,omitempty"`
}

// Finished reports whether a resumed sweep may skip the point: ok and failed points are final
// (a simulation is deterministic), a timed-out point is simulated again.
func (r Record) Finished() bool { return r.Status == StatusOK || r.Status == StatusFailed }

// SummaryValues returns the numeric prediction.json keys of s (Summary.Map without nulls and
// non-finite values), as a Record stores them; an object of counts (rejected_requests_by_reason)
// becomes one value per member, keyed "<key>.<member>". With the planner it adds peak_gpus and
// scaling_events_count.
func SummaryValues(s *metrics.Summary) map[string]float64 {
	out := make(map[string]float64)
	for k, v := range s.Map() {
		var x float64
		switch n := v.(type) {
		case float64:
			x = n
		case int64:
			x = float64(n)
		case int:
			x = float64(n)
		case map[string]int64:
			// rejected_requests_by_reason: one value per reason, under "<key>.<reason>".
			for reason, c := range n {
				out[k+"."+reason] = float64(c)
			}
			continue
		default:
			continue
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out[k] = x
		}
	}
	if s.HasGoodput {
		out[goodputTruncatedKey] = float64(s.GoodputTruncatedRequests)
		out[goodputTruncatedRPSKey] = s.GoodputTruncatedRequestThroughputRPS
		out[goodputTruncatedTokSKey] = s.GoodputTruncatedOutputThroughputTokS
		if s.StopMs > 0 {
			out[censoredKey] = float64(s.CensoredRequests)
		}
	}
	if p := s.Planner; p != nil {
		// An autoscaled run's peak GPUs and number of scaling decisions (results.parquet columns
		// peak_gpus and scaling_events_count; prediction.json has the decisions themselves).
		out["peak_gpus"] = float64(p.PeakGPUs)
		out["scaling_events_count"] = float64(len(p.ScalingEvents))
		// Its provisioning over the steady window, which the row's avg_gpus and cost follow
		// (windowProvisioning): prefill's, and decode's (an aggregated pool's).
		if p.WindowMs > 0 {
			out[windowMsKey] = p.WindowMs
			out[windowPrefillKey] = p.WindowWorkerSeconds["prefill"]
			out[windowDecodeKey] = p.WindowWorkerSeconds["decode"] + p.WindowWorkerSeconds["aggregated"]
		}
	}
	return out
}

// The journal's keys that prediction.json lacks (SummaryValues): the good requests cut short of
// their output, the unfinished requests censored at a time stop, and an autoscaled run's steady-window provisioning (the window's length in
// virtual ms and each role's worker-seconds within it).
const (
	// goodputTruncatedKey counts the good requests that stopped short of their output
	// (metrics.Summary.GoodputTruncatedRequests), which sla_attainment takes off.
	goodputTruncatedKey = "goodput_truncated_requests"
	// goodputTruncatedRPSKey and goodputTruncatedTokSKey are those requests' share of
	// goodput_request_throughput_rps and goodput_output_throughput_tok_s
	// (metrics.Summary.GoodputTruncatedRequestThroughputRPS and ...OutputThroughputTokS), which
	// the goodput columns take off (withoutTruncatedGoodput).
	goodputTruncatedRPSKey  = "goodput_truncated_request_throughput_rps"
	goodputTruncatedTokSKey = "goodput_truncated_output_throughput_tok_s"
	// censoredKey counts the unfinished requests that had broken no per-request bound at a
	// max_virtual_time_seconds stop (metrics.Summary.CensoredRequests), which sla_attainment
	// leaves out of the offered requests; recorded only under an SLA and such a stop.
	censoredKey      = "censored_requests"
	windowMsKey      = "planner_window_ms"
	windowPrefillKey = "planner_window_prefill_worker_seconds"
	windowDecodeKey  = "planner_window_decode_worker_seconds"
)

// Journal is the durable record of a sweep's finished points: an append-only JSON Lines file
// whose every line is written with one write call and synced before Append returns, so a killed
// sweep (even kill -9) loses no point that was reported finished. It is safe for concurrent use.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	lock *flock.Flock // nil when the file system has no locks
	path string
}

// LockSuffix is appended to a journal's path to name its lock file. The lock file is left in
// place (deleting it while another process holds it would let a third one in); it is empty.
const LockSuffix = ".lock"

// JournalLockedError reports a journal that another process (or another open in this process)
// is writing: two writers would interleave lines and break the next resume.
type JournalLockedError struct {
	// Path is the journal's path.
	Path string
}

// Error names the locked journal and says another process is writing it.
func (e *JournalLockedError) Error() string {
	return fmt.Sprintf("%s is locked: another servesweep process is writing it (lock file %s)", e.Path, e.Path+LockSuffix)
}

// NotJournalError reports a journal file with a line that is not a sweep journal record, or a
// record no sweep writes (an unknown status, an ok point without results, a negative value): the
// file is not a journal of this program, or was edited, and resuming from it would lose or invent
// points.
type NotJournalError struct {
	// Path is the file's path and Line the 1-based number of the first line that is no record.
	Path string
	Line int
	// Problem says what is wrong with a line that is a record ("" for a line that is none).
	Problem string
}

// Error names the file and the line (and the record's problem), and says the sweep cannot resume
// from it.
func (e *NotJournalError) Error() string {
	if e.Problem != "" {
		return fmt.Sprintf("%s:%d: %s; the sweep cannot resume from this file", e.Path, e.Line, e.Problem)
	}
	return fmt.Sprintf("%s:%d: not a sweep journal record; the sweep cannot resume from this file", e.Path, e.Line)
}

// problem says what in r no sweep writes: a status other than ok, failed and timed_out, an ok
// record without summary values, or a negative wall time or summary value (every summary key is
// a count, a time, a rate or a share); "" for a record a sweep could have written.
func (r Record) problem() string {
	switch r.Status {
	case StatusOK, StatusFailed, StatusTimedOut:
	default:
		return fmt.Sprintf("status %q: a record's status is %s, %s or %s", r.Status, StatusOK, StatusFailed, StatusTimedOut)
	}
	if r.Status == StatusOK && len(r.Summary) == 0 {
		return "status ok without summary values"
	}
	if r.WallTimeMs < 0 {
		return fmt.Sprintf("wall_time_ms %g: must be >= 0", r.WallTimeMs)
	}
	keys := make([]string, 0, len(r.Summary))
	for k := range r.Summary {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := r.Summary[k]; v < 0 {
			return fmt.Sprintf("summary.%s %g: must be >= 0", k, v)
		}
	}
	return ""
}

// lockJournal takes an exclusive, non-blocking lock (flock on Unix, LockFileEx on Windows) on
// path+LockSuffix, created if needed. The operating system releases it when the lock file is
// closed or the process dies, so a sweep killed with kill -9 can be resumed at once. A lock held
// elsewhere is a *JournalLockedError. On a file system without lock support it returns a nil
// lock and a nil error: the journal is then written unlocked.
func lockJournal(path string) (*flock.Flock, error) {
	return acquireLock(flock.New(path+LockSuffix, flock.SetPermissions(0o644)), (*flock.Flock).TryLock)
}

// acquireLock tries lock once (again after an interrupted system call) with tryLock, and maps
// the outcome as lockJournal documents; tryLock is a parameter so tests can stand in for a file
// system without lock support.
func acquireLock(lock *flock.Flock, tryLock func(*flock.Flock) (bool, error)) (*flock.Flock, error) {
	path := strings.TrimSuffix(lock.Path(), LockSuffix)
	for {
		ok, err := tryLock(lock)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err == nil && ok:
			return lock, nil
		case err == nil:
			return nil, &JournalLockedError{Path: path}
		case lockUnsupported(err):
			// A file system without locks (Lustre mounted without -o flock, some NFS setups):
			// run unlocked rather than not at all, as servesweep did before journals had locks.
			return nil, nil
		default:
			return nil, fmt.Errorf("locking %s: %w", lock.Path(), err)
		}
	}
}

// lockUnsupported reports whether a locking error means the file system (or the operating
// system) does not support file locks: ENOSYS, EOPNOTSUPP, ENOLCK or EINVAL, or any error that
// is errors.ErrUnsupported.
func lockUnsupported(err error) bool {
	return errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOLCK) ||
		errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported)
}

// CheckJournalUnlocked returns a *JournalLockedError when another process holds the lock of the
// journal at path (used before deleting a journal with --overwrite), nil otherwise. It takes
// and releases the lock, so it only tells what holds at the time of the call.
func CheckJournalUnlocked(path string) error {
	if _, err := os.Stat(path + LockSuffix); err != nil {
		return nil // no lock file: nobody has opened the journal
	}
	lock, err := lockJournal(path)
	if err != nil || lock == nil {
		return err
	}
	return lock.Close()
}

// DiscardEmptyJournal removes the journal at path and its spec file (path+SpecSuffix) when the
// journal records nothing (the spec file alone when the journal was never created), holding the
// journal's lock meanwhile: a journal another process
// holds, or one with any record, is left alone, and so is the lock file (see LockSuffix). It
// reports whether it removed the journal; the error is a failed lock or removal.
func DiscardEmptyJournal(path string) (bool, error) {
	lock, err := lockJournal(path)
	if err != nil {
		var le *JournalLockedError
		if errors.As(err, &le) {
			return false, nil
		}
		return false, err
	}
	if lock != nil {
		defer lock.Close()
	}
	switch st, err := os.Stat(path); {
	case errors.Is(err, os.ErrNotExist):
		// Claimed (ClaimJournalSpec) by a run that stopped before it opened the journal, e.g.
		// interrupted while preparing its points: nothing recorded, and the claim alone would
		// refuse a corrected spec in the directory.
		if err := os.Remove(path + SpecSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return true, nil
	case err != nil || st.Size() != 0:
		return false, nil
	}
	if err := os.Remove(path + SpecSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	return true, nil
}

// OpenJournal opens (creating it if needed) the journal at path for appending and returns the
// records it already holds, the last one per point ID winning. A torn last line (a write cut
// short by a crash) is dropped and truncated away; any other malformed line, or a record no sweep
// writes (Record.problem), is a *NotJournalError naming the file and line.
//
// The journal is held under an exclusive lock on path+LockSuffix until Close: a second
// OpenJournal of the same path, from any process, fails with a *JournalLockedError while the
// first is open. The lock dies with the process, so kill -9 then resume works. On a file system
// without lock support (ENOSYS, EOPNOTSUPP, ENOLCK, EINVAL) the journal is opened unlocked.
func OpenJournal(path string) (j *Journal, recs map[string]Record, err error) {
	lock, err := lockJournal(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil && lock != nil {
			lock.Close()
		}
	}()
	recs = make(map[string]Record)
	data, err := config.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		data = nil
	case err != nil:
		return nil, nil, fmt.Errorf("reading sweep journal: %w", err)
	}
	keep := len(data)
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		keep = i + 1 // torn tail: no newline after the last line
	}
	sc := bufio.NewScanner(bytes.NewReader(data[:keep]))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil || r.PointID == "" {
			return nil, nil, &NotJournalError{Path: path, Line: line}
		}
		if p := r.problem(); p != "" {
			return nil, nil, &NotJournalError{Path: path, Line: line, Problem: p}
		}
		recs[r.PointID] = r
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	if keep < len(data) {
		if err := f.Truncate(int64(keep)); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, nil, err
	}
	if data == nil {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return &Journal{f: f, lock: lock, path: path}, recs, nil
}

// Append writes r as one line and syncs the file.
func (j *Journal) Append(r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding journal record of point %s: %w", r.PointID, err)
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("writing %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", j.path, err)
	}
	return nil
}

// Close closes the journal file and releases its lock.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.f.Close()
	if j.lock != nil {
		if cerr := j.lock.Close(); err == nil {
			err = cerr
		}
		j.lock = nil
	}
	return err
}

// SpecSuffix is appended to a journal's path to name the file that holds the spec hash of the
// sweep the journal belongs to (grid.Expansion.SpecHash), written before the first point runs,
// so that a sweep killed before it wrote anything else is not resumed under another spec.
const SpecSuffix = ".spec"

// JournalSpecError refuses to resume a journal written for another spec.
type JournalSpecError struct {
	// Path is the journal; Have is the spec hash it was written for, Want this sweep's.
	Path, Have, Want string
	// Changes says what differs between the two (SpecChanges); empty when the journal recorded
	// no spec identity (written before servesweep recorded one) or none was given.
	Changes []string
	// HashOnly says the journal recorded its spec's hash alone (an older servesweep's), so what
	// differs cannot be told.
	HashOnly bool
}

// Error names the journal and both spec hashes, and what differs when known.
func (e *JournalSpecError) Error() string {
	known := ChangesText(e.Changes)
	if known == "" && e.HashOnly {
		known = "; " + e.Path + SpecSuffix + " records that hash alone (an older servesweep wrote it), not the points, settings, " +
			"prices or bounds it covers, so what differs cannot be told"
	}
	return fmt.Sprintf("%s holds a sweep of another spec, of other contents of its trace files, or of another servesweep build (spec hash %s, this one %s%s): resuming would mix the two",
		e.Path, e.Have, e.Want, known)
}

// ChangesText is the text a refusal appends after its spec hashes for changes (SpecChanges):
// "; what differs: " and the changes, or "" without any.
func ChangesText(changes []string) string {
	if len(changes) == 0 {
		return ""
	}
	return "; what differs: " + strings.Join(changes, "; ")
}

// ClaimJournalSpec records that the journal at path belongs to the sweep of spec hash hash
// (path+SpecSuffix: the hash on its first line, then the spec's identity lines,
// grid.Expansion.SpecIdentity), or checks that it does: a journal claimed by another hash is a
// *JournalSpecError, which says what differs when both identities are known. A journal
// without the file (written before servesweep recorded it) is claimed as it is.
func ClaimJournalSpec(path, hash string, identity ...string) error {
	have, haveIdentity, err := ReadJournalSpec(path)
	switch {
	case err == nil:
		if have != hash {
			return &JournalSpecError{Path: path, Have: have, Want: hash, Changes: SpecChanges(haveIdentity, identity), HashOnly: len(haveIdentity) == 0}
		}
		if len(haveIdentity) > 0 || len(identity) == 0 {
			return nil
		}
		// An older servesweep's claim (the hash alone) gets the identity, for later refusals.
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	text := hash + "\n"
	for _, l := range identity {
		text += l + "\n"
	}
	return WriteFileAtomic(path+SpecSuffix, []byte(text))
}

// maxSpecFileBytes bounds the journal's spec file read: its lines are a hash and a spec identity
// (a few hundred bytes, plus a line per trace file and priced GPU).
const maxSpecFileBytes = 1 << 20

// JournalSpecDamagedError is a journal's spec file whose first line is no spec hash (isSpecHash:
// one word of letters and digits; servesweep writes 16 hex digits) or that is larger than
// maxSpecFileBytes: edited or corrupted.
type JournalSpecDamagedError struct {
	// Path is the spec file; Why what is wrong with it.
	Path, Why string
}

// Error names the file and says how to go on: its journal keeps the finished points.
func (e *JournalSpecDamagedError) Error() string {
	return fmt.Sprintf("%s is damaged (%s): it records which spec the sweep's journal belongs to; remove it to resume "+
		"(the journal keeps the finished points; sweep.json's spec hash, when present, is still checked), or pass --overwrite to start over",
		e.Path, e.Why)
}

// ReadJournalSpec reads the spec hash the journal at path was claimed for and the identity
// lines recorded with it (none in a file written before servesweep recorded them). A missing
// file is an error satisfying errors.Is(err, os.ErrNotExist).
func ReadJournalSpec(path string) (hash string, identity []string, err error) {
	specPath := path + SpecSuffix
	if st, err := os.Stat(specPath); err == nil && st.Mode().IsRegular() && st.Size() > maxSpecFileBytes {
		return "", nil, &JournalSpecDamagedError{Path: specPath, Why: fmt.Sprintf("%d bytes, more than a spec identity's", st.Size())}
	}
	data, err := config.ReadFile(specPath)
	if err != nil {
		return "", nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	hash = strings.TrimSpace(lines[0])
	if !isSpecHash(hash) {
		return "", nil, &JournalSpecDamagedError{Path: specPath, Why: "its first line is not a spec hash"}
	}
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(l); l != "" {
			identity = append(identity, l)
		}
	}
	return hash, identity, nil
}

// isSpecHash reports whether s can be a spec hash: one word of 1 to 64 ASCII letters and digits
// (servesweep writes 16 hex digits).
func isSpecHash(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// SpecChanges says, one phrase each, what differs between two spec identities
// (grid.Expansion.SpecIdentity: have the recorded one, want this sweep's): the points, the
// analysis settings, the performance database, the servesweep build, a trace file's contents,
// the capacity search or the prices. Empty when either identity is unknown (nil) or they agree.
func SpecChanges(have, want []string) []string {
	if len(have) == 0 || len(want) == 0 {
		return nil
	}
	parse := func(lines []string) (order []string, m map[string]string) {
		m = map[string]string{}
		for _, l := range lines {
			k, v := specLineKey(l)
			if _, ok := m[k]; !ok {
				order = append(order, k)
			} else {
				v = m[k] + "\n" + v // several lines of one key (objectives) compare together
			}
			m[k] = v
		}
		return order, m
	}
	haveOrder, hm := parse(have)
	wantOrder, wm := parse(want)
	var out []string
	seen := map[string]bool{}
	for _, k := range append(haveOrder, wantOrder...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		h, inHave := hm[k]
		w, inWant := wm[k]
		if inHave && inWant && h == w {
			continue
		}
		c := specChange(printable(k), printable(h), printable(w), inHave, inWant)
		if k == "points" && hm["gpus"] != wm["gpus"] {
			// A bound that moved filters points by itself; the grid alone cannot tell whether
			// the spec changed too (the sweep, which can expand the spec again, says).
			c = strings.Replace(c, ": the spec's", ": the GPU bounds, or the spec's", 1)
		}
		out = append(out, c)
	}
	return out
}

// printable is s for a message: quoted (Go syntax) when it holds a control character or is not
// valid UTF-8, and cut to 200 bytes with "…" when longer (a hand-edited spec file).
func printable(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' }) {
		return strconv.Quote(s)
	}
	return s
}

// specSettingsKeys are the keys of the analysis settings' lines (grid's settingsLines).
var specSettingsKeys = []string{"target", "objective", "gpus", "strict_sla", "min_goodput_rps"}

// IdentitySettings reads the analysis settings a spec identity records (grid's settingsLines:
// target, objectives, GPU bounds, strict SLA, minimum goodput), the part of
// optimization.Settings a spec hash covers; the other fields are left zero. ok is false when
// identity records no settings or a line of them does not read back.
func IdentitySettings(identity []string) (s optimization.Settings, ok bool) {
	seen := map[string]bool{}
	for _, l := range identity {
		k, v, _ := strings.Cut(l, " ")
		if !slices.Contains(specSettingsKeys, k) {
			continue
		}
		seen[k] = true
		var err error
		switch k {
		case "target":
			s.Target = v
		case "objective":
			// Recorded as Objective.String writes it, the form of report's --objective.
			var o optimization.Objective
			if o, err = ParseObjective(v); err == nil {
				s.Objectives = append(s.Objectives, o)
			}
		case "gpus":
			_, err = fmt.Sscanf(v, "%d %d", &s.MinGPUs, &s.MaxGPUs)
		case "strict_sla":
			s.StrictSLA, err = strconv.ParseBool(v)
		case "min_goodput_rps":
			s.MinGoodputRPS, err = strconv.ParseFloat(v, 64)
		}
		if err != nil {
			return s, false
		}
	}
	return s, seen["target"] && seen["gpus"] && seen["strict_sla"] && seen["min_goodput_rps"]
}

// GPUBoundsText is the GPU bounds min and max as a spec sets them: "max_candidate_gpus 8", with
// min_candidate_gpus before it when set (0: none).
func GPUBoundsText(min, max int) string {
	out := fmt.Sprintf("max_candidate_gpus %d", max)
	if min > 0 {
		out = fmt.Sprintf("min_candidate_gpus %d, %s", min, out)
	}
	return out
}

// specLineKey splits an identity line into the key it is compared under and its value: a trace's
// line ("trace PATH DIGEST") and a price's ("gpu_hour_usd GPU PRICE") are keyed by their file or
// GPU; each analysis setting by its own key (the objectives' lines together).
func specLineKey(l string) (key, value string) {
	k, v, _ := strings.Cut(l, " ")
	switch {
	case k == "trace":
		if i := strings.LastIndexByte(v, ' '); i >= 0 {
			return "trace " + v[:i], v[i+1:]
		}
	case k == "gpu_hour_usd":
		if g, price, ok := strings.Cut(v, " "); ok {
			return "gpu_hour_usd " + g, price
		}
	}
	return k, v
}

// specChange is the phrase for key k whose value was h (inHave) and is w (inWant).
func specChange(k, h, w string, inHave, inWant bool) string {
	was := func(what string) string {
		switch {
		case !inHave:
			return what + " (none then, " + w + " now)"
		case !inWant:
			return what + " (" + h + " then, none now)"
		}
		return what + " (" + h + " then, " + w + " now)"
	}
	switch {
	case k == "points":
		hf, wf := strings.Fields(h), strings.Fields(w)
		if len(hf) < 2 || len(wf) < 2 {
			return "the grid's points"
		}
		if hf[0] == wf[0] && len(hf) > 2 && len(wf) > 2 && hf[2] == wf[2] {
			return "the grid's points (the same " + hf[0] + " in another order: a domain's values listed in another order)"
		}
		if hf[0] == wf[0] {
			return "the grid's points (" + hf[0] + " then and now, not the same ones: the spec's engine, traffic, router, " +
				"evaluation or domain fields, or how this servesweep version expands them)"
		}
		return "the grid's points (" + hf[0] + " then, " + wf[0] + " now: the spec's domains, filters or fields, or how this servesweep version expands them)"
	case k == "target":
		return was("optimization.target")
	case k == "objective":
		return "optimization.objectives (" + strings.ReplaceAll(h, "\n", ", ") + " then, " + strings.ReplaceAll(w, "\n", ", ") + " now)"
	case k == "gpus":
		var hMin, hMax, wMin, wMax int
		_, herr := fmt.Sscanf(h, "%d %d", &hMin, &hMax)
		_, werr := fmt.Sscanf(w, "%d %d", &wMin, &wMax)
		if herr != nil || werr != nil {
			return was("the GPU bounds (min and max candidate GPUs)")
		}
		return "the GPU bounds (" + GPUBoundsText(hMin, hMax) + " then, " + GPUBoundsText(wMin, wMax) + " now)"
	case k == "strict_sla":
		return was("optimization.strict_sla")
	case k == "min_goodput_rps":
		return was("optimization.constraints.min_goodput_rps")
	case k == "build":
		return was("the servesweep build")
	case k == "systems_dir":
		return was("the performance database (systems_dir)")
	case k == "capacity_search":
		return was("optimization.capacity_search (attainment, min, max, relative_tolerance, max_probes)")
	case strings.HasPrefix(k, "trace "):
		p := strings.TrimPrefix(k, "trace ")
		switch {
		case !inHave:
			return "trace file " + p + " (not read then)"
		case !inWant:
			return "trace file " + p + " (not read now)"
		}
		return "the contents of trace file " + p
	case strings.HasPrefix(k, "gpu_hour_usd "):
		return was("optimization.cost.gpu_hour_usd." + strings.TrimPrefix(k, "gpu_hour_usd "))
	}
	return was(k)
}
