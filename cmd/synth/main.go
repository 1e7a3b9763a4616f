// Command synth releases differentially private synthetic data.
//
// Usage:
//
//	synth <command> [flags]
//
// Run "synth help" for the list of commands and "synth <command> --help" for
// the flags and examples of one command. Exit codes are listed in exit.go
// and in the README.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

// version may be set at build time with -ldflags "-X main.version=..."; it
// then replaces the module version of the build information (version.go).
var version = "dev"

// env is what a command sees of the process: its streams and whether
// stderr is a terminal (progress bars are drawn only then).
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	tty            bool
}

// command is one subcommand. Each lives in a file of its own with an
// options struct that has AddFlags and a run function testable without the
// flag parser.
type command struct {
	name    string
	summary string
	usage   string // text after the flag list: examples
	// setup registers the command's flags and returns the function that runs
	// it with the parsed options.
	setup func(fs *pflag.FlagSet) func(ctx context.Context, e *env, args []string) error
}

var commands = map[string]*command{}

// flagAdder is a command's options struct: AddFlags registers its flags.
type flagAdder interface{ AddFlags(*pflag.FlagSet) }

// configurable options may also come from a --config file.
type configurable interface{ configFile() string }

// setupFor is a command's setup for options type O: fresh options and their
// flags, and a run function that refuses positional arguments, applies the
// --config file (flags on the command line win) and calls run.
func setupFor[O any, P interface {
	*O
	flagAdder
}](run func(context.Context, *env, P) error) func(*pflag.FlagSet) func(context.Context, *env, []string) error {
	return func(fs *pflag.FlagSet) func(context.Context, *env, []string) error {
		o := P(new(O))
		o.AddFlags(fs)
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				if f := fs.Lookup("data"); f != nil && f.Changed {
					// The shell expanded an unquoted glob: --data a.csv b.csv.
					return usagef("unexpected arguments %q; to read several part files give their folder or quote the glob (--data 'export/part-*.csv')", args)
				}
				return usagef("unexpected arguments %q", args)
			}
			if c, ok := any(o).(configurable); ok {
				if err := applyConfig(fs, c.configFile()); err != nil {
					return err
				}
			}
			return run(ctx, e, o)
		}
	}
}

func register(c *command) { commands[c.name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, tty: isTerminal(os.Stderr)}
	stopProfile := startProfile(os.Getenv("SYNTH_CPUPROFILE"), e.stderr)
	code := runGuarded(ctx, e, os.Args[1:])
	stopProfile()
	os.Exit(code)
}

// runGuarded runs the command and turns a panic of its goroutine (a bug)
// into exit code 70 with the panic and its stack on stderr, after the
// deferred clean-ups of the command (removing a release's unfinished
// output) have run, instead of the Go runtime's crash.
func runGuarded(ctx context.Context, e *env, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "synth: internal error (a bug, please report it with this message): %v\n%s", r, debug.Stack())
			code = ExitInternal
		}
	}()
	return runMain(ctx, e, args)
}

// startProfile writes a CPU profile of the whole command to path when it is
// not empty (SYNTH_CPUPROFILE, for performance reports: docs/BENCHMARKS.md)
// and returns the function that ends it.
func startProfile(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "synth: SYNTH_CPUPROFILE: %v (no profile written)\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "synth: SYNTH_CPUPROFILE: %v\n", err)
		}
	}
}

// runMain runs the command line args and returns the exit code.
func runMain(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printHelp(e.stderr)
		return ExitUsage
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) > 2 {
			if c, ok := commands[args[1]+" "+args[2]]; ok {
				args = append([]string{args[0], c.name}, args[3:]...)
			}
		}
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fs, _ := newFlagSet(c)
				fs.SetOutput(e.stdout)
				printCommandHelp(e.stdout, c, fs)
				return ExitOK
			}
		}
		printHelp(e.stdout)
		return ExitOK
	case "version", "--version":
		fmt.Fprintf(e.stdout, "synth %s\n", readBuildVersion())
		return ExitOK
	}
	// A command with subcommands ("synth ledger init"): the two words name
	// the command.
	if len(args) > 1 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			args = append([]string{c.name}, args[2:]...)
		}
	}
	c, ok := commands[args[0]]
	if !ok {
		if subs := subcommands(args[0]); len(subs) > 0 {
			fmt.Fprintf(e.stderr, "synth %s: give a subcommand: %s\n", args[0], strings.Join(subs, ", "))
			return ExitUsage
		}
		fmt.Fprintf(e.stderr, "synth: unknown command %q\n\n", args[0])
		printHelp(e.stderr)
		return ExitUsage
	}
	fs, run := newFlagSet(c)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args[1:]); err != nil {
		if err == pflag.ErrHelp {
			printCommandHelp(e.stdout, c, fs)
			return ExitOK
		}
		fmt.Fprintf(e.stderr, "synth %s: %v\nRun 'synth %s --help' for usage.\n", c.name, err, c.name)
		return ExitUsage
	}
	err := run(ctx, e, fs.Args())
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	if code == ExitCanceled {
		fmt.Fprintf(e.stderr, "synth %s: interrupted (%v); no partial output was left\n", c.name, err)
		return code
	}
	fmt.Fprintf(e.stderr, "synth %s: %v\n", c.name, err)
	if code == ExitUsage {
		fmt.Fprintf(e.stderr, "Run 'synth %s --help' for usage.\n", c.name)
	}
	return code
}

func newFlagSet(c *command) (*pflag.FlagSet, func(context.Context, *env, []string) error) {
	fs := pflag.NewFlagSet("synth "+c.name, pflag.ContinueOnError)
	fs.SortFlags = false
	run := c.setup(fs)
	return fs, run
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "synth releases differentially private synthetic data.\n\nUsage:\n  synth <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := len("version")
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "version", "print the version")
	fmt.Fprintf(w, "\nRun 'synth <command> --help' for the flags and examples of a command.\n\n%s", exitCodeHelp)
}

func printCommandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "synth %s: %s\n\nFlags:\n%s", c.name, c.summary, fs.FlagUsages())
	if c.usage != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.usage, "\n"))
	}
	fmt.Fprintf(w, "\n%s", exitCodeHelp)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// subcommands lists the subcommands of a command name ("ledger": init,
// show).
func subcommands(name string) []string {
	var out []string
	for n := range commands {
		if sub, ok := strings.CutPrefix(n, name+" "); ok {
			out = append(out, sub)
		}
	}
	sort.Strings(out)
	return out
}
