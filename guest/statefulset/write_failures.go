package statefulset

import (
	"strconv"

	"github.com/ordinal-dev/ordinal/internal/jsonv"
)

// Write failures (abi/README.md, "Writes that failed"): upstream's sync goes on after a write the API server
// refuses, in ways that depend on the write and the answer (performUpdate writes the status "even if there
// is an error"; a delete's NotFound is success; a Conflict on an update is retried; a burst batch finishes).
// A host that issued a plan and got an unexpected refusal asks again with the same snapshot and
// writeFailures; the module plans the same sync with that answer in place, so the plan's actions up to the
// failed one are unchanged and what follows is what upstream does after it.

// Attempts of client-go's retry.RetryOnConflict: retry.DefaultBackoff (pod updates) and retry.DefaultRetry
// (the status update).
const (
	retryBackoffSteps = 4
	retryStatusSteps  = 5
)

// maxWriteFailures bounds one snapshot's writeFailures: each costs one more pass over the sync.
const maxWriteFailures = 64

// maxFailureMessage bounds a failure's message: it comes back in events and in the sync's error.
const maxFailureMessage = 65536

// writeFailure is one refused write: the index of the action in the plan the module returns for the same
// snapshot with the failures before it, and the API server's answer.
type writeFailure struct {
	Action  int
	Reason  string // metav1.StatusReason ("" when the answer was not an API status)
	Message string // the error's text, as upstream's err.Error() prints it
}

// decodeWriteFailures reads the snapshot's writeFailures: strictly increasing action indices.
func (d *decoder) writeFailures(t jsonv.Text) []writeFailure {
	var out []writeFailure
	d.arrayText(t, "writeFailures", func(i int, ft jsonv.Text) {
		if d.err != nil {
			return
		}
		path := index("writeFailures", i)
		if i >= maxWriteFailures {
			d.fail(path, "at most "+strconv.Itoa(maxWriteFailures)+" write failures")
			return
		}
		if ft.Kind() != jsonv.Object {
			d.fail(path, typeErr("object", jsonv.Value{K: ft.Kind()}))
			return
		}
		m := members(ft, "action", "reason", "message")
		var f writeFailure
		av := textValue(m[0])
		n, err := strconv.ParseInt(av.S, 10, 32)
		if av.K != jsonv.Number || err != nil || n < 0 {
			d.fail(join(path, "action"), "expected the index of an action (an integer >= 0)")
			return
		}
		f.Action = int(n)
		if len(out) > 0 && f.Action <= out[len(out)-1].Action {
			d.fail(join(path, "action"), "write failures must be in the order of their actions, each after the one before")
			return
		}
		for k, dst := range []*string{&f.Reason, &f.Message} {
			switch v := textValue(m[k+1]); v.K {
			case jsonv.Null:
			case jsonv.String:
				*dst = v.S
			default:
				d.fail(join(path, [...]string{"reason", "message"}[k]), typeErr("string", v))
				return
			}
		}
		if f.Message == "" {
			d.fail(join(path, "message"), "a write failure needs the API server's message")
			return
		}
		if len(f.Message) > maxFailureMessage {
			d.fail(join(path, "message"), "a write failure's message is at most "+strconv.Itoa(maxFailureMessage)+" bytes")
			return
		}
		out = append(out, f)
	})
	return out
}

// issue records a write with the API server's answer to it and returns that answer: the rejection the
// snapshot predicts (predicted), else the refusal the host reported for this write, else none. Every write
// of a sync goes through here, so a reported refusal reaches each exactly as a predicted one does.
func (s *syncer) issue(a action, predicted error) error {
	err := predicted
	if err == nil {
		if e, ok := s.failAt[len(s.plan.Actions)]; ok {
			err = e
		}
	}
	if err != nil {
		a.Err = err.Error()
	}
	s.record(a)
	return err
}

// runWithFailures plans the sync with the snapshot's write failures in place. Each failure names an action
// of the plan made with the failures before it, so they are placed one at a time: a pass finds the action
// (by the order it was issued in, which canonical ordering keeps in its seq) and the next pass fails it.
// Every pass decodes the snapshot afresh (decode reads the validated text; a sync may change what it
// decoded). Only the first pass's objects are kept (the others point into the input), so only the first uses
// the instance's maps and the memos found under them (sync_lookups.go, pod_memo.go).
func runWithFailures(root jsonv.Text, first *snapshot, prev *objectMaps) (*plan, *PlanError) {
	failAt := map[int]error{}
	snap := first
	for i, f := range first.WriteFailures {
		if snap == nil {
			var perr *PlanError
			if snap, perr = decodeSnapshotCached(root, prev, nil, nil, nil, nil); perr != nil {
				return nil, perr
			}
		}
		p := run(snap, failAt)
		snap = nil
		path := index("writeFailures", i) + ".action"
		if f.Action >= len(p.Actions) {
			return nil, &PlanError{Code: CodeInvalidSnapshot, Path: path,
				Message: "the plan has no action " + strconv.Itoa(f.Action) + " (it has " + strconv.Itoa(len(p.Actions)) + ")"}
		}
		a := &p.Actions[f.Action]
		if a.Err != "" {
			return nil, &PlanError{Code: CodeInvalidSnapshot, Path: path,
				Message: "action " + strconv.Itoa(f.Action) + " is already planned to fail (" + a.Err + "): report only failures the plan did not predict"}
		}
		failAt[a.seq] = &apiError{reason: f.Reason, msg: f.Message}
	}
	snap, perr := decodeSnapshotCached(root, prev, nil, nil, nil, nil)
	if perr != nil {
		return nil, perr
	}
	return run(snap, failAt), nil
}
