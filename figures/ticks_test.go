package figures

import "testing"

// TestCutPower: the superscript of "B^E" is E's letters, digits and minus
// signs alone; what follows is drawn at full size (a caption's "α^L)."
// once shrank the rest of its line).
func TestCutPower(t *testing.T) {
	for _, c := range []struct{ txt, base, exp, rest string }{
		{"10^5", "10", "5", ""},
		{"10^−3", "10", "−3", ""},
		{"2^{4j}", "2", "", "{4j}"},
		{"(1 + α + … + α^L)). (c) D = 8", "(1 + α + … + α", "L", ")). (c) D = 8"},
	} {
		base, exp, rest, ok := cutPower(c.txt)
		if !ok || base != c.base || exp != c.exp || rest != c.rest {
			t.Errorf("cutPower(%q) = %q, %q, %q, %v; want %q, %q, %q", c.txt, base, exp, rest, ok, c.base, c.exp, c.rest)
		}
	}
	if _, _, _, ok := cutPower("no power"); ok {
		t.Error("cutPower found a power in plain text")
	}
}
