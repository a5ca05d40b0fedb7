package snapshot

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// JSONClient is a REST client for group/version gv that sends and accepts JSON, with cfg's rate limiter. It
// decodes through s, a custom target's scheme (Target.Scheme), or client-go's when s is nil: a custom set's
// informer lists and watches through it, and the controller's applier sends the module's bytes as they are
// (no round trip through client-go's Go types, which could drop or reorder fields).
func JSONClient(cfg *rest.Config, gv schema.GroupVersion, s *runtime.Scheme) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.ContentType = "application/json"
	c.AcceptContentTypes = "application/json"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if s != nil && s != scheme.Scheme {
		c.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("REST client for %s: %w", gv, err)
	}
	return client, nil
}
