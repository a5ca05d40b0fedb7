// Package rbacrules reads the permissions an RBAC manifest grants, for the tests that hold the deployed
// RBAC to exactly what the code uses.
package rbacrules

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Granted reads the ClusterRoles and Roles of a YAML file and returns every permission they grant as
// "group/resource verb", with ":name" after the resource when a rule names resources.
func Granted(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	granted := map[string]bool{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return granted, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var role rbacv1.ClusterRole // a Role's rules read the same
		if err := yaml.Unmarshal(doc, &role); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if role.Kind != "ClusterRole" && role.Kind != "Role" {
			continue
		}
		for _, rule := range role.Rules {
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, n := range names {
						for _, v := range rule.Verbs {
							key := g + "/" + res
							if n != "" {
								key += ":" + n
							}
							granted[key+" "+v] = true
						}
					}
				}
			}
		}
	}
}

// Compare returns the permissions granted but not used and those used but not granted, sorted.
func Compare(granted map[string]bool, used map[string]string) (extra, missing []string) {
	for k := range granted {
		if _, ok := used[k]; !ok {
			extra = append(extra, k)
		}
	}
	for k := range used {
		if !granted[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	return extra, missing
}
