package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/ingot-dev/ingot/internal/safetext"
	"github.com/spf13/cobra"
)

// serverDoc is the part of a server body the CLI prints.
type serverDoc struct {
	ID         string              `json:"id"`
	Name       string              `json:"name"`
	Status     string              `json:"status"`
	TaskState  *string             `json:"OS-EXT-STS:task_state"`
	VMState    string              `json:"OS-EXT-STS:vm_state"`
	PowerState int                 `json:"OS-EXT-STS:power_state"`
	Node       *string             `json:"OS-EXT-SRV-ATTR:hypervisor_hostname"`
	Hostname   *string             `json:"OS-EXT-SRV-ATTR:hostname"`
	KeyName    *string             `json:"key_name"`
	Created    string              `json:"created"`
	Updated    string              `json:"updated"`
	LaunchedAt *string             `json:"OS-SRV-USG:launched_at"`
	Image      imageDoc            `json:"image"` // "" when booted from a volume
	Volumes    []attachedVolumeDoc `json:"os-extended-volumes:volumes_attached"`
	Flavor     struct {
		ID           string `json:"id"`
		OriginalName string `json:"original_name"`
		VCPUs        int    `json:"vcpus"`
		RAM          int    `json:"ram"`
		Disk         int    `json:"disk"`
	} `json:"flavor"`
	Addresses map[string][]struct {
		Addr string `json:"addr"`
		MAC  string `json:"OS-EXT-IPS-MAC:mac_addr"`
	} `json:"addresses"`
	Metadata map[string]string `json:"metadata"`
	Tags     []string          `json:"tags"` // 2.26
	Fault    *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Created string `json:"created"`
	} `json:"fault"`
	Phase      string       `json:"ingot:phase"`
	IngotFault *faultDoc    `json:"ingot:fault"`
	Attempts   []attemptDoc `json:"ingot:attempts"`
}

type faultDoc struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Node    string `json:"node"`
	Step    string `json:"step"`
	At      string `json:"at"`
}

