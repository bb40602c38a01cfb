package sqlite

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// The row codec is shared with the PostgreSQL store (internal/store/codec):
// times are fixed-width UTC text (codec.TimeLayout), so they sort as text
// in time order and read back equal to the nanosecond.

// encTime encodes t for a nullable column: NULL for the zero time.
func encTime(t time.Time) any { return codec.Time(t) }

// encTimeNN encodes t for a NOT NULL column.
func encTimeNN(t time.Time) string { return codec.TimeNN(t) }

func decTime(ns sql.NullString) (time.Time, error) {
	t, err := codec.ParseTime(ns)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: %w", err)
	}
	return t, nil
}

// serverCols is the column list every server query selects, in scanServer's order.
const serverCols = codec.ServerCols

type scanner = codec.Scanner

func scanServer(sc scanner) (*lifecycle.Server, error) {
	s, err := codec.ScanServer(sc)
	if err != nil && err != sql.ErrNoRows {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return s, err
}

func requestsOf(s *lifecycle.Server) (string, error) { return codec.Requests(s) }

// lifecycleDocs holds the JSON columns SaveServer and CreateServer write.
type lifecycleDocs struct {
	ext, excluded, attempts string
	fault                   any // nil or string
}

func encodeDocs(s *lifecycle.Server) (lifecycleDocs, error) {
	d, err := codec.EncodeDocs(s)
	return lifecycleDocs{ext: d.Ext, excluded: d.Excluded, attempts: d.Attempts, fault: d.Fault}, err
}
