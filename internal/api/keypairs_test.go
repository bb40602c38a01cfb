package api_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/binary"
	"math/big"
	"net/http"
	"strings"
	"testing"
)

func sshLine(algo string, fields ...[]byte) string {
	var blob []byte
	for _, f := range append([][]byte{[]byte(algo)}, fields...) {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(f)))
		blob = append(blob, f...)
	}
	return algo + " " + base64.StdEncoding.EncodeToString(blob) + " c"
}

func rsaKey(t *testing.T, bits int) string {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	n := k.N.Bytes()
	if n[0]&0x80 != 0 {
		n = append([]byte{0}, n...)
	}
	return sshLine("ssh-rsa", big.NewInt(int64(k.E)).Bytes(), n)
}

func ecdsaKey(t *testing.T) string {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return sshLine("ecdsa-sha2-nistp256", []byte("nistp256"), k.PublicKey().Bytes())
}

// TestKeypairImportValidation: what is imported is a real key of an
// accepted kind and size.
func TestKeypairImportValidation(t *testing.T) {
	f := newFixture(t)
	offCurve := make([]byte, 65)
	offCurve[0] = 4
	offCurve[64] = 1
	for name, tc := range map[string]struct {
		key  string
		want int
	}{
		"ed25519":         {ed25519Key(t), 201},
		"rsa 2048":        {rsaKey(t, 2048), 201},
		"ecdsa p256":      {ecdsaKey(t), 201},
		"rsa 1024":        {rsaKey(t, 1024), 400},
		"ecdsa off curve": {sshLine("ecdsa-sha2-nistp256", []byte("nistp256"), offCurve), 400},
		"ed25519 short":   {sshLine("ssh-ed25519", make([]byte, 31)), 400},
		"dss":             {sshLine("ssh-dss", []byte{1}, []byte{2}, []byte{3}, []byte{4}), 400},
		"type mismatch":   {"ssh-rsa " + strings.Fields(ed25519Key(t))[1], 400},
		"not base64":      {"ssh-ed25519 !!!", 400},
		"garbage":         {"hello", 400},
		"trailing data":   {sshLine("ssh-ed25519", make([]byte, 32), []byte("x")), 400},
		"security key":    {sshLine("sk-ssh-ed25519@openssh.com", make([]byte, 32), []byte("ssh:")), 400},
		"options":         {"no-pty " + ed25519Key(t), 400},
	} {
		r := f.do("POST", "/v2.1/os-keypairs", "2.2", map[string]any{"keypair": map[string]any{"name": strings.ReplaceAll(name, " ", "-"), "public_key": tc.key}})
		if r.status != tc.want {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.raw, tc.want)
		}
		if tc.want == 201 {
			kp := obj(t, r.body, "keypair")
			if fp, _ := kp["fingerprint"].(string); len(fp) != 47 || kp["type"] != "ssh" || kp["private_key"] != nil {
				t.Errorf("%s: %v", name, kp)
			}
		}
	}
}

