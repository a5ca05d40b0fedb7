package snapshot

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// oldUnknownFields is UnknownFields as it was before the one-walk reading (fb58453^): each member's value
// skipped to find the next, each list element skipped, then each object checked by kube's FieldChecker
// (Shapes.Check, the byte-by-byte shape). The one walk must report exactly what it reported.
func oldUnknownFields(t jsonv.Text) (envelope, objects []fieldcheck.Unknown) {
	if t.Kind() != jsonv.Object {
		return nil, nil
	}
	known := envelopeMembers()
	var c kube.FieldChecker
	t.Members(func(k string, v jsonv.Text) {
		kind, list := objectsOf(k)
		if kind == "" {
			if !slices.Contains(known, k) {
				envelope = append(envelope, fieldcheck.Member(k, known))
			}
			return
		}
		switch {
		case !list && v.Kind() == jsonv.Object:
			objects = append(objects, fieldcheck.In(c.UnknownFields(kind, TextBytes(v)), k)...)
		case list && v.Kind() == jsonv.Array:
			v.Items(func(i int, o jsonv.Text) {
				if o.Kind() == jsonv.Object {
					objects = append(objects, fieldcheck.In(c.UnknownFields(kind, TextBytes(o)), k, i)...)
				}
			})
		}
	})
	return envelope, objects
}

// snapGen writes hostile snapshots: blanks everywhere, escaped and duplicate keys, keys holding `":`,
// values of every kind, objects whose shapes repeat (the shape cache) with unknown fields and values that
// do not decode, lists holding non-objects.
type snapGen struct {
	r *rand.Rand
	b strings.Builder
}

var (
	genBlanks = []string{"", "", "", " ", "  ", "\n", "\t", "\r\n", " \n\t "}
	// keys of pods, claims, revisions and sets at any depth; a few unknown, a few escaped, a few that hold
	// what separates a key from its value in the shape's text
	genKeys = []string{
		`"metadata"`, `"spec"`, `"status"`, `"name"`, `"labels"`, `"annotations"`, `"containers"`, `"image"`,
		`"nodeName"`, `"creationTimestamp"`, `"apiVersion"`, `"kind"`, `"replicas"`, `"data"`, `"revision"`,
		`"statuss"`, `"imagee"`, `"nodeNme"`, `"x"`, `"\u0073pec"`, `"spe\u0063"`, `"na\"me"`, `"a\":"`,
		`"spec\":{\"x"`, `"spec\" : "`, `"\\"`, `"spec\\"`, `"Spec"`, `"spec "`, `"é"`, `"\u00e9"`,
		`"resources"`, `"limits"`, `"cpu"`, `"phase"`, `"conditions"`, `"type"`, `"storageClassName"`,
		`"template"`, `"selector"`, `"matchLabels"`, `"podManagementPolicy"`, `"podManagmentPolicy"`,
	}
	genScalars = []string{
		`"a"`, `"web-0"`, `"2026-01-01T00:00:00Z"`, `"garbage"`, `"1"`, `"apps/v1"`, `"ordinal.dev/v1alpha1"`,
		`"Running"`, `"}"`, `"\"}"`, `"\\"`, `"\u0041"`, `0`, `1`, `-1.5e3`, `12345678901234567890`, `1.5`,
		`true`, `false`, `null`,
	}
	genTop = []string{
		`"abi"`, `"now"`, `"statefulSet"`, `"pods"`, `"revisions"`, `"claims"`, `"features"`, `"delta"`,
		`"writeFailures"`, `"po\u0064s"`, `"stateful\u0053et"`, `"nw"`, `"pods "`, `"Pods"`, `"claims"`,
		`"pods"`, `"pods"`, `"statefulSet"`,
	}
)

func (g *snapGen) blank() { g.b.WriteString(genBlanks[g.r.Intn(len(genBlanks))]) }

// value writes a value; keys is the pool its objects draw their keys from (small: shapes repeat).
func (g *snapGen) value(depth int, keys []string) {
	switch n := g.r.Intn(10); {
	case depth < 5 && n < 4:
		g.object(depth, keys)
	case depth < 5 && n < 5:
		g.b.WriteByte('[')
		g.blank()
		for i, m := 0, g.r.Intn(4); i < m; i++ {
			if i > 0 {
				g.blank()
				g.b.WriteByte(',')
				g.blank()
			}
			g.value(depth+1, keys)
		}
		g.blank()
		g.b.WriteByte(']')
	default:
		g.b.WriteString(genScalars[g.r.Intn(len(genScalars))])
	}
}

