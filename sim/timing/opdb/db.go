// Package opdb reads a per-operation GPU performance database in AIConfigurator's `systems`
// layout (kernel latencies measured on real GPUs, per GPU, serving backend and backend version)
// and answers interpolated latency queries for the operations a forward pass is made of: GEMMs,
// context (prefill) and generation (decode) attention, multi-head latent attention, routed
// mixture-of-experts layers, and collectives.
//
// Layout, under a systems folder:
//
//	<gpu>.yaml                                        data_dir (relative to the folder)
//	<data_dir>/<op>/<backend>/<version>/<table>.parquet
//
// with op gemm, attention, comm (backend nccl for NCCL collectives, or the serving backend for its
// custom all-reduce), moe, mla. Every table has a `latency` column in milliseconds.
//
// Tables load lazily, once per DB: Open reads nothing; each query type reads only the table it
// needs the first time it is asked for, and the loaded tables are shared read-only by every
// caller of that DB (safe for concurrent use), so a command opens its database once and hands
// the one *DB to every simulation. Start with Open, then DB.GEMM, DB.ContextAttention,
// DB.GenerationAttention, DB.ContextMLA, DB.GenerationMLA, DB.MoE, DB.NCCL and
// DB.CustomAllReduce.
package opdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Op names of the database's top-level folders.
const (
	OpGEMM      = "gemm"
	OpAttention = "attention"
	OpComm      = "comm"
	OpMoE       = "moe"
	OpMLA       = "mla"
)

// NCCL is the backend folder of NCCL collective tables (op comm).
const NCCL = "nccl"

// DB is one systems folder. The zero value is not usable; use Open.
type DB struct {
	dir string
	// identity is dir made absolute (dir itself when it cannot be).
	identity string

	mu     sync.Mutex
	data   map[string]string // gpu -> data directory (from <gpu>.yaml), resolved
	tables map[string]*tableOnce
}

type tableOnce struct {
	once sync.Once
	val  any
	err  error
}

// Open returns the database in systems folder dir. It checks only that dir is a directory
// holding at least one <gpu>.yaml; tables are read when first queried. Errors name the path.
func Open(dir string) (*DB, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("performance database %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("performance database %s: not a directory (want an AIConfigurator systems folder holding <gpu>.yaml files)", dir)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.yaml")); len(m) == 0 {
		return nil, fmt.Errorf("performance database %s: holds no <gpu>.yaml file (want an AIConfigurator systems folder: "+
			"<gpu>.yaml files beside data/<gpu>/<op>/<backend>/<version>/)", dir)
	}
	identity, err := filepath.Abs(dir)
	if err != nil {
		identity = dir
	}
	return &DB{dir: dir, identity: identity, data: map[string]string{}, tables: map[string]*tableOnce{}}, nil
}

// Dir is the systems folder as given to Open.
func (db *DB) Dir() string { return db.dir }

// Identity names the database for whoever must tell two apart: the systems folder's absolute
// path (the path as given to Open when the working directory is unknown). Two DBs opened on one
// folder have one identity; a sweep's spec hash records it, so that rows priced with different
// databases never mix on resume or merge.
func (db *DB) Identity() string { return db.identity }

// MissingError says that a table the caller needs is not in the database: which GPU, op,
// backend and version were wanted, the path searched, and what exists there instead.
type MissingError struct {
	// GPU, Op, Backend and Version say what was wanted ("" where it does not apply).
	GPU, Op, Backend, Version string
	// Path is the directory or file searched.
	Path string
	// Available lists what exists one level up (versions of the op and backend, or GPUs).
	Available []string
	// What names the missing item ("GPU", "backend", "version", "table", "dtype").
	What string
}

// Error names the missing item, the GPU, op, backend and version, the path searched and what
// the folder holds instead.
func (e *MissingError) Error() string {
	msg := fmt.Sprintf("performance database has no %s for gpu %s", e.What, e.GPU)
	if e.Op != "" {
		msg += ", op " + e.Op
	}
	if e.Backend != "" {
		msg += ", backend " + e.Backend
	}
	if e.Version != "" {
		msg += ", version " + e.Version
	}
	msg += " (searched " + e.Path + ")"
	if len(e.Available) > 0 {
		msg += "; available: " + strings.Join(e.Available, ", ")
	} else if e.What == "GPU" {
		msg += "; the folder has no <gpu>.yaml declaring a data_dir: is it an AIConfigurator systems folder?"
	} else {
		msg += "; nothing there"
	}
	return msg
}

// dataDir is the data directory of gpu: <dir>/<data_dir of <gpu>.yaml>.
func (db *DB) dataDir(gpu string) (string, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if d, ok := db.data[gpu]; ok {
		return d, nil
	}
	path := filepath.Join(db.dir, gpu+".yaml")
	err := regularFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", &MissingError{What: "GPU", GPU: gpu, Path: path, Available: db.gpus()}
	}
	if err != nil {
		return "", fmt.Errorf("performance database: %w", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("performance database: %w", err)
	}
	var spec struct {
		DataDir string `yaml:"data_dir"`
	}
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		return "", fmt.Errorf("performance database %s: %v", path, err)
	}
	if spec.DataDir == "" {
		return "", fmt.Errorf("performance database %s: data_dir is missing", path)
	}
	d := filepath.Join(db.dir, spec.DataDir)
	db.data[gpu] = d
	return d, nil
}

