package controller

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ordinal-dev/ordinal/host/annotation"
	"github.com/ordinal-dev/ordinal/host/module"
	hostplan "github.com/ordinal-dev/ordinal/host/plan"
)

// warnAnnotations records a Warning event on the set for each of its ordinal.dev/ annotations the module
// will not act on as asked (annotation.Check, as previews and the webhook warn: an extension the module
// lacks, ExtensionIgnored; a key nothing reads, UnknownAnnotation; a value outside an extension's list,
// InvalidExtensionValue). Once per module and findings, not every sync nor every generation (an autoscaler's
// scale is one): a set is synced on every change of its pods, and the same warnings again would bury the
// events that say something new. At most maxAnnotationEvents events, the last naming the rest: client-go's
// spam filter gives a set about 25 events in a burst, shared with the module's own.
func (c *Controller) warnAnnotations(key string, set *appsv1.StatefulSet, info module.Info) {
	found := annotation.Check(set.Annotations, info.Describe.Extensions)
	if len(found) == 0 {
		c.annotationsWarned.Delete(key) // fixed: the same finding later is news again
		return
	}
	msgs := make([]string, len(found))
	for i, f := range found {
		msgs[i] = f.Code + ": " + f.Message
	}
	said := info.Digest + "\n" + strings.Join(msgs, "\n")
	if prev, _ := c.annotationsWarned.Swap(key, said); prev == said {
		return
	}
	for i, f := range found {
		msg := f.Message
		if rest := found[i+1:]; i == maxAnnotationEvents-1 && len(rest) > 0 {
			keys := make([]string, len(rest))
			for j, r := range rest {
				keys[j] = r.Code + " " + r.Key
			}
			msg = fmt.Sprintf("%s (and %d more: %s; a preview of the set lists them)", msg, len(rest), strings.Join(keys, ", "))
		}
		c.recorder.Event(set, corev1.EventTypeWarning, f.Code, hostplan.Truncate(msg, hostplan.MaxEventMessage))
		if i == maxAnnotationEvents-1 {
			break
		}
	}
}

// maxAnnotationEvents is how many events one change of a set's annotation findings records.
const maxAnnotationEvents = 3
