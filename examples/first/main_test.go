package main

import (
	"io"
	"os"
	"testing"
)

// TestFirst runs the README's first program and checks what it prints:
// the status, final loss and drop times of ExampleSystem_Run in package
// flow (the same run), each drop without its state, and the loss curve.
func TestFirst(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	got, _ := io.ReadAll(r)
	want := `converged, final loss 0.1359959356
[drop 1 at t = 2754.04 (L = 0.82029) drop 2 at t = 5836.91 (L = 0.508976) drop 3 at t = 6251.45 (L = 0.293588) drop 4 at t = 28381.4 (L = 0.1729)]
t =     0.0  loss 1.000000
t =  2753.8  loss 0.829889
t =  5836.7  loss 0.512954
t = 10746.4  loss 0.209805
t = 28504.2  loss 0.135996
`
	if string(got) != want {
		t.Errorf("the program prints\n%s\nwant\n%s", got, want)
	}
}
