package kafkaconf

import (
	"strings"
	"testing"
)

// FuzzReadProperties: any --config file either parses into keys without separators or
// surrounding space, or is rejected with an error naming the file and line; never a panic.
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
			if k == "" || k != strings.TrimSpace(k) || strings.ContainsAny(k, "=:\n") {
				t.Fatalf("bad key %q from %q", k, in)
			}
		}
	})
}

// FuzzParseProperty: -X values either give a non-empty key or a usage error.
func FuzzParseProperty(f *testing.F) {
	for _, s := range []string{"debug=all", "a=b=c", "=x", "", "  k  =  v  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		k, v, err := ParseProperty(in)
		if err != nil {
			return
		}
		if k == "" || k != strings.TrimSpace(k) || v != strings.TrimSpace(v) {
			t.Fatalf("ParseProperty(%q) = %q, %q", in, k, v)
		}
	})
}
