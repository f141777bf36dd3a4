package results

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// randomRows returns n rows whose every written field is set to a random value, each optional
// field null one time in three; strings are empty, short or long (past a page of their column).
func randomRows(rng *rand.Rand, n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for _, c := range rowFields().list {
			f := v.Field(c.index)
			if c.pointer {
				if rng.IntN(3) == 0 {
					continue
				}
				f.Set(reflect.New(f.Type().Elem()))
				f = f.Elem()
			}
			switch c.kind {
			case reflect.Float64:
				f.SetFloat(rng.NormFloat64() * 1e3)
			case reflect.Int64:
				f.SetInt(rng.Int64N(1<<40) - 1<<39)
			case reflect.Bool:
				f.SetBool(rng.IntN(2) == 0)
			case reflect.String:
				f.SetString([]string{"", "ok", fmt.Sprintf("s%d", rng.IntN(5)), string(bytes.Repeat([]byte("yaml "), rng.IntN(3000)))}[rng.IntN(4)])
			}
		}
	}
	return rows
}

// TestDecodeRowsMatchesGenericReader writes random rows in several row groups and pages and reads them back with decodeRows and with parquet-go's
// GenericReader: the rows are equal to each other and to what was written.
func TestDecodeRowsMatchesGenericReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 43))
	for _, tc := range []struct {
		name string
		rows int
		opts []parquet.WriterOption
	}{
		{"one group", 50, nil},
		{"empty", 0, nil},
		{"groups and pages", 700, []parquet.WriterOption{parquet.MaxRowsPerRowGroup(128), parquet.PageBufferSize(2048)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := randomRows(rng, tc.rows)
			var file bytes.Buffer
			w := parquet.NewGenericWriter[Row](&file, append([]parquet.WriterOption{parquet.Compression(&parquet.Snappy)}, tc.opts...)...)
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(file.Bytes()), int64(file.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if tc.opts != nil && len(pf.RowGroups()) < 2 {
				t.Fatalf("%d row groups, the test needs several", len(pf.RowGroups()))
			}
			got := make([]Row, pf.NumRows())
			if err := decodeRows(pf, got); err != nil {
				t.Fatal(err)
			}
			want := make([]Row, pf.NumRows())
			if len(want) > 0 {
				r := parquet.NewGenericReader[Row](pf)
				if n, _ := r.Read(want); n != len(want) {
					t.Fatalf("GenericReader read %d of %d rows", n, len(want))
				}
				r.Close()
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("row %d differs from GenericReader's:\n%+v\n%+v", i, got[i], want[i])
				}
				if !reflect.DeepEqual(got[i], rows[i]) {
					t.Fatalf("row %d differs from the row written", i)
				}
			}
		})
	}
}

// TestDecodeRowsRefusesMismatches checks that a file whose column has another type than Row's
// field, or fewer rows than announced, is an error rather than a silently wrong row.
func TestDecodeRowsRefusesMismatches(t *testing.T) {
	type wrong struct {
		PointID    int64  `parquet:"point_id"`
		PointIndex string `parquet:"point_index"`
	}
	var file bytes.Buffer
	w := parquet.NewGenericWriter[wrong](&file)
	if _, err := w.Write([]wrong{{1, "x"}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pf, err := parquet.OpenFile(bytes.NewReader(file.Bytes()), int64(file.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeRows(pf, make([]Row, 1)); err == nil || err.Error() != "column point_id has type INT64, servesweep reads it as BYTE_ARRAY" {
		t.Errorf("mismatched type: %v", err)
	}
	if err := decodeRows(pf, make([]Row, 2)); err == nil {
		t.Error("a footer announcing more rows than the row groups hold should be an error")
	}
}

// TestPartChecksumFormat recomputes partChecksum's documented format (metadata, then each row's
// non-null columns as name=value lines and a blank line) by reflection over random rows, so parts
// written by any servesweep that used the format keep their checksums.
func TestPartChecksumFormat(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(3, 43)), 40)
	meta := []byte(`{"spec_hash":"h"}`)
	h := sha256.New()
	h.Write(meta)
	for i := range rows {
		v := reflect.ValueOf(rows[i])
		for _, c := range rowFields().list {
			f := v.Field(c.index)
			if c.pointer {
				if f.IsNil() {
					continue
				}
				f = f.Elem()
			}
			var s string
			switch c.kind {
			case reflect.Float64:
				s = strconv.FormatFloat(f.Float(), 'g', -1, 64)
			case reflect.Int64:
				s = strconv.FormatInt(f.Int(), 10)
			case reflect.Bool:
				s = strconv.FormatBool(f.Bool())
			default:
				s = strconv.Quote(f.String())
			}
			fmt.Fprintf(h, "%s=%s\n", c.name, s)
		}
		h.Write([]byte("\n"))
	}
	got, err := partChecksum(meta, rows)
	if want := hex.EncodeToString(h.Sum(nil)); err != nil || got != want {
		t.Errorf("partChecksum = %s, %v; want %s", got, err, want)
	}
}
