// Package policyfixture reads a policy's fixtures: each an evaluate input and the answer it must get
// ({"description", "input", "answer"}, abi/POLICY.md). A policy's directory keeps one a file
// (testdata/NAME.json); the module ConfigMap carries them as one JSON array (NAME.policy.fixtures.json). The
// in-cluster gate (host/policy), `ordinal policy test` and the Go tests of policies/ read them here, so a
// fixture means the same to each.
package policyfixture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
)

// Fixture is one fixture.
type Fixture struct {
	Name        string          `json:"-"` // where it came from: its file's name, or its index in an array
	Description string          `json:"description,omitempty"`
	Input       json.RawMessage `json:"input"`
	Answer      json.RawMessage `json:"answer"`
}

// Read reads the fixtures at path: a directory of fixture files (*.json, one fixture each), or one file
// holding a JSON array of them (what the module ConfigMap carries). An error names the file and what is
// wrong with it.
func Read(path string) ([]Fixture, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return ReadDir(path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fs, err := ParseArray(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fs, nil
}

// ReadDir reads each dir/*.json as one fixture, named by its file; a directory without any is an error.
func ReadDir(dir string) ([]Fixture, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no fixtures in %s: a fixture is a file NAME.json holding {\"description\", \"input\", \"answer\"}", dir)
	}
	out := make([]Fixture, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		fx, err := parseOne(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		fx.Name = filepath.Base(f)
		out = append(out, fx)
	}
	return out, nil
}

// ParseArray reads a JSON array of fixtures, at least one; each is named by its index.
func ParseArray(b []byte) ([]Fixture, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("not a JSON array of fixtures: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("no fixtures: the array is empty")
	}
	out := make([]Fixture, 0, len(raws))
	for i, raw := range raws {
		fx, err := parseOne(raw)
		if err != nil {
			return nil, fmt.Errorf("fixture %d: %w", i, err)
		}
		fx.Name = fmt.Sprintf("fixture %d", i)
		out = append(out, fx)
	}
	return out, nil
}

// parseOne reads one fixture: an object with an input and an answer and no other member but description.
func parseOne(b []byte) (Fixture, error) {
	var fx Fixture
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fx); err != nil {
		return fx, fmt.Errorf("not a fixture {\"description\", \"input\", \"answer\"}: %w", err)
	}
	if dec.More() {
		return fx, errors.New("not a fixture: more than one JSON value")
	}
	switch {
	case isAbsent(fx.Input):
		return fx, errors.New(`a fixture has an "input" (an evaluate input) and an "answer"; this one has no "input"`)
	case isAbsent(fx.Answer):
		return fx, errors.New(`a fixture has an "input" (an evaluate input) and an "answer"; this one has no "answer"`)
	}
	return fx, nil
}

func isAbsent(v json.RawMessage) bool {
	return len(v) == 0 || string(bytes.TrimSpace(v)) == "null"
}

// SameAnswer reports whether two answers are the same JSON value.
func SameAnswer(got, want []byte) bool {
	var g, w any
	return json.Unmarshal(got, &g) == nil && json.Unmarshal(want, &w) == nil && reflect.DeepEqual(g, w)
}
