// Package cli implements the linattn command: a small table of subcommands
// sharing one job specification (spec.Spec, resolved by package spec),
// each computing through the library packages and writing its arrays and
// a JSON sidecar (package output) whose spec fields (package spec) are
// themselves a spec.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/linattn/linattn/flow"
	"github.com/linattn/linattn/output"
	"github.com/linattn/linattn/spec"
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
	Groups []spec.Group
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
	saved          bool   // whether the output was written
	progress       *progress
	restart        bool          // -checkpoint-restart: a checkpoint that is refused is removed
	ckpt           *checkpointer // the run's, if it saves its state
	// workers is the processors a flow's run may take (0: all;
	// flow.RunSettings.Workers): a sweep's share of them.
	workers int
}

// Main runs the command line args (without the program name) until ctx is
// canceled, and returns the process exit code.
func Main(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	if len(args) == 0 {
		usage(stderr) // as clap's arg_required_else_help: the commands, exit 2
		return ExitUsage
	}
	name, args := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 && name == "help" {
			return Main(ctx, stdout, stderr, []string{args[0], "-h"})
		}
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
		fmt.Fprintf(stderr, "linattn: %s\n", unknownCommand(name, args))
		return ExitUsage
	}
	inv, code := parseInvocation(c, stdout, stderr, args)
	if inv == nil {
		return code
	}
	e := &env{ctx: ctx, cmd: c, stdout: stdout, stderr: stderr, out: inv.out, restart: inv.restart,
		progress: newProgress(stderr, !inv.quiet && isTerminal(stderr))}
	err := c.Run(e, inv.job)
	e.progress.Done()
	if err == nil {
		err = plotBeside(stdout, inv.out, inv.plotAs)
	}
	if err != nil {
		output.RemoveEmptyDirs(inv.created) // a failed command leaves no empty folder
	}
	switch {
	case err == nil:
		return ExitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "linattn %s: %s\n", c.Name, interrupted(e))
		return ExitInterrupted
	case errors.As(err, new(inputError)):
		fmt.Fprintf(stderr, "linattn %s: %v\n", c.Name, err)
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "linattn %s: %v\n", c.Name, err)
		return ExitFailure
	}
}

// inputError is bad input that a command finds once it runs, before any
// work: a checkpoint beside the output that is another run's or damaged.
// It exits with status 2, as bad flags do.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

// unknownCommand is the error for a first argument that is no command: a
// flag before the command, a file, or an unknown name.
func unknownCommand(name string, rest []string) string {
	all := append(commandNames(), "sweep", "plot", "figures")
	if strings.HasPrefix(name, "-") {
		for i, a := range rest {
			if slices.Contains(all, a) {
				flags := append(append([]string{name}, rest[:i]...), rest[i+1:]...)
				return fmt.Sprintf("the command goes first: linattn %s %s", a, strings.Join(flags, " "))
			}
		}
		return fmt.Sprintf("flag %s before a command; the command goes first: linattn <command> [flags] (commands: %s)", name, strings.Join(all, ", "))
	}
	if strings.HasSuffix(name, ".npz") {
		return fmt.Sprintf("unknown command %q; to draw a file: linattn plot %s", name, name)
	}
	return fmt.Sprintf("unknown command %q (commands: %s; linattn help lists them)", name, strings.Join(all, ", "))
}

// argHint is the error for an argument command takes no place for: a
// file that goes after -o or -spec, or a second command.
func argHint(command string, args []string) error {
	a := args[0]
	switch {
	case strings.HasSuffix(a, ".npz"):
		return fmt.Errorf("unexpected argument %q: the output file goes after -o (linattn %s -o %s)", a, command, a)
	case strings.HasSuffix(a, ".json"):
		return fmt.Errorf("unexpected argument %q: a spec goes after -spec (linattn %s -spec %s)", a, command, a)
	case commands[a] != nil || a == "sweep" || a == "plot" || a == "figures":
		return fmt.Errorf("unexpected argument %q: one command at a time", a)
	}
	return fmt.Errorf("unexpected arguments %q: %s takes flags only (see linattn %s -h)", args, command, command)
}

