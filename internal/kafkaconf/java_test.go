package kafkaconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func javaFixture(name string) string { return filepath.Join("testdata", "java", name) }

func loadProps(t *testing.T, text string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client-java.properties")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load("", []string{path}, nil)
}

// The client certificate and CA the fixtures were made from.
func fixtureCerts(t *testing.T) (ca, client *x509.Certificate) {
	t.Helper()
	read := func(name string) *x509.Certificate {
		b, _ := os.ReadFile(javaFixture(name))
		block, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return read("ca.pem"), read("client.pem")
}

func TestJavaKeyStoresBecomeLibrdkafkaPEMProperties(t *testing.T) {
	ca, client := fixtureCerts(t)
	for _, tc := range []struct{ name, props string }{
		{"JKS", "ssl.truststore.location=" + javaFixture("truststore.jks") + "\nssl.truststore.password=trustpass\n" +
			"ssl.keystore.location=" + javaFixture("keystore.jks") + "\nssl.keystore.password=storepass\nssl.key.password=keypass\n"},
		{"PKCS12 trust store, JKS key store", "ssl.truststore.type=PKCS12\nssl.truststore.location=" + javaFixture("truststore.p12") + "\nssl.truststore.password=trustpass\n" +
			"ssl.keystore.type=JKS\nssl.keystore.location=" + javaFixture("keystore.jks") + "\nssl.keystore.password=storepass\nssl.key.password=keypass\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadProps(t, "bootstrap.servers=kafka:9093\nsecurity.protocol=SSL\n"+tc.props)
			if err != nil {
				t.Fatal(err)
			}
			for _, java := range []string{"ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.key.password"} {
				if _, ok := c.Props[java]; ok {
					t.Errorf("%s left for librdkafka, which would reject it", java)
				}
			}
			block, _ := pem.Decode([]byte(c.Props["ssl.ca.pem"]))
			if block == nil || string(block.Bytes) != string(ca.Raw) {
				t.Fatalf("ssl.ca.pem is not the trust store's CA:\n%s", c.Props["ssl.ca.pem"])
			}
			tc, err := c.tlsConfig()
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.Certificates) != 1 || string(tc.Certificates[0].Certificate[0]) != string(client.Raw) {
				t.Fatal("the client certificate is not the key store's")
			}
			if _, err := tls.X509KeyPair([]byte(c.Props["ssl.certificate.pem"]), []byte(c.Props["ssl.key.pem"])); err != nil {
				t.Fatalf("certificate and key do not pair: %v", err)
			}
		})
	}
}

func TestAPKCS12KeyStoreIsLeftToLibrdkafkaAndReadByTheFranzGoPaths(t *testing.T) {
	_, client := fixtureCerts(t)
	c, err := loadProps(t, "security.protocol=SSL\nssl.truststore.type=PKCS12\nssl.truststore.location="+javaFixture("truststore.p12")+
		"\nssl.truststore.password=trustpass\nssl.keystore.type=PKCS12\nssl.keystore.location="+javaFixture("keystore.p12")+"\nssl.keystore.password=storepass\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Props["ssl.keystore.location"] != javaFixture("keystore.p12") || c.Props["ssl.keystore.password"] != "storepass" {
		t.Fatalf("librdkafka reads a PKCS#12 key store itself: %v", c.Props["ssl.keystore.location"])
	}
	if _, ok := c.Props["ssl.keystore.type"]; ok {
		t.Fatal("ssl.keystore.type is Java's")
	}
	tc, err := c.tlsConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(tc.Certificates) != 1 || string(tc.Certificates[0].Certificate[0]) != string(client.Raw) {
		t.Fatal("the franz-go paths do not present the key store's certificate")
	}
}

func TestJAASConfigGivesTheSASLCredentials(t *testing.T) {
	for _, tc := range []struct{ name, props, mech, user, pass string }{
		{"PLAIN", `sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="ops" password="p@ss \\"quoted\\"";`, "PLAIN", "ops", `p@ss "quoted"`}, // \\ is the file's escape of the JAAS one
		{"SCRAM over several lines", `sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="svc" \
    password="hunter22";`, "SCRAM-SHA-512", "svc", "hunter22"},
		{"PLAIN without a mechanism", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=pw;`, "PLAIN", "u", "pw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadProps(t, "security.protocol=SASL_SSL\n"+tc.props+"\n")
			if err != nil {
				t.Fatal(err)
			}
			if c.Props["sasl.mechanisms"] != tc.mech || c.Props["sasl.username"] != tc.user || c.Props["sasl.password"] != tc.pass {
				t.Fatalf("mechanisms %q user %q password %q", c.Props["sasl.mechanisms"], c.Props["sasl.username"], c.Props["sasl.password"])
			}
			if _, ok := c.Props["sasl.jaas.config"]; ok {
				t.Fatal("sasl.jaas.config left for librdkafka")
			}
			if _, ok := c.Props["sasl.mechanism"]; ok {
				t.Fatal("sasl.mechanism (Java's spelling) left")
			}
		})
	}
}

func TestJavaSettingsWithoutATranslationNameTheLibrdkafkaEquivalentAndNoSecret(t *testing.T) {
	for _, tc := range []struct{ name, props, says string }{
		{"OAuth", `sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="S3CRET";`, "sasl.oauthbearer.client.secret"},
		{"Kerberos", `sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required keyTab="/k" principal="p";`, "sasl.kerberos.keytab"},
		{"a wrong trust store password", "ssl.truststore.location=" + javaFixture("truststore.jks") + "\nssl.truststore.password=S3CRET", "check ssl.truststore.password"},
		{"a wrong key password", "ssl.keystore.location=" + javaFixture("keystore.jks") + "\nssl.keystore.password=storepass\nssl.key.password=S3CRET", "check ssl.key.password"},
		{"an unknown store type", "ssl.truststore.type=BCFKS\nssl.truststore.location=" + javaFixture("truststore.jks"), "set ssl.ca.location"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadProps(t, tc.props+"\n")
			if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "S3CRET") {
				t.Fatalf("err %v, want one naming %q without the secret", err, tc.says)
			}
		})
	}
}

func TestALibrdkafkaFileIsLeftAsItIs(t *testing.T) {
	in := "security.protocol=SSL\nssl.ca.location=/ca.pem\nsasl.mechanisms=PLAIN\n"
	c, err := loadProps(t, in)
	if err != nil || len(c.Props) != 3 || c.Props["ssl.ca.location"] != "/ca.pem" || c.Props["sasl.mechanisms"] != "PLAIN" {
		t.Fatalf("%v %v", err, c.Props)
	}
}
