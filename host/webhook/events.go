package webhook

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// EventCorrelation is how the webhook's Event recorder folds and drops Events. client-go's defaults would
// lose the record kubectl ordinal status reads (the Event of each edit's preview, annotated with the
// generation): its spam filter keeps 25 Events per object and then one per 5 minutes, so a burst of edits
// (a script, a GitOps tool syncing a backlog) drops the rest; its aggregator folds the 11th Event of one
// reason in 10 minutes into "(combined from similar events)" with no annotations. Each edit's preview is
// its own Event here: its message, which starts with the generation, is part of both keys, so only a
// repeat of one generation's preview is folded into a count (it keeps its annotations) or rate-limited.
// The number of Events stays bounded by the edits the API server admits.
func EventCorrelation() record.CorrelatorOptions {
	return record.CorrelatorOptions{
		KeyFunc: func(e *corev1.Event) (string, string) {
			aggregate, local := record.EventAggregatorByReasonFunc(e)
			return aggregate + "\x00" + e.Message, local
		},
		SpamKeyFunc: func(e *corev1.Event) string {
			o := e.InvolvedObject
			return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion,
				e.Type, e.Reason, e.Message}, "\x00")
		},
	}
}
