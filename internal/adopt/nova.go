package adopt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/api/admin"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/neutron"
	"github.com/ingot-dev/ingot/internal/nova"
	"github.com/ingot-dev/ingot/internal/store"
)

// Nova is what adoption reads of Nova's API (*nova.Client), as an admin.
// Read only.
type Nova interface {
	Servers(ctx context.Context) ([]nova.Server, error)
	Flavors(ctx context.Context) ([]nova.Flavor, error)
	ComputeServices(ctx context.Context) ([]nova.Service, error)
	Keypair(ctx context.Context, userID, name string) (nova.Keypair, error)
	Groups(ctx context.Context) ([]nova.Group, error)
	FirstInterfaceAttach(ctx context.Context, serverID string) (time.Time, error)
}

// ErrNoNova: the adopter was built without Nova's API.
var ErrNoNova = errors.New("adopt: Nova's API is not configured (adopt.nova)")

// novaView is what one run read of Nova.
type novaView struct {
	servers  []nova.Server
	flavors  map[string]nova.Flavor // by name: a server shows its flavor's name
	services map[string]nova.Service
	groups   map[string]nova.Group // by member server id
	zones    admin.Zones           // ingot's, to compare with Nova's
}

func (a *Adopter) readNova(ctx context.Context) (novaView, error) {
	var v novaView
	var err error
	if v.servers, err = a.d.Nova.Servers(ctx); err != nil {
		return v, err
	}
	fs, err := a.d.Nova.Flavors(ctx)
	if err != nil {
		return v, err
	}
	v.flavors = map[string]nova.Flavor{}
	for _, f := range fs {
		v.flavors[f.Name] = f
	}
	svcs, err := a.d.Nova.ComputeServices(ctx)
	if err != nil {
		return v, err
	}
	v.services = map[string]nova.Service{}
	for _, s := range svcs {
		v.services[s.Host] = s
	}
	gs, err := a.d.Nova.Groups(ctx)
	if err != nil {
		return v, err
	}
	v.groups = map[string]nova.Group{}
	for _, g := range gs {
		for _, m := range g.Members {
			v.groups[m] = g
		}
	}
	svs, err := a.d.Store.ListServices(ctx)
	if err != nil {
		return v, fmt.Errorf("ingot's services: %w", err)
	}
	aggs, err := a.d.Store.ListAggregates(ctx)
	if err != nil {
		return v, fmt.Errorf("ingot's aggregates: %w", err)
	}
	v.zones = admin.NewZones(svs, aggs)
	slices.SortFunc(v.servers, func(x, y nova.Server) int { return strings.Compare(x.ID, y.ID) })
	return v, nil
}

