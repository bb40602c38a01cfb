// Package adopt makes ingot servers of the instances another service
// deployed on Ironic (metalsmith, bifrost, Nova), with the same ids and
// nothing rebuilt (docs/DESIGN.md I13): it reads Ironic, decides per
// instance whether it can be adopted, and records each adoptable one —
// server, ports and create action — in one transaction, as the server the
// reconciler would have built (phase active, its node held). It writes
// nothing to Ironic: the node's instance_uuid is already the server's id,
// which is all the ownership ingot's reconciler checks.
package adopt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/nova"
	"github.com/ingot-dev/ingot/internal/portbind"
	"github.com/ingot-dev/ingot/internal/store"
)

// PointSaved is the step point after each instance's record is committed
// (crash tests kill the process there: the rerun must adopt the rest).
const PointSaved = "adopt:saved"

// ErrImageNotFound: the image source of an instance names no image ingot knows.
var ErrImageNotFound = errors.New("adopt: image not found")

// Ironic is what adoption reads of Ironic (*ironic.Client). Read only.
type Ironic interface {
	ListDeployed(ctx context.Context) ([]ironic.Deployed, error)
	ListVIFs(ctx context.Context, nodeID string) ([]string, error)
	NodePorts(ctx context.Context, nodeID string) (portbind.Inventory, error)
	ListVolumeTargets(ctx context.Context, nodeID string) ([]ironic.VolumeTarget, error)
}

// Neutron reads the ports an instance's VIFs name (network.backend neutron).
type Neutron interface {
	GetPort(ctx context.Context, id string) (neutron.Port, error)
}

// Deps are what an Adopter works with.
type Deps struct {
	Store  store.Store
	Ironic Ironic
	// Neutron is nil with the embedded IPAM; Networks are then its
	// configured networks, which found addresses must fall in.
	Neutron  Neutron
	Networks network.Networks
	// Image maps an instance's image_source to ingot's image id; an error
	// wrapping ErrImageNotFound when there is none.
	Image func(ctx context.Context, source string) (string, error)
	// DefaultProject owns instances that name none (instance_info.project_id)
	// when Options.Project is empty.
	DefaultProject string
	Now            func() time.Time
	// Step, when set, hears PointSaved (crash tests).
	Step func(point string)
	// Kick, when set, is told the ids adopted (the reconciler's work items).
	Kick func(ids ...string)
	// Nova, when set, is Nova's API that FromNova reads (an admin's).
	Nova Nova
	// Cinder, when set (volume.backend cinder), reads the volumes of
	// instances with volume targets; without it they are refused.
	Cinder Cinder
}

// Options are one run's.
type Options struct {
	DryRun bool `json:"dry_run"`
	// Project owns instances whose instance_info names no project_id.
	Project string `json:"project,omitempty"`
	// Flavor (id or name) is every adopted server's flavor; "" chooses
	// per node the one flavor of its resource class.
	Flavor string `json:"flavor,omitempty"`
	// NovaStopped is the operator's word that the nova-compute services
	// that deployed instances (instance_info.nova_host_id) are disabled and
	// stopped: without it those instances are refused, Nova may still act
	// on their nodes.
	NovaStopped bool `json:"nova_stopped,omitempty"`

	// userPort, set by FromNova, tells a Neutron port a user gave the
	// server (kept when it goes) from one its builder made (deleted).
	userPort func(neutron.Port) bool
	// nova, set by FromNova, is Nova's record of the server's volumes.
	nova *nova.Server
}

// Instance is one instance found, as the report shows it.
type Instance struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Node      string   `json:"node"`
	ProjectID string   `json:"project_id,omitempty"`
	Flavor    string   `json:"flavor,omitempty"`
	Image     string   `json:"image,omitempty"`
	Addresses []string `json:"addresses,omitempty"` // network=ip
	// Ports are the Neutron ports recorded, each "id network ip mac" and
	// what the server's delete does with it (deleted, or only unbound).
	Ports []string `json:"ports,omitempty"`
	// Volumes are the volumes recorded, each "id boot_index attachment
	// target" and what the server's delete does with it.
	Volumes []string `json:"volumes,omitempty"`
	// Reason says why it cannot be adopted (Refused) or why it is left
	// (Already).
	Reason string `json:"reason,omitempty"`
}

