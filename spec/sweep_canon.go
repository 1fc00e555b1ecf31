package spec

import (
	"bytes"
	"encoding/json"
)

// canonicalJSON writes the JSON value raw in one form whatever its
// spelling: without white space, numbers as written, strings with the
// escapes encoding/json writes (none for <, > and &, which a spec may
// spell either way: "&" and "\u0026" are one value), object members in
// the order of their keys. The sweep's hash is of this form, so that two
// spellings of one sweep are one sweep.
func canonicalJSON(dst *bytes.Buffer, raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	enc := json.NewEncoder(dst)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	dst.Truncate(dst.Len() - 1) // Encode's newline
	return nil
}
