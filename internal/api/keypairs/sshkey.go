package keypairs

import (
	"bytes"
	"crypto/ecdh"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Public keys are parsed with the standard library: the OpenSSH wire
// format (RFC 4253 §6.6, RFC 5656, RFC 8709) is a few length-prefixed
// fields, and golang.org/x/crypto is not among the modules this project may
// use. What is accepted: ssh-rsa of 2048 bits or more, ssh-ed25519, and
// ecdsa-sha2-nistp256/384/521 with the point on its curve.

// minRSABits is the smallest RSA key imported (smaller ones are breakable).
const minRSABits = 2048

var errKeyData = errors.New("Keypair data is invalid")

// sshKey is a parsed OpenSSH public key line.
type sshKey struct {
	algo string
	blob []byte // the decoded wire form
}

// parseSSHPublicKey reads "algo base64 [comment]" and checks the key itself.
func parseSSHPublicKey(line string) (sshKey, error) {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return sshKey{}, fmt.Errorf("%w: failed to read the public key (want \"type base64 [comment]\")", errKeyData)
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return sshKey{}, fmt.Errorf("%w: the key is not base64", errKeyData)
	}
	rest := blob
	algo, ok := sshString(&rest)
	if !ok || string(algo) != fields[0] {
		return sshKey{}, fmt.Errorf("%w: the key type does not match its data", errKeyData)
	}
	switch string(algo) {
	case "ssh-rsa":
		e, ok1 := sshString(&rest)
		n, ok2 := sshString(&rest)
		if !ok1 || !ok2 || len(rest) != 0 {
			return sshKey{}, fmt.Errorf("%w: malformed ssh-rsa key", errKeyData)
		}
		exp := new(big.Int).SetBytes(e)
		if exp.Cmp(big.NewInt(3)) < 0 || exp.Bit(0) == 0 {
			return sshKey{}, fmt.Errorf("%w: bad RSA exponent", errKeyData)
		}
		if bits := new(big.Int).SetBytes(n).BitLen(); bits < minRSABits {
			return sshKey{}, fmt.Errorf("%w: an RSA key of %d bits is too small (at least %d)", errKeyData, bits, minRSABits)
		}
	case "ssh-ed25519":
		k, ok := sshString(&rest)
		if !ok || len(k) != 32 || len(rest) != 0 {
			return sshKey{}, fmt.Errorf("%w: malformed ssh-ed25519 key", errKeyData)
		}
	case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
		curve, ok1 := sshString(&rest)
		point, ok2 := sshString(&rest)
		if !ok1 || !ok2 || len(rest) != 0 || "ecdsa-sha2-"+string(curve) != string(algo) {
			return sshKey{}, fmt.Errorf("%w: malformed %s key", errKeyData, algo)
		}
		c := map[string]ecdh.Curve{"nistp256": ecdh.P256(), "nistp384": ecdh.P384(), "nistp521": ecdh.P521()}[string(curve)]
		if _, err := c.NewPublicKey(point); err != nil { // checks the point is on the curve
			return sshKey{}, fmt.Errorf("%w: the %s point is not on its curve", errKeyData, curve)
		}
	default:
		return sshKey{}, fmt.Errorf("%w: key type %q is not accepted (ssh-rsa of %d bits or more, ssh-ed25519, ecdsa-sha2-nistp256/384/521)",
			errKeyData, algo, minRSABits)
	}
	return sshKey{algo: string(algo), blob: blob}, nil
}

// sshString takes one length-prefixed field off b.
func sshString(b *[]byte) ([]byte, bool) {
	if len(*b) < 4 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(*b)
	if uint64(n) > uint64(len(*b)-4) {
		return nil, false
	}
	v := (*b)[4 : 4+n]
	*b = (*b)[4+n:]
	return v, true
}

// colonHex writes a digest as Nova does: "aa:bb:…".
func colonHex(sum []byte) string {
	h := hex.EncodeToString(sum)
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// sshFingerprint is Nova's: the MD5 of the key's wire form.
func (k sshKey) fingerprint() string {
	sum := md5.Sum(k.blob)
	return colonHex(sum[:])
}

// generateSSHKey makes an RSA key pair as Nova's generate does: the
// public key in OpenSSH form and the private key as PKCS#1 PEM.
func generateSSHKey() (public, private, fingerprint string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, minRSABits)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	var blob bytes.Buffer
	for _, f := range [][]byte{[]byte("ssh-rsa"), big.NewInt(int64(key.E)).Bytes(), mpint(key.N)} {
		_ = binary.Write(&blob, binary.BigEndian, uint32(len(f)))
		blob.Write(f)
	}
	public = "ssh-rsa " + base64.StdEncoding.EncodeToString(blob.Bytes()) + " Generated-by-Nova"
	private = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return public, private, sshKey{algo: "ssh-rsa", blob: blob.Bytes()}.fingerprint(), nil
}

// mpint is an SSH mpint's bytes: a leading zero when the top bit is set.
func mpint(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		return append([]byte{0}, b...)
	}
	return b
}

// parseX509 reads an x509 keypair's "public key": one PEM certificate.
// Its fingerprint is the SHA-1 of the DER, as Nova computes it.
func parseX509(data string) (fingerprint string, err error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(data)))
	if block == nil || block.Type != "CERTIFICATE" {
		return "", fmt.Errorf("%w: want one PEM certificate", errKeyData)
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return "", fmt.Errorf("%w: %v", errKeyData, err)
	}
	sum := sha1.Sum(block.Bytes)
	return colonHex(sum[:]), nil
}

// generateX509 makes a self-signed certificate for the user, as Nova's
// x509 generate does, with its private key.
func generateX509(userID string, now time.Time) (public, private, fingerprint string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, minRSABits)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", "", "", err
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: userID},
		NotBefore: now.Add(-time.Minute), NotAfter: now.AddDate(10, 0, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", "", fmt.Errorf("generate certificate: %w", err)
	}
	sum := sha1.Sum(der)
	public = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	private = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return public, private, colonHex(sum[:]), nil
}
