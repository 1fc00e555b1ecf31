// Package cli implements the linattn command: a small table of subcommands
// sharing one job specification (output.Spec, resolved by package spec),
// each computing through the library packages and writing its arrays and
// a JSON sidecar that is itself a spec through package output.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/linattn/linattn/internal/spec"
	"github.com/linattn/linattn/output"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the computation failed
	ExitUsage       = 2   // bad flags or specification
	ExitInterrupted = 130 // canceled (Ctrl-C); partial output written
)

// command is one subcommand.
type command struct {
	Name      string
	UsageLine string
	Short     string
	// Groups are the spec fields the command reads besides the problem.
	Groups []output.Group
	// Out is the default output file.
	Out string
	Run func(e *env, job *spec.Job) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.Name] = c }

// env is what a command's Run needs besides the job.
type env struct {
	ctx            context.Context
	cmd            *command
	stdout, stderr io.Writer
	out            string // the .npz output path
	progress       *progress
}

// Main runs the command line args (without the program name) until ctx is
// canceled, and returns the process exit code.
func Main(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	switch name {
	case "help":
		usage(stdout)
		return ExitOK
	case "sweep":
		return sweepMain(ctx, stdout, stderr, args)
	case "plot":
		return plotMain(ctx, stdout, stderr, args)
	case "figures":
		return figuresMain(ctx, stdout, stderr, args)
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "linattn: unknown command %q (commands: %s, sweep, plot, figures)\n", name, strings.Join(commandNames(), ", "))
		return ExitUsage
	}
	inv, code := parseInvocation(c, stdout, stderr, args)
	if inv == nil {
		return code
	}
	e := &env{ctx: ctx, cmd: c, stdout: stdout, stderr: stderr, out: inv.out,
		progress: newProgress(stderr, !inv.quiet && isTerminal(stderr))}
	err := c.Run(e, inv.job)
	e.progress.Done()
	if err == nil {
		err = plotBeside(stdout, inv.out, inv.plotAs)
	}
	switch {
	case err == nil:
		return ExitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "linattn %s: interrupted: %v; partial output in %s\n", c.Name, err, inv.out)
		return ExitInterrupted
	default:
		fmt.Fprintf(stderr, "linattn %s: %v\n", c.Name, err)
		return ExitFailure
	}
}

// invocation is a command's parsed flags: the resolved job and where and
// how to write its output.
type invocation struct {
	job    *spec.Job
	out    string
	quiet  bool
	plotAs *plotFlag
}

// parseInvocation parses the flags of command c and resolves its job; on
// -h or an error it prints and returns nil with the exit code.
func parseInvocation(c *command, stdout, stderr io.Writer, args []string) (*invocation, int) {
	fs := flag.NewFlagSet("linattn "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	overlay := &output.Spec{}
	groups := append([]output.Group{output.GroupProblem}, c.Groups...)
	for _, f := range output.Fields {
		if f.ReadBy(groups) {
			fs.Var(spec.NewValue(overlay, f.Name), f.Name, f.Usage)
		}
	}
	specFile := fs.String("spec", "", "FILE.json: a spec (or the sidecar of an earlier output) whose fields the flags override")
	out := fs.String("o", c.Out, "output FILE.npz; the sidecar FILE.json is written beside it")
	quiet := fs.Bool("q", false, "no progress on stderr")
	plotAs := addPlotFlag(fs, c.Name)
	fail := func(err error) (*invocation, int) {
		fmt.Fprintf(stderr, "linattn %s: %v\n", c.Name, err)
		return nil, ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: linattn %s\n\n%s\n\nflags:\n", c.UsageLine, c.Short)
			printFlags(stdout, fs)
			return nil, ExitOK
		}
		return fail(fmt.Errorf("%v (see linattn %s -h)", err, c.Name))
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if err := spec.CheckFlags(overlay); err != nil {
		return fail(err)
	}
	given := &output.Spec{}
	if *specFile != "" {
		var err error
		if given, err = loadSpec(*specFile); err != nil {
			return fail(err)
		}
	}
	given.Override(overlay)
	job, err := spec.Resolve(given, c.Groups...)
	if err != nil {
		return fail(err)
	}
	outPath, err := checkOutput(*out, c.Out)
	if err != nil {
		return fail(err)
	}
	return &invocation{job: job, out: outPath, quiet: *quiet, plotAs: plotAs}, ExitOK
}

// loadSpec reads a spec file; relative input paths in it are taken
// relative to the file's directory.
func loadSpec(path string) (*output.Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-spec: %w", err)
	}
	s, err := output.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("-spec %s: %w", path, err)
	}
	s.Rebase(filepath.Dir(path))
	return s, nil
}

// checkOutput validates -o before any work: a .npz path in a writable
// directory. Only the default directory is created.
func checkOutput(out, def string) (string, error) {
	if !strings.HasSuffix(out, ".npz") || filepath.Base(out) == ".npz" {
		return "", fmt.Errorf("-o = %q, want a FILE.npz path", out)
	}
	dir := filepath.Dir(out)
	if out == def {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("-o %s: create directory: %w", out, err)
		}
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("-o %s: directory %s does not exist; create it first", out, dir)
	}
	probe, err := os.CreateTemp(dir, ".linattn-probe*")
	if err != nil {
		return "", fmt.Errorf("-o %s: directory %s is not writable", out, dir)
	}
	probe.Close()
	os.Remove(probe.Name())
	return out, nil
}

// usageError returns the function that reports bad input to command cmd
// on one line of stderr and gives the exit status for it.
func usageError(stderr io.Writer, cmd string) func(format string, a ...any) int {
	return func(format string, a ...any) int {
		fmt.Fprintf(stderr, "linattn "+cmd+": "+format+"\n", a...)
		return ExitUsage
	}
}

// printFlags lists the flags as "-name type" and their usage, which states
// the default and the allowed range.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, _ := flag.UnquoteUsage(f) // the flag package's name of its type: int, float, string, "" for bool
		if v, ok := f.Value.(*spec.Value); ok {
			typ = v.Type()
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		if typ != "" {
			typ = " " + typ
		}
		fmt.Fprintf(w, "  -%s%s\n    \t%s%s\n", f.Name, typ, f.Usage, def)
	})
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: linattn <command> [flags]   (default command: run)\n\ncommands:\n")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Short)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "sweep", "many runs: lists in a spec, in parallel, sharded, resumable; write DIR/run-*.npz and an index")
	fmt.Fprintf(w, "  %-10s %s\n", "plot", "draw the output of run, reduced, landscape or sweep as FILE.png (.svg, .pdf)")
	fmt.Fprintf(w, "  %-10s %s\n", "figures", "reproduce the paper's figures, each from one command; write out/figures/*.png")
	fmt.Fprintf(w, "\nRun 'linattn <command> -h' for a command's flags. Exit status: 0 done, 1 failed,\n2 bad input, 130 interrupted (partial output written).\n")
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
