package plan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
	"github.com/ordinal-dev/ordinal/host/plan"
)

// bigPlan is a plan of n pod creates with objects of about 2 KB each (a Parallel set created at once).
func bigPlan(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"abi":1,"actions":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"verb":"create","kind":"Pod","namespace":"default","name":"web-%d","object":{"apiVersion":"v1","kind":"Pod",`+
			`"metadata":{"name":"web-%d","namespace":"default","labels":{"app":"web","apps.kubernetes.io/pod-index":"%d","controller-revision-hash":"web-7b9c6d5f4","statefulset.kubernetes.io/pod-name":"web-%d"},`+
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"6f1c2f0e-8a55-4d5e-9b3c-0d1e2a3b4c5d","controller":true,"blockOwnerDeletion":true}]},`+
			`"spec":{"containers":[{"name":"nginx","image":"registry.k8s.io/nginx-slim:0.28","ports":[{"name":"web","containerPort":80,"protocol":"TCP"}],"resources":{},`+
			`"volumeMounts":[{"name":"data","mountPath":"/usr/share/nginx/html"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],`+
			`"volumes":[{"name":"data","emptyDir":{}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler","hostname":"web-%d","subdomain":"web"}}}`,
			i, i, i, i, i)
	}
	b.WriteString(`],"requeueAfterSeconds":0,"events":[{"type":"Normal","reason":"SuccessfulCreate","message":"create Pod web-0 in StatefulSet web successful"}]}`)
	return []byte(b.String())
}

// Decode runs on every sync: compare it with the bare decode it replaced and with the JSON-Schema validator.
func BenchmarkDecode(b *testing.B) {
	raw := bigPlan(1000)
	b.Run("plan.Decode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := plan.Decode(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var p abi.Plan
			if err := json.Unmarshal(raw, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-schema", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if err := schemacheck.ValidatePlan(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
