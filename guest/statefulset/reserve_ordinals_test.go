package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/internal/ordinal"
)

// renameOrdinals rewrites every member name of set ("<set>-<n>", also inside claim names, hostnames and
// messages) and every pod-index label value through f, in a JSON document.
func renameOrdinals(t *testing.T, b []byte, set string, f func(int64) int64) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e, k)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, "")
			}
		case string:
			if key == labelPodIndex {
				if n, err := strconv.ParseInt(x, 10, 64); err == nil {
					return strconv.FormatInt(f(n), 10)
				}
			}
			return renameIn(x, set, f)
		}
		return v
	}
	out, err := json.Marshal(walk(v, ""))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// renameIn maps the ordinal of each "<set>-<digits>" in s that is not part of a longer word (a hostname's
// "." may follow; a claim name's "-" may precede).
func renameIn(s, set string, f func(int64) int64) string {
	word := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
	}
	var out strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], set+"-")
		if j < 0 {
			out.WriteString(s[i:])
			break
		}
		j += i
		k := j + len(set) + 1
		e := k
		for e < len(s) && s[e] >= '0' && s[e] <= '9' {
			e++
		}
		n, err := strconv.ParseInt(s[k:e], 10, 64)
		if e == k || (j > 0 && (word(s[j-1]) || s[j-1] == '.')) || (e < len(s) && (word(s[e]) || s[e] == '-')) || err != nil {
			out.WriteString(s[i:k])
			i = k
			continue
		}
		out.WriteString(s[i:k] + strconv.FormatInt(f(n), 10))
		i = e
	}
	return out.String()
}

// Extension reserve-ordinals is upstream with the set's ordinals renamed: on every conformance case, the
// extended module's plan for a set reserving some ordinals, its pods and claims renamed from slot order
// (start, start+1, ...) to the ordinals the reservation leaves and its partition moved with them, is
// upstream's plan for the case, renamed the same way. The faithful module ignores the annotation.
func TestReserveOrdinalsIsUpstreamRenamed(t *testing.T) {
	checked := 0
	for _, c := range conformanceSnapshots(t) {
		var snap struct {
			StatefulSet struct {
				Metadata struct{ Name string }
				Spec     struct {
					Replicas *int64
					Ordinals *struct{ Start int64 }
				}
			}
		}
		if json.Unmarshal(c.in, &snap) != nil || snap.StatefulSet.Metadata.Name == "" {
			continue
		}
		start, replicas := int64(0), int64(1)
		if o := snap.StatefulSet.Spec.Ordinals; o != nil {
			start = o.Start
		}
		if r := snap.StatefulSet.Spec.Replicas; r != nil {
			replicas = *r
		}
		if start < 0 || replicas < 0 || replicas > 10000 {
			continue
		}
		reserved := "1,3-4" // relative to start below
		rs, _ := ordinal.ParseReserved(reserved)
		for i := range rs {
			rs[i].First += start
			rs[i].Last += start
		}
		slots := ordinal.NewSlots(start, replicas, rs)
		shift := slots.End() - (start + replicas)
		f := func(n int64) int64 { // upstream's ordinal -> the reserved set's: monotonic, onto non-members past the end
			switch {
			case n < start || n >= 100000:
				return n
			case n < start+replicas:
				return slots.At(int(n - start))
			}
			return n + shift
		}
		name := snap.StatefulSet.Metadata.Name
		in := renameOrdinals(t, c.in, name, f)
		var v map[string]any
		_ = json.Unmarshal(in, &v)
		spec := v["statefulSet"].(map[string]any)["spec"].(map[string]any)
		if st, _ := spec["updateStrategy"].(map[string]any); st != nil {
			if ru, _ := st["rollingUpdate"].(map[string]any); ru != nil {
				if p, ok := ru["partition"].(float64); ok && p >= 0 {
					ru["partition"] = f(start+int64(p)) - start
				}
			}
		}
		in, _ = json.Marshal(v)
		annotatedNames := []string{strconv.FormatInt(start+1, 10), strconv.FormatInt(start+3, 10) + "-" + strconv.FormatInt(start+4, 10)}
		in = annotate(t, in, annotationReserveOrdinals, strings.Join(annotatedNames, ","))
		if in == nil {
			continue
		}
		want := renameOrdinals(t, Reconcile(c.in), name, f)
		got := Reconcile(in)
		if !extendedBuild {
			want = Reconcile(renameOrdinals(t, withoutKey(t, in, annotationReserveOrdinals), name, func(n int64) int64 { return n }))
		}
		if d := diffJSON(withoutKey(t, want, annotationReserveOrdinals), withoutKey(t, got, annotationReserveOrdinals)); d != "" {
			t.Errorf("%s: reserving %v of start %d, replicas %d:\n%s", c.name, annotatedNames, start, replicas, d)
			continue
		}
		checked++
	}
	if checked < 400 {
		t.Errorf("only %d cases checked", checked)
	}
}