func (g *snapGen) object(depth int, keys []string) {
	g.b.WriteByte('{')
	g.blank()
	for i, m := 0, g.r.Intn(5); i < m; i++ {
		if i > 0 {
			g.blank()
			g.b.WriteByte(',')
			g.blank()
		}
		g.b.WriteString(keys[g.r.Intn(len(keys))])
		g.blank()
		g.b.WriteByte(':')
		g.blank()
		g.value(depth+1, keys)
	}
	g.blank()
	g.b.WriteByte('}')
}

func (g *snapGen) snapshot() []byte {
	g.b.Reset()
	// a few keys per snapshot, so that its objects share shapes
	var keys []string
	for range 2 + g.r.Intn(6) {
		keys = append(keys, genKeys[g.r.Intn(len(genKeys))])
	}
	// a few objects, each written again with other blanks and scalars: alike shapes
	seeds := make([]int64, 1+g.r.Intn(3))
	for i := range seeds {
		seeds[i] = g.r.Int63()
	}
	g.blank()
	g.b.WriteByte('{')
	g.blank()
	for i, m := 0, g.r.Intn(8); i < m; i++ {
		if i > 0 {
			g.blank()
			g.b.WriteByte(',')
			g.blank()
		}
		top := genTop[g.r.Intn(len(genTop))]
		g.b.WriteString(top)
		g.blank()
		g.b.WriteByte(':')
		g.blank()
		switch n := g.r.Intn(10); {
		case n < 6 && strings.Contains(top, "s"):
			g.b.WriteByte('[')
			g.blank()
			for j, l := 0, g.r.Intn(6); j < l; j++ {
				if j > 0 {
					g.blank()
					g.b.WriteByte(',')
					g.blank()
				}
				if g.r.Intn(6) == 0 {
					g.value(3, keys) // not always an object
					continue
				}
				g.alike(seeds[g.r.Intn(len(seeds))], keys)
			}
			g.blank()
			g.b.WriteByte(']')
		case n < 8:
			g.alike(seeds[g.r.Intn(len(seeds))], keys)
		default:
			g.value(2, keys)
		}
	}
	g.blank()
	g.b.WriteByte('}')
	g.blank()
	return []byte(g.b.String())
}

// alike writes the object of seed: the same keys each time, with blanks (and sometimes scalars) of the
// generator's own choosing.
func (g *snapGen) alike(seed int64, keys []string) {
	shape := rand.New(rand.NewSource(seed))
	blanks := g.r
	w := &snapGen{r: shape}
	w.objectAlike(0, keys, blanks, g.r.Intn(3) == 0)
	g.b.WriteString(w.b.String())
}

func (g *snapGen) objectAlike(depth int, keys []string, blanks *rand.Rand, otherScalars bool) {
	blank := func() { g.b.WriteString(genBlanks[blanks.Intn(len(genBlanks))]) }
	g.b.WriteByte('{')
	blank()
	for i, m := 0, g.r.Intn(5); i < m; i++ {
		if i > 0 {
			blank()
			g.b.WriteByte(',')
			blank()
		}
		g.b.WriteString(keys[g.r.Intn(len(keys))])
		blank()
		g.b.WriteByte(':')
		blank()
		if n := g.r.Intn(10); depth < 4 && n < 4 {
			g.objectAlike(depth+1, keys, blanks, otherScalars)
			continue
		}
		s := genScalars[g.r.Intn(len(genScalars))]
		if otherScalars {
			s = genScalars[blanks.Intn(len(genScalars))]
		}
		g.b.WriteString(s)
	}
	blank()
	g.b.WriteByte('}')
}

