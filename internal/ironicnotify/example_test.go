package ironicnotify_test

import (
	"context"
	"log/slog"

	"github.com/ingot-dev/ingot/internal/ironicnotify"
)

// How a reconciler uses the hints: find the server on the node, wake it if
// this replica holds it (its holder got its own copy otherwise), and resync
// after a gap. The decision still reads the node from Ironic.
func Example() {
	var (
		serverOnNode = func(node string) (server string, ok bool) { return "", false }
		holds        = func(server string) bool { return true }
		wake         = func(server string) {}
		resync       = func() {}
	)
	c, err := ironicnotify.New(ironicnotify.Config{URL: "amqp://ingot:secret@127.0.0.1:5672/ironic", Queue: "ingot.replica-a"},
		func(_ context.Context, e ironicnotify.Event) {
			if s, ok := serverOnNode(e.NodeUUID); ok && holds(s) {
				wake(s)
			}
		},
		slog.Default(),
		ironicnotify.Hooks{Connected: func(resumed bool) {
			if resumed {
				resync()
			}
		}})
	if err != nil {
		return
	}
	go c.Run(context.Background())
}
