// Package policy decides whether a caller may perform an API action, as
// Nova's oslo.policy rules do: a small table of named rules with Nova's
// 2023.1 defaults (a project reader reads, a member also writes, admin is
// needed for the admin routes and for other projects), overridable by a
// YAML file of "rule: check string" entries. It does no I/O after Load.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Creds is who asks: the identity a token or the noauth headers resolved to.
type Creds struct {
	ProjectID string
	UserID    string
	DomainID  string
	Roles     []string
}

func (c Creds) value(key string) string {
	switch key {
	case "project_id", "tenant_id", "tenant":
		return c.ProjectID
	case "user_id":
		return c.UserID
	case "domain_id":
		return c.DomainID
	}
	return ""
}

func knownCred(key string) bool {
	switch key {
	case "project_id", "tenant_id", "tenant", "user_id", "domain_id":
		return true
	}
	return false
}

// Target is what a request acts on: project_id and user_id of the
// resource (for a list or a create, the caller's own).
type Target map[string]string

// Enforcer holds the parsed rules. Safe for concurrent use (read-only).
type Enforcer struct {
	rules map[string]check
	src   map[string]string
}

type evaluation struct {
	enf    *Enforcer
	creds  Creds
	target Target
	depth  int
}

// rule evaluates a named rule; an unknown rule, or a chain deeper than the
// table (a loop Load missed), is false.
func (e *evaluation) rule(name string) bool {
	c, ok := e.enf.rules[name]
	if !ok || e.depth > len(e.enf.rules) {
		return false
	}
	e.depth++
	defer func() { e.depth-- }()
	return c.eval(e)
}

// Allowed reports whether creds may perform rule on target. An unknown
// rule is never allowed.
func (e *Enforcer) Allowed(rule string, creds Creds, target Target) bool {
	ev := &evaluation{enf: e, creds: creds, target: target}
	return ev.rule(rule)
}

// Rules returns every rule name with its check string, sorted by name.
func (e *Enforcer) Rules() [][2]string {
	out := make([][2]string, 0, len(e.src))
	for k, v := range e.src {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Has reports whether a rule of that name exists.
func (e *Enforcer) Has(rule string) bool {
	_, ok := e.rules[rule]
	return ok
}

// New builds the defaults with overrides applied on top.
func New(overrides map[string]string) (*Enforcer, error) {
	src := make(map[string]string, len(Defaults)+len(overrides))
	for _, r := range Defaults {
		src[r.Name] = r.Check
	}
	for k, v := range overrides {
		if strings.TrimSpace(k) == "" {
			return nil, errors.New("policy: a rule with an empty name")
		}
		src[k] = v
	}
	e := &Enforcer{rules: map[string]check{}, src: src}
	refs := map[string][]string{}
	var errs []error
	for name, s := range src {
		c, r, err := parse(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy: rule %q: %q: %w", name, s, err))
			continue
		}
		e.rules[name], refs[name] = c, r
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for name, rs := range refs {
		for _, r := range rs {
			if _, ok := src[r]; !ok {
				return nil, fmt.Errorf("policy: rule %q refers to rule:%s, which does not exist", name, r)
			}
		}
	}
	if cycle := findCycle(refs); cycle != "" {
		return nil, fmt.Errorf("policy: rules refer to each other in a loop: %s", cycle)
	}
	return e, nil
}

// Load reads a policy file (YAML or JSON: a map of rule name to check
// string) and applies it over the defaults. An empty path means the
// defaults alone.
func Load(path string) (*Enforcer, error) {
	if path == "" {
		return New(nil)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var overrides map[string]string
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&overrides); err != nil && len(bytes.TrimSpace(raw)) > 0 {
		return nil, fmt.Errorf("policy: %s: want a map of rule name to check string: %w", path, err)
	}
	e, err := New(overrides)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

func findCycle(refs map[string][]string) string {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case active:
			path = append(path, n)
			return true
		case done:
			return false
		}
		state[n] = active
		path = append(path, n)
		for _, m := range refs[n] {
			if visit(m) {
				return true
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return false
	}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if visit(n) {
			return strings.Join(path, " -> ")
		}
	}
	return ""
}
