package evidence

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/kstranded/kstranded/internal/kpart"
)

// parser reads one source into its Set: each line's kind tallied (what was counted and
// what was ignored, lines.go reads the formats), its deliveries added, its malformed
// lines counted and the first few kept.
type parser struct {
	set     *Set
	src     *Source
	shown   int
	topic   string // trace header topic
	inTrace bool   // a kstranded.trace/v1 line was seen: JSON lines are trace events
	kinds   []*tally
	byKey   map[tallyKey]*tally
	shapes  map[string]string // shapeOf's memory
	notWhen string            // why a line the When does not match is ignored
	// pend: the offsets the line being read named (add and span widen it), for its
	// kind's First and Last once the line's kind is known.
	pend    kpart.Range
	hasPend bool
	// dec decodes JSON lines (decodeObject), line what it reads.
	dec  *json.Decoder
	line *strings.Reader
}

// The kinds of line that are not told apart by a message.
const (
	kindServe         = "serve events"
	kindTraceOther    = "other trace events"
	kindTraceParse    = "trace parse partition entries"
	kindOtherLog      = "other log lines"
	kindPattern       = "lines matching --pattern"
	kindNoPattern     = "other lines"
	kindJSONNoMsg     = "JSON lines without a msg or message"
	kindOtherMessages = "JSON lines with other messages"
	whyNoDelivery     = "no partition and offset"
	whyTraceOther     = "only serve events name deliveries"
	whyNoPatternHit   = "--pattern does not match them"
)

// kind counts one line as being of kind k (Name, Field, Value, AppLog, Counted and Why
// set) with the offsets the line named (add, span).
//
// Messages that differ only in words holding a digit ("processed order 81", "processed
// order 82") are one shape: up to maxShapeValues different messages of a shape stay
// kinds of their own ("stage 1 done" and "stage 2 done" may well mean different things),
// more are one kind whose Value shows the words as <n> (Varies). A source keeps at most
// maxKinds kinds; the lines of any more are one kind, "other messages".
func (p *parser) kind(k Kind, line string) {
	if k.Field == "" {
		if !p.countPlain(k) {
			p.newTally(k, "", line)
		}
		return
	}
	shape := p.shapeOf(k.Value)
	key := tallyKey{field: k.Field, shape: shape, counted: k.Counted}
	t := p.byKey[key]
	if t == nil && len(p.kinds) >= maxKinds {
		k = Kind{Name: kindOtherMessages, AppLog: true, Counted: k.Counted, Why: k.Why}
		if !p.countPlain(k) {
			p.newTally(k, "", line)
		}
		return
	}
	if t == nil {
		t = p.newTally(k, shape, line)
		p.byKey[key] = t
	} else {
		p.widen(&t.Kind)
	}
	if k.Field != "" && !t.overflow {
		var sub *Kind
		for _, e := range t.subs {
			if e.Value == k.Value {
				sub = e
			}
		}
		switch {
		case sub != nil:
			p.widen(sub)
		case len(t.subs) < maxShapeValues:
			sub = newKind(k, line)
			p.widen(sub)
			t.subs = append(t.subs, sub)
		default:
			t.overflow, t.subs = true, nil
		}
	}
	p.hasPend = false
}

// shapeOf is the message with its words that hold a digit as <n>, remembered for the
// messages seen most (a log repeats its messages).
func (p *parser) shapeOf(msg string) string {
	if sh, ok := p.shapes[msg]; ok {
		return sh
	}
	sh := maskDigitWords(msg)
	if p.shapes == nil {
		p.shapes = map[string]string{}
	}
	if len(p.shapes) < 4096 {
		p.shapes[msg] = sh
	}
	return sh
}

// tallyKey finds the tally of a kind: one not told apart by a message by its name,
// one told apart by its message by the field and the message's shape.
type tallyKey struct {
	name, field, shape string
	counted            bool
}

// countPlain counts the line being read in the kind named k.Name (not told apart by a
// message), without copying the line; it reports false when there is no such kind yet.
func (p *parser) countPlain(k Kind) bool {
	t := p.byKey[tallyKey{name: k.Name, counted: k.Counted}]
	if t == nil {
		return false
	}
	p.widen(&t.Kind)
	p.hasPend = false
	return true
}

