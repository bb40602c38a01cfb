package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingot-dev/ingot/internal/adopt"
	"github.com/ingot-dev/ingot/internal/app"
)

type adoptFlags struct {
	dbFlags
	fromIronic bool
	fromNova   bool
	dryRun     bool
	project    string
	flavor     string
	jsonOut    bool
	novaDown   bool
	ironicURL  string
}

func newAdoptCmd() *cobra.Command {
	var f adoptFlags
	cmd := &cobra.Command{
		Use:   "adopt --from-nova|--from-ironic [--dry-run]",
		Short: "Make ingot servers of the instances Ironic runs for another service, same ids, nothing rebuilt",
		Long: `Adopt the instances another service (metalsmith, bifrost, Nova) deployed on
Ironic: every node active with an instance_uuid that no ingot server has
becomes an ingot server with that id — name from instance_info.display_name,
image from image_source, the flavor of the node's resource class (or
--flavor), owned by instance_info.project_id (or the node's lessee,
--project, adopt.project, the noauth default project) — phase active, its
node held, its VIFs recorded as its ports (Neutron's ports become ingot's
own: deleted with the server).

Nothing is written to Ironic: the node's instance_uuid already names the
server. Each instance is recorded in one transaction: a run stopped anywhere
and run again adopts the rest; a second run adopts nothing.

With --from-nova, Nova's API (found in Keystone's catalog with ingot's
service credentials, which need the admin role) says which servers run on
Ironic nodes and what each is: its name, project, user, flavor (made in
ingot with Nova's id and extra specs when missing), key pair, metadata,
tags, server group, created and launched times. A server whose
nova-compute service is still enabled or up is refused: Nova would go on
acting on its node. Disable and stop it first:

  openstack compute service set --disable <host> nova-compute

The database is found as serve finds it and locked as serve locks it: stop
ingot first, or ask the running one (POST /ingot/v1/adopt).

  ingot adopt --from-nova --config ingot.yaml --dry-run
  ingot adopt --from-nova --config ingot.yaml
  ingot adopt --from-ironic --config ingot.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.fromNova == f.fromIronic {
				return errors.New("say where from: --from-nova or --from-ironic")
			}
			cfg, err := loadServeConfig(cmd, serveFlags{dbFlags: f.dbFlags, ironicURL: f.ironicURL})
			if err != nil {
				return err
			}
			if err := checkSchema(cmd.Context(), cfg.Database, false); err != nil {
				return err
			}
			ad, err := app.OpenAdoption(cmd.Context(), cfg, nil, crashStep())
			if err != nil {
				return err
			}
			defer ad.Close()
			opts := adopt.Options{DryRun: f.dryRun, Project: f.project, Flavor: f.flavor, NovaStopped: f.novaDown}
			from := ad.FromIronic
			if f.fromNova {
				from = ad.FromNova
			}
			rep, err := from(cmd.Context(), opts)
			out := cmd.OutOrStdout()
			if f.jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if jerr := enc.Encode(rep); jerr != nil {
					return jerr
				}
			} else {
				printAdoption(out, rep)
			}
			return err
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.fromIronic, "from-ironic", false, "adopt from Ironic alone: the nodes active with an instance_uuid")
	fl.BoolVar(&f.fromNova, "from-nova", false, "adopt the servers Nova's API shows on Ironic nodes, with Nova's record of each (Nova found in Keystone's catalog; ingot's service user needs the admin role)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be adopted, what cannot be and why; write nothing")
	fl.StringVar(&f.project, "project", "", "project of the instances whose instance_info names none (default: adopt.project, then the noauth default project)")
	fl.StringVar(&f.flavor, "flavor", "", "flavor (id or name) of every adopted server (default: the one flavor of each node's resource class)")
	fl.BoolVar(&f.jsonOut, "json", false, "print the report as JSON")
	fl.BoolVar(&f.novaDown, "nova-stopped", false, "the nova-compute services that deployed instances (instance_info.nova_host_id) are disabled and stopped: adopt their instances too")
	fl.StringVar(&f.ironicURL, "ironic-url", "", "Ironic URL (overrides the config)")
	return cmd
}

// printAdoption prints a report: each instance adopted (or that would be),
// each one already ingot's, each refused with its reason, and a summary.
func printAdoption(out io.Writer, rep adopt.Report) {
	verb := "adopted"
	if rep.DryRun {
		verb = "would adopt"
	}
	for _, i := range rep.Adopted {
		fmt.Fprintf(out, "%s %s %q node %s project %s flavor %s image %s", verb, i.ID, i.Name, i.Node, i.ProjectID, i.Flavor, i.Image)
		if len(i.Addresses) > 0 {
			fmt.Fprintf(out, " addresses %s", strings.Join(i.Addresses, ","))
		}
		fmt.Fprintln(out)
		for _, p := range i.Ports {
			fmt.Fprintf(out, "  port %s\n", p)
		}
		for _, v := range i.Volumes {
			fmt.Fprintf(out, "  volume %s\n", v)
		}
	}
	for _, i := range rep.Already {
		fmt.Fprintf(out, "already %s %q node %s: %s\n", i.ID, i.Name, i.Node, i.Reason)
	}
	for _, i := range rep.Refused {
		fmt.Fprintf(out, "cannot adopt %s %q node %s: %s\n", i.ID, i.Name, i.Node, i.Reason)
	}
	change := "recorded as ingot servers (ACTIVE, SHUTOFF where the node is off; node held); nothing written to Ironic"
	if rep.DryRun {
		change = "would be recorded as ingot servers (ACTIVE, SHUTOFF where the node is off; node held); nothing written (dry run), nothing would be written to Ironic"
	}
	fmt.Fprintf(out, "%d %s, %d already ingot's, %d refused: %d %s\n", len(rep.Adopted), verb, len(rep.Already),
		len(rep.Refused), len(rep.Adopted), change)
}
