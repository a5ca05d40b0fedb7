package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/ordinal-dev/ordinal/host/replay/world"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// AdvanceTickSnapshot applies one tick of the reference harness's world rules to a snapshot taken
// right after a sync (`oracle simulate -final`): terminating pods disappear, Pending pods the
// harness created (uid prefix world.SimUIDPrefix) become Running and Ready, Pending claims bind, orphans
// are collected; resourceVersions continue above the snapshot's highest. The result is the world
// the harness's next sync sees. hack/conformance uses it to reconstruct intermediate states; the
// replay engine's tick model runs the same rules (world.AdvanceTick).
func AdvanceTickSnapshot(snapshot []byte, tick time.Duration) ([]byte, error) {
	s, err := jsonobj.DecodeObj(snapshot)
	if err != nil {
		return nil, err
	}
	now, err := time.Parse(time.RFC3339Nano, jsonobj.GetStr(s, "now"))
	if err != nil {
		return nil, fmt.Errorf("snapshot now: %w", err)
	}
	e := &engine{clock: world.NewClock(now.Add(tick))}
	if err := e.loadSnapshot(s); err != nil {
		return nil, err
	}
	api := e.api
	world.AdvanceTick(api, e.clock.Now(),
		func(string) bool { return true },
		func(name string) bool {
			return strings.HasPrefix(jsonobj.GetStr(api.Get(world.KindPod, name), "metadata.uid"), world.SimUIDPrefix)
		},
		func(string) {}, func(string) {})
	s["now"] = e.clock.Now().Format(time.RFC3339)
	s["statefulSet"] = api.StatefulSet()
	for key, kind := range map[string]string{"pods": world.KindPod, "revisions": world.KindRevision, "claims": world.KindClaim} {
		list := []any{}
		for _, n := range api.Names(kind) {
			list = append(list, api.Get(kind, n))
		}
		s[key] = list
	}
	return mustJSON(s), nil
}
