package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/ordinal-dev/ordinal/internal/conformance"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// The write-failures group: every other case's sync with one or two of its writes refused by the API
// server, as upstream carries on after them (the status written anyway, a delete's NotFound taken as
// success, Conflicts retried, a burst batch finished). The plans come from the oracle built with
// oracle-failwrites/ (ORACLE_FAIL_WRITES), the snapshots carry the ABI's writeFailures (abi/README.md).

const groupWriteFailures = conformance.GroupWriteFailures

// failWrite names a write to refuse as the oracle's injection does: as the plan names it, and its
// occurrence among the sync's writes of that name.
type failWrite struct {
	Verb       string `json:"verb"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Occurrence int    `json:"occurrence"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
}

// refusal is what the API server answers a write with, and the text of its message.
type refusal struct{ reason, msg string }

var resourceOfKind = map[string]string{
	"Pod": "pods", "PersistentVolumeClaim": "persistentvolumeclaims",
	"ControllerRevision": "controllerrevisions.apps", "StatefulSet": "statefulsets.apps",
}

// refusalFor is a realistic answer to a write: first the one each verb most often meets (quota on creates,
// Conflict on updates, a pod gone before its patch, an etcd timeout on deletes), then (second) another.
func refusalFor(a M, second bool) refusal {
	verb, kind, name := jsonobj.GetStr(a, "verb"), jsonobj.GetStr(a, "kind"), jsonobj.GetStr(a, "name")
	res := resourceOfKind[kind]
	q := fmt.Sprintf("%s %q", res, name)
	conflict := refusal{"Conflict", "Operation cannot be fulfilled on " + q +
		": the object has been modified; please apply your changes to the latest version and try again"}
	internal := refusal{"InternalError", "Internal error occurred: etcdserver: request timed out"}
	if kind == "ControllerRevision" && verb == "update" {
		// a Conflict here makes upstream retry with an unnamed object: client-go refuses it unsent, the
		// oracle's fake client sends it (README, "Write failures"); the module follows client-go
		return internal
	}
	switch verb {
	case "create":
		if second {
			return refusal{"AlreadyExists", q + " already exists"}
		}
		return refusal{"Forbidden", q + " is forbidden: exceeded quota: compute-resources, requested: count/" + res + "=1, used: count/" + res + "=10, limited: count/" + res + "=10"}
	case "update", "updateStatus":
		if second {
			return internal
		}
		return conflict
	case "patch":
		if second {
			return internal
		}
		return refusal{"NotFound", q + " not found"}
	case "delete":
		if second {
			return refusal{"NotFound", q + " not found"}
		}
		return internal
	}
	return internal
}

// writeFailureCases derives the group from the cases built so far: for each, the first write refused and
// the first other pod write refused; for every third, also the last write refused, and (where the first was
// a Conflict) the retry refused again. Runs the oracle, two at a time.
func (g *Gen) writeFailureCases() {
	g.group(groupWriteFailures, "every other group's sync with one or two writes refused by the API server (quota, Conflict, NotFound, etcd timeout): the status upstream still writes, NotFound deletes taken as success, Conflicts retried, Parallel batches finished; snapshots carry writeFailures")
	if !g.o.injects() {
		fatalf("%s is the oracle without write-failure injection: build it with hack/conformance/oracle-failwrites/build.sh", g.o.bin)
	}
	sources := append([]Case(nil), g.cases...)
	out := make([][]Case, len(sources))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				out[i] = g.deriveFailures(sources[i])
			}
		}()
	}
	for i := range sources {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, cs := range out {
		for _, c := range cs {
			g.add(c.Group, c.Name, c.Desc, c.Snap)
			g.cases[len(g.cases)-1].FailWrites = c.FailWrites
		}
	}
}

