package cli

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
)

// unreachable says an error from reaching the API server the way kubectl says it, so a user of `kubectl
// ordinal` reads the message kubectl would print for the same kubeconfig; other errors are unchanged.
func unreachable(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		host := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			host = u.Host
		}
		return fmt.Errorf("The connection to the server %s was refused - did you specify the right host or port?", host)
	}
	return fmt.Errorf("Unable to connect to the server: %w", ue.Err)
}
