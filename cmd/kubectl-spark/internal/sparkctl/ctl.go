package sparkctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Exit codes scripts can rely on.
const (
	ExitOK = 0
	// ExitError: the command failed (API error, unknown application, no driver yet, ...).
	ExitError = 1
	// ExitUsage: the command line is wrong (unknown flag, missing argument, bad value).
	ExitUsage = 2
	// ExitAppFailed: create --follow or watch followed the application to FAILED or
	// SUBMISSION_FAILED.
	ExitAppFailed = 3
)

// Env is everything a command takes from outside the process.
type Env struct {
	// Name is how the user calls the tool, for usage lines: "kubectl spark".
	Name           string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Now            func() time.Time
	Getenv         func(string) string
	// Connect makes the clients for the connection flags; nil loads the kubeconfig as kubectl
	// does (KUBECONFIG, ~/.kube/config, in-cluster).
	Connect func(ConnFlags) (*Clients, error)
	// Stagers upload local dependencies, by the scheme of --upload-to (staging.Stagers: S3 and
	// GCS).
	Stagers map[string]Stager
	// Poll is how often waiting commands look again; 0 is one second.
	Poll time.Duration
	// After is the ticker of waiting commands (time.After; tests pass one they control).
	After func(time.Duration) <-chan time.Time
	// Terminal reports whether w is a terminal and its width, where progress is redrawn in
	// place; nil asks the operating system.
	Terminal func(w io.Writer) (width int, ok bool)
	// OpenURL opens a page in the user's browser (ui --open); nil is the desktop's handler.
	OpenURL func(string) error
}

// ConnFlags are kubectl's connection flags.
type ConnFlags struct {
	Kubeconfig, Context, Namespace string
}

// Clients are what the commands talk to, and the namespace they work in.
type Clients struct {
	Dynamic dynamic.Interface
	// Logs streams container logs (pods/log).
	Logs LogFunc
	// Proxy reaches Services through the API server (services/proxy): the Spark REST API of
	// drivers and of the History Server.
	Proxy     ProxyFunc
	Config    *restclient.Config // for port forwarding
	Namespace string
}

// DefaultEnv is the process's own environment.
func DefaultEnv(name string) *Env {
	return &Env{Name: name, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now, Getenv: os.Getenv}
}

// Connect loads the kubeconfig with kubectl's rules and overrides.
func Connect(f ConnFlags) (*Clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	logs, err := restLogs(cfg)
	if err != nil {
		return nil, err
	}
	proxy, err := restProxy(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Dynamic: dyn, Logs: logs, Proxy: proxy, Config: cfg, Namespace: ns}, nil
}

// usageError is a wrong command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError carries an exit code other than ExitError.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Run runs one command line (without the program name) and returns its exit code. Errors are
// one line on Stderr.
func Run(ctx context.Context, env *Env, args []string) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Connect == nil {
		env.Connect = Connect
	}
	if env.OpenURL == nil {
		env.OpenURL = openBrowser
	}
	if env.Poll <= 0 {
		env.Poll = time.Second
	}
	if env.After == nil {
		env.After = time.After
	}
	if env.Terminal == nil {
		env.Terminal = terminalWidth
	}
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	root := newRoot(env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	fmt.Fprintln(env.Stderr, "error:", msg)
	var usage *usageError
	var exit *exitError
	switch {
	case errors.As(err, &exit):
		return exit.code
	case errors.As(err, &usage):
		return ExitUsage
	}
	return ExitError
}

// usageArgs makes the errors of a cobra argument validator usage errors: cobra returns them as
// plain errors, which would otherwise exit 1.
func usageArgs(validate cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := validate(cmd, args); err != nil {
			return &usageError{msg: err.Error()}
		}
		return nil
	}
}

// noSubcommand is the root's argument validator: an argument that names no command.
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(suggestions, ", "))
	}
	return &usageError{msg: msg}
}

// cli holds the connection flags of one run, which every command honours.
type cli struct {
	env     *Env
	conn    ConnFlags
	clients *Clients
}

func newRoot(env *Env) *cobra.Command {
	c := &cli{env: env}
	root := &cobra.Command{
		// A plugin's command is named after its binary (kubectl-spark) and displayed as kubectl
		// runs it (kubectl spark): cobra puts the display name in place of the name in usage lines.
		Use:           strings.ReplaceAll(env.Name, " ", "-"),
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: env.Name},
		Short:         "Run and inspect Spark applications managed by sparkhooks",
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `Run and inspect SparkApplications, ScheduledSparkApplications and SparkConnects.

NAME is a SparkApplication; KIND/NAME names another kind (scheduledsparkapp/NAME,
sparkconnect/NAME). Exit codes: 0 success, 1 failure, 2 bad command line, 3 the
application followed by create --follow or watch failed.`,
		// Runnable, as kubectl's root is, so that cobra validates its arguments: an unknown
		// command is then a usage error, not the help text and success.
		Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// cobra's default, which it sets only where it makes suggestions itself.
		SuggestionsMinimumDistance: 2,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	// cobra calls this for the flag errors of every command.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	pf := root.PersistentFlags()
	pf.StringVar(&c.conn.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	pf.StringVar(&c.conn.Context, "context", "", "the kubeconfig context to use")
	pf.StringVarP(&c.conn.Namespace, "namespace", "n", "", "the namespace (default: the context's)")
	root.AddCommand(c.createCmd(), c.listCmd(), c.statusCmd(), c.eventCmd(), c.logCmd(), c.forwardCmd(), c.uiCmd(), c.watchCmd(), c.deleteCmd())
	return root
}

// connect makes the clients once per run.
func (c *cli) connect() (*Clients, error) {
	if c.clients != nil {
		return c.clients, nil
	}
	clients, err := c.env.Connect(c.conn)
	if err != nil {
		return nil, err
	}
	if clients.Namespace == "" {
		clients.Namespace = "default"
	}
	c.clients = clients
	return clients, nil
}

// wait waits one poll interval, or returns the context's error.
func (c *cli) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.env.After(c.env.Poll):
		return nil
	}
}
