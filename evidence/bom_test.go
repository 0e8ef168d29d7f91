package evidence

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/internal/textenc"
)

// A UTF-8 byte-order mark on line 1 must not make that line malformed (offset 0 missing
// reads as LOST 0, safe rewind offset 0: a rewind would redeliver everything); UTF-16 is
// an error that names the encoding (issue 27, item 3).
func TestAByteOrderMarkIsSkippedAndUTF16IsNamed(t *testing.T) {
	var b strings.Builder
	for o := 0; o <= 200; o++ {
		fmt.Fprintf(&b, `{"msg":"delivered","topic":"stranded","partition":0,"offset":%d}`+"\n", o)
	}
	for _, text := range []string{b.String(), "\uFEFF" + b.String()} {
		s := read(t, "d.jsonl", text)
		p := s.Parts[kpart.TopicPartition{Topic: "stranded", Partition: 0}]
		if p == nil || len(p.Delivered) != 1 || p.Delivered[0] != (kpart.Range{First: 0, Last: 200}) || s.MalformedTotal() != 0 {
			t.Fatalf("BOM %v: delivered %+v, malformed %d %+v", strings.HasPrefix(text, "\uFEFF"), p, s.MalformedTotal(), s.Malformed)
		}
	}
	utf16 := "\xFF\xFE" + strings.Join(strings.Split("0:0\n", ""), "\x00") + "\x00"
	err := NewSet().Read(strings.NewReader(utf16), "d16.txt")
	if !errors.Is(err, textenc.ErrEncoding) || !strings.Contains(err.Error(), "UTF-16 little-endian") || !strings.Contains(err.Error(), "d16.txt") {
		t.Fatalf("UTF-16: err %v, want one naming the file and UTF-16", err)
	}
}
