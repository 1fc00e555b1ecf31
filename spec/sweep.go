package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/linattn/linattn/output"
)

// Sweep is a spec in which any scalar field may be a list of values (and
// a field whose value is a list, such as eigs or task-eigs, a list of
// lists), standing for the Cartesian product of the lists.
type Sweep struct {
	// Swept names the fields given as lists, in the order of Fields.
	Swept []string
	// SHA256 identifies the sweep: the hash of its canonical JSON.
	SHA256 string

	fixed  map[string]json.RawMessage
	values map[string][]json.RawMessage
	total  int
}

// ParseSweep decodes a sweep spec.
func ParseSweep(data []byte) (*Sweep, error) {
	obj, err := DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("sweep spec: %w", err)
	}
	delete(obj, output.MetaKey) // a sidecar is a spec
	sw := &Sweep{fixed: map[string]json.RawMessage{}, values: map[string][]json.RawMessage{}, total: 1}
	for k := range obj {
		if _, ok := Lookup(k); !ok {
			return nil, fmt.Errorf("sweep spec: unknown field %q (known: %s)", k, strings.Join(Names(), ", "))
		}
	}
	var canon bytes.Buffer
	canon.WriteByte('{')
	for _, f := range fields {
		raw, ok := obj[f.Name]
		if !ok {
			continue
		}
		var list []json.RawMessage
		isList := json.Unmarshal(raw, &list) == nil
		listField := f.Kind() == "list" // eigs, w0, task-eigs, test-task-eigs: one rule for every one
		if listField && isList && len(list) > 0 {
			// A list of numbers is one value (a spectrum, a set of tasks);
			// a list of lists is a sweep.
			var inner []json.RawMessage
			isList = json.Unmarshal(list[0], &inner) == nil
		} else if listField {
			isList = false
		}
		if isList {
			if len(list) == 0 {
				return nil, fmt.Errorf("sweep spec: field %q is an empty list; give at least one value", f.Name)
			}
			sw.Swept = append(sw.Swept, f.Name)
			sw.values[f.Name] = list
			sw.total *= len(list)
			if sw.total > 1<<24 {
				return nil, fmt.Errorf("sweep spec: more than %d runs", 1<<24)
			}
		} else {
			sw.fixed[f.Name] = raw
		}
		var c bytes.Buffer
		if err := canonicalJSON(&c, raw); err != nil {
			return nil, fmt.Errorf("sweep spec: field %q: %w", f.Name, err)
		}
		if canon.Len() > 1 {
			canon.WriteByte(',')
		}
		fmt.Fprintf(&canon, "%q:%s", f.Name, c.Bytes())
	}
	canon.WriteByte('}')
	sum := sha256.Sum256(canon.Bytes())
	sw.SHA256 = hex.EncodeToString(sum[:])
	return sw, nil
}

// Fields lists the fields the sweep gives, swept or not, in the order of
// Fields.
func (sw *Sweep) Fields() []string {
	var out []string
	for _, f := range fields {
		_, fixed := sw.fixed[f.Name]
		_, swept := sw.values[f.Name]
		if fixed || swept {
			out = append(out, f.Name)
		}
	}
	return out
}

// Given returns the JSON values the sweep gives the field called name:
// the list of a swept field, the one value of a fixed one, none when the
// sweep leaves it out.
func (sw *Sweep) Given(name string) []json.RawMessage {
	if v, ok := sw.values[name]; ok {
		return v
	}
	if v, ok := sw.fixed[name]; ok {
		return []json.RawMessage{v}
	}
	return nil
}

// Hash returns SHA256 (output.Sweep).
func (sw *Sweep) Hash() string { return sw.SHA256 }

// SweptFields returns Swept (output.Sweep).
func (sw *Sweep) SweptFields() []string { return sw.Swept }

// Len returns the number of runs.
func (sw *Sweep) Len() int { return sw.total }

// Values returns the JSON values of the swept fields for run i: the runs
// are the Cartesian product in the order of Swept, the last field varying
// fastest (like nested loops, or Python's itertools.product).
func (sw *Sweep) Values(i int) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k := len(sw.Swept) - 1; k >= 0; k-- {
		name := sw.Swept[k]
		vals := sw.values[name]
		out[name] = vals[i%len(vals)]
		i /= len(vals)
	}
	return out
}

// Run returns the spec of run i, 0 ≤ i < Len().
func (sw *Sweep) Run(i int) (*Spec, error) {
	obj := map[string]json.RawMessage{}
	for k, v := range sw.fixed {
		obj[k] = v
	}
	for k, v := range sw.Values(i) {
		obj[k] = v
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}
