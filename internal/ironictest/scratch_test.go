package ironictest

import (
	"os"
	"testing"
	"time"
)

func TestScratchServe(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	e := StartReal(t, RealOptions{CallbackTimeout: 300 * time.Second})
	os.WriteFile("/tmp/scratch-url", []byte(e.URL+"\n"), 0o644)
	for i := 0; i < 1200; i++ {
		if _, err := os.Stat("/tmp/scratch-stop"); err == nil {
			return
		}
		time.Sleep(time.Second)
	}
}