type attemptDoc struct {
	Node    string `json:"node"`
	Step    string `json:"step"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	At      string `json:"at"`
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newServerCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "server", Short: "Create, list, show, operate and delete servers through the ingot API"}
	cmd.AddCommand(newServerCreateCmd(opts), newServerListCmd(opts), newServerShowCmd(opts),
		newServerDeleteCmd(opts), newServerEventsCmd(opts))
	cmd.AddCommand(newDay2Cmds(opts)...)
	return cmd
}

// getServer fetches one server: the decoded fields and the raw object.
func (c *apiClient) getServer(cmd *cobra.Command, id string) (*serverDoc, json.RawMessage, error) {
	res := servers.Get(cmd.Context(), c.compute, id)
	if res.Err != nil {
		return nil, nil, friendly(res.Err)
	}
	var body struct {
		Server json.RawMessage `json:"server"`
	}
	// The embedded Result: serverResult's own ExtractInto unwraps "server" first.
	if err := res.Result.ExtractInto(&body); err != nil {
		return nil, nil, fmt.Errorf("server %s: %w", id, err)
	}
	var s serverDoc
	if err := json.Unmarshal(body.Server, &s); err != nil {
		return nil, nil, fmt.Errorf("server %s: %w", id, err)
	}
	return &s, body.Server, nil
}

type createFlags struct {
	flavor, image, userData, keyName string
	networks, properties             []string
	wait                             bool
}

func newServerCreateCmd(opts *clientOptions) *cobra.Command {
	var f createFlags
	cmd := &cobra.Command{
		Use:   "create NAME --flavor F --image I",
		Short: "Create a server (with --wait: follow it to ACTIVE or ERROR)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			create, err := c.createOpts(cmd, args[0], f)
			if err != nil {
				return err
			}
			var builder servers.CreateOptsBuilder = create
			if f.keyName != "" {
				builder = keypairs.CreateOptsExt{CreateOptsBuilder: create, KeyName: f.keyName}
			}
			s, err := servers.Create(cmd.Context(), c.compute, builder, nil).Extract()
			if err != nil {
				return friendly(err)
			}
			if !f.wait {
				doc, raw, err := c.getServer(cmd, s.ID)
				if err != nil {
					return err
				}
				return c.printServer(cmd, opts, doc, raw)
			}
			fmt.Fprintf(c.out, "server %s created; waiting for it to become ACTIVE\n", s.ID)
			return c.waitBuild(cmd, s.ID)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.flavor, "flavor", "", "flavor id or name (required)")
	fl.StringVar(&f.image, "image", "", "image id or name (required)")
	fl.StringArrayVar(&f.networks, "network", nil, `network id or name, repeatable; "none" for no network (default: "auto", the first configured network)`)
	fl.StringVar(&f.userData, "user-data", "", "file with user data (cloud-init)")
	fl.StringArrayVar(&f.properties, "property", nil, "metadata key=value, repeatable")
	fl.StringVar(&f.keyName, "key-name", "", "your keypair whose public key the server gets (ingot keypair list)")
	fl.BoolVar(&f.wait, "wait", false, "wait until the server is ACTIVE (exit non-zero on ERROR)")
	_ = cmd.MarkFlagRequired("flavor")
	_ = cmd.MarkFlagRequired("image")
	addOutputFlag(cmd, opts)
	return cmd
}

func (c *apiClient) createOpts(cmd *cobra.Command, name string, f createFlags) (servers.CreateOpts, error) {
	o := servers.CreateOpts{Name: name, FlavorRef: f.flavor, ImageRef: f.image}
	if len(f.properties) > 0 {
		o.Metadata = map[string]string{}
		for _, p := range f.properties {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return o, fmt.Errorf("--property %q: want key=value", p)
			}
			o.Metadata[k] = v
		}
	}
	if f.userData != "" {
		data, err := os.ReadFile(f.userData)
		if err != nil {
			return o, fmt.Errorf("--user-data: %w", err)
		}
		// Encoded here: gophercloud would send a file that happens to be
		// valid base64 without encoding it.
		o.UserData = []byte(base64.StdEncoding.EncodeToString(data))
	}
	switch {
	case len(f.networks) == 0:
		o.Networks = "auto"
	case len(f.networks) == 1 && (f.networks[0] == "none" || f.networks[0] == "auto"):
		o.Networks = f.networks[0]
	default:
		var nets []servers.Network
		for _, n := range f.networks {
			id, err := c.resolveNetwork(cmd, n)
			if err != nil {
				return o, err
			}
			nets = append(nets, servers.Network{UUID: id})
		}
		o.Networks = nets
	}
	return o, nil
}

// errServerFailed is returned when a waited-for server ends in ERROR.
var errServerFailed = errors.New("server build failed")

// waitBuild polls the server every second, printing a line whenever its
// status, task, phase or node changes, until it is ACTIVE or ERROR. The
// service bounds every build by its deadline, so there is no client timeout
// (interrupt to stop waiting; the build goes on).
func (c *apiClient) waitBuild(cmd *cobra.Command, id string) error {
	start := time.Now()
	tick := time.NewTicker(c.pollEvery)
	defer tick.Stop()
	last, lastErr := "", ""
	for {
		s, _, err := c.getServer(cmd, id)
		switch {
		case statusOf(err) == http.StatusNotFound:
			return fmt.Errorf("server %s was deleted while building", id)
		case err != nil && !retryable(err):
			return err
		case err != nil:
			// The service may be restarting; a request it answered 2xx survives.
			if err.Error() != lastErr {
				fmt.Fprintf(c.errOut, "[%5.0fs] (retrying: %v)\n", time.Since(start).Seconds(), err)
				lastErr = err.Error()
			}
		default:
			lastErr = ""
			state := fmt.Sprintf("%-7s task=%-10s phase=%-10s node=%s", s.Status, dash(deref(s.TaskState)), dash(s.Phase), dash(deref(s.Node)))
			if state != last {
				fmt.Fprintf(c.out, "[%5.0fs] %s\n", time.Since(start).Seconds(), safetext.Escape(state))
				last = state
			}
			if deleting(s) {
				return fmt.Errorf("server %s is being deleted", id)
			}
			switch s.Status {
			case "ACTIVE":
				fmt.Fprintf(c.out, "server %s is ACTIVE on node %s after %s\n", id, safetext.Escape(dash(deref(s.Node))), time.Since(start).Round(time.Second))
				return nil
			case "ERROR":
				c.printFault(s)
				return fmt.Errorf("server %s: %w", id, errServerFailed)
			}
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-tick.C:
		}
	}
}

// printFault prints the fault reason and message and every attempt.
func (c *apiClient) printFault(s *serverDoc) {
	w := c.errOut
	switch {
	case s.IngotFault != nil:
		f := s.IngotFault
		line := fmt.Sprintf("fault: %s: %s", f.Reason, f.Message)
		if f.Node != "" || f.Step != "" {
			line += fmt.Sprintf(" (node %s, step %s)", dash(f.Node), dash(f.Step))
		}
		fmt.Fprintln(w, safetext.Escape(line))
	case s.Fault != nil:
		fmt.Fprintln(w, "fault:", safetext.Escape(s.Fault.Message))
	default:
		fmt.Fprintln(w, "fault: (none recorded)")
	}
	for i, a := range s.Attempts {
		fmt.Fprintln(w, safetext.Escape(fmt.Sprintf("attempt %d: node %s, step %s, %s: %s (%s)", i+1, dash(a.Node), dash(a.Step), a.Reason, a.Message, a.At)))
	}
}

func newServerListCmd(opts *clientOptions) *cobra.Command {
	var name, status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List servers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			pages, err := servers.List(c.compute, servers.ListOpts{Name: name, Status: status}).AllPages(cmd.Context())
			if err != nil {
				return friendly(err)
			}
			var raws []json.RawMessage
			if err := servers.ExtractServersInto(pages, &raws); err != nil {
				return err
			}
			if opts.output == "json" {
				return c.printJSON(raws)
			}
			tw := c.table()
			tw.row("ID", "NAME", "STATUS", "TASK", "PHASE", "NODE", "NETWORKS")
			for _, raw := range raws {
				var s serverDoc
				if err := json.Unmarshal(raw, &s); err != nil {
					return err
				}
				tw.row(s.ID, s.Name, s.Status, dash(deref(s.TaskState)), dash(s.Phase), dash(deref(s.Node)), dash(addressList(&s)))
			}
			return tw.flush()
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "only servers whose name contains this")
	cmd.Flags().StringVar(&status, "status", "", "only servers with this status (BUILD, ACTIVE, SHUTOFF, REBOOT, HARD_REBOOT, REBUILD, RESCUE, ERROR, DELETED)")
	addOutputFlag(cmd, opts)
	return cmd
}

// addressList is "net=ip; net2=ip2", networks in name order.
func addressList(s *serverDoc) string {
	var parts []string
	for net, addrs := range s.Addresses {
		for _, a := range addrs {
			parts = append(parts, net+"="+a.Addr)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func newServerShowCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID|NAME",
		Short: "Show a server, with its fault, attempts, addresses and node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			id, err := c.resolveServer(cmd, args[0])
			if err != nil {
				return err
			}
			s, raw, err := c.getServer(cmd, id)
			if err != nil {
				return err
			}
			return c.printServer(cmd, opts, s, raw)
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

func (c *apiClient) printServer(cmd *cobra.Command, opts *clientOptions, s *serverDoc, raw json.RawMessage) error {
	if opts.output == "json" {
		return c.printJSON(raw)
	}
	tw := c.table()
	kv := tw.kv
	kv("id", s.ID)
	kv("name", s.Name)
	kv("status", fmt.Sprintf("%s (vm_state %s, task %s, power %d)", s.Status, dash(s.VMState), dash(deref(s.TaskState)), s.PowerState))
	kv("phase", dash(s.Phase))
	kv("node", dash(deref(s.Node)))
	flavor := s.Flavor.OriginalName
	if flavor == "" {
		flavor = s.Flavor.ID
	} else {
		flavor = fmt.Sprintf("%s (%d vCPU, %d MiB RAM, %d GiB disk)", flavor, s.Flavor.VCPUs, s.Flavor.RAM, s.Flavor.Disk)
	}
	kv("flavor", flavor)
	kv("image", c.imageLabel(cmd, s.Image.ID))
	kv("volumes", volumesLine(s.Volumes))
	var addrs []string
	for net, list := range s.Addresses {
		for _, a := range list {
			addrs = append(addrs, fmt.Sprintf("%s=%s (%s)", net, a.Addr, a.MAC))
		}
	}
	sort.Strings(addrs)
	kv("addresses", dash(strings.Join(addrs, "; ")))
	var md []string
	for k, v := range s.Metadata {
		md = append(md, k+"="+v)
	}
	sort.Strings(md)
	kv("metadata", dash(strings.Join(md, ", ")))
	kv("tags", dash(strings.Join(s.Tags, ", ")))
	kv("hostname", dash(deref(s.Hostname)))
	kv("key_name", dash(deref(s.KeyName)))
	kv("created", s.Created)
	kv("updated", s.Updated)
	kv("launched", dash(deref(s.LaunchedAt)))
	if f := s.IngotFault; f != nil {
		kv("fault", fmt.Sprintf("%s: %s (node %s, step %s, at %s)", f.Reason, f.Message, dash(f.Node), dash(f.Step), f.At))
	} else if s.Fault != nil {
		kv("fault", s.Fault.Message)
	}
	for i, a := range s.Attempts {
		kv(fmt.Sprintf("attempt %d", i+1), fmt.Sprintf("node %s, step %s, %s: %s (%s)", dash(a.Node), dash(a.Step), a.Reason, a.Message, a.At))
	}
	return tw.flush()
}

func newServerDeleteCmd(opts *clientOptions) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "delete ID|NAME",
		Short: "Delete a server (with --wait: until the API answers 404)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			id, err := c.resolveServer(cmd, args[0])
			if err != nil {
				return err
			}
			if err := servers.Delete(cmd.Context(), c.compute, id).ExtractErr(); err != nil {
				return friendly(err)
			}
			if !wait {
				fmt.Fprintf(c.out, "server %s: delete accepted\n", id)
				return nil
			}
			return c.waitGone(cmd, id)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the server is gone")
	return cmd
}

// deleting reports whether a delete of s was accepted: Nova shows the
// status the server had with task_state deleting until it is gone.
func deleting(s *serverDoc) bool { return deref(s.TaskState) == "deleting" || s.Status == "DELETED" }

// waitGone polls every second until GET answers 404.
func (c *apiClient) waitGone(cmd *cobra.Command, id string) error {
	start := time.Now()
	tick := time.NewTicker(c.pollEvery)
	defer tick.Stop()
	last := ""
	for {
		s, _, err := c.getServer(cmd, id)
		switch {
		case statusOf(err) == http.StatusNotFound:
			fmt.Fprintf(c.out, "server %s deleted after %s\n", id, time.Since(start).Round(time.Second))
			return nil
		case err != nil && !retryable(err):
			return err
		case err != nil:
			fmt.Fprintf(c.errOut, "[%5.0fs] (retrying: %v)\n", time.Since(start).Seconds(), err)
		default:
			state := fmt.Sprintf("%-7s task=%-10s phase=%-10s node=%s", s.Status, dash(deref(s.TaskState)), dash(s.Phase), dash(deref(s.Node)))
			if state != last {
				fmt.Fprintf(c.out, "[%5.0fs] %s\n", time.Since(start).Seconds(), safetext.Escape(state))
				last = state
			}
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-tick.C:
		}
	}
}
