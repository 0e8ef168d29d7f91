package kafkaconf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// ReadProperties follows java.util.Properties.load (issue 27, item 12): each row is a
// file and the properties Java reads from it.
func TestReadPropertiesFollowsJavaUtilProperties(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
	}{
		{"key=value", "a=b\n", map[string]string{"a": "b"}},
		{"key: value", "a: b\n", map[string]string{"a": "b"}},
		{"key value (white space separates)", "ssl.truststore.password trustpass\n", map[string]string{"ssl.truststore.password": "trustpass"}},
		{"tab and form feed separate", "a\tb\nc\fd\n", map[string]string{"a": "b", "c": "d"}},
		{"white space around the separator", "a  =  b\nc :d\n", map[string]string{"a": "b", "c": "d"}},
		{"only the first separator counts", "a==b\nc=d:e=f\ng : = h\n", map[string]string{"a": "=b", "c": "d:e=f", "g": "= h"}},
		{"a key with an empty value", "a=\nb:\nc =\n", map[string]string{"a": "", "b": "", "c": ""}},
		{"leading white space is skipped", "   \t a=b\n", map[string]string{"a": "b"}},
		{"# and ! comments", "# x=y\n  ! z=w\na=b # not a comment\n", map[string]string{"a": "b # not a comment"}},
		{"a comment ending in a backslash is not continued", "# c \\\na=b\n", map[string]string{"a": "b"}},
		{"\\uXXXX escapes", `ssl.truststore.password=tr\u0075stpass` + "\n", map[string]string{"ssl.truststore.password": "trustpass"}},
		{"upper-case hex digits and non-ASCII", `a=\u00E9t\u00e9` + "\n", map[string]string{"a": "été"}},
		{"a surrogate pair", `a=\ud83d\ude00` + "\n", map[string]string{"a": "😀"}},
		{"\\t \\n \\r \\f", `a=x\ty\nz\r\f` + "\n", map[string]string{"a": "x\ty\nz\r\f"}},
		{"a backslash before another character is that character", `a=\q\\\#\!` + "\n", map[string]string{"a": `q\#!`}},
		{"escaped terminators in a key", `my\=key\:with\ space=v` + "\n", map[string]string{"my=key:with space": "v"}},
		{"an escaped separator in a value", `a=b\=c` + "\n", map[string]string{"a": "b=c"}},
		{"continued lines skip the next line's leading white space", "a=one, \\\n     two, \\\n\tthree\n", map[string]string{"a": "one, two, three"}},
		{"an even number of backslashes does not continue", "a=b\\\\\nc=d\n", map[string]string{"a": `b\`, "c": "d"}},
		{"a continued line may start with #", "a=b\\\n  #c\n", map[string]string{"a": "b#c"}},
		{"a continuation ending on a blank line ends there", "a=b\\\n\nc=d\n", map[string]string{"a": "b", "c": "d"}},
		{"CR and CRLF end lines", "a=b\r\nc=d\re=f", map[string]string{"a": "b", "c": "d", "e": "f"}},
		{"trailing white space of a value is kept, as Java keeps it", "a=b  \n", map[string]string{"a": "b  "}},
		{"the last of a key wins", "a=1\na=2\n", map[string]string{"a": "2"}},
		{"a UTF-8 byte-order mark is skipped", "\uFEFFa=b\n", map[string]string{"a": "b"}},
		{"blank lines and no final newline", "\n\n  \na=b", map[string]string{"a": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadProperties(strings.NewReader(tc.in), "f")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// What Java would take but kstranded refuses, and malformed escapes: errors name the
// file and line, never the text.
func TestReadPropertiesRefusesAndNamesTheLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a lone word (a pasted secret?)", "a=b\nhunter22secret\n", "f:2: want key=value"},
		{"an empty key", "=hunter22\n", "f:1: a property without a key"},
		{"a malformed \\u escape", "a=1\nssl.key.password=hunter\\u22x2\n", `f:2: value of ssl.key.password: malformed \uXXXX`},
		{"a \\u escape cut short", "a=\\u12", `f:1: value of a: malformed \uXXXX`},
		{"a dangling continuation", "x=1\na=hunter22\\\n", "f:2: the last line ends in a continuation backslash"},
		{"a file too big to be one", "a=" + strings.Repeat("x", MaxPropertiesFile) + "\n", "f: over 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadProperties(strings.NewReader(tc.in), "f")
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter22") {
				t.Fatalf("err %v, want one saying %q without the line's text", err, tc.want)
			}
		})
	}
}

// A "key store" bigger than MaxStoreFile is refused before it is read (a 1 GB file was
// read whole): a usage error naming the setting and the limit.
func TestAKeyOrTrustStoreOverTheLimitIsNotRead(t *testing.T) {
	big := filepath.Join(t.TempDir(), "huge.jks")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxStoreFile + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for _, key := range []string{"ssl.truststore.location", "ssl.keystore.location"} {
		_, err := loadProps(t, key+"="+big+"\n")
		if !errors.Is(err, exitcode.ErrUsage) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "10 MiB") {
			t.Errorf("%s: err %v, want a usage error naming it and the 10 MiB limit", key, err)
		}
	}
	// the franz-go paths read PKCS#12 key stores and PEM files themselves: bounded too
	for _, key := range []string{"ssl.keystore.location", "ssl.ca.location"} {
		c := Config{Props: map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PKCS12", key: big}}
		if _, err := c.tlsConfig(); !errors.Is(err, exitcode.ErrUsage) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "10 MiB") {
			t.Errorf("franz-go %s: err %v", key, err)
		}
	}
	// the same through a \u escape and a key value separator: the fixture's password
	c, err := loadProps(t, "ssl.truststore.location "+javaFixture("truststore.jks")+"\nssl.truststore.password=tr\\u0075stpass\n")
	if err != nil || c.Props["ssl.ca.pem"] == "" {
		t.Fatalf("escaped password: %v %v", err, c.Props)
	}
}
