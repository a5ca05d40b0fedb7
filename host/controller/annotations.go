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
// InvalidExtensionValue). Once per set generation, module and findings, not every sync: a set is synced on
// every change of its pods, and the same warning each time would bury the events that say something new.
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
	said := fmt.Sprintf("%d %s\n%s", set.Generation, info.Digest, strings.Join(msgs, "\n"))
	if prev, _ := c.annotationsWarned.Swap(key, said); prev == said {
		return
	}
	for _, f := range found {
		c.recorder.Event(set, corev1.EventTypeWarning, f.Code, hostplan.Truncate(f.Message, hostplan.MaxEventMessage))
	}
}
