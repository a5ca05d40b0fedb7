package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	sigsjson "sigs.k8s.io/json"
)

// The applier sends the module's bytes as they are, so the firewall must read them as the API server
// will. The API server decodes JSON case-sensitively (sigs.k8s.io/json) where encoding/json matches keys
// case-insensitively, and with duplicate keys the decoders need not pick the same one. So a module's object
// or patch is refused when any of its objects, at any depth, repeats a key exactly or but for case (no
// object the controller writes has such keys, and nothing can then be read two ways); what remains is
// decoded with the API server's decoder.

// decodeWire decodes a module-supplied object or patch as the API server would, after checking its keys.
func decodeWire(data []byte, v any) error {
	if err := checkKeys(data); err != nil {
		return err
	}
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, v)
}

// checkKeys fails when data is not one JSON value or when an object in it repeats a key, exactly or
// but for case (foldKey: Unicode's simple case folding, as encoding/json matches keys).
func checkKeys(data []byte) error {
	if keysPlainlyUnique(data) {
		return nil
	}
	return checkKeysByToken(data)
}

// checkKeysByToken is checkKeys decoding token by token: the rule itself, and its words for what is wrong.
func checkKeysByToken(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := checkValue(d, ""); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func checkValue(d *json.Decoder, path string) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]string{}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return err
			}
			k := kt.(string)
			fold := foldKey(k)
			if prev, dup := seen[fold]; dup {
				if prev == k {
					return fmt.Errorf("duplicate key %q in %s", k, where(path))
				}
				return fmt.Errorf("keys %q and %q in %s differ only by case (the API server reads only one of them)", prev, k, where(path))
			}
			seen[fold] = k
			if err := checkValue(d, path+"."+k); err != nil {
				return err
			}
		}
		_, err = d.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; d.More(); i++ {
			if err := checkValue(d, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = d.Token() // ']'
		return err
	}
	return nil
}

// foldKey is what checkKeys compares keys by: each character made the smallest of those it equals but for
// case (unicode.SimpleFold, the rule of bytes.EqualFold, by which encoding/json matches a key to a field:
// "ſ" is "s" there, "µ" is "μ"), after strings.ToLower's mapping (which alone equates "İ" and "i"). For
// ASCII keys it equates exactly the letters that differ by ASCII case (keysPlainlyUnique's rule).
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		r = unicode.ToLower(r)
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, k)
}

func where(path string) string {
	if path == "" {
		return "the top-level object"
	}
	return strings.TrimPrefix(path, ".")
}
