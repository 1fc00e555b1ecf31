package choice

import (
	"fmt"
	"testing"
)

type color int

func (c color) String() string { return [...]string{"red", "green", "blue"}[c] }

var colors = []color{0, 1, 2}

func TestRoundTrip(t *testing.T) {
	for _, c := range colors {
		b, err := Text(c, "color", colors)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b, "color", colors)
		if err != nil || got != c {
			t.Errorf("Parse(%q) = %v, %v; want %v", b, got, err, c)
		}
	}
}

func TestRefusals(t *testing.T) {
	_, err := Parse([]byte("mauve"), "color", colors)
	if want := `"mauve" is no color, want red, green or blue`; fmt.Sprint(err) != want {
		t.Errorf("Parse(mauve) error %q, want %q", err, want)
	}
	if _, err := Text(color(2), "color", colors[:2]); fmt.Sprint(err) != "blue is no color, want red or green" {
		t.Errorf("Text outside the list: %v", err)
	}
	for names, want := range map[string]string{"": "", "a": "a", "ab": "a or b", "abc": "a, b or c"} {
		var s []string
		for _, r := range names {
			s = append(s, string(r))
		}
		if got := OrList(s); got != want {
			t.Errorf("OrList(%q) = %q, want %q", s, got, want)
		}
	}
}
