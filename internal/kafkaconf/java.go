package kafkaconf

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// Operators keep Java client properties files for kafka-consumer-groups.sh
// --command-config. Their connection keys differ from librdkafka's: credentials live in
// sasl.jaas.config, and certificates in JKS or PKCS#12 key stores that librdkafka cannot
// read as trust stores. translateJava rewrites those keys into librdkafka's, in memory
// (ssl.ca.pem, ssl.certificate.pem, ssl.key.pem: no decrypted key is written to disk),
// so one file serves both tools. A Java setting with no librdkafka equivalent is an error
// that names the librdkafka properties to use instead; it is never dropped silently.
//
// Java client reference: the Kafka 4.x client configs (sasl.jaas.config,
// ssl.truststore.*, ssl.keystore.*); librdkafka's CONFIGURATION.md for the targets.

// javaOnly are the keys that mark a Java properties file.
var javaOnly = []string{"sasl.jaas.config", "ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password",
	"ssl.keystore.type", "ssl.truststore.certificates", "ssl.keystore.certificate.chain", "ssl.keystore.key"}

// jaasLogin matches `<LoginModule class> required key="value" ...;`.
var (
	jaasModule = regexp.MustCompile(`^\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b`)
	jaasOption = regexp.MustCompile(`(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))`)
)

// isJava reports whether props carry Java client keys that need translating.
func isJava(props map[string]string) bool {
	for _, k := range javaOnly {
		if _, ok := props[k]; ok {
			return true
		}
	}
	// a keystore that librdkafka cannot read itself (it reads PKCS#12 only)
	if _, ok := props["ssl.keystore.location"]; ok && !strings.EqualFold(props["ssl.keystore.type"], "PKCS12") {
		return true
	}
	return false
}

// translateJava rewrites the Java-only keys of props in place.
func translateJava(props map[string]string) error {
	if !isJava(props) {
		return nil
	}
	if err := translateJAAS(props); err != nil {
		return err
	}
	if err := translateTrustStore(props); err != nil {
		return err
	}
	if err := translateKeyStore(props); err != nil {
		return err
	}
	if v, ok := props["sasl.mechanism"]; ok {
		// Java spells it sasl.mechanism; librdkafka's name is sasl.mechanisms
		if _, set := props["sasl.mechanisms"]; !set {
			props["sasl.mechanisms"] = v
		}
		delete(props, "sasl.mechanism")
	}
	if v, ok := props["ssl.endpoint.identification.algorithm"]; ok && strings.TrimSpace(v) == "" {
		// Java: empty disables host name verification; librdkafka says none
		props["ssl.endpoint.identification.algorithm"] = "none"
	}
	return nil
}

func translateJAAS(props map[string]string) error {
	jaas, ok := props["sasl.jaas.config"]
	if !ok {
		return nil
	}
	delete(props, "sasl.jaas.config")
	m := jaasModule.FindStringSubmatch(jaas)
	if m == nil {
		return errors.New("sasl.jaas.config: want `<LoginModule> required key=\"value\" ...;` (the value is not shown)")
	}
	module := m[1]
	opts := map[string]string{}
	for _, o := range jaasOption.FindAllStringSubmatch(jaas[len(m[0]):], -1) {
		v := o[3]
		if o[2] != "" || o[3] == "" {
			v = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(o[2])
		}
		opts[o[1]] = v
	}
	switch {
	case strings.HasSuffix(module, ".PlainLoginModule"), strings.HasSuffix(module, ".ScramLoginModule"):
		if opts["username"] == "" {
			return fmt.Errorf("sasl.jaas.config: %s without username", module)
		}
		for jk, lk := range map[string]string{"username": "sasl.username", "password": "sasl.password"} {
			if _, set := props[lk]; !set {
				props[lk] = opts[jk]
			}
		}
		if _, set := props["sasl.mechanism"]; !set {
			if _, set := props["sasl.mechanisms"]; !set && strings.HasSuffix(module, ".PlainLoginModule") {
				props["sasl.mechanisms"] = "PLAIN"
			}
		}
		return nil
	case strings.HasSuffix(module, ".OAuthBearerLoginModule"):
		return errors.New("sasl.jaas.config: OAuthBearerLoginModule has no translation; set librdkafka's sasl.oauthbearer.method, sasl.oauthbearer.client.id, sasl.oauthbearer.client.secret and sasl.oauthbearer.token.endpoint.url instead")
	case strings.HasSuffix(module, ".Krb5LoginModule"):
		return errors.New("sasl.jaas.config: Krb5LoginModule has no translation; set librdkafka's sasl.kerberos.service.name, sasl.kerberos.principal and sasl.kerberos.keytab instead")
	}
	return fmt.Errorf("sasl.jaas.config: login module %s has no librdkafka equivalent kstranded knows (PLAIN and SCRAM are translated)", module)
}

func storeType(props map[string]string, key string) string {
	t := strings.ToUpper(strings.TrimSpace(props[key]))
	if t == "" {
		return "JKS" // the Java client's default
	}
	return t
}

