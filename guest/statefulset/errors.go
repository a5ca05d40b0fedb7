package statefulset

import "strconv"

// apiError is an error the API server answers a write with: predicted from the snapshot, or reported by
// the host (snapshot writeFailures).
type apiError struct {
	reason string // metav1.StatusReason: AlreadyExists, NotFound, Conflict, Invalid, Forbidden, ...
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// The reasons upstream's sync tells apart (apierrors.IsAlreadyExists, IsNotFound, IsConflict, IsInvalid).
const (
	reasonAlreadyExists = "AlreadyExists"
	reasonNotFound      = "NotFound"
	reasonConflict      = "Conflict"
	reasonInvalid       = "Invalid"
)

// wrapError is fmt.Errorf("...: %w", err): its own message, the API error's reason (apierrors.ReasonForError
// unwraps). An aggregate does not unwrap, as utilerrors.Aggregate does not.
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }

func wrapf(prefix string, err error) error { return &wrapError{msg: prefix + err.Error(), err: err} }

// reasonOf is apierrors.ReasonForError: the reason of an API error, through wrapping.
func reasonOf(err error) string {
	for err != nil {
		switch e := err.(type) {
		case *apiError:
			return e.reason
		case *wrapError:
			err = e.err
		default:
			return ""
		}
	}
	return ""
}

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

func isAlreadyExists(err error) bool { return reasonOf(err) == reasonAlreadyExists }

func isNotFound(err error) bool { return reasonOf(err) == reasonNotFound }

func isConflict(err error) bool { return reasonOf(err) == reasonConflict }

func isInvalid(err error) bool { return reasonOf(err) == reasonInvalid }

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
