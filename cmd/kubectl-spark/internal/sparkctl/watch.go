package sparkctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func (c *cli) watchCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "watch NAME",
		Short: "Show the application's jobs, stages and tasks live until it ends",
		Long: `Show how far the application's Spark jobs are, from its driver's REST API while it
runs (through the API server's service proxy to its UI Service: it needs services/proxy
only), and from the History Server once the driver has ended: jobs, stages and tasks
done, running and failed, a bar, the running stages by name, the live executors with their
running tasks, and the input and shuffle bytes read so far. On a terminal the view is
redrawn in place; elsewhere a line is printed each time it changes; -o json prints one
JSON object a line. At the end it prints the final state and the History Server page, and
exits 3 if the application failed.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		PreRunE: func(*cobra.Command, []string) error {
			if output != "" && output != "json" {
				return usageErrorf("--output %q: want json", output)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			_, name, err := parseRef(args[0], kindSparkApp)
			if err != nil {
				return err
			}
			cl, err := c.connect()
			if err != nil {
				return err
			}
			v := c.newView(cmd.OutOrStdout(), output == "json")
			return c.watch(cmd.Context(), cl, cl.Namespace, name, v, nil)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json: one JSON object a line instead of text")
	return cmd
}

// view shows progress one of three ways: redrawn in place on a terminal, a line each time it
// changes elsewhere, or JSON lines.
type view struct {
	now  func() time.Time
	out  io.Writer  // lines, JSON, and the final lines
	live *liveBlock // nil unless out is a terminal
	json bool
	// progressOnly leaves out plain lines without progress: create --follow prints the state
	// changes itself.
	progressOnly bool
	last         string // the last line or record written, to write only changes
}

func (c *cli) newView(out io.Writer, asJSON bool) *view {
	v := &view{now: c.env.Now, out: out, json: asJSON}
	if width, ok := c.env.Terminal(out); ok && !asJSON {
		v.live = &liveBlock{w: out, width: width}
	}
	return v
}

// watchRecord is one line of watch -o json.
type watchRecord struct {
	Time       time.Time                    `json:"time"`
	Namespace  string                       `json:"namespace"`
	Name       string                       `json:"name"`
	State      v1beta2.ApplicationStateType `json:"state"`
	Progress   *Progress                    `json:"progress"`
	Note       string                       `json:"note,omitempty"`
	Final      bool                         `json:"final,omitempty"`
	HistoryURL string                       `json:"historyURL,omitempty"`
}

// update shows the application and its progress (nil, with note saying why, when there is
// none to show).
func (v *view) update(app *v1beta2.SparkApplication, p *Progress, note string) {
	switch {
	case v.json:
		v.record(watchRecord{Namespace: app.Namespace, Name: app.Name, State: app.Status.AppState.State, Progress: p, Note: note})
	case v.live != nil:
		v.live.show(progressBlock(app, p, note, v.now()))
	case p == nil && v.progressOnly:
	default:
		line := fmt.Sprintf("%s %s", app.Name, stateOf(app))
		if p != nil {
			line += ": " + progressLine(p)
		}
		if note != "" {
			line += " (" + note + ")"
		}
		if line != v.last {
			v.last = line
			fmt.Fprintf(v.out, "%s %s\n", v.now().UTC().Format(time.TimeOnly), line)
		}
	}
}

// finish shows the final progress, then the final line and the History Server page.
func (v *view) finish(app *v1beta2.SparkApplication, p *Progress, note string) {
	if v.json {
		v.last = ""
		v.record(watchRecord{Namespace: app.Namespace, Name: app.Name, State: app.Status.AppState.State, Progress: p, Note: note,
			Final: true, HistoryURL: app.Status.HistoryURL})
		return
	}
	if v.live != nil {
		v.live.show(progressBlock(app, p, note, v.now()))
		v.live.close()
	} else if p != nil {
		fmt.Fprintf(v.out, "%s %s %s: %s\n", v.now().UTC().Format(time.TimeOnly), app.Name, stateOf(app), progressLine(p))
	} else if note != "" {
		fmt.Fprintf(v.out, "%s %s %s (%s)\n", v.now().UTC().Format(time.TimeOnly), app.Name, stateOf(app), note)
	}
	fmt.Fprintln(v.out, finalLine(app, p))
	if h := historyLine(app); h != "" {
		fmt.Fprintln(v.out, h)
	}
}

func (v *view) record(r watchRecord) {
	r.Time = time.Time{}
	key, _ := json.Marshal(r)
	if string(key) == v.last {
		return
	}
	v.last = string(key)
	r.Time = v.now().UTC()
	line, _ := json.Marshal(r)
	fmt.Fprintf(v.out, "%s\n", line)
}

func stateOf(app *v1beta2.SparkApplication) string {
	if s := app.Status.AppState.State; s != "" {
		return string(s)
	}
	return "NEW"
}

// progressBlock is the terminal's view: a header, then the progress or why there is none.
func progressBlock(app *v1beta2.SparkApplication, p *Progress, note string, now time.Time) []string {
	lines := []string{appHeader(app, now)}
	if p != nil {
		lines = append(lines, alignRows("  ", progressRows(p))...)
	}
	if note != "" {
		lines = append(lines, "  ("+note+")")
	}
	return lines
}

// readProgress reads the application's progress from where it is now. A reason there is none
// (no driver UI yet, no History Server) is the note, not an error.
func readProgress(ctx context.Context, cl *Clients, app *v1beta2.SparkApplication) (*Progress, string, error) {
	if cl.Proxy == nil {
		return nil, "", nil
	}
	src, err := sourceFor(app)
	if err == nil {
		var p *Progress
		if p, err = fetchProgress(ctx, cl.Proxy, src, app.Status.SparkApplicationID); err == nil {
			return p, "", nil
		}
	}
	var none *errNoProgress
	if errors.As(err, &none) {
		return nil, none.reason, nil
	}
	return nil, "", err
}

// watch shows the application's progress until it ends. onPoll, when given, runs at each poll
// with the application just read, before its progress is (create --follow prints the driver's
// log from there).
func (c *cli) watch(ctx context.Context, cl *Clients, ns, name string, v *view, onPoll func(*v1beta2.SparkApplication) error) error {
	var last *Progress
	var lastID string
	for {
		app, err := getSparkApp(ctx, cl, ns, name)
		if err != nil {
			return err
		}
		if onPoll != nil {
			if err := onPoll(app); err != nil {
				return err
			}
		}
		if app.Status.SparkApplicationID != lastID {
			// A new attempt: its driver starts from nothing.
			last, lastID = nil, app.Status.SparkApplicationID
		}
		p, note, err := readProgress(ctx, cl, app)
		if err != nil {
			note = err.Error()
		}
		if terminal(app.Status.AppState.State) {
			if p == nil && last != nil {
				// The History Server has not read the event log yet, or there is none: the
				// driver's last answer is the best there is.
				p, note = last, "as the driver last reported it"
			}
			v.finish(app, p, note)
			return appEnd(app)
		}
		if p != nil {
			last = p
		} else if last != nil && note == waitingForDriverUI {
			// It answered before: it has stopped, not yet to start.
			p, note = last, "as last seen: the driver's UI no longer answers"
		} else if last != nil && note != "" {
			p, note = last, "as last seen: "+note
		}
		v.update(app, p, note)
		if err := c.wait(ctx); err != nil {
			return err
		}
	}
}

// appEnd is the command's result for an application that has ended.
func appEnd(app *v1beta2.SparkApplication) error {
	if app.Status.AppState.State == v1beta2.ApplicationStateCompleted {
		return nil
	}
	msg := fmt.Sprintf("SparkApplication %s/%s %s", app.Namespace, app.Name, app.Status.AppState.State)
	if e := app.Status.AppState.ErrorMessage; e != "" {
		msg += ": " + e
	}
	return &exitError{code: ExitAppFailed, msg: msg}
}
