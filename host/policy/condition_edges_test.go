package policy

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// A plan's status write without a status object was refused by the writer ("updateStatus action without a
// status object"); with a write held, HoldStatus turns it into a status of the condition alone, which the
// writer sends: the set's replicas, revisions and counts are replaced by nothing (an upstream status clobbered).
func TestHoldStatusLeavesAStatuslessWriteAlone(t *testing.T) {
	set := func() gjson.Result {
		return gjson.Parse(`{"metadata":{"name":"web","namespace":"default"},"status":{"replicas":3,"readyReplicas":3}}`)
	}
	held := []hostplan.HeldWrite{{Verb: abi.VerbDelete, Kind: abi.KindPod, Name: "web-1",
		Hold: hostplan.Hold{Policy: "pdb", Reason: "NoDisruptionAllowed", Message: "none left"}}}
	for _, obj := range []string{`{}`, `{"status":null}`, `{"metadata":{"name":"web"}}`} {
		a := &abi.Action{Verb: abi.VerbUpdateStatus, Kind: abi.KindStatefulSet, Namespace: "default", Name: "web", Object: []byte(obj)}
		if got := HoldStatus(set, spendNow, nil)(a, held); got != nil {
			t.Errorf("updateStatus of %s became %s: a status with the condition alone", obj, got.Object)
		}
	}
}
