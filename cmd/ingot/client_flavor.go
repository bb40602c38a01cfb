package main

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/ingot-dev/ingot/internal/safetext"
	"github.com/spf13/cobra"
)

// flavorDoc is the part of a flavor body (2.61) the CLI prints.
type flavorDoc struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	VCPUs       int               `json:"vcpus"`
	RAM         int               `json:"ram"`
	Disk        int               `json:"disk"`
	IsPublic    bool              `json:"os-flavor-access:is_public"`
	Description *string           `json:"description"`
	ExtraSpecs  map[string]string `json:"extra_specs"`
}

// flavorVersion shows descriptions and extra specs in flavor bodies.
const flavorVersion = "2.61"

func newFlavorCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "flavor", Short: "Create, list, show and delete flavors (create and delete: admins)"}
	cmd.AddCommand(newFlavorCreateCmd(opts), newFlavorListCmd(opts), newFlavorShowCmd(opts), newFlavorDeleteCmd(opts))
	return cmd
}

func newFlavorCreateCmd(opts *clientOptions) *cobra.Command {
	var (
		id, rc, description string
		vcpus, ram, disk    int
		private             bool
		traits, props, acc  []string
	)
	cmd := &cobra.Command{
		Use:   "create NAME --resource-class RC [--vcpus N --ram MB --disk GB] [--trait T] [--property K=V] [--private --access PROJECT]",
		Short: "Create a bare-metal flavor: one node of an Ironic resource class",
		Long: `Create a flavor as Nova's Ironic flavors are made: resources:CUSTOM_<RC>=1 and
no standard resources, with the required traits (--trait) and any other extra
specs (--property K=V, e.g. capabilities:boot_mode=uefi). vcpus, ram and disk
are what quotas count and what the root partition gets (disk).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			specs := map[string]string{}
			if rc != "" {
				specs["resources:CUSTOM_"+placementName(rc)] = "1"
				for _, std := range []string{"VCPU", "MEMORY_MB", "DISK_GB"} {
					specs["resources:"+std] = "0"
				}
			}
			for _, t := range traits {
				specs["trait:"+t] = "required"
			}
			for _, p := range props {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return fmt.Errorf("--property %q: want KEY=VALUE", p)
				}
				specs[k] = v
			}
			f := map[string]any{"name": args[0], "vcpus": vcpus, "ram": ram, "disk": disk, "os-flavor-access:is_public": !private}
			if id != "" {
				f["id"] = id
			}
			if description != "" {
				f["description"] = description
			}
			var body struct {
				Flavor flavorDoc `json:"flavor"`
			}
			if err := c.doJSONVersion(cmd, http.MethodPost, "/v2.1/flavors", flavorVersion, map[string]any{"flavor": f}, &body); err != nil {
				return err
			}
			fid := url.PathEscape(body.Flavor.ID)
			if len(specs) > 0 {
				if err := c.doJSONVersion(cmd, http.MethodPost, "/v2.1/flavors/"+fid+"/os-extra_specs", flavorVersion,
					map[string]any{"extra_specs": specs}, nil); err != nil {
					return fmt.Errorf("flavor %s was created, but its extra specs were not set: %w", body.Flavor.ID, err)
				}
			}
			for _, p := range acc {
				if err := c.doJSONVersion(cmd, http.MethodPost, "/v2.1/flavors/"+fid+"/action", flavorVersion,
					map[string]any{"addTenantAccess": map[string]any{"tenant": p}}, nil); err != nil {
					return fmt.Errorf("flavor %s was created, but project %s was not given access: %w", body.Flavor.ID, p, err)
				}
			}
			return c.showFlavor(cmd, opts, body.Flavor.ID)
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "flavor id (default: a new UUID)")
	cmd.Flags().StringVar(&rc, "resource-class", "", "Ironic resource class of the nodes (e.g. baremetal)")
	cmd.Flags().IntVar(&vcpus, "vcpus", 1, "vCPUs (counted against the cores quota)")
	cmd.Flags().IntVar(&ram, "ram", 1, "RAM in MiB (counted against the ram quota)")
	cmd.Flags().IntVar(&disk, "disk", 0, "root disk in GiB")
	cmd.Flags().StringVar(&description, "description", "", "description")
	cmd.Flags().BoolVar(&private, "private", false, "only projects given --access may use it")
	cmd.Flags().StringSliceVar(&acc, "access", nil, "project that may use a private flavor (repeatable)")
	cmd.Flags().StringSliceVar(&traits, "trait", nil, "required trait (repeatable)")
	cmd.Flags().StringSliceVar(&props, "property", nil, "extra spec KEY=VALUE (repeatable)")
	addOutputFlag(cmd, opts)
	return cmd
}

// placementName is Placement's spelling of an Ironic resource class.
func placementName(rc string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(rc) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func newFlavorListCmd(opts *clientOptions) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "list [--all]",
		Short: "List the flavors you may use (--all: private ones too, for admins)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			path := "/v2.1/flavors/detail"
			if all {
				path += "?is_public=None"
			}
			var body struct {
				Flavors []flavorDoc `json:"flavors"`
			}
			if err := c.doJSONVersion(cmd, http.MethodGet, path, flavorVersion, nil, &body); err != nil {
				return err
			}
			if opts.output == "json" {
				return c.printJSON(body.Flavors)
			}
			tw := c.table()
			tw.row("ID", "NAME", "VCPUS", "RAM", "DISK", "PUBLIC", "RESOURCE CLASS")
			for _, f := range body.Flavors {
				tw.row(f.ID, f.Name, strconv.Itoa(f.VCPUs), strconv.Itoa(f.RAM), strconv.Itoa(f.Disk), strconv.FormatBool(f.IsPublic), dash(customClass(f.ExtraSpecs)))
			}
			return tw.flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "public and private flavors (admins)")
	addOutputFlag(cmd, opts)
	return cmd
}

// customClass is the CUSTOM_ resource class a flavor asks one of.
func customClass(specs map[string]string) string {
	for k, v := range specs {
		if rc, ok := strings.CutPrefix(k, "resources:CUSTOM_"); ok && v != "0" {
			return "CUSTOM_" + rc
		}
	}
	return ""
}

func newFlavorShowCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a flavor and its extra specs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			return c.showFlavor(cmd, opts, args[0])
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

func (c *apiClient) showFlavor(cmd *cobra.Command, opts *clientOptions, id string) error {
	var body struct {
		Flavor flavorDoc `json:"flavor"`
	}
	if err := c.doJSONVersion(cmd, http.MethodGet, "/v2.1/flavors/"+url.PathEscape(id), flavorVersion, nil, &body); err != nil {
		return err
	}
	f := body.Flavor
	if opts.output == "json" {
		return c.printJSON(f)
	}
	tw := c.table()
	tw.kv("id", f.ID)
	tw.kv("name", f.Name)
	tw.kv("vcpus", strconv.Itoa(f.VCPUs))
	tw.kv("ram", strconv.Itoa(f.RAM))
	tw.kv("disk", strconv.Itoa(f.Disk))
	tw.kv("public", strconv.FormatBool(f.IsPublic))
	if f.Description != nil {
		tw.kv("description", *f.Description)
	}
	keys := make([]string, 0, len(f.ExtraSpecs))
	for k := range f.ExtraSpecs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		tw.kv(k, f.ExtraSpecs[k])
	}
	return tw.flush()
}

func newFlavorDeleteCmd(opts *clientOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a flavor (servers keep what they were built with; configured flavors are refused)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			if err := c.doJSONVersion(cmd, http.MethodDelete, "/v2.1/flavors/"+url.PathEscape(args[0]), flavorVersion, nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "flavor %s deleted\n", safetext.Escape(args[0]))
			return nil
		},
	}
}
