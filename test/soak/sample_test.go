package soak

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sample is one look at one ingot process.
type sample struct {
	at         time.Duration // since the churn began
	slot       string
	pid        int
	rssKB      int
	goroutines int
	fds        int
	requests   int64 // sent so far
}

// metric names a sampled figure and how to read it.
type metric struct {
	name  string
	value func(sample) int
	floor int // the growth below which the flatness check never fails
}

var metrics = []metric{
	{"rss_kb", func(s sample) int { return s.rssKB }, 16 << 10},
	{"goroutines", func(s sample) int { return s.goroutines }, 50},
	{"open_fds", func(s sample) int { return s.fds }, 20},
}

// look samples every slot whose ingot is up; a figure it cannot read is -1.
func (w *world) look(at time.Duration, requests int64) []sample {
	var out []sample
	for _, sl := range w.slots {
		p := sl.proc()
		if p == nil || !p.Alive() {
			continue
		}
		s := sample{at: at, slot: sl.name, pid: p.Pid(), rssKB: rss(p.Pid()), goroutines: goroutines(p.API), requests: requests}
		if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid)); err == nil {
			s.fds = len(fds)
		} else {
			s.fds = -1
		}
		out = append(out, s)
	}
	return out
}

// rss is VmRSS of /proc/pid/status, in kB.
func rss(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// goroutines is go_goroutines from the ingot's /metrics.
func goroutines(api string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/metrics", nil)
	if err != nil {
		return -1
	}
	resp, err := hc.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return int(f)
		}
	}
	return -1
}

func writeCSV(w io.Writer, samples []sample) error {
	c := csv.NewWriter(w)
	_ = c.Write([]string{"seconds", "slot", "pid", "rss_kb", "goroutines", "open_fds", "requests"})
	for _, s := range samples {
		_ = c.Write([]string{strconv.Itoa(int(s.at.Seconds())), s.slot, strconv.Itoa(s.pid), strconv.Itoa(s.rssKB),
			strconv.Itoa(s.goroutines), strconv.Itoa(s.fds), strconv.FormatInt(s.requests, 10)})
	}
	c.Flush()
	return c.Error()
}

// figures is first, max and last of one metric of one slot.
func figures(samples []sample, slot string, m metric) (first, most, last int, ok bool) {
	for _, s := range samples {
		v := m.value(s)
		if s.slot != slot || v < 0 {
			continue
		}
		if !ok {
			first, ok = v, true
		}
		most, last = max(most, v), v
	}
	return first, most, last, ok
}

// flat checks one metric of one slot: after the warm-up, the median of the
// last quarter of the samples may exceed the median of the first quarter
// by at most half of it, or by the metric's floor (whichever is more).
// The samples of a slot are pooled across its processes (a kill starts a
// new one), so a leak must show within a process's life, minutes here.
func flat(samples []sample, slot string, m metric, warmup time.Duration) (string, bool) {
	var vs []int
	for _, s := range samples {
		if s.slot == slot && s.at >= warmup && m.value(s) >= 0 {
			vs = append(vs, m.value(s))
		}
	}
	if len(vs) < 8 {
		return fmt.Sprintf("%s %s: %d samples after the warm-up, too few to judge", slot, m.name, len(vs)), true
	}
	q := len(vs) / 4
	head, tail := median(vs[:q]), median(vs[len(vs)-q:])
	ok := tail <= head+max(head/2, m.floor)
	return fmt.Sprintf("%s %s: first-quarter median %d, last-quarter median %d", slot, m.name, head, tail), ok
}

func median(vs []int) int {
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[len(s)/2]
}
