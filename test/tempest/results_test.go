package tempest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// result is one test's outcome, as subunit2json.py writes it.
type result struct {
	ID      string  `json:"id"`
	Status  string  `json:"status"` // success, fail, skip, xfail, uxsuccess
	Reason  string  `json:"reason"`
	Seconds float64 `json:"seconds"`
}

// collect reads the last stestr run of the workspace into results (and
// writes them to jsonPath).
func collect(ws string, env []string, jsonPath string) ([]result, error) {
	stream := filepath.Join(filepath.Dir(jsonPath), "results.subunit")
	out, err := runCmd(ws, env, time.Minute, "/bin/sh", "-c", stestrBin+" last --subunit > "+stream)
	if err != nil {
		return nil, fmt.Errorf("stestr last: %v\n%s", err, out)
	}
	return readSubunit(ws, env, stream, jsonPath)
}

// readSubunit reads a subunit v2 stream into results (and writes them to
// jsonPath).
func readSubunit(ws string, env []string, stream, jsonPath string) ([]result, error) {
	script, err := filepath.Abs("subunit2json.py")
	if err != nil {
		return nil, err
	}
	out, err := runCmd(ws, env, time.Minute, "/bin/sh", "-c", python+" "+script+" < "+stream+" > "+jsonPath)
	if err != nil {
		return nil, fmt.Errorf("subunit2json: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, err
	}
	var rs []result
	if err := json.Unmarshal(raw, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w", jsonPath, err)
	}
	return rs, nil
}

// attrs are the [id-…,smoke] suffixes Tempest puts on test ids.
var attrs = regexp.MustCompile(`\[[^\]]*\]$`)

// baseID is a test id without its attributes.
func baseID(id string) string { return attrs.ReplaceAllString(id, "") }

// readExpected reads the expected-failure list: one test id (without its
// [id-…] attributes) per line, then its reason; # starts a comment. An
// entry without a reason is an error: every expected failure says why.
func readExpected(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, n, id)
		}
		out[baseID(id)] = strings.TrimSpace(reason)
	}
	return out, sc.Err()
}

// report is a run's counts and what CI fails on.
type report struct {
	passed, failed, expectedFailed, skipped int
	unexpected                              []result // failures not in the list
	fixed                                   []string // listed, but passed
	byCause                                 map[string][]string
	skips                                   map[string][]string
	all                                     []result
}

// summarize counts results; a failing test is unexpected unless listed.
func summarize(rs []result, expected map[string]string) report {
	r := report{byCause: map[string][]string{}, skips: map[string][]string{}, all: rs}
	for _, x := range rs {
		id := baseID(x.ID)
		switch x.Status {
		case "success", "uxsuccess":
			r.passed++
			if _, ok := expected[id]; ok {
				r.fixed = append(r.fixed, id)
			}
		case "skip":
			r.skipped++
			reason := strings.TrimSpace(x.Reason)
			r.skips[reason] = append(r.skips[reason], id)
		default:
			r.failed++
			if _, ok := expected[id]; ok {
				r.expectedFailed++
			} else {
				r.unexpected = append(r.unexpected, x)
			}
			c := cause(x.Reason)
			r.byCause[c] = append(r.byCause[c], id)
		}
	}
	return r
}

// frameRe matches a traceback frame of Tempest's service clients, e.g.
// File ".../tempest/lib/services/compute/hypervisor_client.py", line 51, in list_hypervisors.
var frameRe = regexp.MustCompile(`tempest/lib/services/(?:\w+/)*(\w+)\.py", line \d+, in (\w+)`)

// cause is the gist of a failure, to group failures by: the service
// client call that failed (the route), then the schema violation, or the
// exception with the start of its details (status code, body).
func cause(reason string) string {
	lines := strings.Split(strings.TrimSpace(reason), "\n")
	call := ""
	for _, l := range lines {
		if m := frameRe.FindStringSubmatch(l); m != nil && m[1] != "rest_client" && m[1] != "base_compute_client" {
			call = m[1] + "." + m[2] + ": "
		}
	}
	short := func(s string, n int) string {
		s = strings.TrimSpace(s)
		if len(s) > n {
			return s[:n] + "…"
		}
		return s
	}
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "jsonschema.exceptions.ValidationError: "); ok {
			where := ""
			for _, m := range lines[i+1:] {
				if strings.HasPrefix(strings.TrimSpace(m), "Failed validating") {
					where = " (" + strings.TrimSpace(m) + ")"
					break
				}
			}
			return call + "schema: " + short(rest, 200) + where
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "Details:") || l == "" || strings.HasPrefix(l, " ") {
			continue
		}
		if strings.Contains(l, "Error") || strings.Contains(l, "Exception") || strings.Contains(l, "exception") ||
			strings.Contains(l, "Failed") || strings.Contains(l, "Mismatch") || strings.Contains(l, "Timeout") {
			details := ""
			if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "Details:") {
				details = " " + short(lines[i+1], 160)
			}
			return call + short(l, 200) + details
		}
	}
	if len(lines) > 0 {
		return call + short(lines[len(lines)-1], 200)
	}
	return "(no traceback)"
}

// text is summary.txt: counts, failures by cause, skips by reason.
func (r report) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "passed %d, failed %d (expected %d), skipped %d\n\n", r.passed, r.failed, r.expectedFailed, r.skipped)
	group := func(title string, m map[string][]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return len(m[keys[i]]) > len(m[keys[j]]) || (len(m[keys[i]]) == len(m[keys[j]]) && keys[i] < keys[j])
		})
		fmt.Fprintf(&b, "== %s\n", title)
		for _, k := range keys {
			fmt.Fprintf(&b, "\n-- %d: %s\n", len(m[k]), k)
			ids := append([]string(nil), m[k]...)
			sort.Strings(ids)
			for _, id := range ids {
				fmt.Fprintf(&b, "   %s\n", id)
			}
		}
		b.WriteString("\n")
	}
	group("failures by cause", r.byCause)
	group("skips by reason", r.skips)
	b.WriteString("== failure details\n")
	for _, x := range r.all {
		if x.Status == "fail" {
			fmt.Fprintf(&b, "\n---- %s\n%s\n", x.ID, x.Reason)
		}
	}
	return b.String()
}
