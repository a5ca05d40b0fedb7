package statefulset

import "strconv"

// apiError is an error the (snapshot's) API server answers a write with.
type apiError struct {
	reason string // AlreadyExists, NotFound
	msg    string
}

func (e *apiError) Error() string { return e.msg }

const (
	reasonAlreadyExists = "AlreadyExists"
	reasonNotFound      = "NotFound"
)

// resource names as they appear in API error messages.
const (
	resPods      = "pods"
	resClaims    = "persistentvolumeclaims"
	resRevisions = "controllerrevisions.apps"
	resSets      = "statefulsets.apps"
)

func errAlreadyExists(resource, name string) error {
	return &apiError{reason: reasonAlreadyExists, msg: resource + " " + strconv.Quote(name) + " already exists"}
}

func errNotFound(resource, name string) error {
	return &apiError{reason: reasonNotFound, msg: resource + " " + strconv.Quote(name) + " not found"}
}

func isAlreadyExists(err error) bool {
	e, ok := err.(*apiError)
	return ok && e.reason == reasonAlreadyExists
}

func isNotFound(err error) bool {
	e, ok := err.(*apiError)
	return ok && e.reason == reasonNotFound
}

// simpleError is a plain error message.
type simpleError string

func (e simpleError) Error() string { return string(e) }

// aggregate is utilerrors.Aggregate: nil errors dropped, nested aggregates flattened when
// printed, duplicate messages printed once, "[a, b]" for more than one.
type aggregate []error

func newAggregate(errs []error) error {
	var out aggregate
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (a aggregate) Error() string {
	if len(a) == 1 {
		return a[0].Error()
	}
	seen := map[string]bool{}
	result := ""
	var visit func(errs aggregate)
	visit = func(errs aggregate) {
		for _, e := range errs {
			if inner, ok := e.(aggregate); ok {
				visit(inner)
				continue
			}
			msg := e.Error()
			if seen[msg] {
				continue
			}
			seen[msg] = true
			if len(seen) > 1 {
				result += ", "
			}
			result += msg
		}
	}
	visit(a)
	if len(seen) == 1 {
		return result
	}
	return "[" + result + "]"
}

// errorsOf returns the errors of an aggregate (one level), or the error itself.
func errorsOf(err error) []error {
	if a, ok := err.(aggregate); ok {
		return []error(a)
	}
	return []error{err}
}
