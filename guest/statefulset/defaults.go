package statefulset

import "github.com/ordinal-dev/ordinal/internal/jsonv"

// defaultPodTemplate applies the API server's defaults (SetDefaults_* of core/v1) to a pod
// template, for the semantic revision comparison: a revision recorded by an older release may
// lack fields that are defaulted today.
func defaultPodTemplate(t jsonv.Value) jsonv.Value {
	spec := t.G("spec")
	if spec.K != jsonv.Object {
		return t
	}
	spec = spec.Clone()
	// serviceAccount mirrors serviceAccountName (and fills it when only the old field is set)
	if sa := spec.G("serviceAccountName").Str(); sa != "" {
		spec.Set("serviceAccount", jsonv.Str(sa))
	} else if old := spec.G("serviceAccount").Str(); old != "" {
		spec.Set("serviceAccountName", jsonv.Str(old))
	}
	setDefault(&spec, "dnsPolicy", jsonv.Str("ClusterFirst"))
	setDefault(&spec, "restartPolicy", jsonv.Str("Always"))
	setDefault(&spec, "terminationGracePeriodSeconds", jsonv.Int(30))
	setDefault(&spec, "securityContext", jsonv.EmptyObj())
	setDefault(&spec, "schedulerName", jsonv.Str("default-scheduler"))
	for _, list := range []string{"initContainers", "containers"} {
		cs := spec.G(list)
		if cs.K != jsonv.Array {
			continue
		}
		cs = cs.Clone()
		for i := range cs.A {
			defaultContainer(&cs.A[i])
		}
		spec.Set(list, cs)
	}
	if vols := spec.G("volumes"); vols.K == jsonv.Array {
		vols = vols.Clone()
		for i := range vols.A {
			defaultVolume(&vols.A[i])
		}
		spec.Set("volumes", vols)
	}
	out := t.Clone()
	out.Set("spec", spec)
	return out
}

func setDefault(obj *jsonv.Value, key string, v jsonv.Value) {
	if obj.K != jsonv.Object {
		return
	}
	if cur, ok := obj.Get(key); !ok || cur.K == jsonv.Null {
		obj.Set(key, v)
	}
}

func defaultContainer(c *jsonv.Value) {
	if c.K != jsonv.Object {
		return
	}
	setDefault(c, "terminationMessagePath", jsonv.Str("/dev/termination-log"))
	setDefault(c, "terminationMessagePolicy", jsonv.Str("File"))
	if !c.Has("imagePullPolicy") {
		img := c.G("image").Str()
		policy := "IfNotPresent"
		if imageTagIsLatest(img) {
			policy = "Always"
		}
		c.Set("imagePullPolicy", jsonv.Str(policy))
	}
	setDefault(c, "resources", jsonv.EmptyObj())
	if ports := c.G("ports"); ports.K == jsonv.Array {
		ports = ports.Clone()
		for i := range ports.A {
			setDefault(&ports.A[i], "protocol", jsonv.Str("TCP"))
		}
		c.Set("ports", ports)
	}
	if env := c.G("env"); env.K == jsonv.Array {
		env = env.Clone()
		for i := range env.A {
			vf := env.A[i].G("valueFrom")
			if fr := vf.G("fieldRef"); fr.K == jsonv.Object {
				setDefault(&fr, "apiVersion", jsonv.Str("v1"))
				vf.Set("fieldRef", fr)
				env.A[i].Set("valueFrom", vf)
			}
		}
		c.Set("env", env)
	}
	if lc := c.G("lifecycle"); lc.K == jsonv.Object {
		lc = lc.Clone()
		for _, h := range []string{"postStart", "preStop"} {
			hv := lc.G(h)
			if hg := hv.G("httpGet"); hg.K == jsonv.Object {
				setDefault(&hg, "path", jsonv.Str("/"))
				setDefault(&hg, "scheme", jsonv.Str("HTTP"))
				hv.Set("httpGet", hg)
				lc.Set(h, hv)
			}
		}
		c.Set("lifecycle", lc)
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		p := c.G(probe)
		if p.K != jsonv.Object {
			continue
		}
		p = p.Clone()
		setDefault(&p, "timeoutSeconds", jsonv.Int(1))
		setDefault(&p, "periodSeconds", jsonv.Int(10))
		setDefault(&p, "successThreshold", jsonv.Int(1))
		setDefault(&p, "failureThreshold", jsonv.Int(3))
		if hg := p.G("httpGet"); hg.K == jsonv.Object {
			hg = hg.Clone()
			setDefault(&hg, "path", jsonv.Str("/"))
			setDefault(&hg, "scheme", jsonv.Str("HTTP"))
			p.Set("httpGet", hg)
		}
		if g := p.G("grpc"); g.K == jsonv.Object {
			g = g.Clone()
			setDefault(&g, "service", jsonv.Str(""))
			p.Set("grpc", g)
		}
		c.Set(probe, p)
	}
}