func translateTrustStore(props map[string]string) error {
	loc, ok := props["ssl.truststore.location"]
	typ := storeType(props, "ssl.truststore.type")
	pass := props["ssl.truststore.password"]
	for _, k := range []string{"ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password"} {
		delete(props, k)
	}
	if pemText, inline := props["ssl.truststore.certificates"]; inline {
		delete(props, "ssl.truststore.certificates")
		props["ssl.ca.pem"] = pemText
		return nil
	}
	if !ok {
		return nil
	}
	if _, set := props["ssl.ca.location"]; set {
		return errors.New("ssl.truststore.location and ssl.ca.location both name the trusted certificates; give one")
	}
	if typ == "PEM" {
		props["ssl.ca.location"] = loc
		return nil
	}
	data, err := readStore("ssl.truststore.location", loc)
	if err != nil {
		return err
	}
	var certs []*x509.Certificate
	switch typ {
	case "PKCS12":
		certs, err = pkcs12.DecodeTrustStore(data, pass)
		if err != nil {
			return fmt.Errorf("ssl.truststore.location %s (PKCS12): %v; check ssl.truststore.password, or convert it to PEM and set ssl.ca.location", loc, err)
		}
	case "JKS":
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(pass)); err != nil {
			return fmt.Errorf("ssl.truststore.location %s (JKS): %v; check ssl.truststore.password, or convert it to PEM and set ssl.ca.location", loc, err)
		}
		for _, alias := range ks.Aliases() {
			if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
				c, err := x509.ParseCertificate(e.Certificate.Content)
				if err != nil {
					return fmt.Errorf("ssl.truststore.location %s: certificate %q: %v", loc, alias, err)
				}
				certs = append(certs, c)
			}
		}
	default:
		return fmt.Errorf("ssl.truststore.type %s is not supported (JKS, PKCS12 or PEM); convert it to PEM and set ssl.ca.location", typ)
	}
	if len(certs) == 0 {
		return fmt.Errorf("ssl.truststore.location %s holds no trusted certificate", loc)
	}
	var b strings.Builder
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	props["ssl.ca.pem"] = b.String()
	return nil
}

// MaxStoreFile bounds every key, certificate and store file kstranded reads itself (JKS
// and PKCS#12 stores, PEM CA, certificate and key files): a store of a few certificates
// is kilobytes; a bigger file is the wrong one, and is not read into memory whole.
const MaxStoreFile = 10 << 20

// readStore reads the file named by key (its location loc), at most MaxStoreFile bytes;
// a bigger one is a usage error (the setting names the wrong file).
func readStore(key, loc string) ([]byte, error) {
	f, err := os.Open(loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxStoreFile {
		return nil, exitcode.Usagef("%s %s: %d bytes, over the %d MiB a key, certificate or store file may hold: is it the right file?", key, loc, fi.Size(), MaxStoreFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxStoreFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(data) > MaxStoreFile {
		return nil, exitcode.Usagef("%s %s: over the %d MiB a key, certificate or store file may hold: is it the right file?", key, loc, MaxStoreFile>>20)
	}
	return data, nil
}

func translateKeyStore(props map[string]string) error {
	loc, ok := props["ssl.keystore.location"]
	typ := storeType(props, "ssl.keystore.type")
	pass := props["ssl.keystore.password"]
	keyPass, hasKeyPass := props["ssl.key.password"]
	if !hasKeyPass {
		keyPass = pass // Java: the key's password defaults to the store's
	}
	if chain, inline := props["ssl.keystore.certificate.chain"]; inline {
		props["ssl.certificate.pem"] = chain
		delete(props, "ssl.keystore.certificate.chain")
	}
	if key, inline := props["ssl.keystore.key"]; inline {
		props["ssl.key.pem"] = key
		delete(props, "ssl.keystore.key")
	}
	if !ok {
		delete(props, "ssl.keystore.type")
		return nil
	}
	if typ == "PKCS12" {
		// librdkafka reads a PKCS#12 keystore itself (ssl.keystore.location and
		// ssl.keystore.password); only the type key is Java's
		delete(props, "ssl.keystore.type")
		return nil
	}
	for _, k := range []string{"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password"} {
		delete(props, k)
	}
	if typ != "JKS" {
		return fmt.Errorf("ssl.keystore.type %s is not supported (JKS or PKCS12); convert it to PEM and set ssl.certificate.location and ssl.key.location", typ)
	}
	data, err := readStore("ssl.keystore.location", loc)
	if err != nil {
		return err
	}
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(pass)); err != nil {
		return fmt.Errorf("ssl.keystore.location %s (JKS): %v; check ssl.keystore.password", loc, err)
	}
	var found []string
	for _, alias := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(alias) {
			found = append(found, alias)
		}
	}
	if len(found) != 1 {
		return fmt.Errorf("ssl.keystore.location %s holds %d private keys; want exactly one (the client's)", loc, len(found))
	}
	e, err := ks.GetPrivateKeyEntry(found[0], []byte(keyPass))
	if err != nil {
		return fmt.Errorf("ssl.keystore.location %s: key %q: %v; check ssl.key.password", loc, found[0], err)
	}
	var chain strings.Builder
	for _, c := range e.CertificateChain {
		_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: c.Content})
	}
	props["ssl.certificate.pem"] = chain.String()
	// e.PrivateKey is PKCS#8 DER, as keytool stores it
	props["ssl.key.pem"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: e.PrivateKey}))
	return nil
}
