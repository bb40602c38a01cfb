package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/safetext"
)

// Names, metadata and faults that hold controls and bidi characters are
// printed escaped, each row on its own line, in every table and show.
func TestCLIEscapesUntrustedText(t *testing.T) {
	f := newCLIFixture(t)
	const nasty = "evil\u202etxt.exe\x1b[31m\nfake\trow\x00"
	out, errOut, err := f.run("server", "create", "vm1", "--flavor", "1", "--image", cliImage, "--network", "none")
	if err != nil {
		t.Fatalf("create: %v\n%s%s", err, out, errOut)
	}
	id := regexp.MustCompile(`(?m)^id\s+(\S+)$`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no id in:\n%s", out)
	}
	// Written past the API's checks: the CLI must not rely on them.
	if _, err := f.store.UpdateServer(context.Background(), id[1], nil, func(s *lifecycle.Server) error {
		s.Name = nasty
		s.Spec.Metadata = map[string]string{"k\x1b]0;title\x07": "v\u2066\u0085"}
		s.Spec.Tags = []string{"nul\x00", "nl\nesc\x1b"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s, err := f.store.GetServer(context.Background(), id[1])
	if err != nil {
		t.Fatal(err)
	}
	s.Phase = lifecycle.PhaseError
	s.Fault = &lifecycle.Fault{Reason: lifecycle.ReasonDeployFailed, Message: "deploy failed:\x1b[2J\rdone", Step: lifecycle.StepDeploy}
	if err := f.store.SaveServer(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	escapedName := `evil\u202etxt.exe\x1b[31m\nfake\trow\x00`
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"server", "show", id[1]}, []string{escapedName, `k\x1b]0;title\x07=v\u2066\u0085`, `nul\x00, nl\nesc\x1b`, `deploy failed:\x1b[2J\rdone`}},
		{[]string{"server", "list"}, []string{escapedName}},
		{[]string{"server", "events", id[1]}, []string{"create"}},
		{[]string{"node", "list"}, []string{`ipmi: \x1b[2Jcleared \u202eyour screen`}},
	} {
		out, errOut, err := f.run(c.args...)
		if err != nil {
			t.Errorf("%s: %v\n%s", c.args, err, errOut)
			continue
		}
		if strings.ContainsFunc(strings.ReplaceAll(out+errOut, "\n", ""), safetext.Acts) {
			t.Errorf("%s printed a control or bidi character raw: %q", c.args, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %s:\n%s", c.args, w, out)
			}
		}
		if c.args[1] == "list" && strings.Count(out, "\n") != 2 {
			t.Errorf("%s: %d lines, want a header and one row:\n%s", c.args, strings.Count(out, "\n"), out)
		}
	}
}

func TestNodeListPowerColumn(t *testing.T) {
	f := newCLIFixture(t)
	out, _, err := f.run("node", "list")
	if err != nil || !regexp.MustCompile(`(?m)^UUID\s+NAME\s+PROVISION STATE\s+POWER\s+MAINT`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^node-1\s+rack1-1\s+active\s+power on\s+-`).MatchString(out) {
		t.Errorf("node list: %v\n%s", err, out)
	}
}

// The API's error messages (main prints them) are escaped too.
func TestHTTPErrorEscaped(t *testing.T) {
	got := (&httpError{status: 400, message: "Invalid name \x1b[2J\u202e"}).Error()
	if want := `400 Bad Request: Invalid name \x1b[2J\u202e`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
