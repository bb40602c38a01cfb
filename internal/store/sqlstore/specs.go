package sqlstore

import (
	"encoding/json"
	"sync"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// specCacheSize bounds the specs kept: a few pages of a large fleet
// (a spec and its text take about 2 KiB).
const specCacheSize = 4096

// specCache keeps decoded specs by their stored text, for ListServers:
// a spec changes only with an update, so the pages a dashboard reads
// again and again would otherwise decode the same JSON each time. Keyed
// by the whole text, a hit is the very spec the row holds, whatever its
// server or project. The specs handed out share their maps and slices,
// hence ListServers' servers are read-only (store.Store.ListServers).
type specCache struct {
	mu sync.Mutex
	m  map[string]lifecycle.Spec
}

// decode is a codec.SpecDecoder that keeps what it decodes; full, it
// starts over rather than track use (a page's specs come back at once).
func (c *specCache) decode(text string, dst *lifecycle.Spec) error {
	c.mu.Lock()
	sp, ok := c.m[text]
	c.mu.Unlock()
	if ok {
		*dst = sp
		return nil
	}
	if err := json.Unmarshal([]byte(text), &sp); err != nil {
		return err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= specCacheSize {
		c.m = make(map[string]lifecycle.Spec, specCacheSize)
	}
	c.m[text] = sp
	c.mu.Unlock()
	*dst = sp
	return nil
}
