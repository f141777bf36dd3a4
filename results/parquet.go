package results

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// ParquetFile is the name of the results table inside an output directory.
const ParquetFile = "results.parquet"

// WriteParquet writes rows, in the order given, to the Parquet file at path (Snappy-compressed,
// one row group), atomically: a temporary file is written, synced and renamed over path.
func WriteParquet(path string, rows []Row) error {
	return writeAtomic(path, func(out io.Writer) error {
		w := parquet.NewGenericWriter[Row](out, parquet.Compression(&parquet.Snappy))
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}

// ReadParquet reads every row of the results.parquet file at path.
func ReadParquet(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
	}
	r := parquet.NewGenericReader[Row](pf)
	defer r.Close()
	rows := make([]Row, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows[:n], nil
}
