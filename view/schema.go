package view

import (
	"reflect"

	"github.com/kstranded/kstranded/internal/schemagen"
	"github.com/kstranded/kstranded/internal/verdict"
	"github.com/kstranded/kstranded/rewind"
	"github.com/kstranded/kstranded/simulate"
)

// Document names a JSON document kstranded writes and the view type that is it. Its
// JSON Schema in docs/schemas is generated from the type (go test ./view -update) and
// real output is validated against it (cmd's schema test), so the two cannot drift.
type Document struct {
	Name  string // the "schema" field, e.g. kstranded.repro/v2
	Title string
	Type  reflect.Type
}

// Documents are the documents whose schemas are generated from view types. The small
// documents that cmd declares (broker, version, error) have hand-written schemas.
var Documents = []Document{
	{ReproSchema, "kstranded repro -o json and kstranded simulate -o json (simulated: true)", reflect.TypeOf(Repro{})},
	{SweepSchema, "kstranded simulate --sweep -o json", reflect.TypeOf(Sweep{})},
	{AdviceSchema, "kstranded simulate --advise -o json", reflect.TypeOf(Advice{})},
	{"kstranded.consume/v1", "kstranded repro consume -o json", reflect.TypeOf(Consume{})},
	{"kstranded.produce/v1", "kstranded repro produce -o json", reflect.TypeOf(Produced{})},
	{InspectSchema, "kstranded inspect -o json", reflect.TypeOf(Inspect{})},
	{GroupsSchema, "kstranded inspect --list -o json (and inspect without --group)", reflect.TypeOf(Groups{})},
	{InspectWatchSchema, "each later document of kstranded inspect --watch -o json", reflect.TypeOf(InspectChanges{})},
	{RewindSchema, "kstranded rewind -o json (a plan; --from-file reads it back)", reflect.TypeOf(Rewind{})},
	{rewind.UndoSchema, "the undo file kstranded rewind --execute writes (--from-file restores it)", reflect.TypeOf(rewind.Undo{})},
	{TraceSchema, "kstranded trace parse -o json", reflect.TypeOf(Trace{})},
}

// SchemaGenerator maps kstranded's shared types to common.schema.json's definitions.
var SchemaGenerator = schemagen.Generator{Refs: map[reflect.Type]string{
	reflect.TypeOf(verdict.Verdict("")): "common.schema.json#/$defs/verdict",
	reflect.TypeOf(Text("")):            "common.schema.json#/$defs/text",
	reflect.TypeOf(simulate.Loses("")):  "common.schema.json#/$defs/loses",
}}