// FromNova adopts the servers Nova runs on Ironic nodes, with Nova's record
// of each (name, project, user, flavor — made in ingot with the same id and
// extra specs when missing —, key pair, metadata, tags, server group,
// created and launched times) over what the node shows. It refuses every
// server whose nova-compute service is still enabled or up: Nova would go
// on acting on the node. Idempotent as FromIronic.
func (a *Adopter) FromNova(ctx context.Context, opts Options) (Report, error) {
	rep := Report{DryRun: opts.DryRun, Adopted: []Instance{}, Already: []Instance{}, Refused: []Instance{}}
	if a.d.Nova == nil {
		return rep, ErrNoNova
	}
	v, err := a.readNova(ctx)
	if err != nil {
		return rep, fmt.Errorf("read Nova: %w", err)
	}
	nodes, err := a.d.Ironic.ListDeployed(ctx)
	if err != nil {
		return rep, fmt.Errorf("list Ironic's deployed nodes: %w", err)
	}
	byNode := map[string]ironic.Deployed{}
	for _, n := range nodes {
		byNode[n.UUID] = n
	}
	holders, err := a.claims(ctx)
	if err != nil {
		return rep, err
	}
	for _, ns := range v.servers {
		inst := Instance{ID: ns.ID, Name: ns.Name, Node: ns.Node, ProjectID: ns.ProjectID, Flavor: ns.FlavorName, Image: ns.ImageID}
		n, onIronic := byNode[ns.Node]
		why := novaRefusal(ns, onIronic, v.services)
		if z := v.zones.OfNode(ns.Node); why == "" && ns.AvailabilityZone != "" && ns.AvailabilityZone != z {
			why = fmt.Sprintf("availability zone: Nova shows it in %q, ingot would show %q: put ingot's compute host "+
				"in an aggregate of zone %s (openstack aggregate create --zone %s …), then run again",
				ns.AvailabilityZone, z, ns.AvailabilityZone, ns.AvailabilityZone)
		}
		if why != "" {
			inst.Reason = why
			rep.Refused = append(rep.Refused, inst)
			continue
		}
		f, why, err := a.novaFlavor(ctx, v.flavors, ns, n, opts.DryRun)
		if err != nil {
			return rep, err
		}
		if why != "" {
			inst.Reason = why
			rep.Refused = append(rep.Refused, inst)
			continue
		}
		o := opts
		o.NovaStopped, o.Flavor, o.Project = true, f.ID, ns.ProjectID
		if a.d.Neutron != nil {
			attached, err := a.d.Nova.FirstInterfaceAttach(ctx, ns.ID)
			if err != nil {
				return rep, fmt.Errorf("read Nova: %w", err)
			}
			o.userPort = userGiven(ns.Created, attached)
		}
		o.nova = &ns
		inst2, s, ports, vols, err := a.candidate(ctx, n, holders, []store.Flavor{f}, o)
		if err != nil {
			return rep, err
		}
		inst2.Name, inst2.ProjectID = ns.Name, ns.ProjectID
		if inst2.Reason == "" {
			if err := a.overlayNova(ctx, s, ns, v.groups[ns.ID], opts.DryRun); err != nil {
				return rep, err
			}
		}
		if err := a.record(ctx, &rep, inst2, s, ports, vols, opts.DryRun); err != nil {
			return rep, fmt.Errorf("adopt %s (node %s): %w", ns.ID, ns.Node, err)
		}
	}
	return rep, nil
}

// userGiven tells the ports a user gave a server from those Nova made for
// it (which Nova deletes with the server; it only unbinds the others).
// Nova's API does not show which is which (its preserve_on_delete is in
// its database), so the rule is Neutron's created_at: a port Nova made at
// the boot was created after the server and before any interface attach.
// Everything else — created before or in the same second as the server,
// after an attach_interface began, or of unknown age — counts as the
// user's: kept rather than deleted when the rule cannot tell.
func userGiven(created, firstAttach time.Time) func(neutron.Port) bool {
	return func(p neutron.Port) bool {
		t, err := time.Parse(time.RFC3339, p.CreatedAt)
		switch {
		case err != nil, created.IsZero(), !t.After(created):
			return true
		case !firstAttach.IsZero() && !t.Before(firstAttach):
			return true
		}
		return false
	}
}

// novaRefusal says why Nova's server cannot be adopted ("" when it can
// be, as far as Nova tells).
func novaRefusal(s nova.Server, onIronic bool, svcs map[string]nova.Service) string {
	switch {
	case !onIronic:
		return fmt.Sprintf("not on a deployed Ironic node (hypervisor %q; status %s)", s.Node, s.Status)
	case s.Status != "ACTIVE" && s.Status != "SHUTOFF":
		return fmt.Sprintf("Nova shows it %s: only ACTIVE and SHUTOFF servers are adopted", s.Status)
	case s.TaskState != "":
		return fmt.Sprintf("Nova is busy with it (task_state %s); run again once it settles", s.TaskState)
	}
	svc, ok := svcs[s.Host]
	if ok && (svc.Status != "disabled" || svc.State != "down") {
		return fmt.Sprintf("Nova's compute service on %s is %s and %s, and may still act on the node: "+
			"disable it (openstack compute service set --disable %s nova-compute), stop nova-compute there, "+
			"wait until it shows down, then run again", s.Host, svc.Status, svc.State, s.Host)
	}
	return ""
}

