package evidence

import (
	"encoding/json"
	"strings"

	"github.com/kstranded/kstranded/internal/kpart"
	"github.com/kstranded/kstranded/traceevent"
)

// TraceParseSchemaPrefix starts the "schema" of `kstranded trace parse -o json` output.
const TraceParseSchemaPrefix = "kstranded.trace-parse/"

// TraceParseDoc is the shape this package expects from `kstranded trace parse -o json`
// (written by another command; this is the hook that reads it). Only these fields are
// read; anything else in the document is ignored.
//
//	{
//	  "schema": "kstranded.trace-parse/v2",
//	  "topic": "stranded",
//	  "group": "g",
//	  "partitions": [
//	    {"partition": 0,
//	     "delivered": [{"partition": 0, "first": 0, "last": 81, "count": 82},
//	                   {"partition": 0, "first": 201, "last": 201, "count": 1}],
//	     "delivered_offsets": [0, 1, 2],
//	     "duplicates": 0}
//	  ]
//	}
//
// "delivered" ranges are traceevent.Range values and must be dense (count equal to
// last-first+1, or count omitted): a sparse range does not say which of its offsets
// were delivered, so it is reported as malformed. A sparse delivery is written as
// explicit "delivered_offsets" instead. "duplicates", when present, adds to the
// duplicates found in the ranges themselves.
type TraceParseDoc struct {
	Schema     string                `json:"schema"`
	Topic      string                `json:"topic"`
	Group      string                `json:"group"`
	Partitions []TraceParsePartition `json:"partitions"`
}

// TraceParsePartition is one partition of TraceParseDoc.
type TraceParsePartition struct {
	Partition        *int32             `json:"partition"`
	Delivered        []traceevent.Range `json:"delivered"`
	DeliveredOffsets []int64            `json:"delivered_offsets"`
	Duplicates       int64              `json:"duplicates"`
}

// tryTraceParse reads data as trace parse output when it is one JSON document with the
// trace parse schema; it reports false (and reads nothing) otherwise.
func (p *parser) tryTraceParse(data []byte) bool {
	var probe struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &probe) != nil || !strings.HasPrefix(probe.Schema, TraceParseSchemaPrefix) {
		return false
	}
	var doc TraceParseDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		p.bad(1, "", "trace parse document: "+jsonReason(err))
		return true
	}
	p.src.Topic, p.src.Group = doc.Topic, doc.Group
	for i, tp := range doc.Partitions {
		line := i + 1 // the partition's index stands in for a line number
		if tp.Partition == nil || *tp.Partition < 0 {
			p.bad(line, "", "partition entry without a partition")
			continue
		}
		p.src.Lines++
		for _, r := range tp.Delivered {
			span := r.Last - r.First + 1
			switch {
			case r.First < 0 || r.Last < r.First:
				p.bad(line, "", "invalid delivered range")
			case r.Count != 0 && int64(r.Count) != span:
				p.bad(line, "", "sparse delivered range (count < last-first+1) cannot be expanded")
			default:
				p.add(doc.Topic, *tp.Partition, kpart.Range{First: r.First, Last: r.Last})
			}
		}
		for _, o := range tp.DeliveredOffsets {
			if o < 0 {
				p.bad(line, "", "negative delivered offset")
				continue
			}
			p.add(doc.Topic, *tp.Partition, kpart.Range{First: o, Last: o})
		}
		p.kind(Kind{Name: kindTraceParse, Counted: true}, "")
		if tp.Duplicates > 0 && tp.Duplicates < 1<<62 {
			part := p.set.Parts[kpart.TopicPartition{Topic: doc.Topic, Partition: *tp.Partition}]
			if part != nil {
				part.extraDup = satAdd(part.extraDup, tp.Duplicates)
			}
		}
	}
	return true
}