// TestKeypairMicroversions: Nova's shapes and codes from 2.1 to 2.92.
func TestKeypairMicroversions(t *testing.T) {
	f := newFixture(t)
	// 2.1: a generated key, 200, no type; the private key once.
	r := f.do("POST", "/v2.1/os-keypairs", "2.1", map[string]any{"keypair": map[string]any{"name": "gen"}}).want(t, 200)
	kp := obj(t, r.body, "keypair")
	if !strings.HasPrefix(kp["public_key"].(string), "ssh-rsa ") || !strings.Contains(kp["private_key"].(string), "PRIVATE KEY") ||
		kp["type"] != nil || kp["user_id"] != "ingot" {
		t.Errorf("2.1 generate: %v", kp)
	}
	// 2.1 refuses type; 2.2 accepts it (x509 generated: a certificate).
	f.do("POST", "/v2.1/os-keypairs", "2.1", map[string]any{"keypair": map[string]any{"name": "t", "type": "ssh"}}).want(t, 400)
	r = f.do("POST", "/v2.1/os-keypairs", "2.2", map[string]any{"keypair": map[string]any{"name": "cert", "type": "x509"}}).want(t, 201)
	if kp := obj(t, r.body, "keypair"); kp["type"] != "x509" || !strings.Contains(kp["public_key"].(string), "CERTIFICATE") {
		t.Errorf("2.2 x509: %v", kp)
	}
	// The show: Nova's extra members.
	r = f.do("GET", "/v2.1/os-keypairs/gen", "2.2", nil).want(t, 200)
	show := obj(t, r.body, "keypair")
	for _, k := range []string{"id", "created_at", "deleted", "deleted_at", "updated_at", "user_id", "type"} {
		if _, ok := show[k]; !ok {
			t.Errorf("show lacks %s: %v", k, show)
		}
	}
	if _, ok := show["private_key"]; ok {
		t.Error("the private key is shown again")
	}
	// List entries are wrapped; 2.35 pages.
	r = f.do("GET", "/v2.1/os-keypairs?limit=1", "2.35", nil).want(t, 200)
	if l := list(t, r.body, "keypairs"); len(l) != 1 || obj(t, l[0], "keypair")["name"] != "cert" {
		t.Errorf("2.35 limit 1: %s", r.raw)
	}
	if _, ok := r.body["keypairs_links"]; !ok {
		t.Errorf("no keypairs_links on a full page: %s", r.raw)
	}
	// 2.92: the public key is required and names may have '@' and '.'.
	f.do("POST", "/v2.1/os-keypairs", "2.92", map[string]any{"keypair": map[string]any{"name": "nokey"}}).want(t, 400)
	f.do("POST", "/v2.1/os-keypairs", "2.92", map[string]any{"keypair": map[string]any{"name": "me@host.x", "public_key": ed25519Key(t)}}).want(t, 201)
	f.do("POST", "/v2.1/os-keypairs", "2.91", map[string]any{"keypair": map[string]any{"name": "me@host.x2", "public_key": ed25519Key(t)}}).want(t, 400)
	// Duplicates conflict.
	f.do("POST", "/v2.1/os-keypairs", "2.2", map[string]any{"keypair": map[string]any{"name": "gen", "public_key": ed25519Key(t)}}).novaError(t, 409, "conflictingRequest")
	// 2.10: an admin acts for another user; user_id is not accepted before.
	f.do("POST", "/v2.1/os-keypairs", "2.9", map[string]any{"keypair": map[string]any{"name": "o", "user_id": "other", "public_key": ed25519Key(t)}}).want(t, 400)
	f.do("POST", "/v2.1/os-keypairs", "2.10", map[string]any{"keypair": map[string]any{"name": "o", "user_id": "other", "public_key": ed25519Key(t)}}).want(t, 201)
	if l := list(t, f.do("GET", "/v2.1/os-keypairs?user_id=other", "2.10", nil).want(t, 200).body, "keypairs"); len(l) != 1 {
		t.Errorf("other's keypairs: %v", l)
	}
	if l := list(t, f.do("GET", "/v2.1/os-keypairs?user_id=other", "2.9", nil).want(t, 200).body, "keypairs"); len(l) != 3 {
		t.Errorf("below 2.10 user_id is ignored: %d keypairs", len(l))
	}
	// Delete: 202 at 2.1, 204 from 2.2; 404 after.
	f.do("DELETE", "/v2.1/os-keypairs/gen", "2.1", nil).want(t, http.StatusAccepted)
	f.do("DELETE", "/v2.1/os-keypairs/cert", "2.2", nil).want(t, http.StatusNoContent)
	f.do("GET", "/v2.1/os-keypairs/gen", "2.2", nil).novaError(t, 404, "itemNotFound")
}

// TestKeypairFingerprint: an imported key's fingerprint is Nova's, the MD5
// of its wire form as `ssh-keygen -l -E md5` shows it.
func TestKeypairFingerprint(t *testing.T) {
	f := newFixture(t)
	const pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOFVSw8JBp31tw8jxeFdeWL6/DnEf85/kd7Fk02PHUo4 c"
	r := f.do("POST", "/v2.1/os-keypairs", "2.2", map[string]any{"keypair": map[string]any{"name": "fixed", "public_key": pub}}).want(t, 201)
	if fp := obj(t, r.body, "keypair")["fingerprint"]; fp != "1f:3f:62:eb:38:26:c5:ae:ef:5a:68:8c:36:2a:d4:c1" {
		t.Errorf("fingerprint %v", fp)
	}
}
