package configdrive

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// MkisofsCmd is the ISO 9660 builder Nova's config drive uses (its
// mkisofs_cmd default).
const MkisofsCmd = "genisoimage"

// contentPath is where the i-th injected file lies on the drive, under
// openstack/ (Nova's InstanceMetadata: "/content/0000", …).
func contentPath(i int) string { return fmt.Sprintf("/content/%04d", i) }

// fileEntries are meta_data.json's files: each personality file's path on
// the machine and where its contents lie on the drive.
func fileEntries(files []lifecycle.File) []any {
	out := make([]any, len(files))
	for i, f := range files {
		out[i] = map[string]any{"path": f.Path, "content_path": contentPath(i)}
	}
	return out
}

// Tree is the config drive's files as Nova's ConfigDriveBuilder lays them
// out: openstack/latest/{meta_data.json,network_data.json,user_data} and
// openstack/content/NNNN, the personality files decoded.
func Tree(cd *ironic.ConfigDrive, files []lifecycle.File) (map[string][]byte, error) {
	out := map[string][]byte{}
	meta, err := json.Marshal(cd.MetaData)
	if err != nil {
		return nil, fmt.Errorf("meta_data.json: %w", err)
	}
	out["openstack/latest/meta_data.json"] = meta
	if cd.NetworkData != nil {
		nd, err := json.Marshal(cd.NetworkData)
		if err != nil {
			return nil, fmt.Errorf("network_data.json: %w", err)
		}
		out["openstack/latest/network_data.json"] = nd
	}
	if cd.UserData != "" {
		out["openstack/latest/user_data"] = []byte(cd.UserData)
	}
	for i, f := range files {
		raw, err := base64.StdEncoding.DecodeString(f.Contents)
		if err != nil {
			return nil, fmt.Errorf("personality file %s: %w", f.Path, err)
		}
		out["openstack"+contentPath(i)] = raw
	}
	return out, nil
}

// WriteTree writes tree under dir.
func WriteTree(dir string, tree map[string][]byte) error {
	for name, data := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("config drive: %w", err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return fmt.Errorf("config drive: %w", err)
		}
	}
	return nil
}

// Image is the config drive as Nova's Ironic driver sends it when files
// are injected (_generate_configdrive): an ISO 9660 image labelled
// config-2, built by MkisofsCmd with Nova's options, gzipped and base64.
// Ironic's JSON config drive has no room for the content files.
func Image(ctx context.Context, cd *ironic.ConfigDrive, files []lifecycle.File) (string, error) {
	tree, err := Tree(cd, files)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "ingot-configdrive-")
	if err != nil {
		return "", fmt.Errorf("config drive: %w", err)
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "root")
	if err := WriteTree(root, tree); err != nil {
		return "", err
	}
	iso := filepath.Join(dir, "configdrive.iso")
	cmd := exec.CommandContext(ctx, MkisofsCmd, "-o", iso, "-ldots", "-allow-lowercase", "-allow-multidot", "-l",
		"-publisher", "ingot", "-quiet", "-J", "-r", "-V", "config-2", root)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("config drive: %s: %w: %s", MkisofsCmd, err, bytes.TrimSpace(out))
	}
	raw, err := os.ReadFile(iso)
	if err != nil {
		return "", fmt.Errorf("config drive: %w", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw); err != nil {
		return "", fmt.Errorf("config drive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("config drive: %w", err)
	}
	return base64.StdEncoding.EncodeToString(gz.Bytes()), nil
}
