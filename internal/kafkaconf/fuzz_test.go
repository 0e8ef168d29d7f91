package kafkaconf

import (
	"strings"
	"testing"
)

// FuzzReadProperties: any --config file either parses into non-empty keys (escapes may
// put any character in one), or is rejected with an error naming the file and line; never a panic.
func FuzzReadProperties(f *testing.F) {
	f.Add("security.protocol=SSL\nssl.key.password : x\n# c\n! c\n\n")
	f.Add("bootstrap.servers=h1:9092,h2:9092\nsasl.jaas.config=a=b;c\n")
	f.Add("novalue\n")
	f.Add("=x\n")
	f.Add(strings.Repeat("k", 70000) + "=v\n")
	f.Fuzz(func(t *testing.T, in string) {
		props, err := ReadProperties(strings.NewReader(in), "f.properties")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.properties") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for k := range props {
			if k == "" {
				t.Fatalf("bad key %q from %q", k, in)
			}
		}
	})
}

// FuzzParseProperty: -X values either give a non-empty key or a usage error, and a
// usage error never contains what followed the key (it may be a secret).
func FuzzParseProperty(f *testing.F) {
	for _, s := range []string{"debug=all", "a=b=c", "=x", "", "  k  =  v  ", "sasl.password:S3CRET", "S3CRETVALUE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		k, v, err := ParseProperty(in)
		if err != nil {
			// what is left of the message without its fixed words and the key it names
			msg := err.Error()
			for _, fixed := range []string{"usage error: -X: an argument of", "characters is not key=value (a librdkafka property, e.g. -X security.protocol=SSL)", "it looks like", "with ':' where '=' belongs", "<value hidden>"} {
				msg = strings.ReplaceAll(msg, fixed, " ")
			}
			key, rest, _ := strings.Cut(in, ":")
			if k := strings.TrimSpace(key); k != "" {
				msg = strings.ReplaceAll(msg, k, " ")
			}
			if r := strings.TrimSpace(rest); len(r) >= 4 && strings.Contains(msg, r) {
				t.Fatalf("ParseProperty(%q) echoes the value: %v", in, err)
			}
			return
		}
		if k == "" || k != strings.TrimSpace(k) || v != strings.TrimSpace(v) {
			t.Fatalf("ParseProperty(%q) = %q, %q", in, k, v)
		}
	})
}
