package cloudinittest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// readDriveScript reads the config drive mounted at argv[1] with
// cloud-init's ConfigDriveReader (read_v2, what the ConfigDrive data source
// does) and prints {"files": {path: base64}, "metadata": …} or {"error": …}.
const readDriveScript = `
import base64, json, sys
from cloudinit.sources.helpers import openstack
try:
    res = openstack.ConfigDriveReader(sys.argv[1]).read_v2()
    files = {}
    for p, c in (res.get("files") or {}).items():
        if isinstance(c, str):
            c = c.encode()
        files[p] = base64.b64encode(c).decode()
    json.dump({"files": files, "metadata": res.get("metadata")}, sys.stdout)
except Exception as e:
    json.dump({"error": "%s: %s" % (type(e).__name__, e)}, sys.stdout)
`

// Drive is what cloud-init reads from a config drive: the files it will
// write onto the machine (path → contents) and meta_data.json.
type Drive struct {
	Files    map[string][]byte
	MetaData map[string]any
}

// ReadDrive runs cloud-init's config drive reader on dir, a config drive's
// root (the directory holding openstack/).
func ReadDrive(t testing.TB, dir string) (*Drive, error) {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", readDriveScript, dir)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloudinittest: %s: %v: %s", python, err, stderr.String())
	}
	var res struct {
		Files    map[string]string `json:"files"`
		MetaData map[string]any    `json:"metadata"`
		Error    string            `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("cloudinittest: output %q: %v", out, err)
	}
	if res.Error != "" {
		return nil, fmt.Errorf("cloud-init: %s", res.Error)
	}
	d := &Drive{Files: map[string][]byte{}, MetaData: res.MetaData}
	for p, c := range res.Files {
		raw, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			t.Fatalf("cloudinittest: file %s: %v", p, err)
		}
		d.Files[p] = raw
	}
	return d, nil
}