// Report is what a run found and did. With DryRun nothing is written, and
// Adopted lists what would be.
type Report struct {
	DryRun  bool       `json:"dry_run"`
	Adopted []Instance `json:"adopted"`
	Already []Instance `json:"already"`
	Refused []Instance `json:"refused"`
}

// Adopter runs adoptions.
type Adopter struct{ d Deps }

// New returns an Adopter over d.
func New(d Deps) *Adopter {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Adopter{d: d}
}

// FromIronic adopts every node Ironic shows active with an instance_uuid
// that no ingot server has. Idempotent: each instance is recorded once in
// one transaction, so a run stopped anywhere and run again adopts the
// rest, and a second full run adopts nothing. An error is returned only
// when Ironic or the database cannot be read or written at all; what one
// instance lacks is in Report.Refused.
func (a *Adopter) FromIronic(ctx context.Context, opts Options) (Report, error) {
	rep := Report{DryRun: opts.DryRun, Adopted: []Instance{}, Already: []Instance{}, Refused: []Instance{}}
	nodes, err := a.d.Ironic.ListDeployed(ctx)
	if err != nil {
		return rep, fmt.Errorf("list Ironic's deployed nodes: %w", err)
	}
	slices.SortFunc(nodes, func(x, y ironic.Deployed) int { return strings.Compare(x.InstanceUUID, y.InstanceUUID) })
	holders, err := a.claims(ctx)
	if err != nil {
		return rep, err
	}
	flavors, err := a.d.Store.ListFlavors(ctx, "")
	if err != nil {
		return rep, fmt.Errorf("flavors: %w", err)
	}
	for _, n := range nodes {
		inst, s, ports, vols, err := a.candidate(ctx, n, holders, flavors, opts)
		if err != nil {
			return rep, err
		}
		if err := a.record(ctx, &rep, inst, s, ports, vols, opts.DryRun); err != nil {
			return rep, fmt.Errorf("adopt %s (node %s): %w", inst.ID, n.UUID, err)
		}
	}
	return rep, nil
}

// record writes one adoptable instance (not in a dry run) and files it in
// rep: adopted, already ingot's (adopted meanwhile) or refused on a
// conflict the transaction found. Any other error stops the run.
func (a *Adopter) record(ctx context.Context, rep *Report, inst Instance, s *lifecycle.Server, ports []store.Port, vols adoptedVolumes, dryRun bool) error {
	switch {
	case inst.Reason == reasonOurs:
		rep.Already = append(rep.Already, inst)
		return nil
	case inst.Reason != "":
		rep.Refused = append(rep.Refused, inst)
		return nil
	case dryRun:
		rep.Adopted = append(rep.Adopted, inst)
		return nil
	}
	if err := a.enterVolumes(ctx, vols.rows, s.UserID); err != nil {
		return err
	}
	err := a.d.Store.AdoptServer(ctx, s, ports, vols.rows)
	switch {
	case err == nil:
		rep.Adopted = append(rep.Adopted, inst)
		if a.d.Step != nil {
			a.d.Step(PointSaved)
		}
		if a.d.Kick != nil {
			a.d.Kick(s.ID)
		}
	case errors.Is(err, store.ErrExists):
		// The server's id (adopted meanwhile), or a port's.
		if _, gerr := a.d.Store.GetServer(ctx, s.ID); gerr == nil {
			inst.Reason = reasonOurs
			rep.Already = append(rep.Already, inst)
			break
		}
		inst.Reason = "conflict: " + err.Error()
		rep.Refused = append(rep.Refused, inst)
	case errors.Is(err, store.ErrNodeTaken), errors.Is(err, store.ErrAddressInUse), errors.Is(err, store.ErrVolumeInUse):
		inst.Reason = "conflict: " + err.Error()
		rep.Refused = append(rep.Refused, inst)
	default:
		return err
	}
	return nil
}

// reasonOurs is the Already reason: the id is an ingot server's.
const reasonOurs = "already an ingot server"

