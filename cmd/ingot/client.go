package main

import "github.com/spf13/cobra"

// addClientCommands adds the API client commands (server …, node …).
func addClientCommands(root *cobra.Command) {}