// newTally starts counting kind k with the line being read.
func (p *parser) newTally(k Kind, shape, line string) *tally {
	if p.byKey == nil {
		p.byKey = map[tallyKey]*tally{}
	}
	t := &tally{Kind: *newKind(k, line), shape: shape}
	if k.Field == "" {
		p.byKey[tallyKey{name: k.Name, counted: k.Counted}] = t
	}
	p.kinds = append(p.kinds, t)
	p.widen(&t.Kind)
	if k.Field == "" {
		p.hasPend = false
	}
	return t
}

// maxShapeValues is how many different messages of one shape stay kinds of their own;
// maxKinds how many kinds a source keeps.
const (
	maxShapeValues = 4
	maxKinds       = 64
)

// maskDigitWords writes each word of msg that holds a digit (an id, a count, an
// offset) as <n>; a word is a run of letters, digits and _ . : # -.
func maskDigitWords(msg string) string {
	if !strings.ContainsAny(msg, "0123456789") {
		return msg
	}
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:#-", c) >= 0
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if !isWord(msg[i]) {
			b.WriteByte(msg[i])
			i++
			continue
		}
		j, digit := i, false
		for ; j < len(msg) && isWord(msg[j]); j++ {
			digit = digit || msg[j] >= '0' && msg[j] <= '9'
		}
		if digit {
			b.WriteString("<n>")
		} else {
			b.WriteString(msg[i:j])
		}
		i = j
	}
	return b.String()
}

// tally is a kind being counted: the messages of one shape, each counted apart (subs)
// until there are more than maxShapeValues of them (overflow).
type tally struct {
	Kind
	shape    string
	subs     []*Kind
	overflow bool
}

func newKind(k Kind, line string) *Kind {
	if k.Field != "" {
		k.Name = messageKindName(k.Field, k.Value)
	}
	k.First, k.Last = -1, -1
	if len(line) > 120 {
		line = line[:120] + "..."
	}
	k.Sample = line
	return &k
}

// widen counts the line being read in k, with its offsets.
func (p *parser) widen(k *Kind) {
	k.Lines++
	if p.hasPend {
		if k.First < 0 || p.pend.First < k.First {
			k.First = p.pend.First
		}
		if p.pend.Last > k.Last {
			k.Last = p.pend.Last
		}
	}
}

// listKinds lists the tallies as kinds: a shape of few messages as one kind per message,
// a shape of many as one kind with the varying words shown as <n>; counted kinds first.
func listKinds(ts []*tally) []Kind {
	var out []Kind
	for _, t := range ts {
		switch {
		case t.Field == "" || len(t.subs) == 1:
			out = append(out, t.Kind)
		case t.overflow:
			k := t.Kind
			k.Value, k.Varies = t.shape, true
			k.Name = messageKindName(k.Field, k.Value)
			out = append(out, k)
		default:
			for _, sub := range t.subs {
				out = append(out, *sub)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Kind) int { // counted first
		if a.Counted == b.Counted {
			return 0
		}
		if a.Counted {
			return -1
		}
		return 1
	})
	return out
}

// span notes that the line being read names the offsets iv (add calls it; a reader
// calls it for a line it ignores, so that its kind still shows its offsets).
func (p *parser) span(iv kpart.Range) {
	if !p.hasPend {
		p.pend, p.hasPend = iv, true
		return
	}
	p.pend.First = min(p.pend.First, iv.First)
	p.pend.Last = max(p.pend.Last, iv.Last)
}

// messageKind is the kind of a JSON application log line that carries a delivery.
func messageKind(top map[string]any, counted bool, why string) Kind {
	if f, v, ok := MessageOf(top); ok {
		return Kind{Field: f, Value: v, AppLog: true, Counted: counted, Why: why} // named by newKind
	}
	return Kind{Name: kindJSONNoMsg, AppLog: true, Counted: counted, Why: why}
}

func (p *parser) bad(line int, text, reason string) {
	p.src.Malformed++
	p.hasPend = false
	if p.shown < MaxShownMalformed {
		p.shown++
		if len(text) > 120 {
			text = text[:120] + "..."
		}
		p.set.Malformed = append(p.set.Malformed, Malformed{Source: p.src.Name, Line: line, Text: text, Reason: reason})
	}
}

func (p *parser) add(topic string, partition int32, iv kpart.Range) {
	p.span(iv)
	p.src.Records += iv.Len()
	p.set.add(kpart.TopicPartition{Topic: topic, Partition: partition}, iv)
}
