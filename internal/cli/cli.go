// Package cli implements the linattn command: a small table of subcommands,
// each parsing its own flags and writing its results with package export.
package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// command is one subcommand.
type command struct {
	Name      string
	UsageLine string
	Short     string
	// Run parses args with fs (already populated by Flags) and executes.
	Flags func(fs *flag.FlagSet) any
	Run   func(opts any, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.Name] = c }

// Main runs the command line args (without the program name) and returns
// the process exit code: 0 on success, 1 when the work failed, 2 for usage
// errors.
func Main(stdout, stderr io.Writer, args []string) int {
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		usage(stderr)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "linattn: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	fs := flag.NewFlagSet("linattn "+c.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: linattn %s\n\n%s\n\nflags:\n", c.UsageLine, c.Short)
		fs.PrintDefaults()
	}
	opts := c.Flags(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "linattn %s: unexpected arguments %q\n", c.Name, fs.Args())
		return 2
	}
	if err := c.Run(opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "linattn %s: %v\n", c.Name, err)
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	return 0
}

// usageError is an invalid flag value: exit code 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: linattn <command> [flags]   (default command: run)\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Short)
	}
	fmt.Fprintf(w, "\nRun 'linattn <command> -h' for a command's flags.\n")
}
