// Package config loads ingot's configuration file (YAML), applies defaults
// and validates it, naming the offending key in every error.
package config

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/catalog"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
)

// Config is the whole configuration, as in ingot.yaml.
type Config struct {
	Listen string `yaml:"listen"`
	// Database is a SQLite file path, or a postgres:// (postgresql://)
	// URL for the PostgreSQL store.
	Database string `yaml:"database"`
	// DatabaseFile reads the database setting from a file (a DSN with its
	// password stays out of the configuration); INGOT_DATABASE overrides both.
	DatabaseFile string `yaml:"database_file"`
	// DatabaseMaxConns bounds the PostgreSQL connection pool (SQLite: unused).
	DatabaseMaxConns int `yaml:"database_max_conns"`
	// Host names this replica: its compute service's host in os-services
	// and os-hypervisors, and the holder of its shard leases (default: the
	// machine's hostname); unique among the replicas of one database.
	Host         string        `yaml:"host"`
	Ironic       Ironic        `yaml:"ironic"`
	PollInterval time.Duration `yaml:"poll_interval"`
	// FastPollInterval is the tick period while some server waits on
	// Ironic (a deploy, a teardown, a power change); TickBudget bounds the
	// expensive part of a tick (0: 80% of the interval).
	FastPollInterval time.Duration `yaml:"fast_poll_interval"`
	TickBudget       time.Duration `yaml:"tick_budget"`
	DriftInterval    time.Duration `yaml:"drift_interval"`
	BuildTimeout     time.Duration `yaml:"build_timeout"`
	DeleteTimeout    time.Duration `yaml:"delete_timeout"`
	MaintenanceGrace time.Duration `yaml:"maintenance_grace"`
	CapacityWait     time.Duration `yaml:"capacity_wait"`
	RebootTimeout    time.Duration `yaml:"reboot_timeout"`
	PowerTimeout     time.Duration `yaml:"power_timeout"`
	RebuildTimeout   time.Duration `yaml:"rebuild_timeout"`
	RescueTimeout    time.Duration `yaml:"rescue_timeout"`
	InterfaceTimeout time.Duration `yaml:"interface_timeout"`
	VolumeTimeout    time.Duration `yaml:"volume_timeout"`
	MaxAttempts      int           `yaml:"max_attempts"`
	Workers          int           `yaml:"workers"`
	LogLevel         string        `yaml:"log_level"`
	Flavors          []Flavor      `yaml:"flavors"`
	Images           []Image       `yaml:"images"`
	Networks         []Network     `yaml:"networks"`
	// Network chooses the network backend (network.go).
	Network NetworkBackend `yaml:"network"`
	// Shards and LeaseTTL divide the servers among replicas (replicas.go):
	// every replica must use the same shard count.
	Shards   int           `yaml:"shards"`
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// Image chooses where images come from (image.go); with Glance the
	// images list is not used.
	Image ImageBackend `yaml:"image"`
	// Identity and tenancy (identity.go).
	Auth   Auth   `yaml:"auth"`
	API    API    `yaml:"api"`
	Quotas Quotas `yaml:"quotas"`
	// Volume chooses where volumes live (volume.go).
	Volume Volume `yaml:"volume"`
	// Notifications is where ingot publishes Nova's versioned
	// notifications (publish.go); off unless its url is set.
	Notifications Publish `yaml:"notifications"`
	// Adopt configures `ingot adopt` (docs/clients.md, "Moving from Nova").
	Adopt Adopt `yaml:"adopt"`
}

// Adopt is what adoption takes when the source does not say it.
type Adopt struct {
	// Project owns adopted instances that name none (instance_info has no
	// project_id); "" is the noauth default project.
	Project string `yaml:"project"`
	// NovaRegion and NovaInterface choose Nova's endpoint in Keystone's
	// catalog for --from-nova (default: the first region, public).
	NovaRegion    string `yaml:"nova_region"`
	NovaInterface string `yaml:"nova_interface"`
}

