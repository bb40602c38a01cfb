package soak

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/ingottest"
)

func TestMain(m *testing.M) { os.Exit(ingottest.Main(m)) }

// settings are the soak's knobs, from the environment.
type settings struct {
	duration  time.Duration // INGOT_SOAK: how long the churn runs
	mode      string        // INGOT_SOAK_MODE: sqlite (default) or replicas
	rate      float64       // INGOT_SOAK_RATE: requests a second, e.g. 2/s (default)
	seed      int64         // INGOT_SOAK_SEED: the fault schedule's (default: the time)
	sample    time.Duration // INGOT_SOAK_SAMPLE: how often the processes are sampled (default 10s)
	killEvery time.Duration // INGOT_SOAK_KILL_EVERY: mean time between kill -9s (default 3m)
	nodes     int           // INGOT_SOAK_NODES: the simulator's nodes (default 24)
}

// load reads the settings; ok is false when INGOT_SOAK is unset.
func load(t *testing.T) (s settings, ok bool) {
	raw := os.Getenv("INGOT_SOAK")
	if raw == "" {
		return s, false
	}
	var err error
	if s.duration, err = time.ParseDuration(raw); err != nil || s.duration <= 0 {
		t.Fatalf("INGOT_SOAK=%q: want a duration such as 1h", raw)
	}
	s.mode = env("INGOT_SOAK_MODE", "sqlite")
	if s.mode != "sqlite" && s.mode != "replicas" {
		t.Fatalf("INGOT_SOAK_MODE=%q: want sqlite or replicas", s.mode)
	}
	rate := strings.TrimSuffix(env("INGOT_SOAK_RATE", "2/s"), "/s")
	if s.rate, err = strconv.ParseFloat(rate, 64); err != nil || s.rate <= 0 {
		t.Fatalf("INGOT_SOAK_RATE=%q: want requests a second, e.g. 2/s", rate)
	}
	s.seed = time.Now().UnixNano()
	if v := os.Getenv("INGOT_SOAK_SEED"); v != "" {
		if s.seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("INGOT_SOAK_SEED=%q: %v", v, err)
		}
	}
	s.sample = durationEnv(t, "INGOT_SOAK_SAMPLE", 10*time.Second)
	s.killEvery = durationEnv(t, "INGOT_SOAK_KILL_EVERY", 3*time.Minute)
	if s.nodes, err = strconv.Atoi(env("INGOT_SOAK_NODES", "24")); err != nil || s.nodes < 2 {
		t.Fatalf("INGOT_SOAK_NODES: want a number of nodes ≥ 2")
	}
	return s, true
}

func (s settings) String() string {
	return fmt.Sprintf("INGOT_SOAK=%s INGOT_SOAK_MODE=%s INGOT_SOAK_RATE=%g/s INGOT_SOAK_SEED=%d INGOT_SOAK_SAMPLE=%s INGOT_SOAK_KILL_EVERY=%s INGOT_SOAK_NODES=%d",
		s.duration, s.mode, s.rate, s.seed, s.sample, s.killEvery, s.nodes)
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func durationEnv(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}
