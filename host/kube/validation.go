package kube

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsjson "sigs.k8s.io/json"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/internal/jsonobj"
)

// API-server validation of a StatefulSet (and the metadata checks of the pods and claims made for it),
// on generic JSON objects. A CRD gets no apps/v1 validation from the API server, so the controller
// refuses with this what kube-apiserver would refuse for an apps/v1 set; the replay's in-memory API
// server refuses with it what kube-apiserver refuses. The errors are *apierrors.StatusError with
// kube-apiserver's reason (Invalid, BadRequest), code and message: e2e/validation_test.go compares the
// messages with the real one's.

// fieldError is one cause of an Invalid answer, rendered as kube-apiserver renders it.
type fieldError struct{ path, detail string }

func invalidValue(path string, v any, msg string) fieldError {
	return fieldError{path, fmt.Sprintf("Invalid value: %s: %s", renderValue(v), msg)}
}

// renderValue writes a field's value the way the API server's field errors do: JSON for strings,
// numbers and maps.
func renderValue(v any) string {
	if r, ok := v.(rawValue); ok {
		return string(r)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// rawValue is a value already rendered (the API server prints some internal structs by their Go field names).
type rawValue string

// invalidSet is the API server's answer for an invalid StatefulSet: one cause inline, several in brackets.
func invalidSet(name string, errs []fieldError) error {
	return invalidObject("StatefulSet.apps", name, errs)
}

// invalidObject is the API server's Invalid answer: one cause inline, several in brackets.
func invalidObject(kind, name string, errs []fieldError) error {
	if len(errs) == 0 {
		return nil
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.path + ": " + e.detail
	}
	msg := parts[0]
	if len(parts) > 1 {
		msg = "[" + strings.Join(parts, ", ") + "]"
	}
	return statusError(metav1.StatusReasonInvalid, fmt.Sprintf("%s %q is invalid: %s", kind, name, msg))
}

// statusError is an answer of the API server: its reason, the code that goes with it, its message.
func statusError(reason metav1.StatusReason, msg string) *apierrors.StatusError {
	code := int32(http.StatusUnprocessableEntity)
	if reason == metav1.StatusReasonBadRequest {
		code = http.StatusBadRequest
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: reason, Code: code, Message: msg}}
}

// Gates are the feature gates kube-apiserver's StatefulSet validation reads (v1.37's defaults: off).
type Gates struct {
	// RecreateStrategy is StatefulSetRecreateStrategy: updateStrategy.type Recreate is valid on create (and
	// on an update, also with the gate off when the set already has it).
	RecreateStrategy bool
}

// GatesOf reads the gates from feature-gate overrides (a scenario's features, the controller's
// --feature-gates).
func GatesOf(features map[string]bool) Gates {
	return Gates{RecreateStrategy: features[abi.GateStatefulSetRecreateStrategy]}
}

// ValidateStatefulSet refuses a StatefulSet the API server would refuse on create (ValidateStatefulSetSpec
// of v1.37, its checks in its order, for the fields the controller reads), o defaulted (DefaultStatefulSet)
// as the API server validates what it stores. The messages are kube-apiserver's; e2e/validation_test.go
// compares them with the real one.
func ValidateStatefulSet(o jsonobj.Obj, g Gates) error {
	if err := strictFields(o); err != nil {
		return err
	}
	name := jsonobj.GetStr(o, "metadata.name")
	var errs []fieldError
	for _, msg := range validation.IsDNS1123Subdomain(name) { // ValidateObjectMeta's name check comes first
		errs = append(errs, invalidValue("metadata.name", name, msg))
	}
	return invalidSet(name, append(errs, specErrors(o, g.RecreateStrategy)...))
}

// strictFields refuses fields apps/v1 does not have, as kube-apiserver does with strict field validation
// (kubectl's default, --validate=strict): a misspelt field would otherwise be dropped without a word.
func strictFields(o jsonobj.Obj) error {
	var set appsv1.StatefulSet
	b, err := json.Marshal(o)
	if err != nil {
		return statusError(metav1.StatusReasonBadRequest, fmt.Sprintf("StatefulSet in version \"v1\" cannot be handled as a StatefulSet: %v", err))
	}
	strict, err := sigsjson.UnmarshalStrict(b, &set, sigsjson.DisallowUnknownFields)
	if err != nil {
		return statusError(metav1.StatusReasonBadRequest, fmt.Sprintf("StatefulSet in version \"v1\" cannot be handled as a StatefulSet: %v", err))
	}
	if len(strict) == 0 {
		return nil
	}
	msgs := make([]string, len(strict))
	for i, e := range strict {
		msgs[i] = e.Error()
	}
	return statusError(metav1.StatusReasonBadRequest, "StatefulSet in version \"v1\" cannot be handled as a StatefulSet: strict decoding error: "+strings.Join(msgs, ", "))
}

// ValidateStatefulSetUpdate is ValidateStatefulSet plus ValidateStatefulSetUpdate's immutable fields:
// an update may change only replicas, ordinals, template, updateStrategy, revisionHistoryLimit, the
// claim retention policy and minReadySeconds.
func ValidateStatefulSetUpdate(old, o jsonobj.Obj, g Gates) error {
	if err := strictFields(o); err != nil {
		return err
	}
	errs := specErrors(o, g.RecreateStrategy || jsonobj.GetStr(old, "spec.updateStrategy.type") == "Recreate")
	for _, f := range []string{"selector", "volumeClaimTemplates", "serviceName", "podManagementPolicy"} {
		path := "spec." + f
		nv, ov := jsonobj.Get(o, path), jsonobj.Get(old, path)
		if f == "volumeClaimTemplates" {
			nv, ov = claimTemplatesForCompare(nv), claimTemplatesForCompare(ov)
		}
		if !jsonobj.Equal(nv, ov) {
			errs = append(errs, invalidValue(path, jsonobj.Get(o, path), "field is immutable"))
		}
	}
	return invalidSet(jsonobj.GetStr(o, "metadata.name"), errs)
}

// claimTemplatesForCompare is the claim templates as the API server compares them: typed and defaulted
// (a stored set and an edited manifest spell defaults differently), type meta aside.
func claimTemplatesForCompare(v any) []any {
	out := []any{}
	ts, _ := v.([]any)
	for _, t := range ts {
		c, ok := t.(jsonobj.Obj)
		if !ok {
			out = append(out, t)
			continue
		}
		c = jsonobj.CloneObj(c)
		defaultClaimTemplate(c)
		delete(c, "apiVersion")
		delete(c, "kind")
		out = append(out, c)
	}
	return out
}

func specErrors(o jsonobj.Obj, allowRecreate bool) []fieldError {
	var errs []fieldError
	if p := jsonobj.GetStr(o, "spec.podManagementPolicy"); p != "OrderedReady" && p != "Parallel" {
		errs = append(errs, invalidValue("spec.podManagementPolicy", p, "must be 'OrderedReady' or 'Parallel'"))
	}
	errs = append(errs, updateStrategyErrors(o, allowRecreate)...)
	for _, k := range []string{"whenDeleted", "whenScaled"} {
		path := "spec.persistentVolumeClaimRetentionPolicy." + k
		if v := jsonobj.GetStr(o, path); v != "Retain" && v != "Delete" {
			errs = append(errs, fieldError{path, fmt.Sprintf("Unsupported value: %s: supported values: \"Retain\", \"Delete\"", renderValue(v))})
		}
	}
	for _, path := range []string{"spec.replicas", "spec.minReadySeconds", "spec.ordinals.start"} {
		if v, ok := jsonobj.GetInt(o, path); ok && v < 0 {
			errs = append(errs, invalidValue(path, v, "must be greater than or equal to 0"))
		}
	}
	if !selectorMatchesLabels(jsonobj.GetObj(o, "spec.selector"), jsonobj.GetObj(o, "spec.template.metadata.labels")) {
		labels := jsonobj.GetObj(o, "spec.template.metadata.labels")
		if labels == nil {
			labels = jsonobj.Obj{}
		}
		errs = append(errs, invalidValue("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
	}
	return append(errs, templateResourceErrors(jsonobj.GetObj(o, "spec.template.spec"))...)
}

// templateResourceErrors are ValidatePodTemplateSpec's refusals of the template's resources
// (ValidateResourceRequirements of each container, then each init container, then the pod-level resources):
// a negative quantity, a request above its limit. Resource names in order (the API server walks a map); a
// quantity that does not parse was refused by strictFields already.
func templateResourceErrors(spec jsonobj.Obj) []fieldError {
	var errs []fieldError
	for _, list := range []string{"containers", "initContainers"} {
		for i, c := range jsonobj.GetArr(spec, list) {
			errs = append(errs, resourceRequirementErrors(jsonobj.GetObj(c, "resources"), fmt.Sprintf("spec.template.spec.%s[%d].resources", list, i))...)
		}
	}
	if r, ok := spec["resources"].(jsonobj.Obj); ok {
		errs = append(errs, resourceRequirementErrors(r, "spec.template.spec.resources")...)
	}
	return errs
}

// resourceRequirementErrors is ValidateResourceRequirements' quantity checks of one resources object at path:
// each limit, then each request, not negative; a request not above its limit, and equal to it for a resource
// that cannot be overcommitted (an extended resource, hugepages), which must then have a limit.
func resourceRequirementErrors(r jsonobj.Obj, path string) []fieldError {
	var errs []fieldError
	limits, requests := quantities(jsonobj.GetObj(r, "limits")), quantities(jsonobj.GetObj(r, "requests"))
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		if q := limits[name]; q.Sign() < 0 {
			errs = append(errs, invalidValue(path+".limits["+name+"]", q.String(), "must be greater than or equal to 0"))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		q := requests[name]
		if q.Sign() < 0 {
			errs = append(errs, invalidValue(path+".requests["+name+"]", q.String(), "must be greater than or equal to 0"))
		}
		lim, ok := limits[name]
		switch {
		case ok && q.Cmp(lim) != 0 && !overcommitAllowed(name):
			errs = append(errs, invalidValue(path+".requests", q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
		case ok && q.Cmp(lim) > 0:
			errs = append(errs, invalidValue(path+".requests", q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, fieldError{path + ".limits", "Required value: Limit must be set for non overcommitable resources"})
		}
	}
	return errs
}

// quantities reads a resource list's quantities (those that parse: strictFields refused the others).
func quantities(list jsonobj.Obj) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	for name, v := range list {
		if q, ok := jsonQuantity(v); ok {
			out[name] = q
		}
	}
	return out
}

// overcommitAllowed is helper.IsOvercommitAllowed: a native resource (no domain, or a kubernetes.io one)
// other than hugepages.
func overcommitAllowed(name string) bool {
	native := !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/")
	return native && !strings.HasPrefix(name, "hugepages-")
}

var percentPattern = regexp.MustCompile(`^[0-9]+%$`)

func updateStrategyErrors(o jsonobj.Obj, allowRecreate bool) []fieldError {
	us := jsonobj.GetObj(o, "spec.updateStrategy")
	ru, hasRU := us["rollingUpdate"].(jsonobj.Obj)
	typ := jsonobj.GetStr(us, "type")
	switch {
	case typ == "RollingUpdate":
		if !hasRU {
			return nil
		}
		var errs []fieldError
		if p, ok := jsonobj.GetInt(ru, "partition"); ok && p < 0 {
			errs = append(errs, invalidValue("spec.updateStrategy.rollingUpdate.partition", p, "must be greater than or equal to 0"))
		}
		if mu, ok := ru["maxUnavailable"]; ok && mu != nil {
			errs = append(errs, maxUnavailableErrors(mu)...)
		}
		return errs
	case typ == "OnDelete", typ == "Recreate" && allowRecreate:
		if hasRU {
			return []fieldError{invalidValue("spec.updateStrategy.rollingUpdate", rollingUpdateStruct(ru), "only allowed for updateStrategy 'RollingUpdate'")}
		}
		return nil
	}
	r := rawValue("null")
	if hasRU {
		r = rollingUpdateStruct(ru)
	}
	valid := "must be 'RollingUpdate' or 'OnDelete'"
	if allowRecreate {
		valid = "must be 'RollingUpdate', 'OnDelete', or 'Recreate'"
	}
	return []fieldError{invalidValue("spec.updateStrategy", rawValue(fmt.Sprintf(`{"Type":%s,"RollingUpdate":%s}`, renderValue(typ), r)), valid)}
}

// rollingUpdateStruct renders rollingUpdate as the API server prints its internal struct.
func rollingUpdateStruct(ru jsonobj.Obj) rawValue {
	p, _ := jsonobj.GetInt(ru, "partition")
	mu := "null"
	if v, ok := ru["maxUnavailable"]; ok && v != nil {
		mu = renderValue(v)
	}
	return rawValue(fmt.Sprintf(`{"Partition":%d,"MaxUnavailable":%s}`, p, mu))
}

func maxUnavailableErrors(mu any) []fieldError {
	const path = "spec.updateStrategy.rollingUpdate.maxUnavailable"
	var n int64
	switch v := mu.(type) {
	case string:
		var errs []fieldError
		if !percentPattern.MatchString(v) {
			errs = append(errs, invalidValue(path, v, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"))
		} else {
			n, _ = strconv.ParseInt(strings.TrimSuffix(v, "%"), 10, 64)
			if n > 100 {
				return []fieldError{invalidValue(path, v, "must not be greater than 100%")}
			}
		}
		if n == 0 {
			errs = append(errs, invalidValue(path, v, "cannot be 0"))
		}
		return errs
	default:
		i, ok := jsonobj.AsInt(mu)
		if !ok {
			return nil
		}
		if i < 0 {
			return []fieldError{invalidValue(path, i, "must be greater than or equal to 0")}
		}
		if i == 0 {
			return []fieldError{invalidValue(path, i, "cannot be 0")}
		}
		return nil
	}
}

// selectorMatchesLabels: every matchLabels pair is among the labels. A selector with matchExpressions is
// taken as matching (the replay does not evaluate expressions here; the module does when it selects pods).
func selectorMatchesLabels(sel, labels jsonobj.Obj) bool {
	if sel == nil || sel["matchExpressions"] != nil {
		return true
	}
	for k, v := range jsonobj.GetObj(sel, "matchLabels") {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// ValidateObjectMeta refuses a pod or claim whose name or labels the API server would refuse on create
// (ValidateObjectMeta: the name, then each label, keys in order); kind names it in the message as the API
// server does ("Pod", "PersistentVolumeClaim", "ControllerRevision.apps"). A set whose name is long enough to make
// its revision label longer than 63 bytes is accepted, and every pod it asks for is refused: so it is on
// a real cluster.
func ValidateObjectMeta(kind string, o jsonobj.Obj) error {
	name := jsonobj.GetStr(o, "metadata.name")
	var errs []fieldError
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, invalidValue("metadata.name", name, msg))
	}
	labels := jsonobj.GetObj(o, "metadata.labels")
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, invalidValue("metadata.labels", k, msg))
		}
		v, _ := labels[k].(string)
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, invalidValue("metadata.labels", v, msg))
		}
	}
	return invalidObject(kind, name, errs)
}
