package history

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Node is an Ironic node as one look at Ironic showed it.
type Node struct {
	UUID           string
	InstanceUUID   string
	ProvisionState string
	VIFs           []string // the VIF ids attached, when the look shows them
}

// Holding is something outside ingot's database that exists for a server
// or on a node — a Neutron port, a Cinder attachment, an Ironic volume
// target, a VIF — and must belong to a live server once the run is quiet.
type Holding struct {
	Kind   string // "port", "attachment", "target", "vif", …
	ID     string
	Server string // the server it is for ("" when only the node is known)
	Node   string // the node it is on ("" when only the server is known)
}

// Final is the state once the run is quiet: every build and delete ended.
type Final struct {
	At       time.Time
	Servers  map[string]Seen // every server ingot lists, by id
	Nodes    []Node          // every Ironic node (nil: Ironic not looked at)
	Holdings []Holding
}

// Snapshot is one look at Ironic during the run.
type Snapshot struct {
	At    time.Time
	Nodes []Node
}

// ObserveNodes records a look at Ironic's nodes (the double-held check
// reads every look, not only the last).
func (r *Recorder) ObserveNodes(nodes []Node) {
	r.mu.Lock()
	r.snaps = append(r.snaps, Snapshot{At: time.Now(), Nodes: nodes})
	r.mu.Unlock()
}

// Servers lists every server through the API at api (paged by 1,000; at
// microversion 2.90, so the node is shown to an admin); token, when set, is
// sent as X-Auth-Token. Through a recorded client, the pages are recorded
// too.
func Servers(c *http.Client, api, token string) (map[string]Seen, error) {
	out := map[string]Seen{}
	marker := ""
	for {
		u := api + "/v2.1/servers/detail?limit=1000"
		if marker != "" {
			u += "&marker=" + marker
		}
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		var page struct {
			Servers []wire `json:"servers"`
		}
		if err := getJSON(c, req, &page); err != nil {
			return nil, fmt.Errorf("list servers: %w", err)
		}
		for _, w := range page.Servers {
			out[w.ID] = w.seen()
		}
		if len(page.Servers) < 1000 {
			return out, nil
		}
		marker = page.Servers[len(page.Servers)-1].ID
	}
}

// SimNodes reads every node of the Ironic simulator at url (its admin
// API, which shows the VIFs too).
func SimNodes(c *http.Client, url string) ([]Node, error) {
	req, err := http.NewRequest(http.MethodGet, url+"/_sim/nodes", nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		Nodes []struct {
			UUID           string   `json:"uuid"`
			InstanceUUID   string   `json:"instance_uuid"`
			ProvisionState string   `json:"provision_state"`
			VIFs           []string `json:"vifs"`
		} `json:"nodes"`
	}
	if err := getJSON(c, req, &out); err != nil {
		return nil, fmt.Errorf("simulator nodes: %w", err)
	}
	nodes := make([]Node, 0, len(out.Nodes))
	for _, n := range out.Nodes {
		nodes = append(nodes, Node{UUID: n.UUID, InstanceUUID: n.InstanceUUID, ProvisionState: n.ProvisionState, VIFs: n.VIFs})
	}
	return nodes, nil
}

func getJSON(c *http.Client, req *http.Request, out any) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d", req.Method, req.URL.Path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
