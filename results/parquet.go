package results

import (
	"io"

	"github.com/parquet-go/parquet-go"
)

// ParquetFile is the name of the results table inside an output directory.
const ParquetFile = "results.parquet"

// WriteParquet writes rows, in the order given, to the Parquet file at path (Snappy-compressed,
// one row group), atomically: a temporary file is written, synced and renamed over path.
func WriteParquet(path string, rows []Row) error { return writeTable(path, rows) }

// writeTable writes rows as a Snappy-compressed Parquet table (one row group, the schema of T's
// parquet tags) to path, atomically.
func writeTable[T any](path string, rows []T) error {
	return WriteAtomic(path, func(out io.Writer) error {
		w := parquet.NewGenericWriter[T](out, parquet.Compression(&parquet.Snappy))
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}

// ReadParquet reads every row of the results.parquet file at path. A file that is not Parquet is
// a *PartError naming it.
func ReadParquet(path string) ([]Row, error) {
	rows, _, err := readRows(path)
	return rows, err
}

// CountRows is the number of rows the footer of the Parquet file at path announces (its rows are
// not read). A file that is not Parquet is a *PartError naming it.
func CountRows(path string) (int, error) {
	n := 0
	_, err := readRowsInto(path, func(rows int) ([]Row, error) {
		n = rows
		return nil, nil
	})
	return n, err
}
