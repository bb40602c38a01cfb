package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// churn sends creates, deletes, reboots (and a show or a list now and
// then) at a steady rate to the ingots up, through the history's client.
type churn struct {
	w      *world
	http   *http.Client
	rng    *rand.Rand
	target int // servers kept alive at most: below it creates, at it deletes
	mu     sync.Mutex
	pool   []string // servers believed to exist and not deleted
	counts map[string]map[int]int
	sent   atomic.Int64
	names  int
}

func newChurn(w *world, hc *http.Client, seed int64, target int) *churn {
	return &churn{w: w, http: hc, rng: rand.New(rand.NewPCG(uint64(seed), 1)), target: target,
		counts: map[string]map[int]int{}}
}

// run sends requests at rate a second until ctx ends, each in its own
// goroutine (at most 32 at once, so a stalled link does not stop the
// rate), and returns once every request has been answered.
func (c *churn) run(ctx context.Context, rate float64) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	slots := make(chan struct{}, 32)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		kind, id, name, api := c.next()
		if api == "" {
			c.note(kind+" (not sent: no ingot up)", 0)
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			c.note(kind+" (skipped: 32 in flight)", 0)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			c.do(kind, api, id, name)
		}()
	}
}

// next chooses the next request under the lock.
func (c *churn) next() (kind, id, name, api string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	api = c.w.api(c.rng)
	r := c.rng.Float64()
	switch {
	case r < 0.1:
		kind = "list"
	case r < 0.2 && len(c.pool) > 0:
		kind = "show"
	case len(c.pool) == 0 || len(c.pool) < c.target && r < 0.55:
		c.names++
		return "create", "", fmt.Sprintf("soak-%d", c.names), api
	case r < 0.75:
		kind = "delete"
	default:
		kind = "reboot"
	}
	if kind != "list" {
		id = c.pool[c.rng.IntN(len(c.pool))]
	}
	return kind, id, "", api
}

func (c *churn) do(kind, api, id, name string) {
	var code int
	var body []byte
	switch kind {
	case "create":
		code, body = c.call(http.MethodPost, api+"/v2.1/servers", map[string]any{"server": map[string]any{"name": name, "flavorRef": "bm",
			"imageRef": c.w.cfg.Images[0].ID, "networks": []map[string]string{{"uuid": c.w.cfg.Networks[0].ID}}}})
		var out struct{ Server struct{ ID string } }
		if code == http.StatusAccepted && json.Unmarshal(body, &out) == nil && out.Server.ID != "" {
			c.add(out.Server.ID)
		}
	case "delete":
		if code, _ = c.call(http.MethodDelete, api+"/v2.1/servers/"+id, nil); code == http.StatusNoContent || code == http.StatusNotFound {
			c.drop(id)
		}
	case "reboot":
		code, _ = c.call(http.MethodPost, api+"/v2.1/servers/"+id+"/action", map[string]any{"reboot": map[string]string{"type": "HARD"}})
	case "show":
		if code, _ = c.call(http.MethodGet, api+"/v2.1/servers/"+id, nil); code == http.StatusNotFound {
			c.drop(id)
		}
	case "list":
		code, body = c.call(http.MethodGet, api+"/v2.1/servers/detail", nil)
		if code == http.StatusOK {
			c.refresh(body)
		}
	}
	c.note(kind, code)
}

// call sends one request; code 0 when no answer came.
func (c *churn) call(method, url string, body any) (int, []byte) {
	c.sent.Add(1)
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.90")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil
	}
	return resp.StatusCode, raw
}

func (c *churn) add(id string) {
	c.mu.Lock()
	c.pool = append(c.pool, id)
	c.mu.Unlock()
}

func (c *churn) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.pool {
		if p == id {
			c.pool = append(c.pool[:i], c.pool[i+1:]...)
			return
		}
	}
}

// refresh takes the pool from a listing: a create whose answer was lost
// joins it, a server being deleted leaves it.
func (c *churn) refresh(body []byte) {
	var out struct {
		Servers []struct {
			ID        string  `json:"id"`
			Status    string  `json:"status"`
			TaskState *string `json:"OS-EXT-STS:task_state"`
		} `json:"servers"`
	}
	if json.Unmarshal(body, &out) != nil {
		return
	}
	var pool []string
	for _, s := range out.Servers {
		if s.Status != "DELETED" && (s.TaskState == nil || *s.TaskState != "deleting") {
			pool = append(pool, s.ID)
		}
	}
	c.mu.Lock()
	c.pool = pool
	c.mu.Unlock()
}

func (c *churn) note(kind string, code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts[kind] == nil {
		c.counts[kind] = map[int]int{}
	}
	c.counts[kind][code]++
}

// summary is each kind's answers by status (0: no answer).
func (c *churn) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	for _, kind := range slices.Sorted(maps.Keys(c.counts)) {
		fmt.Fprintf(&b, " %s", kind)
		for _, code := range slices.Sorted(maps.Keys(c.counts[kind])) {
			fmt.Fprintf(&b, " %d×%d", c.counts[kind][code], code)
		}
		b.WriteString(";")
	}
	return fmt.Sprintf("%d requests sent:%s", c.sent.Load(), b.String())
}
