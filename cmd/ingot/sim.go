package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingot-dev/ingot/internal/clock"
	"github.com/ingot-dev/ingot/internal/ironicsim"
)

// newSimCmd runs a simulated Ironic (internal/ironicsim) on the real clock.
func newSimCmd() *cobra.Command {
	var (
		nodes         int
		resourceClass string
		listen        string
		deployTime    time.Duration
		undeployTime  time.Duration
		callback      time.Duration
		vifMode       string
		ports         int
		seed          int64
	)
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Run a simulated Ironic",
		Long: `Run a simulated Ironic 21.4 API (fake-hardware nodes, microversions 1.1-1.82)
with N available nodes, and its admin API under /_sim/ for fault injection
(see the internal/ironicsim package documentation). Stops on SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if vifMode != string(ironicsim.VIFModeNoop) && vifMode != string(ironicsim.VIFModeStore) {
				return fmt.Errorf("--vif-mode must be noop or store, not %q", vifMode)
			}
			if nodes < 0 {
				return errors.New("--nodes must not be negative")
			}
			sim := ironicsim.New(ironicsim.Options{
				Clock:           clock.Real{},
				DeployTime:      deployTime,
				UndeployTime:    undeployTime,
				CallbackTimeout: callback,
				VIFMode:         ironicsim.VIFMode(vifMode),
				Seed:            seed,
			})
			if nodes > 0 {
				sim.AddNodes(nodes, ironicsim.NodeSpec{ResourceClass: resourceClass, Ports: ports})
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			fmt.Fprintf(cmd.OutOrStdout(), "ironic simulator listening on http://%s (Ironic endpoint http://%s/v1, %d nodes)\n",
				ln.Addr(), ln.Addr(), nodes)
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil {
				return err
			}
			if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&nodes, "nodes", 10, "number of available nodes to create")
	f.StringVar(&resourceClass, "resource-class", "baremetal", "resource class of the nodes")
	f.StringVar(&listen, "listen", "127.0.0.1:6385", "address to listen on")
	f.DurationVar(&deployTime, "deploy-time", 5*time.Second, "how long a deploy stays in deploying")
	f.DurationVar(&undeployTime, "undeploy-time", time.Second, "how long an undeploy stays in deleting")
	f.DurationVar(&callback, "callback-timeout", 0, "wait call-back timeout of custom-agent nodes (0: Ironic's 30m)")
	f.StringVar(&vifMode, "vif-mode", "noop", "VIF behaviour: noop (network_interface=noop) or store (flat)")
	f.IntVar(&ports, "ports", 1, "ports per node")
	f.Int64Var(&seed, "seed", 0, "seed for UUIDs and fault fractions (0: from the time)")
	return cmd
}
