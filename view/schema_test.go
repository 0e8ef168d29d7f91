package view

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var schemaFileName = regexp.MustCompile(`^kstranded\.([a-z-]+)/v([0-9]+)$`)

// SchemaFile is the file in docs/schemas for a document name.
func schemaFile(name string) string {
	m := schemaFileName.FindStringSubmatch(name)
	return filepath.Join("..", "docs", "schemas", m[1]+".v"+m[2]+".schema.json")
}

// TestSchemaFilesAreCurrent: each document's schema in docs/schemas is what its view
// type generates; a change to a document without its schema fails here (run
// go test ./view -update to regenerate, and review the diff).
func TestSchemaFilesAreCurrent(t *testing.T) {
	for _, d := range Documents {
		t.Run(d.Name, func(t *testing.T) {
			got, err := json.MarshalIndent(SchemaGenerator.Document(d.Type, d.Name, d.Title), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := schemaFile(d.Name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./view -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is not what %s generates (run go test ./view -update and review the diff)", path, d.Type)
			}
		})
	}
}