// Ironic says where Ironic is.
type Ironic struct {
	URL          string        `yaml:"url"` // http(s)://host:port, or "sim" for the built-in simulator
	Microversion string        `yaml:"microversion"`
	Timeout      time.Duration `yaml:"timeout"`
	// Auth is how ingot authenticates to Ironic: noauth (the default) or
	// keystone (auth.keystone's credentials; url "catalog" finds the endpoint).
	Auth string `yaml:"auth"`
	// Sim configures the built-in simulator (url: sim).
	Sim Sim `yaml:"sim"`
	// Notifications is where Ironic publishes its notifications
	// (notifications.go); off unless its url is set.
	Notifications Notifications `yaml:"notifications"`
}

// Sim configures the built-in simulated Ironic.
type Sim struct {
	Nodes         int           `yaml:"nodes"`
	ResourceClass string        `yaml:"resource_class"`
	DeployTime    time.Duration `yaml:"deploy_time"`
	UndeployTime  time.Duration `yaml:"undeploy_time"`
	Listen        string        `yaml:"listen"` // default 127.0.0.1:0 (a free port)
	// State is the file the simulator keeps its nodes in across restarts
	// (default: beside the database, see SimStatePath).
	State string `yaml:"state"`
}

// Flavor maps a flavor to a resource class.
type Flavor struct {
	ID            string   `yaml:"id"`
	Name          string   `yaml:"name"`
	ResourceClass string   `yaml:"resource_class"`
	VCPUs         int      `yaml:"vcpus"`
	RAMMB         int      `yaml:"ram_mb"`
	DiskGB        int      `yaml:"disk_gb"`
	Description   string   `yaml:"description"`
	Traits        []string `yaml:"traits"`
	// ExtraSpecs are Nova-style flavor extra specs ingot schedules on:
	// trait:<NAME>: required|forbidden and capabilities:<key>: <value>.
	ExtraSpecs map[string]string `yaml:"extra_specs"`
}

// Image is a deployable image.
type Image struct {
	ID       string `yaml:"id"`
	Name     string `yaml:"name"`
	URL      string `yaml:"url"`
	Checksum string `yaml:"checksum"`
	// OSDistro is shown as the image's os_distro property (Nova's image
	// metadata); the configured images' properties are read-only.
	OSDistro string `yaml:"os_distro"`
}

// Network is an IPv4 network served by the embedded IPAM.
type Network struct {
	ID         string `yaml:"id"`
	Name       string `yaml:"name"`
	CIDR       string `yaml:"cidr"`
	Gateway    string `yaml:"gateway"`
	RangeStart string `yaml:"range_start"`
	RangeEnd   string `yaml:"range_end"`
	MTU        int    `yaml:"mtu"`
	// DNSNameservers are told to the machine (network_data.json services).
	DNSNameservers []string `yaml:"dns_nameservers"`
	// Routes are static routes beyond the default route via gateway.
	Routes []Route `yaml:"routes"`
	// PhysicalNetwork is the Ironic physical_network the network is on.
	PhysicalNetwork string `yaml:"physical_network"`
	// DHCP: an external DHCP server hands out the address (ipv4_dhcp).
	DHCP bool `yaml:"dhcp"`
}

// Route is one static route of a network.
type Route struct {
	Destination string `yaml:"destination"` // IPv4 CIDR, e.g. 192.168.0.0/16
	Gateway     string `yaml:"gateway"`     // next hop, inside the network's cidr
}

