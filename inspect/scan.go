package inspect

import (
	"encoding/binary"
	"fmt"
	"github.com/kstranded/kstranded/judge"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kind is what one offset of a partition holds, as read from the partition itself
// (package judge owns the words).
type Kind = judge.Kind

// The kinds a read of the partition finds.
const (
	Record       = judge.Record
	Aborted      = judge.Aborted
	CommitMarker = judge.CommitMarker
	AbortMarker  = judge.AbortMarker
	Absent       = judge.Absent
)

// Span is a run of offsets [First, Last] of one kind.
type Span = judge.Span

// Scan is the classification of the offsets [From, To) of one partition.
type Scan struct {
	From, To  int64 // classified range; To is exclusive
	Spans     []Span
	Truncated bool // the range that mattered went past To (--max-scan)
	Requests  int  // fetch requests issued
}

// classifier turns raw fetch responses into spans.
//
// Why this reads batch headers itself: the exact answer needs three facts per offset
// (is there a record, is it a control record, is it in an aborted transaction), all of
// which are in the v2 record batch header (attributes, producer ID, base offset, last
// offset delta, record count) plus the fetch response's aborted-transaction list. A
// dense batch (record count == last offset delta + 1) covers every offset in it, so it
// is classified without decoding a record; only control batches (to tell commit from
// abort) and sparse, compacted batches are decoded record by record, the latter by
// kgo.ProcessFetchPartition with KeepControlRecords. The abort rule is the one the Java
// consumer and kgo apply (kgo source.go buildAborter/shouldAbortBatch): a transactional
// batch from producer P is aborted when P has an aborted transaction whose first offset
// is at or before the batch's base offset and P's abort marker has not yet been passed.
// TestClassifierAgreesWithKgoReadCommitted checks this against kgo's own filtering.
type classifier struct {
	next  int64 // next offset expected (everything below is classified)
	to    int64
	spans []Span
	decom kgo.Decompressor
}

func (c *classifier) emit(first, last int64, k Kind) {
	if first < c.next {
		first = c.next
	}
	if last >= c.to {
		last = c.to - 1
	}
	if last < first {
		return
	}
	if first > c.next { // offsets with no batch at all
		c.push(Span{First: c.next, Last: first - 1, Kind: Absent})
	}
	c.push(Span{First: first, Last: last, Kind: k})
	c.next = last + 1
}

func (c *classifier) push(s Span) {
	if n := len(c.spans); n > 0 && c.spans[n-1].Kind == s.Kind && c.spans[n-1].Last+1 == s.First {
		c.spans[n-1].Last = s.Last
		return
	}
	c.spans = append(c.spans, s)
}

// aborts tracks, per producer, the first offsets of its aborted transactions still ahead.
type aborts map[int64][]int64

func newAborts(list []kmsg.FetchResponseTopicPartitionAbortedTransaction) aborts {
	if len(list) == 0 {
		return nil
	}
	a := aborts{}
	for _, t := range list {
		a[t.ProducerID] = append(a[t.ProducerID], t.FirstOffset)
	}
	for pid := range a {
		slices.Sort(a[pid])
	}
	return a
}

func (a aborts) aborted(pid, baseOffset int64) bool {
	firsts := a[pid]
	return len(firsts) > 0 && baseOffset >= firsts[0]
}

func (a aborts) pop(pid int64) {
	if firsts := a[pid]; len(firsts) > 1 {
		a[pid] = firsts[1:]
	} else {
		delete(a, pid)
	}
}

const (
	attrCompression   = 0x07
	attrTransactional = 0x10
	attrControl       = 0x20
	batchHeaderLen    = 61
)

// feed classifies the batches of one fetch response partition. It returns the number of
// complete batches read.
func (c *classifier) feed(rp *kmsg.FetchResponseTopicPartition) (int, error) {
	ab := newAborts(rp.AbortedTransactions)
	in := rp.RecordBatches
	n := 0
	for len(in) >= 17 && c.next < c.to {
		base := int64(binary.BigEndian.Uint64(in[0:]))
		length := int(int32(binary.BigEndian.Uint32(in[8:])))
		if length < 0 || 12+length > len(in) {
			break // a partial batch at the end of the response: fetch it again next time
		}
		raw := in[:12+length]
		in = in[12+length:]
		n++
		magic := raw[16]
		if magic != 2 || len(raw) < batchHeaderLen {
			// Legacy message sets (magic 0/1) have no transactions: every record kgo
			// decodes is a record, the rest of the offsets are absent.
			if err := c.sparse(raw, base, false, Record); err != nil {
				return n, err
			}
			continue
		}
		attrs := int16(binary.BigEndian.Uint16(raw[21:]))
		lastDelta := int64(int32(binary.BigEndian.Uint32(raw[23:])))
		pid := int64(binary.BigEndian.Uint64(raw[43:]))
		count := int64(int32(binary.BigEndian.Uint32(raw[57:])))
		last := base + lastDelta
		if last < c.next {
			continue // wholly before the range (a fetch returns the batch holding its offset)
		}
		kind := Record
		if attrs&attrTransactional != 0 && ab.aborted(pid, base) {
			kind = Aborted
		}
		if attrs&attrControl != 0 {
			marker, err := c.controlType(raw, attrs)
			if err != nil {
				return n, err
			}
			if marker == AbortMarker && kind == Aborted {
				ab.pop(pid)
			}
			kind = marker
			// A control batch holds one record; a compacted one (none) leaves its
			// offsets absent.
			if count == 0 {
				c.emit(base, last, Absent)
			} else {
				c.emit(base, last, kind)
			}
			continue
		}
		if count == lastDelta+1 {
			c.emit(base, last, kind)
			continue
		}
		if err := c.sparse(raw, base, true, kind); err != nil {
			return n, err
		}
		// Offsets after the last surviving record up to the batch end are absent.
		c.emit(last, last, Absent)
	}
	return n, nil
}

// controlType reads the control record's key (int16 version, int16 type; type 0 is
// abort, 1 is commit). Kafka writes control batches uncompressed with one record.
func (c *classifier) controlType(raw []byte, attrs int16) (Kind, error) {
	if attrs&attrCompression != 0 {
		recs, err := c.decode(raw)
		if err != nil || len(recs) == 0 {
			return 0, fmt.Errorf("unreadable compressed control batch: %v", err)
		}
		return markerKind(recs[0].Key), nil
	}
	// record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
	// keyLength varint, key.
	b := raw[batchHeaderLen:]
	var ok bool
	if _, b, ok = varint(b); !ok || len(b) < 1 {
		return 0, fmt.Errorf("unreadable control record")
	}
	b = b[1:]
	for range 2 {
		if _, b, ok = varint(b); !ok {
			return 0, fmt.Errorf("unreadable control record")
		}
	}
	kl, b, ok := varint(b)
	if !ok || kl < 4 || int64(len(b)) < kl {
		return 0, fmt.Errorf("unreadable control record key")
	}
	return markerKind(b[:4]), nil
}

func markerKind(key []byte) Kind {
	if len(key) >= 4 && key[2] == 0 && key[3] == 0 {
		return AbortMarker
	}
	return CommitMarker
}

func varint(b []byte) (int64, []byte, bool) {
	var ux uint64
	var s uint
	for i, x := range b {
		if i == 10 {
			return 0, nil, false
		}
		if x < 0x80 {
			ux |= uint64(x) << s
			v := int64(ux >> 1)
			if ux&1 != 0 {
				v = ^v
			}
			return v, b[i+1:], true
		}
		ux |= uint64(x&0x7f) << s
		s += 7
	}
	return 0, nil, false
}

// decode returns the records of one batch, control records included, as kgo decodes
// them (decompression, legacy formats).
func (c *classifier) decode(raw []byte) ([]*kgo.Record, error) {
	if c.decom == nil {
		c.decom = kgo.DefaultDecompressor()
	}
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.RecordBatches = raw
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		KeepControlRecords:   true,
		DisableCRCValidation: true,
		IsolationLevel:       kgo.ReadUncommitted(),
	}, &rp, c.decom, nil)
	return fp.Records, fp.Err
}

// sparse classifies a batch whose records do not cover all its offsets (compaction) or
// which is in a legacy format: present offsets take kind, the rest are absent.
func (c *classifier) sparse(raw []byte, base int64, v2 bool, kind Kind) error {
	recs, err := c.decode(raw)
	if err != nil {
		return fmt.Errorf("decoding batch at offset %d: %w", base, err)
	}
	for _, r := range recs {
		k := kind
		if !v2 && r.Attrs.IsControl() {
			k = markerKind(r.Key)
		}
		c.emit(r.Offset, r.Offset, k)
	}
	return nil
}