// gpus lists the GPUs of the folder, sorted: its <gpu>.yaml files that are regular files
// declaring a data_dir (other YAML files in the folder are not GPUs).
func (db *DB) gpus() []string {
	m, _ := filepath.Glob(filepath.Join(db.dir, "*.yaml"))
	out := make([]string, 0, len(m))
	for _, f := range m {
		if regularFile(f) != nil {
			continue
		}
		raw, err := os.ReadFile(f)
		var spec struct {
			DataDir string `yaml:"data_dir"`
		}
		if err != nil || yaml.Unmarshal(raw, &spec) != nil || spec.DataDir == "" {
			continue
		}
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	slices.Sort(out)
	return out
}

// Versions lists the versions of op for backend on gpu, oldest first (CompareVersions order).
// Errors: the GPU is unknown, or the op has no folder for the backend (*MissingError).
func (db *DB) Versions(gpu, op, backend string) ([]string, error) {
	d, err := db.dataDir(gpu)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(d, op, backend)
	entries, err := os.ReadDir(dir)
	if err != nil {
		var avail []string
		if es, err := os.ReadDir(filepath.Join(d, op)); err == nil {
			for _, e := range es {
				if e.IsDir() {
					avail = append(avail, e.Name())
				}
			}
		}
		return nil, &MissingError{What: "backend", GPU: gpu, Op: op, Backend: backend, Path: dir, Available: avail}
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		return nil, &MissingError{What: "version", GPU: gpu, Op: op, Backend: backend, Path: dir}
	}
	slices.SortFunc(out, CompareVersions)
	return out, nil
}

// Resolve picks the version of op for backend on gpu: want when the database has it; the newest
// when want is "". Errors: want is absent (*MissingError listing the versions there), and those
// of Versions.
func (db *DB) Resolve(gpu, op, backend, want string) (string, error) {
	vs, err := db.Versions(gpu, op, backend)
	if err != nil {
		return "", err
	}
	if want == "" {
		return vs[len(vs)-1], nil
	}
	if slices.Contains(vs, want) {
		return want, nil
	}
	d, _ := db.dataDir(gpu)
	return "", &MissingError{What: "version", GPU: gpu, Op: op, Backend: backend, Version: want,
		Path: filepath.Join(d, op, backend), Available: vs}
}

// CompareVersions orders version strings such as 0.5.14, 1.3.0rc5 and 1.3.0rc20: dot-separated
// fields compare numerically where both are numbers, a release candidate (rcN suffix) comes before
// its release and orders by N, and anything else compares as text.
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		if i >= len(as) {
			return -1
		}
		if i >= len(bs) {
			return 1
		}
		if c := compareField(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return 0
}

// compareField compares one dot-separated field: a leading number, then an optional suffix
// (none > rcN > other text; rcN by N).
func compareField(a, b string) int {
	an, arest := leadingNumber(a)
	bn, brest := leadingNumber(b)
	if an != bn {
		if an < bn {
			return -1
		}
		return 1
	}
	switch {
	case arest == brest:
		return 0
	case arest == "":
		return 1
	case brest == "":
		return -1
	}
	ar, aok := strings.CutPrefix(arest, "rc")
	br, bok := strings.CutPrefix(brest, "rc")
	if aok && bok {
		x, e1 := strconv.Atoi(ar)
		y, e2 := strconv.Atoi(br)
		if e1 == nil && e2 == nil && x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(arest, brest)
}

func leadingNumber(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:]
}

// table loads the value of key once: load runs the first time, later calls share its result.
func (db *DB) table(key string, load func() (any, error)) (any, error) {
	db.mu.Lock()
	t := db.tables[key]
	if t == nil {
		t = &tableOnce{}
		db.tables[key] = t
	}
	db.mu.Unlock()
	t.once.Do(func() { t.val, t.err = load() })
	return t.val, t.err
}

// tablePath is the parquet file name of op's table for backend and version on gpu, checked to
// exist.
func (db *DB) tablePath(gpu, op, backend, version, file string) (string, error) {
	d, err := db.dataDir(gpu)
	if err != nil {
		return "", err
	}
	p := filepath.Join(d, op, backend, version, file)
	if err := regularFile(p); errors.Is(err, os.ErrNotExist) {
		var avail []string
		if es, err := os.ReadDir(filepath.Dir(p)); err == nil {
			for _, e := range es {
				if strings.HasSuffix(e.Name(), ".parquet") {
					avail = append(avail, e.Name())
				}
			}
		}
		return "", &MissingError{What: "table " + file, GPU: gpu, Op: op, Backend: backend, Version: version, Path: p, Available: avail}
	} else if err != nil {
		return "", fmt.Errorf("performance database: %w", err)
	}
	return p, nil
}

// regularFile checks that path is a regular file (after symbolic links), so that reading it
// cannot block: a named pipe or device in place of a table or <gpu>.yaml is an error naming the
// path. Errors: the os.Stat error (os.ErrNotExist when absent) or one naming the file's mode.
func regularFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (mode %s)", path, st.Mode())
	}
	return nil
}
