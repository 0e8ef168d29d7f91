package kafkaconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"software.sslmate.com/src/go-pkcs12"
)

// KgoOpts translates the connection part of the librdkafka properties (bootstrap
// servers, security.protocol, ssl.*, sasl.*) into franz-go options, for the code paths
// that need franz-go (reading control records, raw admin requests). Properties that have
// no meaning for these paths (librdkafka tuning) are ignored; security settings that
// cannot be honoured are errors, never silently dropped.
func (c Config) KgoOpts() ([]kgo.Opt, error) {
	if c.Brokers == "" {
		return nil, errors.New("no brokers configured")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(c.Brokers, ",")...)}
	proto := strings.ToUpper(c.Props["security.protocol"])
	switch proto {
	case "", "PLAINTEXT":
	case "SSL", "SASL_SSL":
		tc, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	case "SASL_PLAINTEXT":
	default:
		return nil, fmt.Errorf("security.protocol=%s is not supported", c.Props["security.protocol"])
	}
	if strings.HasPrefix(proto, "SASL") {
		mech := strings.ToUpper(c.Props["sasl.mechanisms"])
		if mech == "" {
			mech = strings.ToUpper(c.Props["sasl.mechanism"])
		}
		user, pass := c.Props["sasl.username"], c.Props["sasl.password"]
		switch mech {
		case "", "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		default:
			return nil, fmt.Errorf("sasl.mechanisms=%s is not supported for this command", mech)
		}
	}
	return opts, nil
}

func (c Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := c.Props["ssl.ca.location"]; ca != "" {
		pemBytes, err := readStore("ssl.ca.location", ca)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("ssl.ca.location %s: no PEM certificates found", ca)
		}
		tc.RootCAs = pool
	} else if ca := c.Props["ssl.ca.pem"]; ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, errors.New("ssl.ca.pem: no PEM certificates found")
		}
		tc.RootCAs = pool
	}
	if strings.EqualFold(c.Props["enable.ssl.certificate.verification"], "false") {
		tc.InsecureSkipVerify = true
	}
	certFile, keyFile := c.Props["ssl.certificate.location"], c.Props["ssl.key.location"]
	if certPEM, keyPEM := c.Props["ssl.certificate.pem"], c.Props["ssl.key.pem"]; certFile == "" && keyFile == "" && (certPEM != "" || keyPEM != "") {
		if certPEM == "" || keyPEM == "" {
			return nil, errors.New("ssl.certificate.pem and ssl.key.pem must be set together")
		}
		key, err := decryptKey([]byte(keyPEM), c.Props["ssl.key.password"])
		if err != nil {
			return nil, fmt.Errorf("ssl.key.pem: %w", err)
		}
		cert, err := tls.X509KeyPair([]byte(certPEM), key)
		if err != nil {
			return nil, fmt.Errorf("ssl.certificate.pem / ssl.key.pem: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
		return tc, nil
	}
	if ks := c.Props["ssl.keystore.location"]; certFile == "" && keyFile == "" && ks != "" {
		// a PKCS#12 keystore, which librdkafka reads itself; the franz-go paths decode it
		data, err := readStore("ssl.keystore.location", ks)
		if err != nil {
			return nil, err
		}
		key, leaf, chain, err := pkcs12.DecodeChain(data, c.Props["ssl.keystore.password"])
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location %s (PKCS12): %v; check ssl.keystore.password", ks, err)
		}
		cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
		for _, c := range chain {
			cert.Certificate = append(cert.Certificate, c.Raw)
		}
		tc.Certificates = []tls.Certificate{cert}
		return tc, nil
	}
	if certFile == "" && keyFile == "" {
		return tc, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("ssl.certificate.location and ssl.key.location must be set together")
	}
	certPEM, err := readStore("ssl.certificate.location", certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := readStore("ssl.key.location", keyFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err = decryptKey(keyPEM, c.Props["ssl.key.password"])
	if err != nil {
		return nil, fmt.Errorf("ssl.key.location %s: %w", keyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate %s / key %s: %w", certFile, keyFile, err)
	}
	tc.Certificates = []tls.Certificate{cert}
	return tc, nil
}

// decryptKey returns an unencrypted PEM key. Legacy PEM encryption ("Proc-Type:
// 4,ENCRYPTED") and PKCS#8 "ENCRYPTED PRIVATE KEY" (PBES2) are supported.
func decryptKey(keyPEM []byte, password string) ([]byte, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	switch {
	case block.Type == "ENCRYPTED PRIVATE KEY":
		if password == "" {
			return nil, errors.New("key is encrypted and ssl.key.password is not set")
		}
		der, err := decryptPKCS8(block.Bytes, []byte(password))
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	case x509.IsEncryptedPEMBlock(block): //nolint:staticcheck // legacy keys still exist in the field
		if password == "" {
			return nil, errors.New("key is encrypted and ssl.key.password is not set")
		}
		der, err := x509.DecryptPEMBlock(block, []byte(password)) //nolint:staticcheck
		if err != nil {
			return nil, errKeyPassword
		}
		return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
	}
	return keyPEM, nil
}

// kgoKeys are the properties KgoOpts reads; bootstrap.servers is read by Load.
var kgoKeys = map[string]bool{
	"bootstrap.servers": true, "security.protocol": true,
	"sasl.mechanism": true, "sasl.mechanisms": true, "sasl.username": true, "sasl.password": true,
	"ssl.ca.location": true, "ssl.certificate.location": true, "ssl.key.location": true, "ssl.key.password": true,
	"enable.ssl.certificate.verification": true,
	"ssl.ca.pem":                          true, "ssl.certificate.pem": true, "ssl.key.pem": true,
	"ssl.keystore.location": true, "ssl.keystore.password": true,
}

// IgnoredByKgo lists, sorted, the properties the franz-go paths (inspect, rewind) do not
// read: librdkafka tuning that has no meaning there, or a misspelt key (a typo such as
// securty.protocol would otherwise silently connect in plaintext). Commands warn with it.
func (c Config) IgnoredByKgo() []string {
	var out []string
	for k := range c.Props {
		if !kgoKeys[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
