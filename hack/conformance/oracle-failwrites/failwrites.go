//go:build ignore

package main

// Write-failure injection for hack/conformance (this file is Ordinal's, dropped into a scratch copy of the
// reference oracle by build.sh; see hack/conformance/README.md). ORACLE_FAIL_WRITES is a JSON list of
// writes to refuse, each named as the plan names it (verb, kind, name) and by its occurrence among the
// sync's writes of that name (0: the first); the refused write is recorded with the error and changes
// nothing, as a real API server's refusal.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"
)

type failWrite struct {
	Verb       string `json:"verb"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Occurrence int    `json:"occurrence"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
}

var (
	failWrites = loadFailWrites()
	failSeen   = map[string]int{} // reactors run under the fake's lock
)

func loadFailWrites() []failWrite {
	s := os.Getenv("ORACLE_FAIL_WRITES")
	if s == "" {
		return nil
	}
	var fs []failWrite
	if err := json.Unmarshal([]byte(s), &fs); err != nil {
		fmt.Fprintln(os.Stderr, "ORACLE_FAIL_WRITES:", err)
		os.Exit(2)
	}
	return fs
}

// injectedFailure is the refusal for a write, or nil. A NotFound also removes the object from the fake API
// server, so that the world agrees with the answer (a later write of it meets NotFound again, as on a real
// server that said so).
func injectedFailure(a k8stesting.Action, tracker k8stesting.ObjectTracker) error {
	switch a.GetVerb() {
	case "get", "list", "watch":
		return nil
	}
	if len(failWrites) == 0 {
		return nil
	}
	pa := toPlanAction(recorded{action: a})
	k := pa.Verb + "/" + pa.Kind + "/" + pa.Name
	n := failSeen[k]
	failSeen[k] = n + 1
	for _, f := range failWrites {
		if f.Verb+"/"+f.Kind+"/"+f.Name == k && f.Occurrence == n {
			code := map[string]int32{"NotFound": http.StatusNotFound, "AlreadyExists": http.StatusConflict,
				"Conflict": http.StatusConflict, "Invalid": http.StatusUnprocessableEntity, "Forbidden": http.StatusForbidden,
				"TooManyRequests": http.StatusTooManyRequests}[f.Reason]
			if code == 0 {
				code = http.StatusInternalServerError
			}
			if f.Reason == "NotFound" && a.GetVerb() != "create" {
				_ = tracker.Delete(a.GetResource(), a.GetNamespace(), pa.Name)
			}
			return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code,
				Reason: metav1.StatusReason(f.Reason), Message: f.Message}}
		}
	}
	return nil
}
