package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads a YAML file over the defaults and validates the result.
// Unknown keys are errors, so a typo never passes silently.
func Load(path string) (Config, error) {
	return LoadOver(Default(), path)
}

// LoadOver reads a YAML file over base (e.g. Dev's configuration): keys in
// the file replace base's, lists as a whole. The result is validated.
func LoadOver(base Config, path string) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return parseOver(base, raw)
}

// Parse decodes YAML over the defaults and validates the result.
func Parse(raw []byte) (Config, error) {
	return parseOver(Default(), raw)
}

func parseOver(c Config, raw []byte) (Config, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) { // empty file: all defaults
		return Config{}, explain(raw, err)
	}
	if err := c.Normalize(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// explain names the key behind a YAML decoding error ("line 3: cannot
// unmarshal …" becomes "build_timeout (line 3): cannot unmarshal …").
func explain(raw []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("config: %w", err)
	}
	var root yaml.Node
	if yaml.Unmarshal(raw, &root) != nil {
		return fmt.Errorf("config: %w", err)
	}
	var msgs []string
	for _, e := range te.Errors {
		line := 0
		fmt.Sscanf(e, "line %d:", &line)
		if key := keyAtLine(&root, line, ""); key != "" {
			e = key + " (" + e + ")"
		}
		msgs = append(msgs, e)
	}
	return fmt.Errorf("config: %s", strings.Join(msgs, "; "))
}

// keyAtLine finds the dotted path of the value that starts on line.
func keyAtLine(n *yaml.Node, line int, prefix string) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, prefix); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if prefix != "" {
				key = prefix + "." + key
			}
			v := n.Content[i+1]
			if v.Line == line && v.Kind == yaml.ScalarNode {
				return key
			}
			if k := keyAtLine(v, line, key); k != "" {
				return k
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if k := keyAtLine(c, line, fmt.Sprintf("%s[%d]", prefix, i)); k != "" {
				return k
			}
		}
	}
	return ""
}
