package replay

import (
	"context"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tidwall/gjson"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
	"github.com/ordinal-dev/ordinal/internal/strictjson"
)

// worldWriter is the replay's plan.Writer: host/plan's applier (the controller's) sends the plan's
// writes to the in-memory API server instead of a real one.
type worldWriter struct {
	api *world.APIServer
	set Obj // the set as the snapshot showed it
}

func (w *worldWriter) Write(_ context.Context, a *abi.Action, precondition types.UID) (string, error) {
	if err := w.write(a, precondition); err != nil {
		return "", err
	}
	return w.resourceVersion(a), nil
}

func (w *worldWriter) write(a *abi.Action, precondition types.UID) error {
	if a.Verb == abi.VerbUpdateStatus && strictjson.IsObject(a.Object) && gjson.ValidBytes(a.Object) {
		// Upstream PUTs the set it planned from with the new status: the snapshot's resourceVersion is
		// the precondition. Of the set the plan carries only its status is read, so only that is decoded.
		status, err := jsonobj.Decode([]byte(gjson.GetBytes(a.Object, "status").Raw))
		if err != nil {
			status = nil // no status member: as the set decoded whole, which has none
		}
		return w.api.UpdateStatus(Obj{"metadata": jsonobj.GetObj(w.set, "metadata"), "status": status})
	}
	var obj Obj
	if len(a.Object) > 0 {
		o, err := jsonobj.DecodeObj(a.Object)
		if err != nil {
			return err
		}
		obj = o
	}
	switch a.Verb {
	case abi.VerbCreate:
		return w.api.Create(a.Kind, obj)
	case abi.VerbUpdate:
		return w.api.Update(a.Kind, obj)
	case abi.VerbResize:
		return w.api.Resize(obj)
	case abi.VerbUpdateStatus:
		// Upstream PUTs the set it planned from with the new status: the snapshot's resourceVersion is
		// the precondition.
		return w.api.UpdateStatus(Obj{"metadata": jsonobj.GetObj(w.set, "metadata"), "status": obj["status"]})
	case abi.VerbPatch:
		if a.Kind == world.KindSet {
			return w.patchSet(a)
		}
		p, err := jsonobj.DecodeObj(a.Patch)
		if err != nil {
			return err
		}
		return w.api.Patch(a.Kind, a.Name, p)
	case abi.VerbDelete:
		return w.api.Delete(a.Kind, a.Name, string(precondition))
	}
	return world.NewAPIError("Invalid", "unknown verb %q", a.Verb)
}

// patchSet applies a patch of the set — a JSON patch (extension progress-deadline's rollback, the one set
// patch a plan may carry) or a merge patch (the host's record of its policies' holds, policy.MemoryWrite) —
// with the library kube-apiserver applies them with, then stores the result as an update of the set
// (validated, its generation bumped for a spec change).
func (w *worldWriter) patchSet(a *abi.Action) error {
	var apply func(doc []byte) ([]byte, error)
	switch a.PatchType {
	case "application/json-patch+json":
		p, err := jsonpatch.DecodePatch(a.Patch)
		if err != nil {
			return world.NewAPIError("BadRequest", "%v", err)
		}
		apply = p.Apply
	case "application/merge-patch+json":
		apply = func(doc []byte) ([]byte, error) { return jsonpatch.MergePatch(doc, a.Patch) }
	default:
		return world.NewAPIError("UnsupportedMediaType", "the set takes only a JSON patch or a merge patch here, not %q", a.PatchType)
	}
	cur := w.api.StatefulSet()
	if cur == nil || jsonobj.GetStr(cur, "metadata.name") != a.Name {
		return world.NewAPIError("NotFound", "statefulsets.apps %q not found", a.Name)
	}
	out, err := apply(mustJSON(cur))
	if err != nil {
		return world.NewAPIError("Invalid", "the server rejected our request due to an error in our request: %v", err)
	}
	o, err := jsonobj.DecodeObj(out)
	if err != nil {
		return err
	}
	return w.api.Update(world.KindSet, o)
}

// resourceVersion is the written object's resourceVersion now ("" once it is gone), as the API server's
// answer to the write carries it.
func (w *worldWriter) resourceVersion(a *abi.Action) string {
	if o := w.api.Get(a.Kind, a.Name); o != nil {
		return jsonobj.GetStr(o, "metadata.resourceVersion")
	}
	return ""
}

// CanAdopt is upstream's canAdopt against the in-memory API server.
func (w *worldWriter) CanAdopt(context.Context) error {
	cur := w.api.StatefulSet()
	name, uid := jsonobj.GetStr(w.set, "metadata.name"), jsonobj.GetStr(w.set, "metadata.uid")
	if cur == nil || jsonobj.GetStr(cur, "metadata.uid") != uid {
		return fmt.Errorf("original StatefulSet %s/%s is gone: wanted uid %s", w.api.Namespace(), name, uid)
	}
	if ts := jsonobj.GetStr(cur, "metadata.deletionTimestamp"); ts != "" {
		return fmt.Errorf("%s/%s has just been deleted at %s", w.api.Namespace(), name, ts)
	}
	return nil
}
