package plan_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/firewall"
	"github.com/ordinal-dev/ordinal/host/plan"
)

// fakeWriter answers each write from a table by action index (nil: success) and records what it got.
type fakeWriter struct {
	answers       map[int]error
	adoptErr      error
	writes        []string // "verb kind name precondition"
	sent          []abi.Action
	canAdoptCalls int
	n             int
}

func (w *fakeWriter) Write(_ context.Context, a *abi.Action, pre types.UID) (string, error) {
	w.writes = append(w.writes, a.Verb+" "+a.Kind+" "+a.Name+" "+string(pre))
	w.sent = append(w.sent, *a)
	err := w.answers[w.n]
	w.n++
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("rv%d", w.n), nil
}

func (w *fakeWriter) CanAdopt(context.Context) error { w.canAdoptCalls++; return w.adoptErr }

// conformanceCase loads a committed case: the snapshot and the plan upstream made for it.
func conformanceCase(t *testing.T, name string) (*firewall.Scope, *abi.Plan) {
	t.Helper()
	base := filepath.Join("..", "..", "internal", "conformance", "cases", name)
	snap, err := os.ReadFile(base + ".snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(base + ".plan.json")
	if err != nil {
		t.Fatal(err)
	}
	scope, err := firewall.ScopeFromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return scope, p
}

var (
	pods      = schema.GroupResource{Resource: "pods"}
	revisions = schema.GroupResource{Group: "apps", Resource: "controllerrevisions"}
)

func outcomes(rs []plan.Result) []plan.Outcome {
	var out []plan.Outcome
	for _, r := range rs {
		out = append(out, r.Outcome)
	}
	return out
}

func TestApplyIssuesEveryActionInOrder(t *testing.T) {
	scope, p := conformanceCase(t, "history/ordered-collision-count-0")
	// Action 0 is a revision create the plan predicts to be AlreadyExists; action 2 deletes web-2.
	w := &fakeWriter{answers: map[int]error{0: apierrors.NewAlreadyExists(revisions, p.Actions[0].Name)}}
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{Each: func(r plan.Result) { rs = append(rs, r) }})
	if err != nil || a.Issued != len(p.Actions) {
		t.Fatalf("issued=%d err=%v", a.Issued, err)
	}
	want := []plan.Outcome{plan.FailedAsPlanned, plan.Succeeded, plan.Succeeded, plan.Succeeded}
	if got := outcomes(rs); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[3] != want[3] {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	// The delete carries the uid of the pod the plan was made from.
	if uid := scope.Pods["web-2"].UID; uid == "" || w.writes[2] != "delete Pod web-2 "+string(uid) {
		t.Fatalf("delete written as %q, want the precondition %q", w.writes[2], uid)
	}
	if w.writes[0] != "create ControllerRevision "+p.Actions[0].Name+" " {
		t.Fatalf("a predicted rejection is still issued, without precondition: %q", w.writes[0])
	}
}

func TestApplyStopsAtFirstUnexpectedFailure(t *testing.T) {
	scope, p := conformanceCase(t, "history/ordered-collision-count-0")
	w := &fakeWriter{answers: map[int]error{
		0: apierrors.NewAlreadyExists(revisions, p.Actions[0].Name),
		1: apierrors.NewInternalError(errors.New("etcd is down")),
	}}
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{Each: func(r plan.Result) { rs = append(rs, r) }})
	var we *plan.WriteError
	if !errors.As(err, &we) || we.Index != 1 || a.Issued != 2 || !apierrors.IsInternalError(err) {
		t.Fatalf("issued=%d err=%v: want a WriteError at action 1 wrapping the API error", a.Issued, err)
	}
	if len(w.writes) != 2 || len(rs) != 2 || rs[1].Outcome != plan.Failed {
		t.Fatalf("writes %v results %v: nothing is issued after the failure", w.writes, outcomes(rs))
	}
}

func TestApplyStopsWhenAPredictedRejectionDoesNotCome(t *testing.T) {
	scope, p := conformanceCase(t, "history/ordered-collision-count-0")
	w := &fakeWriter{} // the revision create succeeds: the snapshot was stale
	a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{})
	var we *plan.WriteError
	if !errors.As(err, &we) || we.Index != 0 || a.Issued != 1 || len(w.writes) != 1 {
		t.Fatalf("issued=%d writes=%v err=%v", a.Issued, w.writes, err)
	}
}

func TestApplyIgnoresWhatUpstreamIgnores(t *testing.T) {
	scope, p := conformanceCase(t, "ownership/ordered-release-selector-mismatch")
	// Action 0 releases web-2, action 1 is a create upstream expects to be AlreadyExists.
	for _, release := range []error{
		apierrors.NewNotFound(pods, "web-2"),                              // the pod vanished before its release
		apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-2", nil), // its uid precondition no longer holds
	} {
		w := &fakeWriter{answers: map[int]error{0: release, 1: apierrors.NewAlreadyExists(pods, "web-2")}}
		var rs []plan.Result
		a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{Each: func(r plan.Result) { rs = append(rs, r) }})
		if err != nil || a.Issued != len(p.Actions) || rs[0].Outcome != plan.Ignored || rs[0].Err == nil {
			t.Fatalf("release answered %v: issued=%d err=%v outcomes %v", release, a.Issued, err, outcomes(rs))
		}
	}
	// A conflict on the release is not ignored.
	w := &fakeWriter{answers: map[int]error{0: apierrors.NewConflict(pods, "web-2", errors.New("x"))}}
	if _, err := plan.Apply(context.Background(), scope, p, w, plan.Options{}); !apierrors.IsConflict(err) {
		t.Fatalf("err=%v, want the Conflict", err)
	}
}

