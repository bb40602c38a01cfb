package policy

import (
	"fmt"
	"strings"
)

// A check is one parsed check string. The grammar is the subset of
// oslo.policy's that Nova's defaults and common overrides use:
//
//	expr  := and ("or" and)*
//	and   := not ("and" not)*
//	not   := "not" not | "(" expr ")" | atom
//	atom  := "@" | "!" | "role:NAME" | "rule:NAME" | "is_admin:True"
//	       | KEY ":%(" VAR ")s"   (a credential equals a target value: project_id, user_id)
//	       | KEY ":" LITERAL      (a credential equals a literal)
//
// An empty check string is "@" (always), as in oslo.policy.
type check interface {
	eval(e *evaluation) bool
}

type (
	always  struct{}
	never   struct{}
	roleChk string
	ruleChk string
	orChk   []check
	andChk  []check
	notChk  struct{ c check }
	// matchChk compares a credential (project_id, user_id, …) with a target
	// value (target set) or a literal.
	matchChk struct {
		cred, target, literal string
		fromTarget            bool
	}
)

func (always) eval(*evaluation) bool { return true }
func (never) eval(*evaluation) bool  { return false }
func (c roleChk) eval(e *evaluation) bool {
	for _, r := range e.creds.Roles {
		if strings.EqualFold(r, string(c)) {
			return true
		}
	}
	return false
}
func (c ruleChk) eval(e *evaluation) bool { return e.rule(string(c)) }
func (c orChk) eval(e *evaluation) bool {
	for _, x := range c {
		if x.eval(e) {
			return true
		}
	}
	return false
}
func (c andChk) eval(e *evaluation) bool {
	for _, x := range c {
		if !x.eval(e) {
			return false
		}
	}
	return true
}
func (c notChk) eval(e *evaluation) bool { return !c.c.eval(e) }
func (c matchChk) eval(e *evaluation) bool {
	have := e.creds.value(c.cred)
	if have == "" {
		return false // an absent credential matches nothing, not an absent target
	}
	if c.fromTarget {
		return e.target[c.target] == have
	}
	return have == c.literal
}

// parse parses a check string; refs collects the rule names it refers to.
func parse(s string) (check, []string, error) {
	p := &parser{toks: tokenize(s)}
	if len(p.toks) == 0 {
		return always{}, nil, nil
	}
	c, err := p.expr()
	if err != nil {
		return nil, nil, err
	}
	if p.pos < len(p.toks) {
		return nil, nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return c, p.refs, nil
}

func tokenize(s string) []string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "(", " ( "), ")", " ) ")
	// "%(project_id)s" was split by the line above: join it back.
	s = strings.ReplaceAll(s, "% ( ", "%(")
	s = strings.ReplaceAll(s, " ) s", ")s")
	return strings.Fields(s)
}

type parser struct {
	toks []string
	pos  int
	refs []string
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) expr() (check, error) {
	first, err := p.and()
	if err != nil {
		return nil, err
	}
	out := orChk{first}
	for strings.EqualFold(p.peek(), "or") {
		p.pos++
		c, err := p.and()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 1 {
		return first, nil
	}
	return out, nil
}

func (p *parser) and() (check, error) {
	first, err := p.not()
	if err != nil {
		return nil, err
	}
	out := andChk{first}
	for strings.EqualFold(p.peek(), "and") {
		p.pos++
		c, err := p.not()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 1 {
		return first, nil
	}
	return out, nil
}

func (p *parser) not() (check, error) {
	tok := p.peek()
	switch {
	case tok == "":
		return nil, fmt.Errorf("check string ends early")
	case strings.EqualFold(tok, "not"):
		p.pos++
		c, err := p.not()
		if err != nil {
			return nil, err
		}
		return notChk{c}, nil
	case tok == "(":
		p.pos++
		c, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing ')'")
		}
		p.pos++
		return c, nil
	}
	p.pos++
	return p.atom(tok)
}

func (p *parser) atom(tok string) (check, error) {
	switch tok {
	case "@":
		return always{}, nil
	case "!":
		return never{}, nil
	case ")", "and", "or":
		return nil, fmt.Errorf("unexpected %q", tok)
	}
	kind, val, ok := strings.Cut(tok, ":")
	if !ok || kind == "" || val == "" {
		return nil, fmt.Errorf("cannot read check %q (want kind:value)", tok)
	}
	switch kind {
	case "role":
		return roleChk(val), nil
	case "rule":
		p.refs = append(p.refs, val)
		return ruleChk(val), nil
	case "is_admin":
		// Nova's context.is_admin comes from the context_is_admin rule.
		if !strings.EqualFold(val, "true") {
			return never{}, nil
		}
		p.refs = append(p.refs, "context_is_admin")
		return ruleChk("context_is_admin"), nil
	}
	if !knownCred(kind) {
		return nil, fmt.Errorf("unknown credential %q in %q (ingot knows project_id, user_id, domain_id)", kind, tok)
	}
	if strings.HasPrefix(val, "%(") && strings.HasSuffix(val, ")s") {
		return matchChk{cred: kind, target: strings.TrimSuffix(strings.TrimPrefix(val, "%("), ")s"), fromTarget: true}, nil
	}
	return matchChk{cred: kind, literal: val}, nil
}