// Default returns the configuration with every default applied and no catalogue.
func Default() Config {
	lc := lifecycle.DefaultConfig()
	c := Config{
		Listen:   "127.0.0.1:8774",
		Database: "ingot.db",
		// The API's handlers and the reconciler's workers each hold a
		// connection for one statement or one short transaction.
		DatabaseMaxConns: 16,
		Ironic: Ironic{URL: "http://127.0.0.1:6385", Microversion: "1.78", Timeout: 30 * time.Second,
			Sim: Sim{Nodes: 8, ResourceClass: "baremetal", DeployTime: 3 * time.Second, UndeployTime: time.Second}},
		PollInterval:     2 * time.Second,
		FastPollInterval: 500 * time.Millisecond,
		DriftInterval:    30 * time.Second,
		BuildTimeout:     lc.BuildTimeout,
		DeleteTimeout:    lc.DeleteTimeout,
		MaintenanceGrace: lc.MaintenanceGrace,
		CapacityWait:     lc.CapacityWait,
		RebootTimeout:    lc.RebootTimeout,
		PowerTimeout:     lc.PowerTimeout,
		RebuildTimeout:   lc.RebuildTimeout,
		RescueTimeout:    lc.RescueTimeout,
		InterfaceTimeout: lc.InterfaceTimeout,
		VolumeTimeout:    lc.VolumeTimeout,
		MaxAttempts:      lc.MaxAttempts,
		Workers:          32,
		LogLevel:         "info",
	}
	identityDefaults(&c)
	notificationDefaults(&c)
	publishDefaults(&c)
	return c
}

// Dev is the configuration of `ingot serve --dev`: SQLite in dataDir, the
// built-in simulator with 8 nodes, and a flavor, an image and a network.
func Dev(dataDir string) Config {
	c := Default()
	c.Database = dataDir + "/ingot.db"
	c.Ironic.URL = "sim"
	c.Flavors = []Flavor{{Name: "bm.small", ResourceClass: "baremetal", VCPUs: 8, RAMMB: 16384, DiskGB: 100}}
	c.Images = []Image{{Name: "debian-12", URL: "http://images.example/debian-12.qcow2"}}
	c.Networks = []Network{{Name: "provisioning", CIDR: "10.0.0.0/24"}}
	return c
}

