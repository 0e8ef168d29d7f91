package kafkaconf

import (
	"errors"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

func TestParsePropertyRejectsMissingEquals(t *testing.T) {
	for _, bad := range []string{"debug", "=x", ""} {
		_, _, err := ParseProperty(bad)
		if !errors.Is(err, exitcode.ErrUsage) {
			t.Errorf("ParseProperty(%q) err = %v, want usage error", bad, err)
		}
		if err != nil && !strings.Contains(err.Error(), "-X") {
			t.Errorf("error %q does not name the flag", err)
		}
	}
	k, v, err := ParseProperty("sasl.password=a=b")
	if err != nil || k != "sasl.password" || v != "a=b" {
		t.Fatalf("got %q %q %v", k, v, err)
	}
}

func TestReadPropertiesHandlesCommentsAndColons(t *testing.T) {
	in := "# c\n! c\n\nsecurity.protocol=SSL\nssl.key.password : hunter22\nbootstrap.servers=h:9093\n"
	p, err := ReadProperties(strings.NewReader(in), "f")
	if err != nil {
		t.Fatal(err)
	}
	if p["security.protocol"] != "SSL" || p["ssl.key.password"] != "hunter22" || p["bootstrap.servers"] != "h:9093" {
		t.Fatalf("got %v", p)
	}
	if _, err := ReadProperties(strings.NewReader("novalue\n"), "f"); err == nil || !strings.Contains(err.Error(), "f:1") {
		t.Fatalf("want an error naming file and line, got %v", err)
	}
}

func TestSecretsAreNeverDescribed(t *testing.T) {
	props := map[string]string{"ssl.key.password": "hunter22", "sasl.password": "pw123", "sasl.username": "bob", "ssl.keystore.password": "ks-secret"}
	out := strings.Join(Describe(props), "\n")
	for _, s := range []string{"hunter22", "pw123", "ks-secret"} {
		if strings.Contains(out, s) {
			t.Fatalf("secret %q shown in %q", s, out)
		}
	}
	if !strings.Contains(out, "sasl.username=bob") {
		t.Fatalf("non-secret missing: %q", out)
	}
	if got := RedactText(props, "failed to load key with password hunter22"); strings.Contains(got, "hunter22") {
		t.Fatalf("RedactText leaked: %q", got)
	}
}

func TestMergedOwnedSettingsWinAndBrokersOverride(t *testing.T) {
	c := Config{Brokers: "b:1", Props: map[string]string{"debug": "cgrp", "enable.auto.commit": "false", "bootstrap.servers": "x:2"}}
	m := c.Merged(map[string]string{"debug": "", "client.id": "k"}, map[string]string{"enable.auto.commit": "true"})
	if m["debug"] != "cgrp" || m["client.id"] != "k" || m["enable.auto.commit"] != "true" || m["bootstrap.servers"] != "b:1" {
		t.Fatalf("got %v", m)
	}
}

func TestTLSConfigDecryptsOpenSSLPKCS8Key(t *testing.T) {
	base := map[string]string{
		"security.protocol":        "SSL",
		"ssl.ca.location":          "testdata/client.pem",
		"ssl.certificate.location": "testdata/client.pem",
		"ssl.key.location":         "testdata/client-pkcs8.key",
	}
	c := Config{Brokers: "127.0.0.1:1", Props: base}
	if _, err := c.KgoOpts(); err == nil || !strings.Contains(err.Error(), "ssl.key.password") {
		t.Fatalf("missing password: got %v", err)
	}
	base["ssl.key.password"] = "wrong-password"
	if _, err := c.KgoOpts(); err == nil || strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("wrong password: got %v (must fail and must not echo the password)", err)
	}
	base["ssl.key.password"] = "kstranded-test"
	if _, err := c.KgoOpts(); err != nil {
		t.Fatalf("right password: %v", err)
	}
}
