// Package kafkaconf is the one place where kstranded builds Kafka client configuration.
//
// Users speak librdkafka property names everywhere (-X key=value, --config FILE), as
// they would for any librdkafka-based client; TLS and SASL reach every client this way.
// This package merges those properties with what a command needs, produces the
// confluent-kafka-go ConfigMap for librdkafka clients, translates the same properties
// into franz-go options for the clients that need the raw protocol (control records,
// admin requests), and redacts secrets whenever configuration is shown.
//
// It does not connect to anything.
package kafkaconf

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// Config is the user's connection configuration: bootstrap brokers and librdkafka properties.
type Config struct {
	// Brokers is the bootstrap list (--brokers). Empty means: use the embedded broker.
	Brokers string
	// Props are librdkafka properties from --config files and -X, in that order of precedence
	// (a later -X wins over the file).
	Props map[string]string
}

// ParseProperty parses one -X argument of the form key=value.
func ParseProperty(arg string) (key, value string, err error) {
	k, v, ok := strings.Cut(arg, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		// The argument is never echoed: a malformed -X 'sasl.password:S3CRET' holds a
		// secret in the very text that failed to parse. Its length and first '=' or ':'
		// position are enough to find it on the command line.
		return "", "", exitcode.Usagef("-X: an argument of %d characters is not key=value (a librdkafka property, e.g. -X security.protocol=SSL)%s", len(arg), colonHint(arg))
	}
	return k, strings.TrimSpace(v), nil
}

// colonHint says, without the value, that a key: value argument used ':' for '='.
func colonHint(arg string) string {
	k, _, ok := strings.Cut(arg, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t") {
		return ""
	}
	if IsSecret(k) {
		return "; it looks like " + k + ":<value hidden> with ':' where '=' belongs"
	}
	return "; it looks like " + k + ":... with ':' where '=' belongs"
}

// Load builds a Config from --brokers, --config files and -X arguments.
func Load(brokers string, files []string, xs []string) (Config, error) {
	c := Config{Brokers: strings.TrimSpace(brokers), Props: map[string]string{}}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return Config{}, fmt.Errorf("--config: %w", err)
		}
		p, err := ReadProperties(fh, f)
		fh.Close()
		if err != nil {
			return Config{}, fmt.Errorf("--config: %w", err)
		}
		for k, v := range p {
			c.Props[k] = v
		}
	}
	for _, x := range xs {
		k, v, err := ParseProperty(x)
		if err != nil {
			return Config{}, err
		}
		c.Props[k] = v
	}
	if err := translateJava(c.Props); err != nil {
		if errors.Is(err, exitcode.ErrUsage) {
			return Config{}, err
		}
		return Config{}, fmt.Errorf("%w: %v", exitcode.ErrUsage, err)
	}
	if c.Brokers == "" {
		if b, ok := c.Props["bootstrap.servers"]; ok {
			c.Brokers = b
		}
	}
	return c, nil
}

// WithBrokers returns a copy pointing at other brokers (the embedded one).
func (c Config) WithBrokers(b string) Config {
	n := Config{Brokers: b, Props: map[string]string{}}
	for k, v := range c.Props {
		n.Props[k] = v
	}
	return n
}

// Merged returns the properties for one client: defaults, then the user's properties,
// then the settings the command owns (which define the scenario and win).
func (c Config) Merged(defaults, owned map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range defaults {
		m[k] = v
	}
	for k, v := range c.Props {
		m[k] = v
	}
	for k, v := range owned {
		m[k] = v
	}
	if c.Brokers != "" {
		m["bootstrap.servers"] = c.Brokers
	}
	return m
}

// secretMarkers are substrings of property names whose values are never shown.
var secretMarkers = []string{"password", "secret", "jaas", "ssl.key.pem", "keystore", "token", "credential", "sasl.oauthbearer.config"}

// IsSecret reports whether a property's value must never be printed.
func IsSecret(key string) bool {
	k := strings.ToLower(key)
	for _, m := range secretMarkers {
		if strings.Contains(k, m) {
			return true
		}
	}
	return false
}

// Redact returns value, or a placeholder when key names a secret. With an empty key it
// redacts a whole "key=value" text if the key part is secret.
func Redact(key, value string) string {
	if key == "" {
		if k, _, ok := strings.Cut(value, "="); ok && IsSecret(k) {
			return k + "=[redacted]"
		}
		return value
	}
	if IsSecret(key) {
		return "[redacted]"
	}
	return value
}

// RedactText removes every secret value of props from a free text (an error message,
// a librdkafka log line), so no secret leaks through a message we did not write.
func RedactText(props map[string]string, s string) string {
	for k, v := range props {
		if v != "" && IsSecret(k) {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}
