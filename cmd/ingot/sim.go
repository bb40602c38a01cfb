package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newSimCmd is replaced by the simulator work (issue 2).
func newSimCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sim",
		Short: "Run a simulated Ironic",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("not implemented yet")
		},
	}
}
