package plan_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/internal/conformance"
	"github.com/ordinal-dev/ordinal/internal/jsoncmp"
)

// hostile are module outputs that break the ABI; each must be refused by Decode and by the published schema.
var hostile = map[string]string{
	"null":                  `null`,
	"empty object":          `{}`,
	"actions not an array":  `{"abi":2,"actions":"nope"}`,
	"abi 2":                 `{"abi":2,"actions":[],"requeueAfterSeconds":0,"events":[]}`,
	"abi missing":           `{"actions":[],"requeueAfterSeconds":0,"events":[]}`,
	"abi as string":         `{"abi":"1","actions":[],"requeueAfterSeconds":0,"events":[]}`,
	"array":                 `[]`,
	"string":                `"plan"`,
	"truncated":             `{"abi":1,"actions":[`,
	"trailing garbage":      `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[]} x`,
	"unknown field":         `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"extra":1}`,
	"Actions by case":       `{"abi":1,"Actions":[],"actions":[],"requeueAfterSeconds":0,"events":[]}`,
	"negative requeue":      `{"abi":1,"actions":[],"requeueAfterSeconds":-1,"events":[]}`,
	"events null":           `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":null}`,
	"unknown error code":    `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"Oops","message":"m"}}`,
	"error without message": `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"SyncFailed"}}`,
	"error empty message":   `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":{"code":"SyncFailed","message":""}}`,
	"error null":            `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[],"error":null}`,
	"unknown verb":          `{"abi":1,"actions":[{"verb":"deletecollection","kind":"Pod","namespace":"a","name":"b"}],"requeueAfterSeconds":0,"events":[]}`,
	"unknown kind":          `{"abi":1,"actions":[{"verb":"delete","kind":"Secret","namespace":"a","name":"b"}],"requeueAfterSeconds":0,"events":[]}`,
	"no namespace":          `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","name":"b"}],"requeueAfterSeconds":0,"events":[]}`,
	"empty name":            `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":""}],"requeueAfterSeconds":0,"events":[]}`,
	"create without object": `{"abi":1,"actions":[{"verb":"create","kind":"Pod","namespace":"a","name":"b"}],"requeueAfterSeconds":0,"events":[]}`,
	"create with patch":     `{"abi":1,"actions":[{"verb":"create","kind":"Pod","namespace":"a","name":"b","object":{},"patch":{}}],"requeueAfterSeconds":0,"events":[]}`,
	"object a string":       `{"abi":1,"actions":[{"verb":"create","kind":"Pod","namespace":"a","name":"b","object":"{}"}],"requeueAfterSeconds":0,"events":[]}`,
	"patch without type":    `{"abi":1,"actions":[{"verb":"patch","kind":"Pod","namespace":"a","name":"b","patch":{}}],"requeueAfterSeconds":0,"events":[]}`,
	"unknown patch type":    `{"abi":1,"actions":[{"verb":"patch","kind":"Pod","namespace":"a","name":"b","patchType":"text/plain","patch":{}}],"requeueAfterSeconds":0,"events":[]}`,
	"delete with object":    `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b","object":{}}],"requeueAfterSeconds":0,"events":[]}`,
	"status of a pod":       `{"abi":1,"actions":[{"verb":"updateStatus","kind":"Pod","namespace":"a","name":"b","object":{"status":{}}}],"requeueAfterSeconds":0,"events":[]}`,
	"status without status": `{"abi":1,"actions":[{"verb":"updateStatus","kind":"StatefulSet","namespace":"a","name":"b","object":{}}],"requeueAfterSeconds":0,"events":[]}`,
	"empty action error":    `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b","error":""}],"requeueAfterSeconds":0,"events":[]}`,
	"action unknown field":  `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b","force":true}],"requeueAfterSeconds":0,"events":[]}`,
	"event bad type":        `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Info","reason":"r","message":"m"}]}`,
	"event without message": `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r"}]}`,
	"event empty reason":    `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"","message":"m"}]}`,
	"event unknown field":   `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r","message":"m","count":2}]}`,
	"event action negative": `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r","message":"m","action":-1}]}`,
	// null where a member is optional: once read as absent, now refused by the rule policy answers share
	"event action null":     `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b"}],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r","message":"m","action":null}]}`,
	"patchType null":        `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b","patchType":null}],"requeueAfterSeconds":0,"events":[]}`,
	"action error null":     `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b","error":null}],"requeueAfterSeconds":0,"events":[]}`,
	"an action null":        `{"abi":1,"actions":[null],"requeueAfterSeconds":0,"events":[]}`,
	"event action a string": `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r","message":"m","action":"0"}]}`,
}