// imageTagIsLatest: no tag (and no digest) or the tag "latest" -> imagePullPolicy Always.
func imageTagIsLatest(image string) bool {
	if image == "" {
		return false
	}
	for i := 0; i < len(image); i++ {
		if image[i] == '@' {
			return false
		}
	}
	lastSlash := -1
	for i := len(image) - 1; i >= 0; i-- {
		if image[i] == '/' {
			lastSlash = i
			break
		}
	}
	name := image[lastSlash+1:]
	for i := 0; i < len(name); i++ {
		if name[i] == ':' {
			return name[i+1:] == "latest"
		}
	}
	return true
}

func defaultVolume(v *jsonv.Value) {
	if v.K != jsonv.Object {
		return
	}
	if s := v.G("secret"); s.K == jsonv.Object {
		s = s.Clone()
		setDefault(&s, "defaultMode", jsonv.Int(420))
		v.Set("secret", s)
	}
	if s := v.G("configMap"); s.K == jsonv.Object {
		s = s.Clone()
		setDefault(&s, "defaultMode", jsonv.Int(420))
		v.Set("configMap", s)
	}
	if s := v.G("downwardAPI"); s.K == jsonv.Object {
		s = s.Clone()
		setDefault(&s, "defaultMode", jsonv.Int(420))
		defaultFieldRefItems(&s)
		v.Set("downwardAPI", s)
	}
	if s := v.G("projected"); s.K == jsonv.Object {
		s = s.Clone()
		setDefault(&s, "defaultMode", jsonv.Int(420))
		if srcs := s.G("sources"); srcs.K == jsonv.Array {
			for i := range srcs.A {
				if t := srcs.A[i].G("serviceAccountToken"); t.K == jsonv.Object {
					setDefault(&t, "expirationSeconds", jsonv.Int(3600))
					srcs.A[i].Set("serviceAccountToken", t)
				}
				if d := srcs.A[i].G("downwardAPI"); d.K == jsonv.Object {
					defaultFieldRefItems(&d)
					srcs.A[i].Set("downwardAPI", d)
				}
			}
			s.Set("sources", srcs)
		}
		v.Set("projected", s)
	}
	if s := v.G("hostPath"); s.K == jsonv.Object {
		s = s.Clone()
		setDefault(&s, "type", jsonv.Str(""))
		v.Set("hostPath", s)
	}
	if s := v.G("emptyDir"); s.K == jsonv.Null && !hasAnySource(*v) {
		v.Set("emptyDir", jsonv.EmptyObj())
	}
}

func hasAnySource(v jsonv.Value) bool {
	for _, m := range v.O {
		if m.Key != "name" {
			return true
		}
	}
	return false
}

func defaultFieldRefItems(d *jsonv.Value) {
	items := d.G("items")
	if items.K != jsonv.Array {
		return
	}
	for i := range items.A {
		if fr := items.A[i].G("fieldRef"); fr.K == jsonv.Object {
			setDefault(&fr, "apiVersion", jsonv.Str("v1"))
			items.A[i].Set("fieldRef", fr)
		}
	}
	d.Set("items", items)
}