// flagHint is the error for a flag command c cannot parse; a flag that
// other commands read says which, and -attention says why the exact flow
// does not take it.
func flagHint(c *command, err error) error {
	name, undefined := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !undefined {
		return fmt.Errorf("%v (see linattn %s -h)", err, c.Name)
	}
	f, known := spec.Lookup(name)
	var readers []string
	for _, other := range slices.Sorted(maps.Keys(commands)) {
		if known && f.ReadBy(commands[other].Groups) {
			readers = append(readers, other)
		}
	}
	if len(readers) == 0 {
		return fmt.Errorf("%v (see linattn %s -h)", err, c.Name)
	}
	why := ""
	if name == "attention" {
		why = " (the exact flow and its theory exist for linear attention only; train trains softmax on finite data)"
	}
	list := strings.Join(readers, ", ")
	if n := len(readers); n > 1 {
		list = strings.Join(readers[:n-1], ", ") + " and " + readers[n-1]
	}
	return fmt.Errorf("-%s is a flag of %s, not of %s%s (see linattn %s -h)", name, list, c.Name, why, c.Name)
}

// interrupted says in one line what an interrupted command kept and how
// to finish: its output if it wrote one (marked incomplete, up to the
// time it reached), or nothing.
func interrupted(e *env) string {
	side, _, err := output.ReadSidecar(e.out)
	if !e.saved || err != nil || side.Meta.Complete {
		if saved := e.ckpt.describe(); saved != "" {
			return fmt.Sprintf("interrupted before any output was written%s: run the same command again to continue from there", saved)
		}
		return "interrupted before any output was written; run the same command again"
	}
	upTo := ""
	if side.Meta.Solver != nil {
		upTo = fmt.Sprintf(" up to t = %.6g", side.Meta.Solver.TEnd)
	}
	if saved := e.ckpt.describe(); saved != "" {
		return fmt.Sprintf("interrupted; %s holds what was computed%s (marked incomplete in %s)%s: run the same command again to continue from there",
			e.out, upTo, output.SidecarPath(e.out), saved)
	}
	return fmt.Sprintf("interrupted; %s holds what was computed%s (marked incomplete in %s); run the same command again to finish",
		e.out, upTo, output.SidecarPath(e.out))
}

// invocation is a command's parsed flags: the resolved job and where and
// how to write its output.
type invocation struct {
	job     *spec.Job
	out     string
	created []string // the folders -o's path needed (output.PrepareDir)
	quiet   bool
	restart bool
	plotAs  *plotFlag
}

// parseInvocation parses the flags of command c and resolves its job; on
// -h or an error it prints and returns nil with the exit code.
func parseInvocation(c *command, stdout, stderr io.Writer, args []string) (*invocation, int) {
	fs := flag.NewFlagSet("linattn "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	overlay := &spec.Spec{}
	groups := append([]spec.Group{spec.GroupProblem}, c.Groups...)
	for _, f := range spec.Fields() {
		if f.ReadBy(groups) {
			fs.Var(spec.NewValue(overlay, f.Name), f.Name, f.Help())
		}
	}
	specFile := fs.String("spec", "", "FILE.json: a spec (or the sidecar of an earlier output) whose fields the flags override")
	out := fs.String("o", c.Out, "output FILE.npz; the sidecar FILE.json is written beside it")
	quiet := fs.Bool("q", false, "no progress on stderr")
	restart := new(bool)
	if c.Name == "run" || c.Name == "train" {
		fs.BoolVar(restart, "checkpoint-restart", false, "start over when the checkpoint beside the output belongs to another run or is damaged (it is refused otherwise)")
	}
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
		return fail(flagHint(c, err))
	}
	if fs.NArg() > 0 {
		return fail(argHint(c.Name, fs.Args()))
	}
	if err := spec.CheckFlags(overlay); err != nil {
		return fail(err)
	}
	given := &spec.Spec{}
	if *specFile != "" {
		var err error
		var src specSource
		if given, src, err = loadSpec(*specFile, c); err != nil {
			return fail(err)
		}
		if note := src.note(c, overlay.Given("layer")); note != "" {
			fmt.Fprintf(stderr, "linattn %s: note: -spec %s is %s\n", c.Name, *specFile, note)
		}
	}
	file := given.Clone()
	given.Override(overlay)
	if err := checkIgnored(file, overlay, given); err != nil {
		return fail(err)
	}
	job, err := spec.Resolve(given, c.Groups...)
	if err != nil {
		return fail(err)
	}
	if every, _ := spec.CheckpointInterval(job.Spec); *restart && every == 0 {
		return fail(errors.New("-checkpoint-restart: with -checkpoint 0 the run neither reads nor saves a checkpoint, so there is none to start over from; leave one of the two out"))
	}
	for _, note := range job.Notes {
		fmt.Fprintf(stderr, "linattn %s: note: %s\n", c.Name, note)
	}
	created, err := checkOutput(*out)
	if err != nil {
		return fail(err)
	}
	return &invocation{job: job, out: *out, created: created, quiet: *quiet, restart: *restart, plotAs: plotAs}, ExitOK
}

