package spec

// Value is a flag.Value that sets one field of a spec (Spec's text
// form) and marks it given.
type Value struct {
	spec  *Spec
	field *Field
}

// NewValue returns the flag.Value of the field called name in s.
func NewValue(s *Spec, name string) *Value {
	f, ok := Lookup(name)
	if !ok {
		panic("spec: no field " + name)
	}
	return &Value{spec: s, field: f}
}

// String returns the flag's text, empty when it was not given (so that
// package flag prints no default of its own: the usage states it).
func (v *Value) String() string {
	if v == nil || v.spec == nil {
		return ""
	}
	return v.spec.Text(v.field.Name)
}

// Set parses a flag's text.
func (v *Value) Set(text string) error { return v.spec.SetText(v.field.Name, text) }

// Type names the kind of value the flag takes, for -h ("" for a bool).
func (v *Value) Type() string {
	if k := v.field.Kind(); k != "bool" {
		return k
	}
	return ""
}

// IsBoolFlag lets -stability (and -balanced) stand for -stability=true.
func (v *Value) IsBoolFlag() bool { return v.field.Kind() == "bool" }

// CheckFlags rejects command-line flags that exclude each other.
func CheckFlags(s *Spec) error { return s.CheckAlternatives("-") }
