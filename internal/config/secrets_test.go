package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func keystoneYAML(extra string) []byte {
	return []byte(`
auth:
  strategy: keystone
  keystone:
    auth_url: http://127.0.0.1:5000/v3
    username: ingot
    project_name: service
` + extra)
}

func writeSecret(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecretsFromFilesAndEnvironment(t *testing.T) {
	pw := writeSecret(t, "s3cret-from-file\n")
	dsn := writeSecret(t, "postgres://ingot:pg-secret@db.example:5432/ingot\n")
	t.Run("files", func(t *testing.T) {
		c, err := Parse(append(keystoneYAML("    password_file: "+pw+"\n"), []byte("database_file: "+dsn+"\nironic: {sim: {state: /tmp/x.json}}\n")...))
		if err != nil {
			t.Fatal(err)
		}
		if c.Auth.Keystone.Password != "s3cret-from-file" {
			t.Errorf("password %q, want the file's content without its newline", c.Auth.Keystone.Password)
		}
		if c.Database != "postgres://ingot:pg-secret@db.example:5432/ingot" {
			t.Errorf("database %q, want the file's DSN", RedactDSN(c.Database))
		}
		// Normalize again (serve does after flags): still fine, same values.
		if err := c.Normalize(); err != nil || c.Auth.Keystone.Password != "s3cret-from-file" {
			t.Errorf("second Normalize: %v, password %q", err, c.Auth.Keystone.Password)
		}
	})
	t.Run("environment wins", func(t *testing.T) {
		t.Setenv(EnvKeystonePassword, "from-env")
		t.Setenv(EnvDatabase, "/var/lib/ingot/env.db")
		c, err := Parse(keystoneYAML("    password: inline\n    password_file: " + pw + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if c.Auth.Keystone.Password != "from-env" || c.Database != "/var/lib/ingot/env.db" {
			t.Errorf("password %q database %q, want the environment's", c.Auth.Keystone.Password, c.Database)
		}
	})
	t.Run("notifications URL from a file", func(t *testing.T) {
		u := writeSecret(t, "amqp://ingot:bus-pw@127.0.0.1:5672/ironic\n")
		c, err := Parse([]byte("ironic: {notifications: {url_file: " + u + "}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if !c.Ironic.Notifications.Enabled() || c.Ironic.Notifications.URL != "amqp://ingot:bus-pw@127.0.0.1:5672/ironic" {
			t.Errorf("notifications %+v", c.Ironic.Notifications)
		}
	})
	t.Run("password only from the environment", func(t *testing.T) {
		t.Setenv(EnvKeystonePassword, "from-env")
		if c, err := Parse(keystoneYAML("")); err != nil || c.Auth.Keystone.Password != "from-env" {
			t.Errorf("got %v, password %q", err, c.Auth.Keystone.Password)
		}
	})
}

func TestSecretErrors(t *testing.T) {
	pw := writeSecret(t, "from-file")
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"inline and file disagree", "    password: inline\n    password_file: " + pw + "\n", "auth.keystone.password: given both inline and as auth.keystone.password_file"},
		{"missing file", "    password_file: /nonexistent/pw\n", "auth.keystone.password_file: open /nonexistent/pw"},
		{"empty file", "    password_file: " + writeSecret(t, "\n") + "\n", "auth.keystone.password_file: "},
		{"no password at all", "", "auth.keystone.password: must not be empty with keystone (or give password_file, or set INGOT_KEYSTONE_PASSWORD)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(keystoneYAML(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "from-file") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}