// novaFlavor is ingot's flavor for Nova's server: Nova's flavor of that
// name, made in ingot with the same id, sizes and extra specs when ingot
// has none of that id (not in a dry run).
func (a *Adopter) novaFlavor(ctx context.Context, fs map[string]nova.Flavor, s nova.Server, n ironic.Deployed, dryRun bool) (store.Flavor, string, error) {
	nf, ok := fs[s.FlavorName]
	if !ok {
		return store.Flavor{}, fmt.Sprintf("unknown flavor: Nova has no flavor named %q any more", s.FlavorName), nil
	}
	f, err := a.d.Store.GetFlavor(ctx, nf.ID)
	if err == nil {
		return f, "", nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return f, "", fmt.Errorf("flavor %s: %w", nf.ID, err)
	}
	f = store.Flavor{ID: nf.ID, Name: nf.Name, VCPUs: nf.VCPUs, RAMMB: nf.RAMMB, DiskGB: nf.DiskGB, IsPublic: nf.Public,
		ExtraSpecs: nf.ExtraSpecs, ResourceClass: n.ResourceClass, CreatedAt: a.d.Now().UTC()}
	if nf.Description != "" {
		d := nf.Description
		f.Description = &d
	}
	if dryRun {
		return f, "", nil
	}
	switch err := a.d.Store.CreateFlavor(ctx, f); {
	case err == nil:
		return f, "", nil
	case errors.Is(err, store.ErrExists):
		if got, gerr := a.d.Store.GetFlavor(ctx, nf.ID); gerr == nil {
			return got, "", nil // made meanwhile (a rerun)
		}
		return f, fmt.Sprintf("conflict: ingot has another flavor named %q (Nova's is %s)", nf.Name, nf.ID), nil
	default:
		return f, "", fmt.Errorf("create flavor %s: %w", nf.ID, err)
	}
}

// overlayNova puts Nova's record of the server over what the node showed,
// and makes its key pair and server group in ingot when missing.
func (a *Adopter) overlayNova(ctx context.Context, s *lifecycle.Server, ns nova.Server, g nova.Group, dryRun bool) error {
	s.Name, s.ProjectID, s.UserID = ns.Name, ns.ProjectID, ns.UserID
	s.Spec.ImageID = firstOf(ns.ImageID, s.Spec.ImageID)
	s.Spec.Metadata, s.Spec.Tags = ns.Metadata, slices.Sorted(slices.Values(ns.Tags))
	if !ns.Created.IsZero() {
		s.CreatedAt = ns.Created.UTC()
	}
	if !ns.LaunchedAt.IsZero() {
		s.LaunchedAt = ns.LaunchedAt.UTC()
	}
	if ns.KeyName != "" {
		s.Spec.KeyName = ns.KeyName
		kp, err := a.d.Nova.Keypair(ctx, ns.UserID, ns.KeyName)
		switch {
		case errors.Is(err, nova.ErrNotFound):
			// Deleted in Nova since the boot: the server keeps the name, as in Nova.
		case err != nil:
			return fmt.Errorf("key pair %s of %s: %w", ns.KeyName, ns.ID, err)
		default:
			s.Spec.PublicKey, s.Spec.KeyType = kp.PublicKey, kp.Type
			if !dryRun {
				err := a.d.Store.CreateKeypair(ctx, store.Keypair{UserID: ns.UserID, Name: kp.Name, Type: kp.Type,
					PublicKey: kp.PublicKey, Fingerprint: kp.Fingerprint, CreatedAt: a.d.Now().UTC()}, -1)
				if err != nil && !errors.Is(err, store.ErrExists) {
					return fmt.Errorf("key pair %s: %w", kp.Name, err)
				}
			}
		}
	}
	if g.ID != "" {
		s.Spec.Group = &lifecycle.GroupRef{ID: g.ID, Policy: g.Policy, MaxPerHost: g.MaxPerHost}
		if !dryRun {
			err := a.d.Store.CreateServerGroup(ctx, store.ServerGroup{ID: g.ID, Name: g.Name, ProjectID: g.ProjectID,
				UserID: g.UserID, Policy: g.Policy, MaxServerPerHost: g.MaxPerHost, CreatedAt: a.d.Now().UTC()}, -1)
			if err != nil && !errors.Is(err, store.ErrExists) {
				return fmt.Errorf("server group %s: %w", g.ID, err)
			}
		}
	}
	return nil
}
