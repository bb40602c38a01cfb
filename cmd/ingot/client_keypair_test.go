package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/store"
)

func TestCLIKeypairs(t *testing.T) {
	f := newCLIFixture(t)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	for _, p := range [][]byte{[]byte("ssh-ed25519"), pub} {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(p)))
		blob = append(blob, p...)
	}
	dir := t.TempDir()
	pubFile := filepath.Join(dir, "id.pub")
	if err := os.WriteFile(pubFile, []byte("ssh-ed25519 "+base64.StdEncoding.EncodeToString(blob)+" me@laptop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := f.run("keypair", "create", "laptop", "--public-key", pubFile)
	if err != nil || !strings.Contains(out, "fingerprint") || strings.Contains(out, "private key") {
		t.Fatalf("import: %v\n%s%s", err, out, errOut)
	}
	privFile := filepath.Join(dir, "gen.pem")
	out, errOut, err = f.run("keypair", "create", "generated", "--private-key", privFile)
	if err != nil {
		t.Fatalf("generate: %v\n%s%s", err, out, errOut)
	}
	if st, err := os.Stat(privFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key file: %v %v", st, err)
	}
	if b, _ := os.ReadFile(privFile); !strings.Contains(string(b), "BEGIN RSA PRIVATE KEY") {
		t.Fatalf("private key: %q", b)
	}
	out, _, err = f.run("keypair", "list")
	if err != nil || !strings.Contains(out, "laptop") || !strings.Contains(out, "generated") || !strings.Contains(out, "ssh") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, _, err = f.run("keypair", "show", "laptop")
	if err != nil || !strings.Contains(out, "me@laptop") || !strings.Contains(out, "ingot") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	// A server created with --key-name carries the key.
	out, errOut, err = f.run("server", "create", "vm1", "--flavor", "bm.small", "--image", "debian-12", "--key-name", "laptop")
	if err != nil {
		t.Fatalf("create --key-name: %v\n%s%s", err, out, errOut)
	}
	list, _ := f.store.ListServers(context.Background(), store.ListOptions{})
	if len(list) != 1 || !strings.Contains(list[0].Spec.PublicKey, "me@laptop") || list[0].Spec.KeyName != "laptop" {
		t.Fatalf("server spec: %+v", list)
	}
	if _, _, err := f.run("server", "create", "vm2", "--flavor", "bm.small", "--image", "debian-12", "--key-name", "nope"); err == nil ||
		!strings.Contains(err.Error(), "Invalid key_name") {
		t.Fatalf("unknown key name: %v", err)
	}
	if out, _, err := f.run("keypair", "delete", "laptop"); err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %v %s", err, out)
	}
	if _, _, err := f.run("keypair", "show", "laptop"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("show after delete: %v", err)
	}
}
