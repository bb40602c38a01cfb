package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/keystonetest"
	"github.com/spf13/cobra"
)

// osVars are the variables a login reads; each case starts with none set.
var osVars = []string{"OS_CLOUD", "OS_AUTH_URL", "OS_AUTH_TYPE", "OS_USERNAME", "OS_USER_ID", "OS_PASSWORD",
	"OS_PROJECT_NAME", "OS_PROJECT_ID", "OS_TENANT_NAME", "OS_TENANT_ID", "OS_USER_DOMAIN_NAME", "OS_USER_DOMAIN_ID",
	"OS_PROJECT_DOMAIN_NAME", "OS_PROJECT_DOMAIN_ID", "OS_DOMAIN_NAME", "OS_DOMAIN_ID", "OS_REGION_NAME", "OS_INTERFACE",
	"OS_TOKEN", "OS_APPLICATION_CREDENTIAL_ID", "OS_APPLICATION_CREDENTIAL_NAME", "OS_APPLICATION_CREDENTIAL_SECRET",
	"OS_CACERT", "OS_CERT", "OS_KEY", "OS_INSECURE", "OS_SYSTEM_SCOPE", "OS_CLIENT_CONFIG_FILE",
	"INGOT_ENDPOINT", "INGOT_PROJECT"}

// cleanEnv unsets every OS_* variable and points the clouds.yaml search
// at empty directories (the working directory is this package's, which has
// none).
func cleanEnv(t *testing.T) (home string) {
	for _, k := range osVars {
		t.Setenv(k, "")
	}
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	return home
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCLIKeystoneLogin: every form the openstack CLI takes logs in to a
// real Keystone and is scoped to the user's project.
func TestCLIKeystoneLogin(t *testing.T) {
	ks := keystonetest.Start(t)
	user := ks.Users["member-a"]
	appID, appSecret := applicationCredential(t, ks, user)
	cloudsYAML := `clouds:
  lab:
    auth:
      auth_url: ` + ks.URL + `
      username: member-a
      project_name: a
      user_domain_name: Default
      project_domain_id: default
    region_name: RegionOne
    interface: public
`
	cases := []struct {
		name  string
		env   map[string]string
		files func(home string) // clouds.yaml and secure.yaml
	}{
		{name: "domain names", env: map[string]string{"OS_AUTH_URL": ks.URL, "OS_USERNAME": "member-a", "OS_PASSWORD": keystonetest.Password,
			"OS_PROJECT_NAME": "a", "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default", "OS_IDENTITY_API_VERSION": "3"}},
		{name: "domain ids", env: map[string]string{"OS_AUTH_URL": ks.URL, "OS_USERNAME": "member-a", "OS_PASSWORD": keystonetest.Password,
			"OS_PROJECT_NAME": "a", "OS_USER_DOMAIN_ID": "default", "OS_PROJECT_DOMAIN_ID": "default"}},
		{name: "OS_DOMAIN_NAME for both", env: map[string]string{"OS_AUTH_URL": ks.URL, "OS_USERNAME": "member-a", "OS_PASSWORD": keystonetest.Password,
			"OS_PROJECT_NAME": "a", "OS_DOMAIN_NAME": "Default"}},
		{name: "user and project ids", env: map[string]string{"OS_AUTH_URL": ks.URL, "OS_USER_ID": user.ID, "OS_PASSWORD": keystonetest.Password,
			"OS_PROJECT_ID": user.ProjectID}},
		{name: "application credential", env: map[string]string{"OS_AUTH_URL": ks.URL, "OS_AUTH_TYPE": "v3applicationcredential",
			"OS_APPLICATION_CREDENTIAL_ID": appID, "OS_APPLICATION_CREDENTIAL_SECRET": appSecret}},
		{name: "OS_CLOUD, password in secure.yaml, XDG_CONFIG_HOME", env: map[string]string{"OS_CLOUD": "lab"}, files: func(home string) {
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
			writeFile(t, filepath.Join(home, "xdg", "openstack", "clouds.yaml"), cloudsYAML)
			writeFile(t, filepath.Join(home, "xdg", "openstack", "secure.yaml"), "clouds:\n  lab:\n    auth:\n      password: "+keystonetest.Password+"\n")
		}},
		{name: "OS_CLOUD in ~/.config, OS_PASSWORD", env: map[string]string{"OS_CLOUD": "lab", "OS_PASSWORD": keystonetest.Password}, files: func(home string) {
			writeFile(t, filepath.Join(home, ".config", "openstack", "clouds.yaml"), cloudsYAML)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := cleanEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if c.files != nil {
				c.files(home)
			}
			cmd := &cobra.Command{}
			cmd.SetContext(context.Background())
			id, err := (&clientOptions{}).identify(cmd)
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			if id.project != user.ProjectID {
				t.Errorf("project %q, want %q (a)", id.project, user.ProjectID)
			}
			if tok := id.headers.Get("X-Auth-Token"); tok == "" || !ks.Validate(t, tok) {
				t.Errorf("token %q is not valid", tok)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		cleanEnv(t)
		for k, v := range cases[0].env {
			t.Setenv(k, v)
		}
		t.Setenv("OS_PASSWORD", "wrong")
		cmd := &cobra.Command{}
		cmd.SetContext(context.Background())
		if _, err := (&clientOptions{}).identify(cmd); err == nil || !strings.Contains(err.Error(), "keystone "+ks.URL) {
			t.Errorf("login with a wrong password: %v", err)
		}
	})
}

// TestCLIKeystoneCatalog: logged in, the CLI finds ingot as the catalog's
// compute service (OS_INTERFACE chooses the endpoint), as the openstack
// CLI does, without --endpoint.
func TestCLIKeystoneCatalog(t *testing.T) {
	ks := keystonetest.Start(t)
	f := newCLIFixture(t)
	if _, _, err := f.run("server", "create", "cataloged", "--flavor", "1", "--image", cliImage, "--network", "none"); err != nil {
		t.Fatal(err)
	}
	ks.RegisterService(t, "compute", "nova", f.url+"/v2.1")
	home := cleanEnv(t)
	writeFile(t, filepath.Join(home, ".config", "openstack", "clouds.yaml"), `clouds:
  lab:
    auth: {auth_url: `+ks.URL+`, username: member-a, password: `+keystonetest.Password+`, project_name: a, user_domain_id: default, project_domain_id: default}
`)
	t.Setenv("OS_CLOUD", "lab")
	t.Setenv("OS_REGION_NAME", "RegionOne")
	t.Setenv("OS_INTERFACE", "internal")
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"server", "list"})
	if err := root.ExecuteContext(context.Background()); err != nil || !strings.Contains(out.String(), "cataloged") {
		t.Fatalf("server list through the catalog: %v\n%s%s", err, out.String(), errOut.String())
	}
}

// applicationCredential makes one for u (POST /v3/users/{id}/application_credentials).
func applicationCredential(t *testing.T, ks *keystonetest.Env, u keystonetest.User) (id, secret string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"application_credential": map[string]any{"name": "ingot-cli-test"}})
	req, _ := http.NewRequest(http.MethodPost, ks.URL+"/users/"+u.ID+"/application_credentials", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", ks.Token(t, u.Name))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ApplicationCredential struct{ ID, Secret string } `json:"application_credential"`
	}
	if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("application credential: %s", resp.Status)
	}
	return out.ApplicationCredential.ID, out.ApplicationCredential.Secret
}