// Normalize fills derived defaults (ids from names) and validates every key.
func (c *Config) Normalize() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	c.resolveSecrets(os.LookupEnv, bad)
	c.normalizeImage(bad)
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "want host:port, got %q", c.Listen)
	}
	c.checkDatabase(bad)
	c.normalizeNetwork(bad)
	if c.Host == "" {
		c.Host, _ = os.Hostname()
		if c.Host == "" {
			c.Host = "ingot"
		}
	} else if len(c.Host) > 255 || hasSpaceOrControl(c.Host) {
		bad("host", "want a host name (at most 255 characters, no spaces), got %q", c.Host)
	}
	if c.Ironic.URL != "sim" && !(c.Ironic.URL == "catalog" && c.Ironic.Auth == "keystone") {
		if u, err := url.Parse(c.Ironic.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("ironic.url", "want http(s)://host:port or \"sim\", got %q", c.Ironic.URL)
		}
	} else if c.Ironic.Sim.Nodes < 0 {
		bad("ironic.sim.nodes", "must not be negative")
	}
	if c.Ironic.Sim.ResourceClass == "" {
		c.Ironic.Sim.ResourceClass = "baremetal"
	}
	if c.Ironic.Sim.DeployTime < 0 || c.Ironic.Sim.UndeployTime < 0 {
		bad("ironic.sim", "deploy_time and undeploy_time must not be negative")
	}
	if c.PollInterval > 0 && c.FastPollInterval > c.PollInterval {
		c.FastPollInterval = c.PollInterval // a short poll_interval is fast already
	}
	if c.TickBudget < 0 || c.TickBudget > c.PollInterval {
		bad("tick_budget", "must be between 0 (80%% of poll_interval) and poll_interval (%s), got %s", c.PollInterval, c.TickBudget)
	}
	positive := map[string]time.Duration{"poll_interval": c.PollInterval, "fast_poll_interval": c.FastPollInterval, "drift_interval": c.DriftInterval,
		"build_timeout": c.BuildTimeout, "delete_timeout": c.DeleteTimeout, "maintenance_grace": c.MaintenanceGrace, "ironic.timeout": c.Ironic.Timeout,
		"reboot_timeout": c.RebootTimeout, "power_timeout": c.PowerTimeout, "rebuild_timeout": c.RebuildTimeout,
		"rescue_timeout": c.RescueTimeout, "interface_timeout": c.InterfaceTimeout, "volume_timeout": c.VolumeTimeout}
	if c.CapacityWait < 0 {
		bad("capacity_wait", "must not be negative (0 turns the wait off), got %s", c.CapacityWait)
	}
	for k, d := range positive {
		if d <= 0 {
			bad(k, "must be a positive duration such as 2s or 60m, got %s", d)
		}
	}
	if c.MaxAttempts < 1 {
		bad("max_attempts", "must be at least 1, got %d", c.MaxAttempts)
	}
	if c.Workers < 1 {
		bad("workers", "must be at least 1, got %d", c.Workers)
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level", "want debug, info, warn or error, got %q", c.LogLevel)
	}
	c.normalizeIdentity(bad)
	c.normalizeNotifications(bad)
	c.normalizePublish(bad)
	c.normalizeReplicas(bad)
	c.normalizeVolume(bad)
	seen := map[string]bool{}
	for i := range c.Flavors {
		f := &c.Flavors[i]
		key := fmt.Sprintf("flavors[%d]", i)
		if f.Name == "" {
			bad(key+".name", "must not be empty")
		}
		if f.ID == "" {
			f.ID = f.Name
		}
		if f.ResourceClass == "" {
			bad(key+".resource_class", "must not be empty")
		}
		if f.DiskGB < 0 || f.VCPUs < 0 || f.RAMMB < 0 {
			bad(key, "sizes must not be negative")
		}
		checkFlavorSpecs(key, f, bad)
		if seen["f"+f.ID] || seen["fn"+f.Name] {
			bad(key, "duplicate flavor id or name %q", f.ID)
		}
		seen["f"+f.ID], seen["fn"+f.Name] = true, true
	}
	for i := range c.Images {
		im := &c.Images[i]
		key := fmt.Sprintf("images[%d]", i)
		if im.Name == "" {
			bad(key+".name", "must not be empty")
		}
		if im.ID == "" {
			im.ID = stableUUID("image", im.Name)
		} else if _, err := uuid.Parse(im.ID); err != nil {
			bad(key+".id", "want a UUID, got %q", im.ID)
		}
		if u, err := url.Parse(im.URL); err != nil || !(u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "file") {
			bad(key+".url", "want an http(s):// or file:// URL Ironic can fetch, got %q", im.URL)
		}
		if seen["i"+im.ID] || seen["in"+im.Name] {
			bad(key, "duplicate image id or name %q", im.Name)
		}
		seen["i"+im.ID], seen["in"+im.Name] = true, true
	}
	for i := range c.Networks {
		n := &c.Networks[i]
		key := fmt.Sprintf("networks[%d]", i)
		if n.Name == "" {
			bad(key+".name", "must not be empty")
		}
		if n.ID == "" {
			n.ID = stableUUID("network", n.Name)
		} else if _, err := uuid.Parse(n.ID); err != nil {
			bad(key+".id", "want a UUID, got %q", n.ID)
		}
		p, err := netip.ParsePrefix(n.CIDR)
		if err != nil || !p.Addr().Is4() || p.Bits() > 30 {
			bad(key+".cidr", "want an IPv4 CIDR of /30 or larger, got %q", n.CIDR)
			continue
		}
		for _, a := range []struct{ k, v string }{{"gateway", n.Gateway}, {"range_start", n.RangeStart}, {"range_end", n.RangeEnd}} {
			if a.v == "" {
				continue
			}
			ip, err := netip.ParseAddr(a.v)
			if err != nil || !p.Contains(ip) {
				bad(key+"."+a.k, "want an address inside %s, got %q", n.CIDR, a.v)
			}
		}
		checkNetworkExtras(key, n, p, bad)
		if seen["n"+n.ID] || seen["nn"+n.Name] {
			bad(key, "duplicate network id or name %q", n.Name)
		}
		seen["n"+n.ID], seen["nn"+n.Name] = true, true
	}
	return errors.Join(errs...)
}

