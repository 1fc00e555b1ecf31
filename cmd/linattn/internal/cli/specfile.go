package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
)

// specSource is what readSpecFields learned of a spec file: the command
// whose sidecar it is (empty for a spec written by hand), the fields it
// dropped, and the layer (if given) and depth it gives.
type specSource struct {
	from       string
	dropped    []string
	layer      flow.Layer
	layerGiven bool
	layers     int
}

// readSpecFields applies the one rule of which fields a command reads from
// a spec file (docs/cli.md, "Specs and sidecars"): a spec written by hand,
// or the sidecar of the same command, holds only fields the command reads;
// the sidecar of another command (its meta.command) gives the fields this
// command reads, and the others, how that command ran, are dropped. It
// returns the spec's JSON with those fields dropped.
func readSpecFields(b []byte, c *command) ([]byte, specSource, error) {
	var src specSource
	obj, err := spec.DecodeObject(b)
	if err != nil {
		return nil, src, err
	}
	var meta struct {
		Command string `json:"command"`
	}
	if raw, ok := obj[output.MetaKey]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, src, fmt.Errorf("%q: %w", output.MetaKey, err)
		}
	}
	groups := append([]spec.Group{spec.GroupProblem}, c.Groups...)
	var unread []string
	for _, f := range spec.Fields() {
		if _, ok := obj[f.Name]; ok && !f.ReadBy(groups) {
			unread = append(unread, f.Name)
		}
	}
	if meta.Command == "" || meta.Command == c.Name {
		if len(unread) > 0 {
			return nil, src, fmt.Errorf("field %q is not read by linattn %s; leave it out (a spec holds the fields its command reads; only the sidecar of another command may hold others, which are dropped)",
				unread[0], c.Name)
		}
		return b, src, nil
	}
	src = specSource{from: meta.Command, dropped: unread}
	src.layerGiven = json.Unmarshal(obj["layer"], &src.layer) == nil // absent: not given
	json.Unmarshal(obj["layers"], &src.layers)                       // absent: one layer
	for _, name := range unread {
		delete(obj, name)
	}
	delete(obj, output.MetaKey)
	b, err = json.Marshal(obj)
	return b, src, err
}

// note says what command c took from another command's sidecar: the
// fields it dropped, and a layer that is the other command's default and
// not c's, unless the flags give -layer.
func (src specSource) note(c *command, layerFlag bool) string {
	if src.from == "" {
		return ""
	}
	var parts []string
	if len(src.dropped) > 0 {
		parts = append(parts, fmt.Sprintf("%s reads only its own fields from it (%s dropped)", c.Name, strings.Join(src.dropped, ", ")))
	}
	def := spec.DefaultLayer(slices.Contains(c.Groups, spec.GroupTrain), src.layers)
	if !layerFlag && src.layerGiven && src.layer != def {
		parts = append(parts, fmt.Sprintf("its -layer %s is %s's default, and %s runs it (%s's default is %s: add -layer %s)",
			src.layer, src.from, c.Name, c.Name, def, def))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("a sidecar of linattn %s: %s", src.from, strings.Join(parts, "; "))
}
