package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ingot-dev/ingot/internal/config"
	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// startSim runs the built-in simulated Ironic on a loopback port; ingot then
// talks to it over HTTP exactly as to a real Ironic. It keeps its state in
// statePath (guarded by the database lock, like the database), so a restart
// finds the nodes, and the servers on them, where they were; c.Nodes nodes
// are created only when there is no state yet.
func (a *App) startSim(c config.Sim, statePath string) error {
	sim := ironicsim.New(ironicsim.Options{DeployTime: c.DeployTime, UndeployTime: c.UndeployTime})
	restored, err := sim.Persist(statePath, func(err error) { a.Log.Warn("simulated Ironic: state not saved", "err", err) })
	if err != nil {
		return fmt.Errorf("simulated ironic: %w", err)
	}
	if !restored {
		// Two NICs per node, so servers get real MACs in their config drive,
		// and the fake rescue interface, so they can be rescued.
		sim.AddNodes(c.Nodes, ironicsim.NodeSpec{ResourceClass: c.ResourceClass, RescueInterface: "fake", Ports: 2})
	}
	listen := c.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("simulated ironic: %w", err)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	a.Sim = sim
	a.IronicURL = "http://" + ln.Addr().String()
	a.closers = append(a.closers, func() {
		// Let requests in flight finish (each saves the state before it is
		// answered), then stop saving: nothing writes the state file after Close.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		sim.StopPersisting()
	})
	a.Log.Info("built-in simulated Ironic", "url", a.IronicURL, "nodes", len(sim.Nodes()), "resource_class", c.ResourceClass,
		"admin", a.IronicURL+"/_sim/", "state", statePath, "resumed", restored)
	return nil
}
