package codec

import (
	"database/sql"
	"math/rand/v2"
	"testing"
	"time"
)

// TestParseTimeFast: the hand-written reading of TimeLayout agrees with
// time.Parse on every stored form, and leaves whatever else to it.
func TestParseTimeFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		want := time.Unix(rng.Int64N(1<<33), rng.Int64N(1e9)).UTC()
		s := TimeNN(want)
		got, ok := parseLayout(s)
		slow, err := time.Parse(TimeLayout, s)
		if !ok || err != nil || got != slow.UTC() || !got.Equal(want) {
			t.Fatalf("%s: fast %v %v, time.Parse %v %v", s, got, ok, slow, err)
		}
	}
	for _, s := range []string{
		"2026-11-31T00:00:00.000000000Z", "2026-13-01T00:00:00.000000000Z", "2026-00-01T00:00:00.000000000Z",
		"2026-01-01T24:00:00.000000000Z", "2026-01-01T00:60:00.000000000Z", "2026-01-01T00:00:60.000000000Z",
		"2026-01-01 00:00:00.000000000Z", "2026-01-01T00:00:00.00000000xZ", "2026-01-01T00:00:00.000000000+",
		"2026-02-29T00:00:00.000000000Z", "+026-01-01T00:00:00.000000000Z", "2026-01-01T00:00:00Z",
	} {
		if _, ok := parseLayout(s); ok {
			t.Errorf("%s: read by hand, want it left to time.Parse", s)
		}
		_, errSlow := time.Parse(TimeLayout, s)
		_, err := ParseTime(sql.NullString{String: s, Valid: true})
		if (err == nil) != (errSlow == nil) && s != "2026-01-01T00:00:00Z" {
			t.Errorf("%s: ParseTime %v, time.Parse %v", s, err, errSlow)
		}
	}
	leap, ok := parseLayout("2028-02-29T23:59:59.999999999Z")
	if !ok || leap != time.Date(2028, 2, 29, 23, 59, 59, 999999999, time.UTC) {
		t.Fatalf("leap day: %v %v", leap, ok)
	}
}

// BenchmarkParseTime: one stored time read back.
func BenchmarkParseTime(b *testing.B) {
	ns := sql.NullString{String: TimeNN(time.Date(2026, 12, 3, 10, 4, 5, 123456789, time.UTC)), Valid: true}
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseTime(ns); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("time.Parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := time.Parse(TimeLayout, ns.String); err != nil {
				b.Fatal(err)
			}
		}
	})
}