// candidate is node n as an instance and, when it can be adopted, the
// server and ports to record. A reason in the instance says why not.
func (a *Adopter) candidate(ctx context.Context, n ironic.Deployed, holders map[string]claim, flavors []store.Flavor, opts Options) (Instance, *lifecycle.Server, []store.Port, adoptedVolumes, error) {
	info := n.InstanceInfo
	inst := Instance{ID: n.InstanceUUID, Node: n.UUID, Name: str(info, "display_name")}
	if inst.Name == "" {
		inst.Name = n.Name
	}
	var none adoptedVolumes
	refuse := func(format string, args ...any) (Instance, *lifecycle.Server, []store.Port, adoptedVolumes, error) {
		inst.Reason = fmt.Sprintf(format, args...)
		return inst, nil, []store.Port{}, none, nil
	}
	existing, err := a.d.Store.GetServer(ctx, n.InstanceUUID)
	switch {
	case err == nil && existing.NodeID == n.UUID && existing.Phase != lifecycle.PhaseDeleted:
		inst.Reason = reasonOurs
		return inst, nil, nil, none, nil
	case err == nil:
		return refuse("conflict: ingot server %s exists (phase %s, node %q)", existing.ID, existing.Phase, existing.NodeID)
	case !errors.Is(err, store.ErrNotFound):
		return inst, nil, nil, none, fmt.Errorf("server %s: %w", n.InstanceUUID, err)
	}
	switch c := holders[n.UUID]; {
	case c.server != "":
		return refuse("conflict: node %s is held by ingot server %s", n.UUID, c.server)
	case c.stranded != "":
		return refuse("conflict: volume %s of a deleted ingot server is stranded on node %s (its volume target may still be there): "+
			"remove that target from the node, delete the volume, then run again", c.stranded, n.UUID)
	}
	if _, err := uuid.Parse(n.InstanceUUID); err != nil {
		return refuse("instance_uuid %q is not a UUID", n.InstanceUUID)
	}
	switch {
	case n.ProvisionState != ironic.StateActive:
		return refuse("node not active (provision state %q)", n.ProvisionState)
	case n.TargetProvisionState != "":
		return refuse("node busy: moving to %q; run again once it settles", n.TargetProvisionState)
	case n.Maintenance:
		return refuse("node in maintenance (%s): whoever put it there may still act on it", n.MaintenanceReason)
	case n.Reservation != "":
		return refuse("node locked by conductor %s; run again", n.Reservation)
	}
	if host := str(info, "nova_host_id"); host != "" && !opts.NovaStopped {
		return refuse("Nova's compute service on %s deployed it and may still act on the node: "+
			"disable and stop it (openstack compute service set --disable %s nova-compute; then stop nova-compute there), "+
			"then run again with --nova-stopped", host, host)
	}
	f, why := chooseFlavor(flavors, n, opts.Flavor)
	if why != "" {
		return refuse("%s", why)
	}
	inst.Flavor = f.Name
	src := str(info, "image_source")
	switch {
	case src != "":
		imageID, err := a.d.Image(ctx, src)
		if errors.Is(err, ErrImageNotFound) {
			return refuse("image not found: %s", src)
		}
		if err != nil {
			return inst, nil, nil, none, fmt.Errorf("image %s of %s: %w", src, n.InstanceUUID, err)
		}
		inst.Image = imageID
	case opts.nova == nil || len(opts.nova.Volumes) == 0:
		// Booted from a volume Nova lists, the node has no image.
		return refuse("image not found: instance_info has no image_source")
	}
	targets, err := a.d.Ironic.ListVolumeTargets(ctx, n.UUID)
	if errors.Is(err, ironic.ErrNotFound) {
		return refuse("node gone while read: %v", err)
	}
	if err != nil {
		return inst, nil, nil, none, fmt.Errorf("volume targets of node %s: %w", n.UUID, err)
	}
	inst.ProjectID = firstOf(str(info, "project_id"), n.Lessee, opts.Project, a.d.DefaultProject)
	var novaVols []nova.Volume
	if opts.nova != nil {
		novaVols = opts.nova.Volumes
	}
	vols, why, err := a.volumes(ctx, n, inst.ProjectID, targets, novaVols, opts.nova != nil)
	if err != nil {
		return inst, nil, nil, none, err
	}
	if why != "" {
		return refuse("%s", why)
	}
	if src == "" && !slices.ContainsFunc(vols.refs, func(r lifecycle.VolumeRef) bool { return r.BootIndex == 0 }) {
		return refuse("image not found: instance_info has no image_source, and no volume target has boot_index 0")
	}
	inst.Volumes = vols.describe()
	ports, why, err := a.ports(ctx, n, opts.userPort)
	if errors.Is(err, ironic.ErrNotFound) {
		return refuse("node gone while read: %v", err)
	}
	if err != nil {
		return inst, nil, nil, none, err
	}
	if why != "" {
		return refuse("%s", why)
	}
	for _, p := range ports {
		inst.Addresses = append(inst.Addresses, p.NetworkID+"="+p.IP)
		if p.NeutronID != "" {
			fate := "deleted with the server"
			if p.UserPort {
				fate = "the user's: unbound, kept, when the server goes"
			}
			inst.Ports = append(inst.Ports, fmt.Sprintf("%s network %s ip %s mac %s (%s)", p.NeutronID, p.NetworkID, p.IP, p.MAC, fate))
		}
	}
	s := a.server(n, inst, f, src, ports)
	s.Spec.Volumes, s.VolumesOnNode = vols.refs, len(vols.refs) > 0
	return inst, s, ports, vols, nil
}

