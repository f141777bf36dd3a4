package results

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// fieldSetter is how decodeRows assigns one column's values to Row: the field's byte offset in
// Row, its kind (of the pointed-to type for an optional column) and whether it is a pointer.
type fieldSetter struct {
	name    string
	offset  uintptr
	kind    reflect.Kind
	pointer bool
}

// parquetKind is the Parquet physical type a Row field of kind k is written as.
func parquetKind(k reflect.Kind) parquet.Kind {
	switch k {
	case reflect.Float64:
		return parquet.Double
	case reflect.Int64:
		return parquet.Int64
	case reflect.Bool:
		return parquet.Boolean
	}
	return parquet.ByteArray
}

// rowSetterList is Row's written fields in column order, with their offsets.
var rowSetterList = sync.OnceValue(func() []fieldSetter {
	t := reflect.TypeFor[Row]()
	var out []fieldSetter
	for _, c := range rowFields().list {
		out = append(out, fieldSetter{name: c.name, offset: t.Field(c.index).Offset, kind: c.kind, pointer: c.pointer})
	}
	return out
})

// rowSetters are Row's written fields by column name, with their offsets.
var rowSetters = sync.OnceValue(func() map[string]fieldSetter {
	out := map[string]fieldSetter{}
	for _, s := range rowSetterList() {
		out[s.name] = s
	}
	return out
})

// decodeRows reads every row of pf into rows, whose length must be pf.NumRows(): column by
// column, each value assigned to its Row field through the field's offset, and the non-null
// values of an optional column (or the bytes of a string column) of one row group held in one
// allocation. It gives the rows parquet-go's GenericReader[Row] gives
// (TestDecodeRowsMatchesGenericReader) for Row's flat schema, without decoding each row into a
// []parquet.Value first: a part of 100 rows costs tens of allocations instead of a megabyte of
// buffers. A column Row does not have is skipped (a file of a later servesweep); a field the
// file lacks stays zero (null). A column of another physical type than its field's, or whose
// value count is not its row group's row count, is an error.
func decodeRows(pf *parquet.File, rows []Row) error {
	setters := rowSetters()
	names := pf.Schema().Columns()
	buf := make([]parquet.Value, 256)
	first := 0
	for _, rg := range pf.RowGroups() {
		n := int(rg.NumRows())
		if first+n > len(rows) {
			return fmt.Errorf("row groups hold more rows than the footer's %d", len(rows))
		}
		group := rows[first : first+n]
		for i, chunk := range rg.ColumnChunks() {
			if i >= len(names) || len(names[i]) != 1 {
				continue
			}
			s, ok := setters[names[i][0]]
			if !ok {
				continue
			}
			if got, want := chunk.Type().Kind(), parquetKind(s.kind); got != want {
				return fmt.Errorf("column %s has type %s, servesweep reads it as %s", s.name, got, want)
			}
			if err := decodeColumn(chunk, s, group, buf); err != nil {
				return err
			}
		}
		first += n
	}
	if first != len(rows) {
		return fmt.Errorf("row groups hold %d rows, the footer announces %d", first, len(rows))
	}
	return nil
}

// decodeColumn assigns the values of one column chunk to the field s of rows, one value a row.
func decodeColumn(chunk parquet.ColumnChunk, s fieldSetter, rows []Row, buf []parquet.Value) error {
	pages := chunk.Pages()
	defer pages.Close()
	var (
		f64s  []float64
		i64s  []int64
		bools []bool
		strs  []string
		bytes []byte
	)
	// Strings are copied into one buffer per page and sliced from it.
	j := 0
	for {
		page, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("column %s: %w", s.name, err)
		}
		if s.kind == reflect.String {
			bytes = make([]byte, 0, page.Size())
		}
		values := page.Values()
		for {
			n, err := values.ReadValues(buf)
			if j+n > len(rows) {
				parquet.Release(page)
				return fmt.Errorf("column %s holds more values than its row group's %d rows", s.name, len(rows))
			}
			for _, v := range buf[:n] {
				if v.IsNull() {
					j++
					continue
				}
				field := unsafe.Add(unsafe.Pointer(&rows[j]), s.offset)
				switch s.kind {
				case reflect.Float64:
					if !s.pointer {
						*(*float64)(field) = v.Double()
						break
					}
					if f64s == nil {
						f64s = make([]float64, 0, len(rows))
					}
					f64s = append(f64s, v.Double())
					*(**float64)(field) = &f64s[len(f64s)-1]
				case reflect.Int64:
					if !s.pointer {
						*(*int64)(field) = v.Int64()
						break
					}
					if i64s == nil {
						i64s = make([]int64, 0, len(rows))
					}
					i64s = append(i64s, v.Int64())
					*(**int64)(field) = &i64s[len(i64s)-1]
				case reflect.Bool:
					if !s.pointer {
						*(*bool)(field) = v.Boolean()
						break
					}
					if bools == nil {
						bools = make([]bool, 0, len(rows))
					}
					bools = append(bools, v.Boolean())
					*(**bool)(field) = &bools[len(bools)-1]
				default:
					b := v.ByteArray()
					var str string
					if len(b) > 0 {
						if cap(bytes)-len(bytes) < len(b) {
							bytes = make([]byte, 0, max(len(b), 4096))
						}
						start := len(bytes)
						bytes = append(bytes, b...)
						str = unsafe.String(&bytes[start], len(b))
					}
					if !s.pointer {
						*(*string)(field) = str
						break
					}
					if strs == nil {
						strs = make([]string, 0, len(rows))
					}
					strs = append(strs, str)
					*(**string)(field) = &strs[len(strs)-1]
				}
				j++
			}
			if errors.Is(err, io.EOF) || (err == nil && n == 0) {
				break
			}
			if err != nil {
				parquet.Release(page)
				return fmt.Errorf("column %s: %w", s.name, err)
			}
		}
		parquet.Release(page)
	}
	if j != len(rows) {
		return fmt.Errorf("column %s holds %d values for %d rows", s.name, j, len(rows))
	}
	return nil
}
