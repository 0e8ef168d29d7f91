// Package schemagen writes a JSON Schema (draft 2020-12) for a Go type the way
// encoding/json marshals it, so the schema files in docs/schemas say what the documents
// really carry: every field is required unless its tag says omitempty (the same key is
// present with or without optional inputs), a pointer may be null, a map is an object
// of its values, time.Time is an RFC 3339 string, and named types can be mapped to a
// shared definition (kstranded's verdict words are an enum). A field tagged
// schema:"nullable" may also be null (a list that was not asked for).
//
// It knows only what json tags say. Constraints the types cannot express (value ranges,
// formats) are the hand-written schemas' business (docs/schemas/common.schema.json).
package schemagen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Generator makes schemas; Refs maps a named type to a $ref (e.g. verdict.Verdict to
// "common.schema.json#/$defs/verdict").
type Generator struct {
	Refs map[reflect.Type]string
}

// Schema is a JSON Schema object, marshalled with sorted keys by encoding/json.
type Schema = map[string]any

var (
	timeType      = reflect.TypeOf(time.Time{})
	rawType       = reflect.TypeOf(json.RawMessage{})
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// Document returns the schema of a document of type t, titled and with the schema name
// its "schema" field must carry.
func (g Generator) Document(t reflect.Type, name, title string) Schema {
	s := g.of(t)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = name + ": " + title
	if props, ok := s["properties"].(Schema); ok {
		props["schema"] = Schema{"const": name}
	}
	return s
}

func (g Generator) of(t reflect.Type) Schema {
	if ref, ok := g.Refs[t]; ok {
		return Schema{"$ref": ref}
	}
	switch {
	case t == timeType:
		return Schema{"type": "string", "format": "date-time"}
	case t == rawType:
		return Schema{}
	case t.Implements(marshalerType) && t.Kind() != reflect.Struct:
		return Schema{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return Schema{"anyOf": []any{g.of(t.Elem()), Schema{"type": "null"}}}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t == reflect.TypeOf(time.Duration(0)) {
			return Schema{"type": "integer", "description": "nanoseconds"}
		}
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return Schema{"type": "string", "contentEncoding": "base64"}
		}
		// a nil slice marshals as null; the views send [] for empty lists, which the
		// schema requires where the field is not a pointer
		return Schema{"type": "array", "items": g.of(t.Elem())}
	case reflect.Map:
		return Schema{"type": "object", "additionalProperties": g.of(t.Elem())}
	case reflect.Interface:
		return Schema{}
	case reflect.Struct:
		props, required := Schema{}, []string{}
		g.fields(t, props, &required)
		s := Schema{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	panic(fmt.Sprintf("schemagen: no schema for %s", t))
}

// fields adds t's JSON fields to props, following encoding/json's rules for embedded
// structs (their fields are promoted unless the embedding field is tagged).
func (g Generator) fields(t reflect.Type, props Schema, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if _, mapped := g.Refs[ft]; !mapped && ft != timeType {
					g.fields(ft, props, required)
					continue
				}
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.of(ft)
		if f.Tag.Get("schema") == "nullable" {
			// a list or object that is null when it was not asked for (not empty)
			props[name] = Schema{"anyOf": []any{props[name], Schema{"type": "null"}}}
		}
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}
