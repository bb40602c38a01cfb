package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

// ReportInterval is how often a replica's services report they are alive
// (Nova's report_interval); ServiceDownTime is how old a heartbeat may be
// before the service shows down (Nova's service_down_time).
const (
	ReportInterval  = 10 * time.Second
	ServiceDownTime = 60 * time.Second
)

// replicaBinaries are the services one ingot process is: it schedules,
// conducts and computes.
var replicaBinaries = []string{store.BinaryCompute, store.BinaryScheduler, store.BinaryConductor}

// registerServices records this replica's services (a disable an admin
// made before a restart stays).
func registerServices(ctx context.Context, st store.Store, host string, now time.Time) error {
	for _, b := range replicaBinaries {
		if _, err := st.RegisterService(ctx, host, b, now); err != nil {
			return fmt.Errorf("register %s on %s: %w", b, host, err)
		}
	}
	return nil
}

// heartbeat reports the replica alive every report interval until ctx ends.
// When an admin deleted its services, it says so once and stops reporting
// (a restart registers them again, as Nova's services do).
func (a *App) heartbeat(ctx context.Context) {
	t := time.NewTicker(a.report)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := a.Store.Heartbeat(ctx, a.Config.Host, a.clock.Now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			a.Log.Warn("this replica's services were deleted (os-services); it reports no heartbeat until restarted", "host", a.Config.Host)
			return
		case err != nil && ctx.Err() == nil:
			a.Log.Warn("service heartbeat", "host", a.Config.Host, "err", err)
		}
	}
}

// schedulable says whether new builds may be placed: some nova-compute
// service is enabled and not forced down (Nova's ComputeFilter leaves no
// host otherwise).
func schedulable(st store.Store) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		all, err := st.ListServices(ctx)
		if err != nil {
			return false, err
		}
		for _, sv := range all {
			if sv.Binary == store.BinaryCompute && !sv.Disabled && !sv.ForcedDown {
				return true, nil
			}
		}
		return false, nil
	}
}

// nodeHosts gives the scheduler each node's compute host (the affinity
// policy), as the API shows it in OS-EXT-SRV-ATTR:host and hostId.
func nodeHosts(st store.Store) func(ctx context.Context) (func(node string) string, error) {
	return func(ctx context.Context) (func(node string) string, error) {
		all, err := st.ListServices(ctx)
		if err != nil {
			return nil, err
		}
		computes := store.ComputeServices(all)
		return func(node string) string {
			sv, _ := store.ServiceOfNode(node, computes)
			return sv.Host
		}, nil
	}
}

// flavorClasses names the resource classes of the flavors that name one
// (the configured flavors), for the scheduler's warm-up.
func flavorClasses(st store.Store) func(ctx context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		flavors, err := st.ListFlavors(ctx, "")
		if err != nil {
			return nil, err
		}
		var classes []string
		for _, f := range flavors {
			if f.ResourceClass != "" && !slices.Contains(classes, f.ResourceClass) {
				classes = append(classes, f.ResourceClass)
			}
		}
		return classes, nil
	}
}
