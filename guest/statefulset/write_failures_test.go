package statefulset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
)

// withFailures is a conformance case's snapshot with writeFailures set (raw JSON).
func withFailures(t *testing.T, name, failures string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(conformanceDir, name+".snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]json.RawMessage
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	snap["writeFailures"] = json.RawMessage(failures)
	out, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type planOut struct {
	Actions []struct {
		Verb, Kind, Name, Error string
	}
	Events []struct{ Type, Reason, Message string }
	Error  *PlanError
}

func reconcileJSON(t *testing.T, in []byte) planOut {
	t.Helper()
	var p planOut
	if err := json.Unmarshal(Reconcile(in), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A Conflict on a rollback's revision renumbering: upstream's retry starts from the empty object client-go
// returns with the error and has no name, which client-go refuses unsent. So the plan has the one refused
// update, no status (getStatefulSetRevisions failed) and client-go's error. (The reference harness's fake
// client sends the unnamed retry: hack/conformance/README.md, "Write failures".)
func TestRevisionRenumberConflictIsNotRetried(t *testing.T) {
	const name = "history/rollback-to-previous"
	base := reconcileJSON(t, withFailures(t, name, `[]`))
	if len(base.Actions) == 0 || base.Actions[0].Verb != verbUpdate || base.Actions[0].Kind != kindRevision {
		t.Fatalf("%s does not start with a revision update: %+v", name, base.Actions)
	}
	p := reconcileJSON(t, withFailures(t, name,
		`[{"action":0,"reason":"Conflict","message":"Operation cannot be fulfilled on controllerrevisions.apps \"x\": the object has been modified"}]`))
	if len(p.Actions) != 1 || p.Actions[0].Error == "" || p.Error == nil || p.Error.Message != "resource name may not be empty" {
		t.Fatalf("plan %+v", p)
	}
	// any other answer is returned as it came
	p = reconcileJSON(t, withFailures(t, name, `[{"action":0,"reason":"InternalError","message":"etcd timed out"}]`))
	if len(p.Actions) != 1 || p.Error == nil || p.Error.Message != "etcd timed out" {
		t.Fatalf("plan %+v", p)
	}
}

// A pod update refused with Conflict is retried (retry.DefaultBackoff: four attempts in all), each attempt
// the same write; the update event follows the last.
func TestPodUpdateConflictIsRetriedFourTimes(t *testing.T) {
	const name = "identity/ordered-missing-pod-name-label"
	base := reconcileJSON(t, withFailures(t, name, `[]`))
	k := -1
	for i, a := range base.Actions {
		if a.Verb == verbUpdate && a.Kind == kindPod {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatalf("%s updates no pod: %+v", name, base.Actions)
	}
	conflict := `{"reason":"Conflict","message":"Operation cannot be fulfilled on pods: the object has been modified"}`
	var fs []string
	for attempt := 0; attempt < 4; attempt++ {
		fs = append(fs, strings.Replace(conflict, "{", `{"action":`+itoa(k+attempt)+`,`, 1))
		p := reconcileJSON(t, withFailures(t, name, "["+strings.Join(fs, ",")+"]"))
		for i := 0; i <= attempt; i++ {
			if a := p.Actions[k+i]; a.Verb != verbUpdate || a.Kind != kindPod || a.Error == "" {
				t.Fatalf("attempt %d: action %d is %+v, want a refused pod update", attempt, k+i, a)
			}
		}
		var next struct{ Verb, Kind, Name, Error string }
		if k+attempt+1 < len(p.Actions) {
			next = p.Actions[k+attempt+1]
		}
		retried := next.Verb == verbUpdate && next.Kind == kindPod && next.Error == ""
		if attempt < 3 && !retried {
			t.Fatalf("attempt %d refused: the next action is %+v, want the update again", attempt+1, next)
		}
		if attempt == 3 && (retried || p.Error == nil || !strings.Contains(p.Error.Message, "the object has been modified")) {
			t.Fatalf("after four refusals: next %+v, error %+v: want no fifth attempt and the Conflict as the sync's error", next, p.Error)
		}
	}
}

// Write failures the module cannot place are a clear InvalidSnapshot naming the entry, never a plan.
func TestWriteFailuresRefused(t *testing.T) {
	// the module keeps its own copies of the contract's bound and code (it does not import abi)
	if maxWriteFailures != abi.MaxWriteFailures || CodeStaleReference != abi.CodeStaleReference {
		t.Fatalf("maxWriteFailures %d, CodeStaleReference %q: abi says %d, %q", maxWriteFailures, CodeStaleReference, abi.MaxWriteFailures, abi.CodeStaleReference)
	}
	const name = "pod-states/parallel-steady-failed-web-1" // plan: delete web-1, updateStatus
	msg := `"message":"m"`
	for failures, want := range map[string]string{
		`{}`:                                    "writeFailures: expected array",
		`[1]`:                                   "writeFailures[0]: expected object",
		`[{"action":-1,` + msg + `}]`:           "writeFailures[0].action",
		`[{"action":1.5,` + msg + `}]`:          "writeFailures[0].action",
		`[{"action":"1",` + msg + `}]`:          "writeFailures[0].action",
		`[{"action":0}]`:                        "writeFailures[0].message",
		`[{"action":0,"reason":3,` + msg + `}]`: "writeFailures[0].reason",
		`[{"action":1,` + msg + `},{"action":0,` + msg + `}]`: "writeFailures[1].action",
		`[{"action":9,` + msg + `}]`:                          "writeFailures[0].action: the plan has no action 9 (it has 2)",
	} {
		p := reconcileJSON(t, withFailures(t, name, failures))
		if p.Error == nil || p.Error.Code != CodeInvalidSnapshot || len(p.Actions) != 0 ||
			!strings.Contains(p.Error.Path+": "+p.Error.Message, want) {
			t.Errorf("%s: error %+v, want InvalidSnapshot with %q", failures, p.Error, want)
		}
	}
	var many []string
	for i := 0; i <= maxWriteFailures; i++ {
		many = append(many, `{"action":`+itoa(i)+`,`+msg+`}`)
	}
	if p := reconcileJSON(t, withFailures(t, name, "["+strings.Join(many, ",")+"]")); p.Error == nil || !strings.Contains(p.Error.Message, "at most 64") {
		t.Errorf("65 write failures: %+v", p.Error)
	}
	// a message past 64 KiB (it comes back in events and the sync's error): refused, not echoed
	long := `[{"action":0,"message":"` + strings.Repeat("m", maxFailureMessage+1) + `"}]`
	if p := reconcileJSON(t, withFailures(t, name, long)); p.Error == nil || !strings.Contains(p.Error.Message, "at most 65536 bytes") {
		t.Errorf("a %d-byte message: %+v", maxFailureMessage+1, p.Error)
	}
	// a write the plan already predicts to fail is not the host's to report
	const predicted = "history/ordered-collision-count-0" // action 0: a revision create upstream expects AlreadyExists
	if p := reconcileJSON(t, withFailures(t, predicted, `[{"action":0,`+msg+`}]`)); p.Error == nil || !strings.Contains(p.Error.Message, "already planned to fail") {
		t.Errorf("a predicted refusal reported: %+v", p.Error)
	}
	// none: the plan as without the field
	if a, b := Reconcile(withFailures(t, name, `[]`)), Reconcile(withFailures(t, name, `null`)); string(a) != string(b) {
		t.Errorf("[] and null differ")
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
