package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRegenerates writes the tables of ode/rock4_coef.go as the Julia file
// lays them out and checks that rock4gen gives back the Go file byte for
// byte: the file in the tree is what the generator writes.
func TestRegenerates(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("../../rock4_coef.go")
	if err != nil {
		t.Fatal(err)
	}
	var jl strings.Builder
	jl.WriteString("function ROCK4ConstantCache(::Type{T}, ::Type{T2}, zprev) where {T, T2}\n")
	for _, tb := range tables {
		start := strings.Index(string(want), "var "+tb.name+" = ")
		body := string(want[start:])
		body = body[strings.Index(body, "{\n"):strings.Index(body, "\n}\n")]
		nums := number.FindAllString(regexp.MustCompile(`\[[0-9]+\]`).ReplaceAllString(body, ""), -1)
		fmt.Fprintf(&jl, "    %s = [\n", tb.julia)
		for i := 0; i < len(nums); i += 3 { // the Julia file's own line breaks differ
			fmt.Fprintf(&jl, "        (%s,)\n", strings.Join(nums[i:min(i+3, len(nums))], ", "))
		}
		jl.WriteString("    ]\n")
	}
	var got strings.Builder
	if err := generate(&got, jl.String()); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Error("rock4gen does not reproduce ode/rock4_coef.go")
	}
}
