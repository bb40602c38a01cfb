package keypairs

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// minRSABits is the smallest RSA key imported (smaller ones are breakable).
const minRSABits = 2048

var errKeyData = errors.New("Keypair data is invalid")

// acceptedKeys are the key types imported: ssh-rsa of minRSABits or more,
// ssh-ed25519 and ECDSA on the NIST curves (not DSA, security keys or
// certificates).
var acceptedKeys = map[string]bool{
	ssh.KeyAlgoRSA: true, ssh.KeyAlgoED25519: true,
	ssh.KeyAlgoECDSA256: true, ssh.KeyAlgoECDSA384: true, ssh.KeyAlgoECDSA521: true,
}

// parseSSHPublicKey reads one "algo base64 [comment]" line (no options, no
// second line) and checks the key itself: its wire form, that an ECDSA
// point is on its curve, an RSA key's exponent and size.
func parseSSHPublicKey(line string) (ssh.PublicKey, error) {
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return nil, fmt.Errorf("%w: failed to read the public key (want \"type base64 [comment]\")", errKeyData)
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return nil, fmt.Errorf("%w: the key is not base64", errKeyData)
	}
	if !acceptedKeys[fields[0]] {
		return nil, fmt.Errorf("%w: key type %q is not accepted (ssh-rsa of %d bits or more, ssh-ed25519, ecdsa-sha2-nistp256/384/521)",
			errKeyData, fields[0], minRSABits)
	}
	key, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed %s key", errKeyData, fields[0])
	}
	if key.Type() != fields[0] {
		return nil, fmt.Errorf("%w: the key type does not match its data", errKeyData)
	}
	if ck, ok := key.(ssh.CryptoPublicKey); ok {
		if rk, ok := ck.CryptoPublicKey().(*rsa.PublicKey); ok && rk.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("%w: an RSA key of %d bits is too small (at least %d)", errKeyData, rk.N.BitLen(), minRSABits)
		}
	}
	return key, nil
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

// generateSSHKey makes an RSA key pair as Nova's generate does: the
// public key in OpenSSH form and the private key as PKCS#1 PEM.
func generateSSHKey() (public, private, fingerprint string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, minRSABits)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", "", fmt.Errorf("generate key: %w", err)
	}
	public = strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(pub)), "\n") + " Generated-by-Nova"
	private = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return public, private, ssh.FingerprintLegacyMD5(pub), nil
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
