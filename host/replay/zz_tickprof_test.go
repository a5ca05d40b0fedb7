package replay

import (
	"context"
	"os"
	"testing"
)

func TestZZTickProfile(t *testing.T) {
	if os.Getenv("TICKPROF") == "" {
		t.Skip()
	}
	defer withoutChecks()()
	sc, err := ParseScenario([]byte(benchScenario(300, false, true)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), sc, testOptions()); err != nil {
		t.Fatal(err)
	}
}
