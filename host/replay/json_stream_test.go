package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// chunkWriter records what each Write was given.
type chunkWriter struct {
	bytes.Buffer
	largest, writes int
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.largest, c.writes = max(c.largest, len(p)), c.writes+1
	return c.Buffer.Write(p)
}

// WriteJSON writes json.MarshalIndent's bytes, a step at a time: a large timeline is never held whole
// (a 1000-pod creation's is over 100 MB), and the output is what it always was.
func TestTimelineWriteJSONStreamsMarshalIndent(t *testing.T) {
	sc, err := ParseScenario([]byte(benchScenario(12, false, true)))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Run(context.Background(), sc, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Steps) < 10 {
		t.Fatalf("%d steps: the scenario should take more", len(tl.Steps))
	}
	for _, c := range []struct {
		name  string
		steps []Step
	}{{"steps", tl.Steps}, {"one step", tl.Steps[:1]}, {"no steps", []Step{}}, {"nil steps", nil}} {
		t.Run(c.name, func(t *testing.T) {
			cut := *tl
			cut.Steps = c.steps
			want, err := json.MarshalIndent(&cut, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, '\n')
			var got chunkWriter
			if err := cut.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("WriteJSON differs from json.MarshalIndent:\n%s\nwant:\n%s", got.Bytes(), want)
			}
			if len(c.steps) > 1 && got.largest*4 > len(want) {
				t.Errorf("one write of %d bytes in %d of %d bytes: the timeline is written whole", got.largest, got.writes, len(want))
			}
		})
	}
}
