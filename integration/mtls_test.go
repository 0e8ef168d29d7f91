package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// badTimeout is --timeout for the failing connections; a run must end within it plus
// badMargin (process start, client close).
const (
	badTimeout = 8 * time.Second
	badMargin  = 5 * time.Second
)

// TestMTLSRejectionsAreClearErrorsWithinTimeout: a missing client certificate, a wrong
// key password and a certificate from a CA the broker does not trust each make repro
// (librdkafka) and inspect (franz-go) exit 1 within --timeout, with an error that says
// what is wrong, and without printing the key password even with librdkafka debug logs.
func TestMTLSRejectionsAreClearErrorsWithinTimeout(t *testing.T) {
	good := sslProps(t)
	dir := t.TempDir()
	wrongPassword := "not-the-key-password-" + randomHex(t)
	addSecret(wrongPassword)

	noCert := clone(good)
	delete(noCert, "ssl.certificate.location")
	delete(noCert, "ssl.key.location")
	delete(noCert, "ssl.key.password")

	badPassword := clone(good)
	badPassword["ssl.key.password"] = wrongPassword

	otherCA := clone(good)
	delete(otherCA, "ssl.key.password")
	otherCA["ssl.certificate.location"], otherCA["ssl.key.location"] = certFromAnotherCA(t, dir)

	// The broker rejects a missing and an untrusted certificate: TLS alert 42
	// (bad_certificate), or 116 (certificate_required) when the client sends none, as
	// crypto/tls does when its certificate is not from a CA the broker's
	// CertificateRequest lists (CI of 2026-12-05: "remote error: tls: certificate
	// required" for both cases, Kafka 4.3.1 on Java 17). Whichever alert, every command
	// explains it with kafkaconf.TLSHint ("... requires a client certificate signed by
	// a CA it trusts..."): repro (librdkafka) and inspect (franz-go, through
	// kafkaconf.ExplainError) alike.
	rejected := map[string]string{"repro": "client certificate", "repro produce": "client certificate", "inspect": "client certificate"}
	wrongKey := map[string]string{"repro": "wrong ssl.key.password", "repro produce": "wrong ssl.key.password", "inspect": "wrong ssl.key.password"}
	cases := []struct {
		name  string
		props map[string]string
		want  map[string]string // command -> what its error line says
	}{
		{"no client certificate", noCert, rejected},
		{"wrong key password", badPassword, wrongKey},
		{"certificate from another CA", otherCA, rejected},
	}
	for i, tc := range cases {
		config := writeProps(t, dir, fmt.Sprintf("client-%d.properties", i), tc.props)
		commands := []struct {
			name string
			args []string
		}{
			{"repro", []string{"repro", "--policy", "v1.10.0"}},
			{"repro produce", []string{"repro", "produce", "--topic", "kstranded-integration-never-created"}},
			{"inspect", []string{"inspect", "--group", "kstranded-integration-no-group"}},
		}
		for _, c := range commands {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				args := append(slices.Clone(c.args), "--brokers", env.SSLBrokers, "--config", config,
					"--timeout", badTimeout.String(), "-X", "debug=security,broker,conf")
				r := kstranded(t, 2*time.Minute, args...)
				if r.Code != 1 {
					t.Fatalf("exit %d, want 1\n%s", r.Code, r)
				}
				if r.Elapsed > badTimeout+badMargin {
					t.Errorf("took %s, want at most --timeout %s + %s", r.Elapsed.Round(time.Millisecond), badTimeout, badMargin)
				}
				if msg, want := errorLine(r.Stderr), tc.want[c.name]; !strings.Contains(msg, want) {
					t.Errorf("error line %q does not say %q\n%s", hideSecrets(msg), want, r)
				}
				assertNoSecret(t, r, good["ssl.key.password"], wrongPassword)
			})
		}
	}

	// With -o json the error is the one JSON document on stdout.
	t.Run("no client certificate/inspect -o json", func(t *testing.T) {
		t.Parallel()
		config := writeProps(t, t.TempDir(), "client.properties", noCert)
		r := kstranded(t, 2*time.Minute, "inspect", "--brokers", env.SSLBrokers, "--config", config,
			"--group", "kstranded-integration-no-group", "--timeout", badTimeout.String(), "-o", "json")
		var e struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &e); err != nil || r.Code != 1 || e.ExitCode != 1 || !strings.Contains(e.Error, "certificate") {
			t.Errorf("want exit 1 and {\"error\": ...certificate..., \"exit_code\": 1} on stdout (decode: %v)\n%s", err, r)
		}
	})
}

