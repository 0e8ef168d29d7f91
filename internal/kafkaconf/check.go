package kafkaconf

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// errKeyPassword is what a key that does not decrypt with ssl.key.password gives.
var errKeyPassword = errors.New("cannot decrypt key: wrong ssl.key.password?")

// CheckKey reads the client key named by ssl.key.location (with security.protocol SSL
// or SASL_SSL) and reports, before a librdkafka client is created, the mistakes
// librdkafka only reports as "ssl.key.location failed: ... PEM lib" plus OpenSSL lines
// on stderr: an unreadable file, an encrypted key without ssl.key.password, a wrong
// ssl.key.password. A key it cannot judge (a cipher or format the Go side does not
// decrypt) passes: librdkafka has the last word. The error never contains the password.
func (c Config) CheckKey() error {
	switch strings.ToUpper(c.Props["security.protocol"]) {
	case "SSL", "SASL_SSL":
	default:
		return nil // librdkafka does not load ssl.* for other protocols
	}
	file := c.Props["ssl.key.location"]
	if file == "" {
		return nil
	}
	keyPEM, err := readStore("ssl.key.location", file)
	if err != nil {
		return err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil || (block.Type != "ENCRYPTED PRIVATE KEY" && !x509.IsEncryptedPEMBlock(block)) { //nolint:staticcheck // legacy keys exist
		return nil
	}
	plain, err := decryptKey(keyPEM, c.Props["ssl.key.password"])
	if err == nil && !wellFormed(plain) {
		// A wrong password gives valid CBC padding about once in 256 tries; the
		// plaintext is then not DER.
		err = errKeyPassword
	}
	if err != nil && (errors.Is(err, errKeyPassword) || c.Props["ssl.key.password"] == "") {
		return fmt.Errorf("ssl.key.location %s: %w", file, err)
	}
	return nil
}

// wellFormed reports whether a decrypted PEM key holds exactly one DER value.
func wellFormed(keyPEM []byte) bool {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return false
	}
	var v asn1.RawValue
	rest, err := asn1.Unmarshal(block.Bytes, &v)
	return err == nil && len(rest) == 0
}

// tlsHints map what TLS libraries say when a handshake fails to what the user should
// check. librdkafka (OpenSSL) and franz-go (crypto/tls) word the same alert differently.
var tlsHints = []struct {
	says []string
	hint string
}{
	{
		// The broker (ssl.client.auth=required) sends alert 42 bad_certificate when the
		// client sent no certificate or one it does not trust; TLS 1.3 brokers may send
		// alert 116 certificate_required for the former, 48 unknown_ca for the latter.
		says: []string{"alert bad certificate", "tls: bad certificate", "certificate required", "alert unknown ca", "tls: unknown certificate authority"},
		hint: "the broker rejected the TLS handshake: it requires a client certificate signed by a CA it trusts (check ssl.certificate.location and ssl.key.location)",
	},
	{
		says: []string{"certificate verify failed", "certificate signed by unknown authority", "x509: certificate"},
		hint: "the broker's certificate is not trusted (check ssl.ca.location and the broker's host name)",
	},
}

// TLSHint returns an explanation of a TLS handshake failure named in msg (a client
// error or a librdkafka log line), or "" when msg names none.
func TLSHint(msg string) string {
	m := strings.ToLower(msg)
	for _, h := range tlsHints {
		for _, s := range h.says {
			if strings.Contains(m, s) {
				return h.hint
			}
		}
	}
	return ""
}

// ExplainError prepares an error message for the user: every secret of props is
// redacted (RedactText) and a TLS handshake failure it names is explained (TLSHint),
// unless the message already carries the explanation. It is meant for the one place
// where kstranded prints errors, so clients that do not explain TLS failures themselves
// (franz-go's "remote error: tls: bad certificate") get the same hint.
func ExplainError(props map[string]string, msg string) string {
	msg = RedactText(props, msg)
	if h := TLSHint(msg); h != "" && !strings.Contains(msg, h) {
		msg += " (" + h + ")"
	}
	return msg
}

// ExplainClosed rewrites franz-go's error for a connection the broker closed right after
// a request (kgo.ErrFirstReadEOF) when the evidence contradicts its guess. franz-go says
// "is SASL missing?" (or TLS) whenever a connection is closed before its first answer
// and no SASL is configured (kgo/broker.go, handleResp); but a new connection to a
// broker that already answered answered times in this run is closed that way when the
// broker stops or restarts, and SASL or TLS cannot be what is missing. With answered 0
// the guess stands: nothing contradicts it.
func ExplainClosed(err error, answered int64) error {
	var eof *kgo.ErrFirstReadEOF
	if err == nil || answered == 0 || !errors.As(err, &eof) {
		return err
	}
	return closedErr{err: err, eof: eof, answered: answered}
}

type closedErr struct {
	err      error // the whole chain, for errors.Is
	eof      *kgo.ErrFirstReadEOF
	answered int64
}

func (c closedErr) Error() string {
	// the chain's text up to franz-go's guess, which is replaced
	msg := c.err.Error()
	prefix := strings.TrimSuffix(msg, c.eof.Error())
	return fmt.Sprintf("%sthe broker closed a new connection right after the request (%v), after answering %d requests earlier in this run: it stopped, restarted or dropped the connection (not missing SASL or TLS, which those answers rule out)", prefix, errors.Unwrap(c.eof), c.answered)
}

func (c closedErr) Unwrap() error { return c.err }