func checkAgainstOld(t *testing.T, doc []byte) {
	t.Helper()
	text, err := jsonv.Validate(doc)
	if err != nil {
		return // the CLI hands UnknownFields only what jsonv.Validate accepted
	}
	env, objs := UnknownFields(text)
	oldEnv, oldObjs := oldUnknownFields(lastObjectMembers(t, text))
	if !reflect.DeepEqual(env, oldEnv) || !reflect.DeepEqual(objs, oldObjs) {
		t.Fatalf("%s\nnow:\n%s\n%s\nbefore:\n%s\n%s", doc, fieldStrings(env), fieldStrings(objs), fieldStrings(oldEnv), fieldStrings(oldObjs))
	}
}

// The one walk reports what the walks before it reported, for hostile snapshots.
func TestUnknownFieldsAsBefore(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	g := &snapGen{r: r}
	for range 5000 {
		checkAgainstOld(t, g.snapshot())
	}
}

func FuzzUnknownFieldsAsBefore(f *testing.F) {
	f.Add(int64(1), []byte(`{"pods":[{"spec":{"x":1}}]}`))
	f.Add(int64(2), []byte("{ \"po\\u0064s\" : [ {\"a\\\":\" : 1}, {\"a\\\"\":1} ] }"))
	f.Fuzz(func(t *testing.T, seed int64, doc []byte) {
		checkAgainstOld(t, doc)
		g := &snapGen{r: rand.New(rand.NewSource(seed))}
		checkAgainstOld(t, g.snapshot())
	})
}

// Nesting to jsonv.MaxDepth, long lists and long blanks, and every snapshot the repository holds, read
// as before.
func TestUnknownFieldsAsBeforeAtTheEdges(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	d := jsonv.MaxDepth
	docs := []string{
		`{"pods":[` + deep(`{"spec":`, `}`, d-2) + `]}`,
		`{"pods":[` + deep(`{"spex":`, `}`, d-2) + `]}`,
		`{"pods":[` + deep(`{"spec":`, `}`, d-1) + `]}`, // too deep: Validate refuses it
		`{"pods":` + deep(`[`, `]`, d-1) + `}`,
		`{"statefulSet":` + deep(`{"spec":`, `}`, d-1) + `}`,
		`{"pods":[` + strings.Repeat(`{"spec":{}},1,{"spek":{}},`, 20000) + `{}]}`,
		`{"pods":[` + strings.Repeat(" \n", 100000) + `{"spek"` + strings.Repeat("\t", 100000) + `:{}}]` + strings.Repeat(" ", 100000) + `}`,
		"{\"pods\":[{\"spec\" :{}},{\"spec\": {}},{\"spec\"\n:{}},{\"spec\" : {\"x\":1}}]}",
		`{"pods":[{"a\":":{}},{"a\"":{}},{"a\\":{}},{"a":{}}], "po\u0064s":[{"a":1}], "pods":{"spek":1}}`,
	}
	for _, doc := range docs {
		checkAgainstOld(t, []byte(doc))
	}
	files, err := filepath.Glob("../../internal/conformance/cases/*/*.snapshot.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no snapshots: %v", err)
	}
	more, _ := filepath.Glob("../../examples/*.snapshot.json")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstOld(t, b)
	}
}

// lastObjectMembers is text without the earlier of an object member given twice (statefulSet, pods, claims,
// revisions): the walk before judged every one, UnknownFields judges the one the module reads. The paths
// of the last ones are the same either way (a member's name, not its place).
func lastObjectMembers(t *testing.T, text jsonv.Text) jsonv.Text {
	t.Helper()
	if text.Kind() != jsonv.Object {
		return text
	}
	type span struct {
		key        string
		start, end int // the member, from its key to its value's end
	}
	var spans []span
	last := map[string]int{}
	for i := text.FirstMember(); ; {
		k, v, ok := text.MemberAt(i)
		if !ok {
			break
		}
		end := v + text[v:].ValueEnd()
		if kind, _ := objectsOf(k); kind != "" {
			last[k] = len(spans)
		}
		spans = append(spans, span{k, i, end})
		i = text.MemberAfter(end)
	}
	var b strings.Builder
	b.WriteByte('{')
	for n, sp := range spans {
		if kind, _ := objectsOf(sp.key); kind != "" && last[sp.key] != n {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(string(text[sp.start:sp.end]))
	}
	b.WriteByte('}')
	out, err := jsonv.Validate([]byte(b.String()))
	if err != nil {
		t.Fatalf("%s without earlier duplicates is not JSON: %v", text, err)
	}
	return out
}
