package adopt

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// novaDiffAllowed are the members of GET /servers/{id} (2.90, as the
// owner) in which ingot may differ from what Nova showed before the
// switch, each with the reason. Every other member must be equal.
var novaDiffAllowed = map[string]string{
	"updated": "the adoption and the power sync write the record: its time is ingot's",
	"links":   "the endpoint's own URL (another host and port)",
	"hostId":  "sha224 of the project and the compute host: ingot's host is not nova-compute's",
	// Shown differently by ingot for every server, adopted or not (left for
	// the render's owners; not adoption's to fix):
	"progress":     "Nova's Ironic driver never sets it (0); ingot shows 100 once a server is built",
	"config_drive": "ingot shows \"True\" for every server (its builds always write one); Nova's deploy had none (\"\")",
}

// novaDiffAbsent are members ingot may show where Nova showed none (and
// must show equal where Nova did), with the reason.
var novaDiffAbsent = map[string]string{
	"security_groups": "without ports Nova lists no group (it reads them from the ports); ingot shows the server's " +
		"requested ones (default)",
}

// novaDiffLinks are members whose only allowed difference is the links'
// URLs (the image's bookmark names the compute endpoint's host).
var novaDiffLinks = map[string]bool{"image": true}

// diffServer lists the members that differ between Nova's body and
// ingot's, outside novaDiffAllowed.
func diffServer(nova, ingot map[string]any) []string {
	keys := map[string]bool{}
	for k := range nova {
		keys[k] = true
	}
	for k := range ingot {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		if _, ok := novaDiffAllowed[k]; ok {
			continue
		}
		n, nok := nova[k]
		i, iok := ingot[k]
		if novaDiffLinks[k] {
			n, i = withoutLinks(n), withoutLinks(i)
		}
		switch {
		case !nok && novaDiffAbsent[k] != "":
		case !nok:
			out = append(out, fmt.Sprintf("%s: only ingot shows it (%s)", k, js(i)))
		case !iok:
			out = append(out, fmt.Sprintf("%s: only Nova shows it (%s)", k, js(n)))
		case !reflect.DeepEqual(n, i):
			out = append(out, fmt.Sprintf("%s: Nova %s, ingot %s", k, js(n), js(i)))
		}
	}
	return out
}

// withoutLinks is v without its "links" member.
func withoutLinks(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		if k != "links" {
			out[k] = x
		}
	}
	return out
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
