package schemacheck_test

import (
	"strings"
	"testing"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/abi/schemacheck"
)

// abi.CheckDescribe (the host's check, no schema engine) gives the schema's verdict on every document.
func TestCheckDescribeAgreesWithSchema(t *testing.T) {
	const good = `{"abi":1,"module":"ordinal","moduleVersion":"0.1.0","kubernetesVersion":"v1.37.1","features":{"MaxUnavailableStatefulSet":true,"StatefulSetRecreateStrategy":false}}`
	docs := []string{
		good,
		`{"abi":2,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3-rc.0","features":{}}`,
		`{"abi":1.0,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1.5,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":0,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":-1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":2147483647,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":2147483648,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1e400,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":123456789012345678901234567890,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1.0000000000000000001,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":0.99999999999999999999,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1e0,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":"1","module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":null,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":"","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":null,"moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":7,"moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"1.2.3","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":null}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":[]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{"lower":true}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{"Has-Dash":true}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{"":true}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{"Gate":"true"}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{"Gate":null}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{"Gate1":false},"extra":1}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3"}`,
		`{"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":"m","kubernetesVersion":"v1.2.3","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","features":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"customSetKinds":true}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"customSetKinds":false}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"customSetKinds":"yes"}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"customSetKinds":null}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"pause","annotation":"ordinal.dev/paused","upstreamIssue":"kubernetes/kubernetes#49890"}]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":null}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":{}}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":["pause"]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"pause","annotation":"a"}]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"Pause","annotation":"a","upstreamIssue":"i"}]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"pause","annotation":"","upstreamIssue":"i"}]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"pause","annotation":"a","upstreamIssue":"i","x":1}]}`,
		`{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"pause","annotation":null,"upstreamIssue":"i"}]}`,
		`[]`, `null`, `"describe"`, `{}`,
	}
	for _, doc := range docs {
		schemaErr := schemacheck.ValidateDescribe([]byte(doc))
		d, err := abi.CheckDescribe([]byte(doc))
		if (schemaErr == nil) != (err == nil) {
			t.Errorf("%s\n  schema: %v\n  CheckDescribe: %v", doc, schemaErr, err)
		}
		if err == nil && (d.Module == "" || d.Features == nil) {
			t.Errorf("%s: accepted but decoded as %+v", doc, d)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "describe: ") {
			t.Errorf("%s: error %q does not say it is about describe", doc, err)
		}
	}
	ext := `{"abi":1,"module":"m","moduleVersion":"1","kubernetesVersion":"v1.2.3","features":{},"extensions":[{"name":"pause","annotation":"ordinal.dev/paused","upstreamIssue":"kubernetes/kubernetes#49890"}]}`
	if d, err := abi.CheckDescribe([]byte(ext)); err != nil || len(d.Extensions) != 1 || d.Extensions[0] != (abi.Extension{Name: "pause", Annotation: "ordinal.dev/paused", UpstreamIssue: "kubernetes/kubernetes#49890"}) {
		t.Errorf("extensions decoded as %+v, %v", d.Extensions, err)
	}
	d, err := abi.CheckDescribe([]byte(good))
	if err != nil || d.ABI != 1 || d.KubernetesVersion != "v1.37.1" || !d.Features["MaxUnavailableStatefulSet"] || d.Features["StatefulSetRecreateStrategy"] {
		t.Errorf("good describe decoded as %+v, %v", d, err)
	}
}