func TestApplyRechecksBeforeTheFirstAdoption(t *testing.T) {
	scope, p := conformanceCase(t, "ownership/ordered-orphan-pods-template-changed") // three adoptions first
	w := &fakeWriter{}
	if _, err := plan.Apply(context.Background(), scope, p, w, plan.Options{}); err != nil || w.canAdoptCalls != 1 {
		t.Fatalf("err=%v CanAdopt calls=%d (want 1: once per plan)", err, w.canAdoptCalls)
	}
	refused := &fakeWriter{adoptErr: errors.New("the set is being deleted")}
	a, err := plan.Apply(context.Background(), scope, p, refused, plan.Options{})
	if !errors.Is(err, plan.ErrAdoptionRefused) || a.Issued != 0 || len(refused.writes) != 0 {
		t.Fatalf("issued=%d writes=%v err=%v: a refused adoption sends nothing", a.Issued, refused.writes, err)
	}
}

func TestApplyRunsTheFirewallFirst(t *testing.T) {
	scope, p := conformanceCase(t, "ownership/ordered-orphan-pods-template-changed")
	p.Actions = append(p.Actions, abi.Action{Verb: abi.VerbDelete, Kind: abi.KindPod, Namespace: scope.Namespace, Name: "someone-elses-pod"})
	w := &fakeWriter{}
	a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{})
	var refused *firewall.RefusedError
	if !errors.As(err, &refused) || a.Issued != 0 || len(w.writes) != 0 || w.canAdoptCalls != 0 {
		t.Fatalf("issued=%d writes=%v err=%v: a refused plan writes nothing", a.Issued, w.writes, err)
	}
}

func TestIsAdoption(t *testing.T) {
	adopt := `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"StatefulSet","name":"web","uid":"set-uid"}],"uid":"p0"}}`
	release := `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"set-uid"}],"uid":"p9"}}`
	if !plan.IsAdoption([]byte(adopt)) || plan.IsAdoption([]byte(release)) || plan.IsAdoption([]byte(`not json`)) {
		t.Fatal("IsAdoption")
	}
}

// A claim update that makes the set an owner (the retention policy's reference) is re-checked like an
// adoption: refused, nothing is written, for a set being deleted; a plan whose claim updates keep the
// owners they had is not re-checked.
func TestApplyRechecksBeforeAClaimGetsTheSetAsOwner(t *testing.T) {
	scope, p := conformanceCase(t, "pvc/ordered-retention-retain-retain-to-delete-delete") // claims get the set as owner
	if !plan.AddsSetOwner(scope, &p.Actions[0]) {
		t.Fatalf("the first action %s %s does not add the set as owner", p.Actions[0].Verb, p.Actions[0].Name)
	}
	w := &fakeWriter{}
	if _, err := plan.Apply(context.Background(), scope, p, w, plan.Options{}); err != nil || w.canAdoptCalls != 1 {
		t.Fatalf("err=%v CanAdopt calls=%d (want 1)", err, w.canAdoptCalls)
	}
	refused := &fakeWriter{adoptErr: errors.New("the set is being deleted")}
	a, err := plan.Apply(context.Background(), scope, p, refused, plan.Options{})
	if !errors.Is(err, plan.ErrAdoptionRefused) || a.Issued != 0 || len(refused.writes) != 0 {
		t.Fatalf("issued=%d writes=%v err=%v: a claim must not get a set being deleted as owner", a.Issued, refused.writes, err)
	}
	// The reverse change (the set's reference removed): no re-check.
	scope2, p2 := conformanceCase(t, "pvc/ordered-retention-delete-delete-to-retain-retain")
	for i := range p2.Actions {
		if plan.AddsSetOwner(scope2, &p2.Actions[i]) {
			t.Errorf("action %d (%s %s) counted as adding the set as owner", i, p2.Actions[i].Verb, p2.Actions[i].Name)
		}
	}
}

// A pod deleted twice in one sync (a Failed pod, then the rolling update's pick of it): upstream's plan
// predicts NotFound for the second delete, but a real API server still has the pod (terminating) and
// answers 200. DeleteStatefulPod takes both alike, so the sync goes on: the next delete and the status.
func TestApplyCarriesOnWhenAPodDeletePredictedNotFoundSucceeds(t *testing.T) {
	scope, p := conformanceCase(t, "pod-states/parallel-update-mu2-failed-web-1")
	if a := p.Actions[2]; a.Verb != abi.VerbDelete || a.Kind != abi.KindPod || a.Error == "" {
		t.Fatalf("action 2 is %+v, want a pod delete predicted NotFound", a)
	}
	w := &fakeWriter{} // every write succeeds, the second delete too
	var rs []plan.Result
	a, err := plan.Apply(context.Background(), scope, p, w, plan.Options{Each: func(r plan.Result) { rs = append(rs, r) }})
	if err != nil || a.Issued != len(p.Actions) || rs[2].Outcome != plan.Succeeded {
		t.Fatalf("err=%v issued=%d outcomes %v: want the whole plan carried out", err, a.Issued, outcomes(rs))
	}
	// any other predicted rejection that does not come still stops the plan (the snapshot was stale)
	scope, p = conformanceCase(t, "history/ordered-collision-count-0")
	if _, err := plan.Apply(context.Background(), scope, p, &fakeWriter{}, plan.Options{}); err == nil {
		t.Fatal("a revision create predicted AlreadyExists succeeded and the plan went on")
	}
}