// IsPostgres reports whether dsn selects the PostgreSQL store (a
// postgres:// or postgresql:// URL); anything else is a SQLite path.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// checkDatabase validates database and database_max_conns.
func (c *Config) checkDatabase(bad func(key, format string, args ...any)) {
	switch {
	case c.Database == "":
		bad("database", "must not be empty: want a SQLite file path or a postgres:// URL")
	case IsPostgres(c.Database):
		u, err := url.Parse(c.Database)
		if err != nil {
			// url's error quotes the URL, password included: say only what is wrong.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			bad("database", "want a postgres://user@host:port/dbname URL: %v", err)
		} else if strings.TrimPrefix(u.Path, "/") == "" && u.Query().Get("dbname") == "" {
			bad("database", "%s names no database (want postgres://user@host:port/dbname)", u.Redacted())
		}
		if c.Ironic.URL == "sim" && c.Ironic.Sim.State == "" {
			bad("ironic.sim.state", "must be set with a PostgreSQL database: the built-in simulator keeps its nodes in that file")
		}
	case strings.Contains(c.Database, "://"):
		bad("database", "want a SQLite file path or a postgres:// URL, got %q", RedactDSN(c.Database))
	}
	if c.DatabaseMaxConns < 1 {
		bad("database_max_conns", "must be at least 1, got %d", c.DatabaseMaxConns)
	}
}

// RedactDSN is a database setting fit for a log line: a URL's password
// replaced by xxxxx.
func RedactDSN(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable database URL)"
	}
	return u.Redacted()
}

// SimStatePath is where the built-in simulator keeps its state: ironic.sim.state,
// or the database's path with ".ironicsim.json" appended, so the simulated
// Ironic lives and dies with the database that refers to its nodes.
func (c *Config) SimStatePath() string {
	if c.Ironic.Sim.State != "" {
		return c.Ironic.Sim.State
	}
	return c.Database + ".ironicsim.json"
}

// stableUUID derives a UUID from a name, so an id left out of the file stays
// the same across restarts.
func stableUUID(kind, name string) string {
	return uuid.NewHash(sha1.New(), uuid.NameSpaceURL, []byte("ingot:"+kind+":"+name), 5).String()
}

// Catalog returns the flavors and images for the API.
func (c *Config) Catalog() *catalog.Catalog {
	cat := &catalog.Catalog{}
	for _, f := range c.Flavors {
		cat.Flavors = append(cat.Flavors, catalogFlavor(f))
	}
	for _, im := range c.Images {
		cat.Images = append(cat.Images, catalog.Image{ID: im.ID, Name: im.Name, URL: im.URL, Checksum: im.Checksum, OSDistro: im.OSDistro})
	}
	return cat
}

// NetworkList returns the networks for the IPAM (after Normalize has validated them).
func (c *Config) NetworkList() network.Networks {
	var out network.Networks
	for _, n := range c.Networks {
		p, err := netip.ParsePrefix(n.CIDR)
		if err != nil {
			continue // Normalize reports it
		}
		nw := network.Network{ID: n.ID, Name: n.Name, CIDR: p.Masked(), MTU: n.MTU}
		nw.Gateway, _ = netip.ParseAddr(n.Gateway) // zero when unset
		nw.RangeStart, _ = netip.ParseAddr(n.RangeStart)
		nw.RangeEnd, _ = netip.ParseAddr(n.RangeEnd)
		addNetworkExtras(&nw, n)
		out = append(out, nw)
	}
	return out
}
