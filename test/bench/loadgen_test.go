package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// loadEnv names the plan file of a load generator run (the test binary
// re-executed as TestBenchAPILoad).
const loadEnv = "INGOT_BENCH_LOAD"

// shot is one request of an open-loop plan.
type shot struct {
	Kind   string `json:"kind"`
	Method string `json:"method"`
	URL    string `json:"url"`
	Body   []byte `json:"body,omitempty"`
}

type loadPlan struct {
	Rate  int    `json:"rate"`
	Shots []shot `json:"shots"`
}

// sample is one request's outcome: its latency from its scheduled start.
type sample struct {
	Kind string        `json:"kind"`
	D    time.Duration `json:"d"`
	OK   bool          `json:"ok"`
}

// runLoad fires the plan from a separate process, so the generator's own
// CPU, allocations and GC are not profiled or collected as ingot's (they
// still share the machine's cores). It returns the samples, the elapsed
// time and the generator's CPU.
func runLoad(t *testing.T, plan loadPlan) ([]sample, time.Duration, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "plan.json"), filepath.Join(dir, "samples.json")
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchAPILoad$", "-test.count=1")
	cmd.Env = append(os.Environ(), loadEnv+"="+in, loadEnv+"_OUT="+out, "INGOT_BENCH_CPUPROFILE=")
	cmd.Stderr = os.Stderr
	start := time.Now()
	if b, err := cmd.Output(); err != nil {
		t.Fatalf("load generator: %v\n%s", err, b)
	}
	el := time.Since(start)
	genCPU := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var samples []sample
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&samples); err != nil {
		t.Fatalf("load generator's samples: %v", err)
	}
	return samples, el, genCPU
}

// TestBenchAPILoad is the load generator's side of runLoad; it runs only
// when runLoad starts it.
func TestBenchAPILoad(t *testing.T) {
	in := os.Getenv(loadEnv)
	if in == "" {
		t.Skip("the API benchmark's load generator (started by TestBenchAPI)")
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var plan loadPlan
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 2048}, Timeout: time.Minute}
	samples := make([]sample, len(plan.Shots))
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range plan.Shots {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(plan.Rate))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(s.Method, s.URL, bytes.NewReader(s.Body))
			if err != nil {
				samples[i] = sample{Kind: s.Kind, D: time.Since(at)}
				return
			}
			if s.Body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := hc.Do(req)
			ok := err == nil && resp.StatusCode < 300
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			samples[i] = sample{Kind: s.Kind, D: time.Since(at), OK: ok}
		}()
	}
	wg.Wait()
	out, err := json.Marshal(samples)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv(loadEnv+"_OUT"), out, 0o600); err != nil {
		t.Fatal(fmt.Errorf("write samples: %w", err))
	}
}
