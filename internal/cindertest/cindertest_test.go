package cindertest

import "testing"

// TestStart: the pool is there once Start returns (so a volume created at
// once does not go to error), and the catalog names Cinder's endpoint.
func TestStart(t *testing.T) {
	e := Start(t)
	t.Logf("Cinder up in %s at %s, pool %s, RSS %d MiB", e.SetupTime.Round(1e6), e.URL, e.Pool, e.RSS()/1024)
	if e.Pool == "" {
		t.Fatal("no pool")
	}
	var out struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	e.Get(t, e.Keystone.Token(t, "member-a"), "/volumes", &out)
	if len(out.Volumes) != 0 {
		t.Fatalf("a fresh Cinder lists volumes: %+v", out.Volumes)
	}
}