// server is the record of an adopted instance: what the reconciler would
// hold after building it — active (stopped when the node is off), its
// node held and deployed, its ports allocated and their VIFs on the node.
func (a *Adopter) server(n ironic.Deployed, inst Instance, f store.Flavor, src string, ports []store.Port) *lifecycle.Server {
	now := a.d.Now().UTC()
	info := n.InstanceInfo
	fl := flavorSpec(f)
	sp := lifecycle.Spec{
		FlavorID: f.ID, ImageID: inst.Image, ResourceClass: n.ResourceClass, ImageSource: src,
		ImageChecksum: str(info, "image_checksum"), RootGB: num(info, "root_gb", f.DiskGB),
		RequiredTraits: fl.Traits, ForbiddenTraits: fl.ForbiddenTraits, Capabilities: fl.Capabilities,
		VCPUs: f.VCPUs, RAMMB: f.RAMMB,
	}
	for _, p := range ports {
		sp.Networks = append(sp.Networks, p.NetworkID)
		if p.UserPort {
			if sp.UserPorts == nil {
				sp.UserPorts = map[string]string{}
			}
			sp.UserPorts[p.NetworkID] = p.NeutronID
		}
	}
	phase, power := lifecycle.PhaseActive, lifecycle.PowerOn
	if n.PowerState == "power off" {
		phase, power = lifecycle.PhaseStopped, lifecycle.PowerOff
	}
	launched := n.ProvisionUpdatedAt
	if launched.IsZero() {
		launched = now
	}
	return &lifecycle.Server{
		ID: inst.ID, Name: inst.Name, ProjectID: inst.ProjectID, UserID: str(info, "user_id"), Spec: sp,
		Desired: lifecycle.DesiredActive, Phase: phase, NodeID: n.UUID, DeployRequested: true,
		PortsAllocated: len(ports) > 0, PowerSeen: power,
		CreatedAt: now, UpdatedAt: now, PhaseSince: now, Deadline: now, LaunchedAt: launched,
		CreateRequestID: "req-" + uuid.NewString(),
	}
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// num reads an integer Ironic may hold as a number or a string.
func num(m map[string]any, k string, def int) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case string:
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil {
			return n
		}
	}
	return def
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// claim is what ingot holds of a node: a server, or a volume stranded
// there (a deleted server's, whose target may still be on the node: the
// node is not ingot's to take until an operator removes it).
type claim struct{ server, stranded string }

// claims reads every node ingot holds or has a volume stranded on.
func (a *Adopter) claims(ctx context.Context) (map[string]claim, error) {
	holders, err := a.d.Store.NodeHolders(ctx)
	if err != nil {
		return nil, fmt.Errorf("node holders: %w", err)
	}
	out := make(map[string]claim, len(holders))
	for node, server := range holders {
		out[node] = claim{server: server}
	}
	const page = 1000
	for after := ""; ; {
		vs, err := a.d.Store.ListVolumes(ctx, after, page)
		if err != nil {
			return nil, fmt.Errorf("volumes: %w", err)
		}
		for _, v := range vs {
			if v.Status == string(lifecycle.VolumeError) && v.NodeID != "" {
				if c := out[v.NodeID]; c.stranded == "" {
					c.stranded = v.ID
					out[v.NodeID] = c
				}
			}
		}
		if len(vs) < page {
			return out, nil
		}
		after = vs[len(vs)-1].ID
	}
}