// reservedSnapshot is four Ready pods web-0..3 with claims (whenScaled: Delete) of a set of 4 replicas
// with the given pod management policy, reserving ordinal 1.
func reservedSnapshot(t *testing.T, policy, reserve string) []byte {
	t.Helper()
	in, err := os.ReadFile(filepath.Join(conformanceDir, "scale", map[string]string{"OrderedReady": "ordered", "Parallel": "parallel"}[policy]+"-vct1-delete-delete-to-2.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	spec := v["statefulSet"].(map[string]any)["spec"].(map[string]any)
	spec["replicas"] = 4
	if spec["podManagementPolicy"] != policy || len(v["pods"].([]any)) != 4 {
		t.Fatalf("the case changed: %v, %d pods", spec["podManagementPolicy"], len(v["pods"].([]any)))
	}
	out, _ := json.Marshal(v)
	return annotate(t, out, annotationReserveOrdinals, reserve)
}

// A pod at a reserved ordinal is removed as upstream removes one past the end on a scale down (its claims
// as whenScaled says), and the replicas it counted for come from the next free ordinal: OrderedReady
// creates web-4 first and deletes web-1 once every replica is Ready; Parallel does both at once. A bad
// value writes no pod, with a warning naming it.
func TestReserveOrdinalsReplacesReservedPods(t *testing.T) {
	for _, tc := range []struct {
		policy, reserve string
		want            []string
		event           string
	}{
		{"OrderedReady", "1", []string{"create PersistentVolumeClaim data-web-4", "create Pod web-4"}, ""},
		{"Parallel", "1", []string{"create PersistentVolumeClaim data-web-4", "create Pod web-4", "update PersistentVolumeClaim data-web-1", "delete Pod web-1"}, ""},
		{"Parallel", "", nil, ""},
		{"Parallel", "9", nil, ""},
		{"Parallel", "1-x", nil, "Warning InvalidAnnotation"},
		{"Parallel", "0-2147483646", nil, "Warning InvalidAnnotation"},
	} {
		in := reservedSnapshot(t, tc.policy, tc.reserve)
		got := decodeStuckPlan(t, Reconcile(in))
		var writes []string
		for _, a := range got.Actions {
			if a.Kind == kindPod || a.Kind == kindPVC {
				writes = append(writes, a.Verb+" "+a.Kind+" "+a.Name)
			}
		}
		if !extendedBuild {
			tc.want, tc.event = nil, "" // upstream: 4 replicas, 4 Ready pods, nothing to do
		}
		if strings.Join(writes, "; ") != strings.Join(tc.want, "; ") {
			t.Errorf("%s reserving %q: writes %v, want %v", tc.policy, tc.reserve, writes, tc.want)
		}
		found := tc.event == ""
		for _, e := range got.Events {
			if e.Type+" "+e.Reason == tc.event && strings.Contains(e.Message, strconv.Quote(tc.reserve)) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s reserving %q: events %+v, want %s naming the value", tc.policy, tc.reserve, got.Events, tc.event)
		}
	}
}
