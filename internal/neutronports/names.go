package neutronports

import (
	"context"
	"sync"
	"time"

	"github.com/ingot-dev/ingot/internal/neutron"
)

// NetworkNamer reads one network (*neutron.Client).
type NetworkNamer interface {
	GetNetwork(ctx context.Context, id string) (neutron.Network, error)
}

// Names gives the names of Neutron networks for the addresses of a server
// body (Nova keys them by network name), each read once a TTL: a listing
// of many servers on few networks costs a call per network, not per
// server. Safe for concurrent use.
type Names struct {
	nc  NetworkNamer
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	names map[string]cachedName
}

type cachedName struct {
	name string
	at   time.Time
}

// nameTimeout bounds one read: a render must not wait on Neutron long.
const nameTimeout = 5 * time.Second

// NewNames caches names for ttl (default a minute).
func NewNames(nc NetworkNamer, ttl time.Duration, now func() time.Time) *Names {
	if ttl <= 0 {
		ttl = time.Minute
	}
	if now == nil {
		now = time.Now
	}
	return &Names{nc: nc, ttl: ttl, now: now, names: map[string]cachedName{}}
}

// Name is the network's name, or its id when Neutron does not say (the
// network is gone, or Neutron is unreachable: then the last name known).
func (n *Names) Name(ctx context.Context, id string) string {
	n.mu.Lock()
	c, ok := n.names[id]
	n.mu.Unlock()
	if ok && n.now().Sub(c.at) < n.ttl {
		return c.name
	}
	ctx, cancel := context.WithTimeout(ctx, nameTimeout)
	defer cancel()
	net, err := n.nc.GetNetwork(ctx, id)
	if err != nil {
		if ok {
			return c.name
		}
		return id
	}
	name := net.Name
	if name == "" {
		name = id
	}
	n.mu.Lock()
	n.names[id] = cachedName{name: name, at: n.now()}
	n.mu.Unlock()
	return name
}
