package sqlstore

import (
	"encoding/json"
	"sync"

	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

// keptMax bounds each cache of decoded rows and specs: a few pages of a
// large fleet (a row, its decoded server and spec take about 4 KiB).
const keptMax = 4096

// kept holds what was decoded, by what it was decoded from; full, it
// starts over rather than track use (a page's rows come back at once).
type kept[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (c *kept[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *kept[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= keptMax {
		c.m = make(map[K]V, keptMax)
	}
	c.m[k] = v
}

// specCache keeps decoded specs by their stored text, for ListServers:
// a spec changes only with an update, so the pages a dashboard reads
// again and again would otherwise decode the same JSON each time (the
// rest of a building server's row changes at every step). Keyed by the
// whole text, a hit is the very spec the row holds, whatever its server
// or project. The specs handed out share their maps and slices, hence
// ListServers' servers are read-only (store.Store.ListServers).
type specCache struct{ kept[string, lifecycle.Spec] }

// decode is a codec.SpecDecoder that keeps what it decodes.
func (c *specCache) decode(text string, dst *lifecycle.Spec) error {
	if sp, ok := c.get(text); ok {
		*dst = sp
		return nil
	}
	var sp lifecycle.Spec
	if err := json.Unmarshal([]byte(text), &sp); err != nil {
		return err
	}
	c.put(text, sp)
	*dst = sp
	return nil
}

// rowCache keeps ListServers' and ReadServer's decoded servers by their
// whole row, so that a row read again decodes only if it changed since (a
// row holds its version, which every write bumps, and all its columns
// besides: a hit is the very server the row holds). The servers are handed
// out to every caller that reads the row: read-only (store.Store's
// ListServers and ReadServer).
type rowCache struct {
	kept[codec.ServerRow, *lifecycle.Server]
}

// server is the row's server, decoded once (its spec by decode).
func (c *rowCache) server(row *codec.ServerRow, decode codec.SpecDecoder) (*lifecycle.Server, error) {
	if s, ok := c.get(*row); ok {
		return s, nil
	}
	s, err := row.Decode(decode)
	if err != nil {
		return nil, err
	}
	c.put(*row, s)
	return s, nil
}
