package ode

import (
	"strings"
	"testing"
)

// TestMustAuto checks that Auto is NewAuto(DOP853, ROCK4), which accepts
// them, and that mustAuto panics with NewAuto's reason where NewAuto
// refuses (an explicit pair as the stiff method).
func TestMustAuto(t *testing.T) {
	want, err := NewAuto(DOP853, ROCK4)
	if err != nil {
		t.Fatalf("NewAuto(DOP853, ROCK4): %v", err)
	}
	a, ok := Auto.(*auto)
	if !ok || a.nonstiff != DOP853 || a.stiff != ROCK4 || Auto.Name() != want.Name() {
		t.Fatalf("Auto = %v, want %v", Auto.Name(), want.Name())
	}
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !strings.Contains(err.Error(), "stiff = DP5, want ROCK4, Rodas5P or Radau5") {
			t.Errorf("mustAuto(DOP853, DP5) panicked with %v, want NewAuto's error", r)
		}
	}()
	mustAuto(DOP853, DP5)
}
