package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/ingot-dev/ingot/internal/safetext"
	"github.com/spf13/cobra"
)

// keypairDoc is the part of an os-keypairs body the CLI prints.
type keypairDoc struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Fingerprint string `json:"fingerprint"`
	PublicKey   string `json:"public_key"`
	PrivateKey  string `json:"private_key"`
	UserID      string `json:"user_id"`
	CreatedAt   string `json:"created_at"`
}

func newKeypairCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "keypair", Short: "Create (import), list, show and delete your SSH keypairs"}
	cmd.AddCommand(newKeypairCreateCmd(opts), newKeypairListCmd(opts), newKeypairShowCmd(opts), newKeypairDeleteCmd(opts))
	return cmd
}

func newKeypairCreateCmd(opts *clientOptions) *cobra.Command {
	var pubFile, privFile string
	cmd := &cobra.Command{
		Use:   "create NAME [--public-key FILE | --private-key FILE]",
		Short: "Import a public key, or have one generated (its private key is shown once)",
		Long: `Import an OpenSSH public key (ssh-rsa of 2048 bits or more, ssh-ed25519, ecdsa),
or, without --public-key, have ingot generate an RSA key: the private key is
written to --private-key (mode 0600), or printed, and never shown again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			kp := map[string]any{"name": args[0]}
			if pubFile != "" {
				b, err := os.ReadFile(pubFile)
				if err != nil {
					return err
				}
				kp["public_key"] = strings.TrimSpace(string(b))
			}
			var body struct {
				Keypair keypairDoc `json:"keypair"`
			}
			// 2.91: the newest microversion that still generates keys.
			if err := c.keypairCall(cmd, http.MethodPost, "", map[string]any{"keypair": kp}, &body); err != nil {
				return err
			}
			k := body.Keypair
			if k.PrivateKey != "" && privFile != "" {
				if err := os.WriteFile(privFile, []byte(k.PrivateKey), 0o600); err != nil {
					return fmt.Errorf("keypair %s was created, but its private key could not be written: %w", k.Name, err)
				}
				k.PrivateKey = "(written to " + privFile + ")"
			}
			if opts.output == "json" {
				return c.printJSON(k)
			}
			c.printKeypair(k)
			return nil
		},
	}
	cmd.Flags().StringVar(&pubFile, "public-key", "", "file of the OpenSSH public key to import")
	cmd.Flags().StringVar(&privFile, "private-key", "", "where to write a generated private key (mode 0600)")
	cmd.MarkFlagsMutuallyExclusive("public-key", "private-key")
	addOutputFlag(cmd, opts)
	return cmd
}

func newKeypairListCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your keypairs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			var body struct {
				Keypairs []struct {
					Keypair keypairDoc `json:"keypair"`
				} `json:"keypairs"`
			}
			if err := c.keypairCall(cmd, http.MethodGet, "", nil, &body); err != nil {
				return err
			}
			if opts.output == "json" {
				out := make([]keypairDoc, 0, len(body.Keypairs))
				for _, k := range body.Keypairs {
					out = append(out, k.Keypair)
				}
				return c.printJSON(out)
			}
			tw := c.table()
			tw.row("NAME", "TYPE", "FINGERPRINT")
			for _, k := range body.Keypairs {
				tw.row(k.Keypair.Name, k.Keypair.Type, k.Keypair.Fingerprint)
			}
			return tw.flush()
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

func newKeypairShowCmd(opts *clientOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a keypair",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			var body struct {
				Keypair keypairDoc `json:"keypair"`
			}
			if err := c.keypairCall(cmd, http.MethodGet, args[0], nil, &body); err != nil {
				return err
			}
			if opts.output == "json" {
				return c.printJSON(body.Keypair)
			}
			c.printKeypair(body.Keypair)
			return nil
		},
	}
	addOutputFlag(cmd, opts)
	return cmd
}

func newKeypairDeleteCmd(opts *clientOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a keypair (servers keep the key they were created with)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.client(cmd)
			if err != nil {
				return err
			}
			if err := c.keypairCall(cmd, http.MethodDelete, args[0], nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "keypair %s deleted\n", safetext.Escape(args[0]))
			return nil
		},
	}
}

// keypairCall is one os-keypairs call at 2.91 (type and user_id shown,
// keys may still be generated).
func (c *apiClient) keypairCall(cmd *cobra.Command, method, name string, body, out any) error {
	path := "/v2.1/os-keypairs"
	if name != "" {
		path += "/" + url.PathEscape(name)
	}
	return c.doJSONVersion(cmd, method, path, "2.91", body, out)
}

func (c *apiClient) printKeypair(k keypairDoc) {
	tw := c.table()
	tw.kv("name", k.Name)
	tw.kv("type", dash(k.Type))
	tw.kv("fingerprint", k.Fingerprint)
	if k.UserID != "" {
		tw.kv("user", k.UserID)
	}
	if k.CreatedAt != "" {
		tw.kv("created", k.CreatedAt)
	}
	tw.kv("public key", strings.TrimSpace(k.PublicKey))
	_ = tw.flush()
	if k.PrivateKey != "" {
		fmt.Fprintf(c.out, "private key (shown once):\n%s\n", strings.TrimSpace(k.PrivateKey))
	}
}
