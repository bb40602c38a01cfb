package configdrive

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ingot-dev/ingot/internal/cloudinittest"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

func personalityServer() *lifecycle.Server {
	return &lifecycle.Server{ID: "11111111-2222-3333-4444-555555555555", Name: "web", ProjectID: "p1",
		Spec: lifecycle.Spec{UserData: base64.StdEncoding.EncodeToString([]byte("#cloud-config\n")), Files: []lifecycle.File{
			{Path: "/etc/motd", Contents: base64.StdEncoding.EncodeToString([]byte("hello\n"))},
			{Path: "/root/.ssh/extra", Contents: base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff})},
		}}}
}

// cloud-init's own reader on the drive's tree: it finds each personality
// file through meta_data.json's files and their content_path, as on a
// machine booted from Nova's config drive.
func TestPersonalityCloudInit(t *testing.T) {
	s := personalityServer()
	req := Build(Input{Server: s})
	tree, err := Tree(req.ConfigDrive, s.Spec.Files)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTree(dir, tree); err != nil {
		t.Fatal(err)
	}
	d, err := cloudinittest.ReadDrive(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Files["/etc/motd"]) != "hello\n" || !bytes.Equal(d.Files["/root/.ssh/extra"], []byte{0, 1, 2, 0xff}) || len(d.Files) != 2 {
		t.Errorf("files cloud-init writes: %q", d.Files)
	}
	if d.MetaData["uuid"] != s.ID {
		t.Errorf("meta_data: %v", d.MetaData)
	}
}

// The ISO image: gzip and base64 of an ISO 9660 volume labelled config-2
// whose Rock Ridge names hold the tree (read back with isoinfo).
func TestPersonalityImage(t *testing.T) {
	for _, cmd := range []string{MkisofsCmd, "isoinfo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Skipf("%s not installed (Debian's genisoimage): %v", cmd, err)
		}
	}
	s := personalityServer()
	req := Build(Input{Server: s})
	img, err := Image(context.Background(), req.ConfigDrive, s.Spec.Files)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := base64.StdEncoding.DecodeString(img)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	iso, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// The primary volume descriptor (sector 16): "CD001", the volume id at 40.
	if len(iso) < 17*2048 || string(iso[16*2048+1:16*2048+6]) != "CD001" || string(bytes.TrimRight(iso[16*2048+40:16*2048+72], " ")) != "config-2" {
		t.Fatalf("not an ISO 9660 volume labelled config-2")
	}
	path := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(path, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"/openstack/content/0000": "hello\n", "/openstack/latest/user_data": "#cloud-config\n"} {
		out, err := exec.Command("isoinfo", "-i", path, "-R", "-x", name).Output()
		if err != nil {
			t.Fatalf("isoinfo %s: %v", name, err)
		}
		if string(out) != want {
			t.Errorf("%s = %q, want %q", name, out, want)
		}
	}
}
