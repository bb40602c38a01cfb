package backend

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/pgtest"
)

// BenchmarkMove10k times, over 10,000 servers (each with an event and an
// action), a SQLite backup, a copy to PostgreSQL and one back, each with
// its verification (go test -run - -bench Move10k -benchtime 1x).
func BenchmarkMove10k(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "ingot.db")
	st := open(b, db)
	populate(b, st, 10000)
	st.Close()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		if err := Backup(b.Context(), db, filepath.Join(dir, fmt.Sprintf("backup-%d.db", i))); err != nil {
			b.Fatal(err)
		}
		backup := time.Since(t0)
		pg := pgtest.DSN(b)
		there, err := Copy(b.Context(), db, pg, "bench")
		if err != nil {
			b.Fatal(err)
		}
		back, err := Copy(b.Context(), pg, filepath.Join(dir, fmt.Sprintf("back-%d.db", i)), "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(backup.Seconds(), "backup-s")
		b.ReportMetric(there.Copy.Seconds(), "to-pg-copy-s")
		b.ReportMetric(there.Verified.Seconds(), "to-pg-verify-s")
		b.ReportMetric(back.Copy.Seconds(), "to-sqlite-copy-s")
		b.ReportMetric(back.Verified.Seconds(), "to-sqlite-verify-s")
	}
}
