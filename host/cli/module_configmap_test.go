package cli

import (
	"errors"
	"strings"
	"testing"
)

// --module-configmap is NAMESPACE/NAME; anything else is a usage error naming the value, before any request.
func TestModuleConfigMapFlag(t *testing.T) {
	mopts := &moduleOptions{timeout: 10e9, memoryLimitMB: 256}
	for _, bad := range []string{"name", "/name", "ns/", "ns/a/b"} {
		_, _, _, err := (&configMapModules{ref: bad}).gate(mopts, nil)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitUsage || !strings.Contains(err.Error(), bad) {
			t.Errorf("--module-configmap %q: %v, want a usage error naming it", bad, err)
		}
	}
	ns, name, gate, err := (&configMapModules{ref: "ordinal-system/ordinal-module"}).gate(mopts, nil)
	if err != nil || ns != "ordinal-system" || name != "ordinal-module" || gate == nil {
		t.Fatalf("ordinal-system/ordinal-module: %s %s %v %v", ns, name, gate, err)
	}
}