// beyondSchema are refused by Decode although JSON Schema cannot refuse them: repeated keys, and an event's
// action index past the plan's actions.
var beyondSchema = map[string]string{
	"duplicate actions key": `{"abi":1,"actions":[],"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b"}],"requeueAfterSeconds":0,"events":[]}`,
	"duplicate event type":  `{"abi":1,"actions":[],"requeueAfterSeconds":0,"events":[{"type":"Normal","type":"Warning","reason":"r","message":"m"}]}`,
	"duplicate verb":        `{"abi":1,"actions":[{"verb":"delete","verb":"create","kind":"Pod","namespace":"a","name":"b","object":{}}],"requeueAfterSeconds":0,"events":[]}`,
	// and an event's action index past the plan's actions
	"event action past the actions": `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b"}],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"r","message":"m","action":1}]}`,
}

// Plans a module returns that break the ABI are refused with the field that is wrong: the module, not the
// snapshot, is at fault. (Issue 11 hole 7: `null`, `{}` and `{"abi":2,"actions":"nope"}` once printed as plans.)
func TestPlanValidationRefusesInvalidPlans(t *testing.T) {
	for name, raw := range hostile {
		t.Run(name, func(t *testing.T) {
			p, err := plan.Decode([]byte(raw))
			var inv *plan.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Decode accepted it (%+v, %v)", p, err)
			}
			if schemacheck.ValidatePlan([]byte(raw)) == nil {
				t.Fatalf("the schema accepts it; Decode says %v", err)
			}
		})
	}
	for name, raw := range beyondSchema {
		if _, err := plan.Decode([]byte(raw)); err == nil {
			t.Errorf("%s: Decode accepted it", name)
		}
	}
	_, err := plan.Decode([]byte(hostile["unknown error code"]))
	if err == nil || !strings.Contains(err.Error(), "error.code") {
		t.Fatalf("an unknown error code must be named: %v", err)
	}
}

// Every plan the real upstream controller made (the conformance cases) is valid, by the schema and by
// Decode, and Decode returns exactly the plan encoding/json reads from it.
func TestPlanValidationAcceptsUpstreamPlans(t *testing.T) {
	cases, err := conformance.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if err := schemacheck.ValidatePlan(c.Plan); err != nil {
			t.Fatalf("%s: schema: %v", c.Name, err)
		}
		got, err := plan.Decode(c.Plan)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var want abi.Plan
		if err := json.Unmarshal(c.Plan, &want); err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(&want)
		if d := jsoncmp.Diff(wb, gb); d != "" {
			t.Fatalf("%s: Decode differs from encoding/json: %s", c.Name, d)
		}
	}
}

// An event's action index (asked for with the snapshot's eventActions) is kept.
func TestDecodeKeepsEventActions(t *testing.T) {
	raw := `{"abi":1,"actions":[{"verb":"delete","kind":"Pod","namespace":"a","name":"b"}],"requeueAfterSeconds":0,` +
		`"events":[{"type":"Normal","reason":"SuccessfulDelete","message":"Delete Pod b in StatefulSet a successful","action":0},{"type":"Normal","reason":"r","message":"m"}]}`
	p, err := plan.Decode([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if p.Events[0].Action == nil || *p.Events[0].Action != 0 || p.Events[1].Action != nil {
		t.Fatalf("events %+v", p.Events)
	}
	if err := schemacheck.ValidatePlan([]byte(raw)); err != nil {
		t.Fatalf("the schema refuses it: %v", err)
	}
}
