package module

import (
	"context"
	"errors"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// A set that names no module runs the default without a lookup; one that names a module runs what the
// lookup gives for that name, and a failed lookup comes back as it was, with the name.
func TestOfSetChoosesTheNamedModule(t *testing.T) {
	ctx := context.Background()
	looked := []string{}
	named := func(_ context.Context, name string) (string, error) {
		looked = append(looked, name)
		if name == "missing" {
			return "", ErrUnknownModule
		}
		return "module " + name, nil
	}
	if m, name, err := OfSet(ctx, map[string]string{"other": "x"}, "default", named); m != "default" || name != "" || err != nil {
		t.Errorf("no annotation: got %q %q %v, want the default", m, name, err)
	}
	if m, name, err := OfSet(ctx, map[string]string{abi.AnnotationModule: "extended"}, "default", named); m != "module extended" || name != "extended" || err != nil {
		t.Errorf("names extended: got %q %q %v", m, name, err)
	}
	if _, name, err := OfSet(ctx, map[string]string{abi.AnnotationModule: "missing"}, "default", named); name != "missing" || !errors.Is(err, ErrUnknownModule) {
		t.Errorf("names a missing module: got %q %v, want missing and ErrUnknownModule", name, err)
	}
	if len(looked) != 2 {
		t.Errorf("lookups %v, want one per set that names a module", looked)
	}
}
