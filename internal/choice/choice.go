// Package choice writes and parses, as text, the values of the small
// enumerated types of the library (flow.Kind, flow.Layer, train.Path,
// train.Attention): each names its values by String, and a name that is
// none of them is an error listing them.
package choice

import (
	"fmt"
	"slices"
	"strings"
)

// Text returns v's name, or an error naming what v should be when v is
// none of all.
func Text[T interface {
	comparable
	fmt.Stringer
}](v T, what string, all []T) ([]byte, error) {
	if !slices.Contains(all, v) {
		return nil, fmt.Errorf("%v is no %s, want %s", v, what, Names(all))
	}
	return []byte(v.String()), nil
}

// Parse returns the member of all whose name is text, or an error that
// quotes text and lists the names: `"x" is no layer, want reduced, full or
// labelkey`.
func Parse[T fmt.Stringer](text []byte, what string, all []T) (T, error) {
	for _, v := range all {
		if v.String() == string(text) {
			return v, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("%q is no %s, want %s", text, what, Names(all))
}

// Names lists the names of all as prose: "a", "a or b", "a, b or c".
func Names[T fmt.Stringer](all []T) string {
	names := make([]string, len(all))
	for i, v := range all {
		names[i] = v.String()
	}
	return OrList(names)
}

// OrList joins names as prose: "a", "a or b", "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
