package config

import (
	"os"
	"strings"
)

// Secrets never have to live in the configuration file: each one can come
// from a file (systemd credentials, a Kubernetes secret, a 0600 file) or
// from the environment, which wins over both. A secret given inline and
// as a file is refused, so an operator never wonders which one is used.
type secret struct {
	key    string  // the inline key, e.g. auth.keystone.password
	inline *string // the inline value, replaced by the resolved one
	file   string  // the <key>_file setting
	env    string  // the environment variable that overrides both
	// defaulted: the inline key has a built-in default (database), which
	// the file replaces without a conflict.
	defaulted bool
}

// EnvDatabase and EnvKeystonePassword override database and
// auth.keystone.password (and their _file forms).
const (
	EnvDatabase         = "INGOT_DATABASE"
	EnvKeystonePassword = "INGOT_KEYSTONE_PASSWORD"
	// EnvNotificationsURL overrides ironic.notifications.url (and url_file).
	EnvNotificationsURL = "INGOT_NOTIFICATIONS_URL"
	// EnvPublishURL overrides notifications.url (and url_file).
	EnvPublishURL = "INGOT_NOTIFICATIONS_PUBLISH_URL"
)

func (c *Config) secrets() []secret {
	return []secret{
		{key: "database", inline: &c.Database, file: c.DatabaseFile, env: EnvDatabase, defaulted: true},
		{key: "auth.keystone.password", inline: &c.Auth.Keystone.Password, file: c.Auth.Keystone.PasswordFile, env: EnvKeystonePassword},
		{key: "ironic.notifications.url", inline: &c.Ironic.Notifications.URL, file: c.Ironic.Notifications.URLFile, env: EnvNotificationsURL},
		{key: "notifications.url", inline: &c.Notifications.URL, file: c.Notifications.URLFile, env: EnvPublishURL},
	}
}

// resolveSecrets fills each secret from its file and the environment
// (lookup is os.LookupEnv outside tests). Idempotent: a value already read
// from the file equals the file's content.
func (c *Config) resolveSecrets(lookup func(string) (string, bool), bad func(key, format string, args ...any)) {
	for _, s := range c.secrets() {
		if v, ok := lookup(s.env); ok && v != "" {
			*s.inline = v
			continue
		}
		if s.file == "" {
			continue
		}
		raw, err := os.ReadFile(s.file)
		if err != nil {
			bad(s.key+"_file", "%v", err)
			continue
		}
		// One trailing newline (echo's, an editor's) is not part of the secret.
		v := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
		if v == "" {
			bad(s.key+"_file", "%s is empty", s.file)
			continue
		}
		if *s.inline != "" && *s.inline != v && !s.defaulted {
			bad(s.key, "given both inline and as %s_file: keep one", s.key)
			continue
		}
		*s.inline = v
	}
}
