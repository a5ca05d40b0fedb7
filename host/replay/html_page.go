package replay

import (
	_ "embed"
	"html/template"
	"sync"
)

// htmlPage is the page WriteHTML fills in (timeline.html, an html/template: the styles, the timeline as
// JSON and the script that draws it), an .html file so that editors and linters read it as one.
//
// The picture is one <canvas> (pods x virtual time) with a few HTML labels over it (rows, ticks, edits):
// a 1000-pod rollout of thousands of syncs is thousands of rectangles on a canvas, not millions of DOM
// cells. The x axis is virtual time, plus a small slot per sync (at most a quarter of the width, at most
// 6 px each) so that syncs at one instant stay side by side and clickable when there are few of them; at
// scale a slot is a fraction of a pixel and the axis is plain time. Every sync at an instant is also
// listed in the details.
//
// Parsed on first use, not at init: every ordinal process paid for it.
var htmlPage = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(timelineHTML)) })

//go:embed timeline.html
var timelineHTML string
