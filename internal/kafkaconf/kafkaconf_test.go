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
	var lines []string
	for k, v := range props {
		lines = append(lines, k+"="+Redact(k, v))
	}
	out := strings.Join(lines, "\n")
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

func TestCheckKeyNamesAWrongOrMissingPasswordWithoutEchoingIt(t *testing.T) {
	props := func(pw string) Config {
		p := map[string]string{"security.protocol": "SSL", "ssl.key.location": "testdata/client-pkcs8.key"}
		if pw != "" {
			p["ssl.key.password"] = pw
		}
		return Config{Props: p}
	}
	for _, tc := range []struct {
		name, password, want string
	}{
		{"a wrong password is named", "wrong-password", "wrong ssl.key.password"},
		{"a missing password is named", "", "ssl.key.password is not set"},
		{"the right password passes", "kstranded-test", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := props(tc.password).CheckKey()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckKey: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckKey: got %v, want an error containing %q", err, tc.want)
			case err != nil && tc.password != "" && strings.Contains(err.Error(), tc.password):
				t.Fatalf("CheckKey echoed the password: %v", err)
			}
		})
	}
	plaintext := Config{Props: map[string]string{"ssl.key.location": "testdata/client-pkcs8.key", "ssl.key.password": "wrong-password"}}
	if err := plaintext.CheckKey(); err != nil {
		t.Fatalf("without security.protocol=SSL librdkafka ignores ssl.*; got %v", err)
	}
}

func TestTLSHintExplainsHandshakeRejections(t *testing.T) {
	for _, msg := range []string{
		"ssl://127.0.0.1:1/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: SSL alert number 42",
		"remote error: tls: bad certificate",
	} {
		if h := TLSHint(msg); !strings.Contains(h, "client certificate") {
			t.Errorf("TLSHint(%q) = %q, want a hint about the client certificate", msg, h)
		}
	}
	if h := TLSHint("Local: Broker transport failure"); h != "" {
		t.Errorf("no TLS failure named, got %q", h)
	}
}

func TestExplainErrorRedactsAndHintsOnce(t *testing.T) {
	props := map[string]string{"ssl.key.password": "hunter22"}
	got := ExplainError(props, "fetching offsets: remote error: tls: bad certificate (key hunter22)")
	if strings.Contains(got, "hunter22") || !strings.Contains(got, "client certificate") {
		t.Fatalf("got %q, want the password redacted and the hint added", got)
	}
	if again := ExplainError(props, got); again != got {
		t.Fatalf("explained twice: %q", again)
	}
}

func TestReadPropertiesJoinsContinuedLinesAndNeverEchoesALine(t *testing.T) {
	in := "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n    username=\"u\" \\\n    password=\"hunter22\";\nsecurity.protocol=SASL_SSL\n"
	p, err := ReadProperties(strings.NewReader(in), "f")
	if err != nil {
		t.Fatal(err)
	}
	want := `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="hunter22";`
	if p["sasl.jaas.config"] != want || p["security.protocol"] != "SASL_SSL" {
		t.Fatalf("got %q", p)
	}
	_, err = ReadProperties(strings.NewReader("ok=1\nhunter22secret\n"), "f")
	if err == nil || !strings.Contains(err.Error(), "f:2") || strings.Contains(err.Error(), "hunter22") {
		t.Fatalf("want an error naming f:2 without the line's text, got %v", err)
	}
	if _, err := ReadProperties(strings.NewReader("a=b\\\n"), "f"); err == nil {
		t.Fatal("a dangling continuation must be an error")
	}
}

func TestAMalformedPropertyNeverPrintsItsValue(t *testing.T) {
	for _, tc := range []struct{ in, hint string }{
		{"sasl.password:S3CRET", "sasl.password:<value hidden>"},
		{"security.protocol:SSL", "security.protocol:..."},
		{"S3CRET", ""},
	} {
		_, _, err := ParseProperty(tc.in)
		if err == nil || strings.Contains(err.Error(), "S3CRET") || strings.Contains(err.Error(), ":SSL") {
			t.Fatalf("ParseProperty(%q) = %v", tc.in, err)
		}
		if tc.hint != "" && !strings.Contains(err.Error(), tc.hint) {
			t.Fatalf("ParseProperty(%q) = %v, want the hint %q", tc.in, err, tc.hint)
		}
	}
}
