package statefulset

import (
	"sort"
	"strings"
)

// compiledSelector is a label selector converted the way metav1.LabelSelectorAsSelector does.
type compiledSelector struct {
	nothing bool
	reqs    []selectorRequirement
}

// compileSelector converts a selector; ok is false when upstream's conversion fails (the
// controller then does nothing for the set).
func compileSelector(s labelSelector) (compiledSelector, bool) {
	if s.Nil {
		return compiledSelector{nothing: true}, true
	}
	var reqs []selectorRequirement
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !validLabelKey(k) || !validLabelValue(s.MatchLabels[k]) {
			return compiledSelector{}, false
		}
		reqs = append(reqs, selectorRequirement{Key: k, Operator: "In", Values: []string{s.MatchLabels[k]}})
	}
	for _, e := range s.MatchExprs {
		if !validLabelKey(e.Key) {
			return compiledSelector{}, false
		}
		switch e.Operator {
		case "In", "NotIn":
			if len(e.Values) == 0 {
				return compiledSelector{}, false
			}
		case "Exists", "DoesNotExist":
			if len(e.Values) != 0 {
				return compiledSelector{}, false
			}
		default:
			return compiledSelector{}, false
		}
		for _, v := range e.Values {
			if !validLabelValue(v) {
				return compiledSelector{}, false
			}
		}
		reqs = append(reqs, e)
	}
	return compiledSelector{reqs: reqs}, true
}

// matches reports whether labels satisfy the selector.
func (c compiledSelector) matches(labels map[string]string) bool {
	if c.nothing {
		return false
	}
	for _, r := range c.reqs {
		v, has := labels[r.Key]
		switch r.Operator {
		case "In":
			if !has || !contains(r.Values, v) {
				return false
			}
		case "NotIn":
			if has && contains(r.Values, v) {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validLabelKey checks a qualified name: optional DNS-1123 subdomain prefix + "/" + name.
func validLabelKey(k string) bool {
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if !validDNSSubdomain(prefix) {
			return false
		}
	}
	return name != "" && len(name) <= 63 && validQualifiedNamePart(name)
}

func validLabelValue(v string) bool {
	if v == "" {
		return true
	}
	return len(v) <= 63 && validQualifiedNamePart(v)
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// validQualifiedNamePart: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
func validQualifiedNamePart(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func validDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
				return false
			}
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
	}
	return true
}