// TestKeyPasswordNeverPrinted runs clients that succeed over mTLS with every librdkafka
// debug context on, the password given in the properties file or with -X, and checks the
// password appears nowhere in stdout or stderr.
func TestKeyPasswordNeverPrinted(t *testing.T) {
	good := sslProps(t)
	password := good["ssl.key.password"]
	noPassword := clone(good)
	delete(noPassword, "ssl.key.password")
	configNoPassword := writeProps(t, t.TempDir(), "client.properties", noPassword)
	topic := "kstranded-integration-secrets-" + randomHex(t)

	steps := []struct {
		name string
		args []string
		want string // on stdout
	}{
		{"producer and admin client, password with -X", []string{"repro", "produce", "--brokers", env.SSLBrokers,
			"--config", configNoPassword, "-X", "ssl.key.password=" + password, "-X", "debug=all",
			"--topic", topic, "--partitions", "1", "--records", "10"}, "offsets 0-9, high watermark 11"},
		{"consumer, password in --config", []string{"repro", "consume", "--brokers", env.SSLBrokers,
			"--config", env.SSLConfig, "-X", "debug=all",
			"--topic", topic, "--group", topic, "--until-quiescent"}, "quiescent"},
		{"inspect, password in --config", []string{"inspect", "--brokers", env.SSLBrokers,
			"--config", env.SSLConfig, "-X", "debug=all", "--group", topic}, topic},
	}
	keep(topic)
	keepGroup(topic)
	for _, s := range steps {
		// In order: each step reads what the one before wrote.
		t.Run(s.name, func(t *testing.T) {
			r := kstranded(t, 2*time.Minute, append(s.args, "--timeout", "30s")...)
			if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, s.want) { // on a pipe the prose is on stderr
				t.Errorf("exit %d, want 0 and %q on stdout\n%s", r.Code, s.want, r)
			}
			if s.name != "inspect, password in --config" && !strings.Contains(r.Stderr, "ssl.key.password") {
				// librdkafka's configuration dump (debug=conf) names the property; its
				// absence would mean the check below looks at nothing.
				t.Errorf("stderr has no librdkafka configuration dump; was debug=all honoured?\n%s", r)
			}
			assertNoSecret(t, r, password)
		})
	}
}

// errorLine returns kstranded's own error line from stderr (librdkafka's log lines
// start with '%').
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "kstranded: ") {
			return l
		}
	}
	return ""
}

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func randomHex(t *testing.T) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// certFromAnotherCA makes a throwaway CA and a client certificate it signs, in dir, and
// returns the certificate and (unencrypted PKCS#8) key files.
func certFromAnotherCA(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kstranded integration: another CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kstranded-integration-client"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "other-ca-client.pem"), filepath.Join(dir, "other-ca-client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestJavaClientPropertiesFilesConnect: the files operators keep for Kafka's own tools
// (kafka-consumer-groups.sh --command-config), with PKCS#12 and with JKS key stores, work
// as --config for the librdkafka paths (repro produce, repro consume) and the franz-go
// path (inspect) against the mTLS listener; testenv/kafka writes them beside the
// librdkafka client.properties.
func TestJavaClientPropertiesFilesConnect(t *testing.T) {
	if env.SSLBrokers == "" {
		t.Skip(skipNoSSL)
	}
	dir := filepath.Dir(env.SSLConfig)
	for _, file := range []string{"client-java.properties", "client-java-jks.properties"} {
		t.Run(file, func(t *testing.T) {
			config := filepath.Join(dir, file)
			if _, err := os.Stat(config); err != nil {
				t.Fatalf("testenv/kafka did not write %s: %v", file, err)
			}
			topic := "kstranded-integration-java-" + randomHex(t)
			keep(topic)
			keepGroup(topic)
			steps := []struct {
				args []string
				want string
			}{
				{[]string{"repro", "produce", "--topic", topic, "--partitions", "1", "--records", "5"}, "offsets 0-4"},
				{[]string{"repro", "consume", "--topic", topic, "--group", topic, "--until-quiescent"}, "quiescent"},
				{[]string{"inspect", "--group", topic}, topic},
			}
			for _, s := range steps {
				r := kstranded(t, 2*time.Minute, append(s.args, "--brokers", env.SSLBrokers, "--config", config, "--timeout", "30s")...)
				if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, s.want) { // on a pipe the prose is on stderr
					t.Fatalf("%v: exit %d, want 0 and %q\n%s", s.args, r.Code, s.want, r)
				}
				if strings.Contains(r.Stderr, "not read by this command") {
					t.Fatalf("%v: the translated file still has keys the command ignores\n%s", s.args, r)
				}
			}
		})
	}
}