// deriveFailures makes the failure variants of one case (none when its sync writes nothing it can refuse).
func (g *Gen) deriveFailures(src Case) []Case {
	s := g.o.defaults(src.Snap)
	key := src.Group + "/" + src.Name
	h := fnv.New32a()
	h.Write([]byte(key))
	every3 := h.Sum32()%3 == 0
	var out []Case
	variant := func(suffix string, picks ...func(actions []any, prev int) (int, bool)) {
		var fails []failWrite
		var wf []any
		var what []string
		prev := -1
		for n, pick := range picks {
			plan := g.o.planEnv(s, fails)
			actions := jsonobj.AsArr(plan["actions"])
			k, ok := pick(actions, prev)
			if !ok {
				return
			}
			a := jsonobj.AsObj(actions[k])
			if jsonobj.GetStr(a, "verb") == "create" && jsonobj.GetStr(a, "kind") == "PersistentVolumeClaim" &&
				len(jsonobj.AsArr(jsonobj.Get(s, "statefulSet.spec.volumeClaimTemplates"))) > 1 {
				// upstream creates a pod's claims in map order, so the order of their events around a
				// refused one is random (the oracle's canonical order sorts only runs of one reason)
				return
			}
			r := refusalFor(a, suffix == "last" || suffix == "pod")
			if n > 0 { // the retry refused again: the same answer
				r = refusalFor(a, false)
			}
			occ := 0
			for _, b := range actions[:k] {
				bo := jsonobj.AsObj(b)
				if jsonobj.GetStr(bo, "verb") == jsonobj.GetStr(a, "verb") && jsonobj.GetStr(bo, "kind") == jsonobj.GetStr(a, "kind") &&
					jsonobj.GetStr(bo, "name") == jsonobj.GetStr(a, "name") {
					occ++
				}
			}
			fails = append(fails, failWrite{Verb: jsonobj.GetStr(a, "verb"), Kind: jsonobj.GetStr(a, "kind"), Name: jsonobj.GetStr(a, "name"),
				Occurrence: occ, Reason: r.reason, Message: r.msg})
			wf = append(wf, M{"action": num(k), "reason": r.reason, "message": r.msg})
			what = append(what, fmt.Sprintf("action %d (%s %s %s) refused %s", k, jsonobj.GetStr(a, "verb"), jsonobj.GetStr(a, "kind"), jsonobj.GetStr(a, "name"), r.reason))
			prev = k
		}
		if suffix == "first" && len(jsonobj.AsArr(g.o.planEnv(s, fails)["actions"])) < 2 && h.Sum32()%8 != 0 {
			return // a sync that stops at its only write: one case in eight is enough of those
		}
		c := clone(s)
		c["writeFailures"] = wf
		out = append(out, Case{Group: groupWriteFailures, Name: src.Group + "." + src.Name + "." + suffix,
			Desc: "`" + key + "` with " + strings.Join(what, ", then "), Snap: c, FailWrites: fails})
	}
	first := func(actions []any, prev int) (int, bool) {
		for k := prev + 1; k < len(actions); k++ {
			if jsonobj.GetStr(jsonobj.AsObj(actions[k]), "error") == "" {
				return k, true
			}
		}
		return 0, false
	}
	last := func(actions []any, _ int) (int, bool) {
		for k := len(actions) - 1; k > 0; k-- { // not the first: that is the "first" variant
			if jsonobj.GetStr(jsonobj.AsObj(actions[k]), "error") == "" {
				return k, true
			}
		}
		return 0, false
	}
	retried := func(actions []any, prev int) (int, bool) {
		// the write right after a refused update is its retry when it is the same write again
		if prev+1 >= len(actions) {
			return 0, false
		}
		a, b := jsonobj.AsObj(actions[prev]), jsonobj.AsObj(actions[prev+1])
		if jsonobj.GetStr(a, "verb") != jsonobj.GetStr(b, "verb") || jsonobj.GetStr(a, "name") != jsonobj.GetStr(b, "name") ||
			jsonobj.GetStr(b, "error") != "" {
			return 0, false
		}
		return prev + 1, true
	}
	// a pod's write refused the other way (AlreadyExists, NotFound, an etcd timeout), where it is not the first
	podWrite := func(actions []any, _ int) (int, bool) {
		f, _ := first(actions, -1)
		for k := range actions {
			a := jsonobj.AsObj(actions[k])
			if k != f && jsonobj.GetStr(a, "kind") == "Pod" && jsonobj.GetStr(a, "error") == "" {
				return k, true
			}
		}
		return 0, false
	}
	variant("first", first)
	variant("pod", podWrite)
	if every3 {
		variant("last", last)
		variant("retry", first, retried)
	}
	return out
}

// injects reports whether the oracle refuses a write named in ORACLE_FAIL_WRITES.
func (o *oracleRunner) injects() bool {
	cmd := exec.Command(o.bin, "version")
	cmd.Env = append(os.Environ(), "ORACLE_FAIL_WRITES=not json")
	return cmd.Run() != nil // the injecting oracle refuses a malformed list; the plain one ignores it
}

// planEnv runs one sync with the given writes refused.
func (o *oracleRunner) planEnv(s M, fails []failWrite) M {
	return mustDecodeObj(o.runEnv(failEnv(fails), nil, "plan", "-events", o.tmpFile(encodeSnapshot(clone(s)))))
}

func failEnv(fails []failWrite) []string {
	if len(fails) == 0 {
		return nil
	}
	b, err := json.Marshal(fails)
	if err != nil {
		fatalf("%v", err)
	}
	return []string{"ORACLE_FAIL_WRITES=" + string(b)}
}