// loadSpec reads a spec file of command c (readSpecFields) and returns it
// with what it learned of its source;
// relative input paths in it are taken relative to the file's directory.
func loadSpec(path string, c *command) (*spec.Spec, specSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, specSource{}, fmt.Errorf("-spec: %w", err)
	}
	b, src, err := readSpecFields(b, c)
	if err != nil {
		return nil, src, fmt.Errorf("-spec %s: %w", path, err)
	}
	s, err := spec.Parse(b)
	if err != nil {
		return nil, src, fmt.Errorf("-spec %s: %w", path, err)
	}
	s.Rebase(filepath.Dir(path))
	return s, src, nil
}

// checkOutput validates -o before any work: a .npz path whose directory
// exists or can be created (output.PrepareDir creates it, and returns the
// folders it created).
func checkOutput(out string) ([]string, error) {
	if !strings.HasSuffix(out, ".npz") || filepath.Base(out) == ".npz" {
		return nil, fmt.Errorf("-o = %q, want a FILE.npz path", out)
	}
	created, err := output.PrepareDir(out)
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", out, err)
	}
	return created, nil
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
	fmt.Fprintf(w, "usage: linattn <command> [flags]\n\ncommands:\n")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Short)
	}
	fmt.Fprintf(w, "  %-10s %s\n", "sweep", "many runs of run, train, reduced or landscape: lists in a spec, in parallel, sharded, resumable; an index")
	fmt.Fprintf(w, "  %-10s %s\n", "plot", "draw the output of run, train, reduced, landscape or sweep as FILE.png (.svg, .pdf)")
	fmt.Fprintf(w, "  %-10s %s\n", "figures", "reproduce the paper's figures, each from one command; write out/figures/*.png")
	fmt.Fprintf(w, "\nRun 'linattn <command> -h' (or 'linattn help <command>') for a command's flags.\nExit status: 0 done, 1 failed, 2 bad input, 130 interrupted (what was computed is written).\n")
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkIgnored refuses a field that another makes meaningless, -R with the
// merged model and -tol with a final time -T > 0, when the user gave both
// in one place (flags, or the spec file) or gave the meaningless one on
// the command line: a typo or a misunderstanding. A spec file's field that
// a flag overrides (a separate run's sidecar with -model merged) is
// dropped quietly by spec.Resolve.
func checkIgnored(file, flags, given *spec.Spec) error {
	ignored := func(field, by string) bool {
		return flags.Given(field) || (file.Given(field) && file.Given(by) && !flags.Given(by))
	}
	if given.Model == flow.Merged && given.Given("R") && ignored("R", "model") {
		return fmt.Errorf("-R = %d is the rank of the separate model's keys and queries; the merged model has none: leave -R out (or -model separate)", given.R)
	}
	if given.T > 0 && given.Given("tol") && ignored("tol", "T") {
		return fmt.Errorf("-tol = %g is the convergence test of a run until converged (-T 0); a run to -T = %g has none: leave -tol out (or -T 0)", given.Tol, given.T)
	}
	return nil
}
