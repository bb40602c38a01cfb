package app

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/clock"
)

// TestFreshToken: ingot's token is handed out as the provider has it, and
// renewed once it has been in use for maxAge (nothing else renews it while
// the API is idle); a renewal made elsewhere restarts the count.
func TestFreshToken(t *testing.T) {
	pc := &gophercloud.ProviderClient{}
	n := 0
	pc.ReauthFunc = func(context.Context) error { n++; pc.SetToken("t" + string(rune('1'+n))); return nil }
	pc.SetToken("t1")
	clk := clock.NewManual(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	f := &freshToken{pc: pc, clk: clk, maxAge: 30 * time.Minute}
	ctx := context.Background()
	tok := func() string {
		s, err := f.Token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := tok(); got != "t1" {
		t.Fatalf("first token %q", got)
	}
	clk.Advance(29 * time.Minute)
	if got := tok(); got != "t1" || n != 0 {
		t.Fatalf("before maxAge: %q, %d renewals", got, n)
	}
	clk.Advance(time.Minute)
	if got := tok(); got != "t2" || n != 1 {
		t.Fatalf("at maxAge: %q, %d renewals", got, n)
	}
	clk.Advance(20 * time.Minute)
	pc.SetToken("elsewhere")
	clk.Advance(20 * time.Minute)
	if got := tok(); got != "elsewhere" || n != 1 {
		t.Fatalf("renewed elsewhere: %q, %d renewals", got, n)
	}
}
